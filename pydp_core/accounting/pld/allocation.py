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
M_{a+b} = (a M_a + b M_b) / (a + b) is a convolution of two independent laws, and after each one the law
is put back on a geometric grid by a mean-preserving spread of each atom onto the two grid points around
it (the dominating chain) or by contracting the atoms of each cell to their mean (the dominated chain).
The convex order is kept by independent sums, so each chain stays on its side at every stage.

With k > 1 participations, a uniform k-subset is a uniformly random partition of the t steps into k
blocks of sizes floor(t/k) or ceil(t/k) followed by one uniform step in each block (the law of the subset
is invariant under permutations of the steps, hence uniform); revealing the partition is a refinement,
so the pass is dominated by the composition of k one-participation passes over the blocks (Feldman and
Shenfeld 2025). The lower side for k > 1 is a post-processing of the true output: for the Gaussian, the
sum of all t outputs, a Gaussian mechanism with shift k d / sqrt(t); other families get the trivial
lower side (no loss).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Tuple

import numpy as np
from scipy import special as sps

from .sided import Atoms, _Sided

__all__ = ["allocation_sided", "mean_laws"]

_STEP = 5e-3  # grid step of log M in the convolution chains
_PRUNE = 1e-30  # atoms below this mass are merged (a spread onto the ends / a contraction)
_TAIL = 1e-17  # P- and Q-mass of the single-step law left to the exact tail atoms
_CHUNK = 1 << 21  # pairs per block of the convolution

Law = Tuple[np.ndarray, np.ndarray]  # (values of M, Q-masses), values sorted


def _gauss_between(xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """N(0, 1)-mass of (xa, xb], from the tail on the far side of 0 (no cancellation)."""
    return np.where(xa > 0.0, sps.ndtr(-xa) - sps.ndtr(-xb), sps.ndtr(xb) - sps.ndtr(xa))


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
    n = max(int(math.ceil((hi - lo) / step)), 1)
    cuts = lo + (hi - lo) * np.arange(n + 1) / n
    x = (cuts + d * d / 2.0) / d
    q = _gauss_between(x[:-1], x[1:])
    p = _gauss_between(x[:-1] - d, x[1:] - d)
    q_lo, p_lo = float(sps.ndtr(x[0])), float(sps.ndtr(x[0] - d))
    q_hi, p_hi = float(sps.ndtr(-x[-1])), float(sps.ndtr(-(x[-1] - d)))
    g = np.exp(cuts)
    up = np.clip((p - q * g[:-1]) / (g[1:] - g[:-1]), 0.0, q)
    w = np.zeros(n + 2)  # on the grid 0, g_0, ..., g_n
    w[1:-1] += q - up
    w[2:] += up
    first = min(p_lo / g[0], q_lo)
    w[1] += first
    w[0] += q_lo - first + q_hi
    grid = np.concatenate(([0.0], g))
    keep = q > 0.0
    lo_v = np.concatenate(([p_lo / q_lo], p[keep] / q[keep], [p_hi / q_hi]))
    lo_w = np.concatenate(([q_lo], q[keep], [q_hi]))
    order = np.argsort(lo_v, kind="stable")
    return (grid, w), p_hi, (lo_v[order], lo_w[order])


def _pairs(a: Law, b: Law, ma: int, mb: int):
    """Blocks (z, w) of the law of (ma A + mb B) / (ma + mb), A, B independent."""
    va, wa = a
    vb, wb = b
    m = float(ma + mb)
    rows = max(1, _CHUNK // max(vb.size, 1))
    for s in range(0, va.size, rows):
        z = (ma * va[s:s + rows, None] + mb * vb[None, :]) / m
        yield z.ravel(), (wa[s:s + rows, None] * wb[None, :]).ravel()


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


def _grid(zmin: float, zmax: float, step: float) -> np.ndarray:
    """0, then a geometric grid from zmin to zmax (ratio at most e^step)."""
    if not zmax > zmin * (1.0 + 1e-12):
        return np.array([0.0, zmin, zmin * (1.0 + 1e-9) + 1e-300])
    n = max(int(math.ceil(math.log(zmax / zmin) / step)), 1)
    g = np.exp(math.log(zmin) + (math.log(zmax) - math.log(zmin)) * np.arange(n + 1) / n)
    g[0], g[-1] = zmin, max(zmax, g[-1])
    return np.concatenate(([0.0], g))


def _combine_up(a: Law, b: Law, ma: int, mb: int, step: float) -> Law:
    """The dominating chain: the convolution, each atom spread onto its two grid points (mean kept)."""
    grid = _grid(*_span(a, b, ma, mb), step)
    out = np.zeros(grid.size)
    for z, w in _pairs(a, b, ma, mb):
        i = np.clip(np.searchsorted(grid, z, side="right") - 1, 0, grid.size - 2)
        lo, hi = grid[i], grid[i + 1]
        up = np.clip((z - lo) / (hi - lo), 0.0, 1.0) * w
        out += np.bincount(i, weights=w - up, minlength=grid.size)
        out += np.bincount(i + 1, weights=up, minlength=grid.size)
    keep = out > 0.0
    return _prune_up(grid[keep], out[keep])


def _combine_down(a: Law, b: Law, ma: int, mb: int, step: float) -> Law:
    """The dominated chain: the convolution, the atoms of each grid cell contracted to their mean."""
    grid = _grid(*_span(a, b, ma, mb), step)
    mass = np.zeros(grid.size)
    moment = np.zeros(grid.size)
    for z, w in _pairs(a, b, ma, mb):
        i = np.clip(np.searchsorted(grid, z, side="right") - 1, 0, grid.size - 2)
        mass += np.bincount(i, weights=w, minlength=grid.size)
        moment += np.bincount(i, weights=w * z, minlength=grid.size)
    keep = mass > 0.0
    v = moment[keep] / mass[keep]
    return _prune_down(v, mass[keep])


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


def mean_laws(d: float, steps: int, step: float = _STEP) -> Tuple[Law, float, Law]:
    """(dominating law, its P-mass at +inf, dominated law) of M_steps for the Gaussian step of shift d."""
    up1, inf, down1 = _base_gaussian(d, step)
    up: dict = {1: up1}
    down: dict = {1: down1}

    def law(m: int, memo: dict, combine) -> Law:
        if m not in memo:
            h = m // 2 if m % 2 == 0 else m - 1
            memo[m] = combine(law(h, memo, combine), law(m - h, memo, combine), h, m - h, step)
        return memo[m]

    return law(steps, up, _combine_up), inf, law(steps, down, _combine_down)


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
def _laws(d: float, steps: int) -> Tuple[Law, float, Law]:
    return mean_laws(d, steps)


def allocation_sided(d: float, steps: int) -> _Sided:
    """The one-participation pass over ``steps`` steps of the Gaussian mechanism of shift ``d``."""

    def build(remove: bool, h: float, _tail: float) -> Tuple[Atoms, Atoms]:
        up, inf, down = _laws(d, steps)
        return _sides(up, inf, remove), _sides(down, 0.0, remove)

    return _Sided(("random_allocation", "gaussian", d, steps), build, steps == 1)


class _OneSide:
    """A mechanism that keeps one side of another and takes the identity (no loss) on the other: the
    dominating side of a bound that has no matching dominated side, or the reverse."""

    def __init__(self, inner, pessimistic: bool) -> None:
        from .mechanisms import identity_term

        self.inner, self.pessimistic, self._identity = inner, pessimistic, identity_term()
        self.symmetric = inner.symmetric

    def key(self) -> tuple:
        return ("one_side", self.pessimistic, self.inner.key())

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True):
        from ..._core import accounting as _acc

        inner = self.inner.discretise(remove, h, tail, composed)
        ident = self._identity.discretise(remove, h, tail, composed)
        return _acc.pld_sides(inner, ident) if self.pessimistic else _acc.pld_sides(ident, inner)


def allocation_terms(noise, *, scale, steps, participations, sensitivity) -> list:
    """The (mechanism, count) terms of one pass of random allocation (``PLD.random_allocation``)."""
    from ..._validation import check_positive
    from ...noise import Gaussian
    from ._args import _count, _scalar
    from .mechanisms import gdp_term

    if not isinstance(noise, Gaussian):
        raise TypeError("noise must be Gaussian(): random allocation is implemented for the Gaussian family")
    s = _scalar(scale, "scale", check_positive)
    sens = _scalar(sensitivity, "sensitivity", check_positive)
    t = _count(steps, "steps")
    k = _count(participations, "participations")
    if k > t:
        raise ValueError(f"participations must be <= steps, got participations={k} > steps={t}")
    d = sens / s
    if not (math.isfinite(d) and d > 0.0):
        raise ValueError("sensitivity / scale must be finite and > 0")
    if k == 1:
        return [(allocation_sided(d, t), 1)]
    # k blocks: t % k of size ceil(t / k), the rest of size floor(t / k).
    small, big = t // k, t // k + 1
    n_big = t % k
    terms = [(_OneSide(allocation_sided(d, small), True), k - n_big)]
    if n_big:
        terms.append((_OneSide(allocation_sided(d, big), True), n_big))
    # The sum of the t outputs: N(k d, t) vs N(0, t), shift k d / sqrt(t) in units of its scale.
    terms.append((_OneSide(gdp_term(k * d / math.sqrt(t)), False), 1))
    return terms
