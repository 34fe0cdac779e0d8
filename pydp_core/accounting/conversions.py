"""Conversions between privacy definitions that are not a method of one budget type.

The per-type conversions are methods of the budgets (:mod:`pydp_core.accounting.budgets`); this module
holds the zCDP -> (epsilon, delta) conversion of Canonne, Kamath and Steinke (2020), which the discrete
Gaussian release path needs with its optimal order.
"""
from __future__ import annotations

import math

from .._core import accounting as _acc
from .._validation import check_epsilon_scalar, check_positive

__all__ = ["zcdp_log_delta"]


def zcdp_log_delta(*, rho: float, epsilon: float) -> tuple[float, float]:
    """The (epsilon, delta) guarantee of a rho-zCDP mechanism (Canonne, Kamath and Steinke 2020).

    ``log delta = min_alpha (alpha - 1)(alpha rho - eps) - log(alpha - 1) + alpha log(1 - 1/alpha)``. Any
    alpha > 1 gives a valid delta, and the objective is convex in alpha; the minimiser is found by
    bisection on its derivative ``(2 alpha - 1) rho - eps + log(1 - 1/alpha)``, and the value there is
    rounded up by a bound on its floating-point error, so the returned delta is certified (never
    optimistic). The one C++ routine (``pydp/accounting/conversions.hpp``) that the C ABI's
    ``pydp_zcdp_log_delta`` and the discrete Gaussian vector plans also use.

    Parameters
    ----------
    rho : float
        The zCDP parameter (> 0).
    epsilon : float
        The target epsilon (>= 0).

    Returns
    -------
    tuple of float
        ``(log delta, alpha)``; log delta is at most 0.

    Raises
    ------
    ValueError
        If ``rho <= 0``, ``epsilon < 0`` or either is not finite.

    Examples
    --------
    >>> log_delta, alpha = zcdp_log_delta(rho=0.5, epsilon=3.0)
    >>> round(math.exp(log_delta), 6)
    0.005143
    """
    rho_a = check_positive(rho, "rho")
    eps = check_epsilon_scalar(epsilon)
    r = float(rho_a)
    if not (math.isfinite(r) and math.isfinite(eps)):
        raise ValueError(f"rho and epsilon must be finite, got rho={r!r}, epsilon={eps!r}")
    log_delta, alpha, _ = _acc.zcdp_log_delta(r, eps)
    return float(log_delta), float(alpha)
