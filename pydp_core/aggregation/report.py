"""The guarantee report of an aggregation: what it holds, and how it rides on the result table (Parquet/Arrow
schema metadata, ``DataFrame.attrs``)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .aggregations import AggregatePlan
from .selection import OptimalSelection, ThresholdSelection

if TYPE_CHECKING:
    from .spec import AggregateSpec


#: What the report and the command line say of contribution bounding.
BOUNDING_BIAS = (
    "contribution bounding drops the rows of a person beyond max_partitions groups and max_contributions rows "
    "per group, and clamps values to the bounds: counts and sums are biased downwards where persons exceed "
    "the limits, and the confidence intervals cover the noise only, not that bias"
)


#: The key of the guarantee report in a result's Parquet/Arrow schema metadata and ``DataFrame.attrs``.
REPORT_KEY = "pydp_core.aggregation"


def build_result(kind: str, columns: dict[Any, Any], group_types: dict[Any, Any], report: dict[Any, Any]) -> Any:
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


def aggregate_report(table: Any) -> dict[Any, Any]:
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
    >>> from pydp_core.aggregation import aggregate
    >>> df = pd.DataFrame({"pid": [1, 2, 3], "city": ["a", "a", "b"]})
    >>> out = aggregate(df, privacy_unit="pid", by="city", aggregations={"pid": ["privacy_id_count"]},
    ...                 bounds=None, max_partitions=1, max_contributions=1, epsilon=1.0, public_partitions=["a"])
    >>> aggregate_report(out)["budget"]["epsilon"]
    1.0
    """
    attrs = getattr(table, "attrs", None)  # pandas, polars, and the Spark and Dask front ends' results
    if isinstance(attrs, dict) and REPORT_KEY in attrs:
        return dict(attrs[REPORT_KEY])
    meta = getattr(getattr(table, "schema", None), "metadata", None)  # pyarrow
    if meta and REPORT_KEY.encode() in meta:
        value: dict[Any, Any] = json.loads(meta[REPORT_KEY.encode()])
        return value
    raise ValueError("table carries no pydp_core.aggregation report")


def to_polars(result: Any) -> Any:
    """A pyarrow result as a polars DataFrame (zero-copy where the types allow), the report in ``attrs``."""
    import polars as pl

    out = pl.from_arrow(result)
    setattr(out, "attrs", {REPORT_KEY: aggregate_report(result)})  # noqa: B010 (polars frames carry no schema metadata)
    return out


def describe_plan(plan: AggregatePlan, alpha: float | None) -> dict[Any, Any]:
    out = plan.describe()
    if alpha is not None:
        # Each component's interval has level 1 - alpha / k (union bound over the k components).
        k = len(plan.components)
        for comp, noise in plan.components.items():
            out["components"][comp]["ci_half_width"] = noise.half_width(alpha / k)
    return out


def release_report(spec: AggregateSpec, selection: ThresholdSelection | OptimalSelection | None,
                   aggs: dict[Any, Any]) -> dict[Any, Any]:
    from .._version import __version__

    out = {
        "mechanism": "pydp_core.aggregation",
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
    if spec.auto is not None:
        out["bounds_search"] = spec.auto.describe()
    if spec.nulls:
        out["nulls"] = dict(spec.nulls)
    return out

