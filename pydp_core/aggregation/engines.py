"""The aggregation on Dask and Spark: the same release as :func:`pydp_core.aggregation.aggregate`, bit for bit.

1. The rows are shuffled by privacy unit, so that every partition holds whole persons.
2. Each partition computes its partial aggregates (:func:`~pydp_core.aggregation.local.partial_aggregates`):
   contribution bounding by keyed hashes of the person's own identifiers and exact integer limb sums.
   They depend on the partition's rows only (never on their order), so a retried task reproduces them.
3. The partials are summed per group by the engine (exact int64 sums) and collected: one row per group.
4. The driver runs selection (or the public partitions), the keyed noise and the estimates
   (:func:`~pydp_core.aggregation.local.release_partials`).

Since bounding is per person, the limb sums are exact and the noise is keyed by group values, the
result does not depend on the partitioning and equals the local result for the same key. The result
is small and local: a pandas DataFrame (Dask) or a pyarrow Table (Spark), with the report attached.
The key is sent to the workers with the task (bounding is keyed); the noise is drawn on the driver.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import require_extra
from .keyuse import key_use
from .local import partial_aggregates, release_partials
from .spec import AggregateSpec, aggregate_spec

__all__ = ["aggregate_dask", "aggregate_spark"]


def _engine_spec(names: list[Any], kwargs: dict[Any, Any]) -> AggregateSpec:
    """The checked spec of an engine call; quantiles are computed by the local engine only."""
    spec = aggregate_spec(names, **kwargs)
    if spec.quantile_columns:
        raise ValueError("aggregations: quantiles (median, quantile, min, max) run on pandas, pyarrow and polars "
                         "tables; collect the columns first on Dask or Spark")
    return spec


def _columns(spec: AggregateSpec) -> list[str]:
    """The input columns one aggregation reads."""
    return list(dict.fromkeys([spec.privacy_unit, *spec.by, *(c for c, _ in spec.requests)]))


def _partial_names(spec: AggregateSpec) -> list[str]:
    """Engine-safe names of the partial columns (the spec's names hold NUL separators)."""
    return [f"__pydp_partial_{i}" for i in range(len(spec.partial_names()))]


def _partial_arrays(table: Any, spec: AggregateSpec) -> tuple[list[np.ndarray], dict[Any, Any]]:
    """The partial aggregates of one partition (a pandas DataFrame or a pyarrow Table of whole persons)."""
    return partial_aggregates(table, spec)


def _partial_frame(pdf: Any, spec: AggregateSpec) -> Any:
    """A pandas partition -> its partial aggregates as a pandas DataFrame (``by`` columns, then partials)."""
    import pandas as pd

    groups, partials = _partial_arrays(pdf.reset_index(drop=True), spec)
    data = {c: pd.Series(v, dtype=pdf[c].dtype) for c, v in zip(spec.by, groups)}
    for out, name in zip(_partial_names(spec), spec.partial_names()):
        data[out] = partials[name]
    return pd.DataFrame(data)


def _combined(table: Any, spec: AggregateSpec) -> tuple[list[np.ndarray], dict[Any, Any]]:
    """(group values, partials) from the engine's per-group sums (a pandas DataFrame or a pyarrow Table)."""
    arrow = hasattr(table, "column_names")

    def column(name: str) -> np.ndarray:
        col = table.column(name) if arrow else table[name]
        return np.asarray(col.to_numpy(zero_copy_only=False) if arrow else col.to_numpy())

    groups = [column(c) for c in spec.by]
    partials = {name: column(out).astype(np.int64) for out, name in zip(_partial_names(spec), spec.partial_names())}
    return groups, partials


def aggregate_dask(ddf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.aggregate` of a Dask DataFrame (same keyword arguments).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows; shuffled by ``privacy_unit`` so that each partition holds whole persons.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.aggregate`.

    Returns
    -------
    pandas.DataFrame
        The release, equal to ``aggregate(ddf.compute(), **kwargs)`` for the same key, with the report in
        ``attrs``.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.aggregate`.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> df = pd.DataFrame({"pid": [1, 2, 3, 4], "g": [0, 0, 1, 1], "x": [1.0, 2.0, 3.0, 4.0]})
    >>> out = aggregate_dask(dd.from_pandas(df, npartitions=2), privacy_unit="pid", by="g",
    ...                      aggregations={"x": ["sum"]}, bounds={"x": (0, 5)}, max_partitions=1,
    ...                      max_contributions=1, epsilon=1.0, public_partitions=[0, 1])
    >>> list(out["g"])
    [0, 1]
    """
    (dd,) = require_extra("dask", "dask.dataframe")
    use = key_use(kwargs.get("key"), kwargs.pop("ledger", None), kwargs.pop("accountant", None))
    spec = _engine_spec(list(ddf.columns), kwargs)
    cols = _columns(spec)
    part = ddf[cols].shuffle(on=spec.privacy_unit)
    meta = _partial_frame(ddf._meta[cols], spec)
    parts = part.map_partitions(_partial_frame, spec, meta=meta)
    sums = parts.groupby(spec.by, sort=False, dropna=False).sum().reset_index().compute()
    groups, partials = _combined(sums, spec)
    types = {c: ddf[c].dtype for c in spec.by}
    return release_partials(spec, ("pandas", types), groups, partials, use)


def aggregate_spark(sdf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.aggregate` of a Spark DataFrame (same keyword arguments).

    Parameters
    ----------
    sdf : pyspark.sql.DataFrame
        The rows; repartitioned by ``privacy_unit`` and bounded per partition with ``mapInArrow``.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.aggregate`.

    Returns
    -------
    pyarrow.Table
        The release, equal to ``aggregate(sdf.toArrow(), **kwargs)`` for the same key, with the report in
        the schema metadata.

    Raises
    ------
    TypeError, ValueError
        For bad arguments (checked on the driver before any job runs); a failed Spark job raises
        pyspark's error.

    Examples
    --------
    >>> out = aggregate_spark(spark_df, privacy_unit="pid", by="g", aggregations={"x": ["sum"]},
    ...                       bounds={"x": (0, 5)}, max_partitions=1, max_contributions=1, epsilon=1.0,
    ...                       delta=1e-6)  # doctest: +SKIP
    """
    pa, sql, types_mod = require_extra("spark", "pyarrow", "pyspark.sql.functions", "pyspark.sql.types")
    use = key_use(kwargs.get("key"), kwargs.pop("ledger", None), kwargs.pop("accountant", None))
    spec = _engine_spec(list(sdf.columns), kwargs)
    cols = _columns(spec)
    fields = [sdf.schema[c] for c in spec.by]
    schema = types_mod.StructType(
        [types_mod.StructField(f.name, f.dataType, False) for f in fields]
        + [types_mod.StructField(n, types_mod.LongType(), False) for n in _partial_names(spec)]
    )

    def partition(batches: Any) -> Any:
        table = pa.Table.from_batches(list(batches))
        if table.num_rows == 0:
            return
        groups, partials = _partial_arrays(table, spec)
        arrays = [pa.array(g, type=table.schema.field(c).type) for c, g in zip(spec.by, groups)]
        arrays += [pa.array(partials[name], type=pa.int64()) for name in spec.partial_names()]
        yield pa.RecordBatch.from_arrays(arrays, names=spec.by + _partial_names(spec))

    parts = sdf.select(*cols).repartition(sql.col(spec.privacy_unit)).mapInArrow(partition, schema)
    sums = parts.groupBy(*spec.by).agg(*[sql.sum(n).alias(n) for n in _partial_names(spec)]).toArrow()
    groups, partials = _combined(sums, spec)
    arrow_types = {c: sums.schema.field(c).type for c in spec.by}
    return release_partials(spec, ("arrow", arrow_types), groups, partials, use)
