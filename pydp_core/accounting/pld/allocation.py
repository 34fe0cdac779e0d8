"""Random allocation: each record takes part in exactly k of t steps, chosen uniformly (docs/pld.md,
"Random allocation").

One step adds noise X ~ f to a query of sensitivity d (in units of the scale); R = f(X - d) / f(X) is the
likelihood ratio of that step, with law mu under the null X ~ f (E R = 1). With one participation in t
steps (k = 1), the output without the record is f^t, with it the record's step I is uniform on
{1, ..., t}, and the likelihood ratio of the whole pass is the mean M_t = (R_1 + ... + R_t) / t of t
independent copies of R under the null (Feldman and Shenfeld 2025). Both neighbour orders are functions
of the law mu_t of M_t alone:

- remove (P with the record, Q without): loss log M_t, P-mass M_t dmu_t, Q-mass dmu_t;
- add: loss -log M_t, P-mass dmu_t, Q-mass M_t dmu_t.

Two laws nu_lo <=_cx mu_t <=_cx nu_hi in the convex order give a dominated and a dominating pair of the
pass (Blackwell 1953: the pair (M dnu, dnu) is a post-processing of (M' dnu', dnu') iff nu <=_cx nu'), so
their PLDs bracket the true one under any composition. They are built by exponentiation:
M_{a+b} = (a M_a + b M_b) / (a + b) is a convolution of two independent laws (M_{2^j} by
self-convolutions, then M_t as a mean of the powers at the binary digits of t), and after each one the law
is put back on a geometric grid by a mean-preserving spread of each atom onto the two grid points around
it (the dominating chain) or by contracting the atoms of each cell to their mean (the dominated chain).
The convex order is kept by independent sums, so each chain stays on its side at every stage.

With k > 1 participations, a uniform k-subset is a uniformly random partition of the t steps into k
blocks of sizes floor(t/k) or ceil(t/k) followed by one uniform step in each block (the law of the subset
is invariant under permutations of the steps, hence uniform); revealing the partition is a refinement,
so the pass is dominated by the composition of k one-participation passes over the blocks (Feldman and
Shenfeld 2025). The lower side for 1 < k < t is, for the Gaussian, a post-processing of the true output:
the sum of all t outputs, a Gaussian mechanism with shift k d / sqrt(t). For the other families it is the
event that the k steps fall one in each block (:class:`_BlockLower`): P >= alpha P_B, P_B the block
composition, alpha = prod_j m_j / C(t, k), in the remove order (no loss in the add order); it is 0 where
epsilon is below about log(1 / alpha). With k = t the pass is the t-fold composition of one step, exact
on both sides.

The discrete Laplace and the discrete Gaussian (:class:`_Discrete`) enter through the same chains: the law
mu of one step's ratio is atomic, and both chains start from its exact atoms (:func:`_base_atoms`; cells of
atoms, spread or contracted, only beyond _MAX_BASE of them); k = t and the substitution upper end are the
engine's exact discrete atom lists, and the lower end for 1 < k < t is the sum of the outputs for the
discrete Gaussian (:func:`_discrete_gaussian_sum`) and the block event for the discrete Laplace.

Over 600 lines (about 550 of code) because the upper and lower chains, the step laws of every family and
the calibration search share one construction; splitting them would split one proof (docs/pld.md).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import special as sps

from ..._core import accounting as _acc
from .sided import Atoms, _Sided

__all__ = ["allocation_sided", "mean_laws"]

_STEP = 5e-3  # grid step of log M in the convolution chains
_PRUNE = 1e-30  # atoms below this mass are merged (a spread onto the ends / a contraction)
_TAIL = 1e-17  # P- and Q-mass of the single-step law left to the exact tail atoms
_MAX_BASE = 8000  # geometric cells of a law at most (coarser for large shifts: looser, still valid)


def _cells(step: float) -> int:
    """The most cells of a law on chains of loss step ``step``: _MAX_BASE at _STEP, fewer on coarser chains."""
    return max(int(_MAX_BASE * min(_STEP / step, 1.0)), 100)
_MAX_SHIFT = 10.0  # largest shift d (beyond it the loss range outgrows the grids)
_AT_SMALLEST = (f"the target is met at the smallest scale random allocation is built for (sensitivity / "
                f"{_MAX_SHIFT:g}); a smaller scale is not certified here")
_FINE = 40.0  # fine grid steps per standard deviation of the mean
_WIDTH = 15.0  # half-width of the fine grid, in standard deviations of the mean

Law = tuple[np.ndarray, np.ndarray]  # (values of M, Q-masses), values sorted


def _gauss_between(xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """N(0, 1)-mass of (xa, xb], from the tail on the far side of 0 (no cancellation)."""
    out: np.ndarray = np.where(xa > 0.0, sps.ndtr(-xa) - sps.ndtr(-xb), sps.ndtr(xb) - sps.ndtr(xa))
    return out


def _base_gaussian(d: float, step: float) -> tuple[Law, float, Law]:
    """The single-step law of R = exp(d x - d^2 / 2), x ~ N(0, 1): (dominating law on a grid, its P-mass
    at +inf, dominated law).

    The loss axis is cut uniformly (``step``) over d^2/2 -+ r d, r the N(0, 1) quantile of _TAIL; each
    cell [g_j, g_{j+1}] of R has Q-mass q_j and P-mass p_j = E[R; cell] (P: x ~ N(d, 1)). Dominating:
    each cell's mass spread onto its ends keeping p_j; the top tail's P-mass goes to +inf and its Q-mass
    to R = 0 (revealing the tail refines the pair). Dominated: an atom p_j / q_j of mass q_j per cell,
    the two tails included."""
    reach = float(-sps.ndtri(_TAIL))
    lo, hi = -d * d / 2.0 - reach * d, d * d / 2.0 + reach * d
    n = min(max(int(math.ceil((hi - lo) / step)), 1), _cells(step))
    cuts = lo + (hi - lo) * np.arange(n + 1) / n
    x = (cuts + d * d / 2.0) / d
    q = _gauss_between(x[:-1], x[1:])
    p = _gauss_between(x[:-1] - d, x[1:] - d)
    q_lo, p_lo = float(sps.ndtr(x[0])), float(sps.ndtr(x[0] - d))
    q_hi, p_hi = float(sps.ndtr(-x[-1])), float(sps.ndtr(-(x[-1] - d)))
    g = np.exp(cuts)
    spread, short = _spread_cells(cuts, q, p)
    w = np.concatenate(([0.0], spread))  # on the grid 0, g_0, ..., g_n
    first = min(p_lo / g[0], q_lo)
    w[1] += first
    w[0] += q_lo - first + q_hi
    grid = np.concatenate(([0.0], g))
    # Dominated: cells whose Q-mass underflowed are left out (removing P-mass only lowers delta).
    qs, ps = np.concatenate(([q_lo], q, [q_hi])), np.concatenate(([p_lo], p, [p_hi]))
    keep = qs > 0.0
    lo_v, lo_w = ps[keep] / qs[keep], qs[keep]
    order = np.argsort(lo_v, kind="stable")
    return (grid, w), min(p_hi + short, 1.0), (lo_v[order], lo_w[order])


def _spread_cells(cuts: np.ndarray, q: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, float]:
    """Masses on the grid exp(cuts) of cells (exp(cuts[j]), exp(cuts[j+1])) of Q-mass q and P-mass p
    (= E[R; cell]), each spread onto its two ends with its mean kept; and the P-mass the spread could not
    carry (a Q-mass rounded below p / g_{j+1}, or underflowed to 0), for +inf."""
    g = np.exp(cuts)
    up = np.clip((p - q * g[:-1]) / (g[1:] - g[:-1]), 0.0, q)
    w = np.zeros(g.size)
    w[:-1] += q - up
    w[1:] += up
    short = p - (q - up) * g[:-1] - up * g[1:]
    return w, float(np.sum(short[short > 0.0]))


def _base_laplace(d: float, step: float) -> tuple[Law, float, Law]:
    """The single-step law of R = f(x - d) / f(x) for the Laplace f(x) = e^{-|x|} / 2: R = e^{-d} on
    x <= 0 (Q-mass 1/2), R = e^{d} on x >= d (Q-mass e^{-d} / 2), R = e^{2x - d} in between, cut uniformly
    in the loss 2x - d; each cell's Q-mass (e^{-x_a} - e^{-x_b}) / 2 and P-mass (e^{x_b - d} - e^{x_a - d}) / 2
    are exact. (dominating law, its P-mass at +inf (rounding only), dominated law)."""
    n = min(max(int(math.ceil(2.0 * d / step)), 1), _cells(step))
    cuts = -d + 2.0 * d * np.arange(n + 1) / n
    x = (cuts + d) / 2.0
    q = -0.5 * np.expm1(x[:-1] - x[1:]) * np.exp(-x[:-1])
    p = 0.5 * np.expm1(x[1:] - x[:-1]) * np.exp(x[:-1] - d)
    w, short = _spread_cells(cuts, q, p)
    w[0] += 0.5
    w[-1] += 0.5 * math.exp(-d)
    grid = np.exp(cuts)
    keep = q > 0.0
    lo_v = np.concatenate(([math.exp(-d)], p[keep] / q[keep], [math.exp(d)]))
    lo_w = np.concatenate(([0.5], q[keep], [0.5 * math.exp(-d)]))
    return (grid, w), min(short, 1.0), (lo_v, lo_w)


def _span(a: Law, b: Law, ma: int, mb: int) -> tuple[float, float]:
    """The least positive and the largest value of (ma A + mb B) / (ma + mb)."""
    m = float(ma + mb)

    def low(v: np.ndarray) -> tuple[float, float]:  # smallest value and smallest positive value
        pos = v[v > 0.0]
        return float(v[0]), float(pos[0]) if pos.size else math.inf

    (a0, ap), (b0, bp) = low(a[0]), low(b[0])
    cands = [(ma * x + mb * y) / m for x in (a0, ap) for y in (b0, bp)]
    zmin = min(c for c in cands if c > 0.0)
    return zmin, (ma * float(a[0][-1]) + mb * float(b[0][-1])) / m


def _grid(zmin: float, zmax: float, spread: float, step: float) -> np.ndarray:
    """0, a geometric grid from zmin to zmax (ratio at most e^step), and a finer uniform one (step
    spread / _FINE) over 1 +- _WIDTH spread, where the mass of a mean of many steps lies (``spread``: the
    standard deviation of the mean)."""
    if not zmax > zmin * (1.0 + 1e-12):
        return np.array([0.0, zmin, zmin * (1.0 + 1e-9) + 1e-300])
    n = min(max(int(math.ceil((math.log(zmax) - math.log(zmin)) / step)), 1), _cells(step))  # coarser past that
    g = np.exp(math.log(zmin) + (math.log(zmax) - math.log(zmin)) * np.arange(n + 1) / n)
    g[0], g[-1] = zmin, max(zmax, g[-1])
    h = spread / _FINE * (step / _STEP)
    if h < step:
        lo, hi = max(zmin, 1.0 - _WIDTH * spread), min(zmax, 1.0 + _WIDTH * spread)
        if hi > lo:
            g = np.union1d(g, np.linspace(lo, hi, int(math.ceil((hi - lo) / h)) + 1))
    return np.concatenate(([0.0], g))


def _combine(a: Law, b: Law, ma: int, mb: int, var: float, spread: bool, step: float) -> Law:
    """The law of (ma A + mb B) / (ma + mb) put back on a grid: spread onto the grid points with the mean
    kept (the dominating chain) or contracted to the cell means (the dominated chain)."""
    grid = _grid(*_span(a, b, ma, mb), math.sqrt(var / (ma + mb)), step)
    mass, moment = _acc.pld_allocation_convolve(a[0], a[1], b[0], b[1], float(ma), float(mb), grid, spread)
    keep = mass > 0.0
    if spread:
        return _prune_up(grid[keep], mass[keep])
    return _prune_down(moment[keep] / mass[keep], mass[keep])


def _prune_up(v: np.ndarray, w: np.ndarray) -> Law:
    """Atoms of mass below _PRUNE spread onto 0 and the largest value (a mean-preserving spread)."""
    top = float(v[-1])
    tiny = (w < _PRUNE) & (v > 0.0) & (v < top)
    if not tiny.any():
        return v, w
    to_top = float(np.sum(w[tiny] * v[tiny])) / top
    to_zero = float(np.sum(w[tiny])) - to_top
    v, w = v[~tiny], w[~tiny].copy()
    w[-1] += to_top
    if v[0] == 0.0:
        w[0] += to_zero
        return v, w
    return np.concatenate(([0.0], v)), np.concatenate(([to_zero], w))


def _prune_down(v: np.ndarray, w: np.ndarray) -> Law:
    """Atoms of mass below _PRUNE merged into one atom at their mean (a contraction)."""
    tiny = w < _PRUNE
    if np.count_nonzero(tiny) < 2:
        return v, w
    mass = float(np.sum(w[tiny]))
    at = float(np.sum(w[tiny] * v[tiny])) / mass
    v, w = np.concatenate((v[~tiny], [at])), np.concatenate((w[~tiny], [mass]))
    order = np.argsort(v, kind="stable")
    return v[order], w[order]


def _between(noise: Any, xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """The mass of (xa, xb] under a symmetric family, from the tail on the far side of 0."""
    out: np.ndarray = np.where(xa > 0.0, noise.sf(xa) - noise.sf(xb), noise.cdf(xb) - noise.cdf(xa))
    return out


def _base_density(noise: Any, d: float, step: float) -> tuple[Law, float, Law]:
    """The single-step law of R = f(x - d) / f(x) for a symmetric log-concave family f (R is nondecreasing
    in x): as :func:`_base_gaussian`, with cells [x_j, x_{j+1}] of the x axis over the window between the
    _TAIL quantiles of Q and P, each closed once the loss has grown by ``step`` (a plateau of the loss is one
    cell); their Q- and P-masses from the family's cdf and sf. (dominating law, P-mass at +inf, dominated)."""
    reach = float(noise.isf(_TAIL))
    xs = np.linspace(-reach, d + reach, 64 * _MAX_BASE + 1)
    loss = np.maximum.accumulate(np.asarray(noise.logpdf(xs - d) - noise.logpdf(xs), dtype=float))
    span = float(loss[-1] - loss[0])
    if not span > 0.0:
        raise ValueError("the likelihood ratio of one step is constant: the family and shift give no loss")
    h = max(step, span / _cells(step))
    level = np.floor((loss - loss[0]) / h)
    cut = np.concatenate(([True], level[1:] > level[:-1]))  # the first point of every loss level
    cut[-1] = True
    x, cuts = xs[cut], loss[cut]
    if x.size > 2 and cuts[-1] - cuts[-2] < 0.5 * h:  # a last sliver joins the cell before it
        x, cuts = np.delete(x, -2), np.delete(cuts, -2)
    q = _between(noise, x[:-1], x[1:])
    p = _between(noise, x[:-1] - d, x[1:] - d)
    q_lo, p_lo = float(noise.cdf(x[0])), float(noise.cdf(x[0] - d))
    q_hi, p_hi = float(noise.sf(x[-1])), float(noise.sf(x[-1] - d))
    g = np.exp(cuts)
    spread, short = _spread_cells(cuts, q, p)
    w = np.concatenate(([0.0], spread))
    first = min(p_lo / g[0], q_lo)
    w[1] += first
    w[0] += q_lo - first + q_hi
    qs, ps = np.concatenate(([q_lo], q, [q_hi])), np.concatenate(([p_lo], p, [p_hi]))
    keep = qs > 0.0
    lo_v, lo_w = ps[keep] / qs[keep], qs[keep]
    order = np.argsort(lo_v, kind="stable")
    return (np.concatenate(([0.0], g)), w), min(p_hi + short, 1.0), (lo_v[order], lo_w[order])


_BASES = {"gaussian": _base_gaussian, "laplace": _base_laplace}
_DISCRETE = ("discrete_laplace", "discrete_gaussian")
_DG_REACH = 92.0  # discrete Gaussian: integers of log-mass >= -92 - log Z are summed (the rest < 1e-40)
_DG_MAX_INTEGERS = 1 << 24


def _base_atoms(loss: np.ndarray, q: np.ndarray, p: np.ndarray, inf: float, step: float) -> tuple[Law, float, Law]:
    """The single-step laws of a discrete family from its atoms: losses ``loss`` (ascending) with Q-masses
    ``q`` and P-masses ``p`` (= e^loss q, each formed in log space), and a bound ``inf`` on the P-mass left
    out of the list. (dominating law, P-mass at +inf, dominated law).

    The tails are those of the densities: the lowest atoms of Q-mass <= _TAIL in all are spread onto 0 and
    the lowest kept value (dominating) or contracted to one atom (dominated); the highest atoms of P-mass
    <= _TAIL in all are revealed (P-mass to +inf, Q-mass to R = 0; dominating) or contracted to one atom
    (dominated). Between them the atoms are the exact law of R when there are at most _cells(step) of them;
    otherwise the loss axis is cut uniformly (cells of at least ``step``) and each cell is spread onto its
    ends with its mean kept (dominating) or contracted to its mean (dominated), as for a density."""
    n = loss.size
    below = np.cumsum(q)
    above = np.cumsum(p[::-1])[::-1]
    i0 = min(int(np.searchsorted(below, _TAIL, side="right")), n - 1)  # atoms [0, i0): the lower tail
    i1 = max(int(np.count_nonzero(above > _TAIL)), i0 + 1)  # atoms [i1, n): the upper tail
    q_lo, p_lo = float(np.sum(q[:i0])), float(np.sum(p[:i0]))
    q_hi, p_hi = float(np.sum(q[i1:])), float(np.sum(p[i1:]))
    lw, qw, pw = loss[i0:i1], q[i0:i1], p[i0:i1]
    span = float(lw[-1] - lw[0])
    cells = _cells(step)
    if lw.size <= cells or not span > 0.0:
        g, w, short = np.exp(lw), qw.copy(), 0.0
        lo_v, lo_w = pw / qw, qw
    else:
        m = min(max(int(math.ceil(span / step)), 1), cells)
        cuts = lw[0] + span * np.arange(m + 1) / m
        cell = np.minimum(((lw - lw[0]) / span * m).astype(np.int64), m - 1)
        qc = np.bincount(cell, weights=qw, minlength=m)
        pc = np.bincount(cell, weights=pw, minlength=m)
        g = np.exp(cuts)
        w, short = _spread_cells(cuts, qc, pc)
        keep = qc > 0.0
        lo_v, lo_w = pc[keep] / qc[keep], qc[keep]
    first = min(p_lo / g[0], q_lo)
    up_w = np.concatenate(([q_lo - first + q_hi], w))
    up_w[1] += first
    up = (np.concatenate(([0.0], g)), up_w)
    tails_v = [v for v, m_ in ((p_lo / q_lo if q_lo > 0.0 else 0.0, q_lo), (p_hi / q_hi if q_hi > 0.0 else 0.0, q_hi))
               if m_ > 0.0]
    tails_w = [m_ for m_ in (q_lo, q_hi) if m_ > 0.0]
    lo_v, lo_w = np.concatenate((lo_v, tails_v)), np.concatenate((lo_w, tails_w))
    order = np.argsort(lo_v, kind="stable")
    return up, min(p_hi + short + inf, 1.0), (lo_v[order], lo_w[order])


class _Keyed:
    """Equal (and hashed) by ``key`` within one class, so the lru cache of the laws shares them."""

    key: Any

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return repr(self.key)


class _Discrete(_Keyed):
    """A discrete noise family on the integers at a scale and an integer sensitivity D: the discrete
    Laplace (pmf (1 - a) / (1 + a) a^|x|, a = e^{-1/scale}) or the discrete Gaussian (pmf
    e^{-y^2 / (2 scale^2)} / Z); equal (and hashed) by its parameters, so laws are shared."""

    def __init__(self, name: str, scale: float, sensitivity: int) -> None:
        self.name, self.scale, self.sensitivity = name, scale, sensitivity
        self.key: Any = (name, scale, sensitivity)

    def term(self, multiple: int) -> Any:
        """The plain mechanism at sensitivity ``multiple`` D (the engine's exact atom lists)."""
        from .mechanisms import discrete_gaussian_term, discrete_laplace_term

        if self.name == "discrete_laplace":
            return discrete_laplace_term(scale=self.scale, sensitivity=multiple * self.sensitivity)
        return discrete_gaussian_term(scale=self.scale, sensitivity=multiple * self.sensitivity)

    def base(self, step: float) -> tuple[Law, float, Law]:
        """The single-step laws of R = p(y - D) / p(y) (:func:`_base_atoms`)."""
        D = self.sensitivity
        if self.name == "discrete_laplace":
            # The classes y <= 0, y = 1..D-1, y >= D, their masses in closed form (PLD.from_discrete_laplace).
            loss, p, q, _ = self.term(1).remove
            return _base_atoms(np.asarray(loss), np.asarray(q), np.asarray(p), 0.0, step)
        from ..._core import release as _release

        s2 = self.scale * self.scale
        lz = float(_release.dgauss_log_normaliser(s2))
        reach = math.floor(math.sqrt(2.0 * s2 * max(_DG_REACH - lz, 1.0)))
        if 2 * reach + D + 1 > _DG_MAX_INTEGERS:
            raise ValueError(f"scale = {self.scale:g} spans more than 2^24 integers: too large for random "
                             "allocation with the discrete Gaussian")
        y = np.arange(-reach, D + reach + 1, dtype=np.float64)
        loss = D * (2.0 * y - D) / (2.0 * s2)
        q = np.exp(-y * y / (2.0 * s2) - lz)
        p = np.exp(-(y - D) ** 2 / (2.0 * s2) - lz)
        # P-mass beyond each end of [-reach, D + reach]: a geometric series on each side (as in sided.py).
        r = reach + 1.0
        inf = 2.0 * math.exp(-r * r / (2.0 * s2) - math.log(-math.expm1(-r / s2)) - lz) * (1.0 + 1e-12)
        return _base_atoms(loss, q, p, inf, step)


class _Family(_Keyed):
    """A noise family as a key: equal (and hashed) by the family's parameters, so laws are shared."""

    def __init__(self, noise: Any) -> None:
        self.noise, self.key = noise, noise.identity


def _base(family: Any, d: float, step: float) -> tuple[Law, float, Law]:
    """The single-step laws of a family given by name ("gaussian", "laplace") or as a :class:`_Family`."""
    if isinstance(family, str):
        return _BASES[family](d, step)
    if isinstance(family, _Discrete):
        return family.base(step)
    return _base_density(family.noise, d, step)


def mean_laws(family: Any, d: float, steps: int, step: float = _STEP) -> tuple[Law, float, Law]:
    """(dominating law, its P-mass at +inf, dominated law) of M_steps for one step of ``family`` ("gaussian"
    or "laplace") at shift d."""
    up1, inf, down1 = _base(family, d, step)
    with np.errstate(over="ignore"):  # Var R (of the dominated law; it only places the fine grid)
        var = min(max(float(np.dot(down1[1], down1[0] ** 2)) - 1.0, 1e-300), 1e300)

    def chain(base: Law, spread: bool) -> Law:
        # Binary powers: M_{2m} by self-convolutions (half the pairs of two distinct laws), and M_steps
        # as a weighted mean of the powers at the binary digits of ``steps``.
        power, power_m, rest = base, 1, steps
        while not rest & 1:
            power, power_m, rest = _combine(power, power, power_m, power_m, var, spread, step), 2 * power_m, rest >> 1
        out, out_m = power, power_m
        rest >>= 1
        while rest:
            power, power_m = _combine(power, power, power_m, power_m, var, spread, step), 2 * power_m
            if rest & 1:
                out, out_m = _combine(out, power, out_m, power_m, var, spread, step), out_m + power_m
            rest >>= 1
        return out

    return chain(up1, True), inf, chain(down1, False)


def _sides(law: Law, inf: float, remove: bool) -> Atoms:
    """The atom list (losses, P-masses, Q-masses, P-mass at +inf) of one neighbour order."""
    v, w = law
    pos = v > 0.0
    with np.errstate(divide="ignore"):
        lv = np.log(v[pos])
    if remove:
        return lv, v[pos] * w[pos], w[pos], inf
    return -lv, w[pos], v[pos] * w[pos], float(np.sum(w[~pos]))


@lru_cache(maxsize=32)
def _laws(family: Any, d: float, steps: int, step: float) -> tuple[Law, float, Law]:
    return mean_laws(family, d, steps, step)


def allocation_sided(family: Any, d: float, steps: int, step: float = _STEP) -> _Sided:
    """The one-participation pass over ``steps`` steps of the ``family`` mechanism of shift ``d``."""

    def build(remove: bool, h: float, _tail: float) -> tuple[Atoms, Atoms]:
        up, inf, down = _laws(family, d, steps, step)
        return _sides(up, inf, remove), _sides(down, 0.0, remove)

    name = family if isinstance(family, str) else family.key
    return _Sided(("random_allocation", name, d, steps, step), build, steps == 1)


class _OneSide:
    """A mechanism that keeps one side of another and takes the identity (no loss) on the other: the
    dominating side of a bound that has no matching dominated side, or the reverse."""

    def __init__(self, inner: Any, pessimistic: bool) -> None:
        from .mechanisms import identity_term

        self.inner, self.pessimistic, self._identity = inner, pessimistic, identity_term()
        self.symmetric = inner.symmetric

    def key(self) -> tuple[Any, ...]:
        return ("one_side", self.pessimistic, self.inner.key())

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        from ..._core import accounting as _acc

        inner = self.inner.discretise(remove, h, tail, composed)
        ident = self._identity.discretise(remove, h, tail, composed)
        return _acc.pld_sides(inner, ident) if self.pessimistic else _acc.pld_sides(ident, inner)


class _BlockLower:
    """The remove order's dominated side of one block of a k-participation pass, with its P-masses
    times ``weight`` (the probability that the record's k steps fall one in each block, on one block of
    the k; 1 on the others); no loss on the add order and on the dominating side.

    The record's steps S are a uniform k-subset, so P = sum_S P_S / C(t, k) >= alpha P_B as measures,
    P_B the law given one step in each block: one uniform step per block, independently, the composition
    of k one-participation passes over the blocks, and alpha = prod_j m_j / C(t, k). Hence
    sup_A P(A) - e^eps Q(A) >= sup_A alpha P_B(A) - e^eps Q(A): the sub-probability pair (alpha P_B, Q),
    and any post-processing of it (the dominated chains), is dominated in the remove order, under any
    composition (products keep the order of measures)."""

    def __init__(self, family: Any, d: float, steps: int, step: float, weight: float) -> None:
        from .mechanisms import identity_term

        self.family, self.d, self.steps, self.step, self.weight = family, d, steps, step, weight
        self._identity = identity_term()
        self.symmetric = False

    def key(self) -> tuple[Any, ...]:
        name = self.family if isinstance(self.family, str) else self.family.key
        return ("allocation_block_lower", name, self.d, self.steps, self.step, self.weight)

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        from .sided import _drop_tiny

        ident = self._identity.discretise(remove, h, tail, composed)
        if not remove:
            return ident
        _, _, down = _laws(self.family, self.d, self.steps, self.step)
        loss, p, q, inf = _sides(down, 0.0, True)
        scaled = (loss + math.log(self.weight), p * self.weight, q, inf)
        return _acc.pld_sides(ident, _acc.pld_atoms(*_drop_tiny(scaled, False), h))


def _block_lower_terms(family: Any, d: float, t: int, k: int, step: float) -> list[Any]:
    """The dominated side of a k-participation pass from the event "one step in each block"."""
    small, n_big = t // k, t % k
    log_alpha = ((k - n_big) * math.log(small) + n_big * math.log(small + 1)
                 - (math.lgamma(t + 1) - math.lgamma(k + 1) - math.lgamma(t - k + 1)))
    alpha = min(math.exp(log_alpha) * (1.0 - 1e-12), 1.0)  # rounded down: a smaller weight only lowers
    sizes = [small] * (k - n_big) + [small + 1] * n_big
    counts: dict[Any, Any] = {}
    for i, m in enumerate(sizes):
        key = (m, alpha if i == 0 else 1.0)
        counts[key] = counts.get(key, 0) + 1
    return [(_BlockLower(family, d, m, step, w), n) for (m, w), n in counts.items()]


_SUM_MAX_LENGTH = 1 << 24  # the longest transform of the discrete Gaussian's sum statistic


def _discrete_gaussian_sum(family: _Discrete, t: int, k: int) -> Any:
    """The dominated side of a k-participation pass of the discrete Gaussian from the sum of the t
    outputs (a post-processing): S + k D against S, S the sum of t independent N_Z(0, s^2); None when its
    transform would be longer than _SUM_MAX_LENGTH.

    The law of S modulo n is the inverse DFT of the t-th power of the DFT of the one-step pmf folded
    modulo n (exact circular convolution). It is at least the law of S at every residue, and by at most
    P(|S| >= n - h) <= 2 e^{-(n - h)^2 / (2 t s^2)} (N_Z(0, s^2) is s^2-subgaussian: Canonne, Kamath and
    Steinke 2020), which underflows for n >= 2 h + 1, h = ceil(38.5 sd) + k D, sd = s sqrt(t). The
    outcomes x in [-h, h] are atoms of the lowered list: P-mass the computed law at x - k D less a bound
    on the rounding of the transforms, Q-mass the law at x plus it, loss their log ratio (every change
    lowers a loss or removes P-mass); the rest of the P-mass is left out. The two orders have the same
    PLD (x -> k D - x, S symmetric)."""
    from ..._core import release as _release
    from .mechanisms import _Atoms

    s2 = family.scale * family.scale
    shift = k * family.sensitivity
    half = int(math.ceil(38.5 * math.sqrt(t * s2))) + shift
    n = 1 << max(int(math.ceil(math.log2(2 * half + 1))), 4)
    if n > _SUM_MAX_LENGTH:
        return None
    lz = float(_release.dgauss_log_normaliser(s2))
    reach = math.floor(math.sqrt(2.0 * s2 * max(745.0 - lz, 1.0)))  # beyond it every mass underflows
    y = np.arange(-reach, reach + 1)
    folded = np.zeros(n)
    np.add.at(folded, y % n, np.exp(-(y.astype(np.float64) ** 2) / (2.0 * s2) - lz))
    law = np.fft.irfft(np.fft.rfft(folded) ** t, n)
    # Rounding, an absolute bound on every mass (docs/pld.md): the FFT's 2-norm bound (~7 ulps per
    # stage, Higham 2002) summed over the coefficients, times t through the power, plus the power's
    # and the inverse's own rounding; 16 ulps leave a margin over those constants.
    err = 16.0 * 2.0**-52 * (t * (1.0 + math.log2(n)) + 2.0 * math.log2(n))
    x = np.arange(-half, half + 1)
    p_lo = law[(x - shift) % n] - err
    q_hi = law[x % n] + err
    keep = p_lo > 0.0
    p_lo, q_hi = p_lo[keep], q_hi[keep]
    return _Atoms("allocation_discrete_gaussian_sum", (np.log(p_lo / q_hi), p_lo, q_hi, 0.0))


def allocation_terms(noise: Any, *, scale: Any, steps: Any, participations: Any, sensitivity: Any,
                     neighbours: str = "add_remove",
                     step: float = _STEP) -> list[Any]:
    """The (mechanism, count) terms of one pass of random allocation (``PLD.random_allocation``), the
    chains on loss cells of ``step``.

    Substitution (the record's contribution v replaced by v', both of norm <= the sensitivity, in the
    same k steps): revealing the steps leaves k steps of shift v - v', norm <= 2 d, so the upper end is
    the k-fold composition of the step at shift 2 d (no amplification; exact for k = t). The lower end is
    the add/remove pass's: the record replaced by one that contributes nothing (v' = 0, a record whose
    clipped contribution is zero) is the pair of removing it."""
    from ..._validation import check_choice, check_positive
    from ._args import _count, _scalar
    from .mechanisms import _noise_args, gdp_term, noise_term

    discrete = isinstance(noise, str) and noise in _DISCRETE
    family: Any = getattr(noise, "spec_name", None)  # None: a family without a name (truncated, user-defined)
    if discrete:
        family = _Discrete(noise, _scalar(scale, "scale", check_positive), _integer_sensitivity(sensitivity))
        d = family.sensitivity / family.scale
    elif family in ("logistic", "subbotin"):
        family = _Family(noise)
    elif family not in ("gaussian", "laplace"):
        raise TypeError("noise must be Gaussian(), Laplace(), Logistic(), Subbotin(r), 'discrete_laplace' or "
                        "'discrete_gaussian': random allocation is implemented for these families, got "
                        f"{type(noise).__name__}")
    if not discrete:
        d, _ = _noise_args(scale, sensitivity)
    t = _count(steps, "steps")
    k = _count(participations, "participations")
    if k > t:
        raise ValueError(f"participations must be <= steps, got participations={k} > steps={t}")
    if d > _MAX_SHIFT:
        raise ValueError(f"sensitivity / scale must be <= {_MAX_SHIFT:g} for random allocation, got {d:g} "
                         "(the likelihood ratio of one step would overflow)")
    if check_choice(neighbours, "neighbours", ("add_remove", "substitution")) == "substitution":
        # Only the shift matters: the pairs at (scale, sensitivity) are those at (1, d), and 2 d is exact.
        if discrete:
            swap = family.term(2)  # the integer difference v - v' is at most 2 D
        else:
            swap = noise_term(noise, scale=1.0, sensitivity=2.0 * d, sampling_rate=1.0, sampling="poisson",
                              neighbours="add_remove")
        if k == t:
            return [(swap, t)]
        removal = allocation_terms(noise, scale=family.scale if discrete else 1.0, steps=t, participations=k,
                                   sensitivity=family.sensitivity if discrete else d, step=step)
        lower = [(_OneSide(m, False), n) for m, n in removal] if k == 1 else [
            (m, n) for m, n in removal if isinstance(m, _BlockLower) or (isinstance(m, _OneSide) and not m.pessimistic)]
        return [(_OneSide(swap, True), k)] + lower
    if k == 1:
        return [(allocation_sided(family, d, t, step), 1)]
    if k == t:  # every step holds the record: the t-fold composition, exact on both sides
        return [(family.term(1) if discrete else allocation_sided(family, d, 1, step), t)]
    # k blocks: t % k of size ceil(t / k), the rest of size floor(t / k).
    small, big = t // k, t // k + 1
    n_big = t % k
    terms = [(_OneSide(allocation_sided(family, d, small, step), True), k - n_big)]
    if n_big:
        terms.append((_OneSide(allocation_sided(family, d, big, step), True), n_big))
    summed = _discrete_gaussian_sum(family, t, k) if discrete and family.name == "discrete_gaussian" else None
    if family == "gaussian":
        # The sum of the t outputs: N(k d, t) vs N(0, t), shift k d / sqrt(t) in units of its scale.
        terms.append((_OneSide(gdp_term(k * d / math.sqrt(t)), False), 1))
    elif summed is not None:
        terms.append((_OneSide(summed, False), 1))
    else:
        terms.extend(_block_lower_terms(family, d, t, k, step))
    return terms


def _integer_sensitivity(sensitivity: Any) -> int:
    """The integer sensitivity D in [1, 1e6] of a discrete family (an integral float such as the default 1.0
    is taken as the integer it equals)."""
    from ..._validation import check_int

    if isinstance(sensitivity, (float, np.floating)) and float(sensitivity).is_integer():
        sensitivity = int(sensitivity)
    elif isinstance(sensitivity, (float, np.floating)):
        raise ValueError(f"sensitivity must be an integer for the discrete families, got {sensitivity!r}")
    return check_int(sensitivity, "sensitivity", 1, 10**6)


def calibrate_allocation(cls: Any, noise: Any, *, epsilon: Any, delta: Any, steps: Any, participations: Any,
                         sensitivity: Any, epochs: Any, rtol: float, certificate: bool) -> Any:
    """``PLD.calibrate_random_allocation`` (see there): the arguments checked, the scale calibrated."""
    import warnings

    from ..._validation import check_delta, check_positive
    from ._args import _count, _scalar
    from .calibration import _MIN_TAIL, _calibrate_scale
    from .grid import _TAIL_MASS
    from .interval import Interval

    e = _scalar(epsilon, "epsilon", check_positive)
    dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False, allow_one=False))
    n_epochs = _count(epochs, "epochs")
    t, k = _count(steps, "steps"), _count(participations, "participations")
    sens = _scalar(sensitivity, "sensitivity", check_positive)
    if not (0.0 < rtol < 0.5):
        raise ValueError(f"rtol must lie in (0, 0.5), got {rtol}")
    if dl < 1e3 * _MIN_TAIL:
        raise ValueError(f"delta must be >= {1e3 * _MIN_TAIL:g} for a calibration, got {dl:g}")
    if isinstance(noise, str) and noise in _DISCRETE:
        sens_arg: Any = _integer_sensitivity(sensitivity)  # the discrete families take an integer D
    else:
        sens_arg = sens
    allocation_terms(noise, scale=sens, steps=t, participations=k, sensitivity=sens_arg)  # checks the rest
    tail = min(_TAIL_MASS, dl * 1e-3)
    smallest = sens / _MAX_SHIFT * (1.0 + 1e-12)

    def builder(step: float) -> Any:
        def build(s: float, h: Any) -> Any:
            # Below the smallest scale random allocation is built for, the loss is only larger: the
            # search is kept at or above it (a scale there that fails makes every smaller one fail).
            terms = allocation_terms(noise, scale=max(s, smallest), steps=t, participations=k, sensitivity=sens_arg,
                                     step=step)
            return cls(terms).self_compose(n_epochs).with_discretization(value_step=h, tail_mass=tail)
        return build

    if 1 < k < t:
        found = _calibrate_upper(builder(4.0 * _STEP), noise, epsilon=e, delta=dl, steps=t, participations=k,
                                 sensitivity=sens, epochs=n_epochs, smallest=smallest, rtol=rtol / 4.0)
        lower, upper = found.scale_bounds
        if not upper <= lower * (1.0 + rtol):
            warnings.warn(f"the calibrated scale {upper:.6g} is certified and within rtol = {rtol:g} of the smallest "
                          "scale the upper end of random allocation certifies, but its lower end is loose with "
                          f"participations > 1: the exact minimal scale is only known to lie in [{lower:.6g}, "
                          f"{upper:.6g}]", RuntimeWarning, stacklevel=3)
        return found if certificate else found.scale
    # Start at the scale of the same passes without amplification (high: there the chains are cheap),
    # calibrate on chains 4 times coarser (16 times cheaper, certified too, only looser), and only when
    # their bracket is wider than rtol on the chains of PLD.random_allocation, from the coarse answer in
    # steps of the coarse bracket's width (not for 1 < k < t: there the loose lower end keeps it wide).
    start = max(sens * math.sqrt(n_epochs * k) / min(e, 1.0), 2.0 * smallest)
    found = _calibrate_scale(builder(4.0 * _STEP), epsilon=e, delta=dl, start=start, rtol=rtol / 4.0, width=rtol)
    lower, upper = found.scale_bounds
    if not upper <= lower * (1.0 + rtol) and k in (1, t):
        fine = _calibrate_scale(builder(_STEP), epsilon=e, delta=dl, start=upper, rtol=rtol / 4.0, width=rtol,
                                factor=min(max(upper / max(lower, 1e-300), 1.0 + rtol), 2.0))
        # both are certified: keep the smaller passing scale and the larger certified failing one
        found = fine if fine.scale <= found.scale else found._replace(
            scale_bounds=Interval(max(lower, fine.scale_bounds.lower), upper))
    lower, upper = found.scale_bounds
    if upper <= smallest:
        raise ValueError(_AT_SMALLEST)
    if not upper <= lower * (1.0 + rtol):
        warnings.warn(f"the calibrated scale {upper:.6g} is certified, but the minimal scale is only known to "
                      f"lie in [{lower:.6g}, {upper:.6g}], wider than rtol = {rtol:g}", RuntimeWarning,
                      stacklevel=3)
    return found if certificate else found.scale


def _gdp_mu(epsilon: float, delta: float) -> float:
    """The mu at which the Gaussian mechanism GDP(mu) has delta(epsilon) = ``delta`` (Dong et al. 2022)."""
    from scipy.optimize import brentq

    def excess(log_mu: float) -> float:
        mu = math.exp(log_mu)
        value = sps.ndtr(-epsilon / mu + mu / 2.0) - math.exp(epsilon) * sps.ndtr(-epsilon / mu - mu / 2.0)
        return math.log(max(float(value), 1e-300)) - math.log(delta)

    return math.exp(brentq(excess, math.log(1e-3), math.log(1e3), xtol=1e-12))


def _calibrate_upper(build: Any, noise: Any, *, epsilon: float, delta: float, steps: int, participations: int,
                     sensitivity: float, epochs: int, smallest: float, rtol: float) -> Any:
    """The calibration for 1 < k < t: the smallest scale whose certified upper delta(epsilon) is <= ``delta``,
    to relative ``rtol``, searched on the upper end alone (the lower end, loose here, cannot narrow it).

    The bracket: for the Gaussian its failing end is the scale at which the sum of all outputs, a Gaussian
    mechanism of shift k d / sqrt(t) per pass, is exactly at the target, divided by 1.01 (the true delta
    exceeds the target there, so the certified upper end does too; no PLD is built), and its passing
    end the scale of the k epochs-fold composition of one Gaussian step without amplification (checked,
    doubled while it fails); for the other families it is found by halving and doubling from that order
    of magnitude. Inside it, regula falsi with the Illinois safeguard on log(-log delta) against log scale
    (bisection in log scale while an end has no value), and once the predicted root is trusted, one point
    on each side of it, rtol / 2 away. Every scale is evaluated on its automatic loss grid; the answer
    passes on its own grid (``value_step``), and the bracket's lower end is the sum statistic's failing
    scale when the PLD's lower end at the answer's grid confirms it (certified), else 0."""
    from .calibration import ScaleCalibration
    from .interval import Interval

    memo: dict[float, Any] = {}

    def pld(s: float) -> Any:
        if s not in memo:
            p = build(s, None)
            memo[s] = (p.delta(epsilon), p.value_step)
        return memo[s]

    level = math.log(-math.log(delta))

    def excess(s: float) -> float:  # > 0 iff the certified upper end exceeds the target
        value = pld(s)[0].upper
        f = level - math.log(-math.log(min(max(value, 1e-300), 1.0 - 2.0**-52)))
        return max(f, 1e-300) if value > delta else min(f, 0.0)

    gaussian = getattr(noise, "spec_name", None) == "gaussian"
    mu = _gdp_mu(epsilon, delta) if gaussian else 1.0
    # The epochs-fold composed sum statistic is GDP(k sqrt(epochs) d / sqrt(t)) and is dominated by the pass.
    fail = sensitivity * participations * math.sqrt(epochs / steps) / mu / 1.01 if gaussian else 0.0
    b = max(sensitivity * math.sqrt(epochs * participations) / (mu if gaussian else min(epsilon, 1.0)),
            2.0 * smallest)
    a, fa = max(fail, smallest), None  # fa None: the end fails but has not been evaluated
    fb = excess(b)
    a, fa, b, fb = _pass_above(excess, lambda s: pld(s)[0].upper, a, fa, b, fb, delta=delta,
                               sensitivity=sensitivity)
    if not gaussian:
        a, fa, b, fb = _fail_below(excess, a, fa, b, fb, smallest)
    if a <= smallest and fa is None and excess(smallest) <= 0.0:
        raise ValueError(_AT_SMALLEST)
    b = _falsi(excess, a, fa, b, fb, rtol)
    interval, step = pld(b)
    lower = 0.0
    if fail > smallest:
        # The failing end is certified where the PLD's lower end at the answer's grid exceeds the target.
        low = build(fail, step).delta(epsilon).lower
        lower = fail if low > delta else 0.0
    return ScaleCalibration(b, Interval(lower, b), step, interval)


def _pass_above(excess: Any, upper: Any, a: float, fa: float | None, b: float, fb: float, *, delta: float,
                sensitivity: float) -> tuple[float, float | None, float, float]:
    """Double ``b`` until it passes (``excess <= 0``); refuse when the certified delta stops improving."""
    from .calibration import _STALL

    best_up, stalled = 1.0, 0
    while fb > 0.0:
        up = upper(b)
        if up < best_up:
            best_up, stalled = up, 0
        elif best_up < 1.0:
            stalled += 1
        if stalled >= _STALL or b > 1e12 * sensitivity:
            raise ValueError(f"no noise scale is certified for this many steps: up to scale {b:.6g} the certified "
                             f"delta(epsilon) stays above the target {delta:g} (at best {best_up:.3g}); use fewer "
                             "steps or a larger target")
        a, fa, b = b, fb, 2.0 * b
        fb = excess(b)
    return a, fa, b, fb


def _fail_below(excess: Any, a: float, fa: float | None, b: float, fb: float,
                smallest: float) -> tuple[float, float | None, float, float]:
    """Halve from ``b`` until a scale fails (``excess > 0``), never below ``smallest``."""
    while fa is None:
        x = max(b / 2.0, smallest)
        f = excess(x)
        if f > 0.0:
            a, fa = x, f
        elif x <= smallest:
            raise ValueError(_AT_SMALLEST)
        else:
            b, fb = x, f
    return a, fa, b, fb


def _falsi(excess: Any, a: float, fa: float | None, b: float, fb: float, rtol: float) -> float:
    """Narrow the bracket (``a`` fails, ``b`` passes) to ``b / a <= 1 + rtol``; returns the passing end.

    Regula falsi with the Illinois safeguard in log scale (bisection while the failing end has no value);
    once two predicted roots agree, one point on each side of the prediction, rtol / 2 away."""
    half = 1.0 + rtol / 2.0
    last, trusted, guess = 0, False, math.nan
    for _ in range(200):
        if b / a <= 1.0 + rtol:
            break
        la, lb = math.log(a), math.log(b)
        # fa > 1e-300 only once the failing end's upper delta is below 1 - 2^-52 (informative)
        if fa is not None and fa > 1e-300 and fa > fb:
            root = la + fa / (fa - fb) * (lb - la)
            trusted = trusted or abs(root - guess) < math.log(half) * 4.0
            guess = root
        else:
            root, trusted = 0.5 * (la + lb), False
        if trusted:
            a, fa, b, fb, trusted = _straddle(excess, a, fa, b, fb, math.exp(root), rtol)
            continue
        x = math.exp(min(max(root, la + 0.05 * (lb - la)), lb - 0.05 * (lb - la)))
        f = excess(x)
        if f > 0.0:
            a, fa = x, f
            fb, last = (0.5 * fb if last == 1 else fb), 1
        else:
            b, fb = x, f
            fa, last = ((0.5 * fa if fa is not None else None) if last == -1 else fa), -1
    return b


def _straddle(excess: Any, a: float, fa: float | None, b: float, fb: float, root: float,
              rtol: float) -> tuple[float, float | None, float, float, bool]:
    """Evaluate two points rtol / 2 either side of the predicted ``root``; returns the new bracket and
    whether the prediction is still trusted."""
    x = min(max(root * (1.0 + rtol / 2.0), a * (1.0 + rtol) * (1.0 - 1e-9)), b)
    y = x / (1.0 + rtol) * (1.0 + 1e-9)
    if x < b:
        fx = excess(x)
        if fx > 0.0:
            return x, fx, b, fb, False
        b, fb = x, fx
    if y > a:
        fy = excess(y)
        if fy > 0.0:
            return y, fy, b, fb, True
        return a, fa, y, fy, False
    return a, fa, b, fb, True
