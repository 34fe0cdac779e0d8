"""Calibration on a power-of-two grid and floating-point-safe releases (``docs/release.md``).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._arrays import accepts_arrays
from .._core import release as _D
from .._safety import check_release_delta, check_release_rng
from .._validation import (
    as_float_array,
    as_scalar,
    check_choice,
    check_delta,
    check_epsilon_scalar,
    check_int,
    check_positive_scalar,
)
from ..calibration import CalibrationError, minimal_scale
from ..noise import Gaussian
from .samplers import (
    MAX_LAPLACE_T,
    MAX_PARAM,
    generator_and_threads,
)

#: Grid steps per unit of scale are 2**DEFAULT_GRID_BITS to 2**(DEFAULT_GRID_BITS + 1).
DEFAULT_GRID_BITS = 16
#: The noise families with an exact, floating-point-safe release path.
SAFE_RELEASE_FAMILIES = ("Laplace()", "Gaussian()", "Subbotin(r), r >= 1", "Logistic()")

_MAX_INDEX = 2.0**52  # largest |x / g| accepted
_LAPLACE_MAX_BITS = 38  # t below 2**39 < 2**40
_GAUSS_MAX_BITS = 30  # sigma below 2**31 grid steps (sigma2 numerator below 2**62)
_DELTA_MARGIN = 1e-12  # relative safety margin on delta in every calibration check, as in calibration
_LAPLACE_NORMS = ("l1", "linf")  # the sensitivity norms of a Laplace vector plan, in the C++ enum's order


class ReleaseNotSupportedError(ValueError):
    """The requested noise family has no floating-point-safe release path."""


# ------------------------------------------------------------------------------------------------------
# Calibration on the grid
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridRelease:
    """A calibrated, verified release plan on the grid ``g = 2**grid_exponent``.

    Made by :func:`calibrate_laplace_release` and :func:`calibrate_gaussian_release`, which verify it;
    building one by hand skips that verification.

    Parameters
    ----------
    mechanism : {"laplace", "gaussian"}
        The discrete noise: noise parameter ``t`` (grid steps) or ``sigma2`` (grid steps squared).
    epsilon, delta, sensitivity : float
        The target guarantee and the sensitivity it was calibrated for.
    grid_exponent : int
        e with grid step g = 2**e.
    shift : int
        The sensitivity in grid steps with the rounding charged (for ``dimension > 1`` the l1 (Laplace)
        or l2 (Gaussian) norm bound of the shift vector, rounded up).
    parameter : Fraction
        ``t`` or ``sigma2``.
    delta_achieved : float
        The delta of the plan at ``epsilon``: exact for ``dimension == 1``, the verified zCDP bound for a
        Gaussian vector, 0.0 for pure DP.
    dimension : int, optional
        1 (the default): a per-value guarantee (any number of values); d > 1: one vector query of exactly
        d values.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import release
    >>> plan = release.calibrate_laplace_release(epsilon=1.0)
    >>> plan.grid == 2.0**-16, plan.shift, plan.parameter, plan.scale
    (True, 65536, Fraction(65536, 1), 1.0)
    >>> plan.release(np.zeros(3), rng=dp.Random(7), simulation=True).shape
    (3,)
    """

    mechanism: str
    epsilon: float
    delta: float
    sensitivity: float
    grid_exponent: int
    shift: int
    parameter: Fraction
    delta_achieved: float
    dimension: int = 1

    @property
    def grid(self) -> float:
        """The grid step g = 2**grid_exponent."""
        return math.ldexp(1.0, self.grid_exponent)

    @property
    def scale(self) -> float:
        """The noise scale in data units: t * g (Laplace) or sqrt(sigma2) * g (Gaussian)."""
        if self.mechanism == "laplace":
            return float(self.parameter) * self.grid
        return math.sqrt(float(self.parameter)) * self.grid

    @property
    def max_abs_value(self) -> float:
        """The largest |value| accepted: 2**52 grid steps."""
        return math.ldexp(1.0, 52 + self.grid_exponent)

    @accepts_arrays("values", keep_float32=True)
    def release(self, values: ArrayLike, *, rng: Any = None, bounds: tuple[float, float] | None = None,
                simulation: bool = False) -> Any:
        """Noisy ``values`` on the grid (see :mod:`pydp_core.release`); a scalar in gives a float out.

        A seeded ``pydp_core.Random`` or a ``numpy.random.Generator`` as ``rng`` is refused (ValueError)
        unless ``simulation=True``.
        """
        check_release_rng(rng, simulation)
        return _release(self, values, rng, bounds)

    def _vector_sizes(self) -> tuple[int, ...]:
        """The numbers of values one call may release (for ``dimension > 1``): one vector."""
        return (self.dimension,)

    def _draw(self, gen: Any, x: np.ndarray, low: float, high: float, threads: int) -> Any:
        """The release kernel on contiguous float64 values (clamp, round, add the noise)."""
        p = self.parameter
        kernel = _D.release_laplace if self.mechanism == "laplace" else _D.release_gaussian
        return kernel(gen, x, p.numerator, p.denominator, self.grid_exponent, low, high, threads)


def _grid_exponent(scale: float, sensitivity: float, grid_bits: Any, max_bits: int) -> int:
    """e = floor(log2(min(scale, sensitivity))) - grid_bits, raised if needed so that one unit of scale
    spans at most 2**max_bits grid steps."""
    gb = check_int(grid_bits, "grid_bits", 0, 30)
    e = math.frexp(min(scale, sensitivity))[1] - 1 - gb
    e = max(e, math.frexp(scale)[1] - 1 - max(gb, max_bits))
    if e < -1074 + 53 or e > 970 - 53:
        raise ValueError(f"the noise scale {scale!r} is outside the range a float64 grid can serve")
    return e


def _grid_shift(sensitivity: float, e: int) -> int:
    """The largest |rint(a) - rint(b)| over |a - b| <= D = sensitivity / g (ties to even): floor(D) + 1,
    except D itself when D is an even integer (two ties at distance D round in the same direction)."""
    d = math.ldexp(sensitivity, -e)  # exact
    if d == math.floor(d) and int(d) % 2 == 0:
        return int(d)
    return int(math.floor(d)) + 1


def _check_common(epsilon: Any, delta: Any, sensitivity: Any) -> tuple[float, float, float]:
    eps = check_epsilon_scalar(epsilon)
    dl = as_scalar(check_delta(delta), "delta")
    sens = check_positive_scalar(sensitivity, "sensitivity")
    return eps, dl, sens


def _laplace_ok(eps: float, delta: float, t: int, k: int) -> bool:
    if Fraction(k, t) <= Fraction(eps):
        return True
    if delta == 0:
        return False
    ld = _D.dlaplace_log_delta(eps, 1.0 / t, float(k))
    return ld <= math.log(delta) + math.log1p(-_DELTA_MARGIN)


def calibrate_laplace_release(
    *,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    grid_bits: int = DEFAULT_GRID_BITS,
    dimension: int = 1,
    norm: str = "l1",
) -> GridRelease:
    """The verified smallest discrete Laplace release on the grid meeting (epsilon, delta).

    The grid comes from the continuous Laplace scale ``s0 = D / (eps - 2 log(1 - delta))``; then the
    smallest integer ``t`` with exact delta(epsilon; t, k) <= delta (pure DP: ``k / t <= epsilon``,
    decided in exact rational arithmetic) is found by bisection, and ``t - 1`` is checked to fail.

    Parameters
    ----------
    epsilon : float
        epsilon >= 0, finite (> 0 when ``delta = 0``).
    delta : float, optional
        delta in [0, 1) (default 0: pure epsilon-DP).
    sensitivity : float, optional
        The sensitivity D of each value (> 0, default 1); the l1 sensitivity for ``dimension > 1``.
    grid_bits : int, optional
        Grid steps per unit of ``min(scale, sensitivity)`` are 2**grid_bits to 2**(grid_bits + 1), in
        [0, 30] (default 16).
    dimension : int, optional
        1 (the default): per value. d > 1: one vector query of d values. Rounding moves each coordinate
        by at most half a step, so the integer shift vector has l1 norm at most ``k = floor(D) + d``; the
        plan is pure ``k / t <= epsilon`` (which implies (epsilon, delta)), with the grid refined so that
        the d extra steps cost at most ``2**-grid_bits`` of the sensitivity. The plan is computed by the
        C++ routine that the C ABI's ``pydp_release_calibrate_laplace_vector`` also calls.
    norm : {"l1", "linf"}, optional
        The norm of ``sensitivity`` for ``dimension > 1`` (default ``"l1"``). With ``"linf"`` every
        coordinate moves by at most D, so the integer shift has l1 norm at most ``k = d (floor(D) + 1)``
        (``floor(D) + 1`` charged per coordinate, D itself when D is an even integer), and the grid
        resolves ``min(scale, sensitivity)``. Ignored for ``dimension = 1``.

    Returns
    -------
    GridRelease
        The plan (``mechanism="laplace"``, parameter ``t``).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range, or ``epsilon = 0`` with ``delta = 0``.
    CalibrationError
        If ``t`` would exceed 2**40 or the result cannot be verified.

    Examples
    --------
    >>> from pydp_core import release
    >>> plan = release.calibrate_laplace_release(epsilon=1.0)
    >>> plan.mechanism, plan.parameter, plan.delta_achieved
    ('laplace', Fraction(65536, 1), 0.0)
    >>> release.calibrate_laplace_release(epsilon=1.0, dimension=3).shift
    262147
    """
    eps, dl, sens = _check_common(epsilon, delta, sensitivity)
    dim = check_int(dimension, "dimension", 1, 2**40)
    nm = check_choice(norm, "norm", _LAPLACE_NORMS)
    return _calibrate_laplace_cached(eps, dl, sens, check_int(grid_bits, "grid_bits", 0, 30), dim,
                                     nm if dim > 1 else "l1")


def _vector_plan(mechanism: str, fields: tuple[int, str, int, int, int, float], eps: float, dl: float, sens: float,
                 dim: int) -> GridRelease:
    """The GridRelease of a vector plan from the C++ routine's (status, message, num, e, shift, delta)."""
    status, message, num, e, shift, achieved = fields
    if status == 1:  # PlanStatus::Invalid: an argument out of range; the others are calibration failures
        raise ValueError(message)
    if status != 0:
        raise CalibrationError(message)
    return GridRelease(mechanism, eps, dl, sens, e, shift, Fraction(num), achieved, dim)


@functools.lru_cache(maxsize=16)
def _calibrate_laplace_cached(eps: float, dl: float, sens: float, grid_bits: int, dim: int,
                              norm: str = "l1") -> GridRelease:
    """The body of :func:`calibrate_laplace_release` on validated arguments; plans are cached by them
    (a plan is immutable), so a single-value release does not recalibrate."""
    denom = eps - 2.0 * math.log1p(-dl)
    if denom <= 0 or (dim > 1 and eps == 0):
        raise ValueError("epsilon = 0 with delta = 0 requires an infinite scale: use epsilon > 0 or delta > 0")
    if dim > 1:
        fields = _D.laplace_vector_plan(eps, sens, grid_bits, dim, _LAPLACE_NORMS.index(norm))
        return _vector_plan("laplace", fields, eps, dl, sens, dim)
    e = _grid_exponent(sens / denom, sens, grid_bits, _LAPLACE_MAX_BITS)
    k = _grid_shift(sens, e)
    hi = 1
    while not _laplace_ok(eps, dl, hi, k):
        hi *= 2
        if hi >= MAX_LAPLACE_T:
            raise CalibrationError("discrete Laplace calibration: t would exceed 2**40")
    lo = hi // 2  # fails (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _laplace_ok(eps, dl, mid, k):
            hi = mid
        else:
            lo = mid
    t = hi
    if not _laplace_ok(eps, dl, t, k) or (t > 1 and _laplace_ok(eps, dl, t - 1, k)):
        raise CalibrationError("discrete Laplace calibration could not be verified")
    pure = Fraction(k, t) <= Fraction(eps)
    achieved = 0.0 if pure else math.exp(_D.dlaplace_log_delta(eps, 1.0 / t, float(k)))
    return GridRelease("laplace", eps, dl, sens, e, k, Fraction(t), achieved)


def _gauss_log_excess(eps: float, log_target: float, n: float, k: int) -> float:
    return float(_D.dgauss_log_delta(eps, float(n), float(k))) - log_target


def calibrate_gaussian_release(
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    grid_bits: int = DEFAULT_GRID_BITS,
    dimension: int = 1,
) -> GridRelease:
    """The verified smallest discrete Gaussian release on the grid meeting (epsilon, delta), delta > 0.

    The grid comes from the continuous analytic-Gaussian scale; then the smallest integer ``sigma2``
    (grid steps squared) with exact delta(epsilon; sigma2, k) <= delta is found (Brent's method on the
    exact profile, then integer steps), and ``sigma2 - 1`` is checked to fail.

    Parameters
    ----------
    epsilon : float
        epsilon >= 0, finite.
    delta : float
        delta in (0, 1).
    sensitivity : float, optional
        The sensitivity D of each value (> 0, default 1); the l2 sensitivity for ``dimension > 1``.
    grid_bits : int, optional
        As in :func:`calibrate_laplace_release` (default 16).
    dimension : int, optional
        1 (the default): per value. d > 1: one vector query of d values. The integer shift vector then
        has l2 norm at most ``K = D + sqrt(d)`` (rounding moves each coordinate by at most half a step),
        and the product of discrete Gaussians is ``K^2 / (2 sigma2)``-zCDP (Canonne, Kamath and Steinke
        2020, the multivariate discrete Gaussian); the plan is the smallest integer sigma2 whose
        zCDP-to-(epsilon, delta) bound (:func:`pydp_core.accounting.conversions.zcdp_log_delta`) meets
        delta. This bound is valid but not exact (larger than the exact profile by a modest factor in
        sigma); the grid is refined so that sqrt(d) extra steps cost at most ``2**-grid_bits`` of the
        sensitivity. The plan is computed by the C++ routine that the C ABI's
        ``pydp_release_calibrate_gaussian_vector`` also calls.

    Returns
    -------
    GridRelease
        The plan (``mechanism="gaussian"``, parameter ``sigma2``).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range, or ``delta = 0`` (no finite scale).
    CalibrationError
        If sigma2 would exceed 2**62 grid steps squared or the result cannot be verified.

    Examples
    --------
    >>> from pydp_core import release
    >>> plan = release.calibrate_gaussian_release(epsilon=1.0, delta=1e-6)
    >>> plan.parameter, plan.scale
    (Fraction(76656197131, 1), 4.22467888...)
    >>> plan.delta_achieved <= 1e-6
    True
    """
    eps, dl, sens = _check_common(epsilon, delta, sensitivity)
    dim = check_int(dimension, "dimension", 1, 2**40)
    return _calibrate_gaussian_cached(eps, dl, sens, check_int(grid_bits, "grid_bits", 0, 30), dim)


@functools.lru_cache(maxsize=16)
def _calibrate_gaussian_cached(eps: float, dl: float, sens: float, grid_bits: int, dim: int) -> GridRelease:
    """The body of :func:`calibrate_gaussian_release` on validated arguments; plans are cached by them
    (a plan is immutable), so a single-value release does not recalibrate."""
    if dl == 0:
        raise ValueError("the discrete Gaussian needs delta > 0 (no finite scale gives delta = 0)")
    if dim > 1:
        return _vector_plan("gaussian", _D.gaussian_vector_plan(eps, dl, sens, grid_bits, dim), eps, dl, sens, dim)
    s0 = float(minimal_scale(Gaussian(), epsilon=eps, delta=dl, sensitivity=sens))
    e = _grid_exponent(s0, sens, grid_bits, _GAUSS_MAX_BITS)
    k = _grid_shift(sens, e)
    log_target = math.log(dl) + math.log1p(-_DELTA_MARGIN)

    cache: dict[float, float] = {}

    def f(n: float) -> float:
        if n not in cache:
            cache[n] = _gauss_log_excess(eps, log_target, n, k)
        return cache[n]

    guess = (s0 / sens * k) ** 2  # continuous scale for the shift k, in grid steps squared
    lo, hi = max(guess * 0.999, 1e-300), guess * 1.001
    while f(lo) <= 0:
        lo /= 2
        if lo < 1e-12:
            break
    while f(hi) > 0:
        hi *= 2
        if hi > MAX_PARAM:
            raise CalibrationError("discrete Gaussian calibration: sigma2 would exceed 2**62 grid steps squared")
    from scipy.optimize import brentq

    root = brentq(f, lo, hi, xtol=0.25, rtol=1e-15) if f(lo) > 0 else lo
    n = max(1, math.ceil(root))
    while f(n) > 0:
        n += 1
    while n > 1 and f(n - 1) <= 0:
        n -= 1
    if not f(n) <= 0 or (n > 1 and not f(n - 1) > 0) or n > MAX_PARAM:
        raise CalibrationError("discrete Gaussian calibration could not be verified")
    achieved = math.exp(float(_D.dgauss_log_delta(eps, float(n), float(k))))
    return GridRelease("gaussian", eps, dl, sens, e, k, Fraction(n), achieved)


# ------------------------------------------------------------------------------------------------------
# Releases
# ------------------------------------------------------------------------------------------------------
def _release(plan: GridRelease, values: ArrayLike, rng: Any, bounds: Any) -> Any:
    x = as_float_array(values, "values")
    scalar = x.ndim == 0
    if plan.dimension > 1 and x.size not in plan._vector_sizes():
        raise ValueError(
            f"values has {x.size} entries but the plan was calibrated for one vector of {plan.dimension}"
            + ("".join(f" or {n} values" for n in sorted(set(plan._vector_sizes()) - {plan.dimension})))
        )
    low, high = -math.inf, math.inf
    if bounds is not None:
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise TypeError("bounds must be a pair of real numbers (low, high)") from None
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ValueError("bounds must be finite with low <= high")
    x = np.ascontiguousarray(x, dtype=np.float64)
    gen, threads = generator_and_threads(rng)
    # The kernel clamps to the bounds and checks every input (finite, at most 2**52 grid steps after the
    # clamp) in its combine loop, so the data are read once; on a bad input it raises and nothing is
    # returned. The messages below say which check failed.
    try:
        out = plan._draw(gen, x, low, high, threads)
    except ValueError as err:
        if "grid steps" not in str(err):
            raise
        if not np.isfinite(x).all():
            raise ValueError("values must be finite (NaN or inf given)") from None
        raise ValueError(
            "values too large for the grid: |value| must be at most 2**52 grid steps = "
            f"{plan.max_abs_value!r} (grid 2**{plan.grid_exponent}); give bounds=(low, high) to clamp, "
            "or use a larger scale"
        ) from None
    return float(out.reshape(())) if scalar else out


@accepts_arrays("values", keep_float32=True)
def release_laplace(
    values: ArrayLike,
    *,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
    grid_bits: int = DEFAULT_GRID_BITS,
    vector: bool = False,
    simulation: bool = False,
    confirm_delta: bool = False,
) -> Any:
    """Release ``values`` with exact discrete Laplace noise on a power-of-two grid.

    (epsilon, delta)-DP per value; pure epsilon-DP for ``delta = 0`` (docs/release.md).

    Parameters
    ----------
    values : float or array_like
        The true values, finite and at most 2**52 grid steps in magnitude (after clamping).
    epsilon, delta, sensitivity : float
        As in :func:`calibrate_laplace_release` (``delta`` default 0, ``sensitivity`` default 1).
    rng : None, Random or numpy.random.Generator, optional
        ``None`` (the default): a fresh secure generator, the choice for releases; a seeded
        ``Random`` or a numpy generator is refused unless ``simulation=True``.
    bounds : (float, float), optional
        Clamp the values to ``[low, high]`` first; nothing is clamped without it.
    grid_bits : int, optional
        As in :func:`calibrate_laplace_release`.
    vector : bool, optional
        ``True``: ``values`` is one vector query with l1 sensitivity ``sensitivity`` (``dimension`` of
        the calibration).
    simulation : bool, optional
        Allow a seeded or numpy ``rng``: the run is a simulation, not a release.
    confirm_delta : bool, optional
        Accept a delta above 1e-3 without a :class:`~pydp_core.PrivacyWarning` (delta >= 1/2 is
        always refused).

    Returns
    -------
    float or numpy.ndarray
        The noisy values on the grid; a float for a scalar ``values``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a value is not finite or too large for the grid, or a parameter is out of range.
    CalibrationError
        If the calibration fails.

    Examples
    --------
    >>> import pydp_core as dp
    >>> x = dp.release_laplace(np.array([10.0, 20.0]), epsilon=1.0, rng=dp.Random(7), simulation=True)
    >>> x.shape, bool(np.all(x * 2**16 == np.round(x * 2**16)))
    ((2,), True)
    """
    check_release_rng(rng, simulation)
    dim = max(1, int(np.size(values))) if vector else 1
    plan = calibrate_laplace_release(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, grid_bits=grid_bits, dimension=dim
    )
    check_release_delta(plan.delta, confirm_delta)
    return plan.release(values, rng=rng, bounds=bounds, simulation=simulation)


@accepts_arrays("values", keep_float32=True)
def release_gaussian(
    values: ArrayLike,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
    grid_bits: int = DEFAULT_GRID_BITS,
    vector: bool = False,
    simulation: bool = False,
    confirm_delta: bool = False,
) -> Any:
    """Release ``values`` with exact discrete Gaussian noise on a power-of-two grid.

    (epsilon, delta)-DP per value (docs/release.md).

    Parameters
    ----------
    values, rng, bounds :
        As in :func:`release_laplace`.
    epsilon, delta, sensitivity, grid_bits : float
        As in :func:`calibrate_gaussian_release` (``delta`` > 0).
    vector : bool, optional
        ``True``: ``values`` is one vector query with l2 sensitivity ``sensitivity``.
    simulation, confirm_delta : bool, optional
        As in :func:`release_laplace`.

    Returns
    -------
    float or numpy.ndarray
        The noisy values on the grid; a float for a scalar ``values``.

    Raises
    ------
    TypeError, ValueError, CalibrationError
        As in :func:`release_laplace`.

    Examples
    --------
    >>> import pydp_core as dp
    >>> y = dp.release_gaussian(3.5, epsilon=1.0, delta=1e-6, rng=dp.Random(7), simulation=True)
    >>> isinstance(y, float)
    True
    >>> dp.release_gaussian(np.zeros(50), epsilon=1.0, delta=1e-6, vector=True, rng=dp.Random(7), simulation=True).shape
    (50,)
    """
    check_release_rng(rng, simulation)
    dim = max(1, int(np.size(values))) if vector else 1
    plan = calibrate_gaussian_release(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, grid_bits=grid_bits, dimension=dim
    )
    check_release_delta(plan.delta, confirm_delta)
    return plan.release(values, rng=rng, bounds=bounds, simulation=simulation)
