"""Keyed noise for Dask arrays and dataframes.

:func:`privatize` adds a mechanism's noise lazily, chunk by chunk (arrays) or partition by partition
(dataframes). Every value's noise is a function of (key, column, global position) only (see
:mod:`pydp_core.io`): a task covering global positions ``i`` draws block ``i // B`` of its column from
``Random(HMAC(key, column)).stream(i // B)``. Therefore

- a retried or recomputed task (lost worker, ``persist`` evicted, ``compute`` called twice) reproduces
  its noise bit for bit, so recomputation cannot average the noise away;
- different chunks, blocks and columns draw from different streams (independent noise);
- the result does not depend on the chunking or partitioning: for arrays, the position is the element's
  C-order index in the whole array (rechunking changes nothing); for dataframes it is the row number in
  dataframe order (found by one counting pass, run by this call), or the value of a unique non-negative
  integer ``index`` column (then neither order nor partitioning matters).

Dataframes numbered by order must be deterministic (the same rows in the same order whenever computed).

The key is a 256-bit secret (``pydp-core keygen``): generate it once per release, never log it, never
reuse it for another release. It is embedded in the task graph, so do not persist or publish the graph.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import check_int, require_extra
from .frames import column_names, drop_null_rows, output_dtype, record_distributed_release, single_column_name
from .frames import privatize as privatize_local
from .keyed import check_mechanism, release_bounds
from .keys import BLOCK_ROWS, check_key
from .ledger import _RECORDED_AT_DRIVER
from .nulls import Policies, dropped_columns, null_policies

__all__ = ["privatize"]


def privatize(
    data: Any,
    mechanism: Any,
    *,
    key: bytes,
    columns: str | Sequence[str] | None = None,
    bounds: Any = None,
    index: str | None = None,
    block_rows: int = BLOCK_ROWS,
    ledger: Any = None,
    resume: bool = False,
    accountant: Any = None,
    sensitivity_holds: bool = False,
    simulation: bool = False,
    nulls: Any = None,
    **privatize_kwargs: Any,
) -> Any:
    """A lazy Dask collection with ``mechanism``'s noise added (the same kind as ``data``).

    The front end shares the signature of :func:`pydp_core.privatize` (privacy parameters live in the
    mechanism; everything after ``mechanism`` is keyword-only).

    Parameters
    ----------
    data:
        a ``dask.array.Array`` (numeric, known chunk sizes), or a ``dask.dataframe`` DataFrame or Series.
    mechanism:
        ``pydp_core.LaplaceMechanism`` / ``GaussianMechanism`` (each value released on the exact discrete
        path, :func:`pydp_core.io.privatizer`; ``release=False`` for floating-point simulations), any object
        with ``privatize(values, rng=...)``, or ``{column: mechanism}`` for dataframes.
    key:
        the 32-byte release key (required: recomputed tasks must reproduce their noise).
    columns:
        the dataframe columns to privatise (required for DataFrames); for an array or Series, an optional
        name for its noise stream (default ``""``, or the Series name).
    bounds:
        clamping bounds ``(lower, upper)`` or ``{column: (lower, upper)}``.
    index:
        dataframes only: a unique non-negative integer row-id column; ``None`` numbers rows in order.
    block_rows:
        positions per keyed block (:data:`pydp_core.BLOCK_ROWS`). Every task draws the whole blocks it
        touches: keep chunks and partitions at least this long (Dask's usual 100 MB chunks are), or pass a
        smaller value (the same for every piece of one release).
    ledger:
        the use record of ``key`` (as in :func:`pydp_core.privatize`): the driver records each column as one
        release covering all rows, before any task runs; the tasks run without a ledger (a retried task
        reproduces its noise).
    resume:
        ``True``: this call continues a release already recorded under ``key`` (a rerun of the same job on
        the same data): nothing is recorded or charged. Without it a second release of a column under the
        key is refused (:class:`~pydp_core.io.KeyReuseError`).
    accountant:
        charged once per column at the driver, before any noise is drawn.
    sensitivity_holds, simulation:
        as in :func:`pydp_core.privatize`.
    nulls:
        the missing values' policy, as in :func:`pydp_core.privatize` (:mod:`pydp_core.io.nulls`), applied in
        each partition: ``"drop"`` numbers the rows kept on without gaps (the counting pass counts them), so
        the result is that of the computed frame; not ``"drop"`` for an array (its chunks keep their shape).
    **privatize_kwargs
        Passed on to the mechanism (e.g. ``release=False`` for simulations).

    Returns
    -------
    dask.array.Array, dask.dataframe.DataFrame or dask.dataframe.Series
        The noisy collection, computed lazily.

    Raises
    ------
    ImportError
        If dask is not installed (the ``dask`` extra).
    TypeError
        If ``data`` is not a dask collection, is not numeric, or an argument has the wrong type.
    ValueError
        If the key is not 32 bytes, chunk sizes are unknown, a column or the index is missing, or
        ``index`` is given for an array.
    RuntimeError
        At compute time, if a partition numbered by order changed its length (not deterministic).

    Examples
    --------
    >>> import dask.array as da
    >>> import pydp_core as dp
    >>> key = dp.io.generate_key()
    >>> x = da.zeros(10, chunks=4)
    >>> noisy = dp.dask.privatize(x, dp.LaplaceMechanism(epsilon=1.0), key=key)
    >>> bool((noisy.compute() == noisy.rechunk(5).compute()).all())
    True
    """
    da = require_extra("dask", "dask.array")[0]

    key = check_key(key)
    block_rows = check_int(block_rows, "block_rows", 1, 1 << 26)
    # One generator thread per task: the scheduler already runs tasks in parallel. The driver records the
    # release (record), the tasks run without a ledger.
    options = dict(bounds=bounds, key=key, block_rows=block_rows, threads=1, ledger=_RECORDED_AT_DRIVER,
                   sensitivity_holds=sensitivity_holds, simulation=simulation, nulls=nulls, **privatize_kwargs)

    def record(names: Sequence[str]) -> Policies:
        return record_distributed_release(key, names, mechanism, bounds=bounds, block_rows=block_rows,
                                          privatize_kwargs=privatize_kwargs, ledger=ledger, resume=resume,
                                          accountant=accountant, nulls=nulls)

    if isinstance(data, da.Array):
        if index is not None:
            raise ValueError("index applies to dataframes; array positions are their C-order indices")
        return _array(data, mechanism, columns, options, record)
    import dask.dataframe as dd

    if isinstance(data, (dd.DataFrame, dd.Series)):
        return _frame(data, mechanism, columns, index, options, record)
    raise TypeError(f"data must be a dask Array, DataFrame or Series, not {type(data).__name__}")


# -- arrays ----------------------------------------------------------------------------------------------
def _array(x: Any, mechanism: Any, columns: Any, options: dict[str, Any], record: Any) -> Any:
    name = single_column_name(columns, "")
    if x.dtype.kind == "b" or x.dtype.kind not in "iuf":
        raise TypeError(f"data must be numeric (got dtype {x.dtype})")
    if any(np.isnan(c) for dim in x.chunks for c in dim):
        raise ValueError("data has unknown chunk sizes: call compute_chunk_sizes() first")
    release_bounds(check_mechanism(mechanism), options["bounds"], name, options["sensitivity_holds"])
    if dropped_columns(null_policies(options["nulls"], [name])):
        raise ValueError("nulls='drop' needs a Dask DataFrame or Series: an array's chunks keep their shape "
                         "(use 'keep' or 'replace=VALUE')")
    record([name])
    out_dtype = output_dtype(x.dtype)
    shape = x.shape

    def chunk(block: np.ndarray, block_info: Any = None) -> np.ndarray:
        loc = block_info[0]["array-location"]
        starts = [a for a, _ in loc]
        if block.size == 0:
            return np.empty(block.shape, dtype=out_dtype)
        # The chunk's elements are contiguous in C order when it spans every axis after the first one.
        if all(block.shape[k] == shape[k] for k in range(1, block.ndim)):
            first = int(np.ravel_multi_index(tuple(starts), shape)) if block.ndim else 0
            result: np.ndarray = privatize_local(block, mechanism, columns=name, offset=first, **options)
            return result
        grids = np.meshgrid(*[np.arange(a, b) for a, b in loc], indexing="ij")
        rows = np.ravel_multi_index(tuple(grids), shape)
        scattered: np.ndarray = privatize_local(block, mechanism, columns=name, index=rows, **options)
        return scattered

    return x.map_blocks(chunk, dtype=out_dtype, meta=np.empty((0,) * x.ndim, dtype=out_dtype))


# -- dataframes ------------------------------------------------------------------------------------------
def _frame(df: Any, mechanism: Any, columns: Any, index: Any, options: dict[str, Any], record: Any) -> Any:
    import dask.dataframe as dd
    from dask.delayed import delayed

    series = isinstance(df, dd.Series)
    names: str | list[str]
    if series:
        if index is not None:
            raise ValueError("index needs a DataFrame holding the row-id column")
        names = single_column_name(columns, df.name)
    else:
        names = column_names(columns, [c for c in df.columns if isinstance(c, str)])
        if index is not None:
            if not isinstance(index, str) or index not in df.columns:
                raise ValueError(f"index column {index!r} not found")
            if index in names:
                raise ValueError(f"index column {index!r} cannot also be privatised")
    # Validate and build the output's meta on an empty frame of the same dtypes.
    meta = privatize_local(df._meta, mechanism, columns=names, **options)
    policies = record([names] if isinstance(names, str) else names)
    parts = df.to_delayed()

    if index is not None:
        out = [delayed(_indexed_part)(p, mechanism, names, index, options) for p in parts]
    else:
        from dask.base import compute

        # the rows a partition keeps (all but those a "drop" leaves out): the output numbers them on
        kept = [delayed(_kept_length)(p, names, policies) for p in parts]
        lengths = [int(n) for n in compute(*kept)]  # type: ignore[no-untyped-call]
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        out = [
            delayed(_positional_part)(p, mechanism, names, int(off), int(n), options)
            for p, off, n in zip(parts, offsets, lengths)
        ]
    return dd.from_delayed(out, meta=meta, divisions=df.divisions, verify_meta=False)


def _kept_length(part: Any, names: Any, policies: Policies) -> int:
    """The rows of a partition that its null policies keep."""
    return len(drop_null_rows(part, names, policies)[0])


def _positional_part(part: Any, mechanism: Any, names: Any, offset: int, expected: int, options: dict[str, Any]) -> Any:
    rows = _kept_length(part, names, null_policies(options["nulls"], [names] if isinstance(names, str) else names))
    if rows != expected:
        raise RuntimeError(
            f"a partition has {rows} rows but had {expected} when counted: the dataframe is not "
            "deterministic (use index= with a stable row id)"
        )
    return privatize_local(part, mechanism, columns=names, offset=offset, **options)


def _indexed_part(part: Any, mechanism: Any, names: Any, index: str, options: dict[str, Any]) -> Any:
    return privatize_local(part, mechanism, columns=names, index=index, **options)
