"""The standard symmetric log-concave noise families: Laplace, Gaussian, Logistic and Subbotin_r.

Each is a distribution of unit scale with scipy-like methods (pdf, logpdf, cdf, sf, logcdf, logsf, ppf,
isf, variance) evaluated in C++ (``csrc/include/pydp/noise/families.hpp``), exact in the deep tails. The
tails and the special functions behind them are described in ``docs/noise.md``.
"""
from __future__ import annotations

import math
from typing import Any, Tuple, overload

import numpy as np
from numpy.typing import ArrayLike

from .._core import noise as _cnoise
from .._validation import as_float_array, check_probability, check_subbotin_order, scalar_or_array

_Kind = _cnoise.Kind


def as_points(x: ArrayLike, name: str = "x") -> np.ndarray:
    """``x`` as a C-contiguous float64 array of evaluation points (NaN is a ValueError naming ``name``)."""
    arr = as_float_array(x, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    return np.ascontiguousarray(arr)


class NoiseFamily:
    """A standard (unit-scale) symmetric log-concave density f = exp(-psi), psi convex and even.

    The base class of the families; subclasses hold the C++ object. Every method takes a scalar or an
    array and returns a float or an array of the same shape.

    Examples
    --------
    >>> from pydp_core.noise import Laplace
    >>> isinstance(Laplace(), NoiseFamily)
    True
    >>> Laplace().sf(1.0)
    0.18393972058...
    """

    _family: Any = None

    # -- evaluation ----------------------------------------------------------------------------------
    @overload
    def logpdf(self, x: float) -> float: ...
    @overload
    def logpdf(self, x: ArrayLike) -> Any: ...
    def logpdf(self, x: ArrayLike) -> Any:
        """log f(x)."""
        return scalar_or_array(self._family.logpdf(as_points(x)), x)

    @overload
    def pdf(self, x: float) -> float: ...
    @overload
    def pdf(self, x: ArrayLike) -> Any: ...
    def pdf(self, x: ArrayLike) -> Any:
        """f(x)."""
        return scalar_or_array(self._family.pdf(as_points(x)), x)

    @overload
    def cdf(self, x: float) -> float: ...
    @overload
    def cdf(self, x: ArrayLike) -> Any: ...
    def cdf(self, x: ArrayLike) -> Any:
        """P(X <= x)."""
        return scalar_or_array(self._family.cdf(as_points(x)), x)

    @overload
    def sf(self, x: float) -> float: ...
    @overload
    def sf(self, x: ArrayLike) -> Any: ...
    def sf(self, x: ArrayLike) -> Any:
        """P(X > x), accurate in the upper tail."""
        return scalar_or_array(self._family.sf(as_points(x)), x)

    @overload
    def logcdf(self, x: float) -> float: ...
    @overload
    def logcdf(self, x: ArrayLike) -> Any: ...
    def logcdf(self, x: ArrayLike) -> Any:
        """log P(X <= x), finite deep into the lower tail."""
        return scalar_or_array(self._family.logcdf(as_points(x)), x)

    @overload
    def logsf(self, x: float) -> float: ...
    @overload
    def logsf(self, x: ArrayLike) -> Any: ...
    def logsf(self, x: ArrayLike) -> Any:
        """log P(X > x), finite deep into the upper tail."""
        return scalar_or_array(self._family.logsf(as_points(x)), x)

    @overload
    def ppf(self, q: float) -> float: ...
    @overload
    def ppf(self, q: ArrayLike) -> Any: ...
    def ppf(self, q: ArrayLike) -> Any:
        """Inverse CDF; q must lie in [0, 1]."""
        return scalar_or_array(self._family.ppf(np.ascontiguousarray(check_probability(q, "q"))), q)

    @overload
    def isf(self, q: float) -> float: ...
    @overload
    def isf(self, q: ArrayLike) -> Any: ...
    def isf(self, q: ArrayLike) -> Any:
        """Inverse survival function, accurate for small q (by symmetry, -ppf(q))."""
        return scalar_or_array(-np.asarray(self.ppf(q)), q)

    # -- properties ----------------------------------------------------------------------------------
    @property
    def variance(self) -> float:
        """Var(X) of the unit-scale family."""
        return float(self._family.variance)

    @property
    def std(self) -> float:
        """The standard deviation sqrt(Var(X)) of the unit-scale family."""
        return math.sqrt(self.variance)

    @property
    def mlr_bounded(self) -> bool:
        """True if the likelihood ratio of shifted copies is bounded (the family reaches (eps, 0)-DP)."""
        return bool(self._family.mlr_bounded)

    @property
    def support_bound(self) -> float:
        """a with support (-a, a); inf for full support."""
        return float(self._family.bound)

    def _key(self) -> Tuple[Any, ...]:
        return (type(self).__name__,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoiseFamily) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class Laplace(NoiseFamily):
    """Standard Laplace noise, ``f(x) = exp(-|x|) / 2``; variance 2, tails e^-x / 2.

    Examples
    --------
    >>> Laplace().variance
    2.0
    >>> Laplace().sf(1.0)
    0.18393972058...
    """

    def __init__(self) -> None:
        self._family = _cnoise.Family(_Kind.Laplace)

    def __repr__(self) -> str:
        return "Laplace()"


class Gaussian(NoiseFamily):
    """Standard Gaussian noise N(0, 1); its log tails stay finite far below the double range.

    Examples
    --------
    >>> Gaussian().logsf(40.0)
    -804.60844201...
    >>> Gaussian().isf(1e-10)
    6.36134090240...
    """

    def __init__(self) -> None:
        self._family = _cnoise.Family(_Kind.Gaussian)

    def __repr__(self) -> str:
        return "Gaussian()"


class Logistic(NoiseFamily):
    """Standard Logistic noise, f(x) = e^{-x} / (1 + e^{-x})^2; variance pi^2 / 3.

    Examples
    --------
    >>> Logistic().pdf(0.0)
    0.25
    >>> Logistic().variance
    3.28986813369...
    """

    def __init__(self) -> None:
        self._family = _cnoise.Family(_Kind.Logistic)

    def __repr__(self) -> str:
        return "Logistic()"


class Subbotin(NoiseFamily):
    """Standard Subbotin_r noise, ``f_r(x) = exp(-|x|^r / r) / C(r)``, for order r >= 1 (log-concave).

    C(r) = 2 Gamma(1/r) r^(1/r - 1); the tail is P(X > x) = Q(1/r, x^r / r) / 2 with Q the regularised
    upper incomplete gamma function. ``Subbotin(1)`` equals :class:`Laplace` and ``Subbotin(2)`` equals
    :class:`Gaussian`.

    Parameters
    ----------
    r : float
        The order, finite and >= 1.

    Examples
    --------
    >>> Subbotin(3.0).variance
    0.77645821137...
    >>> Subbotin(2.0) == Gaussian()
    True
    """

    def __init__(self, r: float) -> None:
        self.r = check_subbotin_order(r)
        self._family = _cnoise.Family(_Kind.Subbotin, self.r)

    def _key(self) -> Tuple[Any, ...]:
        # Subbotin(1) == Laplace() and Subbotin(2) == Gaussian() as densities.
        if self.r == 1.0:
            return ("Laplace",)
        if self.r == 2.0:
            return ("Gaussian",)
        return ("Subbotin", self.r)

    def __repr__(self) -> str:
        return f"Subbotin(r={self.r:g})"
