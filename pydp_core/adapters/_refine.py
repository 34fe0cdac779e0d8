"""The tightest certified answer of a PLD: refine its grid until the interval is narrow enough."""
from __future__ import annotations

import math
from typing import Any, Callable

from ..accounting.pld import PLD, Interval

#: Default width of a certified epsilon interval, and relative width of a delta interval.
EPSILON_TOLERANCE = 1e-5
DELTA_RTOL = 1e-3
#: Halvings of the automatic grid step at most (each costs about twice the previous query).
MAX_HALVINGS = 4


def refined(pld: PLD, query: Callable[[PLD], Interval], narrow_enough: Callable[[Interval], bool]) -> Interval:
    """``query(pld)`` with the loss grid halved until ``narrow_enough`` (or :data:`MAX_HALVINGS` times).

    Every grid gives a certified interval, so the intersection of all of them is certified too. The
    refinement stops early when a halving no longer narrows the interval by a third (the remaining
    width then comes from the truncated tails, not from the grid).
    """
    iv = query(pld)
    lower, upper = iv.lower, iv.upper
    for _ in range(MAX_HALVINGS):
        if narrow_enough(Interval(lower, upper)) or not math.isfinite(upper):
            break
        pld = pld.with_discretization(value_step=pld.value_step / 2, tail_mass=pld._tail_mass)
        nxt = query(pld)
        before = upper - lower
        lower, upper = max(lower, nxt.lower), min(upper, nxt.upper)
        if upper - lower > before * (2.0 / 3.0):
            break
    return Interval(lower, upper)


def epsilon_of(pld: PLD, delta: float, tolerance: Any = None) -> Interval:
    """Certified epsilon(delta), refined to width ``tolerance`` (default :data:`EPSILON_TOLERANCE`)."""
    tol = EPSILON_TOLERANCE if tolerance is None else float(tolerance)
    return refined(pld, lambda p: p.epsilon(delta), lambda iv: iv.upper - iv.lower <= tol)


def delta_of(pld: PLD, epsilon: float, rtol: Any = None) -> Interval:
    """Certified delta(epsilon), refined to relative width ``rtol`` (default :data:`DELTA_RTOL`)."""
    r = DELTA_RTOL if rtol is None else float(rtol)
    return refined(pld, lambda p: p.delta(epsilon), lambda iv: iv.upper - iv.lower <= r * iv.upper)
