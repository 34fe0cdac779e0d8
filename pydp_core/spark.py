"""Differential privacy on PySpark DataFrames: noise per value and group-by releases, each returning a
Spark DataFrame.

- :func:`privatize`: keyed noise for columns (:mod:`pydp_core.io.spark`; the noise of a value depends on
  (key, column, row index) only, so retried tasks reproduce it);
- :func:`aggregate`: :func:`pydp_core.aggregation.aggregate` on Spark, bit for bit the local release for
  one key (:mod:`pydp_core.aggregation.engines`): counts, sums, means, variances, distinct units,
  quantiles, histograms on public bins, clipped vector sums (an ``array<double>`` column), distinct
  counts (the partitions' distinct values of a group united by Spark) and ``bounds="auto"`` (the search's
  grid counts summed over the partitions, the search on the driver, then the release);
- :func:`top_k`: :func:`pydp_core.aggregation.top_k` on Spark, likewise.

The executors bound each person's contributions and compute exact partial sums; the driver records the
release in the key's ledger, charges the accountant (or a :class:`pydp_core.Session`) once, selects the
groups and draws the noise. The result is small: it is built on the driver and handed back to the
DataFrame's session, with the release report in its ``attrs`` (:func:`pydp_core.aggregation.aggregate_report`)
and in the metadata of its first column (kept when it is written to Parquet).
"""
from __future__ import annotations

import json
from typing import Any

from .aggregation.engines import aggregate_spark, top_k_spark
from .aggregation.report import REPORT_KEY, aggregate_report
from .io.spark import privatize

__all__ = ["privatize", "aggregate", "top_k"]


def aggregate(sdf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.aggregate` of a Spark DataFrame, as a Spark DataFrame.

    Parameters
    ----------
    sdf : pyspark.sql.DataFrame
        The rows (one per record); repartitioned by ``privacy_unit`` so that each task holds whole persons.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.aggregate` (``ledger``, ``accountant`` and
        ``nulls`` too; a null policy is applied in each partition, to the local release).

    Returns
    -------
    pyspark.sql.DataFrame
        The release, equal row for row and bit for bit to ``aggregate(sdf.toArrow(), **kwargs)`` for the
        same key; the report in ``attrs`` and in the first column's metadata.

    Raises
    ------
    TypeError, ValueError
        For bad arguments, checked on the driver before any job runs; ImportError naming the ``spark``
        extra without pyspark.

    Examples
    --------
    >>> from pydp_core import spark as pspark
    >>> out = pspark.aggregate(spark_df, privacy_unit="pid", by="g", aggregations={"x": ["sum", "median"]},
    ...                        bounds={"x": (0, 5)}, max_partitions=1, max_contributions=1, epsilon=1.0,
    ...                        delta=1e-6)  # doctest: +SKIP
    """
    return _as_spark(sdf, aggregate_spark(sdf, **kwargs))


def top_k(sdf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.top_k` of a Spark DataFrame, as a Spark DataFrame.

    Parameters
    ----------
    sdf : pyspark.sql.DataFrame
        The rows.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.top_k` (``nulls`` too).

    Returns
    -------
    pyspark.sql.DataFrame
        The release, equal to ``top_k(sdf.toArrow(), **kwargs)`` for the same key.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.top_k`.

    Examples
    --------
    >>> from pydp_core import spark as pspark
    >>> out = pspark.top_k(spark_df, column="code", k=2, privacy_unit="pid", max_partitions=1,
    ...                    epsilon=1.0, delta=1e-6)  # doctest: +SKIP
    """
    return _as_spark(sdf, top_k_spark(sdf, **kwargs))


def _as_spark(sdf: Any, table: Any) -> Any:
    """The driver's result ``table`` (pyarrow) as a DataFrame of ``sdf``'s session, its report attached."""
    report = aggregate_report(table)
    out = sdf.sparkSession.createDataFrame(table)
    first = out.columns[0]
    out = out.withMetadata(first, {REPORT_KEY: json.dumps(report, sort_keys=True)})
    out.attrs = {REPORT_KEY: report}
    return out
