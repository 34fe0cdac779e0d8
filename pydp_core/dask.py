"""Differential privacy on Dask: noise per value and group-by releases, each returning a Dask collection.

- :func:`privatize`: keyed noise for the columns of a Dask DataFrame or the values of a Dask array
  (:mod:`pydp_core.io.dask`; retried tasks reproduce their noise);
- :func:`aggregate`: :func:`pydp_core.aggregation.aggregate` on Dask, bit for bit the local release for
  one key (:mod:`pydp_core.aggregation.engines`), quantiles, histograms on public bins and clipped vector
  sums, distinct counts (the partitions' distinct values of a group united by Dask) and ``bounds="auto"``
  (the search's grid counts summed over the partitions, the search on the client, then the release)
  included;
- :func:`top_k`: :func:`pydp_core.aggregation.top_k` on Dask, likewise.

The workers bound each person's contributions and compute exact partial sums; the client records the
release in the key's ledger, charges the accountant (or a :class:`pydp_core.Session`) once, selects the
groups and draws the noise. The result is small: a one-partition Dask DataFrame whose computed frame
carries the release report in ``attrs`` (:func:`pydp_core.aggregation.aggregate_report`).
"""
from __future__ import annotations

from typing import Any

from ._validation import require_extra
from .aggregation.engines import aggregate_dask, top_k_dask
from .aggregation.report import REPORT_KEY, aggregate_report
from .io.dask import privatize

__all__ = ["privatize", "aggregate", "top_k"]


def aggregate(ddf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.aggregate` of a Dask DataFrame, as a Dask DataFrame.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows (one per record); shuffled by ``privacy_unit`` so that each partition holds whole persons.
        A vector-sum column is a pyarrow list column, or an object column of lists or numpy arrays built
        under ``dask.config.set({"dataframe.convert-string": False})`` (else Dask makes it strings).
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.aggregate` (``ledger``, ``accountant`` and
        ``nulls`` too; a null policy is applied in each partition, to the local release).

    Returns
    -------
    dask.dataframe.DataFrame
        One partition; computed, it equals ``aggregate(ddf.compute(), **kwargs)`` for the same key, with
        the report in ``attrs``.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.aggregate`; ImportError naming the ``dask`` extra without dask.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> from pydp_core import dask as pdask
    >>> df = pd.DataFrame({"pid": [1, 2, 3, 4], "g": [0, 0, 1, 1], "x": [1.0, 2.0, 3.0, 4.0]})
    >>> out = pdask.aggregate(dd.from_pandas(df, npartitions=2), privacy_unit="pid", by="g",
    ...                       aggregations={"x": ["sum"]}, bounds={"x": (0, 5)}, max_partitions=1,
    ...                       max_contributions=1, epsilon=1.0, public_partitions=[0, 1])
    >>> list(out.compute()["g"])
    [0, 1]
    """
    return _as_dask(aggregate_dask(ddf, **kwargs))


def top_k(ddf: Any, **kwargs: Any) -> Any:
    """:func:`pydp_core.aggregation.top_k` of a Dask DataFrame, as a Dask DataFrame.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows.
    **kwargs
        The keyword arguments of :func:`pydp_core.aggregation.top_k` (``nulls`` too).

    Returns
    -------
    dask.dataframe.DataFrame
        One partition; computed, it equals ``top_k(ddf.compute(), **kwargs)`` for the same key.

    Raises
    ------
    TypeError, ValueError
        As :func:`pydp_core.aggregation.top_k`.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> from pydp_core import dask as pdask
    >>> df = pd.DataFrame({"pid": range(60), "code": ["a"] * 40 + ["b"] * 15 + ["c"] * 5})
    >>> out = pdask.top_k(dd.from_pandas(df, npartitions=2), column="code", k=1, privacy_unit="pid",
    ...                   max_partitions=1, epsilon=5.0, candidates=["a", "b", "c"], key=b"k" * 32)
    >>> list(out.compute()["code"])
    ['a']
    """
    return _as_dask(top_k_dask(ddf, **kwargs))


def _as_dask(frame: Any) -> Any:
    """The client's result (pandas) as a one-partition Dask DataFrame, its report attached."""
    (dd,) = require_extra("dask", "dask.dataframe")
    report = aggregate_report(frame)
    out = dd.from_pandas(frame, npartitions=1, sort=False)
    out.attrs = {REPORT_KEY: report}
    return out
