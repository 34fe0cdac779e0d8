"""Mechanisms whose PLD is built in Python from two atom lists: a raised (pessimistic) and a lowered
(optimistic) one, discretised by ``pld_atoms`` and joined by ``pld_sides`` (docs/pld.md, "Atom lists").

- the discrete Gaussian on the integers: exact atoms (the pmf ratio), binned onto the loss grid; its
  normaliser is bracketed (masses over-stated on the pessimistic side, under-stated on the optimistic one)
  and the truncated tails are bounded and moved to +inf on the pessimistic side only;
- a symmetric law on the integers given by integer weights (the lattice releases' tables): exact atoms
  from the integers, the outputs beyond the shifted support at +inf;
- any symmetric log-concave family given by its log-density and log-space tails (``Truncated``,
  ``LogConcaveFamily``, also the built-ins): the output axis is cut at the loss grid points (the loss is
  monotone in the output); a piece whose loss stays inside one grid cell is an exact atom (its P- and
  Q-masses), a piece that straddles a grid point (a sliver around each threshold, or a flat stretch of
  the loss) is rounded up on the pessimistic side and down on the optimistic side.
"""
from __future__ import annotations

import hashlib
import math
from typing import Any, Callable

import numpy as np

from ..._core import accounting as _acc
from ..._core import release as _discrete

# (losses, P-masses, Q-masses, P-mass at +inf): one side's atom list.
Atoms = tuple[np.ndarray, np.ndarray, np.ndarray, float]

_CHUNK = 1 << 20
_MAX_INTEGERS = 1 << 28  # integers a discrete Gaussian's support may span before it is refused
_MAX_CUTS = 1 << 22  # loss grid points one density discretisation may need


class _Sided:
    """A mechanism given by ``build(remove, h, tail) -> (pessimistic atoms, optimistic atoms)``."""

    def __init__(self, key: tuple[Any, ...], build: Callable[[bool, float, float], tuple[Atoms, Atoms]], symmetric: bool) -> None:
        self._key, self._build, self.symmetric = key, build, symmetric
        self._cache: dict[tuple[Any, ...], Any] = {}

    def key(self) -> tuple[Any, ...]:
        return self._key

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        k = (remove or self.symmetric, h, tail)
        if k not in self._cache:
            pess, opt = self._build(remove or self.symmetric, h, tail)
            if len(self._cache) >= 8:
                self._cache.pop(next(iter(self._cache)))
            self._cache[k] = _acc.pld_sides(_acc.pld_atoms(*_drop_tiny(pess, True), h),
                                            _acc.pld_atoms(*_drop_tiny(opt, False), h))
        return self._cache[k]


def _drop_tiny(atoms: Atoms, pessimistic: bool) -> Atoms:
    """Atoms with P-mass below 1e-300 (near the subnormals, where the kernels lose relative precision)
    are dropped: moved to +inf on the pessimistic side, left out on the optimistic side.

    A side left without finite atoms (all its mass at +inf: disjoint supports) gets a 1e-300 atom at
    loss 0, so that compositions have a loss window: added mass on the pessimistic side, mass moved down
    from +inf on the optimistic side (both keep their order)."""
    loss, p, q, inf = atoms
    tiny = p < 1e-300
    if tiny.any():
        extra = float(np.sum(p[tiny])) * (1.0 + 1e-12) if pessimistic else 0.0
        keep = ~tiny
        loss, p, q, inf = loss[keep], p[keep], q[keep], min(inf + extra, 1.0)
    if p.size == 0 and (pessimistic or inf > 1e-300):
        return np.zeros(1), np.full(1, 1e-300), np.full(1, 1e-300), inf if pessimistic else inf - 1e-300
    # A Q-mass over-stated past 1 (pessimistic side only) is clipped: that raises the atom's loss.
    return loss, p, np.minimum(q, 1.0) if pessimistic else q, inf


_U = 2.0 ** -53  # unit roundoff


def _bin(loss: np.ndarray, p: np.ndarray, q: np.ndarray, err: np.ndarray, h: float, acc: dict[int, np.ndarray]) -> None:
    """Add the atoms' P-masses, Q-masses, P-mass error bounds and counts to their loss cells
    (g_c, g_{c+1}], c = ceil(l / h) - 1."""
    keep = p > 0.0
    if not keep.any():
        return
    cell = np.ceil(loss[keep] / h).astype(np.int64) - 1
    c0 = int(cell.min())
    idx = cell - c0
    n = int(idx.max()) + 1
    cols = [np.bincount(idx, weights=w[keep], minlength=n) for w in (p, q, err)]
    cols.append(np.bincount(idx, minlength=n).astype(float))
    sums = np.stack(cols, axis=1)
    for c in np.flatnonzero(sums[:, 0]):
        key = c0 + int(c)
        if key in acc:
            acc[key] += sums[c]
        else:
            acc[key] = sums[c].copy()


def _cells_to_atoms(acc: dict[int, np.ndarray], h: float, inf_p: float, pessimistic: bool) -> Atoms:
    """One atom per cell at the cell's midpoint: ``pld_atoms`` places it by its Q-mass (the exact
    conditional loss log(P / Q) inside the cell), so the midpoint only names the cell. The P-mass is the
    cell's sum plus (pessimistic) or minus (optimistic) the atoms' error bounds and the summation's
    (n u of the sum for n positive terms), with the Q-mass scaled alike (the atom keeps its place)."""
    if not acc:
        return np.zeros(0), np.zeros(0), np.zeros(0), inf_p
    cells = np.array(sorted(acc), dtype=np.int64)
    s = np.array([acc[int(c)] for c in cells])
    err = s[:, 2] * (1.0 + 1e-10) + 1.01 * (s[:, 3] + 2.0) * _U * s[:, 0]
    p = s[:, 0] + err if pessimistic else np.maximum(s[:, 0] - err, 0.0)
    q = s[:, 1] * (p / s[:, 0])
    return (cells + 0.5) * h, np.minimum(p, 1.0), np.minimum(q, 1.0), min(inf_p, 1.0)


# ----- discrete Gaussian ---------------------------------------------------------------------------------
def discrete_gaussian(sigma2: float, shift: int, q: float) -> _Sided:
    """The discrete Gaussian N_Z(0, sigma2) on an integer query with integer sensitivity ``shift``,
    Poisson-sampled at rate ``q`` (add/remove neighbours)."""
    lz = float(_discrete.dgauss_log_normaliser(sigma2))
    # log Z to ~1e-15 (Poisson summation or the direct sum, docs/release.md); taken as +-1e-13.
    lz_lo, lz_hi = lz - 1e-13, lz + 1e-13
    # Atoms within `reach` of the centres 0 and shift have log-mass >= -705 (normal doubles).
    reach = math.floor(math.sqrt(2.0 * sigma2 * max(705.0 - lz_hi, 1.0)))
    y_lo, y_hi = -reach, shift + reach
    if y_hi - y_lo + 1 > _MAX_INTEGERS:
        raise ValueError(f"sigma2 = {sigma2:g} spans more than 2^28 integers: too large for the exact discrete PLD")
    # sum_{j >= 0} e^{-(r + j)^2 / (2 s2)} <= e^{-r^2 / (2 s2)} / (1 - e^{-r / s2}) with r = reach + 1, on
    # each side of each of the two centres; the P-mass outside [y_lo, y_hi] is at most twice that.
    r = reach + 1.0
    log_tail = -r * r / (2.0 * sigma2) - math.log(-math.expm1(-r / sigma2)) - lz_lo + math.log(2.0)
    tail = max(math.exp(log_tail) * (1.0 + 1e-12), 5e-324)
    mix_a = math.log1p(-q) if q < 1.0 else -math.inf
    log_q = math.log(q)

    def build(remove: bool, h: float, _tail: float) -> tuple[Atoms, Atoms]:
        cells: dict[int, np.ndarray] = {}
        for start in range(y_lo, y_hi + 1, _CHUNK):
            y = np.arange(start, min(start + _CHUNK, y_hi + 1), dtype=np.float64)
            l0 = -y * y / (2.0 * sigma2)  # log N(y) + log Z
            t = shift * (2.0 * y - shift) / (2.0 * sigma2)  # log N(y - shift) - log N(y)
            ratio = t if q == 1.0 else np.logaddexp(mix_a, log_q + t)  # log of mix / N(y)
            # remove: P = mix, Q = N, L = ratio; add: P = N, Q = mix, L = -ratio.
            lp, lq = (l0 + ratio, l0) if remove else (l0, l0 + ratio)
            loss = ratio if remove else -ratio
            p = np.exp(lp - lz)
            # Relative error of p: the rounding of the exponent's terms (absolute, ~ulps of their sizes),
            # the exponential's, and log Z's +-1e-13.
            rel = 8.0 * _U * (np.abs(l0) + np.abs(ratio) + abs(lz) + 2.0) + 1.01e-13
            _bin(loss, p, np.exp(lq - lz), p * rel, h, cells)
        return _cells_to_atoms(cells, h, tail, True), _cells_to_atoms(cells, h, 0.0, False)

    return _Sided(("discrete_gaussian", sigma2, shift, q), build, q == 1.0)


# ----- a symmetric law given by integer weights ----------------------------------------------------------
def _exact_sum(w: np.ndarray) -> int:
    """The exact sum of unsigned 64-bit integers (summed as 32-bit halves, so nothing wraps)."""
    if w.size == 0:
        return 0
    hi = int(np.sum(w >> np.uint64(32), dtype=np.uint64))
    lo = int(np.sum(w & np.uint64(0xFFFFFFFF), dtype=np.uint64))
    return (hi << 32) + lo


def integer_weights(weights: np.ndarray, shift: int) -> _Sided:
    """The law P(y) = W(|y|) / T on the integers (``W = weights[0..K]``, zero beyond K,
    ``T = W(0) + 2 sum_{y >= 1} W(y)``) on an integer query with integer sensitivity ``shift``.

    Each output y is an exact atom: P-mass W(|y|) / T, Q-mass W(|y - shift|) / T, loss their log ratio;
    the outputs with W(|y - shift|) = 0 < W(|y|) are the P-mass at +inf (summed exactly in integers).
    The masses are formed in floating point (three roundings, bounded by 4 ulps); the raised list adds
    the bounds, the lowered list subtracts them. W need not be monotone, but only a symmetric W makes
    the two neighbour orders coincide, which the term assumes (reflection y -> shift - y swaps them).
    """
    K = weights.size - 1
    w = weights.astype(np.uint64)
    total = int(w[0]) + 2 * _exact_sum(w[1:])
    if not 0 < total < 2**64:
        raise ValueError("the weights must have a positive total below 2**64")
    # P-mass at +inf: y in [-K, shift - K - 1] (and y > K has P = 0); |y| = K, K - 1, ..., down to
    # |shift - K - 1| (two pieces when the range crosses 0).
    lo_y, hi_y = -K, min(K, shift - K - 1)
    inf_int = 0
    if hi_y >= lo_y:
        a, b = lo_y, min(hi_y, -1)  # negative part: |y| from -b to -a
        if b >= a:
            inf_int += _exact_sum(w[-b:-a + 1])
        a2 = max(lo_y, 0)
        if hi_y >= a2:
            inf_int += _exact_sum(w[a2:hi_y + 1])
    tf = float(total)
    inf_hi = min(inf_int / total * (1.0 + 4.0 * _U), 1.0)
    inf_lo = inf_int / total * (1.0 - 4.0 * _U)
    logw = np.log(w.astype(np.float64))
    wf = w.astype(np.float64)

    def build(_remove: bool, h: float, _tail: float) -> tuple[Atoms, Atoms]:
        cells: dict[int, np.ndarray] = {}
        # Outputs with both masses positive: |y| <= K and |y - shift| <= K.
        start, stop = max(-K, shift - K), min(K, shift + K)
        for c0 in range(start, stop + 1, _CHUNK):
            y = np.arange(c0, min(c0 + _CHUNK, stop + 1), dtype=np.int64)
            a, b = np.abs(y), np.abs(y - shift)
            p = wf[a] / tf
            _bin(logw[a] - logw[b], p, wf[b] / tf, p * (4.0 * _U), h, cells)
        return _cells_to_atoms(cells, h, inf_hi, True), _cells_to_atoms(cells, h, inf_lo, False)

    digest = hashlib.sha256(w.tobytes()).hexdigest()
    return _Sided(("integer_weights", digest, int(shift)), build, True)


# ----- densities -----------------------------------------------------------------------------------------
def _cdf_sf(fam: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(X <= x), P(X > x)) of the unit family, the smaller one from its log-space tail."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        lc = np.asarray(fam.logcdf(np.minimum(x, 0.0)), dtype=float).reshape(x.shape)
        ls = np.asarray(fam.logsf(np.maximum(x, 0.0)), dtype=float).reshape(x.shape)
        neg = x < 0.0
        cdf = np.where(neg, np.exp(lc), -np.expm1(ls))
        sf = np.where(neg, -np.expm1(lc), np.exp(ls))
    return cdf, sf


# Relative accuracy assumed of a family's tail values (the built-ins are accurate to a few ulps).
_TAIL_RTOL = 1e-14


def _between(cs_a: tuple[np.ndarray, np.ndarray], cs_b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mass of (a, b] and a bound on its error: the difference of the smaller tail, so tiny masses keep
    their relative precision; the error is _TAIL_RTOL of the two tail values differenced."""
    (ca, sa), (cb, sb) = cs_a, cs_b
    low = cb <= 0.5
    mass = np.maximum(np.where(low, cb - ca, sa - sb), 0.0)
    return mass, _TAIL_RTOL * np.where(low, cb + ca, sa + sb)


def _quantile_reach(fam: Any, tail: float) -> float:
    """A t >= 0 with P(X > t) <= tail (the unit family), by doubling and bisection on log P(X > t)."""
    target = math.log(tail)
    bound = float(fam.support_bound)

    def ok(t: float) -> bool:
        return t >= bound or float(fam.logsf(t)) <= target

    lo, hi = 0.0, 1.0
    while not ok(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:
            raise ValueError("the family's tails do not fall below the truncation mass")
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def density(fam: Any, d: float, q: float) -> _Sided:
    """Additive noise of the symmetric log-concave unit family ``fam`` at shift ``d`` (sensitivity / scale),
    Poisson-sampled at rate ``q`` (add/remove neighbours)."""
    a = float(fam.support_bound)
    log_1mq = math.log1p(-q) if q < 1.0 else -math.inf
    log_q = math.log(q)
    # The overlap B = (bl, br) of the supports of f and f(. - d), where g(x) = log f(x - d) - log f(x)
    # is finite and nondecreasing; A = (-a, min(-a + d, a)] has f(x - d) = 0, C = [max(a, -a + d), a + d)
    # has f(x) = 0 (both empty for full support).
    bl, br = -a + d, a

    def phi(g: np.ndarray) -> np.ndarray:  # log(1 - q + q e^g)
        return g if q == 1.0 else np.logaddexp(log_1mq, log_q + g)

    def build(remove: bool, h: float, tail: float) -> tuple[Atoms, Atoms]:
        sign = 1.0 if remove else -1.0
        pess: list[Any] = []  # (loss, p, q) arrays
        opt: list[Any] = []
        inf_pess = inf_opt = 0.0
        if math.isfinite(a):
            inf_pess, inf_opt = _outside_overlap(fam, a, d, q, remove, pess, opt)
        if bl < br:
            def loss(x: np.ndarray) -> np.ndarray:
                with np.errstate(invalid="ignore", over="ignore"):
                    g = np.asarray(fam.logpdf(x - d), dtype=float) - np.asarray(fam.logpdf(x), dtype=float)
                return sign * phi(g)

            def inside(x: float, toward: float) -> float:
                # A point just inside an end of B where the loss is finite (x - d rounds onto the
                # support's end for the first few doubles): steps of 1, 2, 4, ... ulps of the support.
                step = float(np.spacing(max(abs(x), abs(a), d)))
                for _ in range(64):
                    y = x + math.copysign(step, toward)
                    if np.isfinite(loss(np.array([y]))[0]):
                        return y
                    step *= 2.0
                raise ValueError("the family's log-density is not finite inside its support")

            reach = _quantile_reach(fam, tail)
            # P's tails: below x at most F(x), above x at most S(x - d) (both orders).
            x_lo = max(-reach, inside(bl, math.inf) if math.isfinite(bl) else -math.inf)
            x_hi = min(d + reach, inside(br, -math.inf) if math.isfinite(br) else math.inf)
            if not x_lo < x_hi:
                x_lo, x_hi = inside(bl, math.inf), inside(br, -math.inf)

            def p_q_between(xa: np.ndarray, xb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                # (P-mass, Q-mass, error bound of the P-mass) of the pieces (xa, xb].
                f, ef = _between(_cdf_sf(fam, xa), _cdf_sf(fam, xb))
                fs, efs = _between(_cdf_sf(fam, xa - d), _cdf_sf(fam, xb - d))
                if q == 1.0:
                    return (fs, f, efs) if remove else (f, fs, ef)
                mix = (1.0 - q) * f + q * fs
                return (mix, f, (1.0 - q) * ef + q * efs) if remove else (f, mix, ef)

            inf_pess += _monotone_atoms(loss, p_q_between, x_lo, x_hi, bl, br, sign, h, pess, opt)

        return _join(pess, inf_pess), _join(opt, inf_opt)

    return _Sided(("density", fam.identity, d, q), build, q == 1.0)


def _outside_overlap(fam: Any, a: float, d: float, q: float, remove: bool, pess: list[Any],
                     opt: list[Any]) -> tuple[float, float]:
    """The regions A and C of :func:`density` (a family with finite support ``(-a, a)``), outside the
    overlap of the supports: their finite atoms appended to ``pess`` / ``opt``, their P-masses at +inf
    (pessimistic, optimistic) returned."""
    sign = 1.0 if remove else -1.0
    log_1mq = math.log1p(-q) if q < 1.0 else -math.inf
    a_end = min(-a + d, a)
    inf_pess = inf_opt = 0.0
    # Region A: remove: P = (1 - q) f, L = log(1 - q); add: L = -log(1 - q).
    up, down = 1.0 + _TAIL_RTOL, 1.0 - _TAIL_RTOL
    fa = float(_cdf_sf(fam, np.array([a_end]))[0][0])
    if fa > 0.0:
        pa = fa * (1.0 - q) if remove else fa
        if q < 1.0:
            loss_a, qa = np.array([sign * log_1mq]), (fa if remove else fa * (1.0 - q))
            pess.append((loss_a, np.array([pa * up]), np.array([qa * up])))
            opt.append((loss_a, np.array([pa * down]), np.array([qa * down])))
        elif not remove:  # q = 1, add: P has mass where Q has none
            inf_pess += pa * up
            inf_opt += pa * down
    # Region C: remove only (P = q f(. - d) > 0 = Q there): L = +inf.
    if remove:
        pc = q * float(_cdf_sf(fam, np.array([max(a, -a + d) - d]))[1][0])
        inf_pess += pc * up
        inf_opt += pc * down
    return inf_pess, inf_opt


def _monotone_atoms(loss: Callable[..., Any], p_q_between: Callable[..., Any], x_lo: float, x_hi: float, bl: float, br: float,
                    sign: float, h: float, pess: list[Any], opt: list[Any]) -> float:
    """Atoms of a loss monotone in the output x, on the window [x_lo, x_hi] inside the support (bl, br).

    ``loss(x)`` is the oriented loss (``sign`` = +1: nondecreasing in x, -1: nonincreasing);
    ``p_q_between(xa, xb)`` gives the P-masses, Q-masses and P-mass error bounds of the pieces (xa, xb].
    The output axis is cut where the loss crosses the grid points of step ``h`` (bisection); the pieces
    are appended to ``pess`` / ``opt`` as (loss, p, q) arrays (an exact atom inside one cell; a sliver
    across a grid point raised or lowered), and so are the tails beyond the window. Returns the P-mass
    the pessimistic side puts at +inf.
    """
    remove = sign > 0.0
    inf_extra = 0.0
    l_ends = loss(np.array([x_lo, x_hi]))
    if not np.all(np.isfinite(l_ends)):
        raise ValueError("the family's log-density is not finite inside its support")
    lw_lo, lw_hi = float(l_ends.min()), float(l_ends.max())
    i0, i1 = math.ceil(lw_lo / h), math.floor(lw_hi / h)  # the grid points in [lw_lo, lw_hi]
    if i1 - i0 + 1 > _MAX_CUTS:
        raise ValueError("value_step is too small for this family's loss range")
    cuts = np.arange(i0, i1 + 1, dtype=float) * h
    def bisect(strict: bool) -> tuple[np.ndarray, np.ndarray]:
        # For each cut: pred(x) = sign L(x) <= sign cut (< if strict) holds at lo, fails at hi.
        lo = np.full(cuts.shape, x_lo)
        hi = np.full(cuts.shape, x_hi)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            # Stop at a relative width of ~1e-15: the sliver left around each cut is rounded.
            active = (mid > lo) & (mid < hi) & (hi - lo > 1e-15 * np.maximum(np.abs(mid), 1e-3))
            if not active.any():
                break
            lm = sign * loss(mid)
            good = lm < sign * cuts if strict else lm <= sign * cuts
            lo = np.where(active & good, mid, lo)
            hi = np.where(active & ~good, mid, hi)
        return lo, hi

    # Both ends of {L = cut}: a flat stretch of the loss at a cut (the Laplace's L = d) becomes
    # its own piece, an atom on the grid point.
    xs = np.unique(np.concatenate(([x_lo, x_hi], *bisect(False), *bisect(True))))
    ls = loss(xs)
    pm0, qm0, err = p_q_between(xs[:-1], xs[1:])
    # The pessimistic side takes each piece's mass plus its error bound, the optimistic side
    # minus it (both with the same Q / P ratio: the atom's place is unchanged).
    ratio = np.divide(qm0, pm0, out=np.zeros_like(pm0), where=pm0 > 0.0)
    pm_up, pm_down = pm0 + err, np.maximum(pm0 - err, 0.0)
    # Cells are decided by the same comparisons with the cuts as the bisection (no division by
    # h): a piece with losses in [l_min, l_max] lies in one closed cell [g_c, g_{c+1}] iff no cut
    # lies strictly between them, c = i0 - 1 + #{cuts <= l_min}.
    l_min, l_max = np.minimum(ls[:-1], ls[1:]), np.maximum(ls[:-1], ls[1:])
    k_le = np.searchsorted(cuts, l_min, side="right")
    k_below_max = np.searchsorted(cuts, l_max, side="left")
    same = k_below_max <= k_le
    # A piece inside one cell: an exact atom (P, Q), placed in the cell by pld_atoms.
    mid_l = (i0 - 0.5 + k_le) * h
    pess.append((mid_l[same], pm_up[same], np.minimum(pm_up[same] * ratio[same], 1.0)))
    opt.append((mid_l[same], pm_down[same], pm_down[same] * ratio[same]))
    # A piece across a grid point (a sliver around a cut): raised to the top of the cell holding
    # its largest loss (pessimistic), lowered to the bottom of the cell holding its smallest.
    x = ~same
    top = (i0 + k_below_max[x]) * h
    bottom = (i0 - 1 + np.searchsorted(cuts, l_min[x], side="left")) * h
    with np.errstate(over="ignore"):
        pess.append((top - 0.5 * h, pm_up[x], np.minimum(pm_up[x] * np.exp(-top), 1.0)))
        qo = pm_down[x] * np.exp(-bottom)
    ok = qo <= 1.0  # an atom too low for its Q-mass to be a probability is dropped (a lowering)
    opt.append((bottom[ok] + 0.5 * h, pm_down[x][ok], qo[ok]))
    # The tails of B beyond the window: mass on the far side of x_lo / x_hi whose loss lies beyond
    # L(x_lo) / L(x_hi). Beyond a larger loss: pessimistic +inf, optimistic that loss; beyond a
    # smaller loss: pessimistic that loss, optimistic dropped.
    lb = np.array([bl if math.isfinite(bl) else -math.inf])
    rb = np.array([br if math.isfinite(br) else math.inf])
    m_low, _, e_low = p_q_between(lb, np.array([x_lo]))
    m_high, _, e_high = p_q_between(np.array([x_hi]), rb)
    for m, e, end, beyond_up in ((float(m_low[0]), float(e_low[0]), float(l_ends[0]), not remove),
                                 (float(m_high[0]), float(e_high[0]), float(l_ends[1]), remove)):
        if not m + e > 0.0:
            continue
        if beyond_up:
            inf_extra += m + e
            mo = max(m - e, 0.0)
            qo_end = mo * math.exp(-end) if end > -700.0 else math.inf
            if mo > 0.0 and qo_end < 1.0:
                opt.append((np.array([end]), np.array([mo]), np.array([qo_end])))
        else:
            qp_end = min((m + e) * math.exp(-end), 1.0) if end > -700.0 else 1.0
            pess.append((np.array([end]), np.array([m + e]), np.array([qp_end])))
    return inf_extra


def _join(parts: list[Any], inf: float) -> Atoms:
    if not parts:
        return np.zeros(0), np.zeros(0), np.zeros(0), min(inf, 1.0)
    cols = [np.ascontiguousarray(np.concatenate([p[i] for p in parts]), dtype=float) for i in range(3)]
    keep = cols[1] > 0.0
    return cols[0][keep], np.minimum(cols[1][keep], 1.0), cols[2][keep], min(inf, 1.0)
