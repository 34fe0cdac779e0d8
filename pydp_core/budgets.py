"""Privacy budgets as immutable value types, and the conversions between definitions.

Every definition of papers 000 (Table 1), 003 and 004 is a frozen value type that validates its fields:

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
``GDP``            mu                          mu-Gaussian DP (= the sensitivity index psi of paper 004)
``TCDP``           rho, omega                  (rho, omega)-truncated CDP: D_alpha <= rho alpha, alpha in (1, omega]
``RaoDP``          theta                       theta-Rao DP (paper 000)
=================  ==========================  =====================================================

Conversions (each is a method of the source type):

- ``GDP.to_approx_dp(delta)``: exact, by the Gaussian privacy profile solved in C++ (lossless).
- ``ZCDP.to_approx_dp(delta)``: paper 003's rule xi + rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke);
  ``method="rdp"`` optimises the RDP conversions over alpha instead (never looser).
- ``RDP.to_approx_dp(delta, method)``: "mironov", "asoodeh", "balle2020" (paper 004 Corollaries 11-13);
  the default takes the smallest of the three. ``RDPCurve`` takes the best alpha as well.
- ``PureDP.to_approx_dp(delta)``: the exact privacy region of epsilon-DP (randomised response, Kairouz
  et al. 2015): epsilon' = log(e^eps - delta (1 + e^eps)), clamped at 0.
- ``PureDP.to_gdp()``: mu = -2 Phi^-1(1 / (1 + e^eps)) (Liu et al. 2022; SPEC-NOTES).
- ``GDP.to_rdp(alpha)``, ``ZCDP.to_rdp(alpha)``, ``PureDP.to_rdp(alpha)`` (exact, randomised response),
  ``TCDP.to_rdp(alpha)`` for alpha <= omega.
- Rao DP (paper 000, Corollaries 4.5 and 4.9, with SPEC-NOTES' correction): these hold for a given
  *mechanism*, so the mechanism is a required argument: ``PureDP.to_rao_dp("laplace")`` gives
  theta = eps; ``GDP.to_rao_dp("gaussian")`` gives theta = mu; ``ApproxDP.to_rao_dp("gaussian")`` gives
  theta = psi = D / sigma of the exact (analytic) Gaussian calibration, or with ``method="classic"`` the
  paper's eps / sqrt(2 log(1.25 / delta)) (valid for eps < 1 only). ``RaoDP.to_gdp("gaussian")`` and
  ``RaoDP.to_pure_dp("laplace")`` go back.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._validation import as_float_array

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

_acc = _core.accounting

RDP_METHODS = ("mironov", "asoodeh", "balle2020")
_METHOD_CODE = {"mironov": 0, "asoodeh": 1, "balle2020": 2}

#: The default grid of Renyi orders used where a curve has no grid of its own: dense near 1 (small
#: mechanisms at large delta), geometric up to 10^4 (tiny mechanisms at tiny delta).
DEFAULT_ALPHAS = np.unique(
    np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 60), np.geomspace(2.0, 1e4, 240), np.arange(2.0, 65.0)])
)


class PrivacyWarning(UserWarning):
    """A formula was used outside the range its source proves it for (e.g. the classic Gaussian, eps >= 1)."""


# ------------------------------------------------------------------------------------------------------
# field validation
# ------------------------------------------------------------------------------------------------------
def _scalar(value: Any, name: str) -> float:
    t = type(value)
    if t is float:  # fast path for the common case (optimisers call conversions in inner loops)
        if value != value:
            raise ValueError(f"{name} must not be NaN")
        return value
    if t is int and -(2**53) <= value <= 2**53:
        return float(value)
    arr = as_float_array(value, name)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a scalar real number, got an array of shape {arr.shape}")
    x = float(arr)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def _nonneg(value: Any, name: str, *, allow_inf: bool = False) -> float:
    x = _scalar(value, name)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    if not allow_inf and math.isinf(x):
        raise ValueError(f"{name} must be finite")
    return x


def _alpha(value: Any, name: str = "alpha", *, allow_inf: bool = False) -> float:
    x = _scalar(value, name)
    if not x > 1:
        raise ValueError(f"{name} must be > 1, got {x!r}")
    if math.isinf(x) and not allow_inf:
        raise ValueError(f"{name} must be finite")
    return x


def _conv_delta(value: Any, name: str = "delta") -> float:
    """A delta for a conversion: it must lie in the open interval (0, 1)."""
    x = _scalar(value, name)
    if not 0 < x < 1:
        raise ValueError(f"{name} must lie in (0, 1) for this conversion, got {x!r}")
    return x


def _mechanism(mechanism: Any, allowed: Sequence[str]) -> str:
    if not isinstance(mechanism, str) or mechanism.lower() not in allowed:
        raise ValueError(f"mechanism must be one of {', '.join(map(repr, allowed))}, got {mechanism!r}")
    return mechanism.lower()


def _rdp_method(method: Optional[str]) -> Optional[str]:
    if method is None:
        return None
    if not isinstance(method, str) or method.lower() not in _METHOD_CODE:
        raise ValueError(f"method must be None or one of {RDP_METHODS}, got {method!r}")
    return method.lower()


def _rdp_eps(alpha: float, rho: float, delta: float, method: Optional[str]) -> float:
    if method is not None:
        return float(_acc.rdp_to_epsilon_scalar(alpha, rho, delta, _METHOD_CODE[method]))
    return min(float(_acc.rdp_to_epsilon_scalar(alpha, rho, delta, c)) for c in (0, 1, 2))


def _rdp_eps_array(alpha: np.ndarray, rho: np.ndarray, delta: float, method: Optional[str]) -> np.ndarray:
    a, r = np.broadcast_arrays(np.asarray(alpha, float), np.asarray(rho, float))
    a = np.ascontiguousarray(a)
    r = np.ascontiguousarray(r)
    d = np.full(a.shape, delta)
    codes = (_METHOD_CODE[method],) if method is not None else (0, 1, 2)
    out = np.asarray(_acc.rdp_to_epsilon(a, r, d, codes[0]))
    for c in codes[1:]:
        out = np.minimum(out, _acc.rdp_to_epsilon(a, r, d, c))
    return out


class Budget:
    """Base class of the privacy budget value types (immutable; compare and hash by value)."""

    __slots__ = ()


# ------------------------------------------------------------------------------------------------------
# the value types
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PureDP(Budget):
    """epsilon-DP (Dwork et al. 2006)."""

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _nonneg(self.epsilon, "epsilon"))

    def to_approx_dp(self, delta: float = 0.0, method: Optional[str] = None) -> "ApproxDP":
        """(epsilon', delta)-DP from the exact privacy region of epsilon-DP.

        Every epsilon-DP pair of distributions is a post-processing of randomised response (Kairouz et
        al. 2015), whose hockey-stick divergence at e^eps' is (e^eps - e^eps') / (1 + e^eps); so
        eps' = eps + log(1 - delta (1 + e^-eps)), and 0 once delta reaches the total variation
        (e^eps - 1) / (e^eps + 1). ``delta = 0`` returns (epsilon, 0).
        """
        if method not in (None, "exact"):
            raise ValueError(f"method must be None or 'exact' for PureDP, got {method!r}")
        d = _scalar(delta, "delta")
        if not 0 <= d < 1:
            raise ValueError(f"delta must lie in [0, 1), got {d!r}")
        if d == 0:
            return ApproxDP(self.epsilon, 0.0)
        arg = -d * (1.0 + math.exp(-self.epsilon))
        eps = self.epsilon + math.log1p(arg) if arg > -1 else 0.0
        # round up by a few ulp: the formula is exact, the floating evaluation is not
        eps = max(0.0, eps + 4 * math.ulp(max(eps, self.epsilon))) if eps > 0 else 0.0
        return ApproxDP(min(eps, self.epsilon), d)

    def to_gdp(self) -> "GDP":
        """mu-GDP with mu = -2 Phi^-1(1 / (1 + e^eps)), the smallest mu implied by eps-DP (Dong, Roth and Su 2022).

        Rounded up (never below the exact mu), with full relative accuracy down to the tiniest epsilon.
        """
        return GDP(float(_acc.pure_dp_mu(np.float64(self.epsilon))))

    def to_zcdp(self) -> "ZCDP":
        """(eps^2 / 2)-zCDP (Bun and Steinke 2016, Proposition 1.4)."""
        return ZCDP(0.5 * self.epsilon**2)

    def rdp_epsilon(self, alpha: Any) -> Any:
        """The exact Renyi divergence bound of epsilon-DP at order alpha (vectorised).

        The supremum over eps-DP pairs is attained by randomised response, p = e^eps / (1 + e^eps):
        D_alpha = log(p^alpha (1-p)^(1-alpha) + (1-p)^alpha p^(1-alpha)) / (alpha - 1), which is at most
        min(eps, alpha eps^2 / 2).
        """
        a = np.asarray(alpha, dtype=float)
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

    def to_rdp(self, alpha: float) -> "RDP":
        """(alpha, D_alpha)-RDP with the exact bound :meth:`rdp_epsilon`."""
        a = _alpha(alpha)
        return RDP(a, float(self.rdp_epsilon(a)))

    def to_rao_dp(self, mechanism: str) -> "RaoDP":
        """Corollary 4.5 (paper 000): the Laplace mechanism that is eps-DP is theta-Rao-DP with theta = eps.

        The statement is about the Laplace mechanism (scale D / eps), so ``mechanism="laplace"`` is required.
        """
        _mechanism(mechanism, ("laplace",))
        return RaoDP(self.epsilon)


@dataclass(frozen=True)
class ApproxDP(Budget):
    """(epsilon, delta)-DP (Dwork et al. 2006a)."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _nonneg(self.epsilon, "epsilon"))
        d = _scalar(self.delta, "delta")
        if not 0 <= d <= 1:
            raise ValueError(f"delta must lie in [0, 1], got {d!r}")
        object.__setattr__(self, "delta", d)

    def to_approx_dp(self, delta: Optional[float] = None, method: Optional[str] = None) -> "ApproxDP":
        """This budget at a delta no smaller than its own ((eps, delta) implies (eps, delta') for delta' >= delta)."""
        if method is not None:
            raise ValueError("ApproxDP.to_approx_dp takes no method")
        if delta is None:
            return self
        d = _scalar(delta, "delta")
        if not self.delta <= d <= 1:
            raise ValueError(f"delta must lie in [{self.delta!r}, 1] to relax (epsilon, {self.delta!r})-DP, got {d!r}")
        return ApproxDP(self.epsilon, d)

    def to_rao_dp(self, mechanism: str, method: str = "analytic") -> "RaoDP":
        """Corollary 4.9 (paper 000) for the Gaussian mechanism calibrated to (epsilon, delta).

        ``method="analytic"`` (default): theta = psi = D / sigma with sigma the exact (Balle and Wang)
        minimal scale (SPEC-NOTES). ``method="classic"``: the paper's theta = eps / sqrt(2 log(1.25/delta)),
        which comes from the classic calibration and is valid for eps < 1 only (a warning otherwise).
        """
        _mechanism(mechanism, ("gaussian",))
        d = _conv_delta(self.delta, "delta")
        if self.epsilon == 0:
            raise ValueError("epsilon must be > 0 to calibrate a Gaussian mechanism")
        if method == "analytic":
            from .calibration import minimal_scale
            from .noise import Gaussian

            return RaoDP(1.0 / float(minimal_scale(Gaussian(), self.epsilon, d, 1.0)))
        if method == "classic":
            if self.epsilon >= 1:
                warnings.warn(
                    "the classic Gaussian calibration (and Corollary 4.9's theta) is only proven for epsilon < 1",
                    PrivacyWarning,
                    stacklevel=2,
                )
            return RaoDP(self.epsilon / math.sqrt(2.0 * math.log(1.25 / d)))
        raise ValueError(f"method must be 'analytic' or 'classic', got {method!r}")


@dataclass(frozen=True)
class KLDP(Budget):
    """Kullback-Leibler DP: D_KL(M(D) || M(D')) <= epsilon (Barber and Duchi 2014; Cuff and Yu 2016)."""

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _nonneg(self.epsilon, "epsilon"))


@dataclass(frozen=True)
class MCDP(Budget):
    """(mu, tau)-mean-concentrated DP (Dwork and Rothblum 2016)."""

    mu: float
    tau: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _nonneg(self.mu, "mu"))
        object.__setattr__(self, "tau", _nonneg(self.tau, "tau"))


@dataclass(frozen=True)
class ZCDP(Budget):
    """(xi, rho)-zero-concentrated DP (Bun and Steinke 2016): D_alpha <= xi + rho alpha for all alpha > 1."""

    rho: float
    xi: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _nonneg(self.rho, "rho"))
        object.__setattr__(self, "xi", _nonneg(self.xi, "xi"))

    def to_rdp(self, alpha: float) -> "RDP":
        a = _alpha(alpha)
        return RDP(a, self.xi + self.rho * a)

    def to_rdp_curve(self) -> "RDPCurve":
        xi, rho = self.xi, self.rho
        return RDPCurve(lambda a: xi + rho * np.asarray(a, dtype=float))

    def to_approx_dp(self, delta: float, method: Optional[str] = None) -> "ApproxDP":
        """Paper 003's rule: (xi + rho + 2 sqrt(rho log(1/delta)), delta)-DP (Bun and Steinke, Prop. 1.3).

        ``method="rdp"`` instead takes the best alpha of the three RDP conversions of paper 004, which is
        never looser (the 003 rule is Mironov's conversion at its optimal alpha).
        """
        d = _conv_delta(delta)
        if method in (None, "bun_steinke"):
            return ApproxDP(self.xi + self.rho + 2.0 * math.sqrt(self.rho * math.log(1.0 / d)), d)
        if method == "rdp":
            return self.to_rdp_curve().to_approx_dp(d)
        raise ValueError(f"method must be None, 'bun_steinke' or 'rdp', got {method!r}")


@dataclass(frozen=True)
class RDP(Budget):
    """(alpha, epsilon)-Renyi DP (Mironov 2017)."""

    alpha: float
    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", _alpha(self.alpha))
        object.__setattr__(self, "epsilon", _nonneg(self.epsilon, "epsilon"))

    def to_approx_dp(self, delta: float, method: Optional[str] = None) -> "ApproxDP":
        """(eps', delta)-DP by "mironov", "asoodeh" or "balle2020" (paper 004 Corollaries 11-13).

        The default is the smallest of the three (all are valid); "asoodeh" <= "balle2020" <= "mironov".
        """
        d = _conv_delta(delta)
        return ApproxDP(_rdp_eps(self.alpha, self.epsilon, d, _rdp_method(method)), d)


@dataclass(frozen=True)
class GDP(Budget):
    """mu-Gaussian DP (Dong, Roth and Su); for the Gaussian mechanism mu = psi = D / sigma (paper 004)."""

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _nonneg(self.mu, "mu"))

    def to_approx_dp(self, delta: float, method: Optional[str] = None) -> "ApproxDP":
        """The exact (lossless) conversion: the smallest eps with delta_mu(eps) <= delta (rounded up)."""
        if method not in (None, "exact"):
            raise ValueError(f"method must be None or 'exact' for GDP, got {method!r}")
        d = _conv_delta(delta)
        return ApproxDP(float(_acc.gdp_epsilon_scalar(self.mu, d)), d)

    def delta(self, epsilon: float) -> float:
        """The exact delta_mu(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
        e = _nonneg(epsilon, "epsilon", allow_inf=True)
        return math.exp(float(_acc.gdp_log_delta(np.array([self.mu]), np.array([e]))[0]))

    def to_rdp(self, alpha: float) -> "RDP":
        """(alpha, alpha mu^2 / 2)-RDP (paper 004 Lemma 7)."""
        a = _alpha(alpha)
        return RDP(a, 0.5 * a * self.mu**2)

    def to_zcdp(self) -> ZCDP:
        """(mu^2 / 2)-zCDP."""
        return ZCDP(0.5 * self.mu**2)

    def to_rdp_curve(self) -> "RDPCurve":
        half = 0.5 * self.mu**2
        return RDPCurve(lambda a: half * np.asarray(a, dtype=float))

    def to_rao_dp(self, mechanism: str) -> "RaoDP":
        """Corollary 4.9 (paper 000): the Gaussian mechanism that is mu-GDP is mu-Rao-DP."""
        _mechanism(mechanism, ("gaussian",))
        return RaoDP(self.mu)


@dataclass(frozen=True)
class TCDP(Budget):
    """(rho, omega)-truncated CDP (Bun, Dwork, Rothblum and Steinke 2018): D_alpha <= rho alpha on (1, omega]."""

    rho: float
    omega: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _nonneg(self.rho, "rho"))
        object.__setattr__(self, "omega", _alpha(self.omega, "omega", allow_inf=True))

    def to_rdp(self, alpha: float) -> "RDP":
        a = _alpha(alpha)
        if a > self.omega:
            raise ValueError(f"alpha must be <= omega = {self.omega!r} for ({self.rho!r}, {self.omega!r})-tCDP")
        return RDP(a, self.rho * a)

    def to_rdp_curve(self) -> "RDPCurve":
        rho = self.rho
        return RDPCurve(lambda a: rho * np.asarray(a, dtype=float), alpha_max=self.omega)

    def to_approx_dp(self, delta: float, method: Optional[str] = None) -> "ApproxDP":
        """Best alpha in (1, omega] of the RDP conversions (Mironov's at its optimum is Bun et al.'s Lemma 6)."""
        return self.to_rdp_curve().to_approx_dp(delta, method)


@dataclass(frozen=True)
class RaoDP(Budget):
    """theta-Rao DP (paper 000): the Fisher-Rao distance between M(D) and M(D') is at most theta."""

    theta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "theta", _nonneg(self.theta, "theta"))

    def to_gdp(self, mechanism: str) -> GDP:
        """The Gaussian mechanism that is theta-Rao-DP (sigma = D / theta) is theta-GDP (Corollary 4.9)."""
        _mechanism(mechanism, ("gaussian",))
        return GDP(self.theta)

    def to_pure_dp(self, mechanism: str) -> PureDP:
        """The Laplace mechanism that is theta-Rao-DP (b = D / theta) is theta-DP (Corollary 4.5)."""
        _mechanism(mechanism, ("laplace",))
        return PureDP(self.theta)

    def to_approx_dp(self, delta: float, mechanism: str = "gaussian", method: Optional[str] = None) -> ApproxDP:
        """The exact (eps, delta) of the theta-Rao-DP Gaussian or Laplace mechanism."""
        m = _mechanism(mechanism, ("gaussian", "laplace"))
        if m == "gaussian":
            return self.to_gdp("gaussian").to_approx_dp(delta, method)
        d = _conv_delta(delta)
        from .calibration import epsilon_for_delta
        from .noise import Laplace

        if self.theta == 0:
            return ApproxDP(0.0, d)
        return ApproxDP(float(epsilon_for_delta(Laplace(), d, 1.0 / self.theta, 1.0)), d)


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
    """

    __slots__ = ("_alphas", "_eps", "_fn", "_alpha_max")

    def __init__(
        self,
        epsilon: Union[Callable[[np.ndarray], Any], Sequence[float], np.ndarray],
        alphas: Optional[Union[Sequence[float], np.ndarray]] = None,
        *,
        alpha_max: float = math.inf,
    ) -> None:
        amax = _alpha(alpha_max, "alpha_max", allow_inf=True)
        if callable(epsilon):
            fn = epsilon
            grid = None
            vals = None
            if alphas is not None:
                raise TypeError("alphas must be None when epsilon is a callable (the curve is defined on (1, alpha_max])")
        else:
            if alphas is None:
                raise TypeError("alphas is required when epsilon is given as values")
            grid = as_float_array(alphas, "alphas").reshape(-1).copy()
            vals = as_float_array(epsilon, "epsilon").reshape(-1).copy()
            if grid.size == 0:
                raise ValueError("alphas must not be empty")
            if grid.shape != vals.shape:
                raise ValueError(f"alphas and epsilon must have the same length ({grid.size} != {vals.size})")
            if np.isnan(grid).any() or not (grid > 1).all() or np.isinf(grid).any():
                raise ValueError("alphas must be finite and > 1")
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
        if self._fn is not None:
            return f"RDPCurve({self._fn!r}, alpha_max={self._alpha_max!r})"
        return f"RDPCurve(epsilon={self._eps.tolist()!r}, alphas={self._alphas.tolist()!r})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, RDPCurve):
            return NotImplemented
        if self._fn is not None or other._fn is not None:
            return self is other
        return bool(np.array_equal(self._alphas, other._alphas) and np.array_equal(self._eps, other._eps))

    def __hash__(self) -> int:
        if self._fn is not None:
            return id(self)
        return hash((self._alphas.tobytes(), self._eps.tobytes()))

    @property
    def alphas(self) -> Optional[np.ndarray]:
        """The grid of orders (None for a callable curve)."""
        return self._alphas

    @property
    def epsilons(self) -> Optional[np.ndarray]:
        return self._eps

    @property
    def alpha_max(self) -> float:
        return self._alpha_max

    @property
    def is_grid(self) -> bool:
        return self._fn is None

    def __call__(self, alpha: Any) -> Any:
        """A valid epsilon(alpha): exact on the grid or for a callable; +inf beyond the largest order."""
        a = np.asarray(alpha, dtype=float)
        if np.isnan(a).any() or not (a > 1).all():
            raise ValueError("alpha must be > 1")
        if self._fn is not None:
            out = np.asarray(self._fn(a), dtype=float)
            if out.shape != a.shape:
                out = np.broadcast_to(out, a.shape).astype(float)
            out = np.where(a > self._alpha_max, np.inf, out)
            if np.isnan(out).any() or (out < 0).any():
                raise ValueError("the RDP curve returned a negative or NaN epsilon")
        else:
            idx = np.searchsorted(self._alphas, a, side="left")
            inside = idx < self._alphas.size
            out = np.where(inside, self._eps[np.minimum(idx, self._alphas.size - 1)], np.inf)
        return float(out) if out.ndim == 0 else out

    def at(self, alpha: float) -> RDP:
        a = _alpha(alpha)
        e = float(self(a))
        if math.isinf(e):
            raise ValueError(f"alpha = {a!r} is beyond the curve's largest order")
        return RDP(a, e)

    def _grid(self, alphas: Optional[np.ndarray] = None) -> np.ndarray:
        if alphas is not None:
            g = as_float_array(alphas, "alphas").reshape(-1)
            if np.isnan(g).any() or not (g > 1).all():
                raise ValueError("alphas must be > 1")
            return g[g <= self._alpha_max]
        if self._alphas is not None:
            return self._alphas
        g = DEFAULT_ALPHAS[DEFAULT_ALPHAS <= self._alpha_max]
        if math.isfinite(self._alpha_max):
            g = np.unique(np.append(g, self._alpha_max))
        return g

    def best_alpha(self, delta: float, method: Optional[str] = None, alphas: Any = None) -> Tuple[float, float]:
        """(epsilon, alpha): the best order for (epsilon, delta)-DP.

        On a grid curve the best grid order; on a callable the best order of ``alphas`` (default
        :data:`DEFAULT_ALPHAS`), refined by a bounded scalar search between its neighbours (any order is
        valid for a callable, so the refinement is safe and only ever lowers epsilon).
        """
        d = _conv_delta(delta)
        meth = _rdp_method(method)
        g = self._grid(alphas)
        if g.size == 0:
            raise ValueError("no order to convert at")
        vals = np.asarray(self(g), dtype=float)
        eps = _rdp_eps_array(g, vals, d, meth)
        i = int(np.argmin(eps))
        best_e, best_a = float(eps[i]), float(g[i])
        if self._fn is not None and 0 < i < g.size - 1 and best_e > 0 and math.isfinite(best_e):
            from scipy import optimize

            f = lambda a: _rdp_eps(float(a), float(self(float(a))), d, meth)  # noqa: E731
            res = optimize.minimize_scalar(f, bounds=(g[i - 1], g[i + 1]), method="bounded", options={"xatol": 1e-10})
            if res.success and res.fun < best_e:
                best_a = float(res.x)
                best_e = f(best_a)  # recompute at the reported order
        return best_e, best_a

    def to_approx_dp(self, delta: float, method: Optional[str] = None, alphas: Any = None) -> ApproxDP:
        e, _ = self.best_alpha(delta, method, alphas)
        return ApproxDP(e, float(delta))


def _fields(b: Budget) -> dict:
    """The fields of a value type as a plain dict (for JSON)."""
    if isinstance(b, RDPCurve):
        if not b.is_grid:
            raise TypeError("an RDPCurve defined by a callable cannot be serialised; use a grid curve")
        return {"alphas": b.alphas.tolist(), "epsilon": b.epsilons.tolist()}
    return {k: getattr(b, k) for k in b.__dataclass_fields__}  # type: ignore[attr-defined]


_TYPES = {t.__name__: t for t in (PureDP, ApproxDP, KLDP, MCDP, ZCDP, RDP, RDPCurve, GDP, TCDP, RaoDP)}


def _from_fields(name: str, fields: dict) -> Budget:
    if name not in _TYPES:
        raise ValueError(f"unknown budget type {name!r}")
    if name == "RDPCurve":
        return RDPCurve(fields["epsilon"], fields["alphas"])
    return _TYPES[name](**fields)
