"""Sequential composition and advanced composition of privacy budgets.

The composition rule of each definition is the class method ``compose`` of its budget type; the proofs
and sources are in ``docs/accounting.md``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import TypeVar, cast

from .._validation import check_int, check_open_delta
from .budgets import (
    GDP,
    ApproxDP,
    Budget,
    budget_list,
    classic_gaussian_mu,
)
from .rounding import inflate_up, up

B = TypeVar("B", bound=Budget)


def compose(budgets: Iterable[B]) -> B:
    """Sequential composition of budgets of one kind (the Rao DP paper, Anonymous 2022, Table 1); returns the same kind.

    Parameters
    ----------
    budgets : iterable of Budget
        Budgets of one type (``PureDP``, ``ApproxDP``, ``KLDP``, ``MCDP``, ``ZCDP``, ``RDP`` at one order,
        ``RDPCurve``, ``GDP``, ``TCDP`` or ``RaoDP``).

    Returns
    -------
    Budget
        The composed budget, of the same type: sums for pure, approximate, KL, zCDP, RDP and tCDP (with the
        smallest omega), a root sum of squares for GDP and Rao DP, (sum mu, root sum of squares of tau) for
        mCDP, the pointwise sum for RDP curves.

    Raises
    ------
    TypeError
        If the budgets are of different types (convert explicitly first) or ``budgets`` is not a list of
        budgets.
    ValueError
        If ``budgets`` is empty, or RDP budgets have different orders.

    Examples
    --------
    >>> compose([GDP(3.0), GDP(4.0)])
    GDP(mu=5.0)
    """
    items = budget_list(budgets)
    return cast(B, type(items[0]).compose(items))  # the rule of type(b) returns a type(b)


def advanced_composition(budget: ApproxDP, k: int, delta_prime: float | None = None, form: str = "drv") -> ApproxDP:
    """The k-fold composition of an (eps, delta)-DP mechanism.

    ``form="drv"`` (default, the tightest general bound here): Dwork, Rothblum and Vadhan 2010,
    (eps sqrt(2 k log(1/delta')) + k eps (e^eps - 1), k delta + delta').

    ``form="dwork_roth"``: the first row of Variants of DP (2019): (2 eps sqrt(2 k log(1/delta')), k delta + delta')
    (Dwork and Roth 2014, Corollary 3.21). It is implied by the DRV bound exactly when
    k (e^eps - 1) <= sqrt(2 k log(1/delta')); outside that range it is not proven and the call raises.

    ``form="moments"``: its second row (the moments accountant, Abadi et al. 2016):
    (4 eps sqrt(2 k log(1/delta)), delta) with the budget's own delta and no delta'. It is a statement
    about the *Gaussian mechanism* calibrated classically, sigma = D sqrt(2 log(1.25/delta)) / eps with
    eps < 1; a general (eps, delta)-DP mechanism composed k times can need k delta. The call checks the
    claim against the exact k-fold Gaussian composition (sqrt(k) D / sigma-GDP) and raises where it
    would not hold.

    Parameters
    ----------
    budget : ApproxDP
        The budget of one run.
    k : int
        The number of runs, >= 1.
    delta_prime : float, optional
        The extra delta' in (0, 1) of the "drv" and "dwork_roth" forms (required there).
    form : str, optional
        "drv" (default), "dwork_roth" or "moments".

    Returns
    -------
    ApproxDP
        The composed budget.

    Raises
    ------
    TypeError
        If ``budget`` is not an ApproxDP, ``k`` is not an integer or ``delta_prime`` is missing.
    ValueError
        If an argument is out of range, or the chosen form is not proven for these values.

    Examples
    --------
    >>> advanced_composition(ApproxDP(0.1, 1e-8), 100, delta_prime=1e-6)
    ApproxDP(epsilon=6.30823095051..., delta=2.0000000000000003e-06)
    """
    if not isinstance(budget, ApproxDP):
        raise TypeError(f"budget must be an ApproxDP, got {type(budget).__name__}")
    n = check_int(k, "k", 1)
    eps, delta = budget.epsilon, budget.delta
    if form == "moments":
        if delta_prime is not None:
            raise ValueError("delta_prime is not used by the moments form (the total delta is the budget's delta)")
        d = check_open_delta(delta, "budget.delta")
        if not 0 < eps < 1:
            raise ValueError("the moments form needs 0 < epsilon < 1 (the classic Gaussian calibration)")
        claimed = 4.0 * eps * math.sqrt(2.0 * n * math.log(1.0 / d))
        mu_total = math.sqrt(n) * classic_gaussian_mu(eps, d)
        exact = GDP(mu_total).to_approx_dp(d).epsilon
        if claimed < exact:
            raise ValueError(
                f"the moments form does not hold here: 4 eps sqrt(2 k log(1/delta)) = {claimed!r} is below the "
                f"exact epsilon {exact!r} of the composed Gaussian mechanism (k too large for this epsilon)"
            )
        return ApproxDP(inflate_up(claimed, 6), d)
    if delta_prime is None:
        raise TypeError("delta_prime is required for the 'drv' and 'dwork_roth' forms")
    dp = check_open_delta(delta_prime, "delta_prime")
    log_term = math.log(1.0 / dp)
    total_delta = min(1.0, up(n * Fraction(delta) + Fraction(dp)))
    if form == "drv":
        return ApproxDP(inflate_up(eps * math.sqrt(2.0 * n * log_term) + n * eps * math.expm1(eps), 10), total_delta)
    if form == "dwork_roth":
        if n * math.expm1(eps) > math.sqrt(2.0 * n * log_term):
            raise ValueError(
                "the summary table's form 2 eps sqrt(2 k log(1/delta')) is only implied by the Dwork-Rothblum-Vadhan "
                f"theorem when k (e^eps - 1) <= sqrt(2 k log(1/delta')); here k = {n}, epsilon = {eps!r}: "
                "use form='drv'"
            )
        return ApproxDP(inflate_up(2.0 * eps * math.sqrt(2.0 * n * log_term), 6), total_delta)
    raise ValueError(f"form must be 'drv', 'dwork_roth' or 'moments', got {form!r}")


