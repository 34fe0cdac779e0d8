"""Clamping bounds chosen under differential privacy (``bounds="auto"``): two noisy binary searches per column
on a public grid of signed powers of two, with exact keyed discrete Laplace noise (``docs/aggregate.md``,
section 11).

The grid is ``p_0 < p_1 < ... < p_W`` (``W = 256``): ``p_128 = 0``, ``p_{128 + j} = 2**(j - 65)`` and
``p_{128 - j} = -2**(j - 65)`` for ``j = 1..128``, so ``|p| in [2**-64, 2**63]``. It does not depend on the
data. With ``c(i)`` the number of kept rows (all groups) with a value ``<= p_i`` and ``n`` their number, the
low bound searches the smallest ``i`` with ``c(i) - r >= 0`` and the high bound the smallest ``i`` with
``r - (n - c(i)) >= 0``: the first grid point with at least ``r`` rows at or below it, and the first with at
most ``r`` rows above it. Both statistics are non-decreasing integers in ``i``; one privacy unit changes them
by at most ``Kp Kc`` (its kept rows, section 2), so each of the ``S = 9`` steps with discrete Laplace noise of
parameter ``t >= 2 S Kp Kc / epsilon`` is ``epsilon / (2 S)``-DP and the two searches compose to epsilon-DP
(Dwork and Roth 2014, sequential composition; Canonne, Kamath and Steinke 2020, the discrete Laplace). The
margin ``r = ceil(t log(2 S / beta))``, ``beta = 0.01``, is public: where no row lies, every step's noise is
below it with probability ``1 - beta``, so the search does not wander into empty ranges.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .aggregations import integer_laplace_t
from .bounding import subkey
from .quantiles import noisy_search, pure_epsilon_for_rho, rounded_up

#: Grid points ``p_0 .. p_W`` of the search.
WIDTH = 256
_ZERO = WIDTH // 2
_OFFSET = 65  # p_{128 + j} = 2**(j - 65)
#: The range of the grid, ``(p_0, p_W)``: the bounding of an "auto" column clamps its content hash to it.
GRID_RANGE = (-math.ldexp(1.0, 63), math.ldexp(1.0, 63))
#: Binary-search steps over the ``WIDTH + 1`` points: ceil(log2(257)).
STEPS = 9
#: The failure probability the public margin ``r`` is set for.
MARGIN_BETA = 0.01


def grid_points() -> np.ndarray:
    """The ``WIDTH + 1`` public grid points, increasing (exact powers of two, and 0)."""
    j = np.arange(1, _ZERO + 1)
    pos = np.ldexp(1.0, j - _OFFSET)
    return np.concatenate([-pos[::-1], [0.0], pos])


def grid_cells(values: np.ndarray) -> np.ndarray:
    """For each value, the smallest ``i`` with ``value <= p_i`` (values beyond ``p_0``, ``p_W`` clamped): exact
    comparisons with the exact grid points (binary search), no rounded arithmetic."""
    points = grid_points()
    return np.searchsorted(points, np.clip(np.asarray(values, dtype=np.float64), points[0], points[-1]),
                           side="left").astype(np.int64)


def grid_counts(values: np.ndarray) -> np.ndarray:
    """The int64 counts of ``values`` per grid cell (:func:`grid_cells`), ``WIDTH + 1`` of them."""
    return np.bincount(grid_cells(values), minlength=WIDTH + 1).astype(np.int64)


@dataclass(frozen=True)
class BoundsSearch:
    """The calibrated pair of searches that chooses one column's bounds (pure ``epsilon``-DP)."""

    column: str
    epsilon: float  # the column's share (pure DP), or sqrt(2 rho) under zCDP
    sensitivity: int  # Kp Kc: the change of either statistic by one unit
    t: Fraction
    margin: int  # r
    rho: float = 0.0

    @property
    def epsilon_achieved(self) -> float:
        """``2 S sensitivity / t`` rounded up (at most ``epsilon``)."""
        return rounded_up(Fraction(2 * STEPS * self.sensitivity) / self.t)

    @property
    def rho_achieved(self) -> float:
        """``epsilon_achieved**2 / 2`` rounded up under zCDP; 0 without ``rho``."""
        return rounded_up(Fraction(self.epsilon_achieved) ** 2 / 2) if self.rho > 0 else 0.0

    def statistics(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two searches' statistics at the grid points (one row each): ``c(i) - r`` and ``r - (n - c(i))``."""
        cum = np.cumsum(np.asarray(counts, dtype=np.int64))
        n = int(cum[-1]) if cum.size else 0
        return (cum - self.margin)[None, :], (self.margin - (n - cum))[None, :]

    def search(self, counts: np.ndarray, key: bytes) -> tuple[float, float, int, int]:
        """``(low, high, i_low, i_high)`` from the grid counts of the column's kept rows: the two searches'
        grid indices, and the bounds ``p_{max(a - 1, 0)} < p_{max(b, 1)}`` with ``a <= b`` the indices sorted
        (post-processing; the low bound is the lower end of its cell)."""
        low_stat, high_stat = self.statistics(counts)
        ids = np.zeros(1, dtype=np.uint64)
        i_low = int(noisy_search(low_stat, ids, subkey(key, "low"), self.t)[0])
        i_high = int(noisy_search(high_stat, ids, subkey(key, "high"), self.t)[0])
        a, b = min(i_low, i_high), max(i_low, i_high)
        points = grid_points()
        return float(points[max(a - 1, 0)]), float(points[max(b, 1)]), i_low, i_high

    def describe(self) -> dict[Any, Any]:
        out: dict[Any, Any] = {"mechanism": "noisy binary search on signed powers of two", "noise": "discrete_laplace",
                     "grid": "0 and +-2**k, k = -64..63", "steps_per_bound": STEPS,
                     "t": [self.t.numerator, self.t.denominator], "step_sensitivity": self.sensitivity,
                     "margin_rows": self.margin, "margin_beta": MARGIN_BETA,
                     "epsilon": self.epsilon_achieved, "delta": 0.0}
        if self.rho > 0:
            out.update(rho=self.rho, rho_achieved=self.rho_achieved)
        return out


def plan_bounds_search(column: str, *, epsilon: float = 0.0, rho: float = 0.0, max_partitions: int,
                       max_contributions: int) -> BoundsSearch:
    """Calibrate one column's searches for its share: ``epsilon`` (pure DP) or ``rho`` (zCDP: the searches are
    then ``epsilon``-DP with ``epsilon**2 / 2 <= rho``, Bun and Steinke 2016)."""
    if rho > 0:
        epsilon = pure_epsilon_for_rho(rho)
    sens = max_partitions * max_contributions
    t = integer_laplace_t(epsilon, 2 * STEPS * sens)
    margin = math.ceil(float(t) * math.log(2.0 * STEPS / MARGIN_BETA))
    return BoundsSearch(column, epsilon, sens, t, margin, rho)
