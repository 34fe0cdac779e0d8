"""The noisy aggregates: sensitivities, exact discrete noise, estimators and confidence intervals.

Neighbouring data sets differ by all the rows of one privacy unit (add/remove). After bounding
(:mod:`~pydp_core.aggregation.bounding`) one unit touches at most ``Kp = max_partitions`` groups and
at most ``Kc = max_contributions`` rows in each, with values clamped to ``[L, U]``; write
``M = max(|L|, |U|)``, ``m = (L + U) / 2`` and ``h = (U - L) / 2``. The per-group sensitivities are

============================  =========================================  =====================
quantity per group            what one unit changes it by                noise
============================  =========================================  =====================
rows (``count``)              ``Kc``                                     integer
units (``privacy_id_count``)  ``1``                                      integer
``sum`` of clamped values     ``Kc M``                                   grid
centred sum ``sum(x - m)``    ``Kc h``                                   grid
``sum((x - m)^2 - h^2 / 2)``  ``Kc h^2 / 2``                             grid
============================  =========================================  =====================

and over the ``Kp`` groups the l1 sensitivity is ``Kp`` times as large. Every noisy quantity is pure
epsilon-DP (docs/aggregate.md, section 3): integer quantities get discrete Laplace noise with ``Kp s / t
<= epsilon`` checked in exact rational arithmetic; real quantities are released on a power-of-two grid
by :func:`pydp_core.release.calibrate_laplace_release` at ``epsilon / Kp`` per group with the
rounding charged, and the Kp groups compose to epsilon. ``mean`` splits its share evenly between a
noisy row count and a noisy centred sum, ``variance`` in thirds with the centred sum of squares.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from .._core import aggregation as _cagg
from ..random import Random
from ..release import GridRelease, calibrate_laplace_release, discrete_gaussian_log_cdf
from ..release.plans import _GAUSS_MAX_BITS, DEFAULT_GRID_BITS, _grid_exponent, _grid_shift
from ..release.samplers import MAX_LAPLACE_T, MAX_PARAM

#: The aggregates ``aggregations`` may ask for, per column.
AGGREGATES = ("count", "privacy_id_count", "count_distinct", "sum", "mean", "variance")
#: The aggregates that need numeric values and ``bounds``.
VALUE_AGGREGATES = ("sum", "mean", "variance")
#: Each aggregate's noisy components and the share of the aggregate's epsilon each receives.
COMPONENTS = {
    "count": ("rows",),
    "privacy_id_count": ("units",),
    "count_distinct": ("distinct",),
    "histogram": ("bins",),
    "sum": ("sum",),
    "mean": ("rows", "centred_sum"),
    "variance": ("rows", "centred_sum", "centred_squares"),
}
_T_DENOMINATOR = 1 << 20  # the integer noise parameter t is a multiple of 2**-20, rounded up


def split_epsilon(epsilon: float, weights: Sequence[float]) -> list[float]:
    """``epsilon * w_i / sum(w)`` as floats whose exact sum is at most ``epsilon`` (rounded down).

    Floating-point shares can add up to one ulp more than ``epsilon``; each share is lowered by one ulp
    until the exact rational sum fits, so the composed budget never exceeds the total.
    """
    total = math.fsum(weights)
    shares = [epsilon * w / total for w in weights]
    limit = Fraction(epsilon)
    while sum(Fraction(s) for s in shares) > limit:
        shares = [math.nextafter(s, 0.0) for s in shares]
    return shares


def _half_width_steps(t: Fraction, alpha: float) -> int:
    """The smallest m >= 0 with P(|Y| > m) <= alpha for Y ~ discrete Laplace(t).

    P(|Y| > m) = 2 q^(m+1) / (1 + q) with q = exp(-1/t), compared in log space.
    """
    tf = float(t)
    log_q = -1.0 / tf
    log_c = math.log(2.0) - math.log1p(math.exp(log_q))
    log_alpha = math.log(alpha)

    def ok(m: int) -> bool:
        return log_c + (m + 1) * log_q <= log_alpha

    m = max(0, math.ceil((log_alpha - log_c) / log_q) - 1)
    while not ok(m):
        m += 1
    while m > 0 and ok(m - 1):
        m -= 1
    return m


def _dlaplace_std(t: Fraction) -> float:
    """The standard deviation of the discrete Laplace law: sqrt(2 q) / (1 - q), q = exp(-1/t)."""
    q = math.exp(-1.0 / float(t))
    return math.sqrt(2.0 * q) / -math.expm1(-1.0 / float(t))


def _base_generator(key: bytes) -> Any:
    """The C++ generator of ``Random(key)``, whose ``spawn(i)`` is ``Random(key).stream(i)``."""
    return Random(key, threads=1).kernel


@dataclass(frozen=True)
class IntegerNoise:
    """Discrete Laplace noise ``P(y) ~ exp(-|y| / t)`` added to an integer quantity (pure DP)."""

    epsilon: float
    sensitivity: int  # per group
    l1_sensitivity: int  # over the Kp groups of one unit
    t: Fraction

    def draw(self, values: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """``values[j]`` plus the noise of ``Random(key).stream(stream_ids[j])`` (one draw per group)."""
        x = np.ascontiguousarray(values, dtype=np.int64)
        ids = np.ascontiguousarray(stream_ids, dtype=np.uint64)
        return _cagg.keyed_laplace_integers(_base_generator(key), ids, x, self.t.numerator, self.t.denominator, 0)

    def half_width(self, alpha: float) -> float:
        return float(_half_width_steps(self.t, alpha))

    def describe(self) -> dict[Any, Any]:
        return {
            "noise": "discrete_laplace", "epsilon": self.epsilon, "delta": 0.0,
            "sensitivity_per_partition": self.sensitivity, "l1_sensitivity": self.l1_sensitivity,
            "t": str(self.t), "scale": float(self.t), "std": _dlaplace_std(self.t), "grid": 1.0,
        }


@dataclass(frozen=True)
class GridNoise:
    """A real quantity released on the grid of ``plan`` (exact discrete Laplace noise in grid steps)."""

    epsilon: float
    sensitivity: float  # per group
    l1_sensitivity: float
    plan: GridRelease

    @property
    def grid_exponent(self) -> int:
        return self.plan.grid_exponent

    def draw(self, values: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """The grid release of ``values[j]`` with the noise of ``Random(key).stream(stream_ids[j])``."""
        x = np.ascontiguousarray(values, dtype=np.float64)
        ids = np.ascontiguousarray(stream_ids, dtype=np.uint64)
        p = self.plan.parameter
        return _cagg.keyed_laplace_release(
            _base_generator(key), ids, x, p.numerator, p.denominator, self.plan.grid_exponent, 0
        )

    def half_width(self, alpha: float) -> float:
        # |Y| <= m steps with probability >= 1 - alpha, plus half a step of rounding of the true value.
        return (_half_width_steps(self.plan.parameter, alpha) + 0.5) * self.plan.grid

    def describe(self) -> dict[Any, Any]:
        t = self.plan.parameter
        return {
            "noise": "discrete_laplace_on_grid", "epsilon": self.epsilon, "delta": 0.0,
            "sensitivity_per_partition": self.sensitivity, "l1_sensitivity": self.l1_sensitivity,
            "t": str(t), "scale": self.plan.scale, "std": _dlaplace_std(t) * self.plan.grid,
            "grid": self.plan.grid,
        }


def integer_laplace_t(epsilon: float, shift: int) -> Fraction:
    """The smallest multiple t of 2**-20 with ``shift / t <= epsilon`` (exact rational check)."""
    eps = Fraction(epsilon)
    if eps <= 0:
        raise ValueError("epsilon must be > 0 for a noisy count")
    t = Fraction(-((-shift * _T_DENOMINATOR * eps.denominator) // eps.numerator), _T_DENOMINATOR)
    if not Fraction(shift) / t <= eps:
        raise ArithmeticError("discrete Laplace calibration could not be verified")
    if t >= MAX_LAPLACE_T:
        raise ValueError(f"epsilon = {epsilon!r} is too small for a noisy count (t would exceed 2**40)")
    return t


@lru_cache(maxsize=256)
def integer_noise(epsilon: float, sensitivity: int, max_partitions: int) -> IntegerNoise:
    """Discrete Laplace noise for an integer quantity changed by ``sensitivity`` in ``max_partitions`` groups."""
    l1 = sensitivity * max_partitions
    return IntegerNoise(epsilon, sensitivity, l1, integer_laplace_t(epsilon, l1))


@lru_cache(maxsize=256)
def grid_noise(epsilon: float, sensitivity: float, max_partitions: int) -> GridNoise:
    """Grid noise at ``epsilon / max_partitions`` per group (composed over the groups, at most epsilon)."""
    per_group = split_epsilon(epsilon, [1.0] * max_partitions)[0]
    plan = calibrate_laplace_release(epsilon=per_group, sensitivity=sensitivity)
    return GridNoise(epsilon, sensitivity, sensitivity * max_partitions, plan)


# -- Gaussian noise (zCDP) ---------------------------------------------------------------------------------
# One unit changes at most Kp groups, each by an integer shift of at most k grid steps (counts: k = the
# per-group sensitivity; grid sums: k = floor(s / g) + 1 with the rounding charged), so the integer shift
# vector over all groups has squared l2 norm at most Kp k^2. Independent discrete Gaussians of variance
# parameter sigma2 (grid steps squared) per group are then (Kp k^2 / (2 sigma2))-zCDP (Canonne, Kamath and
# Steinke 2020; docs/aggregate.md, section 4).
def _sigma2_for(l2_squared: int, rho: float, what: str) -> Fraction:
    """The smallest multiple sigma2 of 2**-20 with ``l2_squared / (2 sigma2) <= rho`` (exact check)."""
    r = Fraction(rho)
    if r <= 0:
        raise ValueError("rho must be > 0 for Gaussian noise")
    exact = Fraction(l2_squared) / (2 * r)
    sigma2 = Fraction(-((-exact.numerator * _T_DENOMINATOR) // exact.denominator), _T_DENOMINATOR)
    if not Fraction(l2_squared) / (2 * sigma2) <= r:
        raise ArithmeticError("discrete Gaussian calibration could not be verified")
    if sigma2.numerator > MAX_PARAM or sigma2.denominator > MAX_PARAM:
        raise ValueError(f"the budget of {what} is too small for Gaussian noise (sigma^2 beyond the exact sampler's "
                         "range: n / d with n, d <= 2**62)")
    return sigma2


def _dgauss_std(sigma2: Fraction) -> float:
    """The standard deviation of the discrete Gaussian N_Z(0, sigma2): summed exactly enough below sigma = 1000,
    sigma above (the difference is below exp(-2 pi^2 sigma^2) relative, Canonne et al. 2020)."""
    s2 = float(sigma2)
    if s2 >= 1e6:
        return math.sqrt(s2)
    y = np.arange(0, math.ceil(40.0 * math.sqrt(s2)) + 2, dtype=np.float64)
    w = np.exp(-y * y / (2.0 * s2))
    w[1:] *= 2.0
    return math.sqrt(float(np.sum(w * y * y) / np.sum(w)))


def _dgauss_half_width_steps(sigma2: Fraction, alpha: float) -> int:
    """The smallest m >= 0 with P(|Y| > m) = 2 P(Y <= -m - 1) <= alpha for Y ~ N_Z(0, sigma2) (exact log cdf)."""
    from scipy.special import ndtri

    log_alpha = math.log(alpha / 2.0)

    def ok(m: int) -> bool:
        return discrete_gaussian_log_cdf(-m - 1, sigma2) <= log_alpha

    m = max(0, int(math.sqrt(float(sigma2)) * float(ndtri(1.0 - alpha / 2.0))))
    while not ok(m):
        m += 1
    while m > 0 and ok(m - 1):
        m -= 1
    return m


@dataclass(frozen=True)
class GaussianNoise:
    """Discrete Gaussian noise ``P(y) ~ exp(-y^2 / (2 sigma2))`` added to an integer quantity (zCDP)."""

    rho: float
    sensitivity: int  # per group
    l2_squared: int  # Kp sensitivity^2: the squared l2 sensitivity over the groups of one unit
    sigma2: Fraction

    @property
    def rho_achieved(self) -> float:
        return float(Fraction(self.l2_squared) / (2 * self.sigma2))

    def draw(self, values: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """``values[j]`` plus the noise of ``Random(key).stream(stream_ids[j])`` (one draw per group)."""
        x = np.ascontiguousarray(values, dtype=np.int64)
        ids = np.ascontiguousarray(stream_ids, dtype=np.uint64)
        s = self.sigma2
        return _cagg.keyed_gaussian_integers(_base_generator(key), ids, x, s.numerator, s.denominator, 0)

    def half_width(self, alpha: float) -> float:
        return float(_dgauss_half_width_steps(self.sigma2, alpha))

    def describe(self) -> dict[Any, Any]:
        return {
            "noise": "discrete_gaussian", "rho": self.rho, "rho_achieved": self.rho_achieved,
            "sensitivity_per_partition": self.sensitivity, "l2_sensitivity": math.sqrt(self.l2_squared),
            "sigma2": str(self.sigma2), "scale": math.sqrt(float(self.sigma2)), "std": _dgauss_std(self.sigma2),
            "grid": 1.0,
        }


@dataclass(frozen=True)
class GaussianGridNoise:
    """A real quantity released on the grid 2**grid_exponent with exact discrete Gaussian noise (zCDP)."""

    rho: float
    sensitivity: float  # per group, in data units
    max_partitions: int
    grid_exponent: int
    shift: int  # per group, in grid steps, rounding charged
    sigma2: Fraction  # grid steps squared

    @property
    def grid(self) -> float:
        return math.ldexp(1.0, self.grid_exponent)

    @property
    def rho_achieved(self) -> float:
        return float(Fraction(self.max_partitions * self.shift * self.shift) / (2 * self.sigma2))

    def draw(self, values: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """The grid release of ``values[j]`` with the noise of ``Random(key).stream(stream_ids[j])``."""
        x = np.ascontiguousarray(values, dtype=np.float64)
        ids = np.ascontiguousarray(stream_ids, dtype=np.uint64)
        s = self.sigma2
        return _cagg.keyed_gaussian_release(
            _base_generator(key), ids, x, s.numerator, s.denominator, self.grid_exponent, 0
        )

    def half_width(self, alpha: float) -> float:
        return (_dgauss_half_width_steps(self.sigma2, alpha) + 0.5) * self.grid

    def describe(self) -> dict[Any, Any]:
        return {
            "noise": "discrete_gaussian_on_grid", "rho": self.rho, "rho_achieved": self.rho_achieved,
            "sensitivity_per_partition": self.sensitivity,
            "l2_sensitivity": self.sensitivity * math.sqrt(self.max_partitions), "shift_steps": self.shift,
            "sigma2": str(self.sigma2), "scale": math.sqrt(float(self.sigma2)) * self.grid,
            "std": _dgauss_std(self.sigma2) * self.grid, "grid": self.grid,
        }


@lru_cache(maxsize=256)
def gaussian_integer_noise(rho: float, sensitivity: int, max_partitions: int) -> GaussianNoise:
    """Discrete Gaussian noise for an integer quantity changed by ``sensitivity`` in ``max_partitions`` groups."""
    l2sq = max_partitions * sensitivity * sensitivity
    return GaussianNoise(rho, sensitivity, l2sq, _sigma2_for(l2sq, rho, "a noisy count"))


@lru_cache(maxsize=256)
def gaussian_grid_noise(rho: float, sensitivity: float, max_partitions: int) -> GaussianGridNoise:
    """Discrete Gaussian grid noise for a real quantity changed by ``sensitivity`` in ``max_partitions`` groups.

    The grid follows the continuous scale ``sqrt(Kp) s / sqrt(2 rho)`` as in
    :func:`pydp_core.release.calibrate_gaussian_release`; sigma2 is an integer number of steps squared.
    """
    scale = sensitivity * math.sqrt(max_partitions) / math.sqrt(2.0 * rho)
    e = _grid_exponent(scale, sensitivity, DEFAULT_GRID_BITS, _GAUSS_MAX_BITS)
    k = _grid_shift(sensitivity, e)
    exact = Fraction(max_partitions * k * k) / (2 * Fraction(rho))
    sigma2 = Fraction(-((-exact.numerator) // exact.denominator))
    if not Fraction(max_partitions * k * k) / (2 * sigma2) <= Fraction(rho) or sigma2 > MAX_PARAM:
        raise ValueError("the budget of a noisy sum is too small for Gaussian noise")
    return GaussianGridNoise(rho, sensitivity, max_partitions, e, k, sigma2)


@dataclass(frozen=True)
class AggregatePlan:
    """The calibrated noise of one aggregate: its components and their noise."""

    aggregate: str
    epsilon: float  # the share of a Laplace plan (pure DP); 0.0 for a Gaussian plan
    bounds: tuple[float, float] | None
    components: dict[Any, Any]
    rho: float = 0.0  # the share of a Gaussian plan (zCDP); 0.0 for a Laplace plan

    @property
    def noise(self) -> str:
        return "gaussian" if self.rho > 0 else "laplace"

    @property
    def rho_achieved(self) -> float:
        """The zCDP parameter the Gaussian components spend (at most ``rho``)."""
        return math.fsum(c.rho_achieved for c in self.components.values()) if self.rho > 0 else 0.0

    def describe(self) -> dict[Any, Any]:
        out: dict[Any, Any] = {"aggregate": self.aggregate, "noise": self.noise}
        if self.rho > 0:
            out.update(rho=self.rho, rho_achieved=self.rho_achieved)
        else:
            out.update(epsilon=self.epsilon, delta=0.0)
        if self.bounds is not None:
            out["bounds"] = list(self.bounds)
        out["components"] = {name: noise.describe() for name, noise in self.components.items()}
        return out


def component_bound(name: str, bounds: tuple[float, float]) -> float:
    """The largest |term| of one row for a grid component: M, h or h^2 / 2."""
    lo, hi = bounds
    h = (hi - lo) / 2.0
    return {"sum": max(abs(lo), abs(hi)), "centred_sum": h, "centred_squares": h * h / 2.0}[name]


def plan_aggregate(
    aggregate: str, *, epsilon: float = 0.0, rho: float = 0.0, max_partitions: int, max_contributions: int,
    bounds: tuple[float, float] | None
) -> AggregatePlan:
    """Calibrate the components of ``aggregate`` for its share: ``epsilon`` (discrete Laplace, pure DP) or
    ``rho`` (discrete Gaussian, zCDP), split evenly over the components (see the module docstring)."""
    names = COMPONENTS[aggregate]
    gaussian = rho > 0
    shares = split_epsilon(rho if gaussian else epsilon, [1.0] * len(names))
    kp, kc = max_partitions, max_contributions
    ints, grid = (gaussian_integer_noise, gaussian_grid_noise) if gaussian else (integer_noise, grid_noise)
    comps: dict[Any, Any] = {}
    for name, share in zip(names, shares):
        if name in ("rows", "distinct", "bins"):  # a kept row adds at most one to one of them
            comps[name] = ints(share, kc, kp)
        elif name == "units":
            comps[name] = ints(share, 1, kp)
        else:
            assert bounds is not None
            comps[name] = grid(share, kc * component_bound(name, bounds), kp)
    return AggregatePlan(aggregate, 0.0 if gaussian else epsilon, bounds, comps, rho if gaussian else 0.0)


# -- exact sums ---------------------------------------------------------------------------------------------
# A floating-point sum is not a sum of per-row contributions (its rounding depends on every other row and
# on the order), so its sensitivity is not the per-row bound (Casacuberta et al. 2022). Each row's term is
# therefore computed, clipped to [-b, b] and rounded to an integer multiple q of gamma = 2**(e - 52),
# b < 2**e (a function of that row alone, |q gamma| <= b), and the group sums of q are exact integers.
_LIMB = 18  # q + 2**52 < 2**54 in three 18-bit limbs; float64 sums of limbs are exact below 2**35 rows


def component_exponent(name: str, bounds: tuple[float, float]) -> int:
    """e_gamma with gamma = 2**e_gamma = 2**(e - 52), b < 2**e: the unit of a component's integer terms."""
    return math.frexp(component_bound(name, bounds))[1] - 52


def quantized_terms(name: str, values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """The per-row terms x, x - m or (x - m)^2 - h^2/2 of clamped values, clipped to their bound b and
    rounded to integers in units of gamma = 2**component_exponent(name, bounds)."""
    lo, hi = bounds
    b = component_bound(name, bounds)
    d = values - (lo + hi) / 2.0
    t = values if name == "sum" else d if name == "centred_sum" else d * d - b
    return np.rint(np.ldexp(np.clip(t, -b, b), -component_exponent(name, bounds))).astype(np.int64)


def limb_sums(groups: np.ndarray, q: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """Per group, the sums of the three 18-bit limbs of ``q + 2**52`` (|q| <= 2**52) as int64 arrays.

    Every limb sum is exact (float64 below 2**53 for fewer than 2**35 rows), and limb sums of several
    partitions add up exactly in int64: the engines combine partial aggregates this way.
    """
    u = (q + (1 << 52)).astype(np.uint64)
    mask = np.uint64((1 << _LIMB) - 1)
    return [np.bincount(groups, weights=((u >> np.uint64(_LIMB * k)) & mask).astype(np.float64),
                        minlength=n_groups).astype(np.int64) for k in range(3)]


def limbs_to_totals(limbs: Sequence[np.ndarray], counts: np.ndarray) -> np.ndarray:
    """The exact sums of q per group (an object array of Python ints) from :func:`limb_sums` and the row
    counts."""
    obj = [np.asarray(v, dtype=np.int64).astype(object) for v in (*limbs, counts)]
    result: np.ndarray = obj[0] + (obj[1] << _LIMB) + (obj[2] << (2 * _LIMB)) - (obj[3] << 52)
    return result


def on_grid(totals: np.ndarray, e_gamma: int, e_grid: int) -> np.ndarray:
    """The exact sums ``total * 2**e_gamma`` (Python ints) rounded to the grid 2**e_grid (ties to even),
    as floats."""
    totals = np.asarray(totals, dtype=object)
    shift = e_grid - e_gamma
    if shift <= 0:
        idx = totals << -shift
    else:
        idx = totals // (1 << shift)  # floor division of Python ints: 0 <= rem < 2**shift
        rem = totals - idx * (1 << shift)
        half = 1 << (shift - 1)
        idx = idx + ((rem > half) | ((rem == half) & (idx & 1 == 1))).astype(object)
    if idx.size and (np.abs(idx) > 1 << 52).any():
        raise ValueError("a group's sum exceeds 2**52 steps of its release grid: use narrower bounds or fewer rows")
    return np.ldexp(idx.astype(np.float64), e_grid)


_TERMS = {"sum": 0, "centred_sum": 1, "centred_squares": 2}


def component_limb_sums(names: Sequence[str], groups: np.ndarray, values: np.ndarray, rows: np.ndarray,
                        bounds: tuple[float, float], n_groups: int, threads: int = 0) -> np.ndarray:
    """For each component of ``names``, ``limb_sums(groups, quantized_terms(name, clip(values[rows], *bounds),
    bounds), n_groups)``, in one C++ pass over the rows without temporaries
    (``csrc/include/pydp/aggregation/exact_sums.hpp``; ``threads`` row ranges, 0 = all cores, the same result
    for any number): a (3 len(names), n_groups) int64 array."""
    return _cagg.component_limbs(
        np.ascontiguousarray(groups, dtype=np.int64), np.ascontiguousarray(values, dtype=np.float64),
        np.ascontiguousarray(rows, dtype=np.int64), float(bounds[0]), float(bounds[1]), [_TERMS[n] for n in names],
        [component_bound(n, bounds) for n in names], [component_exponent(n, bounds) for n in names], int(n_groups),
        threads)


def limbs_on_grid(limbs: Sequence[np.ndarray], counts: np.ndarray, e_gamma: int, e_grid: int) -> np.ndarray:
    """``on_grid(limbs_to_totals(limbs, counts), e_gamma, e_grid)`` in C++ (128-bit integers): the exact sums
    rounded to the grid 2**e_grid (ties to even), as floats."""
    l0, l1, l2 = (np.ascontiguousarray(v, dtype=np.int64) for v in limbs)
    return _cagg.limbs_on_grid(l0, l1, l2, np.ascontiguousarray(counts, dtype=np.int64), e_gamma, e_grid)


def _ratio_range(s_lo: np.ndarray, s_hi: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    corners = np.stack([s_lo / c_lo, s_lo / c_hi, s_hi / c_lo, s_hi / c_hi])
    return corners.min(axis=0), corners.max(axis=0)


def estimate(plan: AggregatePlan, noisy: dict[Any, Any], alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, ci_low, ci_high) per group from the noisy components.

    Each interval holds the aggregate of the bounded (clamped, contribution-limited) data with
    probability at least ``1 - alpha``: the components' intervals have level ``1 - alpha / k`` each
    (k components, union bound) and are combined by interval arithmetic; means and variances of a group
    with no rows are reported over ``[L, U]`` (the mean) and ``[0, h^2]`` (the variance).
    """
    comps = plan.components
    a = alpha / len(comps)
    w = {name: noise.half_width(a) for name, noise in comps.items()}
    agg = plan.aggregate
    if agg in ("count", "privacy_id_count", "count_distinct", "histogram", "sum"):
        (name,) = comps
        v = noisy[name]
        half = np.int64(w[name]) if v.dtype.kind == "i" else w[name]  # integer intervals for counts
        return v, v - half, v + half
    lo, hi = plan.bounds  # type: ignore[misc]
    mid, h = (lo + hi) / 2.0, (hi - lo) / 2.0
    c = noisy["rows"].astype(np.float64)
    c_pos = np.maximum(c, 1.0)
    c_lo, c_hi = np.maximum(c - w["rows"], 1.0), np.maximum(c + w["rows"], 1.0)
    s = noisy["centred_sum"]
    r_lo, r_hi = _ratio_range(s - w["centred_sum"], s + w["centred_sum"], c_lo, c_hi)
    if agg == "mean":
        est = np.clip(mid + s / c_pos, lo, hi)
        return est, np.clip(mid + r_lo, lo, hi), np.clip(mid + r_hi, lo, hi)
    q = noisy["centred_squares"]
    top = h * h
    est = np.clip(q / c_pos + top / 2.0 - (s / c_pos) ** 2, 0.0, top)
    m_lo, m_hi = _ratio_range(q - w["centred_squares"], q + w["centred_squares"], c_lo, c_hi)
    sq_hi = np.maximum(r_lo * r_lo, r_hi * r_hi)
    sq_lo = np.where((r_lo <= 0) & (r_hi >= 0), 0.0, np.minimum(r_lo * r_lo, r_hi * r_hi))
    return est, np.clip(m_lo + top / 2.0 - sq_hi, 0.0, top), np.clip(m_hi + top / 2.0 - sq_lo, 0.0, top)
