"""Rao differential privacy (Anonymous 2022): Fisher-Rao distances and theta-Rao-DP calibration.

A mechanism is theta-Rao-DP when the Fisher-Rao (Rao) distance between its output distributions on
adjacent datasets is at most theta; budgets compose as sqrt(sum theta_i^2) (Table 1; use
:func:`pydp_core.compose` on :class:`pydp_core.RaoDP` values).

Two different distances, named so they cannot be confused (``docs/accounting.md``):

- the *parametric* distance inside a family, :func:`normal_distance` (the 2-parameter normal family)
  and :func:`location_distance` (location families with a common, fixed scale, the one the mechanisms
  use); these define Rao DP for the mechanisms;
- the *non-parametric* distance 2 arccos(integral sqrt(p q)) between any two densities,
  :func:`nonparametric_distance` (used in the post-processing proof); it is never larger than the
  parametric one.

Corrections to the paper (derived in ``docs/accounting.md``): the Laplace distance is ||mu1 - mu2|| / b (Theorem 4.2 prints a
square root of the scale); the generalised Gaussian's Fisher information is
I = r^(2 - 2/r) Gamma(2 - 1/r) / (s^2 Gamma(1/r)) in the Subbotin parametrisation; the normal closed
form has prefactor sqrt 2.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .._validation import (
    broadcast,
    check_finite,
    check_int,
    check_nonneg_scalar,
    check_positive,
    check_positive_scalar,
    real_scalar,
    scalar_or_array,
)
from ..noise import Gaussian, Laplace, NoiseFamily  # noqa: F401 (Gaussian, Laplace: the Examples)
from .budgets import (
    RaoDP,
)

__all__ = [
    "normal_distance",
    "location_distance",
    "nonparametric_distance",
    "fisher_information",
    "theta",
    "calibrate",
]


def normal_distance(mu1: ArrayLike, sigma1: ArrayLike, mu2: ArrayLike, sigma2: ArrayLike) -> Any:
    """The Fisher-Rao distance between N(mu1, sigma1^2) and N(mu2, sigma2^2) (Example 1, corrected).

    The normal family with metric (dmu^2 + 2 dsigma^2) / sigma^2 is a scaled Poincare half-plane:
    d = sqrt(2) log((A + B) / (A - B)), A = sqrt(dmu^2 + 2 (s1 + s2)^2), B = sqrt(dmu^2 + 2 (s1 - s2)^2),
    evaluated as sqrt(2) arccosh(1 + z) = sqrt(2) log1p(z + sqrt(z (z + 2))),
    z = (dmu^2 / 2 + (s1 - s2)^2) / (2 s1 s2), which keeps its digits for nearby distributions.
    Special cases: equal means give sqrt(2) |log(s2 / s1)|. Equal sigmas do *not* give |dmu| / sigma:
    that is the distance inside the one-parameter family with sigma fixed (:func:`location_distance`),
    which is larger (N(0,1) to N(1,1): 1 there, sqrt(2) log 2 = 0.980 here).

    Parameters
    ----------
    mu1, mu2 : float or array_like
        The means, finite.
    sigma1, sigma2 : float or array_like
        The standard deviations, > 0 and finite.

    Returns
    -------
    float or ndarray
        The Fisher-Rao distance in the two-parameter normal family.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.

    Examples
    --------
    >>> normal_distance(0.0, 1.0, 1.0, 1.0)
    0.98025814346...
    """
    m1 = check_finite(mu1, "mu1")
    m2 = check_finite(mu2, "mu2")
    s1 = check_positive(sigma1, "sigma1")
    s2 = check_positive(sigma2, "sigma2")
    m1, s1, m2, s2 = broadcast(mu1=m1, sigma1=s1, mu2=m2, sigma2=s2)
    dm = m1 - m2
    ds = s1 - s2
    # z = (dm^2/2 + ds^2) / (2 s1 s2), formed with scaled terms to avoid overflow
    z = (0.5 * dm / s1 * (dm / s2) + ds / s1 * (ds / s2)) / 2.0
    out = math.sqrt(2.0) * np.log1p(z + np.sqrt(z * (z + 2.0)))
    return scalar_or_array(out, mu1, sigma1, mu2, sigma2)


def unit_information(noise: NoiseFamily) -> float:
    """The Fisher information of the location of the unit-scale family ``noise``.

    1 for the Laplace and the Gaussian; 1/3 for the Logistic; r^(2 - 2/r) Gamma(2 - 1/r) / Gamma(1/r) for
    Subbotin_r, whose density is exp(-|z|^r / r) / C(r) (Anonymous 2022, with the correction of
    ``docs/accounting.md``).
    """
    if isinstance(noise, NoiseFamily):
        return noise.fisher_information
    raise TypeError(f"noise must be Laplace(), Gaussian(), Logistic() or Subbotin(r), got {type(noise).__name__}")


def fisher_information(noise: NoiseFamily, scale: ArrayLike = 1.0) -> Any:
    """The Fisher information of the location of ``scale * X`` for X from ``noise``.

    Parameters
    ----------
    noise : NoiseFamily
        ``Laplace()``, ``Gaussian()``, ``Logistic()`` or ``Subbotin(r)``.
    scale : float or array_like
        The scale (> 0, finite).

    Returns
    -------
    float or ndarray
        ``unit_information(noise) / scale**2``.

    Raises
    ------
    TypeError
        If the Fisher information of ``noise`` is not implemented.
    ValueError
        If ``scale`` is not positive and finite.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian, Subbotin
    >>> fisher_information(Gaussian(), 2.0)
    0.25
    >>> fisher_information(Subbotin(3.0), 2.0)
    0.36450556647...
    """
    unit = unit_information(noise)
    s = check_positive(scale, "scale")
    return scalar_or_array(unit / (s * s), scale)


def location_distance(noise: NoiseFamily, loc1: ArrayLike, loc2: ArrayLike, scale: float) -> float:
    """The Rao distance between ``loc1 + scale X`` and ``loc2 + scale X`` (common, fixed scale).

    ||loc1 - loc2||_2 sqrt(I scale^2) / scale (Theorems 4.2, 4.6, E.1 corrected): the one-parameter
    location family has a flat metric, and iid coordinates form a product manifold, so vector locations
    (1-D arrays of one length) give the Euclidean norm of the difference times sqrt(I).

    Parameters
    ----------
    noise : NoiseFamily
        ``Laplace()``, ``Gaussian()``, ``Logistic()`` or ``Subbotin(r)``.
    loc1, loc2 : float or array_like
        The locations: scalars or 1-D arrays of one length, finite.
    scale : float
        The common scale, > 0 and finite.

    Returns
    -------
    float
        The Rao distance.

    Raises
    ------
    TypeError
        If the Fisher information of ``noise`` is not implemented.
    ValueError
        If the locations have different shapes or more than one dimension, or an argument is out of range.

    Examples
    --------
    >>> from pydp_core.noise import Laplace
    >>> location_distance(Laplace(), 0.0, 1.0, 2.0)
    0.5
    """
    root = math.sqrt(unit_information(noise))
    a = check_finite(loc1, "loc1")
    b = check_finite(loc2, "loc2")
    if a.ndim > 1 or b.ndim > 1:
        raise ValueError("loc1 and loc2 must be scalars or 1-D arrays")
    if a.shape != b.shape:
        raise ValueError(f"loc1 and loc2 must have the same shape ({a.shape} != {b.shape})")
    s = check_positive_scalar(scale, "scale")
    diff = np.abs(a - b).reshape(-1)
    m = float(diff.max()) if diff.size else 0.0
    norm = 0.0 if m == 0 else m * math.sqrt(math.fsum((diff / m) ** 2))
    return norm / s * root


def theta(noise: NoiseFamily, *, sensitivity: float = 1.0, scale: float) -> RaoDP:
    """The Rao-DP budget of the mechanism q + scale X at l2 sensitivity D: theta = D sqrt(I).

    Parameters
    ----------
    noise : NoiseFamily
        ``Laplace()``, ``Gaussian()``, ``Logistic()`` or ``Subbotin(r)``.
    sensitivity : float, optional
        The l2 sensitivity D, >= 0 and finite (default 1).
    scale : float
        The noise scale, > 0 and finite.

    Returns
    -------
    RaoDP
        theta = (D / scale) sqrt(I scale^2).

    Raises
    ------
    TypeError
        If the Fisher information of ``noise`` is not implemented.
    ValueError
        If an argument is out of range or NaN.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian
    >>> theta(Gaussian(), scale=4.0)
    RaoDP(theta=0.25)
    """
    root = math.sqrt(unit_information(noise))
    s = check_positive_scalar(scale, "scale")
    d = check_nonneg_scalar(sensitivity, "sensitivity")
    return RaoDP(d / s * root)


def calibrate(noise: NoiseFamily, *, theta: float, sensitivity: float = 1.0, dimension: int = 1) -> float:
    """The smallest scale making ``q + scale X`` theta-Rao-DP (Theorems 4.4, 4.8, E.3, F.2, F.4).

    scale = D sqrt(I scale^2) / theta, with I the (corrected) Fisher information: D / theta for the
    Laplace (scale b) and the Gaussian (standard deviation sigma); for Subbotin_r the factor
    sqrt(r^(2-2/r) Gamma(2-1/r) / Gamma(1/r)). For a ``dimension``-dimensional query with iid noise in
    each coordinate, D is the l2 sensitivity (the product-manifold distance is the l2 norm of the
    per-coordinate distances, Theorems F.2 and F.4), and the scale does not depend on ``dimension``
    beyond that.

    Parameters
    ----------
    noise : NoiseFamily
        ``Laplace()``, ``Gaussian()``, ``Logistic()`` or ``Subbotin(r)``.
    theta : float
        The Rao-DP budget, > 0 and finite.
    sensitivity : float, optional
        The l2 sensitivity D, > 0 and finite (default 1).
    dimension : int, optional
        The number of coordinates (>= 1, default 1).

    Returns
    -------
    float
        The scale.

    Raises
    ------
    TypeError
        If the Fisher information of ``noise`` is not implemented, or ``dimension`` is not an integer.
    ValueError
        If an argument is out of range or NaN.

    Examples
    --------
    >>> from pydp_core.noise import Laplace, Subbotin
    >>> calibrate(Laplace(), theta=0.5)
    2.0
    >>> calibrate(Subbotin(3.0), theta=0.5)
    2.41497185564...
    """
    root = math.sqrt(unit_information(noise))
    th = check_positive_scalar(theta, "theta")
    d = check_positive_scalar(sensitivity, "sensitivity")
    check_int(dimension, "dimension", 1)
    return d * root / th


def nonparametric_distance(
    pdf1: Callable[[float], float],
    pdf2: Callable[[float], float],
    lower: float = -math.inf,
    upper: float = math.inf,
    *,
    points: list[float] | None = None,
    epsabs: float = 1e-13,
    epsrel: float = 1e-11,
) -> float:
    """The non-parametric Fisher-Rao distance 2 arccos(integral sqrt(p q)) between two 1-D densities.

    Computed by adaptive quadrature (scipy.integrate.quad) of the squared Hellinger integrand
    (sqrt p - sqrt q)^2, h2 = 2 (1 - BC), and returned as 4 arcsin(sqrt(h2) / 2), the same number as
    2 arccos(BC) without the loss of digits of arccos near 1. ``points``: break points of the
    integrand (kinks, e.g. the two locations of Laplace densities) for quad. This is the distance on
    the sphere of half-densities; it is never larger than the parametric distance of a family
    (:func:`normal_distance`, :func:`location_distance`).

    Parameters
    ----------
    pdf1, pdf2 : callable
        The two densities, scalar x -> f(x) >= 0.
    lower, upper : float, optional
        The integration range (default the real line).
    points : list of float, optional
        Break points of the integrand.
    epsabs, epsrel : float, optional
        The quadrature tolerances.

    Returns
    -------
    float
        The distance, in [0, pi].

    Raises
    ------
    TypeError
        If a density is not callable.
    ValueError
        If ``lower >= upper`` or a density returns a negative value or NaN.

    Examples
    --------
    >>> from scipy import stats
    >>> nonparametric_distance(stats.norm(0, 1).pdf, stats.norm(1, 1).pdf)
    0.97930264093...
    """
    from scipy import integrate

    if not callable(pdf1) or not callable(pdf2):
        raise TypeError("pdf1 and pdf2 must be callables returning a density value")
    lo = real_scalar(lower, "lower")
    hi = real_scalar(upper, "upper")
    if not lo < hi:
        raise ValueError("lower must be < upper")

    def integrand(x: float) -> float:
        p = float(pdf1(x))
        q = float(pdf2(x))
        if p < 0 or q < 0 or math.isnan(p) or math.isnan(q):
            raise ValueError(f"the densities must be >= 0 (got {p!r}, {q!r} at x = {x!r})")
        return (math.sqrt(p) - math.sqrt(q)) ** 2

    pts = sorted(float(p) for p in points) if points else []
    edges = [lo, *[p for p in pts if lo < p < hi], hi]
    h2 = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        val, _err = integrate.quad(integrand, a, b, epsabs=epsabs, epsrel=epsrel, limit=400)
        h2 += val
    h2 = min(max(h2, 0.0), 2.0)
    return 4.0 * math.asin(math.sqrt(h2) / 2.0)
