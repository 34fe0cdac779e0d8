"""Sequential composition, advanced composition and amplification by subsampling.

- :func:`compose`: paper 000 Table 1. Same kind in, same kind out; mixing kinds raises ``TypeError``
  (convert explicitly first). Pure: sum; approximate: (sum eps, sum delta); KL: sum; mCDP:
  (sum mu, sqrt(sum tau^2)); zCDP: (sum xi, sum rho); RDP: (alpha, sum eps) at one alpha only; GDP and
  Rao DP: root of the sum of squares; tCDP: (sum rho, min omega) (Bun et al. 2018); RDP curves pointwise.
- :func:`advanced_composition`: the k-fold composition of one (eps, delta)-DP mechanism, in the two
  forms of paper 003 and the Dwork-Rothblum-Vadhan bound they simplify.
- :func:`subsample`: paper 003's amplification by subsampling (a uniformly random size-n subset of a
  size-N dataset, s = n / N).
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Optional

import numpy as np

from .budgets import (
    GDP,
    KLDP,
    MCDP,
    RDP,
    TCDP,
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    RaoDP,
    RDPCurve,
    _conv_delta,
    _scalar,
)

__all__ = ["compose", "advanced_composition", "subsample"]


def _as_list(budgets: Any) -> list:
    if isinstance(budgets, Budget):
        return [budgets]
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


def compose(budgets: Iterable[Budget]) -> Budget:
    """Sequential composition of budgets of one kind (paper 000 Table 1); returns the same kind.

    >>> compose([GDP(3.0), GDP(4.0)])
    GDP(mu=5.0)
    """
    items = _as_list(budgets)
    kind = type(items[0])
    for i, b in enumerate(items):
        if type(b) is not kind:
            raise TypeError(
                f"cannot compose {kind.__name__} with {type(b).__name__} (budgets[{i}]): convert explicitly "
                "first, e.g. GDP.to_rdp(alpha) or RDP.to_approx_dp(delta)"
            )
    if kind is PureDP:
        return PureDP(math.fsum(b.epsilon for b in items))
    if kind is ApproxDP:
        return ApproxDP(math.fsum(b.epsilon for b in items), min(1.0, math.fsum(b.delta for b in items)))
    if kind is KLDP:
        return KLDP(math.fsum(b.epsilon for b in items))
    if kind is MCDP:
        return MCDP(math.fsum(b.mu for b in items), math.hypot(*(b.tau for b in items)))
    if kind is ZCDP:
        return ZCDP(math.fsum(b.rho for b in items), math.fsum(b.xi for b in items))
    if kind is RDP:
        alpha = items[0].alpha
        for i, b in enumerate(items):
            if b.alpha != alpha:
                raise ValueError(
                    f"RDP composes at equal alpha only: budgets[{i}].alpha = {b.alpha!r} != {alpha!r} "
                    "(use RDPCurve to compose whole curves)"
                )
        return RDP(alpha, math.fsum(b.epsilon for b in items))
    if kind is GDP:
        return GDP(math.hypot(*(b.mu for b in items)))
    if kind is RaoDP:
        return RaoDP(math.hypot(*(b.theta for b in items)))
    if kind is TCDP:
        return TCDP(math.fsum(b.rho for b in items), min(b.omega for b in items))
    if kind is RDPCurve:
        return _compose_curves(items)
    raise TypeError(f"no composition rule for {kind.__name__}")  # a Budget subclass defined elsewhere


def _compose_curves(curves: list) -> RDPCurve:
    amax = min(c.alpha_max for c in curves)
    grids = [c for c in curves if c.is_grid]
    if not grids:
        fns = list(curves)
        return RDPCurve(lambda a: np.sum([np.asarray(c(a), dtype=float) for c in fns], axis=0), alpha_max=amax)
    alphas = grids[0].alphas
    for i, c in enumerate(grids):
        if not np.array_equal(c.alphas, alphas):
            raise ValueError(
                f"grid RDP curves compose pointwise on one grid: curve {i} has different alphas than the first"
            )
    keep = alphas <= amax
    total = np.sum([np.asarray(c(alphas[keep]), dtype=float) for c in curves], axis=0)
    return RDPCurve(total, alphas[keep])


def _positive_int(k: Any, name: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer")
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k!r}")
    return int(k)


def advanced_composition(budget: ApproxDP, k: int, delta_prime: Optional[float] = None, form: str = "drv") -> ApproxDP:
    """The k-fold composition of an (eps, delta)-DP mechanism.

    ``form="drv"`` (default, the tightest general bound here): Dwork, Rothblum and Vadhan 2010,
    (eps sqrt(2 k log(1/delta')) + k eps (e^eps - 1), k delta + delta').

    ``form="dwork_roth"``: paper 003, first row: (2 eps sqrt(2 k log(1/delta')), k delta + delta')
    (Dwork and Roth 2014, Corollary 3.21). It is implied by the DRV bound exactly when
    k (e^eps - 1) <= sqrt(2 k log(1/delta')); outside that range it is not proven and the call raises.

    ``form="moments"``: paper 003, second row (the moments accountant, Abadi et al. 2016):
    (4 eps sqrt(2 k log(1/delta)), delta) with the budget's own delta and no delta'. It is a statement
    about the *Gaussian mechanism* calibrated classically, sigma = D sqrt(2 log(1.25/delta)) / eps with
    eps < 1; a general (eps, delta)-DP mechanism composed k times can need k delta. The call checks the
    claim against the exact k-fold Gaussian composition (sqrt(k) D / sigma-GDP) and raises where it
    would not hold.
    """
    if not isinstance(budget, ApproxDP):
        raise TypeError(f"budget must be an ApproxDP, got {type(budget).__name__}")
    n = _positive_int(k, "k")
    eps, delta = budget.epsilon, budget.delta
    if form == "moments":
        if delta_prime is not None:
            raise ValueError("delta_prime is not used by the moments form (the total delta is the budget's delta)")
        d = _conv_delta(delta, "budget.delta")
        if not 0 < eps < 1:
            raise ValueError("the moments form needs 0 < epsilon < 1 (the classic Gaussian calibration)")
        claimed = 4.0 * eps * math.sqrt(2.0 * n * math.log(1.0 / d))
        mu_total = math.sqrt(n) * eps / math.sqrt(2.0 * math.log(1.25 / d))
        exact = GDP(mu_total).to_approx_dp(d).epsilon
        if claimed < exact:
            raise ValueError(
                f"the moments form does not hold here: 4 eps sqrt(2 k log(1/delta)) = {claimed!r} is below the "
                f"exact epsilon {exact!r} of the composed Gaussian mechanism (k too large for this epsilon)"
            )
        return ApproxDP(claimed, d)
    if delta_prime is None:
        raise TypeError("delta_prime is required for the 'drv' and 'dwork_roth' forms")
    dp = _conv_delta(delta_prime, "delta_prime")
    log_term = math.log(1.0 / dp)
    total_delta = min(1.0, n * delta + dp)
    if form == "drv":
        return ApproxDP(eps * math.sqrt(2.0 * n * log_term) + n * eps * math.expm1(eps), total_delta)
    if form == "dwork_roth":
        if n * math.expm1(eps) > math.sqrt(2.0 * n * log_term):
            raise ValueError(
                "the paper 003 form 2 eps sqrt(2 k log(1/delta')) is only implied by the Dwork-Rothblum-Vadhan "
                f"theorem when k (e^eps - 1) <= sqrt(2 k log(1/delta')); here k = {n}, epsilon = {eps!r}: "
                "use form='drv'"
            )
        return ApproxDP(2.0 * eps * math.sqrt(2.0 * n * log_term), total_delta)
    raise ValueError(f"form must be 'drv', 'dwork_roth' or 'moments', got {form!r}")


def _rate(rate: Any) -> float:
    s = _scalar(rate, "rate")
    if not 0 < s <= 1:
        raise ValueError(f"rate must lie in (0, 1], got {s!r}")
    return s


def _log_subsampled_rdp(alpha: int, s: float, eps_of_j: np.ndarray) -> float:
    """log(1 + sum_{j=2}^{alpha} 2 s^j C(alpha, j) e^{(j-1) eps(j)}) / (alpha - 1), in log space."""
    from scipy.special import gammaln, logsumexp

    j = np.arange(2, alpha + 1, dtype=float)
    log_binom = gammaln(alpha + 1.0) - gammaln(j + 1.0) - gammaln(alpha - j + 1.0)
    terms = math.log(2.0) + j * math.log(s) + log_binom + (j - 1.0) * eps_of_j
    return float(logsumexp(np.concatenate([[0.0], terms]))) / (alpha - 1.0)


def _integer_alpha(alpha: float, name: str = "alpha") -> int:
    if alpha != math.floor(alpha) or alpha < 2:
        raise ValueError(f"{name} must be an integer >= 2 for the subsampled RDP bound of paper 003, got {alpha!r}")
    return int(alpha)


def subsample(budget: Budget, rate: float, *, alphas: Any = None) -> Budget:
    """Privacy amplification by subsampling a uniformly random fraction ``rate`` = n / N (paper 003).

    - ``ApproxDP``: (log(1 + s (e^eps - 1)), s delta).
    - ``RDP`` (one order, an integer alpha >= 2): the bound in terms of epsilon(alpha) alone,
      eps' = log(1 + sum_{j=2}^{alpha} 2 s^j C(alpha, j) e^{(j-1) eps}) / (alpha - 1)
      (monotonicity eps(j) <= eps(alpha), Mironov Proposition 8).
    - ``RDPCurve``: the bound with the whole curve, eps'(alpha) = log(1 + sum_j 2 s^j C(alpha, j)
      e^{(j-1) eps(j)}) / (alpha - 1), at every integer order >= 2 of ``alphas`` (default: the curve's
      integer grid orders, or 2..256 for a callable). On a grid curve eps(j) between grid orders is
      bounded by the next grid order (monotonicity). Paper 003 states both for the Gaussian mechanism;
      they are Wang, Balle and Kasiviswanathan's (2019) Theorem 9 with its min{...} terms bounded by 2,
      and hold for sampling without replacement.
    - ``TCDP``: (13 s^2 rho, log(1/s) / (4 rho))-tCDP (Bun, Dwork, Rothblum and Steinke 2018) under
      that theorem's preconditions: rho, s in (0, 0.1], log(1/s) >= 3 rho (2 + log2(1/rho)), and
      omega >= log(1/s) / (2 rho) >= 3. Outside them the call raises ``ValueError``.
    - zCDP has no subsampling rule (paper 003: "N/A"): ``TypeError``, as for the other kinds.
    ``rate = 1`` returns the budget unchanged.
    """
    s = _rate(rate)
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a privacy budget, got {type(budget).__name__}")
    if s == 1.0:
        return budget
    if isinstance(budget, ApproxDP):
        return ApproxDP(math.log1p(s * math.expm1(budget.epsilon)), s * budget.delta)
    if isinstance(budget, RDP):
        a = _integer_alpha(budget.alpha)
        eps_j = np.full(a - 1, budget.epsilon)
        return RDP(float(a), _log_subsampled_rdp(a, s, eps_j))
    if isinstance(budget, RDPCurve):
        if alphas is not None:
            grid = np.asarray(alphas, dtype=float).reshape(-1)
        elif budget.is_grid:
            grid = budget.alphas[(budget.alphas == np.floor(budget.alphas)) & (budget.alphas >= 2)]
        else:
            grid = np.arange(2.0, min(256.0, math.floor(budget.alpha_max)) + 1.0)
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
    if isinstance(budget, TCDP):
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
    if isinstance(budget, ZCDP):
        raise TypeError("zCDP has no amplification-by-subsampling rule (paper 003: N/A); use tCDP or RDP")
    raise TypeError(f"no subsampling rule for {type(budget).__name__}")
