"""The aggregation request: every argument of :func:`~pydp_core.aggregation.aggregate` checked against the
table's columns, and the budget plan and release key derived from them (:class:`AggregateSpec`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .._validation import check_aggregate_names, check_choice, check_confidence, check_int, check_positive_scalar
from ..io.keyed import check_bounds
from ..io.keys import check_key, generate_key, release_id, release_key
from ._budget import BudgetPlan, plan_budget
from .aggregations import AGGREGATES, COMPONENTS, VALUE_AGGREGATES
from .quantiles import QUANTILE_NAMES, is_quantile, quantile_requests
from .selection import SELECTION_METHODS


def _column_name(value: Any, name: str, frame: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a column name (str), not {type(value).__name__}")
    if value not in frame.names:
        raise ValueError(f"{name}: column {value!r} is not in the table (columns: {', '.join(map(str, frame.names))})")
    return value


def _requests(aggregations: Any, privacy_unit: str, frame: Any) -> list[tuple[str, str]]:
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
        quantiles = [q for a in items if not isinstance(a, str) for q in quantile_requests(a, where)]
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


def _bounds(bounds: Any, requests: list[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    """One (low, high) per column with a sum, mean, variance or quantile."""
    needed = sorted({c for c, a in requests if a in VALUE_AGGREGATES or is_quantile(a)})
    what = "column to (low, high) (the columns with sum, mean, variance or a quantile)"
    given = _mapping_for({} if bounds is None else bounds, needed, "bounds", what)
    return {c: check_bounds(given[c], f"bounds[{c!r}]") for c in needed}  # type: ignore[misc]


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

    @property
    def components(self) -> list[tuple[str, str]]:
        """The (column, grid component) pairs whose exact sums the aggregates need."""
        wanted = {(c, comp) for c, a in self.requests if a in VALUE_AGGREGATES for comp in COMPONENTS[a] if comp != "rows"}
        return sorted(wanted)

    @property
    def quantile_columns(self) -> list[str]:
        """The columns with a quantile aggregate (their partials are grid cell counts)."""
        return sorted({c for c, a in self.requests if is_quantile(a)})

    def partial_names(self) -> list[str]:
        """The partial-aggregate columns: rows, units, then three limb sums per component."""
        return ["rows", "units"] + [f"{c}\x00{comp}\x00{k}" for c, comp in self.components for k in range(3)]


def aggregate_spec(names: Sequence[str], *, privacy_unit: Any, by: Any, aggregations: Any, bounds: Any, max_partitions: Any,
          max_contributions: Any, epsilon: Any = None, delta: Any = 0.0, rho: Any = None, noise: Any = None,
          key: Any = None, public_partitions: Any = None, budget_split: Any = None,
          confidence: Any = 0.95, partition_selection: Any = "threshold", kind: str = "aggregate") -> AggregateSpec:
    """Check every argument of :func:`aggregate` against the column ``names`` (errors name the argument);
    ``kind`` names the release in its description (another release kind never shares a release id)."""
    frame = _Names(names)
    pu = _column_name(privacy_unit, "privacy_unit", frame)
    by_list = [by] if isinstance(by, str) else list(by) if isinstance(by, Sequence) else None
    if not by_list:
        raise TypeError("by must be a column name or a non-empty sequence of column names")
    by_list = [_column_name(c, "by", frame) for c in by_list]
    if len(set(by_list)) != len(by_list) or pu in by_list:
        raise ValueError("by must name distinct columns other than privacy_unit")
    requests = _requests(aggregations, pu, frame)
    col_bounds = _bounds(bounds, requests)
    kp = check_int(max_partitions, "max_partitions", 1, 1 << 30)
    kc = check_int(max_contributions, "max_contributions", 1, 1 << 30)
    level = None if confidence is None else check_confidence(confidence, "confidence")
    method = check_choice(partition_selection, "partition_selection", SELECTION_METHODS)
    key = generate_key() if key is None else check_key(key)
    agg_names = [output_name(c, a, pu) for c, a in requests] + ([] if public_partitions is not None else ["selection"])
    if len(set(agg_names)) != len(agg_names):
        raise ValueError("aggregations ask for the same aggregate twice")
    budget = plan_budget(epsilon=epsilon, delta=delta, rho=rho, noise=noise,
                         weights=_weights(budget_split, agg_names), selection=public_partitions is None,
                         requests=requests, max_partitions=kp, max_contributions=kc, bounds=col_bounds,
                         method=method)
    description = {
        "kind": kind, "privacy_unit": pu, "by": by_list, "aggregations": [list(r) for r in requests],
        "bounds": {c: list(b) for c, b in col_bounds.items()}, "max_partitions": kp, "max_contributions": kc,
        "budget": budget.total(), "plans": [p.describe() for p in budget.plans],
        "selection": None if budget.selection is None else budget.selection.describe(),
        "public_partitions": public_partitions is not None,
    }
    rid = release_id(description)
    return AggregateSpec(pu, by_list, requests, col_bounds, kp, kc, budget, level, release_key(key, rid),
                         public_partitions, rid)


class _Names:
    """The column names of a table (for the argument checks)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

