"""A thread-safe privacy budget accountant with JSON persistence.

``Accountant(limit)`` records mechanisms as they are spent and reports the running total in any
definition by the tightest valid route it knows:

- each spend carries every representation that is valid for it: a Gaussian mechanism (sigma, D) is
  exactly psi-GDP (psi = D / sigma), (alpha, alpha psi^2/2)-RDP at every order, psi^2/2-zCDP and
  psi-Rao-DP; a Laplace mechanism (b, D) is eps-DP (eps = D / b, l1 sensitivity), has the exact
  randomised-response RDP bound at every order, (eps^2/2)-zCDP, mu-GDP with mu = -2 Phi^-1(1/(1+e^eps))
  and is eps-Rao-DP; a Subbotin_r mechanism is theta-Rao-DP with the corrected Fisher information, and
  has the exact (eps, delta) profile of the calibration core; a budget spend carries itself and its
  valid conversions;
- a total in one definition composes the spends' representations in it (Anonymous 2022, Table 1);
- a total as (eps, delta)-DP takes the smallest eps over the valid routes: the exact GDP profile of the
  composed mu (all spends GDP), the best RDP order of the composed curve (all spends with RDP), and
  basic composition, with (eps_i, delta_i) spends summed and the remaining delta given to the rest;
- and the PLD route: every spend with a privacy-loss distribution (the Gaussian, Laplace and Subbotin
  mechanisms, pure, (eps, delta) and GDP budgets, and any mechanism of :meth:`Accountant.spend_mechanism`:
  Logistic, Poisson-subsampled, truncated, discrete) is composed as a PLD
  (:mod:`pydp_core.accounting.pld`), and the certified upper epsilon of that composition competes with the
  routes above (spends without a PLD get a share of delta as one more piece).

Repeated runs of the same mechanism are kept as one record with a ``count`` (n runs compose as
sqrt(n) mu, n rho, n epsilon(alpha), ...), so a training loop that spends once per step stays cheap and
the JSON stays small.

A spend that would take the total in the limit's definition past the limit raises
:class:`BudgetExceededError` and is not recorded; the check and the record happen under one lock, so
concurrent spends from several threads never overshoot.

Each privacy definition enters through two registries, so that a new definition needs no edit here:
:func:`track` (a :func:`functools.singledispatch` function: which representations a spent budget of
that type carries) and :data:`LIMITS` (how totals in that definition are formed, compared with a limit
and subtracted from it). The proofs are in ``docs/accounting.md``.

Over 600 lines (about 570 of code) because the accountant, its spends and the per-definition limits are
one state machine: the limit check, the charge and the journal must see the same totals.
"""
from __future__ import annotations

import functools
import json
import math
import os
import threading
import warnings
from collections import OrderedDict
from typing import Any, Callable, Generic, TypeVar, overload

import numpy as np

from .._errors import PrivacyWarning
from .._files import atomic_output
from .._validation import (
    check_alpha,
    check_choice,
    check_int,
    check_open_delta,
    check_positive_scalar,
    check_subbotin_order,
)
from .budgets import (
    DEFAULT_ALPHAS,
    GDP,
    RDP,
    TCDP,
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    RaoDP,
    RDPCurve,
    budget_fields,
    budget_from_fields,
    rdp_epsilon_array,
)
from .guarantees import laplace_rdp_epsilon
from .journal import Journal, JournalError
from .pld import PLD
from .rounding import norm_up, ratio_up, sum_up

__all__ = ["Accountant", "BudgetExceededError"]

_FORMAT = "pydp_core.Accountant/1"

B = TypeVar("B", bound=Budget)
T = TypeVar("T", bound=Budget)

#: Relative slack of the limit check: a total within 1e-12 of the limit is at the limit.
_RTOL = 1e-12


class BudgetExceededError(ValueError):
    """The spend would take the total past the accountant's limit; nothing was recorded."""


class _Spend:
    """One recorded mechanism and its valid representations (None where it has none)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        self.count = check_int(record.get("count", 1), "count", 1)
        for key in ("sigma", "scale", "sensitivity"):  # records read back from JSON are re-validated
            if key in record:
                check_positive_scalar(record[key], key)
        self.gdp: float | None = None
        self.zcdp: ZCDP | None = None
        self.rao: float | None = None
        self.pure: float | None = None
        self.approx: ApproxDP | None = None
        self.rdp: Callable[[Any], Any] | None = None  # epsilon(alpha); +inf where not valid
        self.rdp_alphas: list[float] = []
        self.profile: Callable[[float], float] | None = None  # delta -> eps (exact)
        self.pld: PLD | None = None  # one run's privacy-loss distribution
        kind = record["kind"]
        if kind == "gaussian":
            psi = ratio_up(record["sensitivity"], record["sigma"])
            track(GDP(psi), self)
            self.rao = psi
        elif kind == "laplace":
            eps = ratio_up(record["sensitivity"], record["scale"])
            track(PureDP(eps), self)
            self.rao = eps
            # The Laplace mechanism's own Renyi curve (Mironov 2017), below randomised response's at every order.
            pure_rdp = self.rdp
            assert pure_rdp is not None  # set by track(PureDP)
            self.rdp = lambda alpha: np.minimum(pure_rdp(alpha), laplace_rdp_epsilon(
                alpha, sensitivity=record["sensitivity"], scale=record["scale"]))
            self.pld = _maybe_pld(lambda: PLD.from_spec({"noise": "laplace", "scale": record["scale"],
                                                          "sensitivity": record["sensitivity"]}))
        elif kind == "subbotin":
            self._subbotin(check_subbotin_order(record["r"]), record["scale"], record["sensitivity"])
            self.pld = _maybe_pld(lambda: PLD.from_spec({"noise": "subbotin", "r": record["r"], "scale": record["scale"],
                                                          "sensitivity": record["sensitivity"]}))
        elif kind == "mechanism":
            spec = record["mechanism"]
            if isinstance(spec, dict) and "count" in spec:
                raise ValueError("a mechanism spend takes its repetitions as count=, not inside the mechanism")
            pld = PLD.from_spec(spec)
            self.pld = pld
            self.profile = lambda delta: float(pld.epsilon(delta).upper)
        elif kind == "budget":
            track(budget_from_fields(record["type"], record["fields"]), self)
        else:
            raise ValueError(f"unknown spend kind {kind!r}")
        if self.count > 1:
            self._repeat(self.count)

    def _subbotin(self, r: float, scale: float, sensitivity: float) -> None:
        from ..calibration.profile import epsilon_for_delta
        from ..noise import Subbotin
        from .rao import theta

        fam = Subbotin(r)
        if r == 1.0:
            track(PureDP(ratio_up(sensitivity, scale)), self)
        elif r == 2.0:
            track(GDP(ratio_up(sensitivity, scale)), self)
        else:
            self.profile = lambda delta: float(
                epsilon_for_delta(fam, delta=delta, sensitivity=sensitivity, scale=scale)
            )
        self.rao = theta(fam, sensitivity=sensitivity, scale=scale).theta

    def _repeat(self, n: int) -> None:
        """n independent runs of this mechanism, composed in each representation (Anonymous 2022, Table 1)."""
        root = math.sqrt(n)
        if self.gdp is not None:
            self.gdp *= root
        if self.rao is not None:
            self.rao *= root
        if self.zcdp is not None:
            self.zcdp = ZCDP(n * self.zcdp.rho, n * self.zcdp.xi)
        if self.pure is not None:
            self.pure *= n
        if self.approx is not None:
            self.approx = ApproxDP(n * self.approx.epsilon, min(1.0, n * self.approx.delta))
        if self.rdp is not None:
            base = self.rdp
            self.rdp = lambda a: n * np.asarray(base(a), dtype=float)
        # a profile (Subbotin) is composed by giving each of the n runs its share of delta

    def same_mechanism(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` describes the same mechanism as this spend (counts aside)."""
        a = {k: v for k, v in self.record.items() if k != "count"}
        b = {k: v for k, v in record.items() if k != "count"}
        return a == b


# ------------------------------------------------------------------------------------------------------
# What a spent budget carries: one rule per privacy definition
# ------------------------------------------------------------------------------------------------------
@functools.singledispatch
def track(budget: Budget, spend: _Spend) -> None:
    """Record in ``spend`` the representations that a spent ``budget`` implies.

    A new privacy definition registers its rule with ``@track.register`` from its own module.
    """
    raise TypeError(f"the accountant cannot track {type(budget).__name__} budgets")


def _maybe_pld(make: Callable[[], PLD]) -> PLD | None:
    """``make()``, or None where the parameters are beyond the PLD engine (an infinite or overflowing loss)."""
    try:
        return make()
    except (ValueError, OverflowError):
        return None


def _pld_or_identity(positive: bool, make: Callable[[], PLD]) -> PLD | None:
    """``make()``, or the identity PLD for a zero parameter (None where the budget has no PLD)."""
    return _maybe_pld(make) if positive else PLD.identity()


@track.register
def _(budget: PureDP, spend: _Spend) -> None:
    # Randomised response is the worst case of pure eps-DP under composition (Kairouz, Oh and Viswanath 2015).
    spend.pld = _pld_or_identity(budget.epsilon > 0, lambda: PLD.from_randomized_response(epsilon=budget.epsilon))
    spend.pure = budget.epsilon
    spend.gdp = budget.to_gdp().mu
    spend.zcdp = budget.to_zcdp()
    spend.rdp = budget.rdp_epsilon
    spend.approx = ApproxDP(budget.epsilon, 0.0)


@track.register
def _(budget: ApproxDP, spend: _Spend) -> None:
    spend.approx = budget
    spend.pld = _pld_or_identity(True, lambda: PLD.from_approx_dp(epsilon=budget.epsilon, delta=budget.delta))


@track.register
def _(budget: GDP, spend: _Spend) -> None:
    spend.pld = _pld_or_identity(budget.mu > 0, lambda: PLD.from_gdp(budget.mu))
    spend.gdp = budget.mu
    spend.zcdp = budget.to_zcdp()
    spend.rdp = budget.to_rdp_curve()


@track.register
def _(budget: ZCDP, spend: _Spend) -> None:
    spend.zcdp = budget
    spend.rdp = budget.to_rdp_curve()


@track.register
def _(budget: TCDP, spend: _Spend) -> None:
    spend.rdp = budget.to_rdp_curve()  # +inf beyond omega
    if math.isfinite(budget.omega):
        spend.rdp_alphas.append(budget.omega)


@track.register
def _(budget: RDP, spend: _Spend) -> None:
    spend.rdp = budget.to_rdp_curve()  # epsilon at every order <= alpha (monotonicity), +inf beyond
    spend.rdp_alphas.append(budget.alpha)


@track.register
def _(budget: RDPCurve, spend: _Spend) -> None:
    spend.rdp = budget
    if budget.alphas is not None:
        spend.rdp_alphas.extend(budget.alphas.tolist())


@track.register
def _(budget: RaoDP, spend: _Spend) -> None:
    spend.rao = budget.theta


# ------------------------------------------------------------------------------------------------------
# Totals, limit checks and what is left: one rule per definition a limit can have
# ------------------------------------------------------------------------------------------------------
class Limit(Generic[B]):
    """How the accountant totals spends in one definition, compares a total with a limit and subtracts it."""

    def parameters(self, limit: B) -> dict[str, float]:
        """The keyword arguments of :meth:`total` that a limit of this definition fixes (none by default)."""
        return {}

    def total(self, spends: list[_Spend], **params: Any) -> B:
        """The composition of ``spends`` in this definition (TypeError if some spend has none)."""
        raise NotImplementedError

    def quick_total(self, spends: list[_Spend], **params: Any) -> B:
        """A valid total that may be looser than :meth:`total` but is cheap (limit checks try it first)."""
        return self.total(spends, **params)

    def exceeds(self, total: B, limit: B) -> bool:
        """Whether ``total`` is past ``limit`` (by more than a relative 1e-12)."""
        raise NotImplementedError

    def remaining(self, total: B, limit: B) -> B:
        """What is left of ``limit`` after ``total``: the largest budget that still composes within it."""
        raise NotImplementedError


#: The definitions the accountant reports totals in, each with its rule. A new definition adds an entry.
LIMITS: dict[type, Limit[Any]] = {}

def _limit_rule(kind: type) -> Limit[Any]:
    for cls in kind.__mro__ if isinstance(kind, type) else ():
        if cls in LIMITS:
            return LIMITS[cls]
    names = ", ".join(t.__name__ for t in LIMITS)
    raise TypeError(f"the accountant reports totals as {names}, not {kind!r}")


def _register(kind: type) -> Callable[[type], type]:
    def deco(rule_cls: type) -> type:
        LIMITS[kind] = rule_cls()
        return rule_cls

    return deco


def _values(spends: list[_Spend], attr: str, kind: type) -> list[Any]:
    """The ``attr`` representation of every spend, or a TypeError naming the missing definition."""
    out = [getattr(s, attr) for s in spends]
    if any(v is None for v in out):
        raise TypeError(f"a spend has no valid representation as {kind.__name__}")
    return out


def _has(spends: list[_Spend], attr: str) -> bool:
    return all(getattr(s, attr) is not None for s in spends)


@_register(PureDP)
class _PureLimit(Limit[PureDP]):
    def total(self, spends: list[_Spend], **params: Any) -> PureDP:
        return PureDP(sum_up(_values(spends, "pure", PureDP)))

    def exceeds(self, total: PureDP, limit: PureDP) -> bool:
        return total.epsilon > limit.epsilon * (1 + _RTOL)

    def remaining(self, total: PureDP, limit: PureDP) -> PureDP:
        return PureDP(max(0.0, limit.epsilon - total.epsilon))


@_register(ApproxDP)
class _ApproxLimit(Limit[ApproxDP]):
    def parameters(self, limit: ApproxDP) -> dict[str, float]:
        return {"delta": limit.delta}

    def total(self, spends: list[_Spend], **params: Any) -> ApproxDP:
        delta = self._delta(params)
        if not spends:
            return ApproxDP(0.0, delta)
        try:
            base: ApproxDP | None = _approx_total(spends, delta)
        except TypeError:
            base = None
        return _tightest(spends, delta, base)

    def quick_total(self, spends: list[_Spend], **params: Any) -> ApproxDP:
        delta = self._delta(params)
        if not spends:
            return ApproxDP(0.0, delta)
        try:
            return _approx_total(spends, delta)
        except TypeError:
            return _tightest(spends, delta, None)

    @staticmethod
    def _delta(params: dict[str, Any]) -> float:
        if params.get("delta") is None:
            raise TypeError("delta is required for an ApproxDP total")
        return check_open_delta(params["delta"])

    def exceeds(self, total: ApproxDP, limit: ApproxDP) -> bool:
        return total.epsilon > limit.epsilon * (1 + _RTOL)

    def remaining(self, total: ApproxDP, limit: ApproxDP) -> ApproxDP:
        return ApproxDP(max(0.0, limit.epsilon - total.epsilon), limit.delta)


@_register(GDP)
class _GDPLimit(Limit[GDP]):
    def total(self, spends: list[_Spend], **params: Any) -> GDP:
        mu = norm_up(_values(spends, "gdp", GDP))
        if spends and _has(spends, "pure"):  # pure DP composes first, then converts: sometimes smaller
            mu = min(mu, PureDP(sum_up(s.pure for s in spends if s.pure is not None)).to_gdp().mu)
        return GDP(mu)

    def exceeds(self, total: GDP, limit: GDP) -> bool:
        return total.mu > limit.mu * (1 + _RTOL)

    def remaining(self, total: GDP, limit: GDP) -> GDP:
        return GDP(math.sqrt(max(0.0, (limit.mu - total.mu) * (limit.mu + total.mu))))


@_register(ZCDP)
class _ZCDPLimit(Limit[ZCDP]):
    def total(self, spends: list[_Spend], **params: Any) -> ZCDP:
        return ZCDP.compose(_values(spends, "zcdp", ZCDP)) if spends else ZCDP(0.0)

    def exceeds(self, total: ZCDP, limit: ZCDP) -> bool:
        return total.rho > limit.rho * (1 + _RTOL) or total.xi > limit.xi * (1 + _RTOL)

    def remaining(self, total: ZCDP, limit: ZCDP) -> ZCDP:
        return ZCDP(max(0.0, limit.rho - total.rho), max(0.0, limit.xi - total.xi))


@_register(RDP)
class _RDPLimit(Limit[RDP]):
    def parameters(self, limit: RDP) -> dict[str, float]:
        return {"alpha": limit.alpha}

    def total(self, spends: list[_Spend], **params: Any) -> RDP:
        if params.get("alpha") is None:
            raise TypeError("alpha is required for an RDP total")
        a = check_alpha(params["alpha"])
        e = sum_up(float(f(np.asarray(a))) for f in _values(spends, "rdp", RDP))
        if math.isinf(e):
            raise TypeError(f"some spend has no RDP bound at alpha = {a!r}")
        return RDP(a, e)

    def exceeds(self, total: RDP, limit: RDP) -> bool:
        return total.epsilon > limit.epsilon * (1 + _RTOL)

    def remaining(self, total: RDP, limit: RDP) -> RDP:
        return RDP(limit.alpha, max(0.0, limit.epsilon - total.epsilon))


@_register(RaoDP)
class _RaoLimit(Limit[RaoDP]):
    def total(self, spends: list[_Spend], **params: Any) -> RaoDP:
        return RaoDP(norm_up(_values(spends, "rao", RaoDP)))

    def exceeds(self, total: RaoDP, limit: RaoDP) -> bool:
        return total.theta > limit.theta * (1 + _RTOL)

    def remaining(self, total: RaoDP, limit: RaoDP) -> RaoDP:
        return RaoDP(math.sqrt(max(0.0, (limit.theta - total.theta) * (limit.theta + total.theta))))


def _curve_epsilon(spends: list[_Spend], delta: float) -> float:
    """The best of the exact-GDP, RDP and zCDP routes for spends that all have one (inf if none)."""
    best = math.inf
    if _has(spends, "gdp"):
        best = min(best, GDP(norm_up(_values(spends, "gdp", GDP))).to_approx_dp(delta).epsilon)
    if _has(spends, "rdp"):
        extra = [a for s in spends for a in s.rdp_alphas]
        grid = np.unique(np.concatenate([DEFAULT_ALPHAS, np.asarray(extra, dtype=float)]))
        total = np.zeros_like(grid)
        for f in _values(spends, "rdp", RDP):
            total = total + np.asarray(f(grid), dtype=float)
        ok = np.isfinite(total)
        if ok.any():
            best = min(best, float(np.min(rdp_epsilon_array(grid[ok], total[ok], delta, None))))
    if _has(spends, "zcdp"):
        best = min(best, ZCDP.compose(_values(spends, "zcdp", ZCDP)).to_approx_dp(delta).epsilon)
    return best


def _approx_total(spends: list[_Spend], delta: float, group: Callable[[float], float] | None = None) -> ApproxDP:
    """Spends known only as (eps, delta) are summed; the others share the rest of delta. ``group``: the
    epsilon(delta) of further spends composed elsewhere, one more piece of the shared delta."""
    def only_approx(s: _Spend) -> bool:
        return s.approx is not None and s.rdp is None and s.gdp is None

    fixed = [s.approx for s in spends if s.approx is not None and only_approx(s)]
    profiled = [s for s in spends if s.profile is not None]
    rest = [s for s in spends if s.profile is None and not only_approx(s)]
    eps_fixed = sum_up(a.epsilon for a in fixed)
    delta_fixed = sum_up(a.delta for a in fixed)
    if delta_fixed > delta * (1 + _RTOL):
        raise BudgetExceededError(f"the (eps, delta) spends already use delta = {delta_fixed!r} > {delta!r}")
    remaining = delta - delta_fixed
    if not rest and not profiled and group is None:
        return ApproxDP(eps_fixed, delta)
    if remaining <= 0:
        raise BudgetExceededError("no delta is left for the spends that need one")
    pieces = sum(s.count for s in profiled) + (1 if rest else 0) + (1 if group is not None else 0)
    share = remaining / pieces
    eps = eps_fixed + (group(share) if group is not None else 0.0)
    for s in profiled:
        assert s.profile is not None
        eps += s.count * s.profile(share)
    if rest:
        if not (_has(rest, "gdp") or _has(rest, "rdp") or _has(rest, "zcdp")):
            if not _has(rest, "approx"):
                raise TypeError("some spend (e.g. Rao DP of an unknown mechanism) has no (eps, delta) route")
            eps += sum_up(a.epsilon for a in _values(rest, "approx", ApproxDP))
        else:
            e_rest = _curve_epsilon(rest, share)
            if _has(rest, "pure"):
                e_rest = min(e_rest, PureDP(sum_up(_values(rest, "pure", PureDP))).to_approx_dp(share).epsilon)
            if math.isinf(e_rest):
                raise TypeError("some spends have no common route to (eps, delta)")
            eps += e_rest
    return ApproxDP(eps, delta)


#: Certified upper epsilons of recent PLD compositions, by the spends' records and delta (limit checks
#: and totals of a growing list of spends ask for the same compositions again).
_PLD_CACHE: OrderedDict[tuple[Any, ...], float] = OrderedDict()
_PLD_CACHE_LOCK = threading.Lock()


def _pld_epsilon(spends: list[_Spend], delta: float) -> float:
    """The certified upper epsilon(delta) of the PLD composition of ``spends`` (inf where none is certified)."""
    key = (json.dumps([s.record for s in spends], sort_keys=True), delta)
    with _PLD_CACHE_LOCK:
        if key in _PLD_CACHE:
            _PLD_CACHE.move_to_end(key)
            return _PLD_CACHE[key]
    plds = [s.pld if s.count == 1 else s.pld.self_compose(s.count) for s in spends if s.pld is not None]
    try:
        eps = float(PLD.composition(plds).epsilon(delta).upper)
    except ValueError:  # a composition beyond the discretisation's reach: no PLD answer
        eps = math.inf
    with _PLD_CACHE_LOCK:
        _PLD_CACHE[key] = eps
        while len(_PLD_CACHE) > 256:
            _PLD_CACHE.popitem(last=False)
    return eps


def _tightest(spends: list[_Spend], delta: float, base: ApproxDP | None) -> ApproxDP:
    """``base`` (the other routes' total, None if they have none) or the PLD route, whichever is smaller.

    The spends with a PLD are composed as one; with spends that have none, the composed PLD is one piece
    of the delta they share (:func:`_approx_total`)."""
    with_pld = [s for s in spends if s.pld is not None]
    best = math.inf if base is None else base.epsilon
    if with_pld:
        without = [s for s in spends if s.pld is None]
        try:
            if without:
                cand = _approx_total(without, delta, group=lambda d: _pld_epsilon(with_pld, d)).epsilon
            else:
                cand = _pld_epsilon(with_pld, delta)
        except TypeError:
            cand = math.inf
        best = min(best, cand)
    if math.isinf(best) and base is None:
        raise TypeError("some spends have no common route to (eps, delta)")
    return ApproxDP(best, delta) if base is None or best < base.epsilon else base


# ------------------------------------------------------------------------------------------------------
#: The batch samplers an :class:`Accountant` may be declared with.
SAMPLERS = ("poisson", "shuffle", "fixed_size", "truncated_poisson", "random_allocation", "balls_in_bins",
            "b_min_sep")


def _analysed_samplers(mechanism: Any) -> set[Any]:
    """The samplers a PLD description (or a mechanism nested in it) is an analysis of: "poisson" for a
    sampling_rate below 1 outside a sampler entry, and each sampler named as an entry's key."""
    found: set[Any] = set()
    if isinstance(mechanism, dict):
        rate = mechanism.get("sampling_rate", 1.0)
        named = [k for k in mechanism if k in SAMPLERS]
        if not named and isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate < 1.0:
            found.add("poisson")
        found.update(named)
        for k, v in mechanism.items():
            if k not in SAMPLERS:
                found |= _analysed_samplers(v)
    elif isinstance(mechanism, list):
        for v in mechanism:
            found |= _analysed_samplers(v)
    return found


class Accountant(Generic[B]):
    """Records privacy spends against ``limit`` and reports totals in any definition.

    The accountant is generic in the type of its limit: ``Accountant(ApproxDP(...)).total()`` is an
    :class:`~pydp_core.ApproxDP`, ``remaining()`` likewise.

    Parameters
    ----------
    limit : PureDP, ApproxDP, GDP, ZCDP, RDP or RaoDP
        The budget that the total, in the limit's definition, must never exceed. An ``ApproxDP`` limit
        needs delta in (0, 1).
    journal : str or os.PathLike, optional
        A durable, authenticated journal file (:mod:`pydp_core.accounting.journal`): every spend is
        appended and flushed to disk before the spend returns, and an existing journal is verified and
        replayed, so a process that dies loses no spend. A journal written for another limit, edited,
        reordered, or written under another key is refused.
    journal_key : bytes, optional
        The journal's MAC key, at least 32 bytes, required with ``journal`` (keep it apart from the
        journal, e.g. ``pydp_core.io.generate_key()`` stored with the job's secrets).
    sampler : {"poisson", "shuffle", "fixed_size", "truncated_poisson", "random_allocation", "balls_in_bins", \
"b_min_sep"}, optional
        How the training loop draws its batches (recorded as :attr:`sampler`). A spend analysed for
        another sampler is refused (:meth:`spend_mechanism`): an analysis holds for the sampler it was
        made for (shuffled training can be far less private than its Poisson accounting says; Chua et
        al. 2024). Only a Poisson analysis charged to another sampler can be forced, with
        ``acknowledge_poisson_analysis``.

    Raises
    ------
    TypeError
        If ``limit`` is not a budget of a definition the accountant reports totals in, or ``journal``
        is given without a ``journal_key`` of bytes.
    ValueError
        If an ``ApproxDP`` limit has delta 0 or 1.
    JournalError
        If the journal fails its authentication, holds another limit, or its spends exceed the limit.

    Examples
    --------
    >>> acc = Accountant(ApproxDP(1.0, 1e-6))
    >>> acc.spend_gaussian(sigma=10.0)
    >>> acc.spend_gaussian(sigma=10.0, count=3)
    >>> len(acc)
    4
    >>> acc.total(GDP)
    GDP(mu=0.2)
    >>> acc.total().epsilon
    0.8...
    >>> acc.spend_gaussian(sigma=1.0)
    Traceback (most recent call last):
    ...
    pydp_core.accounting.accountant.BudgetExceededError: spend refused: ...
    >>> import os, tempfile
    >>> path, key = os.path.join(tempfile.mkdtemp(), "budget.journal"), bytes(range(32))
    >>> Accountant(PureDP(1.0), journal=path, journal_key=key).spend_laplace(scale=2.0)
    >>> Accountant(PureDP(1.0), journal=path, journal_key=key).total()     # replayed from the journal
    PureDP(epsilon=0.5)
    """

    def __init__(self, limit: B, *, journal: os.PathLike[str] | str | None = None,
                 journal_key: bytes | None = None, sampler: str | None = None) -> None:
        self._sampler = None if sampler is None else check_choice(sampler, "sampler", SAMPLERS)
        if not isinstance(limit, tuple(LIMITS)):
            names = ", ".join(t.__name__ for t in LIMITS)
            raise TypeError(f"limit must be a {names} budget, got {type(limit).__name__}")
        self._rule: Limit[B] = _limit_rule(type(limit))
        for key, value in self._rule.parameters(limit).items():
            if key == "delta":
                check_open_delta(value, "limit.delta")
        self._limit = limit
        self._spends: list[_Spend] = []
        self._lock = threading.Lock()
        self._journal: Journal | None = None
        self._replayed = 0
        if journal is not None:
            if journal_key is None:
                raise TypeError("journal needs journal_key: bytes of length >= 32, kept apart from the journal")
            jr = Journal(journal, key=journal_key, limit=self._limit_doc(), sampler=self._sampler)
            self._spends, self._replayed = self._replay(jr.entries, os.fspath(journal)), len(jr.entries)
            self._journal = jr

    # ---------------------------------------------------------------------------------------------
    @property
    def limit(self) -> B:
        """The budget the total must not exceed."""
        return self._limit

    @property
    def sampler(self) -> str | None:
        """The declared batch sampler ("poisson", "shuffle", "fixed_size", "random_allocation"), or None."""
        return self._sampler

    @property
    def spends(self) -> list[dict[str, Any]]:
        """The recorded spends (copies of their JSON records, with a ``count`` of repeated runs), in order."""
        with self._lock:
            return [json.loads(json.dumps(s.record)) for s in self._spends]

    def __len__(self) -> int:
        """The number of mechanisms spent (repeated runs count one each)."""
        with self._lock:
            return sum(s.count for s in self._spends)

    # ---------------------------------------------------------------------------------------------
    def spend_gaussian(self, *, sensitivity: float = 1.0, sigma: float, count: int = 1) -> None:
        """Record ``count`` runs of the Gaussian mechanism with standard deviation sigma (l2 sensitivity)."""
        rec = {
            "kind": "gaussian",
            "sigma": check_positive_scalar(sigma, "sigma"),
            "sensitivity": check_positive_scalar(sensitivity, "sensitivity"),
        }
        self._spend(rec, check_int(count, "count", 1))

    def spend_laplace(self, *, sensitivity: float = 1.0, scale: float, count: int = 1) -> None:
        """Record ``count`` runs of the Laplace mechanism with scale b (l1 sensitivity)."""
        rec = {
            "kind": "laplace",
            "scale": check_positive_scalar(scale, "scale"),
            "sensitivity": check_positive_scalar(sensitivity, "sensitivity"),
        }
        self._spend(rec, check_int(count, "count", 1))

    def spend_subbotin(self, r: float, *, sensitivity: float = 1.0, scale: float, count: int = 1) -> None:
        """Record ``count`` runs of the Subbotin_r mechanism (l_r sensitivity; Rao DP uses it as l2 for d = 1)."""
        rec = {
            "kind": "subbotin",
            "r": check_subbotin_order(r),
            "scale": check_positive_scalar(scale, "scale"),
            "sensitivity": check_positive_scalar(sensitivity, "sensitivity"),
        }
        self._spend(rec, check_int(count, "count", 1))

    def spend_mechanism(self, mechanism: dict[str, Any], *, count: int = 1,
                        acknowledge_poisson_analysis: bool = False) -> None:
        """Record ``count`` runs of a mechanism described by its privacy-loss distribution.

        Any mechanism :meth:`PLD.from_spec <pydp_core.accounting.pld.PLD.from_spec>` describes: additive
        Gaussian, Laplace, Logistic or Subbotin noise (optionally truncated, optionally Poisson-subsampled
        with ``sampling_rate``), the discrete Laplace and discrete Gaussian, randomized response, GDP or an
        (eps, delta) guarantee. Its (eps, delta) totals come from the certified PLD composition (and, with
        spends that have no PLD, from its privacy profile with a share of delta). Limit checks compose
        PLDs only when the cheaper routes are past the limit; a loop near the limit therefore pays one
        composition per spend: record repeated runs with ``count=`` where possible.

        Parameters
        ----------
        mechanism : dict
            The description, e.g. ``{"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01}``
            (without ``count``).
        count : int, optional
            Number of runs (>= 1).
        acknowledge_poisson_analysis : bool, optional
            Charge a Poisson-subsampled description (a ``sampling_rate`` below 1) although the declared
            :attr:`sampler` is not Poisson; the spend is recorded with a :class:`PrivacyWarning`.

        Raises
        ------
        ValueError, TypeError
            If the description is malformed, or it is Poisson-subsampled while the declared sampler is
            "shuffle", "fixed_size" or "random_allocation" and ``acknowledge_poisson_analysis`` is not
            True; :class:`BudgetExceededError` past the limit.

        Examples
        --------
        >>> acc = Accountant(ApproxDP(8.0, 1e-5))
        >>> acc.spend_mechanism({"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01}, count=10_000)
        >>> 6.18 < acc.total().epsilon < 6.19
        True
        """
        rec = {"kind": "mechanism", "mechanism": json.loads(json.dumps(mechanism))}
        self._check_sampler(rec["mechanism"], acknowledge_poisson_analysis)
        self._spend(rec, check_int(count, "count", 1))

    def _check_sampler(self, mechanism: Any, acknowledged: Any) -> None:
        """Refuse (or, acknowledged, warn about) a Poisson analysis charged to a declared non-Poisson sampler."""
        if not isinstance(acknowledged, bool):
            raise TypeError(f"acknowledge_poisson_analysis must be a bool, not {type(acknowledged).__name__}")
        analysed = set() if self._sampler is None else _analysed_samplers(mechanism) - {self._sampler}
        if not analysed:
            return
        if analysed != {"poisson"}:
            raise ValueError(f"an analysis of the {' and '.join(sorted(analysed))} sampler is charged to the declared "
                             f"sampler {self._sampler!r}: declare the sampler the batches are drawn with")
        message = (f"a Poisson-subsampled analysis is charged to the declared sampler {self._sampler!r}: it is not "
                   "proved to bound that sampler's privacy loss")
        if not acknowledged:
            raise ValueError(f"{message}; use an analysis of the {self._sampler!r} sampler, or pass "
                             "acknowledge_poisson_analysis=True")
        warnings.warn(message, PrivacyWarning, stacklevel=3)

    def spend(self, budget: Budget, count: int = 1) -> None:
        """Record a mechanism known only by its budget (an RDPCurve must be a grid curve: JSON-persistable)."""
        if not isinstance(budget, Budget):
            raise TypeError(f"budget must be a privacy budget, got {type(budget).__name__}")
        rec = {"kind": "budget", "type": type(budget).__name__, "fields": budget_fields(budget)}
        self._spend(rec, check_int(count, "count", 1))

    def _over(self, spends: list[_Spend]) -> tuple[B, bool]:
        """The total in the limit's definition and whether it is past the limit: the cheap total first,
        the tightest one only when the cheap one is past the limit."""
        params = self._rule.parameters(self._limit)
        total = self._rule.quick_total(spends, **params)
        if self._rule.exceeds(total, self._limit):
            total = self._rule.total(spends, **params)
        return total, self._rule.exceeds(total, self._limit)

    def _candidate(self, record: dict[str, Any], count: int) -> list[_Spend]:
        """The spends with ``count`` runs of ``record`` added (merged into the last record if it is the same)."""
        last = self._spends[-1] if self._spends else None
        if last is not None and last.same_mechanism(record):  # repeated runs: one record with a count
            return self._spends[:-1] + [_Spend({**record, "count": last.count + count})]
        return self._spends + [_Spend({**record, "count": count})]

    def _replay(self, entries: list[dict[str, Any]], where: str) -> list[_Spend]:
        """The spends of journal ``entries``, each checked against the limit."""
        saved, self._spends = self._spends, []
        try:
            for entry in entries:
                try:
                    rec = {k: v for k, v in entry.items() if k != "count"}
                    candidate = self._candidate(rec, check_int(entry["count"], "count", 1))
                    over = self._over(candidate)[1]
                except (KeyError, TypeError, ValueError) as exc:
                    raise JournalError(f"the journal {where!r} holds a malformed spend: {exc}") from None
                if over:
                    raise JournalError(f"the journal {where!r} holds spends past its limit")
                self._spends = candidate
            return self._spends
        finally:
            self._spends = saved

    def copy(self) -> Accountant[B]:
        """An in-memory copy (same limit and spends, no journal): to try several spends before making them."""
        with self._lock:
            out: Accountant[B] = Accountant(self._limit, sampler=self._sampler)
            out._spends = list(self._spends)
            return out

    @property
    def journal_id(self) -> str | None:
        """The identifier of the journal (random, from its header), or None without a journal."""
        return None if self._journal is None else self._journal.id

    @classmethod
    def from_journal(cls, journal: os.PathLike[str] | str, *, journal_key: bytes) -> Accountant[Any]:
        """The accountant of an existing journal, with the limit written in it (verified on opening).

        Raises
        ------
        JournalError
            If the file is not a journal, fails its authentication, or its spends exceed its limit.
        """
        doc = Journal.read_limit(journal)
        try:
            limit: Any = budget_from_fields(doc["type"], doc["fields"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise JournalError(f"the journal {os.fspath(journal)!r} holds a malformed limit") from None
        return cls(limit, journal=journal, journal_key=journal_key, sampler=Journal.read_sampler(journal))

    def _limit_doc(self) -> dict[str, Any]:
        return {"type": type(self._limit).__name__, "fields": budget_fields(self._limit)}

    def _spend(self, record: dict[str, Any], count: int) -> None:
        # the record is validated (and its representations built) before the lock is taken
        _Spend({**record, "count": count})
        with self._lock:
            if self._journal is None:
                self._spends = self._checked(record, count)
                return
            # Other processes may share the journal: under its lock, take up what they spent, then decide.
            with self._journal.transaction() as entries:
                if len(entries) != self._replayed:
                    self._spends = self._replay(entries, self._journal._path)
                    self._replayed = len(entries)
                candidate = self._checked(record, count)
                self._journal.append({**record, "count": count})  # durable before the spend counts
                self._spends, self._replayed = candidate, self._replayed + 1

    def _checked(self, record: dict[str, Any], count: int) -> list[_Spend]:
        """The spends with ``record`` added, or BudgetExceededError past the limit."""
        candidate = self._candidate(record, count)
        try:
            total, over = self._over(candidate)
        except TypeError as exc:
            raise TypeError(f"this spend cannot be accounted against a {type(self._limit).__name__} limit: {exc}") from None
        if over:
            raise BudgetExceededError(f"spend refused: the total would be {total!r}, past the limit {self._limit!r}")
        return candidate

    # ---------------------------------------------------------------------------------------------
    @overload
    def total(self, definition: None = None, *, delta: float | None = None, alpha: float | None = None) -> B: ...

    @overload
    def total(self, definition: type[T], *, delta: float | None = None, alpha: float | None = None) -> T: ...

    @overload
    def total(self, definition: T, *, delta: float | None = None, alpha: float | None = None) -> T: ...

    def total(self, definition: Any = None, *, delta: float | None = None, alpha: float | None = None) -> Any:
        """The total spent so far in ``definition`` (a budget type; default: the limit's type).

        ``ApproxDP`` needs ``delta`` (default: the limit's delta), ``RDP`` needs ``alpha`` (default: the
        limit's alpha). Raises ``TypeError`` when some spend has no valid representation in it.
        """
        kind = type(self._limit) if definition is None else definition
        if not isinstance(kind, type):
            kind = type(kind)
        rule = _limit_rule(kind)
        params: dict[str, Any] = {}
        if isinstance(self._limit, kind):
            params.update(self._rule.parameters(self._limit))
        given = {"delta": delta, "alpha": alpha}
        params.update({k: v for k, v in given.items() if v is not None})
        with self._lock:
            spends = list(self._spends)
        return rule.total(spends, **params)

    def remaining(self) -> B:
        """How much of the limit is left, in the limit's definition (and at its delta / alpha)."""
        return self._rule.remaining(self.total(), self._limit)

    # ---------------------------------------------------------------------------------------------
    def to_json(self) -> str:
        """The limit and the spends as a JSON document (read back by :meth:`from_json`)."""
        with self._lock:
            records = [s.record for s in self._spends]
        doc: dict[str, Any] = {"format": _FORMAT, "limit": self._limit_doc(), "spends": records}
        if self._sampler is not None:
            doc["sampler"] = self._sampler
        return json.dumps(doc, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Accountant[Any]:
        """An accountant restored from :meth:`to_json`; its spends are re-validated against its limit."""
        try:
            doc = json.loads(text)
        except RecursionError:
            raise ValueError("the accountant JSON is nested too deeply to be an accountant") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"not a {_FORMAT} document")
        try:
            limit: Any = budget_from_fields(doc["limit"]["type"], doc["limit"]["fields"])
            acc: Accountant[Any] = cls(limit, sampler=doc.get("sampler"))
            spends = [_Spend(r) for r in doc["spends"]]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed {_FORMAT} document: {exc!r}") from None
        if acc._over(spends)[1]:
            raise ValueError("the saved spends exceed the saved limit: the document is inconsistent")
        acc._spends = spends
        return acc

    def save(self, path: os.PathLike[str] | str) -> None:
        """Write the state to ``path`` atomically and durably (temporary file, fsync, rename, fsync of the folder).

        A snapshot without integrity check; for a record that survives a crash between saves and detects
        tampering, use ``journal=``.
        """
        text = self.to_json()
        # The temporary file is removed again on any error; only a hard kill can leave it.
        with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    @classmethod
    def load(cls, path: os.PathLike[str] | str) -> Accountant[Any]:
        """An accountant restored from a file written by :meth:`save`."""
        with open(path, encoding="utf-8") as fh:
            return cls.from_json(fh.read())

    def __repr__(self) -> str:
        return f"Accountant(limit={self._limit!r}, spends={len(self)})"
