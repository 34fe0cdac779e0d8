"""The curves a PLD certifies, from the composed bounds of its neighbour orders.

delta(epsilon) and epsilon(delta) are read off each order's bounds by the kernels
(``PldBounds.delta``, ``PldBounds.epsilon``) and maximised over the orders (``PLD._combine``); here are
the curves that need more than that: the trade-off function beta(alpha) by Neyman-Pearson duality over
both orders, and the certified GDP parameter mu, a bracket of the smallest mu whose profile dominates the
certified privacy profile above a floor. ``PLD.tradeoff`` and ``PLD.mu`` document them and delegate here.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ..._core import accounting as _acc
from ..._validation import check_delta, check_positive
from ._args import _scalar
from .interval import Interval


def _check_width(iv: Interval, tolerance: Any, value_step: float) -> Interval:
    """``iv`` if ``tolerance`` is None or ``iv`` is at most that wide; else a ValueError naming the grid."""
    if tolerance is None:
        return iv
    tol = _scalar(tolerance, "tolerance", check_positive)
    width = np.max(np.subtract(iv.upper, iv.lower))
    if not width <= tol:
        raise ValueError(f"value_step {value_step:.3g} is too coarse for tolerance {tol:g}: the interval "
                         f"is {width:.3g} wide; pass a smaller value_step to with_discretization()")
    return iv


def _tradeoff(bounds: Sequence[Any], alpha: np.ndarray) -> tuple[Any, ...]:
    """(lower, upper) bounds on beta(alpha) over both neighbour orders (flat ``alpha``): the smaller of the
    trade-off functions of the pair and of its reverse (``bounds``: one order if they coincide, else two)."""
    pq, qp = bounds[0], bounds[-1]
    lo1, up1 = _acc.pld_tradeoff(pq, qp, alpha)
    lo2, up2 = _acc.pld_tradeoff(qp, pq, alpha)
    return np.minimum(lo1, lo2), np.minimum(up1, up2)


def _mu(pld: Any, delta_floor: Any) -> Interval:
    """The certified bracket of ``PLD.mu`` (see there), from the PLD's certified privacy profile."""
    from scipy import special as _special

    from ..gdp import gdp_delta

    floor = _scalar(delta_floor, "delta_floor", lambda v, n: check_delta(v, n, allow_zero=False))
    if not floor < 0.01:
        raise ValueError(f"delta_floor must lie in (0, 0.01), got {floor}")
    top = pld.epsilon(floor)
    finite = math.isfinite(top.upper)
    # A little beyond epsilon(floor).upper, so that the upper profile is below the floor at the end.
    if finite:
        end = top.upper * (1.0 + 1e-9) + 1e-12
    else:  # no upper bound; the grid only looks for witnesses
        end = max(4.0 * top.lower, 1.0) if math.isfinite(top.lower) else 100.0
    grid = np.linspace(0.0, end, 8193)
    prof = pld.delta(grid)
    up, lo = np.asarray(prof.upper), np.asarray(prof.lower)

    def gdp(m: float) -> np.ndarray:
        return np.asarray(gdp_delta(m, epsilon=grid), dtype=float)

    x = np.exp(np.minimum(grid, 700.0))  # x = e^eps: both profiles are convex in x
    # The profile's rounding allowance (64 ulps of its suffix sums A, C and its mass at +inf) steps down
    # between grid cells and so may lift it above its chord: by at most 5e-14 in all, and on
    # [e_j, e_{j+1}] by at most 64 u (2 A + inf) with A <= P(L > e_j) <= delta(e_{j-1}) / (1 - e^{-step})
    # (delta(e) >= (1 - e^{e - e'}) P(L > e') for e' > e), which is far smaller in the tail.
    step = grid[1] - grid[0]
    local = 2.0 * 3.0 * 64.0 * 2.0**-53 * up[:-2] / -math.expm1(-step)
    allowance = np.minimum(5e-14, np.concatenate(([5e-14], local)))

    def dominated(m: float) -> bool:
        g = gdp(m) * (1.0 - 1e-12)
        if not up[-1] <= floor:
            return False
        # On [e_j, e_{j+1}] any of these suffices: (a) upper delta(e_j) <= max(delta_mu(e_{j+1}), floor)
        # (both decrease); (b) the chord of the upper profile in x lies below the tangent of delta_mu at
        # x_{j+1}, checked at both ends (the profile is below its chord, delta_mu above its tangent;
        # d delta_mu / dx = -Phi(-eps / mu - mu / 2)), which is second order in the grid step.
        first = up[:-1] <= np.maximum(g[1:], floor)
        if m > 0.0:
            slope = _special.ndtr(-grid[1:] / m - m / 2.0) * (1.0 - 1e-12)
            with np.errstate(invalid="ignore", over="ignore"):
                tangent = g[1:] + slope * (x[1:] - x[:-1])
            second = (up[:-1] + allowance <= tangent) & (up[1:] + allowance <= g[1:]) & (grid[1:] < 700.0)
            first = first | second
        return bool(np.all(first))

    def witnessed(m: float) -> bool:
        g = gdp(m)
        return bool(np.any(lo > np.maximum(g * (1.0 + 1e-12), floor)))

    upper = _smallest_dominating(dominated) if finite else math.inf
    lower = _largest_witnessed(witnessed, upper)
    return Interval(lower, max(upper, lower))


def _boundary(holds: Callable[[float], bool], a: float, b: float) -> float:
    """Where ``holds`` changes on [a, b] (``holds(a) != holds(b)``), by bisection to ~1e-10 relative."""
    while b - a > 1e-10 * b + 1e-300:
        mid = 0.5 * (a + b)
        if holds(mid) == holds(a):
            a = mid
        else:
            b = mid
    return b if holds(b) else a


def _smallest_dominating(dominated: Callable[[float], bool]) -> float:
    """The upper end of ``_mu``: the smallest mu found by doubling then bisection whose GDP profile
    dominates the upper profile (inf if none up to 1e6)."""
    b = 1.0
    while not dominated(b) and b < 1e6:
        b *= 2.0
    if not dominated(b):
        return math.inf
    return _boundary(dominated, 0.0, b) if not dominated(0.0) else 0.0


def _largest_witnessed(witnessed: Callable[[float], bool], upper: float) -> float:
    """The lower end of ``_mu``: the largest mu whose GDP profile the lower profile exceeds somewhere (0 if
    none), searched from ``upper`` (or 1) by doubling then bisection."""
    if not witnessed(0.0):
        return 0.0
    b = upper if math.isfinite(upper) else 1.0
    while witnessed(b) and b < 1e6:
        b *= 2.0
    return _boundary(witnessed, 0.0, b) if not witnessed(b) else b
