"""The standard symmetric log-concave noise families: Laplace, Gaussian, Logistic and Subbotin_r.

Each is a distribution of unit scale with scipy-like methods (pdf, logpdf, cdf, sf, logcdf, logsf, ppf,
isf, variance) evaluated in C++ (``csrc/include/pydp/noise/families.hpp``), exact in the deep tails.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _core
from .._validation import as_float_array, check_probability, scalar_or_array

_Kind = _core.noise.Kind


def as_points(x: Any, name: str = "x") -> np.ndarray:
    arr = as_float_array(x, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    return np.ascontiguousarray(arr)


class NoiseFamily:
    """A standard symmetric log-concave density. Subclasses set ``_family`` (the C++ object)."""

    _family: Any = None

    # -- evaluation ----------------------------------------------------------------------------------
    def logpdf(self, x):
        """log f(x)."""
        return scalar_or_array(self._family.logpdf(as_points(x)), x)

    def pdf(self, x):
        """f(x)."""
        return scalar_or_array(self._family.pdf(as_points(x)), x)

    def cdf(self, x):
        """P(X <= x)."""
        return scalar_or_array(self._family.cdf(as_points(x)), x)

    def sf(self, x):
        """P(X > x), accurate in the upper tail."""
        return scalar_or_array(self._family.sf(as_points(x)), x)

    def logcdf(self, x):
        """log P(X <= x), finite deep into the lower tail."""
        return scalar_or_array(self._family.logcdf(as_points(x)), x)

    def logsf(self, x):
        """log P(X > x), finite deep into the upper tail."""
        return scalar_or_array(self._family.logsf(as_points(x)), x)

    def ppf(self, q):
        """Inverse CDF; q must lie in [0, 1]."""
        return scalar_or_array(self._family.ppf(np.ascontiguousarray(check_probability(q, "q"))), q)

    def isf(self, q):
        """Inverse survival function, accurate for small q."""
        qq = check_probability(q, "q")
        return scalar_or_array(-self._family.ppf(np.ascontiguousarray(qq)), q)

    # -- properties ----------------------------------------------------------------------------------
    @property
    def variance(self) -> float:
        """Var(X) of the unit-scale family."""
        return float(self._family.variance)

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)

    @property
    def mlr_bounded(self) -> bool:
        """True if the likelihood ratio of shifted copies is bounded (the family reaches (eps, 0)-DP)."""
        return bool(self._family.mlr_bounded)

    @property
    def support_bound(self) -> float:
        """a with support (-a, a); inf for full support."""
        return float(self._family.bound)

    def _key(self) -> tuple:
        return (type(self).__name__,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoiseFamily) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class Laplace(NoiseFamily):
    """Standard Laplace noise, f(x) = exp(-|x|) / 2."""

    def __init__(self) -> None:
        self._family = _core.noise.Family(_Kind.Laplace)

    def __repr__(self) -> str:
        return "Laplace()"


class Gaussian(NoiseFamily):
    """Standard Gaussian noise N(0, 1)."""

    def __init__(self) -> None:
        self._family = _core.noise.Family(_Kind.Gaussian)

    def __repr__(self) -> str:
        return "Gaussian()"


class Logistic(NoiseFamily):
    """Standard Logistic noise, f(x) = e^{-x} / (1 + e^{-x})^2."""

    def __init__(self) -> None:
        self._family = _core.noise.Family(_Kind.Logistic)

    def __repr__(self) -> str:
        return "Logistic()"


class Subbotin(NoiseFamily):
    """Standard Subbotin_r noise, f_r(x) = exp(-|x|^r / r) / C(r), for order r >= 1 (log-concave).

    ``Subbotin(1)`` equals :class:`Laplace` and ``Subbotin(2)`` equals :class:`Gaussian`.
    """

    def __init__(self, r: float) -> None:
        rr = as_float_array(r, "r")
        if rr.ndim != 0:
            raise TypeError("r must be a scalar")
        r = float(rr)
        if math.isnan(r) or math.isinf(r) or r < 1.0:
            raise ValueError(f"r must be finite and >= 1 (log-concavity), got {r}")
        self.r = r
        self._family = _core.noise.Family(_Kind.Subbotin, r)

    def _key(self) -> tuple:
        # Subbotin(1) == Laplace() and Subbotin(2) == Gaussian() as densities.
        if self.r == 1.0:
            return ("Laplace",)
        if self.r == 2.0:
            return ("Gaussian",)
        return ("Subbotin", self.r)

    def __repr__(self) -> str:
        return f"Subbotin(r={self.r:g})"


