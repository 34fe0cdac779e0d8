"""Quantiles per group (``"median"``, ``("quantile", levels)``, ``"min"``, ``"max"``) by a noisy binary search
on the release grid, with exact discrete Laplace noise (``docs/aggregate.md``, section 9).

The grid of a column with bounds ``(lo, hi)`` is ``g_i = lo + (hi - lo) i / W``, ``i = 0..W``, ``W = 2**DEPTH``.
Each kept row adds one to the cell ``k(v)``, the smallest ``i`` with ``v <= g_i`` (values clamped), so that
``c(i)``, the number of kept values ``<= g_i``, is a prefix sum of exact integer cell counts: the partial
aggregates of disjoint parts add up. For a level ``q = P / D`` (``D = 2**16``), the quantile is the smallest
``i`` with ``f(i) = D c(i) - P n - R >= 0`` (``n`` the group's kept rows; ``R = D`` for level 0, the minimum,
else 0), and ``f`` is non-decreasing in ``i``. The search halves ``[0, W]`` in ``S = DEPTH + 1`` steps; each
step releases ``f(mid)`` of every group with discrete Laplace noise (Canonne, Kamath and Steinke 2020) and goes
left where the noisy value is ``>= 0``. One row changes ``f`` by at most ``max(P, D - P)``; a unit changes at
most ``Kp`` groups by ``Kc`` rows each, so each step is ``epsilon / S``-DP with ``t`` calibrated to
``S Kp Kc max(P, D - P) / epsilon``, and the ``S`` adaptive steps compose to epsilon-DP (Dwork and Roth 2014).
The decisions compare exact integers: no floating-point decision is made on a released value. The value
released for the final index ``i`` interpolates, inside the cell ``(g_{i-1}, g_i]``, between the search's own
noisy values at ``i - 1`` and ``i`` (post-processing).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._core import aggregation as _cagg
from .aggregations import _base_generator, integer_laplace_t
from .bounding import subkey

#: The quantile aggregates named by a string; ``("quantile", [levels])`` asks for levels.
QUANTILE_NAMES = ("median", "min", "max")
#: The grid has ``2**DEPTH`` cells between the bounds.
DEPTH = 10
CELLS = 1 << DEPTH
#: Levels are rounded to multiples of ``1 / LEVEL_DENOMINATOR`` (the report gives the level used).
LEVEL_DENOMINATOR = 1 << 16
#: Binary-search steps over the ``CELLS + 1`` grid points.
STEPS = DEPTH + 1


def is_quantile(aggregate: str) -> bool:
    """Whether an aggregate name (as in a request) is a quantile."""
    return aggregate in QUANTILE_NAMES or aggregate.startswith("quantile_")


def quantile_requests(item: Any, name: str) -> list[str]:
    """The aggregate names of ``("quantile", levels)``: ``quantile_<level>`` per level, errors naming ``name``."""
    if not (isinstance(item, (tuple, list)) and len(item) == 2 and item[0] == "quantile"):
        raise TypeError(f"{name}: a quantile is asked as ('quantile', [levels]), got {item!r}")
    levels = item[1]
    levels = [levels] if isinstance(levels, (int, float)) and not isinstance(levels, bool) else levels
    if not isinstance(levels, (list, tuple)) or not levels:
        raise TypeError(f"{name}: quantile levels must be a non-empty list of numbers in [0, 1]")
    out = []
    for q in levels:
        if isinstance(q, bool) or not isinstance(q, (int, float, np.floating, np.integer)):
            raise TypeError(f"{name}: quantile levels must be numbers, not {type(q).__name__}")
        if not (0.0 <= float(q) <= 1.0):
            raise ValueError(f"{name}: quantile level {q!r} is outside [0, 1]")
        agg = f"quantile_{float(q)!r}"
        if agg in out:
            raise ValueError(f"{name}: quantile level {q!r} is listed twice")
        out.append(agg)
    return out


def level_numerator(aggregate: str) -> int:
    """``P`` of the level ``P / LEVEL_DENOMINATOR`` of a quantile aggregate (round to nearest)."""
    if aggregate == "median":
        return LEVEL_DENOMINATOR // 2
    if aggregate == "min":
        return 0
    if aggregate == "max":
        return LEVEL_DENOMINATOR
    q = Fraction(float(aggregate[len("quantile_"):]))
    return int(round(q * LEVEL_DENOMINATOR))


def cell_counts(values: np.ndarray, groups: np.ndarray, bounds: tuple[float, float], n_groups: int) -> np.ndarray:
    """The int64 ``(n_groups, CELLS + 1)`` counts of kept rows per group and grid cell ``k(v)``."""
    lo, hi = bounds
    v = np.clip(values, lo, hi)
    k = np.ceil((v - lo) * (CELLS / (hi - lo))).astype(np.int64)
    np.clip(k, 0, CELLS, out=k)
    flat = np.bincount(groups * (CELLS + 1) + k, minlength=n_groups * (CELLS + 1))
    return flat.astype(np.int64).reshape(n_groups, CELLS + 1)


def cell_value(index: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """The midpoint of the cell ``(g_{i-1}, g_i]`` of the grid index ``i`` (``g_0 = lo`` for ``i = 0``)."""
    lo, hi = bounds
    mid = np.maximum(np.asarray(index, dtype=np.float64) - 0.5, 0.0)
    return lo + (hi - lo) * (mid / CELLS)


#: The interpolated position stays this fraction of a cell inside the cell, so that :func:`value_index`
#: recovers the index after rounding.
CELL_MARGIN = 1.0 / 256


def interpolated_value(index: np.ndarray, queried: np.ndarray, released: np.ndarray,
                       bounds: tuple[float, float]) -> np.ndarray:
    """The released value of the search's grid index ``i`` (post-processing of its releases, as returned by
    :func:`noisy_search_released`): inside the cell ``(g_{i-1}, g_i]``, where the line through the search's
    noisy statistics ``y_- < 0`` at ``i - 1`` and ``y_+ >= 0`` at ``i`` crosses 0, the fraction
    ``-y_- / (y_+ - y_-)`` of the cell (linear interpolation of the noisy count within the cell), kept
    ``CELL_MARGIN`` inside it. The cell's midpoint where ``i`` was not queried (``i = W``) or where rounding
    would take the value out of the cell (extreme bounds); ``g_0 = lo`` for ``i = 0``."""
    lo, hi = bounds
    index = np.asarray(index, dtype=np.int64)
    below = (queried == (index - 1)[:, None]) & (index >= 1)[:, None]  # -1 also marks the ended steps
    at = queried == index[:, None]
    y_below = np.where(below, released, 0).sum(axis=1).astype(np.float64)
    y_at = np.where(at, released, 0).sum(axis=1).astype(np.float64)
    both = below.any(axis=1) & at.any(axis=1)
    frac = np.full(index.shape, 0.5)
    frac[both] = -y_below[both] / (y_at[both] - y_below[both])  # y_below < 0 <= y_at: a fraction in (0, 1]
    np.clip(frac, CELL_MARGIN, 1.0 - CELL_MARGIN, out=frac)
    pos = np.maximum(index - 1 + frac, 0.0)
    out = np.asarray(lo + (hi - lo) * (pos / CELLS), dtype=np.float64)
    moved = value_index(out, bounds) != index
    out[moved] = cell_value(index[moved], bounds)
    return out


def value_index(values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """The grid index of released values (the inverse of :func:`interpolated_value` and :func:`cell_value`)."""
    lo, hi = bounds
    return np.ceil((np.asarray(values, dtype=np.float64) - lo) * (CELLS / (hi - lo))).astype(np.int64)


@dataclass(frozen=True)
class QuantilePlan:
    """The calibrated noisy binary search of one quantile aggregate (pure ``epsilon``-DP)."""

    aggregate: str
    epsilon: float  # the share given (pure DP), or sqrt(2 rho) under zCDP
    bounds: tuple[float, float]
    numerator: int  # P of the level P / D
    sensitivity: int  # max(P, D - P) Kc Kp: the L1 change of one step's queries over the groups
    t: Fraction
    rho: float = 0.0  # the zCDP share, when the budget is given in zCDP

    @property
    def components(self) -> dict[Any, Any]:
        """No additive noisy components (the search draws its own noise)."""
        return {}

    @property
    def epsilon_achieved(self) -> float:
        """``S * sensitivity / t`` rounded up: the pure DP the search spends (at most ``epsilon``)."""
        return rounded_up(Fraction(STEPS * self.sensitivity) / self.t)

    @property
    def rho_achieved(self) -> float:
        """The zCDP parameter ``epsilon_achieved**2 / 2`` (rounded up) of a pure DP search; 0 without ``rho``."""
        return rounded_up(Fraction(self.epsilon_achieved) ** 2 / 2) if self.rho > 0 else 0.0

    @property
    def noise(self) -> str:
        return "laplace"

    def describe(self) -> dict[Any, Any]:
        out: dict[Any, Any] = {"aggregate": self.aggregate, "mechanism": "noisy binary search on the grid",
                     "noise": "discrete_laplace", "level": self.numerator / LEVEL_DENOMINATOR,
                     "level_fraction": [self.numerator, LEVEL_DENOMINATOR], "bounds": list(self.bounds),
                     "grid_cells": CELLS, "steps": STEPS, "t": [self.t.numerator, self.t.denominator],
                     "step_sensitivity": self.sensitivity, "epsilon": self.epsilon_achieved, "delta": 0.0}
        if self.rho > 0:
            out.update(rho=self.rho, rho_achieved=self.rho_achieved)
        return out

    def release(self, counts: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """The noisy quantile of each group from its cell counts (one row per group): a point of the grid cell
        the search ends in, interpolated from the search's releases (:func:`interpolated_value`)."""
        cum = np.cumsum(np.asarray(counts, dtype=np.int64).reshape(-1, CELLS + 1), axis=1)
        n = cum[:, -1:] if cum.shape[0] else np.zeros((0, 1), dtype=np.int64)
        d, p = LEVEL_DENOMINATOR, self.numerator
        r = d if p == 0 else 0
        index, queried, released = noisy_search_released(d * cum - (p * n + r), stream_ids, key, self.t)
        return interpolated_value(index, queried, released, self.bounds)


def rounded_up(value: Fraction) -> float:
    """The smallest float ``>= value``."""
    f = float(value)
    return f if Fraction(f) >= value else math.nextafter(f, math.inf)


def pure_epsilon_for_rho(rho: float) -> float:
    """The largest float ``epsilon`` with ``epsilon**2 / 2 <= rho`` (exact check): a pure epsilon-DP part is then
    rho-zCDP (Bun and Steinke 2016)."""
    epsilon = math.nextafter(math.sqrt(2.0 * rho), 0.0)
    while Fraction(epsilon) ** 2 / 2 > Fraction(rho):
        epsilon = math.nextafter(epsilon, 0.0)
    return epsilon


def noisy_search(stat: np.ndarray, stream_ids: np.ndarray, key: bytes, t: Fraction) -> np.ndarray:
    """Per row of ``stat`` (a non-decreasing int64 statistic at grid points ``0..W``), the index the noisy binary
    search ends in: ``ceil(log2(W + 1))`` halvings of ``[0, W]``, each releasing ``stat[g, mid] + Y`` with ``Y``
    discrete Laplace of parameter ``t`` from ``Random(subkey(key, "step<s>")).stream(stream_ids[g])`` and going
    left where the noisy value is ``>= 0`` (exact integer comparisons)."""
    return noisy_search_released(stat, stream_ids, key, t)[0]


def noisy_search_released(stat: np.ndarray, stream_ids: np.ndarray, key: bytes,
                          t: Fraction) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`noisy_search` with what it released: ``(index, points, noisy)``, the final index ``i`` per group and
    the ``(n_groups, steps)`` int64 grid points the active steps queried and their noisy values (``-1`` and 0
    where the group's search had already ended). The noisy values are the search's releases, so any function of
    them is post-processing."""
    n_groups, points = stat.shape
    steps = max(1, (points - 1).bit_length())
    low = np.zeros(n_groups, dtype=np.int64)
    high = np.full(n_groups, points - 1, dtype=np.int64)
    queried = np.full((n_groups, steps), -1, dtype=np.int64)
    released = np.zeros((n_groups, steps), dtype=np.int64)
    ids = np.ascontiguousarray(stream_ids, dtype=np.uint64)
    rows = np.arange(n_groups)
    for step in range(steps):
        mid = (low + high) // 2
        gen = _base_generator(subkey(key, f"step\x00{step}"))
        noisy = np.asarray(_cagg.keyed_laplace_integers(gen, ids, np.ascontiguousarray(stat[rows, mid],
                                                        dtype=np.int64), t.numerator, t.denominator, 0))
        active = low < high
        left = noisy >= 0
        queried[:, step] = np.where(active, mid, -1)
        released[:, step] = np.where(active, noisy, 0)
        high = np.where(active & left, mid, high)
        low = np.where(active & ~left, mid + 1, low)
    return low, queried, released


def plan_quantile(aggregate: str, *, epsilon: float = 0.0, rho: float = 0.0, max_partitions: int,
                  max_contributions: int, bounds: tuple[float, float] | None) -> QuantilePlan:
    """Calibrate the search for its share: ``epsilon`` (pure DP) or ``rho`` (zCDP; the search is then
    ``epsilon``-DP with ``epsilon**2 / 2 <= rho``, hence rho-zCDP, Bun and Steinke 2016)."""
    assert bounds is not None  # the spec requires bounds for a quantile column
    if rho > 0:
        epsilon = pure_epsilon_for_rho(rho)
    p = level_numerator(aggregate)
    sens = max(p, LEVEL_DENOMINATOR - p) * max_contributions * max_partitions
    t = integer_laplace_t(epsilon, STEPS * sens)
    return QuantilePlan(aggregate, epsilon, bounds, p, sens, t, rho)


def error_bound(plan: QuantilePlan, beta: float) -> float:
    """A bound on the rank error, in rows: with probability >= 1 - beta every step's noise is below
    ``t log(2 STEPS / beta)`` in magnitude, and the released grid point ``g`` then has
    ``|D c(g) - P n| <= t log(2 STEPS / beta) + D`` up to the rows in its cell (``docs/aggregate.md``)."""
    return float(plan.t) * math.log(2.0 * STEPS / beta) / LEVEL_DENOMINATOR + 1.0
