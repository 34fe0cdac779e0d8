"""Privacy budgets as immutable value types, and the conversions between definitions.

Every definition of the Rao DP paper's Table 1 (Anonymous 2022), the variants-of-DP summary (Variants of
DP 2019) and the sensitivity-index paper (Kaissis et al. 2023) is a frozen value type that validates its
fields:

=================  ==========================  =====================================================
type               fields                      meaning
=================  ==========================  =====================================================
``PureDP``         epsilon                     epsilon-DP
``ApproxDP``       epsilon, delta              (epsilon, delta)-DP
``KLDP``           epsilon                     KL divergence <= epsilon
``MCDP``           mu, tau                     (mu, tau)-mean-concentrated DP (Dwork and Rothblum)
``ZCDP``           rho, xi = 0                 (xi, rho)-zCDP: D_alpha <= xi + rho alpha, all alpha > 1
``RDP``            alpha, epsilon              Renyi DP of order alpha
``RDPCurve``       epsilon(alpha)              RDP at every order of a grid, or a callable
``GDP``            mu                          mu-Gaussian DP (= the sensitivity index psi)
``TCDP``           rho, omega                  (rho, omega)-truncated CDP: D_alpha <= rho alpha, alpha in (1, omega]
``RaoDP``          theta                       theta-Rao DP (Anonymous 2022)
=================  ==========================  =====================================================

Conversions (each is a method of the source type):

- ``GDP.to_approx_dp(delta)``: exact, by the Gaussian privacy profile solved in C++ (lossless).
- ``ZCDP.to_approx_dp(delta)``: the summary table's rule xi + rho + 2 sqrt(rho log(1/delta)) (Bun and
  Steinke 2016); ``method="rdp"`` optimises the RDP conversions over alpha instead (never looser).
- ``RDP.to_approx_dp(delta, method)``: "mironov", "asoodeh", "balle2020" (Kaissis et al. 2023,
  Corollaries 11-13); the default takes the smallest of the three. ``RDPCurve`` takes the best alpha.
- ``PureDP.to_approx_dp(delta)``: the exact privacy region of epsilon-DP (randomised response, Kairouz,
  Oh and Viswanath 2015): epsilon' = log(e^eps - delta (1 + e^eps)), clamped at 0.
- ``PureDP.to_gdp()``: mu = -2 Phi^-1(1 / (1 + e^eps)) (Liu et al. 2022), the one place of this
  conversion (``docs/accounting.md``).
- ``GDP.to_rdp(alpha)``, ``ZCDP.to_rdp(alpha)``, ``PureDP.to_rdp(alpha)`` (exact, randomised response),
  ``TCDP.to_rdp(alpha)`` for alpha <= omega.
- Rao DP (Anonymous 2022, Corollaries 4.5 and 4.9, with the correction of ``docs/accounting.md``): these
  hold for a given *mechanism*, so the mechanism is a required argument: ``PureDP.to_rao_dp("laplace")``
  gives theta = eps; ``GDP.to_rao_dp("gaussian")`` gives theta = mu; ``ApproxDP.to_rao_dp("gaussian")``
  gives theta = psi = D / sigma of the exact (analytic) Gaussian calibration, or with
  ``method="classic"`` the paper's eps / sqrt(2 log(1.25 / delta)) (valid for eps < 1 only).
  ``RaoDP.to_gdp("gaussian")`` and ``RaoDP.to_pure_dp("laplace")`` go back.

Over 600 lines (about 450 of code) because it holds the ten budget types, each a small class with its
conversions and composition rule; they convert into each other, so they stay together.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Callable, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike

from .._core import accounting as _acc
from .._errors import PrivacyWarning
from .._validation import (
    as_float_array,
    check_alpha,
    check_alpha_array,
    check_nonneg_scalar,
    check_open_delta,
    real_scalar,
)
from .rounding import norm_up, sum_up

__all__ = [
    "Budget",
    "PureDP",
    "ApproxDP",
    "KLDP",
    "MCDP",
    "ZCDP",
    "RDP",
    "RDPCurve",
    "GDP",
    "TCDP",
    "RaoDP",
    "RDP_METHODS",
    "DEFAULT_ALPHAS",
    "PrivacyWarning",
]

RDP_METHODS = ("mironov", "asoodeh", "balle2020")
_METHOD_CODE = {name: getattr(_acc.RdpMethod, name) for name in RDP_METHODS}

#: The default grid of Renyi orders used where a curve has no grid of its own: dense near 1 (small
#: mechanisms at large delta), geometric up to 10^4 (tiny mechanisms at tiny delta).
DEFAULT_ALPHAS = np.unique(
    np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 60), np.geomspace(2.0, 1e4, 240), np.arange(2.0, 65.0)])
)


def _mechanism(mechanism: Any, allowed: Sequence[str]) -> str:
    if not isinstance(mechanism, str) or mechanism.lower() not in allowed:
        raise ValueError(f"mechanism must be one of {', '.join(map(repr, allowed))}, got {mechanism!r}")
    return mechanism.lower()


def _rdp_method(method: str | None) -> str | None:
    if method is None:
        return None
    if not isinstance(method, str) or method.lower() not in _METHOD_CODE:
        raise ValueError(f"method must be None or one of {RDP_METHODS}, got {method!r}")
    return method.lower()


def _rdp_eps(alpha: float, rho: float, delta: float, method: str | None) -> float:
    if method is not None:
        return float(_acc.rdp_to_epsilon_scalar(alpha, rho, delta, _METHOD_CODE[method]))
    return min(float(_acc.rdp_to_epsilon_scalar(alpha, rho, delta, c)) for c in _METHOD_CODE.values())


def rdp_epsilon_array(alpha: ArrayLike, rho: ArrayLike, delta: float, method: str | None) -> np.ndarray:
    """The (epsilon, delta) conversion of (alpha_i, rho_i)-RDP by ``method`` (None: the best of the three)."""
    a, r = np.broadcast_arrays(np.asarray(alpha, float), np.asarray(rho, float))
    a = np.ascontiguousarray(a)
    r = np.ascontiguousarray(r)
    d = np.full(a.shape, delta)
    codes = (_METHOD_CODE[method],) if method is not None else tuple(_METHOD_CODE.values())
    out = np.asarray(_acc.rdp_to_epsilon(a, r, d, codes[0]))
    for c in codes[1:]:
        out = np.minimum(out, _acc.rdp_to_epsilon(a, r, d, c))
    return out


def classic_gaussian_mu(epsilon: float, delta: float) -> float:
    """D / sigma of the classically calibrated Gaussian mechanism, sigma = D sqrt(2 log(1.25 / delta)) / eps
    (Dwork and Roth 2014, Theorem A.1; proven for eps < 1 only, which the callers warn about)."""
    return epsilon / math.sqrt(2.0 * math.log(1.25 / delta))


def _half_square(x: float, name: str) -> float:
    """x^2 / 2 for a zCDP or RDP parameter; a ValueError naming ``name`` where it overflows a double."""
    v = 0.5 * x * x
    if math.isinf(v):
        raise ValueError(f"{name} = {x!r} is too large for a finite zCDP or RDP bound (x^2 / 2 overflows)")
    return v


class Budget:
    """Base class of the privacy budget value types (immutable; compare and hash by value).

    A privacy definition is a subclass with its fields, its validation, its conversions (methods
    ``to_*``) and its composition rule (the class method :meth:`compose`): a new definition is one class.

    Examples
    --------
    >>> isinstance(GDP(1.0), Budget)
    True
    >>> GDP.compose([GDP(3.0), GDP(4.0)])
    GDP(mu=5.0)
    """

    __slots__ = ()

    @classmethod
    def compose(cls: type[_B], budgets: Iterable[Any]) -> _B:
        """The sequential composition of ``budgets``, a non-empty list of budgets of this type (the rule of
        :func:`pydp_core.compose`)."""
        items = budget_list(budgets)
        for i, b in enumerate(items):
            if type(b) is not cls:
                raise TypeError(
                    f"cannot compose {cls.__name__} with {type(b).__name__} (budgets[{i}]): convert explicitly "
                    "first, e.g. GDP.to_rdp(alpha) or RDP.to_approx_dp(delta)"
                )
        return cls._compose(items)

    @classmethod
    def _compose(cls: type[_B], budgets: Sequence[Any]) -> _B:
        """The composition rule, for a validated non-empty list of budgets of this type."""
        raise TypeError(f"no composition rule for {cls.__name__}")


_B = TypeVar("_B", bound=Budget)


def budget_list(budgets: Any) -> list[Budget]:
    """``budgets`` as a non-empty list of privacy budgets (a single budget, a non-iterable, an empty list or
    a non-budget item is refused, naming the argument)."""
    if isinstance(budgets, Budget):
        raise TypeError(f"budgets must be a list of privacy budgets, not a single {type(budgets).__name__} (wrap it in a list)")
    if isinstance(budgets, (str, bytes)):
        raise TypeError(f"budgets must be an iterable of privacy budgets, got {type(budgets).__name__}")
    try:
        items = list(budgets)
    except TypeError:
        raise TypeError(f"budgets must be an iterable of privacy budgets, got {type(budgets).__name__}") from None
    if not items:
        raise ValueError("budgets must not be empty")
    for i, b in enumerate(items):
        if not isinstance(b, Budget):
            raise TypeError(f"budgets[{i}] is not a privacy budget ({type(b).__name__})")
    return items


# ------------------------------------------------------------------------------------------------------
# the value types
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PureDP(Budget):
    """epsilon-DP (Dwork et al. 2006).

    Parameters
    ----------
    epsilon : float
        The privacy loss bound, >= 0 and finite.

    Examples
    --------
    >>> PureDP(1.0).to_gdp()
    GDP(mu=1.23203538534...)
    >>> PureDP(1.0).to_approx_dp(1e-3)
    ApproxDP(epsilon=0.99863118415..., delta=0.001)
    >>> PureDP(1.0).rdp_epsilon(2.0)
    0.73532566405...
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_nonneg_scalar(self.epsilon, "epsilon"))

    def to_approx_dp(self, delta: float = 0.0, method: str | None = None) -> ApproxDP:
        """(epsilon', delta)-DP from the exact privacy region of epsilon-DP.

        Every epsilon-DP pair of distributions is a post-processing of randomised response (Kairouz, Oh
        and Viswanath 2015), whose hockey-stick divergence at e^eps' is (e^eps - e^eps') / (1 + e^eps); so
        eps' = eps + log(1 - delta (1 + e^-eps)), and 0 once delta reaches the total variation
        (e^eps - 1) / (e^eps + 1). ``delta = 0`` returns (epsilon, 0).
        """
        if method not in (None, "exact"):
            raise ValueError(f"method must be None or 'exact' for PureDP, got {method!r}")
        d = real_scalar(delta, "delta")
        if not 0 <= d < 1:
            raise ValueError(f"delta must lie in [0, 1), got {d!r}")
        if d == 0:
            return ApproxDP(self.epsilon, 0.0)
        arg = -d * (1.0 + math.exp(-self.epsilon))
        eps = self.epsilon + math.log1p(arg) if arg > -1 else 0.0
        # round up by a few ulp: the formula is exact, the floating evaluation is not
        eps = max(0.0, eps + 4 * math.ulp(max(eps, self.epsilon))) if eps > 0 else 0.0
        return ApproxDP(min(eps, self.epsilon), d)

    def to_gdp(self) -> GDP:
        """mu-GDP with mu = -2 Phi^-1(1 / (1 + e^eps)), the smallest mu implied by eps-DP (Dong, Roth and Su 2022).

        The library's one evaluation of the eps -> mu conversion (the C++ kernel ``pure_dp_mu``): rounded up
        (never below the exact mu), with full relative accuracy from the tiniest epsilon to the overflow
        range (``PureDP(800).to_gdp()`` is finite).
        """
        return GDP(float(_acc.pure_dp_mu(np.float64(self.epsilon))))

    def to_zcdp(self) -> ZCDP:
        """(eps^2 / 2)-zCDP (Bun and Steinke 2016, Proposition 1.4)."""
        return ZCDP(_half_square(self.epsilon, "epsilon"))

    @overload
    def rdp_epsilon(self, alpha: float) -> float: ...

    @overload
    def rdp_epsilon(self, alpha: ArrayLike) -> Any: ...

    def rdp_epsilon(self, alpha: ArrayLike) -> Any:
        """The exact Renyi divergence bound of epsilon-DP at order alpha (vectorised; alpha > 1, inf allowed).

        The supremum over eps-DP pairs is attained by randomised response, p = e^eps / (1 + e^eps):
        D_alpha = log(p^alpha (1-p)^(1-alpha) + (1-p)^alpha p^(1-alpha)) / (alpha - 1), which is at most
        min(eps, alpha eps^2 / 2). A scalar alpha gives a float, an array an array; an alpha that is
        not > 1 (or NaN) is a ValueError naming ``alpha``.
        """
        a = check_alpha_array(alpha, allow_inf=True)
        eps = self.epsilon
        if eps == 0:
            return np.zeros_like(a) if a.ndim else 0.0
        lp = -np.logaddexp(0.0, -eps)  # log p
        lq = -np.logaddexp(0.0, eps)  # log (1 - p)
        with np.errstate(over="ignore", invalid="ignore"):
            t1 = a * lp + (1 - a) * lq
            t2 = a * lq + (1 - a) * lp
            val = np.logaddexp(t1, t2) / (a - 1)
        val = np.where(np.isinf(a), eps, val)
        val = np.minimum(np.maximum(val, 0.0), eps)
        return float(val) if val.ndim == 0 else val

    def to_rdp(self, alpha: float) -> RDP:
        """(alpha, D_alpha)-RDP with the exact bound :meth:`rdp_epsilon`."""
        a = check_alpha(alpha)
        return RDP(a, float(self.rdp_epsilon(a)))

    def to_rao_dp(self, mechanism: str) -> RaoDP:
        """Corollary 4.5 (Anonymous 2022): the Laplace mechanism that is eps-DP is theta-Rao-DP with theta = eps.

        The statement is about the Laplace mechanism (scale D / eps), so ``mechanism="laplace"`` is required.
        """
        _mechanism(mechanism, ("laplace",))
        return RaoDP(self.epsilon)

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> PureDP:
        """The sequential composition of ``budgets`` (all PureDP; Anonymous 2022, Table 1)."""
        return cls(sum_up(b.epsilon for b in budgets))


@dataclass(frozen=True)
class ApproxDP(Budget):
    """(epsilon, delta)-DP (Dwork et al. 2006).

    Parameters
    ----------
    epsilon : float
        >= 0 and finite.
    delta : float
        In [0, 1].

    Examples
    --------
    >>> ApproxDP(1.0, 1e-5).to_rao_dp("gaussian")
    RaoDP(theta=0.26805112321...)
    >>> dp.compose([ApproxDP(0.5, 1e-6), ApproxDP(0.25, 1e-6)])
    ApproxDP(epsilon=0.75, delta=2e-06)
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_nonneg_scalar(self.epsilon, "epsilon"))
        d = real_scalar(self.delta, "delta")
        if not 0 <= d <= 1:
            raise ValueError(f"delta must lie in [0, 1], got {d!r}")
        object.__setattr__(self, "delta", d)

    def to_approx_dp(self, delta: float | None = None, method: str | None = None) -> ApproxDP:
        """This budget at a delta no smaller than its own ((eps, delta) implies (eps, delta') for delta' >= delta)."""
        if method is not None:
            raise ValueError("ApproxDP.to_approx_dp takes no method")
        if delta is None:
            return self
        d = real_scalar(delta, "delta")
        if not self.delta <= d <= 1:
            raise ValueError(f"delta must lie in [{self.delta!r}, 1] to relax (epsilon, {self.delta!r})-DP, got {d!r}")
        return ApproxDP(self.epsilon, d)

    def to_rao_dp(self, mechanism: str, method: str = "analytic") -> RaoDP:
        """Corollary 4.9 (Anonymous 2022) for the Gaussian mechanism calibrated to (epsilon, delta).

        ``method="analytic"`` (default): theta = psi = D / sigma with sigma the exact (Balle and Wang
        2018) minimal scale (``docs/accounting.md``). ``method="classic"``: the paper's theta = eps / sqrt(2 log(1.25/delta)),
        which comes from the classic calibration and is valid for eps < 1 only (a warning otherwise).
        """
        _mechanism(mechanism, ("gaussian",))
        d = check_open_delta(self.delta, "delta")
        if self.epsilon == 0:
            raise ValueError("epsilon must be > 0 to calibrate a Gaussian mechanism")
        if method == "analytic":
            from ..calibration.profile import minimal_scale
            from ..noise import Gaussian

            return RaoDP(1.0 / float(minimal_scale(Gaussian(), epsilon=self.epsilon, delta=d)))
        if method == "classic":
            if self.epsilon >= 1:
                warnings.warn(
                    "the classic Gaussian calibration (and Corollary 4.9's theta) is only proven for epsilon < 1",
                    PrivacyWarning,
                    stacklevel=2,
                )
            return RaoDP(classic_gaussian_mu(self.epsilon, d))
        raise ValueError(f"method must be 'analytic' or 'classic', got {method!r}")

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> ApproxDP:
        """The sequential composition of ``budgets`` (all ApproxDP; Anonymous 2022, Table 1)."""
        return cls(sum_up(b.epsilon for b in budgets), min(1.0, sum_up(b.delta for b in budgets)))


@dataclass(frozen=True)
class KLDP(Budget):
    """Kullback-Leibler DP: D_KL(M(D) || M(D')) <= epsilon (Barber and Duchi 2014; Cuff and Yu 2016).

    Parameters
    ----------
    epsilon : float
        The divergence bound, >= 0 and finite.

    Examples
    --------
    >>> dp.compose([KLDP(0.25), KLDP(0.5)])
    KLDP(epsilon=0.75)
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_nonneg_scalar(self.epsilon, "epsilon"))

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> KLDP:
        """The sequential composition of ``budgets`` (all KLDP; Anonymous 2022, Table 1)."""
        return cls(sum_up(b.epsilon for b in budgets))


@dataclass(frozen=True)
class MCDP(Budget):
    """(mu, tau)-mean-concentrated DP (Dwork and Rothblum 2016).

    Parameters
    ----------
    mu : float
        The mean of the privacy loss, >= 0 and finite.
    tau : float
        Its sub-Gaussian standard, >= 0 and finite.

    Examples
    --------
    >>> dp.compose([MCDP(0.1, 0.3), MCDP(0.1, 0.4)])
    MCDP(mu=0.2, tau=0.5000000000000001)
    """

    mu: float
    tau: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_nonneg_scalar(self.mu, "mu"))
        object.__setattr__(self, "tau", check_nonneg_scalar(self.tau, "tau"))

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> MCDP:
        """The sequential composition of ``budgets`` (all MCDP; Anonymous 2022, Table 1)."""
        return cls(sum_up(b.mu for b in budgets), norm_up(b.tau for b in budgets))


@dataclass(frozen=True)
class ZCDP(Budget):
    """(xi, rho)-zero-concentrated DP (Bun and Steinke 2016): D_alpha <= xi + rho alpha for all alpha > 1.

    Parameters
    ----------
    rho : float
        >= 0 and finite.
    xi : float, optional
        >= 0 and finite (default 0).

    Examples
    --------
    >>> ZCDP(0.5).to_rdp(2.0)
    RDP(alpha=2.0, epsilon=1.0)
    >>> ZCDP(0.5).to_approx_dp(1e-6)
    ApproxDP(epsilon=5.75652176975..., delta=1e-06)
    >>> ZCDP(0.5).to_approx_dp(1e-6, method="rdp").epsilon < 5.75
    True
    """

    rho: float
    xi: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_nonneg_scalar(self.rho, "rho"))
        object.__setattr__(self, "xi", check_nonneg_scalar(self.xi, "xi"))

    def to_rdp(self, alpha: float) -> RDP:
        """(alpha, xi + rho alpha)-RDP."""
        a = check_alpha(alpha)
        return RDP(a, self.xi + self.rho * a)

    def to_rdp_curve(self) -> RDPCurve:
        """The RDP curve xi + rho alpha at every order alpha > 1."""
        xi, rho = self.xi, self.rho
        return RDPCurve(lambda a: xi + rho * np.asarray(a, dtype=float))

    def to_approx_dp(self, delta: float, method: str | None = None) -> ApproxDP:
        """The summary table's rule (xi + rho + 2 sqrt(rho log(1/delta)), delta) (Bun and Steinke 2016, Prop. 1.3).

        ``method="rdp"`` instead takes the best alpha of the three RDP conversions of Kaissis et al.
        (2023), which is never looser (the table's rule is Mironov's conversion at its optimal alpha).
        """
        d = check_open_delta(delta)
        if method in (None, "bun_steinke"):
            return ApproxDP(self.xi + self.rho + 2.0 * math.sqrt(self.rho * math.log(1.0 / d)), d)
        if method == "rdp":
            return self.to_rdp_curve().to_approx_dp(d)
        raise ValueError(f"method must be None, 'bun_steinke' or 'rdp', got {method!r}")

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> ZCDP:
        """The sequential composition of ``budgets`` (all ZCDP; Anonymous 2022, Table 1)."""
        return cls(sum_up(b.rho for b in budgets), sum_up(b.xi for b in budgets))


@dataclass(frozen=True)
class RDP(Budget):
    """(alpha, epsilon)-Renyi DP (Mironov 2017).

    Parameters
    ----------
    alpha : float
        The order, > 1 and finite.
    epsilon : float
        The Renyi divergence bound at that order, >= 0 and finite.

    Examples
    --------
    >>> RDP(8.0, 0.5).to_approx_dp(1e-6)
    ApproxDP(epsilon=2.04304989541..., delta=1e-06)
    >>> RDP(8.0, 0.5).to_approx_dp(1e-6, method="mironov")
    ApproxDP(epsilon=2.47364436542..., delta=1e-06)
    """

    alpha: float
    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", check_alpha(self.alpha))
        object.__setattr__(self, "epsilon", check_nonneg_scalar(self.epsilon, "epsilon"))

    def to_approx_dp(self, delta: float, method: str | None = None) -> ApproxDP:
        """(eps', delta)-DP by "mironov", "asoodeh" or "balle2020" (Kaissis et al. 2023, Corollaries 11-13).

        The default is the smallest of the three (all are valid); "asoodeh" <= "balle2020" <= "mironov".
        """
        d = check_open_delta(delta)
        return ApproxDP(_rdp_eps(self.alpha, self.epsilon, d, _rdp_method(method)), d)

    def to_rdp_curve(self) -> RDPCurve:
        """The grid curve of this one order: epsilon at every order <= alpha (Renyi divergences grow with alpha)."""
        return RDPCurve([self.epsilon], [self.alpha])

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> RDP:
        """The sequential composition of ``budgets`` (all RDP; Anonymous 2022, Table 1)."""
        alpha = budgets[0].alpha
        for i, b in enumerate(budgets):
            if b.alpha != alpha:
                raise ValueError(
                    f"RDP composes at equal alpha only: budgets[{i}].alpha = {b.alpha!r} != {alpha!r} "
                    "(use RDPCurve to compose whole curves)"
                )
        return cls(alpha, sum_up(b.epsilon for b in budgets))


@dataclass(frozen=True)
class GDP(Budget):
    """mu-Gaussian DP (Dong, Roth and Su 2022); for the Gaussian mechanism mu = psi = D / sigma (Kaissis et al. 2023).

    Parameters
    ----------
    mu : float
        >= 0 and finite.

    Examples
    --------
    >>> GDP(1.0).to_approx_dp(1e-6)
    ApproxDP(epsilon=4.88655411746..., delta=1e-06)
    >>> round(GDP(1.0).delta(1.0), 12)
    0.126936737507
    >>> GDP(1.0).to_rdp(2.0)
    RDP(alpha=2.0, epsilon=1.0)
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_nonneg_scalar(self.mu, "mu"))

    def to_approx_dp(self, delta: float, method: str | None = None) -> ApproxDP:
        """The exact (lossless) conversion: the smallest eps with delta_mu(eps) <= delta (rounded up)."""
        if method not in (None, "exact"):
            raise ValueError(f"method must be None or 'exact' for GDP, got {method!r}")
        d = check_open_delta(delta)
        return ApproxDP(float(_acc.gdp_epsilon_scalar(self.mu, d)), d)

    def delta(self, epsilon: float) -> float:
        """The exact delta_mu(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
        e = check_nonneg_scalar(epsilon, "epsilon", allow_inf=True)
        return math.exp(float(_acc.gdp_log_delta(np.array([self.mu]), np.array([e]))[0]))

    def to_rdp(self, alpha: float) -> RDP:
        """(alpha, alpha mu^2 / 2)-RDP (Kaissis et al. 2023, Lemma 7)."""
        a = check_alpha(alpha)
        return RDP(a, a * _half_square(self.mu, "mu"))

    def to_zcdp(self) -> ZCDP:
        """(mu^2 / 2)-zCDP."""
        return ZCDP(_half_square(self.mu, "mu"))

    def to_rdp_curve(self) -> RDPCurve:
        """The RDP curve alpha mu^2 / 2 at every order alpha > 1."""
        half = _half_square(self.mu, "mu")
        return RDPCurve(lambda a: half * np.asarray(a, dtype=float))

    def to_rao_dp(self, mechanism: str) -> RaoDP:
        """Corollary 4.9 (Anonymous 2022): the Gaussian mechanism that is mu-GDP is mu-Rao-DP."""
        _mechanism(mechanism, ("gaussian",))
        return RaoDP(self.mu)

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> GDP:
        """The sequential composition of ``budgets`` (all GDP; Anonymous 2022, Table 1)."""
        return cls(norm_up(b.mu for b in budgets))


@dataclass(frozen=True)
class TCDP(Budget):
    """(rho, omega)-truncated CDP (Bun et al. 2018): D_alpha <= rho alpha on (1, omega].

    Parameters
    ----------
    rho : float
        >= 0 and finite.
    omega : float
        The largest order, > 1 (``inf`` allowed: then the budget is rho-zCDP).

    Examples
    --------
    >>> TCDP(0.1, 10.0).to_rdp(4.0)
    RDP(alpha=4.0, epsilon=0.4)
    >>> TCDP(0.1, 10.0).to_approx_dp(1e-6)
    ApproxDP(epsilon=2.17385342489..., delta=1e-06)
    """

    rho: float
    omega: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_nonneg_scalar(self.rho, "rho"))
        object.__setattr__(self, "omega", check_alpha(self.omega, "omega", allow_inf=True))

    def to_rdp(self, alpha: float) -> RDP:
        """(alpha, rho alpha)-RDP for alpha <= omega (a ValueError beyond)."""
        a = check_alpha(alpha)
        if a > self.omega:
            raise ValueError(f"alpha must be <= omega = {self.omega!r} for ({self.rho!r}, {self.omega!r})-tCDP")
        return RDP(a, self.rho * a)

    def to_rdp_curve(self) -> RDPCurve:
        """The RDP curve rho alpha on (1, omega] (+inf beyond omega)."""
        rho = self.rho
        return RDPCurve(lambda a: rho * np.asarray(a, dtype=float), alpha_max=self.omega)

    def to_approx_dp(self, delta: float, method: str | None = None) -> ApproxDP:
        """Best alpha in (1, omega] of the RDP conversions (Mironov's at its optimum is Bun et al.'s Lemma 6)."""
        return self.to_rdp_curve().to_approx_dp(delta, method)

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> TCDP:
        """The sequential composition of ``budgets`` (all TCDP; Anonymous 2022, Table 1)."""
        return cls(sum_up(b.rho for b in budgets), min(b.omega for b in budgets))


@dataclass(frozen=True)
class RaoDP(Budget):
    """theta-Rao DP (Anonymous 2022): the Fisher-Rao distance between M(D) and M(D') is at most theta.

    Parameters
    ----------
    theta : float
        >= 0 and finite.

    Examples
    --------
    >>> RaoDP(0.5).to_gdp("gaussian")
    GDP(mu=0.5)
    >>> RaoDP(0.5).to_pure_dp("laplace")
    PureDP(epsilon=0.5)
    >>> dp.compose([RaoDP(0.3), RaoDP(0.4)])
    RaoDP(theta=0.5000000000000001)
    """

    theta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "theta", check_nonneg_scalar(self.theta, "theta"))

    def to_gdp(self, mechanism: str) -> GDP:
        """The Gaussian mechanism that is theta-Rao-DP (sigma = D / theta) is theta-GDP (Corollary 4.9)."""
        _mechanism(mechanism, ("gaussian",))
        return GDP(self.theta)

    def to_pure_dp(self, mechanism: str) -> PureDP:
        """The Laplace mechanism that is theta-Rao-DP (b = D / theta) is theta-DP (Corollary 4.5)."""
        _mechanism(mechanism, ("laplace",))
        return PureDP(self.theta)

    def to_approx_dp(self, delta: float, mechanism: str = "gaussian", method: str | None = None) -> ApproxDP:
        """The exact (eps, delta) of the theta-Rao-DP Gaussian or Laplace mechanism."""
        m = _mechanism(mechanism, ("gaussian", "laplace"))
        if m == "gaussian":
            return self.to_gdp("gaussian").to_approx_dp(delta, method)
        d = check_open_delta(delta)
        from ..calibration.profile import epsilon_for_delta
        from ..noise import Laplace

        if self.theta == 0:
            return ApproxDP(0.0, d)
        return ApproxDP(float(epsilon_for_delta(Laplace(), delta=d, scale=1.0 / self.theta)), d)

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> RaoDP:
        """The sequential composition of ``budgets`` (all RaoDP; Anonymous 2022, Table 1)."""
        return cls(norm_up(b.theta for b in budgets))


# ------------------------------------------------------------------------------------------------------
# RDP curves
# ------------------------------------------------------------------------------------------------------
class RDPCurve(Budget):
    """RDP at many orders: epsilon(alpha) on a grid of orders, or a callable.

    ``RDPCurve(epsilons, alphas)``: the mechanism is (alpha_i, epsilon_i)-RDP for each grid point.
    Between grid points the curve is bounded by monotonicity of the Renyi divergence in alpha
    (epsilon(alpha) <= epsilon(next grid order)), never interpolated.
    ``RDPCurve(callable)``: epsilon(alpha) for every alpha in (1, alpha_max]; the callable must accept
    a numpy array. Curves compose pointwise (:func:`pydp_core.compose`). Immutable.

    Parameters
    ----------
    epsilon : array_like or callable
        The RDP epsilons at the orders ``alphas`` (>= 0), or a vectorised callable alpha -> epsilon.
    alphas : array_like, optional
        The grid of orders (> 1, finite, distinct); required with values, None with a callable.
    alpha_max : float, optional
        The largest order the curve holds for (default inf; grid orders above it are dropped).

    Examples
    --------
    >>> c = RDPCurve([0.1, 0.3], [2.0, 8.0])
    >>> c(4.0)
    0.3
    >>> c.to_approx_dp(1e-6)
    ApproxDP(epsilon=1.84304989541..., delta=1e-06)
    >>> dp.compose([c, c]).epsilons
    array([0.2, 0.6])
    """

    _alphas: np.ndarray | None
    _eps: np.ndarray | None
    _fn: Callable[[np.ndarray], Any] | None
    _alpha_max: float

    __slots__ = ("_alphas", "_eps", "_fn", "_alpha_max")

    def __init__(
        self,
        epsilon: Callable[[np.ndarray], Any] | Sequence[float] | np.ndarray,
        alphas: Sequence[float] | np.ndarray | None = None,
        *,
        alpha_max: float = math.inf,
    ) -> None:
        amax = check_alpha(alpha_max, "alpha_max", allow_inf=True)
        if callable(epsilon):
            fn = epsilon
            grid = None
            vals = None
            if alphas is not None:
                raise TypeError("alphas must be None when epsilon is a callable (the curve is defined on (1, alpha_max])")
        else:
            if alphas is None:
                raise TypeError("alphas is required when epsilon is given as values")
            grid = check_alpha_array(alphas, "alphas").reshape(-1).copy()
            vals = as_float_array(epsilon, "epsilon").reshape(-1).copy()
            if grid.size == 0:
                raise ValueError("alphas must not be empty")
            if grid.shape != vals.shape:
                raise ValueError(f"alphas and epsilon must have the same length ({grid.size} != {vals.size})")
            if np.isnan(vals).any() or (vals < 0).any():
                raise ValueError("epsilon must be >= 0 and not NaN")
            order = np.argsort(grid, kind="stable")
            grid, vals = grid[order], vals[order]
            if (np.diff(grid) == 0).any():
                raise ValueError("alphas must not repeat")
            keep = grid <= amax
            grid, vals = grid[keep], vals[keep]
            if grid.size == 0:
                raise ValueError("no grid order is <= alpha_max")
            grid.setflags(write=False)
            vals.setflags(write=False)
            fn = None
        object.__setattr__(self, "_alphas", grid)
        object.__setattr__(self, "_eps", vals)
        object.__setattr__(self, "_fn", fn)
        object.__setattr__(self, "_alpha_max", amax)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RDPCurve is immutable")

    def __repr__(self) -> str:
        if self._alphas is None or self._eps is None:
            return f"RDPCurve({self._fn!r}, alpha_max={self._alpha_max!r})"
        return f"RDPCurve(epsilon={self._eps.tolist()!r}, alphas={self._alphas.tolist()!r})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, RDPCurve):
            return NotImplemented
        if self._alphas is None or other._alphas is None or self._eps is None or other._eps is None:
            return self is other
        return bool(np.array_equal(self._alphas, other._alphas) and np.array_equal(self._eps, other._eps))

    def __hash__(self) -> int:
        if self._alphas is None or self._eps is None:
            return id(self)
        return hash((self._alphas.tobytes(), self._eps.tobytes()))

    @property
    def alphas(self) -> np.ndarray | None:
        """The grid of orders (None for a callable curve)."""
        return self._alphas

    @property
    def epsilons(self) -> np.ndarray | None:
        """The epsilons at the grid orders (None for a callable curve)."""
        return self._eps

    @property
    def alpha_max(self) -> float:
        """The largest order the curve holds for."""
        return self._alpha_max

    @property
    def is_grid(self) -> bool:
        """True for a grid curve, False for a callable one."""
        return self._fn is None

    def __call__(self, alpha: Any) -> Any:
        """A valid epsilon(alpha): exact on the grid or for a callable; +inf beyond the largest order."""
        a = check_alpha_array(alpha, allow_inf=True)
        if self._fn is not None:
            out = np.asarray(self._fn(a), dtype=float)
            if out.shape != a.shape:
                out = np.broadcast_to(out, a.shape).astype(float)
            out = np.where(a > self._alpha_max, np.inf, out)
            if np.isnan(out).any() or (out < 0).any():
                raise ValueError("the RDP curve returned a negative or NaN epsilon")
        else:
            assert self._alphas is not None and self._eps is not None
            idx = np.searchsorted(self._alphas, a, side="left")
            inside = idx < self._alphas.size
            out = np.where(inside, self._eps[np.minimum(idx, self._alphas.size - 1)], np.inf)
        return float(out) if out.ndim == 0 else out

    def at(self, alpha: float) -> RDP:
        """The curve at one order, as an :class:`RDP` budget (ValueError beyond the largest order)."""
        a = check_alpha(alpha)
        e = float(self(a))
        if math.isinf(e):
            raise ValueError(f"alpha = {a!r} is beyond the curve's largest order")
        return RDP(a, e)

    def _grid(self, alphas: np.ndarray | None = None) -> np.ndarray:
        if alphas is not None:
            g = check_alpha_array(alphas, "alphas", allow_inf=True).reshape(-1)
            return g[g <= self._alpha_max]
        if self._alphas is not None:
            return self._alphas
        g = DEFAULT_ALPHAS[self._alpha_max >= DEFAULT_ALPHAS]
        if math.isfinite(self._alpha_max):
            g = np.unique(np.append(g, self._alpha_max))
        return g

    def best_alpha(self, delta: float, method: str | None = None, alphas: Any = None) -> tuple[float, float]:
        """(epsilon, alpha): the best order for (epsilon, delta)-DP.

        On a grid curve the best grid order; on a callable the best order of ``alphas`` (default
        :data:`DEFAULT_ALPHAS`), refined by a bounded scalar search between its neighbours (any order is
        valid for a callable, so the refinement is safe and only ever lowers epsilon).
        """
        d = check_open_delta(delta)
        meth = _rdp_method(method)
        g = self._grid(alphas)
        if g.size == 0:
            raise ValueError("no order to convert at")
        vals = np.asarray(self(g), dtype=float)
        eps = rdp_epsilon_array(g, vals, d, meth)
        i = int(np.argmin(eps))
        best_e, best_a = float(eps[i]), float(g[i])
        if self._fn is not None and 0 < i < g.size - 1 and best_e > 0 and math.isfinite(best_e):
            from scipy import optimize

            def f(a: float) -> float:
                return _rdp_eps(float(a), float(self(float(a))), d, meth)
            res = optimize.minimize_scalar(f, bounds=(g[i - 1], g[i + 1]), method="bounded", options={"xatol": 1e-10})
            if res.success and res.fun < best_e:
                best_a = float(res.x)
                best_e = f(best_a)  # recompute at the reported order
        return best_e, best_a

    def to_approx_dp(self, delta: float, method: str | None = None, alphas: Any = None) -> ApproxDP:
        """(epsilon, delta)-DP at the best order (:meth:`best_alpha`)."""
        e, _ = self.best_alpha(delta, method, alphas)
        return ApproxDP(e, float(delta))

    @classmethod
    def _compose(cls, budgets: Sequence[Any]) -> RDPCurve:
        """The pointwise sum of RDP curves (one grid for grid curves; up to the smallest alpha_max)."""
        amax = min(c.alpha_max for c in budgets)
        grids = [c for c in budgets if c.is_grid]
        if not grids:
            fns = list(budgets)
            return cls(lambda a: np.sum([np.asarray(c(a), dtype=float) for c in fns], axis=0), alpha_max=amax)
        alphas = grids[0].alphas
        for i, c in enumerate(grids):
            if not np.array_equal(c.alphas, alphas):
                raise ValueError(
                    f"grid RDP budgets compose pointwise on one grid: curve {i} has different alphas than the first"
                )
        keep = alphas <= amax
        total = np.sum([np.asarray(c(alphas[keep]), dtype=float) for c in budgets], axis=0)
        return cls(total, alphas[keep])


def budget_fields(b: Budget) -> dict[str, Any]:
    """The fields of a value type as a plain dict (for JSON)."""
    if isinstance(b, RDPCurve):
        if b.alphas is None or b.epsilons is None:
            raise TypeError("an RDPCurve defined by a callable cannot be serialised; use a grid curve")
        return {"alphas": b.alphas.tolist(), "epsilon": b.epsilons.tolist()}
    return {k: getattr(b, k) for k in b.__dataclass_fields__}  # type: ignore[attr-defined]


_TYPES = {t.__name__: t for t in (PureDP, ApproxDP, KLDP, MCDP, ZCDP, RDP, RDPCurve, GDP, TCDP, RaoDP)}


def budget_from_fields(name: str, fields: dict[str, Any]) -> Budget:
    """The budget of type ``name`` with ``fields`` (the inverse of :func:`budget_fields`)."""
    if name not in _TYPES:
        raise ValueError(f"unknown budget type {name!r}")
    if name == "RDPCurve":
        return RDPCurve(fields["epsilon"], fields["alphas"])
    return _TYPES[name](**fields)
