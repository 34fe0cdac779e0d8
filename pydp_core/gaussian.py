"""The Gaussian mechanism through its sensitivity index psi = D / sigma (Kaissis et al., paper 004).

psi (the signal-to-noise ratio of the mechanism, equal to mu of mu-GDP) determines everything:

- the exact privacy profile, :func:`delta` and its inverse :func:`epsilon` (Corollary 14; lossless,
  vectorised C++ in log space, delta down to 1e-300);
- the ROC curve of the optimal membership test, :func:`roc` (R(x) = Phi(psi + Phi^-1(x)), Lemma 2), its
  area :func:`auc` (Phi(psi / sqrt 2), Lemma 3) and the GDP trade-off function :func:`tradeoff`
  (G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), equation 5.2);
- Renyi DP, :func:`rdp` (alpha psi^2 / 2, Lemma 7), and the three RDP -> (eps, delta) conversions at
  one order, :func:`rdp_epsilon` (Corollaries 11-13), as in the paper's Figure 6;
- group privacy (:func:`group_privacy`, k psi) and composition (:func:`composition`, root sum of squares);
- DP-SGD's central-limit mu, :func:`dpsgd_mu` (equation 5.7).

:func:`gaussian_sigma` calibrates the Gaussian mechanism to a budget of any definition (paper 003's
table); :func:`arsinh_parameters` gives the arsinh mechanism for tCDP.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple, Optional

import numpy as np
from scipy import special as _sc

from . import _core
from ._validation import as_float_array, broadcast, check_delta, check_epsilon, check_positive, check_probability
from ._validation import check_threads, scalar_or_array
from .budgets import (
    GDP,
    RDP,
    TCDP,
    ZCDP,
    ApproxDP,
    Budget,
    PrivacyWarning,
    RaoDP,
    _METHOD_CODE,
    _nonneg,
    _scalar,
)

__all__ = [
    "psi",
    "epsilon",
    "delta",
    "roc",
    "auc",
    "tradeoff",
    "rdp",
    "rdp_epsilon",
    "group_privacy",
    "composition",
    "dpsgd_mu",
    "gaussian_sigma",
    "arsinh_parameters",
    "ArsinhParameters",
]

_acc = _core.accounting


def _psi_array(value: Any, name: str = "psi") -> np.ndarray:
    arr = as_float_array(value, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0")
    if np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    return arr


def psi(sensitivity: Any, sigma: Any) -> Any:
    """The sensitivity index psi = sensitivity / sigma (Definition 6); sigma is the standard deviation."""
    d = as_float_array(sensitivity, "sensitivity")
    if np.isnan(d).any() or (d < 0).any() or np.isinf(d).any():
        raise ValueError("sensitivity must be finite and >= 0")
    s = check_positive(sigma, "sigma")
    d_b, s_b = broadcast(sensitivity=d, sigma=s)
    return scalar_or_array(d_b / s_b, sensitivity, sigma)


def epsilon(psi: Any, delta: Any, *, threads: int = 0) -> Any:
    """The exact smallest epsilon with delta_psi(epsilon) <= delta (vectorised; rounded up).

    delta must lie in (0, 1); psi = 0 gives 0. Relative accuracy about 1e-15 (tested against mpmath for
    psi in [0.01, 20] and delta in [1e-300, 0.5]), including delta just below the total variation
    delta_psi(0), where epsilon -> 0 and the direct equation is ill-conditioned: there (psi <= 8) the
    kernel solves TV - delta(eps) = TV - delta with the total variation in double-double arithmetic.
    """
    p = _psi_array(psi)
    dl = check_delta(delta, allow_zero=False)
    p_b, d_b = broadcast(psi=p, delta=dl)
    out = _acc.gdp_epsilon(p_b, d_b, check_threads(threads, zero_means_all=True))
    return scalar_or_array(out, psi, delta)


def delta(psi: Any, epsilon: Any, *, threads: int = 0) -> Any:
    """The exact privacy profile delta_psi(eps) = Phi(psi/2 - eps/psi) - e^eps Phi(-psi/2 - eps/psi)."""
    p = _psi_array(psi)
    e = check_epsilon(epsilon, allow_inf=True)
    p_b, e_b = broadcast(psi=p, epsilon=e)
    out = np.exp(_acc.gdp_log_delta(p_b, e_b, check_threads(threads, zero_means_all=True)))
    return scalar_or_array(out, psi, epsilon)


def roc(fpr: Any, psi: Any) -> Any:
    """The ROC curve of the optimal test between M(D) and M(D'): TPR = Phi(psi + Phi^-1(fpr)) (Lemma 2)."""
    x = check_probability(fpr, "fpr")
    p = _psi_array(psi)
    x_b, p_b = broadcast(fpr=x, psi=p)
    with np.errstate(invalid="ignore"):
        out = _sc.ndtr(p_b + _sc.ndtri(x_b))
    out = np.where(x_b == 0, 0.0, np.where(x_b == 1, 1.0, out))
    return scalar_or_array(out, fpr, psi)


def auc(psi: Any) -> Any:
    """The area under the ROC curve, Phi(psi / sqrt 2) (Lemma 3): 0.5 is perfect privacy."""
    p = _psi_array(psi)
    return scalar_or_array(_sc.ndtr(p / math.sqrt(2.0)), psi)


def tradeoff(alpha: Any, mu: Any) -> Any:
    """The GDP trade-off function G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (equation 5.2).

    The type II error of the best level-alpha test; evaluated as Phi(-Phi^-1(alpha) - mu), so small
    alpha keeps its digits. ``tradeoff(x, psi) = 1 - roc(x, psi)`` (Lemma 5).
    """
    a = check_probability(alpha, "alpha")
    m = _psi_array(mu, "mu")
    a_b, m_b = broadcast(alpha=a, mu=m)
    with np.errstate(invalid="ignore"):
        out = _sc.ndtr(-_sc.ndtri(a_b) - m_b)
    out = np.where(a_b == 0, 1.0, np.where(a_b == 1, 0.0, out))
    return scalar_or_array(out, alpha, mu)


def _alpha_array(alpha: Any) -> np.ndarray:
    a = as_float_array(alpha, "alpha")
    if np.isnan(a).any() or not (a > 1).all():
        raise ValueError("alpha must be > 1")
    return a


def rdp(alpha: Any, psi: Any) -> Any:
    """The Renyi divergence of order alpha of the Gaussian mechanism, alpha psi^2 / 2 (Lemma 7)."""
    a = _alpha_array(alpha)
    p = _psi_array(psi)
    a_b, p_b = broadcast(alpha=a, psi=p)
    return scalar_or_array(0.5 * a_b * p_b * p_b, alpha, psi)


def rdp_epsilon(psi: Any, alpha: Any, delta: Any, method: str = "mironov", *, threads: int = 0) -> Any:
    """epsilon of the Gaussian mechanism by way of (alpha, alpha psi^2 / 2)-RDP and one conversion.

    ``method``: "mironov" (6.1), "asoodeh" (6.4-6.5) or "balle2020" (6.6). Vectorised; every result is
    at least :func:`epsilon` (the exact one).
    """
    if method not in _METHOD_CODE:
        raise ValueError(f"method must be one of {tuple(_METHOD_CODE)}, got {method!r}")
    a = _alpha_array(alpha)
    p = _psi_array(psi)
    dl = check_delta(delta, allow_zero=False)
    a_b, p_b, d_b = broadcast(alpha=a, psi=p, delta=dl)
    out = _acc.rdp_to_epsilon(a_b, 0.5 * a_b * p_b * p_b, d_b, _METHOD_CODE[method], check_threads(threads, zero_means_all=True))
    return scalar_or_array(out, psi, alpha, delta)


def _group_size(k: Any) -> np.ndarray:
    arr = as_float_array(k, "group_size")
    if np.isnan(arr).any() or (arr < 1).any() or np.isinf(arr).any() or (arr != np.floor(arr)).any():
        raise ValueError("group_size must be a finite integer >= 1")
    return arr


def group_privacy(psi: Any, group_size: Any) -> Any:
    """psi for groups of ``group_size`` individuals: k psi (Corollary 7)."""
    p = _psi_array(psi)
    k = _group_size(group_size)
    p_b, k_b = broadcast(psi=p, group_size=k)
    return scalar_or_array(p_b * k_b, psi, group_size)


def composition(psis: Any) -> float:
    """psi of the composition of Gaussian mechanisms with indices psi_i: sqrt(sum psi_i^2) (Corollary 8)."""
    p = _psi_array(psis, "psis").reshape(-1)
    if p.size == 0:
        raise ValueError("psis must not be empty")
    m = float(p.max())
    if m == 0:
        return 0.0
    return m * math.sqrt(math.fsum((p / m) ** 2))  # scaled: no overflow or underflow


# ------------------------------------------------------------------------------------------------------
# DP-SGD (equation 5.7)
# ------------------------------------------------------------------------------------------------------
def _dpsgd_h(x: float) -> float:
    """h(x) = e^{x^2} Phi(1.5 x) + 3 Phi(-0.5 x) - 2, x = 1 / sigma, without cancellation.

    h = expm1(x^2) Phi(1.5x) + [erf(1.5x/sqrt2) - 3 erf(0.5x/sqrt2)] / 2; the bracket cancels to O(x^3)
    and is summed as a series for small x. For large x, log h is returned through the caller.
    """
    if x < 0.5:
        # (1/sqrt(pi)) sum_{n>=1} (-1)^n (x/sqrt2)^(2n+1) (1.5^(2n+1) - 3 0.5^(2n+1)) / (n! (2n+1))
        z = x / math.sqrt(2.0)
        total = 0.0
        term_pow = z
        fact = 1.0
        for n in range(1, 40):
            term_pow *= z * z
            fact *= n
            c = (1.5 ** (2 * n + 1) - 3.0 * 0.5 ** (2 * n + 1)) / (fact * (2 * n + 1))
            t = (-1) ** n * term_pow * c
            total += t
            if abs(t) < 1e-18 * abs(total):
                break
        bracket = total / math.sqrt(math.pi)
    else:
        bracket = 0.5 * (math.erf(1.5 * x / math.sqrt(2.0)) - 3.0 * math.erf(0.5 * x / math.sqrt(2.0)))
    return math.expm1(x * x) * float(_sc.ndtr(1.5 * x)) + bracket


def dpsgd_mu(sampling_rate: Any, noise_multiplier: Any, steps: Any) -> float:
    """mu of DP-SGD by the central limit theorem of f-DP (equation 5.7; Bu et al. 2020):

    mu = p sqrt(T) sqrt(2 (e^{1/sigma^2} Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2)),

    with sampling rate p, noise multiplier sigma and T steps. Asymptotic (n, T -> infinity with
    p sqrt(T) fixed): a good approximation for many steps, not a proven bound for few.
    """
    p = _scalar(sampling_rate, "sampling_rate")
    if not 0 < p <= 1:
        raise ValueError(f"sampling_rate must lie in (0, 1], got {p!r}")
    sigma = _scalar(noise_multiplier, "noise_multiplier")
    if not sigma > 0 or math.isinf(sigma):
        raise ValueError(f"noise_multiplier must be finite and > 0, got {sigma!r}")
    t = _scalar(steps, "steps")
    if not t >= 1 or math.isinf(t) or t != math.floor(t):
        raise ValueError(f"steps must be a finite integer >= 1, got {t!r}")
    x = 1.0 / sigma
    nu = p * math.sqrt(t)
    if x * x > 600.0:  # e^{x^2} dominates: log h = x^2 + log Phi(1.5x) + log1p(rest)
        lphi = float(_sc.log_ndtr(1.5 * x))
        rest = (3.0 * float(_sc.ndtr(-0.5 * x)) - 2.0) * math.exp(-x * x - lphi)
        log_h = x * x + lphi + math.log1p(rest)
        log_mu = math.log(nu) + 0.5 * (math.log(2.0) + log_h)
        return math.exp(log_mu) if log_mu < 709.0 else math.inf
    return nu * math.sqrt(2.0 * _dpsgd_h(x))


# ------------------------------------------------------------------------------------------------------
# Calibration of the Gaussian mechanism to a budget (paper 003's table)
# ------------------------------------------------------------------------------------------------------
class ArsinhParameters(NamedTuple):
    """The arsinh mechanism q(x) + A arsinh(Z / A), Z ~ N(0, sigma^2) (Bun et al. 2018; paper 003)."""

    A: float
    sigma: float


def arsinh_parameters(budget: TCDP, sensitivity: float = 1.0) -> ArsinhParameters:
    """Parameters of the arsinh mechanism for (rho, omega)-tCDP at l2 sensitivity D (paper 003).

    noise = A arsinh(Z / A) with Z ~ N(0, D^2 / (2 rho0)) gives (16 rho0, A / (8 D))-tCDP; so for
    (rho, omega): A = 8 D omega and sigma = D sqrt(8 / rho).
    """
    if not isinstance(budget, TCDP):
        raise TypeError(f"budget must be a TCDP, got {type(budget).__name__}")
    d = _sens(sensitivity)
    if budget.rho == 0:
        raise ValueError("rho must be > 0 to calibrate noise")
    if math.isinf(budget.omega):
        raise ValueError("omega must be finite for the arsinh mechanism (omega = inf is zCDP: use ZCDP)")
    return ArsinhParameters(8.0 * d * budget.omega, d * math.sqrt(8.0 / budget.rho))


def _sens(sensitivity: Any) -> float:
    d = _nonneg(sensitivity, "sensitivity")
    if d == 0:
        raise ValueError("sensitivity must be > 0")
    return d


def gaussian_sigma(budget: Budget, sensitivity: float = 1.0, method: Optional[str] = None) -> float:
    """The standard deviation of Gaussian noise that meets ``budget`` at l2 ``sensitivity`` D.

    - ``ApproxDP``: ``method="analytic"`` (default): the exact minimal sigma (Balle and Wang; verified,
      never below the exact minimum). ``method="classic"``: sigma = D sqrt(2 log(1.25/delta)) / eps, which
      is proven for eps < 1 only: a :class:`PrivacyWarning` outside it.
    - ``RDP(alpha, eps)``: sigma = D sqrt(alpha / (2 eps)); ``ZCDP(rho)``: D / sqrt(2 rho);
      ``GDP(mu)``: D / mu; ``RaoDP(theta)``: D / theta (Theorem 4.8 of paper 000).
    - ``TCDP``: the sigma of the Gaussian inside the arsinh mechanism, D sqrt(8 / rho) (use
      :func:`arsinh_parameters` for A as well). Plain Gaussian noise of that sigma is *not* the mechanism.
    """
    d = _sens(sensitivity)
    if isinstance(budget, ApproxDP):
        m = method or "analytic"
        if budget.epsilon == 0:
            raise ValueError("epsilon must be > 0 to calibrate a Gaussian mechanism")
        if not 0 < budget.delta < 1:
            raise ValueError(f"delta must lie in (0, 1) for the Gaussian mechanism, got {budget.delta!r}")
        if m == "analytic":
            from .calibration import minimal_scale
            from .noise import Gaussian

            return float(minimal_scale(Gaussian(), budget.epsilon, budget.delta, d))
        if m == "classic":
            if budget.epsilon >= 1:
                warnings.warn(
                    f"the classic Gaussian calibration is only proven for epsilon < 1 (got {budget.epsilon!r}); "
                    "use method='analytic'",
                    PrivacyWarning,
                    stacklevel=2,
                )
            return d * math.sqrt(2.0 * math.log(1.25 / budget.delta)) / budget.epsilon
        raise ValueError(f"method must be 'analytic' or 'classic' for ApproxDP, got {method!r}")
    if method is not None:
        raise ValueError(f"method applies to ApproxDP only, got {method!r} for {type(budget).__name__}")
    if isinstance(budget, RDP):
        if budget.epsilon == 0:
            raise ValueError("epsilon must be > 0")
        return d * math.sqrt(budget.alpha / (2.0 * budget.epsilon))
    if isinstance(budget, ZCDP):
        if budget.rho == 0:
            raise ValueError("rho must be > 0")
        return d / math.sqrt(2.0 * budget.rho)
    if isinstance(budget, GDP):
        if budget.mu == 0:
            raise ValueError("mu must be > 0")
        return d / budget.mu
    if isinstance(budget, RaoDP):
        if budget.theta == 0:
            raise ValueError("theta must be > 0")
        return d / budget.theta
    if isinstance(budget, TCDP):
        return arsinh_parameters(budget, d).sigma
    raise TypeError(f"no Gaussian calibration for {type(budget).__name__}")


# ------------------------------------------------------------------------------------------------------
# command line: pydp-core gaussian-epsilon --psi 1.0 --delta 1e-5
# ------------------------------------------------------------------------------------------------------
def _configure_cli(p: Any) -> None:
    p.add_argument("--psi", type=float, nargs="+", required=True, help="sensitivity index(es) D / sigma")
    p.add_argument("--delta", type=float, default=1e-5, help="target delta in (0, 1) (default 1e-5)")


def _cli(args: Any) -> int:
    import sys

    from .budgets import RDPCurve

    print("psi\texact\tmironov\tasoodeh\tballe2020\tauc", file=sys.stdout)
    for p in args.psi:
        exact = epsilon(p, args.delta)
        curve = RDPCurve(lambda a, p=p: 0.5 * p * p * np.asarray(a, dtype=float))
        conv = [curve.best_alpha(args.delta, m)[0] for m in ("mironov", "asoodeh", "balle2020")]
        print(f"{p:g}\t{exact:.10g}\t" + "\t".join(f"{c:.10g}" for c in conv) + f"\t{auc(p):.10g}", file=sys.stdout)
    return 0


def _register_cli() -> None:
    from .cli import command

    command("gaussian-epsilon", "exact epsilon(delta) of the Gaussian mechanism by psi, and the RDP routes", _configure_cli)(_cli)


_register_cli()
