"""Privacy amplification by subsampling: one rule per privacy definition (``docs/accounting.md``)."""
from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_rate
from .budgets import (
    RDP,
    TCDP,
    ZCDP,
    ApproxDP,
    Budget,
    RDPCurve,
)
from .rounding import inflate_up, up


def _log_subsampled_rdp(alpha: int, s: float, eps_of_j: np.ndarray) -> float:
    """log(1 + sum_{j=2}^{alpha} 2 s^j C(alpha, j) e^{(j-1) eps(j)}) / (alpha - 1), in log space."""
    from scipy.special import gammaln, logsumexp

    j = np.arange(2, alpha + 1, dtype=float)
    log_binom = gammaln(alpha + 1.0) - gammaln(j + 1.0) - gammaln(alpha - j + 1.0)
    terms = math.log(2.0) + j * math.log(s) + log_binom + (j - 1.0) * eps_of_j
    return float(logsumexp(np.concatenate([[0.0], terms]))) / (alpha - 1.0)


def _integer_alpha(alpha: float, name: str = "alpha") -> int:
    if alpha != math.floor(alpha) or alpha < 2:
        raise ValueError(f"{name} must be an integer >= 2 for the subsampled RDP bound, got {alpha!r}")
    return int(alpha)


def subsample(budget: Budget, rate: float, *, alphas: Any = None) -> Budget:
    """Privacy amplification by subsampling a uniformly random fraction ``rate`` = n / N (Variants of DP 2019).

    - ``ApproxDP``: (log(1 + s (e^eps - 1)), s delta).
    - ``RDP`` (one order, an integer alpha >= 2): the bound in terms of epsilon(alpha) alone,
      eps' = log(1 + sum_{j=2}^{alpha} 2 s^j C(alpha, j) e^{(j-1) eps}) / (alpha - 1)
      (monotonicity eps(j) <= eps(alpha), Mironov Proposition 8).
    - ``RDPCurve``: the bound with the whole curve, eps'(alpha) = log(1 + sum_j 2 s^j C(alpha, j)
      e^{(j-1) eps(j)}) / (alpha - 1), at every integer order >= 2 of ``alphas`` (default: the curve's
      integer grid orders, or 2..256 for a callable). On a grid curve eps(j) between grid orders is
      bounded by the next grid order (monotonicity). The summary table states both for the Gaussian mechanism;
      they are Wang, Balle and Kasiviswanathan's (2019) Theorem 9 with its min{...} terms bounded by 2,
      and hold for sampling without replacement.
    - ``TCDP``: (13 s^2 rho, log(1/s) / (4 rho))-tCDP (Bun, Dwork, Rothblum and Steinke 2018) under
      that theorem's preconditions: rho, s in (0, 0.1], log(1/s) >= 3 rho (2 + log2(1/rho)), and
      omega >= log(1/s) / (2 rho) >= 3. Outside them the call raises ``ValueError``.
    - zCDP has no subsampling rule (the summary table: "N/A"): ``TypeError``, as for the other kinds.

    ``rate = 1`` returns the budget unchanged.

    Parameters
    ----------
    budget : Budget
        ApproxDP, RDP, RDPCurve or TCDP.
    rate : float
        The sampling rate in (0, 1].
    alphas : array_like, optional
        For an RDPCurve: the integer orders >= 2 to evaluate at.

    Returns
    -------
    Budget
        The amplified budget, of the same type.

    Raises
    ------
    TypeError
        If the definition has no subsampling rule (zCDP, pure DP, ...).
    ValueError
        If ``rate`` is outside (0, 1], an order is not an integer >= 2, or the tCDP preconditions fail.

    Examples
    --------
    >>> subsample(ApproxDP(1.0, 1e-6), 0.01)
    ApproxDP(epsilon=0.01703686323..., delta=1e-08)
    >>> subsample(RDP(4.0, 0.5), 0.1)
    RDP(alpha=4.0, epsilon=0.06641723895...)
    """
    s = check_rate(rate)
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a privacy budget, got {type(budget).__name__}")
    if s == 1.0:
        return budget
    return _subsample(budget, s, alphas)


@functools.singledispatch
def _subsample(budget: Any, s: float, alphas: Any) -> Budget:
    """The subsampled budget at rate ``s`` < 1: one rule per privacy definition."""
    raise TypeError(f"no subsampling rule for {type(budget).__name__}")


@_subsample.register
def _(budget: ApproxDP, s: float, alphas: Any) -> Budget:
    return ApproxDP(inflate_up(math.log1p(s * math.expm1(budget.epsilon)), 3), up(Fraction(s) * Fraction(budget.delta)))


@_subsample.register
def _(budget: RDP, s: float, alphas: Any) -> Budget:
    a = _integer_alpha(budget.alpha)
    eps_j = np.full(a - 1, budget.epsilon)
    return RDP(float(a), _log_subsampled_rdp(a, s, eps_j))


@_subsample.register
def _(budget: RDPCurve, s: float, alphas: Any) -> Budget:
    if alphas is not None:
        grid = np.asarray(alphas, dtype=float).reshape(-1)
    elif budget.alphas is not None:
        orders = budget.alphas
        grid = orders[(orders == np.floor(orders)) & (orders >= 2)]
    else:
        grid = np.arange(2.0, math.floor(min(256.0, budget.alpha_max)) + 1.0)
    if grid.size == 0:
        raise ValueError("the curve has no integer order >= 2 to subsample at; pass alphas")
    out_a, out_e = [], []
    for a_f in grid:
        a = _integer_alpha(float(a_f), "alphas")
        eps_j = np.asarray(budget(np.arange(2.0, a + 1.0)), dtype=float)
        if np.isinf(eps_j).any():
            raise ValueError(f"the curve does not bound epsilon(j) for every j <= {a}")
        out_a.append(float(a))
        out_e.append(_log_subsampled_rdp(a, s, eps_j))
    return RDPCurve(out_e, out_a)


@_subsample.register
def _(budget: TCDP, s: float, alphas: Any) -> Budget:
    rho, omega = budget.rho, budget.omega
    if not 0 < rho <= 0.1:
        raise ValueError(f"tCDP subsampling needs rho in (0, 0.1], got rho = {rho!r}")
    if not s <= 0.1:
        raise ValueError(f"tCDP subsampling needs rate in (0, 0.1], got rate = {s!r}")
    log_inv_s = math.log(1.0 / s)
    if log_inv_s < 3.0 * rho * (2.0 + math.log2(1.0 / rho)):
        raise ValueError("tCDP subsampling needs log(1/rate) >= 3 rho (2 + log2(1/rho))")
    need = log_inv_s / (2.0 * rho)
    if need < 3.0:
        raise ValueError("tCDP subsampling needs log(1/rate) / (2 rho) >= 3")
    if omega < need:
        raise ValueError(f"tCDP subsampling needs omega >= log(1/rate) / (2 rho) = {need!r}, got omega = {omega!r}")
    return TCDP(13.0 * s * s * rho, log_inv_s / (4.0 * rho))


@_subsample.register
def _(budget: ZCDP, s: float, alphas: Any) -> Budget:
    raise TypeError("zCDP has no amplification-by-subsampling rule (the variants-of-DP table, 2019: N/A); use tCDP or RDP")
