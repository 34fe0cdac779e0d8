"""Conversions between privacy definitions that are not a method of one budget type.

The per-type conversions are methods of the budgets (:mod:`pydp_core.accounting.budgets`); this module
holds the zCDP -> (epsilon, delta) conversion of Canonne, Kamath and Steinke (2020), which the discrete
Gaussian release path needs with its optimal order.
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import check_epsilon_scalar, check_positive

__all__ = ["zcdp_log_delta"]


def zcdp_log_delta(*, rho: float, epsilon: float) -> tuple[float, float]:
    """The (epsilon, delta) guarantee of a rho-zCDP mechanism (Canonne, Kamath and Steinke 2020).

    ``delta = min_alpha exp((alpha - 1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha``. Any
    alpha > 1 gives a valid delta; the returned one is the minimiser found numerically, and the returned
    value is evaluated there, so it is a valid (never optimistic) delta.

    Parameters
    ----------
    rho : float
        The zCDP parameter (> 0).
    epsilon : float
        The target epsilon (>= 0).

    Returns
    -------
    tuple of float
        ``(log delta, alpha)``.

    Raises
    ------
    ValueError
        If ``rho <= 0``, ``epsilon < 0`` or either is not finite.

    Examples
    --------
    >>> log_delta, alpha = zcdp_log_delta(rho=0.5, epsilon=3.0)
    >>> round(float(np.exp(log_delta)), 6)
    0.005143
    """
    rho_a = check_positive(rho, "rho")
    eps = check_epsilon_scalar(epsilon)
    r = float(rho_a)

    def f(x: float) -> float:  # alpha = 1 + e^x
        am1 = math.exp(x)
        a = 1.0 + am1
        return am1 * (a * r - eps) - x + a * (x - math.log1p(am1))  # a log(1 - 1/a) = a (log(a-1) - log a)

    from scipy.optimize import minimize_scalar

    # coarse scan of x = log(alpha - 1) over [-40, 40], then Brent's bounded search around the best point
    grid = np.linspace(-40.0, 40.0, 321)
    vals = np.array([f(v) for v in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    value, at = min((float(f(res.x)), float(res.x)), (float(vals[i]), float(grid[i])))
    return min(value, 0.0), 1.0 + math.exp(at)
