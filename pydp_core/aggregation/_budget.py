"""The split of one total budget over the aggregates and partition selection (``docs/aggregate.md``,
section 5).

Three ways to give the total, exactly one of ``epsilon`` and ``rho``:

- ``epsilon`` with ``delta = 0`` or ``noise="laplace"``: discrete Laplace noise, pure epsilon_i-DP per
  aggregate; delta (if any) goes to partition selection. Sequential composition adds the parts.
- ``epsilon`` with ``delta > 0`` and ``noise="gaussian"``: discrete Gaussian noise. Selection takes its
  weight's fraction of epsilon and of delta; the Gaussian aggregates together take the rest (eps_g,
  delta_g) as one zCDP block: the largest rho_g whose zCDP -> (eps, delta) conversion (Canonne, Kamath and
  Steinke 2020) meets (eps_g, delta_g), split over the aggregates by weight. zCDP composes the discrete
  Gaussians exactly (Renyi divergences add); the reported total converts the rho they actually spend.
- ``rho``: zCDP, discrete Gaussian noise, rho split by weight. Selection needs ``delta`` and is
  delta-approximately rho_s-zCDP: Laplace thresholding at epsilon_s = sqrt(2 rho_s) (pure epsilon_s-DP
  noisy counts, epsilon_s^2 / 2-zCDP), or the optimal selection at (e, delta / Kp) per group with
  Kp e^2 / 2 <= rho_s. The total is delta-approximate rho-zCDP (Bun and Steinke 2016).

``noise=None`` picks discrete Laplace for pure DP, the discrete Gaussian for zCDP, and for approximate DP
the family whose components have the smaller geometric mean of noise standard deviations (Laplace on ties).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .._validation import check_delta, check_positive_scalar
from ..accounting import ApproxDP, compose
from ..accounting.conversions import zcdp_log_delta
from .aggregations import AggregatePlan, plan_aggregate, split_epsilon
from .quantiles import QuantilePlan, is_quantile, plan_quantile
from .selection import OptimalSelection, ThresholdSelection, calibrate, optimal_selection_for_rho
from .vectors import VectorPlan, plan_vector

NOISES = ("laplace", "gaussian")
_MARGIN = 1e-12  # relative margin on delta toward the safe side, as in the calibrations


@dataclass(frozen=True)
class BudgetPlan:
    """The calibrated aggregates and selection of one call, and the total they spend."""

    definition: str  # "pure", "approx" or "zcdp"
    noise: str
    plans: list[Any]
    selection: ThresholdSelection | OptimalSelection | None
    epsilon: float | None
    delta: float
    rho: float | None
    block: tuple[float, float] | None = None  # (epsilon, delta) of the Gaussian aggregates under approximate DP
    searches: tuple[Any, ...] = ()  # bounds="auto": the pure DP searches of the bounds (autobounds.BoundsSearch)

    def total(self) -> dict[Any, Any]:
        """The composed guarantee of everything released (the report's ``budget``)."""
        sel = self.selection
        if self.definition == "zcdp":
            rho = math.fsum([p.rho_achieved for p in (*self.plans, *self.searches)] + ([sel.zcdp_rho] if sel else []))
            delta = sel.delta_achieved if sel else 0.0
            return {"definition": "approximate zCDP" if delta > 0 else "zCDP", "noise": self.noise, "rho": rho,
                    "delta": delta, "rho_given": self.rho, "delta_given": self.delta}
        parts = []
        if self.noise == "laplace":
            parts += [ApproxDP(p.epsilon, 0.0) for p in self.plans]
            route = "sequential composition of pure DP parts"
        else:
            assert self.block is not None
            eps_g, delta_g = self.block
            rho = math.fsum(p.rho_achieved for p in self.plans)
            parts.append(ApproxDP(eps_g, math.exp(zcdp_log_delta(rho=rho, epsilon=eps_g)[0])))
            route = "zCDP composition of the Gaussian aggregates, converted to (epsilon, delta), plus selection"
        if sel is not None:
            parts.append(ApproxDP(sel.epsilon, sel.delta_achieved))
        parts += [ApproxDP(s.epsilon_achieved, 0.0) for s in self.searches]
        if self.searches:
            route += ", plus the searches of the bounds"
        total = compose(parts)
        assert isinstance(total, ApproxDP)
        out = {"definition": "approximate DP" if total.delta > 0 else "pure DP", "noise": self.noise,
               "composition": route, "epsilon": total.epsilon, "delta": total.delta,
               "epsilon_given": self.epsilon, "delta_given": self.delta}
        if self.noise == "gaussian":
            out["rho_aggregates"] = math.fsum(p.rho_achieved for p in self.plans)
        return out


@lru_cache(maxsize=256)
def _largest_rho(epsilon: float, delta: float) -> float:
    """The largest rho (to 1e-9 relative) whose zCDP -> (epsilon, delta) conversion meets ``delta``."""
    log_target = math.log(delta) + math.log1p(-_MARGIN)

    def ok(rho: float) -> bool:
        return zcdp_log_delta(rho=rho, epsilon=epsilon)[0] <= log_target

    big = math.log(1.0 / delta)
    lo = (math.sqrt(big + epsilon) - math.sqrt(big)) ** 2  # Bun and Steinke's rule: always valid
    if not ok(lo):
        lo *= 0.5
        while not ok(lo):
            lo *= 0.5
    hi = 2.0 * lo
    while ok(hi):
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * lo:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _noise(noise: Any) -> str | None:
    if noise is None:
        return None
    if not isinstance(noise, str) or noise.lower() not in NOISES:
        raise ValueError(f"noise must be None, 'laplace' or 'gaussian', got {noise!r}")
    return noise.lower()


def _plans(requests: Sequence[tuple[str, str]], kind: str, shares: Sequence[float], kp: int, kc: int,
           bounds: dict[Any, Any], given: str, vectors: dict[Any, Any]) -> list[AggregatePlan | QuantilePlan | VectorPlan]:
    out: list[AggregatePlan | QuantilePlan | VectorPlan] = []
    for (c, a), s in zip(requests, shares):
        try:
            if a == "vector_sum":
                norm, bound, size = vectors[c]
                out.append(plan_vector(a, norm=norm, bound=bound, size=size, **{kind: s}, max_partitions=kp,
                                       max_contributions=kc))
                continue
            plan = plan_quantile if is_quantile(a) else plan_aggregate
            out.append(plan(a, **{kind: s}, max_partitions=kp, max_contributions=kc,
                            bounds=None if a == "histogram" else bounds.get(c)))
        except ValueError as err:
            raise ValueError(f"{given}: the share of {c}_{a} is too small ({err})") from None
    return out


def plan_budget(*, epsilon: Any, delta: Any, rho: Any, noise: Any, weights: Sequence[float], selection: bool,
                requests: Sequence[tuple[str, str]], max_partitions: int, max_contributions: int,
                bounds: dict[Any, Any], method: str = "threshold", vectors: dict[Any, Any] | None = None) -> BudgetPlan:
    """Check the budget arguments and calibrate every aggregate and the selection (errors name the argument).

    ``weights`` has one entry per request, then one for selection when ``selection`` is true; ``method``
    is the partition-selection method (``"threshold"`` or ``"optimal"``).
    """
    kind = _noise(noise)
    vectors = {} if vectors is None else vectors
    dl = float(check_delta(delta, "delta"))
    kp, kc = max_partitions, max_contributions
    if rho is not None and epsilon is not None:
        raise ValueError("give the total budget as epsilon (with delta) or as rho (zCDP), not both")
    if rho is None and epsilon is None:
        raise TypeError("epsilon (or rho for zCDP) is required")
    if selection and dl == 0.0:
        raise ValueError("delta must be > 0 for partition selection, or give public_partitions")
    n = len(requests)
    if rho is not None:
        r = check_positive_scalar(rho, "rho")
        if kind == "laplace":
            raise ValueError("noise='laplace' does not go with rho: a zCDP budget uses Gaussian noise")
        shares = split_epsilon(r, weights)
        sel = _zcdp_selection(shares[-1], dl, kp, method) if selection else None
        plans = _plans(requests, "rho", shares[:n], kp, kc, bounds, "rho", vectors)
        return BudgetPlan("zcdp", "gaussian", plans, sel, None, dl, r)
    eps = check_positive_scalar(epsilon, "epsilon")
    if kind == "gaussian" and dl == 0.0:
        raise ValueError("noise='gaussian' needs delta > 0 (or a zCDP budget rho)")
    if kind is None:
        kind = "laplace" if dl == 0.0 else None
    laplace = gaussian = None
    if kind in (None, "laplace"):
        shares = split_epsilon(eps, weights)
        sel = _selection(shares[-1], dl, kp, method) if selection else None
        laplace = BudgetPlan("pure" if dl == 0.0 else "approx", "laplace",
                             _plans(requests, "epsilon", shares[:n], kp, kc, bounds, "epsilon", vectors), sel, eps, dl, None)
    if kind == "gaussian":
        gaussian = _gaussian_plan(eps, dl, weights, selection, requests, kp, kc, bounds, method, vectors)
    elif kind is None:
        try:  # the default falls back to Laplace when the Gaussian split cannot be calibrated
            gaussian = _gaussian_plan(eps, dl, weights, selection, requests, kp, kc, bounds, method, vectors)
        except ValueError:
            gaussian = None
    if laplace is None or gaussian is None:
        out = laplace if gaussian is None else gaussian
        assert out is not None
        return out
    return gaussian if _log_std(gaussian.plans) < _log_std(laplace.plans) else laplace


def _gaussian_plan(eps: float, dl: float, weights: Sequence[float], selection: bool,
                   requests: Sequence[tuple[str, str]], kp: int, kc: int, bounds: dict[Any, Any], method: str,
                   vectors: dict[Any, Any]) -> BudgetPlan:
    n = len(requests)
    sel = None
    eps_g, delta_g = eps, dl
    if selection:
        agg_weight, sel_weight = math.fsum(weights[:n]), weights[-1]
        eps_g, eps_s = split_epsilon(eps, [agg_weight, sel_weight])
        delta_g, delta_s = split_epsilon(dl, [agg_weight, sel_weight])
        sel = _selection(eps_s, delta_s, kp, method)
    rho_g = _largest_rho(eps_g, delta_g)
    plans = _plans(requests, "rho", split_epsilon(rho_g, weights[:n]), kp, kc, bounds, "epsilon", vectors)
    return BudgetPlan("approx", "gaussian", plans, sel, eps, dl, None, (eps_g, delta_g))


def _selection(epsilon: float, delta: float, kp: int, method: str) -> ThresholdSelection | OptimalSelection:
    try:
        return calibrate(method, epsilon=epsilon, delta=delta, max_partitions=kp)
    except ValueError as err:
        raise ValueError(f"budget_split: the selection's share is too small ({err})") from None


def _zcdp_selection(rho_s: float, delta: float, kp: int, method: str) -> ThresholdSelection | OptimalSelection:
    """The selection for the zCDP share ``rho_s``: ``delta``-approximately ``rho_s``-zCDP (section 5)."""
    if method == "optimal":
        try:
            return optimal_selection_for_rho(rho=rho_s, delta=delta, max_partitions=kp)
        except ValueError as err:
            raise ValueError(f"budget_split: the selection's share is too small ({err})") from None
    eps_s = math.nextafter(math.sqrt(2.0 * rho_s), 0.0)  # pure eps_s-DP noisy counts: eps_s^2 / 2 <= rho_s
    while Fraction(eps_s) ** 2 / 2 > Fraction(rho_s):
        eps_s = math.nextafter(eps_s, 0.0)
    return _selection(eps_s, delta, kp, "threshold")


def _log_std(plans: Sequence[AggregatePlan]) -> float:
    """The sum of log noise standard deviations over every component (a geometric mean, up to the count)."""
    stds = [c.describe()["std"] for p in plans for c in p.components.values()]
    if not stds:  # quantiles only: the same search under both families
        return 0.0
    return -math.inf if min(stds) <= 0.0 else math.fsum(math.log(s) for s in stds)  # a std below 1e-308 is 0
