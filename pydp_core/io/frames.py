"""Noise for in-memory columnar data: numpy arrays, pandas Series and DataFrames, pyarrow arrays and tables.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .._validation import check_int
from .keyed import (
    KeyedNoise,
    check_bounds,
    check_mechanism,
    prepared_values,
    privatizer,
)
from .keys import BLOCK_ROWS, check_key, generate_key

#: ``noiser(column, values)``: the noisy copy of one column's 1-D values.
Noiser = Callable[[str, np.ndarray], np.ndarray]


# -- the public entry point ------------------------------------------------------------------------------
def privatize(
    data: Any,
    mechanism: Any,
    *,
    key: bytes | None = None,
    columns: str | Sequence[str] | None = None,
    bounds: Any = None,
    rng: Any = None,
    offset: int = 0,
    index: Any = None,
    block_rows: int = BLOCK_ROWS,
    threads: int | None = None,
    **privatize_kwargs: Any,
) -> Any:
    """Add ``mechanism``'s noise to ``data`` and return the same kind of object.

    With a ``key`` the noise of a value is a function of (key, column, row index) only, so pieces,
    partitions and retries reproduce it exactly (docs/io.md).

    Parameters
    ----------
    data:
        a numpy array (numeric; a ``numpy.ma.MaskedArray``'s masked entries are nulls), a pandas Series or
        DataFrame, or a pyarrow Array, ChunkedArray, RecordBatch or Table. Multi-dimensional numpy arrays
        are privatised element by element in C order.
    mechanism:
        an object with ``privatize(values, rng=...)`` (``pydp_core.LaplaceMechanism`` etc., or
        :func:`mechanism`), or a mapping ``{column: mechanism}``.
    columns:
        the columns to privatise (required for DataFrames, tables and record batches; the others pass
        through unchanged). For a Series or array, a single name that labels its noise stream
        (default: the Series name, else ``""``).
    bounds:
        ``(lower, upper)`` clamping bounds, or a mapping ``{column: (lower, upper)}``. Without bounds
        nothing is clamped and non-finite values are an error.
    key:
        a 32-byte release key: the noise is a function of (key, column, row index) (module docstring).
        ``None`` (the default) uses a fresh key from OS entropy.
    rng:
        instead of a key, a generator passed straight to ``mechanism.privatize`` (a seeded
        ``pydp_core.Random`` or ``numpy.random.Generator`` for simulations); the noise then depends on how
        the data is split.
    offset:
        global row index of the first row (with ``key``): pieces of one column privatised with their
        offsets give exactly the output of the whole.
    index:
        instead of ``offset``, the global row index of every row (with ``key``): the name of an integer
        column of the DataFrame/table, or an integer array of the data's length. Indices must be unique
        and >= 0 (a stable row id); the output then depends on neither the order nor the split of the rows.
        Sparse indices cost up to one block of draws per distinct ``index // block_rows``.
    block_rows:
        rows per keyed block; the same for every piece of a release.
    threads:
        threads of the keyed generator (None: all cores); the output is the same for every value.
    privatize_kwargs:
        passed on to ``mechanism.privatize`` (e.g. ``release=``).

    Returns
    -------
    object
        The same kind of object as ``data``. Nulls (pandas NA/NaN, pyarrow nulls, masked entries) stay
        null; privatised numeric columns come back as float64 (float32 stays float32); other columns are
        untouched.

    Raises
    ------
    TypeError
        If ``data`` is not a supported kind, a column is not numeric, or an argument has the wrong type.
    ValueError
        If a column is missing, a value is not finite without ``bounds``, both ``key`` and ``rng`` (or
        ``offset`` and ``index``) are given, or the index is not unique and non-negative.

    Examples
    --------
    >>> import pandas as pd
    >>> import pydp_core as dp
    >>> key = bytes(range(32))  # a fixed key for this example only: use dp.io.generate_key()
    >>> mech = dp.LaplaceMechanism(epsilon=1.0)
    >>> x = np.arange(6.0)
    >>> whole = dp.privatize(x, mech, key=key)
    >>> pieces = np.concatenate([dp.privatize(x[:4], mech, key=key), dp.privatize(x[4:], mech, key=key, offset=4)])
    >>> bool(np.array_equal(whole, pieces))
    True
    >>> df = pd.DataFrame({"age": [30.0, None, 50.0], "id": [1, 2, 3]})
    >>> out = dp.privatize(df, mech, key=key, columns="age")
    >>> out["age"].isna().tolist(), out["id"].tolist()
    ([False, True, False], [1, 2, 3])
    """
    if key is not None and rng is not None:
        raise ValueError("give either key or rng, not both")
    release_key = b""
    if rng is None:
        release_key = generate_key() if key is None else check_key(key)
    elif index is not None:
        raise ValueError("index applies to keyed noise (key=), not to rng=")
    offset = check_int(offset, "offset", 0)
    if index is not None and offset != 0:
        raise ValueError("give either offset or index, not both")
    block_rows = check_int(block_rows, "block_rows", 1, 1 << 26)
    rows = None if index is None else _index_rows(data, index)

    def noiser(col: str, values: np.ndarray) -> np.ndarray:
        mech = pick_column(mechanism, col, "mechanism")
        bnd = check_bounds(pick_column(bounds, col, "bounds", optional=True))
        if rng is not None:
            arr = prepared_values(values, bnd, col)
            out = np.asarray(privatizer(check_mechanism(mech), privatize_kwargs)(arr, rng), dtype=np.float64)
            if out.shape != arr.shape:
                raise RuntimeError(f"mechanism.privatize returned shape {out.shape} for input shape {arr.shape}")
            return out
        kn = KeyedNoise(mech, release_key, col, bounds=bnd, block_rows=block_rows, threads=threads,
                        privatize_kwargs=privatize_kwargs)
        return kn.apply(values, offset) if rows is None else kn.apply_indexed(values, rows)

    return _dispatch(data, columns, noiser)


def _index_rows(data: Any, index: Any) -> np.ndarray:
    """The global row indices named by ``index`` (a column name or an integer array), checked."""
    mod = type(data).__module__.split(".")[0]
    if isinstance(index, str):
        if mod == "pandas" and hasattr(data, "columns") and index in data.columns:
            col = data[index]
            if col.isna().any():
                raise ValueError(f"index column {index!r} has nulls")
            arr = col.to_numpy()
        elif mod == "pyarrow" and hasattr(data, "schema") and index in data.schema.names:
            col = data.column(index)
            if col.null_count:
                raise ValueError(f"index column {index!r} has nulls")
            arr = col.to_numpy() if hasattr(col, "to_numpy") else np.asarray(col)
        else:
            raise ValueError(f"index column {index!r} not found")
    else:
        arr = np.asarray(index)
    if arr.dtype.kind not in "iu" or arr.dtype.kind == "b":
        raise TypeError(f"index must hold integers (got dtype {arr.dtype})")
    n = data.size if isinstance(data, np.ndarray) else len(data)
    if arr.ndim != 1 and isinstance(data, np.ndarray) and arr.shape == data.shape:
        arr = arr.ravel()
    if arr.shape != (n,):
        raise ValueError(f"index must have one entry per row ({n}), got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("index values must be < 2**63")
    return arr.astype(np.int64)


def pick_column(spec: Any, col: str, name: str, optional: bool = False) -> Any:
    """The entry of a per-column argument for column ``col``.

    ``spec`` is one value for every column, or a mapping ``{column: value}``; a missing column is a
    ValueError naming ``name``, or ``None`` when ``optional``.
    """
    if isinstance(spec, Mapping):
        if col in spec:
            return spec[col]
        if optional:
            return None
        raise ValueError(f"{name} has no entry for column {col!r}")
    return spec


def single_column_name(columns: Any, default: Any) -> str:
    """The stream label of a one-column input: ``columns`` (a str), else ``default`` if a str, else ``""``."""
    if columns is None:
        return default if isinstance(default, str) else ""
    if isinstance(columns, str):
        return columns
    raise TypeError("columns must be a single name (a str) for a one-column input")


def column_names(columns: Any, available: Iterable[str]) -> list[str]:
    """The columns to privatise of a table: ``columns`` (a name or a list) checked against ``available``.

    Required, non-empty, strings, present and without repeats; each failure is a ValueError or TypeError
    that names the column.
    """
    if columns is None:
        raise ValueError("columns is required for tables: name the columns to privatise")
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ValueError("columns must name at least one column")
    avail = list(available)
    for c in names:
        if not isinstance(c, str):
            raise TypeError(f"column names must be strings, not {type(c).__name__}")
        if c not in avail:
            raise ValueError(f"column {c!r} not found (columns: {', '.join(map(str, avail))})")
    if len(set(names)) != len(names):
        raise ValueError("columns lists a column twice")
    return names


def _fill_nulls(values: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    if valid is None or valid.all():
        return values
    values = np.array(values, dtype=np.float64 if values.dtype.kind in "iub" else values.dtype)
    values[~valid] = 0
    return values


def _noised(noiser: Noiser, col: str, values: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Noise for one column; null positions are padded with a placeholder (their output is discarded)."""
    return noiser(col, _fill_nulls(values, valid))


def output_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a privatised column: float32 stays float32, every other numeric dtype becomes float64."""
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def _dispatch(data: Any, columns: Any, noiser: Noiser) -> Any:
    if isinstance(data, np.ndarray):
        return _numpy(data, columns, noiser)
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas":
        return _pandas(data, columns, noiser)
    if mod == "pyarrow":
        return privatize_pyarrow(data, columns, noiser)
    if isinstance(data, (list, tuple)):
        raise TypeError("data must be an array or a table; convert lists with numpy.asarray first")
    raise TypeError(f"data must be a numpy array, pandas Series/DataFrame or pyarrow Array/Table, not {type(data).__name__}")


def _numpy(data: np.ndarray, columns: Any, noiser: Noiser) -> np.ndarray:
    name = single_column_name(columns, "")
    if data.dtype.kind == "b" or data.dtype.kind not in "iuf":
        raise TypeError(f"data must be numeric (got dtype {data.dtype})")
    if isinstance(data, np.ma.MaskedArray):
        valid = ~np.ma.getmaskarray(data).ravel()
        vals = np.ma.getdata(data).ravel()
        out = _noised(noiser, name, vals, valid).astype(output_dtype(data.dtype), copy=False)
        return np.ma.MaskedArray(out.reshape(data.shape), mask=~valid.reshape(data.shape))
    out = noiser(name, data.ravel())
    return out.astype(output_dtype(data.dtype), copy=False).reshape(data.shape)


def _pandas_column(s: Any, name: str, noiser: Noiser) -> Any:
    import pandas as pd

    if not (pd.api.types.is_numeric_dtype(s.dtype)) or pd.api.types.is_bool_dtype(s.dtype):
        raise TypeError(f"column {name!r} must be numeric (got dtype {s.dtype})")
    valid = s.notna().to_numpy()
    nullable = isinstance(s.dtype, pd.api.extensions.ExtensionDtype)
    np_dtype: Any
    if nullable:
        vals = s.to_numpy(dtype=np.float64, na_value=0.0)
        np_dtype = np.float32 if str(s.dtype) == "Float32" else np.float64
    else:
        vals = s.to_numpy()
        np_dtype = output_dtype(vals.dtype)
    out = _noised(noiser, name, vals, valid).astype(np_dtype, copy=False)
    if nullable:
        arr = pd.array(out, dtype="Float32" if np_dtype == np.float32 else "Float64")
        arr[~valid] = pd.NA
        return pd.Series(arr, index=s.index, name=s.name)
    if not valid.all():
        out = out.copy()
        out[~valid] = np.nan
    return pd.Series(out, index=s.index, name=s.name)


def _pandas(data: Any, columns: Any, noiser: Noiser) -> Any:
    import pandas as pd

    if isinstance(data, pd.Series):
        return _pandas_column(data, single_column_name(columns, data.name), noiser)
    if isinstance(data, pd.DataFrame):
        avail = list(data.columns)
        names = column_names(columns, [c for c in avail if isinstance(c, str)])
        if len(set(avail)) != len(avail):
            raise ValueError("the DataFrame has duplicate column names")
        out = data.copy(deep=False)
        for c in names:
            out[c] = _pandas_column(data[c], c, noiser)
        return out
    raise TypeError(f"unsupported pandas object {type(data).__name__} (use a Series or DataFrame)")


def _arrow_column(col: Any, name: str, noiser: Noiser) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    chunked = isinstance(col, pa.ChunkedArray)
    arr = col.combine_chunks() if chunked else col
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        raise TypeError(f"column {name!r} must be numeric (got type {t})")
    out_type = pa.float32() if pa.types.is_float32(t) else pa.float64()
    if pa.types.is_float16(t):
        arr = arr.cast(pa.float32())
    valid = None
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        vals = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False)
    else:
        vals = arr.to_numpy(zero_copy_only=False)
    out = _noised(noiser, name, vals, valid).astype(out_type.to_pandas_dtype(), copy=False)
    res = pa.array(out, type=out_type, mask=None if valid is None else ~valid)
    return pa.chunked_array([res], type=out_type) if chunked else res


def privatize_pyarrow(data: Any, columns: Any, noiser: Noiser) -> Any:
    """The pyarrow Array, ChunkedArray, RecordBatch or Table ``data`` with ``noiser`` applied to ``columns``.

    Nulls stay null; the privatised fields become nullable float64 (float32 stays float32) with their
    metadata kept.
    """
    import pyarrow as pa

    if isinstance(data, (pa.Array, pa.ChunkedArray)):
        return _arrow_column(data, single_column_name(columns, ""), noiser)
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        avail = data.schema.names
        if len(set(avail)) != len(avail):
            raise ValueError("the table has duplicate column names")
        names = column_names(columns, avail)
        cols = list(data.columns)
        fields = list(data.schema)
        for c in names:
            i = avail.index(c)
            cols[i] = _arrow_column(cols[i], c, noiser)
            fields[i] = pa.field(c, cols[i].type, nullable=True, metadata=fields[i].metadata)
        schema = pa.schema(fields, metadata=data.schema.metadata)
        if isinstance(data, pa.Table):
            return pa.Table.from_arrays(cols, schema=schema)
        return pa.RecordBatch.from_arrays(cols, schema=schema)
    raise TypeError(f"unsupported pyarrow object {type(data).__name__} (use an Array, ChunkedArray, RecordBatch or Table)")

