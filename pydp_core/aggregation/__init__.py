"""Differentially private group-by aggregation with per-person contribution bounding.

:func:`aggregate` computes, per group of ``by``, counts, sums, means, variances and the number of
distinct privacy units, releases them with exact discrete noise and, unless the groups are public,
selects the groups to release by Laplace thresholding (or the optimal partition selection). The
guarantee is (epsilon, delta)-DP for adding or removing all the rows of one privacy unit. The proofs
(sensitivities, selection, budget split) are in ``docs/aggregate.md``.

- :mod:`~pydp_core.aggregation.bounding`: keyed identity hashes and contribution bounding;
- :mod:`~pydp_core.aggregation.aggregations`: sensitivities, noise, estimators, confidence intervals;
- :mod:`~pydp_core.aggregation.selection`: Laplace thresholding and its delta, and the optimal selection.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .._validation import (
    check_aggregate_names,
    check_choice,
    check_confidence,
    check_int,
    check_positive_scalar,
    require_extra,
)
from ..io.frames import release_ledger
from ..io.keyed import check_bounds, prepared_values
from ..io.keys import check_key, generate_key, release_id, release_key
from ..io.ledger import KeyLedger, KeyReuseError, SessionLedger
from ._budget import BudgetPlan, plan_budget
from .aggregations import (
    AGGREGATES,
    COMPONENTS,
    VALUE_AGGREGATES,
    AggregatePlan,
    component_exponent,
    component_limb_sums,
    estimate,
    limbs_on_grid,
)
from .bounding import (
    bound_contributions,
    combine_hashes,
    factorize,
    identity_hashes,
    subkey,
    unique_values,
)
from .selection import (
    SELECTION_METHODS,
    OptimalSelection,
    ThresholdSelection,
    calibrate_optimal_selection,
    calibrate_selection,
    optimal_probability,
    selection_delta,
    selection_probability,
)

__all__ = [
    "aggregate",
    "aggregate_report",
    "AGGREGATES",
    "REPORT_KEY",
    "calibrate_selection",
    "calibrate_optimal_selection",
    "optimal_probability",
    "SELECTION_METHODS",
    "selection_delta",
    "selection_probability",
]

#: What the report and the command line say of contribution bounding.
BOUNDING_BIAS = (
    "contribution bounding drops the rows of a person beyond max_partitions groups and max_contributions rows "
    "per group, and clamps values to the bounds: counts and sums are biased downwards where persons exceed "
    "the limits, and the confidence intervals cover the noise only, not that bias"
)

#: The key of the guarantee report in a result's Parquet/Arrow schema metadata and ``DataFrame.attrs``.
REPORT_KEY = "pydp_core.aggregate"


# -- the table front end -----------------------------------------------------------------------------------
def _FLOAT_TYPES() -> tuple:
    import pyarrow as pa

    return (pa.float16(), pa.float32(), pa.float64())


class _Frame:
    """Column access for a pyarrow Table or a pandas DataFrame."""

    def __init__(self, table: Any) -> None:
        mod = type(table).__module__
        if mod.startswith("pyarrow") and hasattr(table, "schema") and hasattr(table, "column"):
            self.kind = "arrow"
            self.names = list(table.column_names)
        elif mod.startswith("pandas") and hasattr(table, "columns") and hasattr(table, "iloc"):
            self.kind = "pandas"
            self.names = [c for c in table.columns]
        else:
            raise TypeError(
                f"table must be a pyarrow Table, a pandas DataFrame or a polars DataFrame, not {type(table).__name__}"
            )
        self.table = table
        self.num_rows = int(table.num_rows if self.kind == "arrow" else len(table))

    def column(self, name: str) -> Any:
        return self.table.column(name) if self.kind == "arrow" else self.table[name]

    def check_complete(self, name: str) -> None:
        """A counted column must have no missing values (null or NaN)."""
        col = self.column(name)
        if self.kind == "arrow":
            import pyarrow.compute as pc

            missing = col.null_count > 0 or (col.type in _FLOAT_TYPES() and pc.any(pc.is_nan(col)).as_py())
        else:
            missing = bool(col.isna().any())
        if missing:
            raise ValueError(f"aggregations: column {name!r} has missing values (null or NaN); drop or impute them first")

    def raw_values(self, name: str) -> np.ndarray:
        """A value column as float64, not clamped (no copy for float64 data); nulls and non-numeric columns
        raise. The bounding kernel refuses NaN and clamps for its content hash; the kept rows are clamped after."""
        col = self.column(name)
        if self.kind == "arrow":
            import pyarrow as pa

            numeric = pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
        else:
            numeric = col.dtype.kind in "iuf" or str(col.dtype) in ("Int64", "Int32", "Float64", "Float32")
        if not numeric:
            raise TypeError(f"aggregations: column {name!r} must be numeric (got {getattr(col, 'type', None) or col.dtype})")
        if (col.null_count if self.kind == "arrow" else col.isna().any()):
            raise ValueError(f"aggregations: column {name!r} has missing values (null or NaN); drop or impute them first")
        if self.kind == "arrow":
            arr = col.to_numpy()
        else:
            arr = col.to_numpy(dtype=None if col.dtype.kind in "iuf" else np.float64)
        if arr.dtype.kind != "f":
            return prepared_values(arr, None, name)  # integers: exact conversion checked
        return arr.astype(np.float64, copy=False)  # NaN: refused by the bounding kernel (see partial_aggregates)


def _build(kind: str, columns: dict, group_types: dict, report: dict) -> Any:
    """The result table of ``kind`` ("arrow" or "pandas") with the report attached."""
    text = json.dumps(report, sort_keys=True)
    if kind == "arrow":
        import pyarrow as pa

        arrays = {c: (pa.array(v, type=group_types[c]) if c in group_types else pa.array(v)) for c, v in columns.items()}
        return pa.table(arrays).replace_schema_metadata({REPORT_KEY: text})
    import pandas as pd

    data = {c: (pd.Series(v, dtype=group_types[c]) if c in group_types else v) for c, v in columns.items()}
    out = pd.DataFrame(data)
    out.attrs[REPORT_KEY] = json.loads(text)
    return out


def aggregate_report(table: Any) -> dict:
    """The guarantee report :func:`aggregate` attached to its result (schema metadata or ``attrs``).

    Parameters
    ----------
    table : pyarrow.Table, pandas.DataFrame or polars.DataFrame
        A result of :func:`aggregate` (polars: the object :func:`aggregate` returned, whose ``attrs``
        holds the report; polars operations do not carry it over).

    Returns
    -------
    dict
        The report: total budget, partition selection, and per aggregate its epsilon, sensitivities,
        noise parameters (``t``, ``scale``, ``std``, ``grid``) and confidence level.

    Raises
    ------
    ValueError
        If the table carries no report.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": [1, 2, 3], "city": ["a", "a", "b"]})
    >>> out = aggregate(df, privacy_unit="pid", by="city", aggregations={"pid": ["privacy_id_count"]},
    ...                 bounds=None, max_partitions=1, max_contributions=1, epsilon=1.0, public_partitions=["a"])
    >>> aggregate_report(out)["budget"]["epsilon"]
    1.0
    """
    meta = getattr(getattr(table, "schema", None), "metadata", None)  # pyarrow (polars schemas have none)
    if meta and REPORT_KEY.encode() in meta:
        return json.loads(meta[REPORT_KEY.encode()])
    attrs = getattr(table, "attrs", None)
    if isinstance(attrs, dict) and REPORT_KEY in attrs:
        return dict(attrs[REPORT_KEY])
    raise ValueError("table carries no pydp_core.aggregate report")


# -- arguments ----------------------------------------------------------------------------------------------
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
        for agg in check_aggregate_names(aggs, f"aggregations[{col!r}]", AGGREGATES):
            if agg == "privacy_id_count" and col != privacy_unit:
                raise ValueError(
                    f"aggregations[{col!r}]: privacy_id_count counts privacy units; ask for it on the privacy_unit "
                    f"column {privacy_unit!r}"
                )
            out.append((col, agg))
    return out


def output_name(column: str, aggregate: str, privacy_unit: str) -> str:
    """The output column of an aggregate: ``count`` (rows) and ``privacy_id_count`` (persons) when asked of
    the privacy unit's column (PipelineDP's names), ``<column>_<aggregate>`` otherwise."""
    if column == privacy_unit and aggregate in ("count", "privacy_id_count"):
        return aggregate
    return f"{column}_{aggregate}"


def _mapping_for(given: Any, needed: list[str], name: str, what: str) -> Mapping:
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
    """One (low, high) per column with a sum, mean or variance."""
    needed = sorted({c for c, a in requests if a in VALUE_AGGREGATES})
    what = "column to (low, high) (the columns with sum, mean or variance)"
    given = _mapping_for({} if bounds is None else bounds, needed, "bounds", what)
    return {c: check_bounds(given[c], f"bounds[{c!r}]") for c in needed}  # type: ignore[misc]


def _weights(budget_split: Any, names: list[str]) -> list[float]:
    """The budget weights, one per aggregate name (and 'selection'); equal by default."""
    if budget_split is None:
        return [1.0] * len(names)
    given = _mapping_for(budget_split, names, "budget_split", "aggregate name ('<column>_<aggregate>', 'selection') to weight")
    return [check_positive_scalar(given[n], f"budget_split[{n!r}]") for n in names]


def _public_groups(public: Any, by: list[str], data_uniques: list[np.ndarray]) -> list[np.ndarray]:
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


# -- the aggregation ----------------------------------------------------------------------------------------
def aggregate(
    table: Any,
    *,
    privacy_unit: str,
    by: str | Sequence[str],
    aggregations: Mapping[str, Sequence[str] | str],
    bounds: Mapping[str, tuple[float, float]] | None,
    max_partitions: int,
    max_contributions: int,
    epsilon: float | None = None,
    delta: float = 0.0,
    rho: float | None = None,
    noise: str | None = None,
    key: bytes | None = None,
    public_partitions: Any = None,
    budget_split: Mapping[str, float] | None = None,
    confidence: float | None = 0.95,
    partition_selection: str = "threshold",
    ledger: Any = None,
    accountant: Any = None,
) -> Any:
    """Differentially private group-by aggregation of a table whose rows belong to privacy units.

    Each privacy unit (person) keeps at most ``max_partitions`` groups and, in each, at most
    ``max_contributions`` rows, chosen uniformly at random by keyed hashes; values are clamped to
    ``bounds``. Every aggregate is released with exact discrete Laplace or discrete Gaussian noise
    (Canonne, Kamath and Steinke 2020) calibrated to its sensitivity under these limits (``docs/aggregate.md``); groups
    are released by Laplace thresholding on their number of units (Korolova et al. 2009; Wilson et al.
    2020) or by the optimal partition selection (Desfontaines et al. 2022), or all of ``public_partitions``
    (empty ones too) when the groups are public. The result is (epsilon, delta)-DP, or rho-zCDP
    (delta-approximate with selection), for adding or removing all the rows of one privacy unit.

    The total budget is ``epsilon`` (with ``delta``) or ``rho``, never both. Pure DP (``delta = 0``):
    discrete Laplace. zCDP (``rho``): discrete Gaussian; partition selection then needs ``delta`` and is
    ``delta``-approximately ``rho_s``-zCDP (thresholding at ``epsilon_s = sqrt(2 rho_s)``, or the optimal
    selection at ``(e, delta / Kp)`` per group with ``Kp e^2 / 2 <= rho_s``). Approximate DP
    (``delta > 0``): ``noise="laplace"`` spends delta on selection only; ``noise="gaussian"`` gives
    selection its weight's share of epsilon and delta, and the Gaussian aggregates the largest zCDP budget
    whose (epsilon, delta) conversion fits the rest; the default picks the family whose noise standard
    deviations have the smaller geometric mean.

    Parameters
    ----------
    table : pyarrow.Table, pandas.DataFrame or polars.DataFrame
        One row per record; nulls are refused in the columns used. A polars DataFrame goes through
        pyarrow (``to_arrow``/``from_arrow``, zero-copy where the types allow; extra ``polars``) and gives
        the same groups and values as the pyarrow Table for the same key.
    privacy_unit : str
        The column identifying the person (privacy unit).
    by : str or sequence of str
        The group-by columns.
    aggregations : mapping
        Column -> list of ``"count"`` (rows), ``"sum"``, ``"mean"``, ``"variance"``; the
        ``privacy_unit`` column may map to ``"privacy_id_count"`` (distinct units per group). Output columns
        are named ``<column>_<aggregate>``, except the row count and the unit count asked of the
        ``privacy_unit`` column: ``count`` and ``privacy_id_count``. Contribution bounding drops rows, so
        counts and sums are biased downwards when persons exceed the limits; the interval columns cover the
        noise only, not that bias.
    bounds : mapping or None
        Column -> ``(low, high)`` with low < high, for every column with a sum, mean or variance.
    max_partitions : int
        The most groups one unit contributes to (>= 1).
    max_contributions : int
        The most rows one unit contributes to one group (>= 1).
    epsilon : float, optional
        The total epsilon (> 0), split over the aggregates and the selection (``budget_split``); required
        unless ``rho`` is given.
    delta : float, optional
        The total delta (default 0): partition selection needs delta > 0 unless ``public_partitions``;
        Gaussian noise under approximate DP needs it too.
    rho : float, optional
        The total zCDP budget (> 0) instead of ``epsilon``: discrete Gaussian noise for every aggregate.
    noise : {"laplace", "gaussian"}, optional
        The noise of the aggregates (see above); default: Laplace for pure DP, Gaussian for zCDP, the
        smaller noise for approximate DP.
    key : bytes, optional
        A 32-byte release key (:func:`pydp_core.io.generate_key`). The randomness is derived from the key and
        the release's description (every argument that changes the output law), so the output is a function
        of (key, description, data) only: row order and partitioning do not matter, and the same call
        reproduces it. The use is recorded in the key's ledger before any noise is drawn: another
        aggregation under the key (other parameters, or other data) is refused with
        :class:`~pydp_core.io.KeyReuseError`; use a new key, or a :class:`pydp_core.Session`. Default: a
        fresh key, used once.
    public_partitions : sequence, DataFrame or Table, optional
        The groups to release (values, or tuples when ``by`` has several columns): no selection, every
        listed group is in the output, rows of other groups are dropped.
    budget_split : mapping, optional
        Weight per aggregate (``"<column>_<aggregate>"``) and ``"selection"``; default equal weights.
    confidence : float or None, optional
        The level of the ``<name>_ci_low`` / ``<name>_ci_high`` columns (default 0.95); None: no intervals.
    partition_selection : {"threshold", "optimal"}, optional
        How groups are selected without ``public_partitions``: Laplace thresholding (default), or the
        optimal mechanism of Desfontaines et al. (2022), which releases each group with the largest
        probability ``pi(n)`` that (epsilon_s / Kp, delta_s / Kp)-DP allows for its ``n`` units
        (:func:`~pydp_core.aggregation.selection.optimal_probability`); with ``rho``, each group gets
        ``delta_s / Kp`` and the largest ``e`` with ``Kp e^2 / 2 <= rho_s``.

    ledger : None, path or KeyLedger, optional
        The use record of ``key`` (:mod:`pydp_core.io.ledger`): None this process's record; a path (the
        command line uses ``<key file>.ledger``) or a :class:`~pydp_core.io.KeyLedger`, each consulted
        together with this process's record. There is no switch that skips the record.
    accountant : Accountant, optional
        Charged with the release's composed guarantee (the report's ``budget``) before any noise is drawn;
        an exact repeat is not charged again.

    Returns
    -------
    pyarrow.Table, pandas.DataFrame or polars.DataFrame
        The same kind as ``table``: the ``by`` columns, then per aggregate ``<column>_<aggregate>`` and its
        interval columns. Counts are integers. The guarantee (mechanisms, per-aggregate epsilon, noise
        scale and std, total budget, library version; never the key) is attached as schema metadata /
        ``attrs`` (pandas and polars) under :data:`REPORT_KEY` (read it with :func:`aggregate_report`). Groups are sorted by
        their values (public partitions: in the given order).

    Raises
    ------
    TypeError
        For a table of another kind, non-numeric value columns, or arguments of the wrong type.
    ValueError
        For missing columns, nulls or NaN, bounds with low >= high, limits below 1, epsilon <= 0, rho <= 0,
        both or neither of epsilon and rho, delta = 0 without public partitions or with Gaussian noise under
        epsilon, an unknown ``noise`` or ``partition_selection``, a selection share too small, or a
        ``budget_split`` that does not cover the aggregates.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": [1, 1, 2, 3], "city": ["a", "b", "a", "a"], "x": [1.0, 2.0, 3.0, 4.0]})
    >>> out = aggregate(df, privacy_unit="pid", by="city", aggregations={"x": ["count", "sum"]},
    ...                 bounds={"x": (0, 5)}, max_partitions=1, max_contributions=1, epsilon=1.0,
    ...                 public_partitions=["a", "b"])
    >>> list(out.columns)[:3]
    ['city', 'x_count', 'x_count_ci_low']
    """
    polars = _is_polars(table)
    if polars:  # through pyarrow: zero-copy for numeric columns without nulls
        require_extra("polars", "polars", "pyarrow")
        table = table.to_arrow()
        if _is_polars(public_partitions):
            public_partitions = public_partitions.to_arrow()
    frame = _Frame(table)
    use = key_use(key, ledger, accountant)
    spec = _spec(frame.names, privacy_unit=privacy_unit, by=by, aggregations=aggregations, bounds=bounds,
                 max_partitions=max_partitions, max_contributions=max_contributions, epsilon=epsilon, delta=delta,
                 rho=rho, noise=noise, key=key, public_partitions=public_partitions, budget_split=budget_split,
                 confidence=confidence, partition_selection=partition_selection)
    group_cols, partials = partial_aggregates(frame, spec)
    out = release_partials(spec, frame, group_cols, partials, use)
    return _to_polars(out) if polars else out


def _is_polars(obj: Any) -> bool:
    return type(obj).__module__.startswith("polars") and hasattr(obj, "to_arrow") and hasattr(obj, "columns")


def _to_polars(result: Any) -> Any:
    """A pyarrow result as a polars DataFrame (zero-copy where the types allow), the report in ``attrs``."""
    import polars as pl

    out = pl.from_arrow(result)
    setattr(out, "attrs", {REPORT_KEY: aggregate_report(result)})  # polars frames carry no schema metadata
    return out


@dataclass(frozen=True)
class KeyUse:
    """Where a keyed aggregation is recorded and charged: the key's ledger (None: a fresh key, used once)
    and the accountant (None: none). Kept out of :class:`AggregateSpec`, which the engines send to workers."""

    ledger: KeyLedger | SessionLedger | None
    accountant: Any


def key_use(key: Any, ledger: Any, accountant: Any) -> KeyUse:
    """The :class:`KeyUse` of an :func:`aggregate` call's ``key``, ``ledger`` and ``accountant`` arguments."""
    if accountant is not None and not callable(getattr(accountant, "spend", None)):
        raise TypeError(f"accountant must be a pydp_core.Accountant, not {type(accountant).__name__}")
    if key is None and ledger not in (None, False):
        raise ValueError("ledger applies to a given key (key=): a fresh key is used once and needs no record")
    led = release_ledger(key, ledger)
    return KeyUse(led if isinstance(led, (KeyLedger, SessionLedger)) else None, accountant)


@dataclass(frozen=True)
class AggregateSpec:
    """The checked arguments of one :func:`aggregate` call (shared by the local path and the engines)."""

    privacy_unit: str
    by: list
    requests: list
    bounds: dict
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

    def partial_names(self) -> list[str]:
        """The partial-aggregate columns: rows, units, then three limb sums per component."""
        return ["rows", "units"] + [f"{c}\x00{comp}\x00{k}" for c, comp in self.components for k in range(3)]


def _spec(names: Sequence[str], *, privacy_unit: Any, by: Any, aggregations: Any, bounds: Any, max_partitions: Any,
          max_contributions: Any, epsilon: Any = None, delta: Any = 0.0, rho: Any = None, noise: Any = None,
          key: Any = None, public_partitions: Any = None, budget_split: Any = None,
          confidence: Any = 0.95, partition_selection: Any = "threshold") -> AggregateSpec:
    """Check every argument of :func:`aggregate` against the column ``names`` (errors name the argument)."""
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
        "kind": "aggregate", "privacy_unit": pu, "by": by_list, "aggregations": [list(r) for r in requests],
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


def partial_aggregates(frame: Any, spec: AggregateSpec) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """Bounding and exact partial sums of one table (or one engine partition holding whole persons).

    Returns the group values (one array per ``by`` column; the groups with rows, within the public
    partitions if given) and int64 partials per group (:meth:`AggregateSpec.partial_names`). Partials of
    partitions that split the persons disjointly add up to the partials of the whole table exactly.
    """
    frame = frame if isinstance(frame, _Frame) else _Frame(frame)
    key, pu, by_list = spec.key, spec.privacy_unit, spec.by
    p_codes, p_uniques = factorize(frame.column(pu), pu)
    p_hash = identity_hashes(unique_values(p_uniques), subkey(key, "person"))
    dense = spec.public is None and len(by_list) == 1  # range codes: groups without rows are dropped below
    g_codes, g_uniques = zip(*(factorize(frame.column(c), c, dense=dense) for c in by_list))
    g_values = [unique_values(u) for u in g_uniques]
    gid, group_cols = _combine_groups(list(g_codes), g_values)
    if spec.public is not None:
        public = _public_groups(spec.public, by_list, g_values)
        lookup = {k: i for i, k in enumerate(zip(*[c.tolist() for c in public]))}
        remap = np.array([lookup.get(k, -1) for k in zip(*[c.tolist() for c in group_cols])], dtype=np.int64)
        gid = remap[gid] if remap.size else gid
        group_cols = public
    n_groups = group_cols[0].shape[0]
    g_hash = group_hashes(group_cols, key)
    raw = {c: frame.raw_values(c) for c in spec.bounds}
    for c in {c for c, _ in spec.requests} - set(raw) - {pu}:
        frame.check_complete(c)
    kept = bound_contributions(p_codes, p_hash, gid, g_hash, list(raw.values()), max_partitions=spec.max_partitions,
                               max_contributions=spec.max_contributions, key=subkey(key, "bounding"),
                               bounds=list(spec.bounds.values()), names=list(raw))
    row_groups = gid[kept.rows]
    partials = {"rows": np.bincount(row_groups, minlength=n_groups).astype(np.int64), "units": kept.units}
    for c in raw:
        comps = [comp for col, comp in spec.components if col == c]
        if comps:
            limbs = component_limb_sums(comps, row_groups, raw[c], kept.rows, spec.bounds[c], n_groups)
            for j, comp in enumerate(comps):
                for k in range(3):
                    partials[f"{c}\x00{comp}\x00{k}"] = limbs[3 * j + k]
    present = np.flatnonzero(kept.seen if kept.seen is not None else
                             np.bincount(gid[gid >= 0], minlength=n_groups))
    return [c[present] for c in group_cols], {k: v[present] for k, v in partials.items()}


def group_hashes(group_cols: Sequence[np.ndarray], key: bytes) -> np.ndarray:
    """The keyed 64-bit identity hash of each group (a function of the group's values only)."""
    return combine_hashes(
        [identity_hashes(c, subkey(key, f"group\x00{j}")) for j, c in enumerate(group_cols)], subkey(key, "groups")
    )


def release_partials(spec: AggregateSpec, frame: Any, group_cols: list[np.ndarray], partials: dict,
                     use: KeyUse | None = None) -> Any:
    """Selection (or the public partitions), keyed noise and estimates from combined partial aggregates.

    ``frame`` gives the output kind and the group columns' types (a :class:`_Frame`, or the pair
    (kind, types) of an engine); the result is the table :func:`aggregate` returns. Before any noise is
    drawn the release is recorded in the key's ledger (``use``; an exact repeat, same release and same
    partials, is accepted and gives the same output) and charged to the accountant.
    """
    key, by_list = spec.key, spec.by
    if spec.public is not None:
        public = _public_groups(spec.public, by_list, [np.asarray(c) for c in group_cols])
        lookup = {k: i for i, k in enumerate(zip(*[c.tolist() for c in group_cols]))}
        where = np.array([lookup.get(k, -1) for k in zip(*[c.tolist() for c in public])], dtype=np.int64)
        partials = {k: np.where(where >= 0, v[np.maximum(where, 0)] if v.size else 0, 0) for k, v in partials.items()}
        group_cols = public
    _record(spec, use, group_cols, partials)
    stream_ids = group_hashes(group_cols, key) >> np.uint64(1)
    selection = spec.budget.selection
    if selection is not None:
        idx = np.flatnonzero(selection.select(partials["units"], stream_ids, subkey(key, "selection")))
        group_cols = [c[idx] for c in group_cols]
        stream_ids = stream_ids[idx]
        partials = {k: v[idx] for k, v in partials.items()}
    if np.unique(stream_ids).size != stream_ids.size:
        raise RuntimeError("two groups have the same 64-bit keyed hash; run again with another key")
    alpha = None if spec.confidence is None else 1.0 - spec.confidence
    columns: dict = {c: v for c, v in zip(by_list, group_cols)}
    report_aggs: dict = {}
    for (col, agg), plan in zip(spec.requests, spec.budget.plans):
        noisy = {
            comp: noise.draw(_exact_input(partials, col, comp, noise, spec.bounds.get(col)), stream_ids,
                             subkey(key, f"noise\x00{col}\x00{agg}\x00{comp}"))
            for comp, noise in plan.components.items()
        }
        name = output_name(col, agg, spec.privacy_unit)
        est, lo, hi = estimate(plan, noisy, 0.05 if alpha is None else alpha)
        columns[name] = est
        if alpha is not None:
            columns[f"{name}_ci_low"], columns[f"{name}_ci_high"] = lo, hi
        report_aggs[name] = _describe(plan, alpha)
    report = _report(spec, selection, report_aggs)
    kind, types = (frame.kind, {c: _group_type(frame, c) for c in by_list}) if isinstance(frame, _Frame) else frame
    out = _build(kind, columns, types, report)
    if spec.public is None and len(group_cols[0]):
        out = out.sort_by([(c, "ascending") for c in by_list]) if kind == "arrow" else \
            out.sort_values(by_list, kind="stable").reset_index(drop=True)
        if kind == "pandas":
            out.attrs[REPORT_KEY] = report
    return out


def _record(spec: AggregateSpec, use: KeyUse | None, group_cols: list[np.ndarray], partials: dict) -> None:
    """Record the release in the key's ledger (the partials determine the output for the release's key) and
    charge the accountant, once, before any noise is drawn."""
    if use is None:
        return
    total = spec.budget.total()

    def charge() -> None:
        if use.accountant is not None:
            charge_budget(use.accountant, total)

    if use.ledger is None:
        charge()
        return
    digest = partials_digest(group_cols, partials)
    try:  # an exact repeat (same release, same partials: the same output) is accepted and not charged again
        use.ledger.claim("aggregate", 0, 1, digest, on_first=charge, release=spec.release, spent=total)
    except KeyReuseError as err:
        if "another release" in str(err):
            raise
        raise KeyReuseError(
            "this aggregation was already released under this key on other data: the two outputs would share "
            "their noise, and their difference would reveal the change. Use a new key for a new release, or a "
            "pydp_core.Session (whose releases get independent noise and are charged to its budget)"
        ) from None


def charge_budget(accountant: Any, total: Mapping[str, Any]) -> None:
    """Charge ``accountant`` with a release's composed guarantee (the report's ``budget``).

    (epsilon, delta)-DP is one spend; rho-zCDP one; delta-approximate rho-zCDP (selection under ``rho``) is
    charged as rho-zCDP and (0, delta)-DP, whose composition it is bounded by (Bun and Steinke 2016).
    """
    from ..accounting import ZCDP, ApproxDP, PureDP

    if "rho" in total:
        accountant.spend(ZCDP(total["rho"]))
        if total["delta"] > 0:
            accountant.spend(ApproxDP(0.0, total["delta"]))
    elif total["delta"] > 0:
        accountant.spend(ApproxDP(total["epsilon"], total["delta"]))
    else:
        accountant.spend(PureDP(total["epsilon"]))


def partials_digest(group_cols: Sequence[np.ndarray], partials: Mapping[str, np.ndarray]) -> str:
    """SHA-256 (hex) of the groups and their exact partial aggregates: what the output depends on."""
    import hashlib

    h = hashlib.sha256(b"pydp_core.aggregate/partials\x00")
    # By value and in the order of the groups' values: an engine may hand back the groups in another order,
    # int32 for int64, or dictionary-encoded strings.
    labels = ["\x00".join(map(repr, g)) for g in zip(*[np.asarray(c).tolist() for c in group_cols])]
    order = np.array(sorted(range(len(labels)), key=labels.__getitem__), dtype=np.int64)
    h.update(len(labels).to_bytes(8, "little") + "\x01".join(labels[i] for i in order).encode("utf-8"))
    for name in sorted(partials):
        h.update(name.encode("utf-8") + b"\x00")
        h.update(np.ascontiguousarray(np.asarray(partials[name], dtype=np.int64)[order]).tobytes())
    return h.hexdigest()


def _exact_input(partials: dict, col: str, comp: str, noise: Any, bounds: Any) -> np.ndarray:
    """The true value of a component per group: integer counts, or the exact sum rounded to the grid."""
    if comp in ("rows", "units"):
        return partials[comp]
    return limbs_on_grid([partials[f"{col}\x00{comp}\x00{k}"] for k in range(3)], partials["rows"],
                         component_exponent(comp, bounds), noise.grid_exponent)


def _combine_groups(codes: list[np.ndarray], uniques: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One group code per row for several ``by`` columns, and the group values per column."""
    if len(codes) == 1:
        return codes[0], [uniques[0]]
    combined = np.zeros(codes[0].shape[0], dtype=np.int64)
    width = 1
    for c, u in zip(codes, uniques):
        width *= max(1, u.shape[0])
        if width >= 1 << 62:
            raise ValueError("by: too many combinations of group values for one 64-bit code")
        combined = combined * max(1, u.shape[0]) + c
    uniq, gid = np.unique(combined, return_inverse=True)
    cols = []
    for c, u in reversed(list(zip(codes, uniques))):
        size = max(1, u.shape[0])
        cols.append(u[uniq % size])
        uniq = uniq // size
    return gid.astype(np.int64), cols[::-1]


def _group_type(frame: _Frame, name: str) -> Any:
    col = frame.column(name)
    return col.type if frame.kind == "arrow" else col.dtype


def _describe(plan: AggregatePlan, alpha: float | None) -> dict:
    out = plan.describe()
    if alpha is not None:
        # Each component's interval has level 1 - alpha / k (union bound over the k components).
        k = len(plan.components)
        for comp, noise in plan.components.items():
            out["components"][comp]["ci_half_width"] = noise.half_width(alpha / k)
    return out


def _report(spec: AggregateSpec, selection: ThresholdSelection | OptimalSelection | None, aggs: dict) -> dict:
    from .._version import __version__

    return {
        "mechanism": "pydp_core.aggregate",
        "library_version": __version__,
        "neighbouring": "add or remove all rows of one privacy unit",
        "privacy_unit": spec.privacy_unit,
        "by": spec.by,
        "max_partitions": spec.max_partitions,
        "max_contributions": spec.max_contributions,
        "bounds": {c: list(b) for c, b in spec.bounds.items()},
        "budget": spec.budget.total(),
        "partition_selection": {"method": "public_partitions", "epsilon": 0.0, "delta": 0.0}
        if selection is None else selection.describe(),
        "aggregates": aggs,
        "confidence": spec.confidence,
        "bounding_bias": BOUNDING_BIAS,
    }
