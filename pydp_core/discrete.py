"""Floating-point-safe releases: exact discrete Laplace and discrete Gaussian noise on a power-of-two grid.

Plain floating-point noise is not differentially private: the set of doubles that ``x + noise`` can reach
depends on ``x``, and the low-order bits of one output can tell two neighbouring inputs apart (Mironov
2012). The release path here is safe by construction:

1. **Grid.** The output lies on the grid ``g * Z`` with ``g = 2**e`` a power of two chosen from the
   scale, as Google's library chooses its granularity, and from the sensitivity:
   ``e = floor(log2(min(scale, sensitivity))) - grid_bits`` (default ``grid_bits = 16``), raised if
   needed so that the scale spans at most ``2**30`` (Gaussian) or ``2**38`` (Laplace) grid steps. The
   rounding charge below is then at most ``2**-grid_bits`` of the sensitivity.
2. **Rounding, charged to the sensitivity.** Each value is rounded to the nearest grid point (ties to
   even). Two inputs at distance at most ``sensitivity`` round to grid indices at most
   ``k = floor(D) + 1`` apart, ``D = sensitivity / g`` (``k = D`` when D is an even integer), and the
   privacy analysis uses the integer shift ``k``.
3. **Exact integer noise.** An integer ``Y`` is drawn exactly from the discrete Laplace,
   ``P(y) ~ exp(-|y| / t)``, or the discrete Gaussian, ``P(y) ~ exp(-y**2 / (2 sigma2))`` (Canonne,
   Kamath and Steinke 2020), by integer arithmetic only, from the ChaCha20 CSPRNG of
   :class:`pydp_core.Random`. The output is ``(round(x / g) + Y) * g``, exactly representable (checked).
4. **Exact guarantee and calibration.** The (epsilon, delta) profile of the discrete mechanism for the
   shift ``k`` is computed exactly (closed form for the discrete Laplace; a cancellation-free sum in log
   space for the discrete Gaussian). Calibration returns the smallest integer ``t`` (Laplace) or integer
   ``sigma2`` (Gaussian, in grid steps squared) meeting (epsilon, delta), verifies it and verifies that one
   step less fails; otherwise it raises :class:`CalibrationError`.

By default the guarantee is per value: every entry of ``values`` is one release of a scalar query whose
value changes by at most ``sensitivity`` between neighbouring data sets. With ``vector=True`` (or
``dimension=d`` in the calibrations) ``values`` is one vector query with l1 (Laplace: pure epsilon-DP with
the l1 rounding charge ``floor(D) + d``) or l2 sensitivity (Gaussian: the zCDP bound of the product of
discrete Gaussians with the l2 charge ``D + sqrt(d)``, valid but not exact). The mechanisms'
``privatize(values, release=True)`` uses the vector form for arrays.

Bad input: non-finite values, and values beyond ``2**52`` grid steps (where the grid could not be
represented exactly), raise ``ValueError``. Nothing is clamped unless ``bounds=(low, high)`` is given.

Only the Laplace and Gaussian mechanisms have a safe release path; Subbotin_r (r other than 1 and 2)
and Logistic noise are refused by :func:`release_noise` (see docs/discrete.md for why). Floating-point
noise stays available for simulations through :class:`pydp_core.Random`; it is not a release.

Timing: see docs/discrete.md. The time to draw the noise depends on the noise values (rejection
sampling), never on the data; adding the noise to the data has no data-dependent branches.
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._validation import as_float_array, check_delta, check_epsilon, check_positive
from .calibration import CalibrationError, minimal_scale
from .calibration import _check_dimension as _calibration_check_dimension
from .noise import Gaussian, NoiseFamily
from .random import as_random

__all__ = [
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "discrete_laplace_log_delta",
    "discrete_laplace_delta",
    "discrete_gaussian_log_delta",
    "discrete_gaussian_delta",
    "discrete_laplace_log_cdf",
    "discrete_gaussian_log_cdf",
    "GridRelease",
    "calibrate_laplace_release",
    "calibrate_gaussian_release",
    "release_laplace",
    "release_gaussian",
    "release_noise",
    "ReleaseNotSupported",
    "SAFE_RELEASE_FAMILIES",
    "DEFAULT_GRID_BITS",
    "zcdp_log_delta",
]

_D = _core.discrete

#: Grid steps per unit of scale are 2**DEFAULT_GRID_BITS to 2**(DEFAULT_GRID_BITS + 1).
DEFAULT_GRID_BITS = 16
#: The noise families with an exact, floating-point-safe release path.
SAFE_RELEASE_FAMILIES = ("Laplace()", "Gaussian()", "Subbotin(1)", "Subbotin(2)")

_MAX_PARAM = int(_D.MAX_PARAM)  # 2**62
_MAX_LAPLACE_T = int(_D.MAX_LAPLACE_T)  # 2**40
_MAX_INDEX = 2.0**52  # largest |x / g| accepted
_LAPLACE_MAX_BITS = 38  # t below 2**39 < 2**40
_GAUSS_MAX_BITS = 30  # sigma below 2**31 grid steps (sigma2 numerator below 2**62)
_DELTA_MARGIN = 1e-12  # relative safety margin on delta in every calibration check (as in calibration.py)


class ReleaseNotSupported(ValueError):
    """The requested noise family has no floating-point-safe release path."""


# ------------------------------------------------------------------------------------------------------
# Argument helpers
# ------------------------------------------------------------------------------------------------------
def _rational(value: Any, name: str) -> Fraction:
    """A positive exact rational with numerator and denominator at most 2**62 (TypeError/ValueError)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Rational, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be an int, a fractions.Fraction or a float, not {type(value).__name__}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite")
        frac = Fraction(float(value))
    else:
        frac = Fraction(int(value)) if isinstance(value, (numbers.Integral, np.integer)) else Fraction(value)
    if frac <= 0:
        raise ValueError(f"{name} must be > 0")
    if frac.numerator > _MAX_PARAM or frac.denominator > _MAX_PARAM:
        raise ValueError(
            f"{name} = {frac} is not a ratio of integers up to 2**62; pass a fractions.Fraction with smaller terms"
        )
    return frac


def _size(size: Any) -> Tuple[Tuple[int, ...], int]:
    if size is None:
        return (), 1
    if isinstance(size, (numbers.Integral, np.integer)) and not isinstance(size, (bool, np.bool_)):
        shape: Tuple[int, ...] = (int(size),)
    else:
        try:
            shape = tuple(_index(s) for s in size)
        except TypeError:
            raise TypeError("size must be None, an int or a tuple of ints") from None
    if any(s < 0 for s in shape):
        raise ValueError("size must not be negative")
    return shape, int(np.prod(shape, dtype=np.int64)) if shape else 1


def _index(v: Any) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("bool")
    return operator.index(v)


def _random(rng: Any):
    """(C++ generator, threads) behind an rng argument (None = a fresh secure pydp_core.Random)."""
    r = as_random(rng)
    return r._gen, int(r._threads)


def _shift(shift: Any) -> int:
    if isinstance(shift, (bool, np.bool_)) or not isinstance(shift, (numbers.Integral, np.integer)):
        raise TypeError("shift must be an int (the sensitivity in grid steps)")
    k = int(shift)
    if k < 1 or k > 2**52:
        raise ValueError("shift must lie in [1, 2**52]")
    return k


def _scalar_eps(epsilon: Any) -> float:
    e = check_epsilon(epsilon)
    if e.ndim != 0:
        raise TypeError("epsilon must be a scalar")
    return float(e)


# ------------------------------------------------------------------------------------------------------
# Exact integer samplers
# ------------------------------------------------------------------------------------------------------
def sample_discrete_laplace(t, size=None, rng=None):
    """Integers from the discrete Laplace law ``P(y) ~ exp(-|y| / t)``, drawn exactly (CKS Algorithm 2).

    ``t`` is an exact positive rational below 2**40 (int, ``Fraction`` or float, converted exactly).
    ``rng``: None (a fresh secure :class:`pydp_core.Random`), a :class:`pydp_core.Random` (seeded ones
    are for tests only) or a ``numpy.random.Generator``. Returns an int64 array of shape ``size``, or a
    Python int when ``size`` is None.
    """
    tt = _rational(t, "t")
    if tt >= _MAX_LAPLACE_T:
        raise ValueError("t must be below 2**40")
    shape, n = _size(size)
    gen, threads = _random(rng)
    out = _D.discrete_laplace(gen, tt.numerator, tt.denominator, n, threads)
    return int(out[0]) if size is None else out.reshape(shape)


def sample_discrete_gaussian(sigma2, size=None, rng=None):
    """Integers from the discrete Gaussian law ``P(y) ~ exp(-y**2 / (2 sigma2))``, exactly (CKS Algorithm 3).

    ``sigma2`` (the variance parameter, not the variance) is an exact positive rational with numerator
    and denominator up to 2**62. Other arguments as in :func:`sample_discrete_laplace`.
    """
    s2 = _rational(sigma2, "sigma2")
    shape, n = _size(size)
    gen, threads = _random(rng)
    out = _D.discrete_gaussian(gen, s2.numerator, s2.denominator, n, threads)
    return int(out[0]) if size is None else out.reshape(shape)


# ------------------------------------------------------------------------------------------------------
# Exact privacy profiles (shift = sensitivity in grid steps)
# ------------------------------------------------------------------------------------------------------
def discrete_laplace_log_delta(epsilon, t, shift=1) -> float:
    """log delta(epsilon) of the discrete Laplace mechanism with parameter ``t`` and integer ``shift``.

    Closed form (docs/discrete.md): with q = exp(-1/t) and m = ceil((k - epsilon t)/2) - 1,
    ``delta = [-expm1(eps - (k - m)/t) - q expm1(-m/t)] / (1 + q)`` for epsilon < k/t, else 0 (-inf here).
    """
    eps = _scalar_eps(epsilon)
    tt = _rational(t, "t")
    k = _shift(shift)
    if Fraction(k) / tt <= Fraction(eps):  # exact pure-DP check
        return -math.inf
    return float(_D.dlaplace_log_delta(eps, float(1 / tt), float(k)))


def discrete_laplace_delta(epsilon, t, shift=1) -> float:
    """delta(epsilon) of the discrete Laplace mechanism (see :func:`discrete_laplace_log_delta`)."""
    return math.exp(discrete_laplace_log_delta(epsilon, t, shift))


def discrete_gaussian_log_delta(epsilon, sigma2, shift=1) -> float:
    """log delta(epsilon) of the discrete Gaussian mechanism with variance parameter ``sigma2``, shift k.

    ``delta = sum_{y <= m} P(y) (1 - exp(eps - L(y)))``, L(y) = (k^2 - 2 k y) / (2 sigma2), over the y
    with L(y) > eps; every term is non-negative and the sum is formed in log-scaled arithmetic.
    """
    eps = _scalar_eps(epsilon)
    s2 = _rational(sigma2, "sigma2")
    k = _shift(shift)
    return float(_D.dgauss_log_delta(eps, float(s2), float(k)))


def discrete_gaussian_delta(epsilon, sigma2, shift=1) -> float:
    """delta(epsilon) of the discrete Gaussian mechanism (see :func:`discrete_gaussian_log_delta`)."""
    return math.exp(discrete_gaussian_log_delta(epsilon, sigma2, shift))


def discrete_laplace_log_cdf(m: int, t) -> float:
    """log P(Y <= m) for the discrete Laplace law with parameter ``t``."""
    return float(_D.dlaplace_log_cdf(float(_integer(m, "m")), float(1 / _rational(t, "t"))))


def discrete_gaussian_log_cdf(m: int, sigma2) -> float:
    """log P(Y <= m) for the discrete Gaussian law with variance parameter ``sigma2``."""
    return float(_D.dgauss_log_cdf(float(_integer(m, "m")), float(_rational(sigma2, "sigma2"))))


def _integer(m: Any, name: str) -> int:
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an int")
    m = int(m)
    if abs(m) > 2**52:
        raise ValueError(f"|{name}| must be at most 2**52")
    return m


# ------------------------------------------------------------------------------------------------------
# Calibration on the grid
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridRelease:
    """A calibrated, verified release plan on the grid ``g = 2**grid_exponent``.

    ``mechanism`` is "laplace" (noise parameter ``t``, grid steps) or "gaussian" (``sigma2``, grid steps
    squared); ``shift`` is the sensitivity in grid steps with the rounding charged (for ``dimension > 1``
    the l1 (Laplace) or l2 (Gaussian) norm bound of the shift vector, rounded up); ``scale`` is the noise
    scale in data units (``t * g``, or ``sqrt(sigma2) * g``); ``delta_achieved`` is the delta of the plan
    at ``epsilon``: exact for ``dimension == 1``, the verified zCDP bound for a Gaussian vector, 0.0 for
    pure DP. ``dimension == 1``: a per-value guarantee (any number of values); ``dimension = d > 1``: one
    vector query of exactly d values.
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

    def release(self, values, rng=None, bounds: Optional[Tuple[float, float]] = None):
        """Noisy ``values`` on the grid (see the module docstring). Scalars in, float out."""
        return _release(self, values, rng, bounds)


def _check_dimension(dimension: Any) -> int:
    d = _calibration_check_dimension(dimension)
    if d > 2**40:
        raise ValueError("dimension must be at most 2**40")
    return d


def _grid_exponent(scale: float, sensitivity: float, grid_bits: Any, max_bits: int) -> int:
    """e = floor(log2(min(scale, sensitivity))) - grid_bits, raised if needed so that one unit of scale
    spans at most 2**max_bits grid steps."""
    if isinstance(grid_bits, (bool, np.bool_)) or not isinstance(grid_bits, (numbers.Integral, np.integer)):
        raise TypeError("grid_bits must be an int")
    gb = int(grid_bits)
    if not 0 <= gb <= 30:
        raise ValueError("grid_bits must lie in [0, 30]")
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


def _check_common(epsilon, delta, sensitivity) -> Tuple[float, float, float]:
    eps = _scalar_eps(epsilon)
    dl = check_delta(delta)
    sens = check_positive(sensitivity, "sensitivity")
    if dl.ndim or sens.ndim:
        raise TypeError("delta and sensitivity must be scalars")
    return eps, float(dl), float(sens)


def _laplace_ok(eps: float, delta: float, t: int, k: int) -> bool:
    if Fraction(k, t) <= Fraction(eps):
        return True
    if delta == 0:
        return False
    ld = _D.dlaplace_log_delta(eps, 1.0 / t, float(k))
    return ld <= math.log(delta) + math.log1p(-_DELTA_MARGIN)


def calibrate_laplace_release(epsilon, sensitivity=1.0, delta=0.0, *, grid_bits: int = DEFAULT_GRID_BITS,
                              dimension: int = 1) -> GridRelease:
    """The verified smallest discrete Laplace release on the grid meeting (epsilon, delta).

    The grid comes from the continuous Laplace scale ``s0 = D / (eps - 2 log(1 - delta))``; then the
    smallest integer ``t`` with exact delta(epsilon; t, k) <= delta (pure DP: ``k / t <= epsilon``,
    decided in exact rational arithmetic) is found by bisection, and ``t - 1`` is checked to fail.

    ``dimension = d > 1``: one vector query of d values with l1 sensitivity ``sensitivity``. Rounding
    moves each coordinate by at most half a step, so the integer shift vector has l1 norm at most
    ``k = floor(D) + d``; the plan is pure ``k / t <= epsilon`` (which implies (epsilon, delta)), with
    the grid refined so that the d extra steps cost at most ``2**-grid_bits`` of the sensitivity.
    """
    eps, dl, sens = _check_common(epsilon, delta, sensitivity)
    dim = _check_dimension(dimension)
    denom = eps - 2.0 * math.log1p(-dl)
    if denom <= 0 or (dim > 1 and eps == 0):
        raise ValueError("epsilon = 0 with delta = 0 requires an infinite scale: use epsilon > 0 or delta > 0")
    if dim > 1:
        e = _grid_exponent(sens / eps, sens / dim, grid_bits, _LAPLACE_MAX_BITS)
        k = int(math.floor(math.ldexp(sens, -e))) + dim
        t = -((-Fraction(k)) // Fraction(eps))  # ceil(k / eps), exact
        if t >= _MAX_LAPLACE_T:
            raise CalibrationError("discrete Laplace calibration: t would exceed 2**40")
        if not (Fraction(k) / t <= Fraction(eps) < Fraction(k) / (t - 1) if t > 1 else Fraction(k) / t <= Fraction(eps)):
            raise CalibrationError("discrete Laplace calibration could not be verified")
        return GridRelease("laplace", eps, dl, sens, e, k, Fraction(t), 0.0, dim)
    e = _grid_exponent(sens / denom, sens, grid_bits, _LAPLACE_MAX_BITS)
    k = _grid_shift(sens, e)
    hi = 1
    while not _laplace_ok(eps, dl, hi, k):
        hi *= 2
        if hi >= _MAX_LAPLACE_T:
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
    achieved = 0.0 if Fraction(k, t) <= Fraction(eps) else math.exp(_D.dlaplace_log_delta(eps, 1.0 / t, float(k)))
    return GridRelease("laplace", eps, dl, sens, e, k, Fraction(t), achieved)


def zcdp_log_delta(rho: float, epsilon: float) -> Tuple[float, float]:
    """(log delta, alpha): the (epsilon, delta) guarantee of a rho-zCDP mechanism,
    ``delta = min_alpha exp((alpha - 1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha``
    (Canonne, Kamath and Steinke 2020, their conversion from concentrated DP). Any alpha > 1 gives a valid
    delta; the returned one is the minimiser found numerically, and the returned value is evaluated there.
    """
    rho_a = check_positive(rho, "rho")
    eps = _scalar_eps(epsilon)
    r = float(rho_a)

    def f(x: float) -> float:  # alpha = 1 + e^x
        am1 = math.exp(x)
        a = 1.0 + am1
        return am1 * (a * r - eps) - x + a * (x - math.log1p(am1))  # a log(1 - 1/a) = a (log(a-1) - log a)

    from scipy.optimize import minimize_scalar

    # coarse scan of x = log(alpha - 1) over [-40, 40], then Brent's bounded search around the best point
    grid = np.linspace(-40.0, 40.0, 321)
    vals = np.array([f(v) for v in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    value, at = min((float(f(res.x)), float(res.x)), (float(vals[i]), float(grid[i])))
    return min(value, 0.0), 1.0 + math.exp(at)


def _gauss_log_excess(eps: float, log_target: float, n: float, k: int) -> float:
    return float(_D.dgauss_log_delta(eps, float(n), float(k))) - log_target


def calibrate_gaussian_release(epsilon, delta, sensitivity=1.0, *, grid_bits: int = DEFAULT_GRID_BITS,
                               dimension: int = 1) -> GridRelease:
    """The verified smallest discrete Gaussian release on the grid meeting (epsilon, delta), delta > 0.

    The grid comes from the continuous analytic-Gaussian scale; then the smallest integer ``sigma2``
    (grid steps squared) with exact delta(epsilon; sigma2, k) <= delta is found (Brent's method on the
    exact profile, then integer steps), and ``sigma2 - 1`` is checked to fail.

    ``dimension = d > 1``: one vector query of d values with l2 sensitivity ``sensitivity``. The integer
    shift vector then has l2 norm at most ``K = D + sqrt(d)`` (rounding moves each coordinate by at most
    half a step), and the product of discrete Gaussians is ``K^2 / (2 sigma2)``-zCDP (CKS 2020, the
    multivariate discrete Gaussian);
    the plan is the smallest integer sigma2 whose zCDP-to-(epsilon, delta) bound (:func:`zcdp_log_delta`)
    meets delta, verified at the optimiser's alpha. This bound is valid but not exact (it is larger
    than the exact profile by a modest factor in sigma); the grid is refined so that sqrt(d) extra steps
    cost at most ``2**-grid_bits`` of the sensitivity.
    """
    eps, dl, sens = _check_common(epsilon, delta, sensitivity)
    dim = _check_dimension(dimension)
    if dl == 0:
        raise ValueError("the discrete Gaussian needs delta > 0 (no finite scale gives delta = 0)")
    s0 = float(minimal_scale(Gaussian(), eps, dl, sens))
    if dim > 1:
        return _calibrate_gaussian_vector(eps, dl, sens, s0, grid_bits, dim)
    e = _grid_exponent(s0, sens, grid_bits, _GAUSS_MAX_BITS)
    k = _grid_shift(sens, e)
    log_target = math.log(dl) + math.log1p(-_DELTA_MARGIN)

    cache: dict = {}

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
        if hi > _MAX_PARAM:
            raise CalibrationError("discrete Gaussian calibration: sigma2 would exceed 2**62 grid steps squared")
    from scipy.optimize import brentq

    root = brentq(f, lo, hi, xtol=0.25, rtol=1e-15) if f(lo) > 0 else lo
    n = max(1, math.ceil(root))
    while f(n) > 0:
        n += 1
    while n > 1 and f(n - 1) <= 0:
        n -= 1
    if not f(n) <= 0 or (n > 1 and not f(n - 1) > 0) or n > _MAX_PARAM:
        raise CalibrationError("discrete Gaussian calibration could not be verified")
    achieved = math.exp(float(_D.dgauss_log_delta(eps, float(n), float(k))))
    return GridRelease("gaussian", eps, dl, sens, e, k, Fraction(n), achieved)


def _calibrate_gaussian_vector(eps: float, dl: float, sens: float, s0: float, grid_bits: Any, dim: int) -> GridRelease:
    e = _grid_exponent(s0, sens / math.sqrt(dim), grid_bits, _GAUSS_MAX_BITS)
    k_norm = float(math.ceil(math.nextafter(math.ldexp(sens, -e) + math.sqrt(dim), math.inf)))  # rounded up
    log_target = math.log(dl) + math.log1p(-_DELTA_MARGIN)

    def ok(n: int) -> bool:
        return zcdp_log_delta(k_norm * k_norm / (2.0 * n), eps)[0] <= log_target

    lo = max(1, int((s0 / sens * k_norm) ** 2 * 0.5))
    while ok(lo) and lo > 1:
        lo //= 2
    hi = max(lo + 1, int((s0 / sens * k_norm) ** 2 * 2))
    while not ok(hi):
        hi *= 2
        if hi > _MAX_PARAM:
            raise CalibrationError("discrete Gaussian calibration: sigma2 would exceed 2**62 grid steps squared")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    if not ok(hi) or (hi > 1 and ok(hi - 1)):
        raise CalibrationError("discrete Gaussian calibration could not be verified")
    achieved = math.exp(zcdp_log_delta(k_norm * k_norm / (2.0 * hi), eps)[0])
    return GridRelease("gaussian", eps, dl, sens, e, int(k_norm), Fraction(hi), achieved, dim)


# ------------------------------------------------------------------------------------------------------
# Releases
# ------------------------------------------------------------------------------------------------------
def _release(plan: GridRelease, values, rng, bounds):
    x = as_float_array(values, "values")
    scalar = x.ndim == 0
    if plan.dimension > 1 and x.size != plan.dimension:
        raise ValueError(f"values has {x.size} entries but the plan was calibrated for one vector of {plan.dimension}")
    low, high = -math.inf, math.inf
    if bounds is not None:
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise TypeError("bounds must be a pair of real numbers (low, high)") from None
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ValueError("bounds must be finite with low <= high")
    x = np.ascontiguousarray(x, dtype=np.float64)
    gen, threads = _random(rng)
    p = plan.parameter
    kernel = _D.release_laplace if plan.mechanism == "laplace" else _D.release_gaussian
    # The kernel clamps to the bounds and checks every input (finite, at most 2**52 grid steps after the
    # clamp) in its combine loop, so the data are read once; on a bad input it raises and nothing is
    # returned. The messages below say which check failed.
    try:
        out = kernel(gen, x, p.numerator, p.denominator, plan.grid_exponent, low, high, threads)
    except ValueError as err:
        if "grid steps" not in str(err):
            raise
        if not np.isfinite(x).all():
            raise ValueError("values must be finite (NaN or inf given)") from None
        raise ValueError(
            f"values too large for the grid: |value| must be at most 2**52 grid steps = {plan.max_abs_value!r} "
            f"(grid 2**{plan.grid_exponent}); give bounds=(low, high) to clamp, or use a larger scale"
        ) from None
    return float(out.reshape(())) if scalar else out


def release_laplace(values, epsilon, sensitivity=1.0, delta=0.0, rng=None, bounds=None,
                    *, grid_bits: int = DEFAULT_GRID_BITS, vector: bool = False):
    """Release ``values`` with exact discrete Laplace noise on a power-of-two grid ((epsilon, delta)-DP
    per value; pure epsilon-DP for delta = 0). ``vector=True``: ``values`` is one vector query with l1
    sensitivity ``sensitivity`` (see :func:`calibrate_laplace_release`, ``dimension``)."""
    dim = max(1, int(np.size(values))) if vector else 1
    plan = calibrate_laplace_release(epsilon, sensitivity, delta, grid_bits=grid_bits, dimension=dim)
    return plan.release(values, rng, bounds)


def release_gaussian(values, epsilon, delta, sensitivity=1.0, rng=None, bounds=None,
                     *, grid_bits: int = DEFAULT_GRID_BITS, vector: bool = False):
    """Release ``values`` with exact discrete Gaussian noise on a power-of-two grid ((epsilon, delta)-DP
    per value). ``vector=True``: ``values`` is one vector query with l2 sensitivity ``sensitivity``
    (see :func:`calibrate_gaussian_release`, ``dimension``)."""
    dim = max(1, int(np.size(values))) if vector else 1
    plan = calibrate_gaussian_release(epsilon, delta, sensitivity, grid_bits=grid_bits, dimension=dim)
    return plan.release(values, rng, bounds)


def release_noise(noise: NoiseFamily, values, epsilon, delta, sensitivity=1.0, rng=None, bounds=None,
                  *, grid_bits: int = DEFAULT_GRID_BITS, vector: bool = False):
    """The safe release for a noise family: Laplace (and Subbotin(1)) -> :func:`release_laplace`,
    Gaussian (and Subbotin(2)) -> :func:`release_gaussian`; every other family raises
    :class:`ReleaseNotSupported` (this is the ``release=True`` path of the mechanisms). ``vector=True``
    treats ``values`` as one vector query (l1 sensitivity for the Laplace, l2 for the Gaussian);
    ``vector=False`` gives the guarantee per value."""
    if not isinstance(noise, NoiseFamily):
        raise TypeError(f"noise must be a pydp_core noise family, not {type(noise).__name__}")
    key = noise._key()
    if key == ("Laplace",):
        return release_laplace(values, epsilon, sensitivity, delta, rng, bounds, grid_bits=grid_bits, vector=vector)
    if key == ("Gaussian",):
        return release_gaussian(values, epsilon, delta, sensitivity, rng, bounds, grid_bits=grid_bits, vector=vector)
    raise ReleaseNotSupported(
        f"release=True is not available for {noise!r} noise: a floating-point-safe release exists only for "
        f"the Laplace and Gaussian mechanisms ({', '.join(SAFE_RELEASE_FAMILIES)}), which use exact discrete "
        "noise on a power-of-two grid. Use release=False for simulations only (floating-point noise is "
        "not differentially private against least-significant-bit attacks), or switch to Laplace or "
        "Gaussian noise for a release. See docs/discrete.md."
    )

