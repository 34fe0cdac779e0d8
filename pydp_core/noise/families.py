"""The standard symmetric log-concave noise families: Laplace, Gaussian, Logistic and Subbotin_r.

Each is a distribution of unit scale with scipy-like methods (pdf, logpdf, cdf, sf, logcdf, logsf, ppf,
isf, variance) evaluated in C++ (``csrc/include/pydp/noise/families.hpp``), exact in the deep tails. The
tails and the special functions behind them are described in ``docs/noise.md``.
"""
from __future__ import annotations

import math
from typing import Any, overload

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

    The base class of the families; subclasses hold the C++ object, :attr:`kernel`. Every method takes a
    scalar or an array and returns a float or an array of the same shape.

    Examples
    --------
    >>> from pydp_core.noise import Laplace
    >>> isinstance(Laplace(), NoiseFamily)
    True
    >>> Laplace().sf(1.0)
    0.18393972058...
    """

    _kernel: Any = None

    @property
    def kernel(self) -> Any:
        """The C++ ``pydp::noise::Family`` of this density (``csrc/include/pydp/noise/families.hpp``).

        The handle that other pydp_core modules pass to the compiled kernels (calibration, accounting);
        None for a family evaluated in Python (:class:`~pydp_core.noise.LogConcaveFamily`).
        """
        return self._kernel

    @property
    def spec_name(self) -> str | None:
        """The name :func:`from_name` parses to this family (``"laplace"``, ...); None if it has none."""
        return None

    @property
    def subbotin_order(self) -> float | None:
        """r if this is the Subbotin_r density (1 for :class:`Laplace`, 2 for :class:`Gaussian`), else None."""
        return None

    @property
    def fisher_information(self) -> float:
        """The Fisher information of the location of the unit-scale family.

        1 for the Laplace and the Gaussian; 1/3 for the Logistic; r^(2 - 2/r) Gamma(2 - 1/r) / Gamma(1/r) for
        Subbotin_r, whose density is exp(-|z|^r / r) / C(r) (Anonymous 2022, with the correction of
        ``docs/accounting.md``).

        Raises
        ------
        TypeError
            For a family without a closed form (truncated and user-defined families).
        """
        raise TypeError(f"the Fisher information is implemented for Laplace, Gaussian, Logistic and Subbotin(r), not {self!r}")

    # -- evaluation ----------------------------------------------------------------------------------
    @overload
    def logpdf(self, x: float) -> float: ...
    @overload
    def logpdf(self, x: ArrayLike) -> Any: ...
    def logpdf(self, x: ArrayLike) -> Any:
        """log f(x)."""
        return scalar_or_array(self._kernel.logpdf(as_points(x)), x)

    @overload
    def pdf(self, x: float) -> float: ...
    @overload
    def pdf(self, x: ArrayLike) -> Any: ...
    def pdf(self, x: ArrayLike) -> Any:
        """f(x)."""
        return scalar_or_array(self._kernel.pdf(as_points(x)), x)

    @overload
    def cdf(self, x: float) -> float: ...
    @overload
    def cdf(self, x: ArrayLike) -> Any: ...
    def cdf(self, x: ArrayLike) -> Any:
        """P(X <= x)."""
        return scalar_or_array(self._kernel.cdf(as_points(x)), x)

    @overload
    def sf(self, x: float) -> float: ...
    @overload
    def sf(self, x: ArrayLike) -> Any: ...
    def sf(self, x: ArrayLike) -> Any:
        """P(X > x), accurate in the upper tail."""
        return scalar_or_array(self._kernel.sf(as_points(x)), x)

    @overload
    def logcdf(self, x: float) -> float: ...
    @overload
    def logcdf(self, x: ArrayLike) -> Any: ...
    def logcdf(self, x: ArrayLike) -> Any:
        """log P(X <= x), finite deep into the lower tail."""
        return scalar_or_array(self._kernel.logcdf(as_points(x)), x)

    @overload
    def logsf(self, x: float) -> float: ...
    @overload
    def logsf(self, x: ArrayLike) -> Any: ...
    def logsf(self, x: ArrayLike) -> Any:
        """log P(X > x), finite deep into the upper tail."""
        return scalar_or_array(self._kernel.logsf(as_points(x)), x)

    @overload
    def ppf(self, q: float) -> float: ...
    @overload
    def ppf(self, q: ArrayLike) -> Any: ...
    def ppf(self, q: ArrayLike) -> Any:
        """Inverse CDF; q must lie in [0, 1]."""
        return scalar_or_array(self._kernel.ppf(np.ascontiguousarray(check_probability(q, "q"))), q)

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
        return float(self._kernel.variance)

    @property
    def std(self) -> float:
        """The standard deviation sqrt(Var(X)) of the unit-scale family."""
        return math.sqrt(self.variance)

    @property
    def mlr_bounded(self) -> bool:
        """True if the likelihood ratio of shifted copies is bounded (the family reaches (eps, 0)-DP)."""
        return bool(self._kernel.mlr_bounded)

    @property
    def support_bound(self) -> float:
        """a with support (-a, a); inf for full support."""
        return float(self._kernel.bound)

    def psi_diff(self, u: float, d: float) -> float:
        """psi(u) - psi(u - d) = log f(u - d) - log f(u) for u >= d / 2 (the half-line of the privacy
        condition): the privacy loss of the output u under a shift d, without cancellation."""
        return float(self._kernel.psi_diff(u, d))

    @property
    def identity(self) -> tuple[Any, ...]:
        """A hashable tuple naming the density: equal for equal densities (``Subbotin(1)`` and ``Laplace()``).

        ``==`` and ``hash`` use it, and so do the caches keyed by a family.
        """
        return (type(self).__name__,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoiseFamily) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(self.identity)


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
        self._kernel = _cnoise.Family(_Kind.Laplace)

    @property
    def spec_name(self) -> str:
        return "laplace"

    @property
    def subbotin_order(self) -> float:
        return 1.0

    @property
    def fisher_information(self) -> float:
        return 1.0

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
        self._kernel = _cnoise.Family(_Kind.Gaussian)

    @property
    def spec_name(self) -> str:
        return "gaussian"

    @property
    def subbotin_order(self) -> float:
        return 2.0

    @property
    def fisher_information(self) -> float:
        return 1.0

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
        self._kernel = _cnoise.Family(_Kind.Logistic)

    @property
    def spec_name(self) -> str:
        return "logistic"

    @property
    def fisher_information(self) -> float:
        return 1.0 / 3.0

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
        self._kernel = _cnoise.Family(_Kind.Subbotin, self.r)

    @property
    def spec_name(self) -> str:
        return "subbotin"

    @property
    def subbotin_order(self) -> float:
        return self.r

    @property
    def fisher_information(self) -> float:
        r = self.r
        if r in (1.0, 2.0):
            return 1.0
        return math.exp((2.0 - 2.0 / r) * math.log(r) + math.lgamma(2.0 - 1.0 / r) - math.lgamma(1.0 / r))

    @property
    def identity(self) -> tuple[Any, ...]:
        # Subbotin(1) == Laplace() and Subbotin(2) == Gaussian() as densities.
        if self.r == 1.0:
            return ("Laplace",)
        if self.r == 2.0:
            return ("Gaussian",)
        return ("Subbotin", self.r)

    def __repr__(self) -> str:
        return f"Subbotin(r={self.r:g})"


#: The names :func:`from_name` accepts.
NAMES = ("gaussian", "laplace", "logistic", "subbotin")


def from_name(name: str, r: float | None = None, *, name_arg: str = "name", r_arg: str = "r") -> NoiseFamily:
    """The standard family called ``name``: one of :data:`NAMES`, with the order ``r`` for ``"subbotin"``.

    The one parser from a name to a family, shared by the command line, the PLD specification and the
    mechanism factories.

    Parameters
    ----------
    name : str
        ``"gaussian"``, ``"laplace"``, ``"logistic"`` or ``"subbotin"`` (case-sensitive).
    r : float, optional
        The Subbotin order (>= 1): required for ``"subbotin"`` and refused for the others.
    name_arg, r_arg : str, optional
        How the errors name the two arguments (``"--r"`` for a command-line flag, for example).

    Returns
    -------
    NoiseFamily
        ``Gaussian()``, ``Laplace()``, ``Logistic()`` or ``Subbotin(r)``.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`NAMES`, or ``r`` is missing for Subbotin noise, given for another
        family, or not a valid order.

    Examples
    --------
    >>> from_name("laplace")
    Laplace()
    >>> from_name("subbotin", 1.5)
    Subbotin(r=1.5)
    """
    if not isinstance(name, str) or name not in NAMES:
        raise ValueError(f"{name_arg} must be one of {', '.join(NAMES)}, got {name!r}")
    if name == "subbotin":
        if r is None:
            raise ValueError(f"{r_arg} is required for subbotin noise (its order r) and allowed only there")
        return Subbotin(r)
    if r is not None:
        raise ValueError(f"{r_arg} is required for subbotin noise (its order r) and allowed only there, not with {name}")
    return {"laplace": Laplace, "gaussian": Gaussian, "logistic": Logistic}[name]()
