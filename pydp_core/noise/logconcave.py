"""User-defined symmetric log-concave noise families (pure Python and scipy; slower than the built-ins)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_positive_scalar, check_probability, scalar_or_array
from .families import NoiseFamily, as_points


class LogConcaveFamily(NoiseFamily):
    """A user-defined standard symmetric log-concave family (pure Python; slower than the built-ins).

    The calibration functions of :mod:`pydp_core.calibration` accept it and evaluate the privacy
    condition of Vinterbo (2022), Lemma 1, with scipy root finders. The constructor checks symmetry and
    log-concavity on a grid and raises ``ValueError`` if either fails.

    Parameters
    ----------
    logpdf : callable
        Vectorised log f.
    cdf : callable
        Vectorised CDF F. By symmetry the survival function is F(-x), so give a CDF that is accurate in
        its lower tail.
    logcdf : callable, optional
        Vectorised log F; improves the tail accuracy.
    bound : float, optional
        Support half-width a (support (-a, a)); ``inf`` (default) for full support.
    variance : float, optional
        Var(X), if known; otherwise it is integrated numerically.
    mlr_bounded : bool, optional
        Whether psi(z) - psi(z - d) stays bounded as z grows (as for the Laplace and Logistic). Used to
        decide whether delta = 0 is reachable.
    name : str, optional
        A label for ``repr``.

    Examples
    --------
    >>> import numpy as np
    >>> fam = LogConcaveFamily(
    ...     lambda x: -x - 2 * np.logaddexp(0.0, -x),          # the standard Logistic
    ...     lambda x: 1 / (1 + np.exp(-x)),
    ...     mlr_bounded=True, name="logistic")
    >>> fam.cdf(1.0)
    0.73105857863...
    >>> fam.ppf(0.75)
    1.09861228866...
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
        self._logpdf = logpdf
        self._cdf = cdf
        self._logcdf = logcdf
        self.bound = check_positive_scalar(bound, "bound", allow_inf=True)
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
    def logpdf(self, x: ArrayLike) -> Any:
        """log f(x) (-inf outside the support)."""
        arr = as_points(x)
        out = np.asarray(self._logpdf(arr), dtype=float)
        out = np.where(np.abs(arr) >= self.bound, -np.inf, out)
        return scalar_or_array(out, x)

    def pdf(self, x: ArrayLike) -> Any:
        """f(x)."""
        return scalar_or_array(np.exp(np.asarray(self.logpdf(x))), x)

    def logcdf(self, x: ArrayLike) -> Any:
        """log P(X <= x), from ``logcdf`` if given, else log of ``cdf``."""
        arr = as_points(x)
        if self._logcdf is not None:
            out = np.asarray(self._logcdf(arr), dtype=float)
        else:
            with np.errstate(divide="ignore"):
                out = np.log(np.asarray(self._cdf(arr), dtype=float))
        return scalar_or_array(out, x)

    def logsf(self, x: ArrayLike) -> Any:
        """log P(X > x) = log F(-x)."""
        return scalar_or_array(np.asarray(self.logcdf(-as_points(x))), x)

    def cdf(self, x: ArrayLike) -> Any:
        """P(X <= x)."""
        return scalar_or_array(np.asarray(self._cdf(as_points(x)), dtype=float), x)

    def sf(self, x: ArrayLike) -> Any:
        """P(X > x) = F(-x)."""
        return scalar_or_array(np.asarray(self._cdf(-as_points(x)), dtype=float), x)

    def ppf(self, q: ArrayLike) -> Any:
        """Inverse CDF by bracketing and Brent's method; q must lie in [0, 1]."""
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
            return float(
                optimize.brentq(lambda z: float(self._cdf(np.array([z]))[0]) - p, lo, hi, xtol=1e-300, rtol=1e-15)
            )

        out = np.vectorize(one, otypes=[float])(qq)
        return scalar_or_array(out, q)

    @property
    def variance(self) -> float:
        """Var(X): the given value, or the integral of x^2 f(x) (computed once)."""
        if self._variance is None:
            from scipy import integrate

            def moment(x: float) -> float:
                return x * x * math.exp(float(self._logpdf(np.array([x]))[0]))

            m, _ = integrate.quad(moment, 0, self.bound, limit=200)
            self._variance = 2 * m
        return float(self._variance)

    @property
    def mlr_bounded(self) -> bool:
        """Whether the likelihood ratio of shifted copies is bounded (as declared by the user)."""
        return self._mlr_bounded

    @property
    def support_bound(self) -> float:
        """a with support (-a, a); inf for full support."""
        return self.bound

    def psi_diff(self, u: float, d: float) -> float:
        """psi(u) - psi(u - d) = log f(u - d) - log f(u)."""
        lp = np.asarray(self._logpdf(np.array([u - d, u])), dtype=float)
        return float(lp[0] - lp[1])

    @property
    def identity(self) -> tuple[Any, ...]:
        return ("LogConcaveFamily", id(self))

    def __repr__(self) -> str:
        return f"LogConcaveFamily(name={self.name!r}, bound={self.bound:g})"
