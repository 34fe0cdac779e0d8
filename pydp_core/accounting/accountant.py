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
- a total in one definition composes the spends' representations in it (paper 000 Table 1);
- a total as (eps, delta)-DP takes the smallest eps over the valid routes: the exact GDP profile of the
  composed mu (all spends GDP), the best RDP order of the composed curve (all spends with RDP), and
  basic composition, with (eps_i, delta_i) spends summed and the remaining delta given to the rest.

Repeated runs of the same mechanism are kept as one record with a ``count`` (n runs compose as
sqrt(n) mu, n rho, n epsilon(alpha), ...), so a training loop that spends once per step stays cheap and
the JSON stays small.

A spend that would take the total in the limit's definition past the limit raises
:class:`BudgetExceededError` and is not recorded; the check and the record happen under one lock, so
concurrent spends from several threads never overshoot.
"""
from __future__ import annotations

import json
import math
import os
import threading
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from .._validation import (
    check_alpha,
    check_nonneg_scalar,
    check_open_delta,
    real_scalar,
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
from .composition import compose

__all__ = ["Accountant", "BudgetExceededError"]

_FORMAT = "pydp_core.Accountant/1"


class BudgetExceededError(ValueError):
    """The spend would take the total past the accountant's limit; nothing was recorded."""


def _positive(value: Any, name: str) -> float:
    x = check_nonneg_scalar(value, name)
    if x == 0:
        raise ValueError(f"{name} must be > 0")
    return x


class _Spend:
    """One recorded mechanism and its valid representations."""

    def __init__(self, record: dict) -> None:
        self.record = record
        count = record.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"count must be an integer >= 1, got {count!r}")
        self.count = int(count)
        kind = record["kind"]
        for key in ("sigma", "scale", "sensitivity"):  # records read back from JSON are re-validated
            if key in record:
                _positive(record[key], key)
        if kind == "subbotin" and not real_scalar(record["r"], "r") >= 1:
            raise ValueError("r must be >= 1")
        self.gdp: Optional[float] = None
        self.zcdp: Optional[ZCDP] = None
        self.rao: Optional[float] = None
        self.pure: Optional[float] = None
        self.approx: Optional[ApproxDP] = None
        self.rdp: Optional[Callable[[np.ndarray], np.ndarray]] = None  # +inf where not valid
        self.rdp_alphas: List[float] = []
        self.profile: Optional[Callable[[float], float]] = None  # delta -> eps (exact)
        self.budget: Optional[Budget] = None
        if kind == "gaussian":
            psi = record["sensitivity"] / record["sigma"]
            self.gdp = psi
            self.zcdp = ZCDP(0.5 * psi * psi)
            self.rao = psi
            half = 0.5 * psi * psi
            self.rdp = lambda a: half * np.asarray(a, dtype=float)
        elif kind == "laplace":
            eps = record["sensitivity"] / record["scale"]
            self._from_pure(eps)
            self.rao = eps
        elif kind == "subbotin":
            from ..calibration import epsilon_for_delta
            from ..noise import Subbotin
            from .rao import theta

            r, s, d = record["r"], record["scale"], record["sensitivity"]
            fam = Subbotin(r)
            self.rao = theta(fam, sensitivity=d, scale=s).theta
            if r == 1.0:
                self._from_pure(d / s)
            elif r == 2.0:
                psi = d / s
                self.gdp = psi
                self.zcdp = ZCDP(0.5 * psi * psi)
                half = 0.5 * psi * psi
                self.rdp = lambda a: half * np.asarray(a, dtype=float)
            else:
                self.profile = lambda delta: float(epsilon_for_delta(fam, delta=delta, sensitivity=d, scale=s))
        elif kind == "budget":
            b = budget_from_fields(record["type"], record["fields"])
            self.budget = b
            self._from_budget(b)
        else:
            raise ValueError(f"unknown spend kind {kind!r}")
        if self.count > 1:
            self._scale(self.count)

    def _scale(self, n: int) -> None:
        """n independent runs of this mechanism, composed in each representation (paper 000 Table 1)."""
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

    def same_mechanism(self, record: dict) -> bool:
        a = {k: v for k, v in self.record.items() if k != "count"}
        b = {k: v for k, v in record.items() if k != "count"}
        return a == b

    def _from_pure(self, eps: float) -> None:
        p = PureDP(eps)
        self.pure = eps
        self.gdp = p.to_gdp().mu
        self.zcdp = p.to_zcdp()
        self.rdp = p.rdp_epsilon
        self.approx = ApproxDP(eps, 0.0)

    def _from_budget(self, b: Budget) -> None:
        if isinstance(b, PureDP):
            self._from_pure(b.epsilon)
        elif isinstance(b, ApproxDP):
            self.approx = b
        elif isinstance(b, GDP):
            self.gdp = b.mu
            self.zcdp = b.to_zcdp()
            half = 0.5 * b.mu**2
            self.rdp = lambda a: half * np.asarray(a, dtype=float)
        elif isinstance(b, ZCDP):
            self.zcdp = b
            xi, rho = b.xi, b.rho
            self.rdp = lambda a: xi + rho * np.asarray(a, dtype=float)
        elif isinstance(b, TCDP):
            rho, omega = b.rho, b.omega
            self.rdp = lambda a: np.where(np.asarray(a, dtype=float) <= omega, rho * np.asarray(a, dtype=float), np.inf)
            if math.isfinite(omega):
                self.rdp_alphas.append(omega)
        elif isinstance(b, RDP):
            a0, e0 = b.alpha, b.epsilon  # monotone in alpha: eps(a) <= e0 for a <= a0
            self.rdp = lambda a: np.where(np.asarray(a, dtype=float) <= a0, e0, np.inf)
            self.rdp_alphas.append(a0)
        elif isinstance(b, RDPCurve):
            self.rdp = lambda a: np.asarray(b(np.asarray(a, dtype=float)), dtype=float)
            if b.is_grid:
                self.rdp_alphas.extend(b.alphas.tolist())
        elif isinstance(b, RaoDP):
            self.rao = b.theta
        else:
            raise TypeError(f"the accountant cannot track {type(b).__name__} budgets")


class Accountant:
    """Records privacy spends against ``limit`` (a budget of any supported kind) and reports totals.

    >>> acc = Accountant(ApproxDP(1.0, 1e-6))
    >>> acc.spend_gaussian(sigma=10.0)
    >>> acc.total(ApproxDP, delta=1e-6).epsilon < 1.0
    True
    """

    def __init__(self, limit: Budget) -> None:
        if not isinstance(limit, (PureDP, ApproxDP, GDP, ZCDP, RDP, RaoDP)):
            raise TypeError(
                "limit must be a PureDP, ApproxDP, GDP, ZCDP, RDP or RaoDP budget, got " f"{type(limit).__name__}"
            )
        if isinstance(limit, ApproxDP):
            check_open_delta(limit.delta, "limit.delta")
        self._limit = limit
        self._spends: List[_Spend] = []
        self._lock = threading.Lock()

    # ---------------------------------------------------------------------------------------------
    @property
    def limit(self) -> Budget:
        return self._limit

    @property
    def spends(self) -> List[dict]:
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
        rec = {"kind": "gaussian", "sigma": _positive(sigma, "sigma"), "sensitivity": _positive(sensitivity, "sensitivity")}
        self._spend(rec, self._count(count))

    def spend_laplace(self, *, sensitivity: float = 1.0, scale: float, count: int = 1) -> None:
        """Record ``count`` runs of the Laplace mechanism with scale b (l1 sensitivity)."""
        rec = {"kind": "laplace", "scale": _positive(scale, "scale"), "sensitivity": _positive(sensitivity, "sensitivity")}
        self._spend(rec, self._count(count))

    def spend_subbotin(self, r: float, *, sensitivity: float = 1.0, scale: float, count: int = 1) -> None:
        """Record ``count`` runs of the Subbotin_r mechanism (l_r sensitivity; Rao DP uses it as l2 for d = 1)."""
        rr = real_scalar(r, "r")
        if not rr >= 1 or math.isinf(rr):
            raise ValueError(f"r must be finite and >= 1, got {rr!r}")
        rec = {"kind": "subbotin", "r": rr, "scale": _positive(scale, "scale"), "sensitivity": _positive(sensitivity, "sensitivity")}
        self._spend(rec, self._count(count))

    def spend(self, budget: Budget, count: int = 1) -> None:
        """Record a mechanism known only by its budget (an RDPCurve must be a grid curve: JSON-persistable)."""
        if not isinstance(budget, Budget):
            raise TypeError(f"budget must be a privacy budget, got {type(budget).__name__}")
        rec = {"kind": "budget", "type": type(budget).__name__, "fields": budget_fields(budget)}
        self._spend(rec, self._count(count))

    @staticmethod
    def _count(count: Any) -> int:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
            raise TypeError("count must be an integer")
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count!r}")
        return int(count)

    def _spend(self, record: dict, count: int) -> None:
        # the record is validated (and its representations built) before the lock is taken
        _Spend({**record, "count": count})
        with self._lock:
            last = self._spends[-1] if self._spends else None
            if last is not None and last.same_mechanism(record):  # repeated runs: one record with a count
                candidate = self._spends[:-1] + [_Spend({**record, "count": last.count + count})]
            else:
                candidate = self._spends + [_Spend({**record, "count": count})]
            try:
                total = _total(candidate, type(self._limit), **_limit_args(self._limit))
            except TypeError as exc:
                raise TypeError(f"this spend cannot be accounted against a {type(self._limit).__name__} limit: {exc}") from None
            if _exceeds(total, self._limit):
                raise BudgetExceededError(
                    f"spend refused: the total would be {total!r}, past the limit {self._limit!r}"
                )
            self._spends = candidate

    # ---------------------------------------------------------------------------------------------
    def total(self, definition: Any = None, *, delta: Optional[float] = None, alpha: Optional[float] = None) -> Budget:
        """The total spent so far in ``definition`` (a budget type; default: the limit's type).

        ``ApproxDP`` needs ``delta`` (default: the limit's delta), ``RDP`` needs ``alpha`` (default: the
        limit's alpha). Raises ``TypeError`` when some spend has no valid representation in it.
        """
        kind = type(self._limit) if definition is None else definition
        if not isinstance(kind, type):
            kind = type(kind)
        kw = {}
        if kind is ApproxDP:
            kw["delta"] = delta if delta is not None else getattr(self._limit, "delta", None)
            if kw["delta"] is None:
                raise TypeError("delta is required for an ApproxDP total")
        if kind is RDP:
            kw["alpha"] = alpha if alpha is not None else getattr(self._limit, "alpha", None)
            if kw["alpha"] is None:
                raise TypeError("alpha is required for an RDP total")
        with self._lock:
            spends = list(self._spends)
        return _total(spends, kind, **kw)

    def remaining(self) -> Budget:
        """How much of the limit is left, in the limit's definition (and at its delta / alpha)."""
        t = self.total()
        lim = self._limit
        if isinstance(lim, ApproxDP):
            return ApproxDP(max(0.0, lim.epsilon - t.epsilon), lim.delta)
        if isinstance(lim, PureDP):
            return PureDP(max(0.0, lim.epsilon - t.epsilon))
        if isinstance(lim, RDP):
            return RDP(lim.alpha, max(0.0, lim.epsilon - t.epsilon))
        if isinstance(lim, ZCDP):
            return ZCDP(max(0.0, lim.rho - t.rho), max(0.0, lim.xi - t.xi))
        if isinstance(lim, GDP):
            return GDP(math.sqrt(max(0.0, lim.mu**2 - t.mu**2)))
        return RaoDP(math.sqrt(max(0.0, lim.theta**2 - t.theta**2)))

    # ---------------------------------------------------------------------------------------------
    def to_json(self) -> str:
        with self._lock:
            records = [s.record for s in self._spends]
        doc = {
            "format": _FORMAT,
            "limit": {"type": type(self._limit).__name__, "fields": budget_fields(self._limit)},
            "spends": records,
        }
        return json.dumps(doc, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Accountant":
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"not a {_FORMAT} document")
        try:
            acc = cls(budget_from_fields(doc["limit"]["type"], doc["limit"]["fields"]))
            spends = [_Spend(r) for r in doc["spends"]]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed {_FORMAT} document: {exc!r}") from None
        acc._spends = spends  # the saved state was within its limit when saved; re-check below
        total = _total(spends, type(acc._limit), **_limit_args(acc._limit))
        if _exceeds(total, acc._limit):
            raise ValueError("the saved spends exceed the saved limit: the document is inconsistent")
        return acc

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the state to ``path`` atomically (write to a temporary file, then rename)."""
        text = self.to_json()
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}.{threading.get_ident()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "Accountant":
        with open(path, encoding="utf-8") as fh:
            return cls.from_json(fh.read())

    def __repr__(self) -> str:
        return f"Accountant(limit={self._limit!r}, spends={len(self)})"


# ------------------------------------------------------------------------------------------------------
def _limit_args(limit: Budget) -> Dict[str, float]:
    if isinstance(limit, ApproxDP):
        return {"delta": limit.delta}
    if isinstance(limit, RDP):
        return {"alpha": limit.alpha}
    return {}


def _exceeds(total: Budget, limit: Budget) -> bool:
    tol = 1e-12
    if isinstance(limit, (ApproxDP, PureDP, RDP)):
        return total.epsilon > limit.epsilon * (1 + tol)
    if isinstance(limit, ZCDP):
        return total.rho > limit.rho * (1 + tol) or total.xi > limit.xi * (1 + tol)
    if isinstance(limit, GDP):
        return total.mu > limit.mu * (1 + tol)
    return total.theta > limit.theta * (1 + tol)


def _missing(spends: List[_Spend], attr: str) -> bool:
    return any(getattr(s, attr) is None for s in spends)


def _total(spends: List[_Spend], kind: type, *, delta: Optional[float] = None, alpha: Optional[float] = None) -> Budget:
    if not spends:
        return {
            ApproxDP: lambda: ApproxDP(0.0, float(delta)),
            PureDP: lambda: PureDP(0.0),
            GDP: lambda: GDP(0.0),
            ZCDP: lambda: ZCDP(0.0),
            RaoDP: lambda: RaoDP(0.0),
            RDP: lambda: RDP(check_alpha(alpha), 0.0),
        }.get(kind, lambda: _no_route(kind, "it"))()
    if kind is GDP:
        if _missing(spends, "gdp"):
            _no_route(kind, "a spend")
        mu = math.hypot(*(s.gdp for s in spends))
        if not _missing(spends, "pure"):  # pure DP composes first, then converts: sometimes smaller
            mu = min(mu, PureDP(math.fsum(s.pure for s in spends)).to_gdp().mu)
        return GDP(mu)
    if kind is ZCDP:
        if _missing(spends, "zcdp"):
            _no_route(kind, "a spend")
        return compose([s.zcdp for s in spends])
    if kind is RaoDP:
        if _missing(spends, "rao"):
            _no_route(kind, "a spend")
        return RaoDP(math.hypot(*(s.rao for s in spends)))
    if kind is PureDP:
        if _missing(spends, "pure"):
            _no_route(kind, "a spend")
        return PureDP(math.fsum(s.pure for s in spends))
    if kind is RDP:
        a = check_alpha(alpha)
        if _missing(spends, "rdp"):
            _no_route(kind, "a spend")
        e = math.fsum(float(s.rdp(np.asarray(a))) for s in spends)
        if math.isinf(e):
            raise TypeError(f"some spend has no RDP bound at alpha = {a!r}")
        return RDP(a, e)
    if kind is ApproxDP:
        return _approx_total(spends, check_open_delta(delta))
    raise TypeError(f"the accountant reports totals as PureDP, ApproxDP, GDP, ZCDP, RDP or RaoDP, not {kind!r}")


def _no_route(kind: type, what: str) -> Budget:
    raise TypeError(f"{what} has no valid representation as {kind.__name__}")


def _curve_epsilon(spends: List[_Spend], delta: float) -> float:
    """The best of the exact-GDP route and the RDP route for spends that all have one (inf if none)."""
    best = math.inf
    if not _missing(spends, "gdp"):
        best = min(best, GDP(math.hypot(*(s.gdp for s in spends))).to_approx_dp(delta).epsilon)
    if not _missing(spends, "rdp"):
        extra = [a for s in spends for a in s.rdp_alphas]
        grid = np.unique(np.concatenate([DEFAULT_ALPHAS, np.asarray(extra, dtype=float)]))
        total = np.zeros_like(grid)
        for s in spends:
            total = total + np.asarray(s.rdp(grid), dtype=float)
        ok = np.isfinite(total)
        if ok.any():
            best = min(best, float(np.min(rdp_epsilon_array(grid[ok], total[ok], delta, None))))
    if not _missing(spends, "zcdp"):
        z = compose([s.zcdp for s in spends])
        best = min(best, z.to_approx_dp(delta).epsilon)
    return best


def _approx_total(spends: List[_Spend], delta: float) -> ApproxDP:
    # Spends known only as (eps, delta) are summed; the others share the rest of delta.
    fixed = [s for s in spends if s.approx is not None and s.rdp is None and s.gdp is None]
    profiled = [s for s in spends if s.profile is not None]
    rest = [s for s in spends if s not in fixed and s not in profiled]
    eps_fixed = math.fsum(s.approx.epsilon for s in fixed)
    delta_fixed = math.fsum(s.approx.delta for s in fixed)
    if delta_fixed > delta * (1 + 1e-12):
        raise BudgetExceededError(f"the (eps, delta) spends already use delta = {delta_fixed!r} > {delta!r}")
    remaining = delta - delta_fixed
    if not rest and not profiled:
        return ApproxDP(eps_fixed, delta)
    if remaining <= 0:
        raise BudgetExceededError("no delta is left for the spends that need one")
    pieces = sum(s.count for s in profiled) + (1 if rest else 0)
    share = remaining / pieces
    eps = eps_fixed
    for s in profiled:
        eps += s.count * s.profile(share)
    if rest:
        # the rest: each of the composable routes needs every spend to have it; spends that are only
        # pure DP without other routes (none today) would fall back to their (eps, 0)
        if _missing(rest, "gdp") and _missing(rest, "rdp") and _missing(rest, "zcdp"):
            if not _missing(rest, "approx"):
                eps += math.fsum(s.approx.epsilon for s in rest)
            else:
                raise TypeError("some spend (e.g. Rao DP of an unknown mechanism) has no (eps, delta) route")
        else:
            e_rest = _curve_epsilon(rest, share)
            pure_only = (
                PureDP(math.fsum(s.pure for s in rest)).to_approx_dp(share).epsilon
                if not _missing(rest, "pure")
                else math.inf
            )
            e_rest = min(e_rest, pure_only)
            if math.isinf(e_rest):
                raise TypeError("some spends have no common route to (eps, delta)")
            eps += e_rest
    return ApproxDP(eps, delta)
