"""The aggregation request: every argument of :func:`~pydp_core.aggregation.aggregate` checked against the
table's columns, and the budget plan and release key derived from them (:class:`AggregateSpec`)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._validation import check_aggregate_names, check_choice, check_confidence, check_int, check_positive_scalar
from ..io.keyed import check_bounds
from ..io.keys import check_key, generate_key, release_id, release_key
from ._budget import BudgetPlan, plan_budget
from .aggregations import AGGREGATES, COMPONENTS, VALUE_AGGREGATES, split_epsilon
from .autobounds import BoundsSearch, plan_bounds_search
from .histograms import histogram_edges
from .quantiles import QUANTILE_NAMES, is_quantile, quantile_requests
from .selection import SELECTION_METHODS
from .vectors import vector_request


def _column_name(value: Any, name: str, frame: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a column name (str), not {type(value).__name__}")
    if value not in frame.names:
        raise ValueError(f"{name}: column {value!r} is not in the table (columns: {', '.join(map(str, frame.names))})")
    return value


def _requests(aggregations: Any, privacy_unit: str, frame: Any, bins: dict[Any, Any],
              vectors: dict[Any, Any]) -> list[tuple[str, str]]:
    """The (column, aggregate) pairs asked for; the edges of each histogram go to ``bins``, the (norm, bound,
    size) of each vector sum to ``vectors``."""
    if not isinstance(aggregations, Mapping) or not aggregations:
        raise TypeError("aggregations must be a non-empty mapping from column to a list of aggregates")
    out: list[tuple[str, str]] = []
    for col, aggs in aggregations.items():
        _column_name(col, "aggregations", frame)
        where = f"aggregations[{col!r}]"
        items = [aggs] if isinstance(aggs, (str, tuple)) else aggs
        if not isinstance(items, list):
            raise TypeError(f"{where} must be an aggregate name or a non-empty list of them")
        names = [a for a in items if isinstance(a, str)]
        vec = [a for a in items if isinstance(a, (tuple, list)) and a and a[0] == "vector_sum"]
        if len(vec) > 1:
            raise ValueError(f"{where}: one vector sum per column")
        if vec:
            vectors[col] = vector_request(vec[0], where)
            out.append((col, "vector_sum"))
        items = [a for a in items if not (vec and a is vec[0])]
        hist = [a for a in items if isinstance(a, (tuple, list)) and len(a) == 2 and a[0] == "histogram"]
        if len(hist) > 1:
            raise ValueError(f"{where}: one histogram per column")
        if hist:
            bins[col] = histogram_edges(hist[0], where)
            out.append((col, "histogram"))
        quantiles = [q for a in items if not isinstance(a, str) and not (hist and a is hist[0])
                     for q in quantile_requests(a, where)]
        for agg in check_aggregate_names(names, where, AGGREGATES + QUANTILE_NAMES) if names else []:
            if agg == "privacy_id_count" and col != privacy_unit:
                raise ValueError(
                    f"aggregations[{col!r}]: privacy_id_count counts privacy units; ask for it on the privacy_unit "
                    f"column {privacy_unit!r}"
                )
            out.append((col, agg))
        for agg in quantiles:
            if (col, agg) in out:
                raise ValueError(f"{where}: aggregate {agg!r} is listed twice")
            out.append((col, agg))
    return out


def output_name(column: str, aggregate: str, privacy_unit: str) -> str:
    """The output column of an aggregate: ``count`` (rows) and ``privacy_id_count`` (persons) when asked of
    the privacy unit's column (PipelineDP's names), ``<column>_<aggregate>`` otherwise."""
    if column == privacy_unit and aggregate in ("count", "privacy_id_count"):
        return aggregate
    return f"{column}_{aggregate}"


def _mapping_for(given: Any, needed: list[str], name: str, what: str) -> Mapping[str, Any]:
    """``given`` as a mapping with exactly the keys ``needed`` (else an error naming ``name``)."""
    if not isinstance(given, Mapping):
        raise TypeError(f"{name} must be a mapping from {what}")
    missing = [c for c in needed if c not in given]
    extra = [c for c in given if c not in needed]
    if missing or extra:
        raise ValueError(
            f"{name} must cover exactly {', '.join(map(repr, needed)) or 'nothing'}: "
            + (f"missing {', '.join(map(repr, missing))}" if missing else f"unexpected {', '.join(map(repr, extra))}")
        )
    return given


def _bounds(bounds: Any, requests: list[tuple[str, str]]) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """One (low, high) per column with a sum, mean, variance or quantile, and the columns whose bounds are
    ``"auto"`` (``bounds="auto"``: all of them)."""
    needed = sorted({c for c, a in requests if a in VALUE_AGGREGATES or is_quantile(a)})
    if isinstance(bounds, str) and bounds == "auto":
        return {}, needed
    what = "column to (low, high) or 'auto' (the columns with sum, mean, variance or a quantile)"
    given = _mapping_for({} if bounds is None else bounds, needed, "bounds", what)
    auto = [c for c in needed if isinstance(given[c], str) and given[c] == "auto"]
    return {c: check_bounds(given[c], f"bounds[{c!r}]") for c in needed if c not in auto}, auto  # type: ignore[misc]


#: The share of the total budget ``bounds="auto"`` spends on choosing the bounds, unless ``bounds_share``.
DEFAULT_BOUNDS_SHARE = 0.1


@dataclass(frozen=True)
class AutoBounds:
    """The bounds chosen under DP: the calibrated searches, the budget left for the release (the arguments of
    :func:`plan_budget` but the bounds) and, once searched, the bounds found (``column -> (low, high, i_low,
    i_high)``)."""

    share: float
    searches: tuple[Any, ...]
    rest: dict[Any, Any]
    charge: dict[Any, Any]  # what the accountant is charged before the searches: the whole given budget
    found: dict[Any, Any] | None = None

    def describe(self) -> dict[Any, Any]:
        out: dict[Any, Any] = {"share": self.share, "charged": self.charge}
        for s in self.searches:
            out[s.column] = s.describe()
            if self.found is not None:
                lo, hi, i_lo, i_hi = self.found[s.column]
                out[s.column].update(bounds=[lo, hi], grid_indices=[i_lo, i_hi])
        return out


def _auto_bounds(auto: list[str], share: Any, *, epsilon: Any, rho: Any, delta: Any, kp: int, kc: int,
                 rest: dict[Any, Any]) -> tuple[AutoBounds | None, Any, Any]:
    """The searches of the ``auto`` columns and the epsilon (or rho) left for the release."""
    if not auto:
        if share is not None:
            raise ValueError("bounds_share applies only to columns with bounds 'auto'")
        return None, epsilon, rho
    s = DEFAULT_BOUNDS_SHARE if share is None else check_positive_scalar(share, "bounds_share")
    if not 0.0 < s < 1.0:
        raise ValueError(f"bounds_share must be in (0, 1), got {share!r}")
    if (epsilon is None) == (rho is None):  # let the budget check name the problem
        return None, epsilon, rho
    kind, total = ("rho", check_positive_scalar(rho, "rho")) if rho is not None else \
        ("epsilon", check_positive_scalar(epsilon, "epsilon"))
    spent, left = split_epsilon(total, [s, 1.0 - s])
    searches: list[BoundsSearch] = []
    for c, part in zip(auto, split_epsilon(spent, [1.0] * len(auto))):
        try:
            searches.append(plan_bounds_search(c, **{kind: part}, max_partitions=kp, max_contributions=kc))
        except ValueError as err:
            raise ValueError(f"bounds_share: the share of column {c!r} is too small ({err})") from None
    charge = {kind: total, "delta": float(delta)}
    eps_left, rho_left = (left, None) if kind == "epsilon" else (None, left)
    return AutoBounds(s, tuple(searches), dict(rest, epsilon=eps_left, rho=rho_left), charge), eps_left, rho_left


def _weights(budget_split: Any, names: list[str]) -> list[float]:
    """The budget weights, one per aggregate name (and 'selection'); equal by default."""
    if budget_split is None:
        return [1.0] * len(names)
    given = _mapping_for(budget_split, names, "budget_split", "aggregate name ('<column>_<aggregate>', 'selection') to weight")
    return [check_positive_scalar(given[n], f"budget_split[{n!r}]") for n in names]


def public_groups(public: Any, by: list[str], data_uniques: list[np.ndarray]) -> list[np.ndarray]:
    """The public groups as one numpy array per ``by`` column (the data's dtypes), duplicates refused."""
    if hasattr(public, "column_names") or hasattr(public, "columns"):
        cols = [np.asarray(public.column(c).to_numpy(zero_copy_only=False)) if hasattr(public, "column_names")
                else np.asarray(public[c]) for c in by]
    else:
        if isinstance(public, (str, bytes)) or not isinstance(public, Sequence) and not hasattr(public, "__iter__"):
            raise TypeError("public_partitions must be a sequence of group values (tuples when by has several columns)")
        items = list(public)
        if len(by) == 1:
            items = [v[0] if isinstance(v, tuple) and len(v) == 1 else v for v in items]
            cols = [np.asarray(items, dtype=object)]
        else:
            if not all(isinstance(v, (tuple, list)) and len(v) == len(by) for v in items):
                raise TypeError(f"public_partitions: each group must be a tuple of {len(by)} values (one per by column)")
            cols = [np.asarray([v[j] for v in items], dtype=object) for j in range(len(by))]
    out = []
    for j, c in enumerate(cols):
        try:
            out.append(c.astype(data_uniques[j].dtype) if data_uniques[j].dtype != object else c)
        except (TypeError, ValueError):
            raise TypeError(f"public_partitions: the values for column {by[j]!r} do not match its type") from None
    keys = list(zip(*[c.tolist() for c in out]))
    if len(set(keys)) != len(keys):
        raise ValueError("public_partitions lists a group more than once")
    return out


@dataclass(frozen=True)
class AggregateSpec:
    """The checked arguments of one :func:`aggregate` call (shared by the local path and the engines)."""

    privacy_unit: str
    by: list[Any]
    requests: list[Any]
    bounds: dict[Any, Any]
    max_partitions: int
    max_contributions: int
    budget: BudgetPlan
    confidence: float | None
    key: bytes  # the release's own key (release_key of the user's key and the release id)
    public: Any  # the raw public_partitions argument, or None
    release: str  # the release id (pydp_core.io.keys.release_id of the description)
    auto: AutoBounds | None = None  # bounds="auto": the searches (the bounds of their columns are not in bounds)
    bins: dict[Any, Any] = field(default_factory=dict)  # column -> histogram edges
    vectors: dict[Any, Any] = field(default_factory=dict)  # column -> (norm, bound, size) of its vector sum
    nulls: dict[str, str] | None = None  # the null policies other than the default (applied to the table)

    @property
    def components(self) -> list[tuple[str, str]]:
        """The (column, grid component) pairs whose exact sums the aggregates need."""
        wanted = {(c, comp) for c, a in self.requests if a in VALUE_AGGREGATES for comp in COMPONENTS[a] if comp != "rows"}
        return sorted(wanted)

    @property
    def quantile_columns(self) -> list[str]:
        """The columns with a quantile aggregate (their partials are grid cell counts)."""
        return sorted({c for c, a in self.requests if is_quantile(a)})

    @property
    def distinct_columns(self) -> list[str]:
        """The columns with ``count_distinct`` (their partials are distinct values per group)."""
        return sorted({c for c, a in self.requests if a == "count_distinct"})

    @property
    def pending(self) -> bool:
        """Whether some bounds are still to be chosen (``bounds="auto"`` before its searches)."""
        return self.auto is not None and self.auto.found is None

    def with_bounds(self, found: dict[Any, Any]) -> AggregateSpec:
        """The spec with the bounds found by the searches (``column -> (low, high, i_low, i_high)``) and the
        release's budget calibrated to them; the release id and key stay those of the request."""
        assert self.auto is not None
        bounds = dict(self.bounds, **{c: (v[0], v[1]) for c, v in found.items()})
        bounds = {c: bounds[c] for c in sorted(bounds)}
        budget = plan_budget(**self.auto.rest, bounds=bounds)
        given = self.auto.charge
        budget = replace(budget, searches=self.auto.searches, epsilon=given.get("epsilon"), rho=given.get("rho"))
        return replace(self, bounds=bounds, budget=budget,
                       auto=replace(self.auto, found=dict(found)))

    def partial_names(self) -> list[str]:
        """The partial-aggregate columns: rows, units, then three limb sums per component."""
        return ["rows", "units"] + [f"{c}\x00{comp}\x00{k}" for c, comp in self.components for k in range(3)]


def aggregate_spec(names: Sequence[str], *, privacy_unit: Any, by: Any, aggregations: Any, bounds: Any, max_partitions: Any,
          max_contributions: Any, epsilon: Any = None, delta: Any = 0.0, rho: Any = None, noise: Any = None,
          key: Any = None, public_partitions: Any = None, budget_split: Any = None,
          confidence: Any = 0.95, partition_selection: Any = "threshold", kind: str = "aggregate",
          bounds_share: Any = None, null_rules: dict[str, str] | None = None) -> AggregateSpec:
    """Check every argument of :func:`aggregate` against the column ``names`` (errors name the argument);
    ``kind`` names the release in its description (another release kind never shares a release id);
    ``null_rules`` are the null policies other than the default, already applied to the table
    (:func:`~pydp_core.io.nulls.describe_nulls`)."""
    frame = _Names(names)
    pu = _column_name(privacy_unit, "privacy_unit", frame)
    by_list = [by] if isinstance(by, str) else list(by) if isinstance(by, Sequence) else None
    if not by_list:
        raise TypeError("by must be a column name or a non-empty sequence of column names")
    by_list = [_column_name(c, "by", frame) for c in by_list]
    if len(set(by_list)) != len(by_list) or pu in by_list:
        raise ValueError("by must name distinct columns other than privacy_unit")
    bins: dict[Any, Any] = {}
    vectors: dict[Any, Any] = {}
    requests = _requests(aggregations, pu, frame, bins, vectors)
    col_bounds, auto_cols = _bounds(bounds, requests)
    kp = check_int(max_partitions, "max_partitions", 1, 1 << 30)
    kc = check_int(max_contributions, "max_contributions", 1, 1 << 30)
    level = None if confidence is None else check_confidence(confidence, "confidence")
    method = check_choice(partition_selection, "partition_selection", SELECTION_METHODS)
    key = generate_key() if key is None else check_key(key)
    agg_names = [output_name(c, a, pu) for c, a in requests] + ([] if public_partitions is not None else ["selection"])
    if len(set(agg_names)) != len(agg_names):
        raise ValueError("aggregations ask for the same aggregate twice")
    weights = _weights(budget_split, agg_names)
    rest = dict(delta=delta, noise=noise, weights=weights, selection=public_partitions is None, requests=requests,
                max_partitions=kp, max_contributions=kc, method=method, vectors=vectors)
    auto, epsilon, rho = _auto_bounds(auto_cols, bounds_share, epsilon=epsilon, rho=rho, delta=delta, kp=kp, kc=kc,
                                      rest=rest)
    # The auto columns are calibrated on placeholder bounds here (the checks of the arguments), and again on
    # the bounds found (AggregateSpec.with_bounds).
    budget = plan_budget(epsilon=epsilon, rho=rho, bounds=dict(col_bounds, **{c: (0.0, 1.0) for c in auto_cols}),
                         **rest)
    if auto is not None:
        budget = replace(budget, searches=auto.searches, epsilon=auto.charge.get("epsilon"), rho=auto.charge.get("rho"))
    description = {
        "kind": kind, "privacy_unit": pu, "by": by_list, "aggregations": [list(r) for r in requests],
        "bounds": {c: list(b) for c, b in col_bounds.items()}, "max_partitions": kp, "max_contributions": kc,
        "budget": budget.total(), "plans": [p.describe() for p in budget.plans],
        "selection": None if budget.selection is None else budget.selection.describe(),
        "public_partitions": public_partitions is not None,
    }
    if bins:
        description["bins"] = {c: list(e) for c, e in bins.items()}
    if vectors:
        description["vectors"] = {c: list(v) for c, v in vectors.items()}
    if auto is not None:
        description["bounds_auto"] = {"columns": auto_cols, "share": auto.share, "charge": auto.charge}
    if null_rules:
        description["nulls"] = dict(null_rules)
    rid = release_id(description)
    return AggregateSpec(pu, by_list, requests, col_bounds, kp, kc, budget, level, release_key(key, rid),
                         public_partitions, rid, auto, bins, vectors, dict(null_rules) if null_rules else None)


class _Names:
    """The column names of a table (for the argument checks)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

