"""Standard (unit-scale) symmetric log-concave noise families.

Each family is a density f = exp(-psi) with psi convex and even (Vinterbo 2022, Section 2):

- :class:`Laplace`: f(x) = exp(-|x|) / 2, variance 2;
- :class:`Gaussian`: the standard normal, variance 1;
- :class:`Logistic`: f(x) = e^{-x} / (1 + e^{-x})^2, variance pi^2 / 3;
- :class:`Subbotin` (order r >= 1): f_r(x) = exp(-|x|^r / r) / C(r), C(r) = 2 Gamma(1/r) r^(1/r - 1),
  variance r^(2/r) Gamma(3/r) / Gamma(1/r). ``Subbotin(1)`` is the Laplace and ``Subbotin(2)`` the
  Gaussian family, and they give identical answers;
- :class:`Truncated`: any of the above restricted to (-bound, bound) and renormalised (the truncated
  Laplace of Geng et al. is ``Truncated(Laplace(), bound)``);
- :class:`LogConcaveFamily`: a user-defined family from its log-density and CDF (a slower, pure-Python
  path through scipy).

All methods accept scalars or arrays and return the same; the work runs in C++ with the GIL released.
A family is a noise *shape*; the scale enters in :mod:`pydp_core.calibration` and the mechanisms.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import _core
from ._validation import as_float_array, check_positive, check_probability, scalar_or_array

__all__ = ["NoiseFamily", "Laplace", "Gaussian", "Logistic", "Subbotin", "Truncated", "LogConcaveFamily"]

_Kind = _core.noise.Kind


def _points(x: Any, name: str = "x") -> np.ndarray:
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
        return scalar_or_array(self._family.logpdf(_points(x)), x)

    def pdf(self, x):
        """f(x)."""
        return scalar_or_array(self._family.pdf(_points(x)), x)

    def cdf(self, x):
        """P(X <= x)."""
        return scalar_or_array(self._family.cdf(_points(x)), x)

    def sf(self, x):
        """P(X > x), accurate in the upper tail."""
        return scalar_or_array(self._family.sf(_points(x)), x)

    def logcdf(self, x):
        """log P(X <= x), finite deep into the lower tail."""
        return scalar_or_array(self._family.logcdf(_points(x)), x)

    def logsf(self, x):
        """log P(X > x), finite deep into the upper tail."""
        return scalar_or_array(self._family.logsf(_points(x)), x)

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


class Truncated(NoiseFamily):
    """``base`` restricted to (-bound, bound) and renormalised (in the base family's units).

    Bounded support changes the privacy analysis (Lemma 1 with a < inf): the mechanism can never reach
    delta = 0, and shifts of 2 * bound or more are not private for any delta < 1.
    """

    def __init__(self, base: NoiseFamily, bound: float) -> None:
        if not isinstance(base, (Laplace, Gaussian, Logistic, Subbotin)):
            raise TypeError("base must be Laplace(), Gaussian(), Logistic() or Subbotin(r)")
        b = check_positive(bound, "bound")
        if b.ndim != 0:
            raise TypeError("bound must be a scalar")
        self.base = base
        self.bound = float(b)
        kind = base._family.kind
        r = base.r if isinstance(base, Subbotin) else 0.0
        self._family = _core.noise.Family(kind, r, self.bound)
        self._variance: float | None = None

    @property
    def variance(self) -> float:
        if self._variance is None:
            from scipy import integrate

            mass, _ = integrate.quad(lambda x: x * x * float(self.pdf(x)), 0.0, self.bound, limit=200)
            self._variance = 2.0 * mass
        return self._variance

    @property
    def mlr_bounded(self) -> bool:
        return self.base.mlr_bounded

    def _key(self) -> tuple:
        return ("Truncated", self.base._key(), self.bound)

    def __repr__(self) -> str:
        return f"Truncated({self.base!r}, bound={self.bound:g})"


class LogConcaveFamily(NoiseFamily):
    """A user-defined standard symmetric log-concave family (pure Python; slower than the built-ins).

    Parameters
    ----------
    logpdf, cdf:
        Vectorised callables for log f and the CDF F. By symmetry the survival function is F(-x), so
        give a CDF that is accurate in its lower tail. ``logcdf`` (optional) improves tail accuracy.
    bound:
        Support half-width a (support (-a, a)); ``inf`` for full support.
    variance:
        Var(X), if known; otherwise it is integrated numerically.
    mlr_bounded:
        Whether psi(z) - psi(z - d) stays bounded as z grows (as for the Laplace and Logistic). Used to
        decide whether delta = 0 is reachable.

    The constructor checks symmetry and log-concavity on a grid and raises ``ValueError`` if either
    fails.
    """

    def __init__(
        self,
        logpdf: Callable[[np.ndarray], np.ndarray],
        cdf: Callable[[np.ndarray], np.ndarray],
        *,
        logcdf: Callable[[np.ndarray], np.ndarray] | None = None,
        bound: float = math.inf,
        variance: float | None = None,
        mlr_bounded: bool = False,
        name: str = "custom",
    ) -> None:
        if not callable(logpdf):
            raise TypeError("logpdf must be callable")
        if not callable(cdf):
            raise TypeError("cdf must be callable")
        if logcdf is not None and not callable(logcdf):
            raise TypeError("logcdf must be callable")
        b = check_positive(bound, "bound", allow_inf=True)
        self._logpdf = logpdf
        self._cdf = cdf
        self._logcdf = logcdf
        self.bound = float(b)
        self._variance = variance
        self._mlr_bounded = bool(mlr_bounded)
        self.name = name
        self._check_shape()

    def _check_shape(self) -> None:
        lim = min(self.bound, 20.0) * (1 - 1e-9)
        x = np.linspace(-lim, lim, 401)
        lp = np.asarray(self._logpdf(x), dtype=float)
        if lp.shape != x.shape:
            raise ValueError("logpdf must be vectorised: it returned a different shape")
        if np.isnan(lp).any():
            raise ValueError("logpdf returned NaN inside the support")
        if not np.allclose(lp, lp[::-1], rtol=1e-9, atol=1e-12):
            raise ValueError("logpdf is not symmetric: f(x) != f(-x)")
        finite = np.isfinite(lp)
        second = lp[finite][:-2] - 2 * lp[finite][1:-1] + lp[finite][2:]
        if (second > 1e-9 * (1 + np.abs(lp[finite][1:-1]))).any():
            raise ValueError("logpdf is not concave: the family is not log-concave")
        c = np.asarray(self._cdf(np.array([-lim, 0.0, lim])), dtype=float)
        if not (abs(c[1] - 0.5) < 1e-9 and c[0] <= c[1] <= c[2]):
            raise ValueError("cdf is not the CDF of a symmetric density (cdf(0) must be 1/2)")

    # Evaluation in Python.
    def logpdf(self, x):
        arr = _points(x)
        out = np.asarray(self._logpdf(arr), dtype=float)
        out = np.where(np.abs(arr) >= self.bound, -np.inf, out)
        return scalar_or_array(out, x)

    def pdf(self, x):
        return scalar_or_array(np.exp(np.asarray(self.logpdf(x))), x)

    def logcdf(self, x):
        arr = _points(x)
        if self._logcdf is not None:
            out = np.asarray(self._logcdf(arr), dtype=float)
        else:
            with np.errstate(divide="ignore"):
                out = np.log(np.asarray(self._cdf(arr), dtype=float))
        return scalar_or_array(out, x)

    def logsf(self, x):
        return scalar_or_array(np.asarray(self.logcdf(-_points(x))), x)

    def cdf(self, x):
        return scalar_or_array(np.asarray(self._cdf(_points(x)), dtype=float), x)

    def sf(self, x):
        return scalar_or_array(np.asarray(self._cdf(-_points(x)), dtype=float), x)

    def ppf(self, q):
        from scipy import optimize

        qq = check_probability(q, "q")
        lim = self.bound if math.isfinite(self.bound) else 1e300

        def one(p: float) -> float:
            if p == 0.0:
                return -lim
            if p == 1.0:
                return lim
            lo, hi = -1.0, 1.0
            while float(self._cdf(np.array([lo]))[0]) > p:
                lo *= 2
            while float(self._cdf(np.array([hi]))[0]) < p:
                hi *= 2
            return optimize.brentq(lambda z: float(self._cdf(np.array([z]))[0]) - p, lo, hi, xtol=1e-300, rtol=1e-15)

        out = np.vectorize(one, otypes=[float])(qq)
        return scalar_or_array(out, q)

    @property
    def variance(self) -> float:
        if self._variance is None:
            from scipy import integrate

            m, _ = integrate.quad(lambda x: x * x * math.exp(float(self._logpdf(np.array([x]))[0])), 0, self.bound, limit=200)
            self._variance = 2 * m
        return float(self._variance)

    @property
    def mlr_bounded(self) -> bool:
        return self._mlr_bounded

    @property
    def support_bound(self) -> float:
        return self.bound

    def psi_diff(self, u: float, d: float) -> float:
        """psi(u) - psi(u - d) = log f(u - d) - log f(u)."""
        lp = np.asarray(self._logpdf(np.array([u - d, u])), dtype=float)
        return float(lp[0] - lp[1])

    def _key(self) -> tuple:
        return ("LogConcaveFamily", id(self))

    def __repr__(self) -> str:
        return f"LogConcaveFamily(name={self.name!r}, bound={self.bound:g})"
