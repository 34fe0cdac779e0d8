"""The Gaussian mechanism through its sensitivity index psi = D / sigma (Kaissis et al. 2023).

psi (the signal-to-noise ratio of the mechanism, equal to mu of mu-GDP: :func:`gdp_mu`) determines everything:

- the exact privacy profile, :func:`gdp_delta` and its inverse :func:`gdp_epsilon` (Corollary 14; lossless,
  vectorised C++ in log space, delta down to 1e-300);
- the ROC curve of the optimal membership test, :func:`roc` (R(x) = Phi(psi + Phi^-1(x)), Lemma 2), its
  area :func:`auc` (Phi(psi / sqrt 2), Lemma 3) and the GDP trade-off function :func:`tradeoff`
  (G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), equation 5.2);
- Renyi DP, :func:`rdp` (alpha psi^2 / 2, Lemma 7), and the three RDP -> (eps, delta) conversions at
  one order, :func:`rdp_epsilon` (Corollaries 11-13), as in the paper's Figure 6;
- group privacy (:func:`group_privacy`, k psi) and composition (:func:`composition`, root sum of squares);
- DP-SGD's central-limit mu, :func:`dpsgd_mu` (equation 5.7).

:func:`gaussian_sigma` calibrates the Gaussian mechanism to a budget of any definition (the table of
Variants of DP 2019); :func:`arsinh_parameters` gives the arsinh mechanism for tCDP. Every function takes
scalars or arrays that broadcast, and returns a float for scalars. The proofs are in ``docs/accounting.md``.

Over 600 lines because of the docstrings of the public conversions (about 150 lines of code).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special as _sc

from .._core import accounting as _acc
from .._validation import (
    broadcast,
    check_alpha_array,
    check_delta,
    check_epsilon,
    check_integral_array,
    check_positive,
    check_positive_scalar,
    check_probability,
    check_rate,
    check_threads,
    scalar_or_array,
)
from .budgets import (
    _METHOD_CODE,
    GDP,
    RDP,
    TCDP,
    ZCDP,
    ApproxDP,
    Budget,
    PrivacyWarning,
    RaoDP,
    classic_gaussian_mu,
)

__all__ = [
    "gdp_mu",
    "gdp_epsilon",
    "gdp_delta",
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


def gdp_mu(*, sensitivity: ArrayLike, sigma: ArrayLike) -> Any:
    """mu of mu-GDP, the sensitivity index psi = sensitivity / sigma (Definition 6); sigma is the standard deviation.

    Parameters
    ----------
    sensitivity : float or array_like
        The l2 sensitivity D, finite and >= 0.
    sigma : float or array_like
        The standard deviation, > 0 and finite.

    Returns
    -------
    float or ndarray
        psi = D / sigma.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> gdp_mu(sensitivity=1.0, sigma=4.0)
    0.25
    """
    d = check_epsilon(sensitivity, "sensitivity")
    s = check_positive(sigma, "sigma")
    d_b, s_b = broadcast(sensitivity=d, sigma=s)
    return scalar_or_array(d_b / s_b, sensitivity, sigma)


def gdp_epsilon(psi: ArrayLike, *, delta: ArrayLike, threads: int = 0) -> Any:
    """The exact smallest epsilon with delta_psi(epsilon) <= delta (vectorised; rounded up).

    delta must lie in (0, 1); psi = 0 gives 0. Relative accuracy about 1e-15 (tested against mpmath for
    psi in [0.01, 20] and delta in [1e-300, 0.5]), including delta just below the total variation
    delta_psi(0), where epsilon -> 0 and the direct equation is ill-conditioned: there (psi <= 8) the
    kernel solves TV - delta(eps) = TV - delta with the total variation in double-double arithmetic.

    Parameters
    ----------
    psi : float or array_like
        The sensitivity index, finite and >= 0.
    delta : float or array_like
        In (0, 1).
    threads : int, optional
        Worker threads of the kernel (0: automatic); the result does not depend on it.

    Returns
    -------
    float or ndarray
        The exact epsilon, rounded up.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> gdp_epsilon(1.0, delta=1e-6)
    4.88655411746...
    """
    p = check_epsilon(psi, "psi")
    dl = check_delta(delta, allow_zero=False)
    p_b, d_b = broadcast(psi=p, delta=dl)
    out = _acc.gdp_epsilon(p_b, d_b, check_threads(threads, zero_means_all=True))
    return scalar_or_array(out, psi, delta)


def gdp_delta(psi: ArrayLike, *, epsilon: ArrayLike, threads: int = 0) -> Any:
    """The exact privacy profile delta_psi(eps) = Phi(psi/2 - eps/psi) - e^eps Phi(-psi/2 - eps/psi).

    Evaluated in log space (Corollary 14; Balle and Wang 2018), accurate down to delta = 1e-300.

    Parameters
    ----------
    psi : float or array_like
        The sensitivity index, finite and >= 0.
    epsilon : float or array_like
        >= 0 (``inf`` gives 0).
    threads : int, optional
        Worker threads of the kernel (0: automatic).

    Returns
    -------
    float or ndarray
        delta_psi(epsilon).

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> gdp_delta(1.0, epsilon=1.0)
    0.12693673750...
    """
    p = check_epsilon(psi, "psi")
    e = check_epsilon(epsilon, allow_inf=True)
    p_b, e_b = broadcast(psi=p, epsilon=e)
    out = np.exp(_acc.gdp_log_delta(p_b, e_b, check_threads(threads, zero_means_all=True)))
    return scalar_or_array(out, psi, epsilon)


def roc(fpr: ArrayLike, psi: ArrayLike) -> Any:
    """The ROC curve of the optimal test between M(D) and M(D'): TPR = Phi(psi + Phi^-1(fpr)) (Lemma 2).

    Parameters
    ----------
    fpr : float or array_like
        False-positive rates in [0, 1].
    psi : float or array_like
        The sensitivity index, finite and >= 0.

    Returns
    -------
    float or ndarray
        The true-positive rate of the most powerful test.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> roc(0.05, 1.0)
    0.25951102284...
    """
    x = check_probability(fpr, "fpr")
    p = check_epsilon(psi, "psi")
    x_b, p_b = broadcast(fpr=x, psi=p)
    with np.errstate(invalid="ignore"):
        out = _sc.ndtr(p_b + _sc.ndtri(x_b))
    out = np.where(x_b == 0, 0.0, np.where(x_b == 1, 1.0, out))
    return scalar_or_array(out, fpr, psi)


def auc(psi: ArrayLike) -> Any:
    """The area under the ROC curve, Phi(psi / sqrt 2) (Lemma 3): 0.5 is perfect privacy.

    Parameters
    ----------
    psi : float or array_like
        The sensitivity index, finite and >= 0.

    Returns
    -------
    float or ndarray
        The AUC.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> auc(1.0)
    0.76024993890...
    """
    p = check_epsilon(psi, "psi")
    return scalar_or_array(_sc.ndtr(p / math.sqrt(2.0)), psi)


def tradeoff(alpha: ArrayLike, mu: ArrayLike) -> Any:
    """The GDP trade-off function G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (equation 5.2).

    The type II error of the best level-alpha test; evaluated as Phi(-Phi^-1(alpha) - mu), so small
    alpha keeps its digits. ``tradeoff(x, psi) = 1 - roc(x, psi)`` (Lemma 5).

    Parameters
    ----------
    alpha : float or array_like
        Type I errors in [0, 1].
    mu : float or array_like
        The GDP parameter, finite and >= 0.

    Returns
    -------
    float or ndarray
        G_mu(alpha).

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> tradeoff(0.05, 1.0)
    0.74048897715...
    """
    a = check_probability(alpha, "alpha")
    m = check_epsilon(mu, "mu")
    a_b, m_b = broadcast(alpha=a, mu=m)
    with np.errstate(invalid="ignore"):
        out = _sc.ndtr(-_sc.ndtri(a_b) - m_b)
    out = np.where(a_b == 0, 1.0, np.where(a_b == 1, 0.0, out))
    return scalar_or_array(out, alpha, mu)


def rdp(alpha: ArrayLike, psi: ArrayLike) -> Any:
    """The Renyi divergence of order alpha of the Gaussian mechanism, alpha psi^2 / 2 (Lemma 7).

    Parameters
    ----------
    alpha : float or array_like
        Orders > 1.
    psi : float or array_like
        The sensitivity index, finite and >= 0.

    Returns
    -------
    float or ndarray
        alpha psi^2 / 2.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> rdp(2.0, 1.0)
    1.0
    """
    a = check_alpha_array(alpha, allow_inf=True)
    p = check_epsilon(psi, "psi")
    a_b, p_b = broadcast(alpha=a, psi=p)
    return scalar_or_array(0.5 * a_b * p_b * p_b, alpha, psi)


def rdp_epsilon(psi: ArrayLike, *, alpha: ArrayLike, delta: ArrayLike, method: str = "mironov", threads: int = 0) -> Any:
    """epsilon of the Gaussian mechanism by way of (alpha, alpha psi^2 / 2)-RDP and one conversion.

    ``method``: "mironov" (6.1), "asoodeh" (6.4-6.5) or "balle2020" (6.6). Vectorised; every result is
    at least :func:`gdp_epsilon` (the exact one).

    Parameters
    ----------
    psi : float or array_like
        The sensitivity index, finite and >= 0.
    alpha : float or array_like
        Orders > 1.
    delta : float or array_like
        In (0, 1).
    method : str, optional
        The conversion (default "mironov").
    threads : int, optional
        Worker threads of the kernel (0: automatic).

    Returns
    -------
    float or ndarray
        The converted epsilon.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, ``method`` is unknown, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.

    Examples
    --------
    >>> rdp_epsilon(1.0, alpha=8.0, delta=1e-6)
    5.97364436542...
    >>> rdp_epsilon(1.0, alpha=8.0, delta=1e-6) >= gdp_epsilon(1.0, delta=1e-6)
    True
    """
    if method not in _METHOD_CODE:
        raise ValueError(f"method must be one of {tuple(_METHOD_CODE)}, got {method!r}")
    a = check_alpha_array(alpha, allow_inf=True)
    p = check_epsilon(psi, "psi")
    dl = check_delta(delta, allow_zero=False)
    a_b, p_b, d_b = broadcast(alpha=a, psi=p, delta=dl)
    out = _acc.rdp_to_epsilon(a_b, 0.5 * a_b * p_b * p_b, d_b, _METHOD_CODE[method], check_threads(threads, zero_means_all=True))
    return scalar_or_array(out, psi, alpha, delta)


def group_privacy(psi: ArrayLike, group_size: ArrayLike) -> Any:
    """psi for groups of ``group_size`` individuals: k psi (Corollary 7).

    Parameters
    ----------
    psi : float or array_like
        The sensitivity index, finite and >= 0.
    group_size : int or array_like
        Whole numbers k >= 1.

    Returns
    -------
    float or ndarray
        k psi.

    Raises
    ------
    ValueError
        If an argument is NaN or out of range, or the arguments do not broadcast.
    TypeError
        If an argument is not real-valued.
    Examples
    --------
    >>> group_privacy(0.5, 3)
    1.5
    """
    p = check_epsilon(psi, "psi")
    k = check_integral_array(group_size, "group_size")
    p_b, k_b = broadcast(psi=p, group_size=k)
    return scalar_or_array(p_b * k_b, psi, group_size)


def composition(psis: ArrayLike) -> float:
    """psi of the composition of Gaussian mechanisms with indices psi_i: sqrt(sum psi_i^2) (Corollary 8).

    Parameters
    ----------
    psis : array_like
        The indices, finite and >= 0 (at least one).

    Returns
    -------
    float
        sqrt(sum psi_i^2), scaled so that it neither overflows nor underflows.

    Raises
    ------
    ValueError
        If ``psis`` is empty, or has a NaN or out-of-range value.
    TypeError
        If ``psis`` is not real-valued.

    Examples
    --------
    >>> composition([0.3, 0.4])
    0.5
    """
    p = check_epsilon(psis, "psis").reshape(-1)
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


def dpsgd_mu(sampling_rate: float, noise_multiplier: float, steps: float) -> float:
    """mu of DP-SGD by the central limit theorem of f-DP (equation 5.7; Bu et al. 2020):

    mu = p sqrt(T) sqrt(2 (e^{1/sigma^2} Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2)),

    with sampling rate p, noise multiplier sigma and T steps. Asymptotic (n, T -> infinity with
    p sqrt(T) fixed): a good approximation for many steps, not a proven bound for few.

    Parameters
    ----------
    sampling_rate : float
        p in (0, 1].
    noise_multiplier : float
        sigma, > 0 and finite.
    steps : int
        T, a whole number >= 1.

    Returns
    -------
    float
        mu (``inf`` where it overflows).

    Raises
    ------
    ValueError
        If an argument is NaN or out of range.
    TypeError
        If an argument is not a real scalar.

    Examples
    --------
    >>> dpsgd_mu(0.01, 1.0, 1000)
    0.54079453462...
    """
    p = check_rate(sampling_rate, "sampling_rate")
    sigma = check_positive_scalar(noise_multiplier, "noise_multiplier")
    t = float(check_integral_array(steps, "steps"))
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
# Calibration of the Gaussian mechanism to a budget (the table of Variants of DP 2019)
# ------------------------------------------------------------------------------------------------------
class ArsinhParameters(NamedTuple):
    """The arsinh mechanism q(x) + A arsinh(Z / A), Z ~ N(0, sigma^2) (Bun et al. 2018; Variants of DP 2019).

    Parameters
    ----------
    A : float
        The arsinh scale.
    sigma : float
        The standard deviation of the Gaussian inside.

    Examples
    --------
    >>> arsinh_parameters(TCDP(0.1, 10.0))
    ArsinhParameters(A=80.0, sigma=8.94427190999...)
    """

    A: float
    sigma: float


def arsinh_parameters(budget: TCDP, *, sensitivity: float = 1.0) -> ArsinhParameters:
    """Parameters of the arsinh mechanism for (rho, omega)-tCDP at l2 sensitivity D (Variants of DP 2019).

    noise = A arsinh(Z / A) with Z ~ N(0, D^2 / (2 rho0)) gives (16 rho0, A / (8 D))-tCDP (Bun et al.
    2018); so for (rho, omega): A = 8 D omega and sigma = D sqrt(8 / rho).

    Parameters
    ----------
    budget : TCDP
        The target, with rho > 0 and a finite omega.
    sensitivity : float, optional
        The l2 sensitivity D (> 0, default 1).

    Returns
    -------
    ArsinhParameters
        ``(A, sigma)``.

    Raises
    ------
    TypeError
        If ``budget`` is not a TCDP.
    ValueError
        If rho = 0, omega = inf or the sensitivity is not positive and finite.

    Examples
    --------
    >>> arsinh_parameters(TCDP(0.1, 10.0), sensitivity=2.0)
    ArsinhParameters(A=160.0, sigma=17.8885438199...)
    """
    if not isinstance(budget, TCDP):
        raise TypeError(f"budget must be a TCDP, got {type(budget).__name__}")
    d = check_positive_scalar(sensitivity, "sensitivity")
    if budget.rho == 0:
        raise ValueError("rho must be > 0 to calibrate noise")
    if math.isinf(budget.omega):
        raise ValueError("omega must be finite for the arsinh mechanism (omega = inf is zCDP: use ZCDP)")
    return ArsinhParameters(8.0 * d * budget.omega, d * math.sqrt(8.0 / budget.rho))


def gaussian_sigma(budget: Budget, *, sensitivity: float = 1.0, method: str | None = None) -> float:
    """The standard deviation of Gaussian noise that meets ``budget`` at l2 ``sensitivity`` D.

    - ``ApproxDP``: ``method="analytic"`` (default): the exact minimal sigma (Balle and Wang 2018; verified,
      never below the exact minimum). ``method="classic"``: sigma = D sqrt(2 log(1.25/delta)) / eps, which
      is proven for eps < 1 only: a :class:`PrivacyWarning` outside it.
    - ``RDP(alpha, eps)``: sigma = D sqrt(alpha / (2 eps)); ``ZCDP(rho)``: D / sqrt(2 rho);
      ``GDP(mu)``: D / mu; ``RaoDP(theta)``: D / theta (Anonymous 2022, Theorem 4.8).
    - ``TCDP``: the sigma of the Gaussian inside the arsinh mechanism, D sqrt(8 / rho) (use
      :func:`arsinh_parameters` for A as well). Plain Gaussian noise of that sigma is *not* the mechanism.

    One rule per definition (:func:`functools.singledispatch`): a new definition registers its own.

    Parameters
    ----------
    budget : Budget
        ApproxDP, RDP, ZCDP, GDP, RaoDP or TCDP.
    sensitivity : float, optional
        The l2 sensitivity D (> 0, default 1).
    method : str, optional
        For ApproxDP only: "analytic" (default) or "classic".

    Returns
    -------
    float
        sigma.

    Raises
    ------
    TypeError
        If the budget's definition has no Gaussian calibration.
    ValueError
        If the budget is zero, delta is not in (0, 1), or ``method`` does not apply.

    Examples
    --------
    >>> gaussian_sigma(ApproxDP(1.0, 1e-6))
    4.22467888932...
    >>> gaussian_sigma(ZCDP(0.5), sensitivity=2.0)
    2.0
    """
    d = check_positive_scalar(sensitivity, "sensitivity")
    if method is not None and not isinstance(budget, ApproxDP):
        raise ValueError(f"method applies to ApproxDP only, got {method!r} for {type(budget).__name__}")
    return _gaussian_sigma(budget, d, method)


@functools.singledispatch
def _gaussian_sigma(budget: Any, d: float, method: str | None) -> float:
    """The Gaussian sigma meeting ``budget`` at sensitivity ``d``: one rule per privacy definition."""
    raise TypeError(f"no Gaussian calibration for {type(budget).__name__}")


@_gaussian_sigma.register
def _(budget: ApproxDP, d: float, method: str | None) -> float:
    m = "analytic" if method is None else method
    if budget.epsilon == 0:
        raise ValueError("epsilon must be > 0 to calibrate a Gaussian mechanism")
    if not 0 < budget.delta < 1:
        raise ValueError(f"delta must lie in (0, 1) for the Gaussian mechanism, got {budget.delta!r}")
    if m == "analytic":
        from ..calibration.profile import minimal_scale
        from ..noise import Gaussian

        return float(minimal_scale(Gaussian(), epsilon=budget.epsilon, delta=budget.delta, sensitivity=d))
    if m == "classic":
        if budget.epsilon >= 1:
            warnings.warn(
                f"the classic Gaussian calibration is only proven for epsilon < 1 (got {budget.epsilon!r}); "
                "use method='analytic'",
                PrivacyWarning,
                stacklevel=3,
            )
        return d / classic_gaussian_mu(budget.epsilon, budget.delta)
    raise ValueError(f"method must be 'analytic' or 'classic' for ApproxDP, got {method!r}")


@_gaussian_sigma.register
def _(budget: RDP, d: float, method: str | None) -> float:
    if budget.epsilon == 0:
        raise ValueError("epsilon must be > 0")
    return d * math.sqrt(budget.alpha / (2.0 * budget.epsilon))


@_gaussian_sigma.register
def _(budget: ZCDP, d: float, method: str | None) -> float:
    if budget.rho == 0:
        raise ValueError("rho must be > 0")
    return d / math.sqrt(2.0 * budget.rho)


@_gaussian_sigma.register
def _(budget: GDP, d: float, method: str | None) -> float:
    if budget.mu == 0:
        raise ValueError("mu must be > 0")
    return d / budget.mu


@_gaussian_sigma.register
def _(budget: RaoDP, d: float, method: str | None) -> float:
    if budget.theta == 0:
        raise ValueError("theta must be > 0")
    return d / budget.theta


@_gaussian_sigma.register
def _(budget: TCDP, d: float, method: str | None) -> float:
    return arsinh_parameters(budget, sensitivity=d).sigma
