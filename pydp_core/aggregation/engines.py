"""The aggregation on Dask and Spark: the same release as :func:`pydp_core.aggregation.aggregate` (and
:func:`~pydp_core.aggregation.top_k`), bit for bit.

1. The rows are shuffled by privacy unit, so that every partition holds whole persons.
2. Each partition applies the null policies (``nulls=``, :mod:`pydp_core.io.nulls`) to its rows, each row on
   its own as the local engine does (``drop`` leaves it out, ``replace=VALUE`` fills it; a pandas NA or NaN on
   Dask, a null on Spark, where NaN stays refused), and computes its partial aggregates
   (:func:`~pydp_core.aggregation.local.partial_aggregates`): contribution bounding by keyed hashes of the
   person's own identifiers, exact integer limb sums, the counts of kept rows per quantile grid cell and per
   histogram bin, the integer coordinate sums of the clipped vectors of a vector sum (one int64 column per
   cell, bin or coordinate), and the distinct kept values per group of each ``count_distinct`` column.
   They depend on the partition's rows only (never on their order), so a retried task reproduces them.
3. The partials are summed per group by the engine (exact int64 sums), the distinct values of a group are
   united over the partitions and counted (Dask: ``nunique`` of the partitions' (group, value) pairs;
   Spark: ``size(array_distinct(flatten(collect_list(...))))`` of their per-group arrays), and the result
   is collected: one row per group.
4. The driver runs selection (or the public partitions), records the release in the key's ledger, charges
   the accountant once, and draws the keyed noise and the estimates
   (:func:`~pydp_core.aggregation.local.release_partials`, or the ranking of
   :func:`~pydp_core.aggregation.topk.ranked`).

Since bounding is per person, the sums are exact and the noise is keyed by group values, the result does
not depend on the partitioning and equals the local result for the same key. Here it is small and local:
a pandas DataFrame (Dask) or a pyarrow Table (Spark), with the report attached; the documented front ends
:func:`pydp_core.spark.aggregate` and :func:`pydp_core.dask.aggregate` return it as the kind they were
given. The key is sent to the workers with the task (bounding is keyed); the noise is drawn on the driver.

With ``bounds="auto"`` a first pass (step 0) bounds the contributions per partition and counts the kept
values of each "auto" column per cell of the public search grid (:func:`~pydp_core.aggregation.local.
grid_partials`); the counts are summed over the partitions (exact int64 sums), and the driver records them,
charges the budget and runs the searches (:func:`~pydp_core.aggregation.local.search_bounds`); steps 1 to 4
then run with the bounds found. The bounding clamps an "auto" column's content hash to the grid's range in
both passes, so the two passes, and the local engine, keep the same rows.
A vector column on Dask is a pyarrow list column (``pandas.ArrowDtype(pyarrow.list_(pyarrow.float64()))``) or
an object column of lists or numpy arrays; Dask turns object columns into strings when the collection is built
(``dd.from_pandas`` and the readers) unless that is done under
``dask.config.set({"dataframe.convert-string": False})``, and such a column is refused (TypeError).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import require_extra
from ..io.nulls import describe_nulls, null_policies
from .autobounds import WIDTH
from .keyuse import KeyUse, key_use
from .local import grid_partials, partial_aggregates, release_partials, search_bounds
from .quantiles import CELLS
from .spec import AggregateSpec, aggregate_spec
from .tables import value_columns, with_null_policies
from .topk import ranked, top_k_spec

__all__ = ["aggregate_dask", "aggregate_spark", "top_k_dask", "top_k_spark"]


def _engine_spec(names: list[Any], kwargs: dict[Any, Any]) -> AggregateSpec:
    """The checked spec of an engine call, before any job runs; the null policies other than the default are
    in its description (``spec.nulls``), as in the local engine, and applied in each partition."""
    rules = _null_rules(kwargs.pop("nulls", None), value_columns(kwargs.get("aggregations"), kwargs.get("privacy_unit")))
    return aggregate_spec(names, **kwargs, null_rules=rules)


def _null_rules(nulls: Any, columns: list[str]) -> dict[str, str] | None:
    """The null policies of ``columns`` other than the default, as text (checked on the driver; None if none)."""
    return None if nulls is None else describe_nulls(null_policies(nulls, columns))


def _nulls_applied(table: Any, spec: AggregateSpec) -> Any:
    """One partition (a pandas DataFrame or a pyarrow Table) with the spec's null policies applied, as the local
    engine applies them to the whole table: each row on its own (``drop`` leaves it out, ``replace`` fills its
    null), so the partitioning changes nothing."""
    if not spec.nulls:
        return table
    return with_null_policies(table, spec.nulls, list(spec.nulls))[0]


def _columns(spec: AggregateSpec) -> list[str]:
    """The input columns one aggregation reads."""
    return list(dict.fromkeys([spec.privacy_unit, *spec.by, *(c for c, _ in spec.requests)]))


def _layout(spec: AggregateSpec) -> list[tuple[str, int | None]]:
    """The engine's int64 partial columns, in order: (partial name, None) for a scalar partial, and
    (partial name, j) for column ``j`` of a matrix partial: the ``CELLS + 1`` grid-cell counts of a quantile
    column, the bin counts of a histogram, the integer coordinate sums of a vector sum."""
    out: list[tuple[str, int | None]] = [(name, None) for name in spec.partial_names()]
    widths = [(f"{c}\x00cells", CELLS + 1) for c in spec.quantile_columns]
    widths += [(f"{c}\x00bins", len(edges) - 1) for c, edges in spec.bins.items()]
    widths += [(f"{c}\x00vector", size) for c, (_, _, size) in spec.vectors.items()]
    for name, width in widths:
        out += [(name, j) for j in range(width)]
    return out


def _partial_names(spec: AggregateSpec) -> list[str]:
    """Engine-safe names of the partial columns (the spec's names hold NUL separators)."""
    return [f"__pydp_partial_{i}" for i in range(len(_layout(spec)))]


def _flat_partials(partials: dict[Any, Any], spec: AggregateSpec) -> list[np.ndarray]:
    """The partials as the engine's columns (:func:`_layout`)."""
    return [partials[name] if cell is None else np.ascontiguousarray(partials[name][:, cell])
            for name, cell in _layout(spec)]


def _partial_arrays(table: Any, spec: AggregateSpec) -> tuple[list[np.ndarray], dict[Any, Any], dict[str, Any]]:
    """The partial aggregates and distinct (group, value) pairs of one partition (a pandas DataFrame or a
    pyarrow Table of whole persons), after the null policies."""
    return partial_aggregates(_nulls_applied(table, spec), spec)


def _grid_arrays(table: Any, spec: AggregateSpec) -> np.ndarray:
    """The search grid's counts of one partition, every ``"auto"`` column's ``WIDTH + 1`` counts in turn."""
    counts = grid_partials(_nulls_applied(table, spec), spec)
    return np.concatenate([counts[s.column] for s in spec.auto.searches])  # type: ignore[union-attr]


def _grid_names(spec: AggregateSpec) -> list[str]:
    """Engine-safe names of the grid-count columns of the bounds search on Dask (:func:`_grid_arrays`)."""
    return [f"__pydp_grid_{i}" for i in range(len(spec.auto.searches) * (WIDTH + 1))]  # type: ignore[union-attr]


def _grid_counts(total: np.ndarray, spec: AggregateSpec) -> dict[str, np.ndarray]:
    """The summed grid counts of all partitions, per ``"auto"`` column."""
    rows = np.asarray(total, dtype=np.int64).reshape(len(spec.auto.searches), WIDTH + 1)  # type: ignore[union-attr]
    return {s.column: rows[i] for i, s in enumerate(spec.auto.searches)}  # type: ignore[union-attr]


def _distinct_names(spec: AggregateSpec) -> list[str]:
    """Engine-safe names of the distinct-value columns, one per ``count_distinct`` column."""
    return [f"__pydp_distinct_{i}" for i in range(len(spec.distinct_columns))]


def _partial_frame(pdf: Any, spec: AggregateSpec) -> Any:
    """A pandas partition -> its partial aggregates as a pandas DataFrame (``by`` columns, then partials)."""
    return _partition_frames(pdf, spec)[0]


def _partition_frames(pdf: Any, spec: AggregateSpec) -> tuple[Any, list[Any]]:
    """A pandas partition -> its partial aggregates (``by`` columns, then partials) and, per ``count_distinct``
    column, its distinct kept (group, value) pairs (``by`` columns, then the value), as pandas DataFrames."""
    import pandas as pd

    groups, partials, pairs = _partial_arrays(pdf.reset_index(drop=True), spec)
    data = {c: pd.Series(v, dtype=pdf[c].dtype) for c, v in zip(spec.by, groups)}
    data.update(zip(_partial_names(spec), _flat_partials(partials, spec)))
    values = []
    for name, col in zip(_distinct_names(spec), spec.distinct_columns):
        index, value = pairs[col]
        frame = {c: pd.Series(g[index], dtype=pdf[c].dtype) for c, g in zip(spec.by, groups)}
        values.append(pd.DataFrame(dict(frame, **{name: pd.Series(value, dtype=pdf[col].dtype)})))
    return pd.DataFrame(data), values


def _grid_frame(pdf: Any, spec: AggregateSpec) -> Any:
    """A pandas partition -> its grid counts of the bounds search as a one-row pandas DataFrame."""
    import pandas as pd

    counts = _grid_arrays(pdf.reset_index(drop=True), spec)
    return pd.DataFrame({n: counts[i:i + 1] for i, n in enumerate(_grid_names(spec))})


def _combined(table: Any, spec: AggregateSpec,
              distinct: dict[str, dict[tuple[Any, ...], int]] | None = None) -> tuple[list[np.ndarray], dict[Any, Any]]:
    """(group values, partials) from the engine's per-group sums (a pandas DataFrame or a pyarrow Table) and
    the number of distinct values per group of each ``count_distinct`` column: the columns of ``table``
    (Spark), or ``distinct`` (Dask: column -> group values -> count; a group without kept values counts 0)."""
    arrow = hasattr(table, "column_names")

    def column(name: str) -> np.ndarray:
        col = table.column(name) if arrow else table[name]
        return np.asarray(col.to_numpy(zero_copy_only=False) if arrow else col.to_numpy())

    groups = [column(c) for c in spec.by]
    partials: dict[str, Any] = {}
    cells: dict[str, list[np.ndarray]] = {}
    for out, (name, cell) in zip(_partial_names(spec), _layout(spec)):
        values = column(out).astype(np.int64)
        if cell is None:
            partials[name] = values
        else:
            cells.setdefault(name, []).append(values)
    for name, cols in cells.items():
        partials[name] = np.stack(cols, axis=1) if cols[0].size else np.zeros((0, len(cols)), dtype=np.int64)
    for out, col in zip(_distinct_names(spec), spec.distinct_columns):
        if distinct is None:
            partials[f"{col}\x00distinct"] = column(out).astype(np.int64)
        else:
            keys = zip(*[g.tolist() for g in groups])
            partials[f"{col}\x00distinct"] = np.array([distinct[col].get(k, 0) for k in keys], dtype=np.int64)
    return groups, partials


def aggregate_dask(ddf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.aggregate` of a Dask DataFrame (same keyword arguments).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows; shuffled by ``privacy_unit`` so that each partition holds whole persons.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.aggregate`.
        ``nulls`` is applied in each partition before the bounding, to the local release.

    Returns
    -------
    pandas.DataFrame
        The release, equal to ``aggregate(ddf.compute(), **kwargs)`` for the same key, with the report in
        ``attrs``.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.aggregate`; TypeError for a vector column Dask made strings.

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
    require_extra("dask", "dask.dataframe")
    use = key_use(kwargs.get("key"), kwargs.pop("ledger", None), kwargs.pop("accountant", None))
    spec = _engine_spec(list(ddf.columns), kwargs)
    spec, groups, partials, kind_types = _dask_partials(ddf, spec, use)
    return release_partials(spec, kind_types, groups, partials, use)


def _dask_partials(ddf: Any, spec: AggregateSpec, use: KeyUse | None = None) -> tuple[
        AggregateSpec, list[np.ndarray], dict[Any, Any], tuple[str, dict[Any, Any]]]:
    """(spec with every bound known, group values, partials, ("pandas", group types)) of a Dask DataFrame:
    steps 1 to 3 on Dask, after the bounds search of ``bounds="auto"`` (its own pass, step 0)."""
    import dask.dataframe as dd
    import pandas as pd
    from dask.base import compute
    from dask.delayed import delayed

    for c in spec.vectors:
        if isinstance(ddf._meta[c].dtype, pd.StringDtype):
            raise TypeError(f"aggregations: column {c!r} of the Dask DataFrame holds strings, not vectors: Dask turns "
                            "object columns (lists, numpy arrays) into strings unless the DataFrame is built under "
                            "dask.config.set({'dataframe.convert-string': False}); or give the column a pyarrow list "
                            "dtype (pandas.ArrowDtype(pyarrow.list_(pyarrow.float64())))")
    cols = _columns(spec)
    part = ddf[cols].shuffle(on=spec.privacy_unit)
    if spec.pending:
        grid = part.map_partitions(_grid_frame, spec, meta=_grid_frame(ddf._meta[cols], spec)).sum().compute()
        spec = search_bounds(spec, _grid_counts(grid[_grid_names(spec)].to_numpy(), spec), use)
    meta, pair_meta = _partition_frames(ddf._meta[cols], spec)
    if not spec.distinct_columns:
        parts = part.map_partitions(_partial_frame, spec, meta=meta)
        pair_counts = []
    else:  # one pass over each partition: its partials and its distinct pairs
        outputs = [delayed(_partition_frames, pure=True)(p, spec) for p in part.to_delayed()]
        parts = dd.from_delayed([o[0] for o in outputs], meta=meta, verify_meta=False)
        pair_counts = [dd.from_delayed([o[1][j] for o in outputs], meta=m, verify_meta=False)
                       .groupby(spec.by, sort=False, dropna=False)[name].nunique()
                       for j, (name, m) in enumerate(zip(_distinct_names(spec), pair_meta))]
    sums, *counted = compute(  # type: ignore[no-untyped-call]
        parts.groupby(spec.by, sort=False, dropna=False).sum().reset_index(), *pair_counts)
    distinct = {col: {(k if isinstance(k, tuple) else (k,)): int(n) for k, n in c.items()}
                for col, c in zip(spec.distinct_columns, counted)}
    groups, partials = _combined(sums, spec, distinct)
    return spec, groups, partials, ("pandas", {c: ddf[c].dtype for c in spec.by})


def aggregate_spark(sdf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.aggregate` of a Spark DataFrame (same keyword arguments).

    Parameters
    ----------
    sdf : pyspark.sql.DataFrame
        The rows; repartitioned by ``privacy_unit`` and bounded per partition with ``mapInArrow``.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.aggregate`.
        ``nulls`` is applied in each partition before the bounding, to the local release.

    Returns
    -------
    pyarrow.Table
        The release, equal to ``aggregate(sdf.toArrow(), **kwargs)`` for the same key, with the report in
        the schema metadata.

    Raises
    ------
    TypeError, ValueError
        For bad arguments, checked on the driver before any job runs; a failed Spark job raises pyspark's
        error.

    Examples
    --------
    >>> out = aggregate_spark(spark_df, privacy_unit="pid", by="g", aggregations={"x": ["sum"]},
    ...                       bounds={"x": (0, 5)}, max_partitions=1, max_contributions=1, epsilon=1.0,
    ...                       delta=1e-6)  # doctest: +SKIP
    """
    require_extra("spark", "pyarrow", "pyspark.sql.functions", "pyspark.sql.types")
    use = key_use(kwargs.get("key"), kwargs.pop("ledger", None), kwargs.pop("accountant", None))
    spec = _engine_spec(list(sdf.columns), kwargs)
    spec, groups, partials, kind_types = _spark_partials(sdf, spec, use)
    return release_partials(spec, kind_types, groups, partials, use)


def _spark_partials(sdf: Any, spec: AggregateSpec, use: KeyUse | None = None) -> tuple[
        AggregateSpec, list[np.ndarray], dict[Any, Any], tuple[str, dict[Any, Any]]]:
    """(spec with every bound known, group values, partials, ("arrow", group types)) of a Spark DataFrame:
    steps 1 to 3 on Spark, after the bounds search of ``bounds="auto"`` (its own job, step 0)."""
    pa, sql, types_mod = require_extra("spark", "pyarrow", "pyspark.sql.functions", "pyspark.sql.types")
    rows = sdf.select(*_columns(spec)).repartition(sql.col(spec.privacy_unit))
    if spec.pending:
        spec = search_bounds(spec, _spark_grid(rows, spec), use)
    fields = [sdf.schema[c] for c in spec.by]
    long = types_mod.LongType()
    schema = types_mod.StructType(
        [types_mod.StructField(f.name, f.dataType, False) for f in fields]
        + [types_mod.StructField(n, long, False) for n in _partial_names(spec)]
        + [types_mod.StructField(n, types_mod.ArrayType(sdf.schema[c].dataType, False), False)
           for n, c in zip(_distinct_names(spec), spec.distinct_columns)]
    )

    def partition(batches: Any) -> Any:
        table = pa.Table.from_batches(list(batches))
        if table.num_rows == 0:
            return
        groups, partials, pairs = _partial_arrays(table, spec)
        arrays = [pa.array(g, type=table.schema.field(c).type) for c, g in zip(spec.by, groups)]
        arrays += [pa.array(v, type=pa.int64()) for v in _flat_partials(partials, spec)]
        for c in spec.distinct_columns:  # the group's distinct values (the pairs are sorted by group)
            index, value = pairs[c]
            offsets = np.searchsorted(index, np.arange(groups[0].shape[0] + 1)).astype(np.int32)
            arrays.append(pa.ListArray.from_arrays(pa.array(offsets), pa.array(value, type=table.schema.field(c).type)))
        yield pa.RecordBatch.from_arrays(arrays, names=spec.by + _partial_names(spec) + _distinct_names(spec))

    # the union of the partitions' distinct values of a group, then its size
    union = [sql.size(sql.array_distinct(sql.flatten(sql.collect_list(n)))).alias(n) for n in _distinct_names(spec)]
    sums = rows.mapInArrow(partition, schema).groupBy(*spec.by).agg(
        *[sql.sum(n).alias(n) for n in _partial_names(spec)], *union).toArrow()
    groups, partials = _combined(sums, spec)
    return spec, groups, partials, ("arrow", {c: sums.schema.field(c).type for c in spec.by})


def _spark_grid(rows: Any, spec: AggregateSpec) -> dict[str, np.ndarray]:
    """The grid counts of the bounds search of a Spark DataFrame partitioned by person: each partition yields
    its non-zero counts as (cell, count) rows (cell: the index into :func:`_grid_arrays`), summed per cell by
    Spark (a narrow aggregation instead of one column per cell)."""
    pa, sql, types_mod = require_extra("spark", "pyarrow", "pyspark.sql.functions", "pyspark.sql.types")
    schema = types_mod.StructType([types_mod.StructField(n, types_mod.LongType(), False) for n in ("cell", "count")])

    def partition(batches: Any) -> Any:
        table = pa.Table.from_batches(list(batches))
        if table.num_rows == 0:
            return
        counts = _grid_arrays(table, spec)
        cells = np.flatnonzero(counts)
        yield pa.RecordBatch.from_arrays([pa.array(cells, type=pa.int64()), pa.array(counts[cells], type=pa.int64())],
                                         names=["cell", "count"])

    sums = rows.mapInArrow(partition, schema).groupBy("cell").agg(sql.sum("count").alias("count")).toArrow()
    total = np.zeros(len(spec.auto.searches) * (WIDTH + 1), dtype=np.int64)  # type: ignore[union-attr]
    total[sums.column("cell").to_numpy()] = sums.column("count").to_numpy()
    return _grid_counts(total, spec)


def top_k_dask(ddf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.top_k` of a Dask DataFrame (same keyword arguments).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.top_k`.
        ``nulls`` is applied in each partition before the bounding, to the local release.

    Returns
    -------
    pandas.DataFrame
        The release, equal to ``top_k(ddf.compute(), **kwargs)`` for the same key.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.top_k`.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> df = pd.DataFrame({"pid": range(60), "code": ["a"] * 40 + ["b"] * 15 + ["c"] * 5})
    >>> out = top_k_dask(dd.from_pandas(df, npartitions=2), column="code", k=1, privacy_unit="pid",
    ...                  max_partitions=1, epsilon=5.0, candidates=["a", "b", "c"], key=b"k" * 32)
    >>> list(out["code"])
    ['a']
    """
    require_extra("dask", "dask.dataframe")
    use, kk, spec, ranking = _top_k_spec(list(ddf.columns), kwargs)
    _, groups, partials, kind_types = _dask_partials(ddf, spec)
    return ranked(spec, kk, kind_types, groups, partials, use, **ranking)


def top_k_spark(sdf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.top_k` of a Spark DataFrame (same keyword arguments).

    Parameters
    ----------
    sdf : pyspark.sql.DataFrame
        The rows.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.top_k`.
        ``nulls`` is applied in each partition before the bounding, to the local release.

    Returns
    -------
    pyarrow.Table
        The release, equal to ``top_k(sdf.toArrow(), **kwargs)`` for the same key.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.top_k`.

    Examples
    --------
    >>> out = top_k_spark(spark_df, column="code", k=1, privacy_unit="pid", max_partitions=1,
    ...                   epsilon=5.0, candidates=["a", "b", "c"])  # doctest: +SKIP
    """
    require_extra("spark", "pyarrow", "pyspark.sql.functions", "pyspark.sql.types")
    use, kk, spec, ranking = _top_k_spec(list(sdf.columns), kwargs)
    _, groups, partials, kind_types = _spark_partials(sdf, spec)
    return ranked(spec, kk, kind_types, groups, partials, use, **ranking)


def _top_k_spec(names: list[Any], kwargs: dict[Any, Any]) -> tuple[Any, int, AggregateSpec, dict[str, Any]]:
    """(key use, k, spec, the ranking's ``score`` and ``release_values``) of an engine's top-k call, checked on
    the driver before any job runs."""
    nulls = kwargs.pop("nulls", None)
    use = key_use(kwargs.get("key"), kwargs.pop("ledger", None), kwargs.pop("accountant", None))
    unknown = set(kwargs) - {"column", "k", "privacy_unit", "max_partitions", "epsilon", "delta", "key", "candidates",
                             "score", "bounds", "max_contributions", "release_values", "confidence"}
    if unknown:
        raise TypeError(f"top_k got an unexpected keyword argument {sorted(unknown)[0]!r}")
    args = {"delta": 0.0, "key": None, "candidates": None, "score": None, "release_values": False, **kwargs}
    score = args["score"]
    kk, spec = top_k_spec(names, **args, null_rules=_null_rules(nulls, [score] if isinstance(score, str) else []))
    return use, kk, spec, {"score": args["score"], "release_values": args["release_values"]}
