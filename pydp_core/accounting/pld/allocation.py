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
M_{a+b} = (a M_a + b M_b) / (a + b) is a convolution of two independent laws (a = floor(t/2) and
b = t - a at every level), and after each one the law
is put back on a geometric grid by a mean-preserving spread of each atom onto the two grid points around
it (the dominating chain) or by contracting the atoms of each cell to their mean (the dominated chain).
The convex order is kept by independent sums, so each chain stays on its side at every stage.

With k > 1 participations, a uniform k-subset is a uniformly random partition of the t steps into k
blocks of sizes floor(t/k) or ceil(t/k) followed by one uniform step in each block (the law of the subset
is invariant under permutations of the steps, hence uniform); revealing the partition is a refinement,
so the pass is dominated by the composition of k one-participation passes over the blocks (Feldman and
Shenfeld 2025). The lower side for 1 < k < t is a post-processing of the true output: for the Gaussian,
the sum of all t outputs, a Gaussian mechanism with shift k d / sqrt(t); the Laplace gets the trivial
lower side (no loss). With k = t the pass is the t-fold composition of one step, exact on both sides.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Tuple

import numpy as np
from scipy import special as sps

from ..._core import accounting as _acc
from .sided import Atoms, _Sided

__all__ = ["allocation_sided", "mean_laws"]

_STEP = 5e-3  # grid step of log M in the convolution chains
_PRUNE = 1e-30  # atoms below this mass are merged (a spread onto the ends / a contraction)
_TAIL = 1e-17  # P- and Q-mass of the single-step law left to the exact tail atoms
_MAX_BASE = 8000  # geometric cells of a law at most (coarser for large shifts: looser, still valid)
_MAX_SHIFT = 10.0  # largest shift d (beyond it the loss range outgrows the grids)
_FINE = 40.0  # fine grid steps per standard deviation of the mean
_WIDTH = 15.0  # half-width of the fine grid, in standard deviations of the mean

Law = Tuple[np.ndarray, np.ndarray]  # (values of M, Q-masses), values sorted


def _gauss_between(xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """N(0, 1)-mass of (xa, xb], from the tail on the far side of 0 (no cancellation)."""
    result: np.ndarray = np.where(xa > 0.0, sps.ndtr(-xa) - sps.ndtr(-xb), sps.ndtr(xb) - sps.ndtr(xa))
    return result


def _base_gaussian(d: float, step: float) -> Tuple[Law, float, Law]:
    """The single-step law of R = exp(d x - d^2 / 2), x ~ N(0, 1): (dominating law on a grid, its P-mass
    at +inf, dominated law).

    The loss axis is cut uniformly (``step``) over d^2/2 -+ r d, r the N(0, 1) quantile of _TAIL; each
    cell [g_j, g_{j+1}] of R has Q-mass q_j and P-mass p_j = E[R; cell] (P: x ~ N(d, 1)). Dominating:
    each cell's mass spread onto its ends keeping p_j; the top tail's P-mass goes to +inf and its Q-mass
    to R = 0 (revealing the tail refines the pair). Dominated: an atom p_j / q_j of mass q_j per cell,
    the two tails included."""
    reach = float(-sps.ndtri(_TAIL))
    lo, hi = -d * d / 2.0 - reach * d, d * d / 2.0 + reach * d
    n = min(max(int(math.ceil((hi - lo) / step)), 1), _MAX_BASE)
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


def _spread_cells(cuts: np.ndarray, q: np.ndarray, p: np.ndarray) -> Tuple[np.ndarray, float]:
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


def _base_laplace(d: float, step: float) -> Tuple[Law, float, Law]:
    """The single-step law of R = f(x - d) / f(x) for the Laplace f(x) = e^{-|x|} / 2: R = e^{-d} on
    x <= 0 (Q-mass 1/2), R = e^{d} on x >= d (Q-mass e^{-d} / 2), R = e^{2x - d} in between, cut uniformly
    in the loss 2x - d; each cell's Q-mass (e^{-x_a} - e^{-x_b}) / 2 and P-mass (e^{x_b - d} - e^{x_a - d}) / 2
    are exact. (dominating law, its P-mass at +inf (rounding only), dominated law)."""
    n = min(max(int(math.ceil(2.0 * d / step)), 1), _MAX_BASE)
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


def _span(a: Law, b: Law, ma: int, mb: int) -> Tuple[float, float]:
    """The least positive and the largest value of (ma A + mb B) / (ma + mb)."""
    m = float(ma + mb)

    def low(v: np.ndarray) -> Tuple[float, float]:  # smallest value and smallest positive value
        pos = v[v > 0.0]
        return float(v[0]), float(pos[0]) if pos.size else math.inf

    (a0, ap), (b0, bp) = low(a[0]), low(b[0])
    cands = [(ma * x + mb * y) / m for x in (a0, ap) for y in (b0, bp)]
    zmin = min(c for c in cands if c > 0.0)
    return zmin, (ma * float(a[0][-1]) + mb * float(b[0][-1])) / m


def _grid(zmin: float, zmax: float, spread: float) -> np.ndarray:
    """0, a geometric grid from zmin to zmax (ratio at most e^_STEP), and a finer uniform one (step
    spread / _FINE) over 1 +- _WIDTH spread, where the mass of a mean of many steps lies (``spread``: the
    standard deviation of the mean)."""
    if not zmax > zmin * (1.0 + 1e-12):
        return np.array([0.0, zmin, zmin * (1.0 + 1e-9) + 1e-300])
    n = min(max(int(math.ceil((math.log(zmax) - math.log(zmin)) / _STEP)), 1), _MAX_BASE)  # coarser past that
    g = np.exp(math.log(zmin) + (math.log(zmax) - math.log(zmin)) * np.arange(n + 1) / n)
    g[0], g[-1] = zmin, max(zmax, g[-1])
    h = spread / _FINE
    if h < _STEP:
        lo, hi = max(zmin, 1.0 - _WIDTH * spread), min(zmax, 1.0 + _WIDTH * spread)
        if hi > lo:
            g = np.union1d(g, np.linspace(lo, hi, int(math.ceil((hi - lo) / h)) + 1))
    return np.concatenate(([0.0], g))


def _combine(a: Law, b: Law, ma: int, mb: int, var: float, spread: bool) -> Law:
    """The law of (ma A + mb B) / (ma + mb) put back on a grid: spread onto the grid points with the mean
    kept (the dominating chain) or contracted to the cell means (the dominated chain)."""
    grid = _grid(*_span(a, b, ma, mb), math.sqrt(var / (ma + mb)))
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


_BASES = {"gaussian": _base_gaussian, "laplace": _base_laplace}


def mean_laws(family: str, d: float, steps: int) -> Tuple[Law, float, Law]:
    """(dominating law, its P-mass at +inf, dominated law) of M_steps for one step of ``family`` ("gaussian"
    or "laplace") at shift d."""
    up1, inf, down1 = _BASES[family](d, _STEP)
    with np.errstate(over="ignore"):  # Var R (of the dominated law; it only places the fine grid)
        var = min(max(float(np.dot(down1[1], down1[0] ** 2)) - 1.0, 1e-300), 1e300)
    up: dict[Any, Any] = {1: up1}
    down: dict[Any, Any] = {1: down1}

    def law(m: int, memo: dict[Any, Any], spread: bool) -> Law:
        if m not in memo:
            h = m // 2  # halves: at most two distinct sizes per level, n and n + 1
            memo[m] = _combine(law(h, memo, spread), law(m - h, memo, spread), h, m - h, var, spread)
        result: tuple[np.ndarray, np.ndarray] = memo[m]
        return result

    return law(steps, up, True), inf, law(steps, down, False)


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
def _laws(family: str, d: float, steps: int) -> Tuple[Law, float, Law]:
    return mean_laws(family, d, steps)


def allocation_sided(family: str, d: float, steps: int) -> _Sided:
    """The one-participation pass over ``steps`` steps of the ``family`` mechanism of shift ``d``."""

    def build(remove: bool, h: float, _tail: float) -> Tuple[Atoms, Atoms]:
        up, inf, down = _laws(family, d, steps)
        return _sides(up, inf, remove), _sides(down, 0.0, remove)

    return _Sided(("random_allocation", family, d, steps), build, steps == 1)


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


def allocation_terms(noise: Any, *, scale: Any, steps: Any, participations: Any, sensitivity: Any) -> list[Any]:
    """The (mechanism, count) terms of one pass of random allocation (``PLD.random_allocation``)."""
    from ._args import _count
    from .mechanisms import _noise_args, gdp_term

    family = getattr(noise, "spec_name", None)
    if family not in ("gaussian", "laplace"):
        raise TypeError("noise must be Gaussian() or Laplace(): random allocation is implemented for these "
                        "families")
    d, _ = _noise_args(scale, sensitivity)
    t = _count(steps, "steps")
    k = _count(participations, "participations")
    if k > t:
        raise ValueError(f"participations must be <= steps, got participations={k} > steps={t}")
    if d > _MAX_SHIFT:
        raise ValueError(f"sensitivity / scale must be <= {_MAX_SHIFT:g} for random allocation, got {d:g} "
                         "(the likelihood ratio of one step would overflow)")
    if k == 1:
        return [(allocation_sided(family, d, t), 1)]
    if k == t:  # every step holds the record: the t-fold composition, exact on both sides
        return [(allocation_sided(family, d, 1), t)]
    # k blocks: t % k of size ceil(t / k), the rest of size floor(t / k).
    small, big = t // k, t // k + 1
    n_big = t % k
    terms = [(_OneSide(allocation_sided(family, d, small), True), k - n_big)]
    if n_big:
        terms.append((_OneSide(allocation_sided(family, d, big), True), n_big))
    if family == "gaussian":
        # The sum of the t outputs: N(k d, t) vs N(0, t), shift k d / sqrt(t) in units of its scale.
        terms.append((_OneSide(gdp_term(k * d / math.sqrt(t)), False), 1))
    return terms
