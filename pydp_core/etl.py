"""Noise for columnar data: numpy arrays, pandas Series and DataFrames, pyarrow arrays and tables.

:func:`privatize` adds a mechanism's noise to the chosen columns and returns the same kind of object
it was given, with nulls kept as nulls and the other columns untouched. It is the one code path behind
the ``pydp-core privatize`` command and the Spark and Dask front ends
(:mod:`pydp_core.spark`, :mod:`pydp_core.dask`).

Keyed noise (reproducible, partition-independent)
-------------------------------------------------
With a 256-bit secret ``key``, the noise of a value depends only on (key, column name, global row
index): row ``i`` of column ``c`` gets the ``i mod B``-th value of the stream

    Random(HMAC-SHA256(key, "pydp_core.etl/column" || 0x00 || c)).stream(i // B),   B = block_rows,

computed by one ``mechanism.privatize(block, rng=stream)`` call over the whole block of ``B`` rows (rows of
the block that a call does not hold are padded and discarded). So:

- processing a column in pieces (``offset=``), by Parquet row group or CSV batch, by Spark or Dask
  partition, in any order, gives bit-for-bit the output of processing it in one piece;
- a retried or recomputed piece reproduces its noise exactly, so recomputation cannot average noise away;
- different rows, blocks and columns get independent noise (distinct streams of a keyed CSPRNG).

This rests on one property of the noise, which tests/test_etl.py checks: it is added elementwise, and
the noise of position ``j`` depends on the stream and on ``j`` only, not on the values.

Releases: with the project's Laplace and Gaussian mechanisms each value is released on the
floating-point-safe path (exact discrete noise on a power-of-two grid, :mod:`pydp_core.discrete`) as one
scalar query with the mechanism's sensitivity (:func:`privatizer`); ``release=False`` selects
floating-point noise for simulations. Logistic and Subbotin noise have no safe path and are refused
unless ``release=False``.

The key is a secret. Generate it once per release (:func:`generate_key`, or ``pydp-core keygen``, which
writes it with owner-only permissions), keep it out of logs, job arguments and notebooks, and never reuse
it for another release: two releases with one key carry the same noise, and their difference reveals the
change in the data exactly. Without a key a fresh one is drawn from OS entropy for the call (and thrown
away), which is right for a one-shot release but not reproducible.

Clamping and sensitivity
------------------------
``bounds=(lower, upper)`` clamps the values before noise is added; nothing is clamped without it, and
values must then be finite. The sensitivity is the mechanism's: :func:`sensitivity_from_bounds` gives
``upper - lower`` (the sensitivity of releasing one record's value) when you ask for it, for instance
``mechanism(..., sensitivity="bounds", bounds=(0, 100))``.
"""
from __future__ import annotations

import hashlib
import hmac
import math
import os
import secrets
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

__all__ = [
    "privatize",
    "generate_key",
    "load_key",
    "sensitivity_from_bounds",
    "mechanism",
    "KeyedNoise",
    "BLOCK_ROWS",
    "KEY_BYTES",
]

#: Rows per keyed block (the unit of one ``mechanism.privatize`` call): part of the definition of the
#: noise, so every piece of one release must use the same value.
BLOCK_ROWS = 1 << 20
#: Length of a release key in bytes (256 bits).
KEY_BYTES = 32

_MECHANISMS = {
    "laplace": "LaplaceMechanism",
    "gaussian": "GaussianMechanism",
    "logistic": "LogisticMechanism",
    "subbotin": "SubbotinMechanism",
}


# -- keys -------------------------------------------------------------------------------------------------
def generate_key() -> bytes:
    """A fresh 256-bit release key from the operating system's CSPRNG."""
    return secrets.token_bytes(KEY_BYTES)


def check_key(key: Any, name: str = "key") -> bytes:
    """``key`` as 32 bytes, or a TypeError/ValueError naming ``name`` (the key itself is never printed)."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
    else:
        raise TypeError(f"{name} must be {KEY_BYTES} bytes (see pydp_core.etl.generate_key), not {type(key).__name__}")
    if len(raw) != KEY_BYTES:
        raise ValueError(f"{name} must be exactly {KEY_BYTES} bytes (256 bits), got {len(raw)} bytes")
    return raw


def parse_key(data: bytes, name: str = "key file") -> bytes:
    """A key from a key file's content: 64 hexadecimal digits (what ``keygen`` writes) or 32 raw bytes."""
    text = data.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    if len(data) == KEY_BYTES:
        return bytes(data)
    raise ValueError(f"{name} must hold {2 * KEY_BYTES} hexadecimal digits or {KEY_BYTES} raw bytes")


def load_key(path: str | os.PathLike) -> bytes:
    """Read a key written by :func:`write_key` / ``pydp-core keygen``.

    Raises ``PermissionError`` if the file can be read or written by group or others (POSIX), as ssh
    does for private keys.
    """
    with open(path, "rb") as fh:
        if os.name == "posix":
            mode = os.fstat(fh.fileno()).st_mode
            if mode & 0o077:
                raise PermissionError(
                    f"key file {os.fspath(path)!r} is accessible by group or others (mode {mode & 0o777:o}); "
                    "run chmod 600 on it"
                )
        data = fh.read(4 * KEY_BYTES + 1)
    return parse_key(data, f"key file {os.fspath(path)!r}")


def write_key(path: str | os.PathLike, key: bytes | None = None, *, overwrite: bool = False) -> None:
    """Write ``key`` (default: a fresh one) as 64 hex digits, readable and writable by the owner only.

    The file is created with mode 0600 from the start (no window with wider permissions); an existing
    file is refused unless ``overwrite``, in which case it is replaced atomically.
    """
    raw = check_key(generate_key() if key is None else key)
    payload = (raw.hex() + "\n").encode("ascii")
    path = os.fspath(path)
    if not overwrite:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        return
    from ._atomic import atomic_output

    with atomic_output(path, mode=0o600) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(payload)


def column_key(key: bytes, column: str) -> bytes:
    """The per-column key HMAC-SHA256(key, "pydp_core.etl/column" 0x00 column)."""
    return hmac.new(key, b"pydp_core.etl/column\x00" + column.encode("utf-8"), hashlib.sha256).digest()


# -- bounds, sensitivity and mechanisms ------------------------------------------------------------------
def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float] | None:
    if bounds is None:
        return None
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lower, upper)") from None
    out = []
    for v, which in ((lo, "lower"), (hi, "upper")):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}: {which} bound must be a real number, not {type(v).__name__}")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{name}: {which} bound must be finite, got {f}")
        if isinstance(v, (int, np.integer)) and int(f) != int(v):
            raise ValueError(f"{name}: {which} bound {v} is not exactly representable in float64")
        out.append(f)
    if not out[0] < out[1]:
        raise ValueError(f"{name} must satisfy lower < upper, got ({out[0]}, {out[1]})")
    return out[0], out[1]


def sensitivity_from_bounds(bounds: Any) -> float:
    """``upper - lower``: the sensitivity of releasing one clamped value (add/remove-free replacement)."""
    lo, hi = check_bounds(bounds)  # type: ignore[misc]
    d = hi - lo
    if not math.isfinite(d):
        raise ValueError("bounds: upper - lower overflows float64")
    return d


def mechanism(
    name: str,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float | str = 1.0,
    *,
    bounds: Any = None,
    r: float | None = None,
):
    """Build ``pydp_core.<Name>Mechanism`` by name ("laplace", "gaussian", "logistic", "subbotin").

    ``sensitivity="bounds"`` derives the sensitivity from ``bounds`` (:func:`sensitivity_from_bounds`);
    ``r`` is the Subbotin order.
    """
    import pydp_core

    if not isinstance(name, str) or name.lower() not in _MECHANISMS:
        raise ValueError(f"mechanism must be one of {', '.join(_MECHANISMS)}, got {name!r}")
    name = name.lower()
    if isinstance(sensitivity, str):
        if sensitivity != "bounds":
            raise ValueError(f"sensitivity must be a positive number or 'bounds', got {sensitivity!r}")
        if bounds is None:
            raise ValueError("sensitivity='bounds' needs bounds=(lower, upper)")
        sensitivity = sensitivity_from_bounds(bounds)
    if name == "subbotin" and r is None:
        raise ValueError("the subbotin mechanism needs its order r")
    if name != "subbotin" and r is not None:
        raise ValueError(f"r applies to the subbotin mechanism only, not {name}")
    cls = getattr(pydp_core, _MECHANISMS[name], None)
    if cls is None:
        raise RuntimeError(
            f"pydp_core.{_MECHANISMS[name]} is not available in this build (the mechanisms of the noise engine)"
        )
    if name == "subbotin":
        return cls(r, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    return cls(epsilon=epsilon, delta=delta, sensitivity=sensitivity)


def _require(extra: str, *modules: str) -> list:
    """Import ``modules`` or raise an ImportError naming the pydp_core extra that provides them."""
    import importlib

    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as exc:
        raise ImportError(f"pydp_core.{extra} needs {', '.join(modules)}: pip install 'pydp_core[{extra}]' ({exc})") from None


def _random_class():
    import pydp_core

    cls = getattr(pydp_core, "Random", None)
    if cls is None:
        raise RuntimeError("pydp_core.Random is not available in this build (the keyed generator of the noise engine)")
    return cls


def _check_mechanism(mech: Any, name: str = "mechanism") -> Any:
    if not callable(getattr(mech, "privatize", None)):
        raise TypeError(f"{name} must be a mechanism with a privatize(values, rng=...) method, not {type(mech).__name__}")
    return mech


def privatizer(mech: Any, kwargs: Mapping[str, Any]):
    """``f(values, rng)``: the noisy copy of a 1-D block of values, one value per row.

    For the project's additive mechanisms (``pydp_core.LaplaceMechanism`` etc.) with ``release=True``
    (the default) every value is released as one scalar query with the mechanism's sensitivity, by
    :func:`pydp_core.discrete.release_noise` (``vector=False``): exact discrete noise on a power-of-two
    grid fixed by the scale, the floating-point-safe path. (``mechanism.privatize`` on an array would
    instead treat the whole block as one vector query, with a grid that depends on the block length.)
    When each record is one row, the column is then (epsilon, delta)-DP for a change of one record
    (parallel composition); a record spread over several rows needs a group sensitivity.
    ``release=False`` is the mechanism's floating-point ``simulate`` path (not for releases). Any other
    object is called as ``mech.privatize(values, rng=rng, **kwargs)``.
    """
    from .mechanisms import AdditiveMechanism

    kw = dict(kwargs)
    if isinstance(mech, AdditiveMechanism):
        release = kw.pop("release", True)
        if kw:
            raise TypeError(f"unexpected arguments for {type(mech).__name__}: {', '.join(kw)}")
        if not release:
            return lambda values, rng: mech.simulate(values, rng=rng)
        from .discrete import release_noise

        noise, eps, delta, sens = mech.noise, mech.epsilon, mech.delta, mech.sensitivity
        return lambda values, rng: release_noise(noise, values, eps, delta, sens, rng, vector=False)
    return lambda values, rng: mech.privatize(values, rng=rng, **kw)


# -- the keyed block noise --------------------------------------------------------------------------------
class KeyedNoise:
    """Keyed, position-addressed noise for one column (see the module docstring).

    ``apply(values, start)`` privatises ``values`` holding the global rows ``start, start + 1, ...``;
    ``apply_indexed(values, rows)`` privatises values at arbitrary distinct global rows.
    ``valid`` (a boolean mask) marks non-null entries: nulls are padded, and their output is meaningless.
    """

    def __init__(
        self,
        mechanism: Any,
        key: bytes,
        column: str,
        *,
        bounds: Any = None,
        block_rows: int = BLOCK_ROWS,
        threads: int | None = None,
        privatize_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.mechanism = _check_mechanism(mechanism)
        if not isinstance(column, str):
            raise TypeError(f"column names must be strings, not {type(column).__name__}")
        self.column = column
        self.bounds = check_bounds(bounds)
        self.block_rows = _check_block_rows(block_rows)
        self.fill = 0.0 if self.bounds is None else self.bounds[0]
        self._privatize = privatizer(self.mechanism, privatize_kwargs or {})
        self._rng = _random_class()(column_key(check_key(key), column), threads=threads)

    def _block(self, b: int, padded: np.ndarray) -> np.ndarray:
        out = self._privatize(padded, self._rng.stream(b))
        out = np.asarray(out, dtype=np.float64)
        if out.shape != padded.shape:
            raise RuntimeError(f"mechanism.privatize returned shape {out.shape} for input shape {padded.shape}")
        return out

    def apply(self, values: np.ndarray, start: int) -> np.ndarray:
        values = _prepared(values, self.bounds, self.column)
        n = values.shape[0]
        start = _check_start(start)
        B = self.block_rows
        if n == B and start % B == 0:  # exactly one keyed block (the streaming case): no copy
            return self._block(start // B, np.ascontiguousarray(values))
        out = np.empty(n, dtype=np.float64)
        if n == 0:
            return out
        for b in range(start // B, (start + n - 1) // B + 1):
            lo, hi = max(start, b * B), min(start + n, (b + 1) * B)
            if lo == b * B and hi == (b + 1) * B:
                out[lo - start : hi - start] = self._block(b, np.ascontiguousarray(values[lo - start : hi - start]))
            else:
                padded = np.full(B, self.fill)
                padded[lo - b * B : hi - b * B] = values[lo - start : hi - start]
                out[lo - start : hi - start] = self._block(b, padded)[lo - b * B : hi - b * B]
        return out

    def apply_indexed(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        values = _prepared(values, self.bounds, self.column)
        rows = np.asarray(rows)
        if rows.dtype.kind not in "iu" or rows.shape != values.shape:
            raise TypeError("row indices must be an integer array of the same length as the values")
        rows = rows.astype(np.int64)
        if rows.size and rows.min() < 0:
            raise ValueError("row indices must be >= 0")
        out = np.empty(values.shape[0], dtype=np.float64)
        if rows.size == 0:
            return out
        order = np.argsort(rows, kind="stable")
        srt = rows[order]
        if np.any(srt[1:] == srt[:-1]):
            raise ValueError(f"row indices of column {self.column!r} are not unique")
        B = self.block_rows
        blocks = srt // B
        cuts = np.flatnonzero(np.diff(blocks)) + 1
        for seg in np.split(np.arange(srt.size), cuts):
            b = int(blocks[seg[0]])
            pos = srt[seg] - b * B
            idx = order[seg]
            padded = np.full(B, self.fill)
            padded[pos] = values[idx]
            out[idx] = self._block(b, padded)[pos]
        return out


def _check_block_rows(block_rows: Any) -> int:
    if isinstance(block_rows, (bool, np.bool_)) or not isinstance(block_rows, (int, np.integer)):
        raise TypeError("block_rows must be an int")
    if not 1 <= int(block_rows) <= 1 << 26:
        raise ValueError("block_rows must lie in [1, 2**26]")
    return int(block_rows)


def _check_start(start: Any) -> int:
    if isinstance(start, (bool, np.bool_)) or not isinstance(start, (int, np.integer)):
        raise TypeError("offset must be an int")
    if start < 0:
        raise ValueError("offset must be >= 0")
    return int(start)


def _prepared(values: np.ndarray, bounds: tuple[float, float] | None, column: str) -> np.ndarray:
    """float64 values, clamped to ``bounds`` when given; NaN (and inf without bounds) is an error."""
    arr = np.asarray(values)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"column {column!r} must be numeric (got dtype {arr.dtype})")
    if arr.ndim != 1:
        raise ValueError(f"column {column!r} must be one-dimensional")
    if arr.dtype.kind in "iu":
        f = arr.astype(np.float64)
        if f.size and np.any(np.abs(f) >= 2.0**53) and not np.array_equal(f.astype(arr.dtype), arr):
            raise ValueError(f"column {column!r} has integers too large to convert to float64 exactly")
        arr = f
    else:
        arr = arr.astype(np.float64, copy=False)
    if bounds is None:
        if not np.isfinite(arr).all():
            raise ValueError(
                f"column {column!r} has NaN or infinite values (use nulls for missing values, or bounds= to clamp)"
            )
        return arr
    if np.isnan(arr).any():
        raise ValueError(f"column {column!r} has NaN values (use nulls for missing values)")
    return np.clip(arr, bounds[0], bounds[1])


# -- the public entry point ------------------------------------------------------------------------------
def privatize(
    data: Any,
    mechanism: Any,
    *,
    columns: str | Sequence[str] | None = None,
    bounds: Any = None,
    key: bytes | None = None,
    rng: Any = None,
    offset: int = 0,
    index: Any = None,
    block_rows: int = BLOCK_ROWS,
    threads: int | None = None,
    **privatize_kwargs: Any,
):
    """Add ``mechanism``'s noise to ``data`` and return the same kind of object.

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

    Nulls (pandas NA/NaN, pyarrow nulls, masked entries) stay null. Numeric columns come back as
    float64 (float32 stays float32); other columns are untouched.
    """
    if key is not None and rng is not None:
        raise ValueError("give either key or rng, not both")
    if rng is None:
        key = generate_key() if key is None else check_key(key)
    elif index is not None:
        raise ValueError("index applies to keyed noise (key=), not to rng=")
    offset = _check_start(offset)
    if index is not None and offset != 0:
        raise ValueError("give either offset or index, not both")
    block_rows = _check_block_rows(block_rows)
    rows = None if index is None else _index_rows(data, index)

    def noiser(col: str, values: np.ndarray) -> np.ndarray:
        mech = _pick(mechanism, col, "mechanism")
        bnd = check_bounds(_pick(bounds, col, "bounds", optional=True))
        if rng is not None:
            arr = _prepared(values, bnd, col)
            out = np.asarray(privatizer(_check_mechanism(mech), privatize_kwargs)(arr, rng), dtype=np.float64)
            if out.shape != arr.shape:
                raise RuntimeError(f"mechanism.privatize returned shape {out.shape} for input shape {arr.shape}")
            return out
        kn = KeyedNoise(mech, key, col, bounds=bnd, block_rows=block_rows, threads=threads, privatize_kwargs=privatize_kwargs)
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


def _pick(spec: Any, col: str, name: str, optional: bool = False) -> Any:
    if isinstance(spec, Mapping):
        if col in spec:
            return spec[col]
        if optional:
            return None
        raise ValueError(f"{name} has no entry for column {col!r}")
    return spec


def _single_name(columns: Any, default: Any) -> str:
    if columns is None:
        return default if isinstance(default, str) else ""
    if isinstance(columns, str):
        return columns
    raise TypeError("columns must be a single name (a str) for a one-column input")


def _names(columns: Any, available: Iterable[str]) -> list[str]:
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


def _noised(noiser, col: str, values: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Noise for one column; null positions are padded with a placeholder (their output is discarded)."""
    return noiser(col, _fill_nulls(values, valid))


def _out_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def _dispatch(data: Any, columns: Any, noiser) -> Any:
    if isinstance(data, np.ndarray):
        return _numpy(data, columns, noiser)
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas":
        return _pandas(data, columns, noiser)
    if mod == "pyarrow":
        return _pyarrow(data, columns, noiser)
    if isinstance(data, (list, tuple)):
        raise TypeError("data must be an array or a table; convert lists with numpy.asarray first")
    raise TypeError(f"data must be a numpy array, pandas Series/DataFrame or pyarrow Array/Table, not {type(data).__name__}")


def _numpy(data: np.ndarray, columns: Any, noiser) -> np.ndarray:
    name = _single_name(columns, "")
    if data.dtype.kind == "b" or data.dtype.kind not in "iuf":
        raise TypeError(f"data must be numeric (got dtype {data.dtype})")
    if isinstance(data, np.ma.MaskedArray):
        valid = ~np.ma.getmaskarray(data).ravel()
        vals = np.ma.getdata(data).ravel()
        out = _noised(noiser, name, vals, valid).astype(_out_dtype(data.dtype), copy=False)
        return np.ma.MaskedArray(out.reshape(data.shape), mask=~valid.reshape(data.shape))
    out = noiser(name, data.ravel())
    return out.astype(_out_dtype(data.dtype), copy=False).reshape(data.shape)


def _pandas_column(s: Any, name: str, noiser) -> Any:
    import pandas as pd

    if not (pd.api.types.is_numeric_dtype(s.dtype)) or pd.api.types.is_bool_dtype(s.dtype):
        raise TypeError(f"column {name!r} must be numeric (got dtype {s.dtype})")
    valid = s.notna().to_numpy()
    nullable = isinstance(s.dtype, pd.api.extensions.ExtensionDtype)
    if nullable:
        vals = s.to_numpy(dtype=np.float64, na_value=0.0)
        np_dtype = np.float32 if str(s.dtype) == "Float32" else np.float64
    else:
        vals = s.to_numpy()
        np_dtype = _out_dtype(vals.dtype)
    out = _noised(noiser, name, vals, valid).astype(np_dtype, copy=False)
    if nullable:
        arr = pd.array(out, dtype="Float32" if np_dtype == np.float32 else "Float64")
        arr[~valid] = pd.NA
        return pd.Series(arr, index=s.index, name=s.name)
    if not valid.all():
        out = out.copy()
        out[~valid] = np.nan
    return pd.Series(out, index=s.index, name=s.name)


def _pandas(data: Any, columns: Any, noiser) -> Any:
    import pandas as pd

    if isinstance(data, pd.Series):
        return _pandas_column(data, _single_name(columns, data.name), noiser)
    if isinstance(data, pd.DataFrame):
        avail = list(data.columns)
        names = _names(columns, [c for c in avail if isinstance(c, str)])
        if len(set(avail)) != len(avail):
            raise ValueError("the DataFrame has duplicate column names")
        out = data.copy(deep=False)
        for c in names:
            out[c] = _pandas_column(data[c], c, noiser)
        return out
    raise TypeError(f"unsupported pandas object {type(data).__name__} (use a Series or DataFrame)")


def _arrow_column(col: Any, name: str, noiser) -> Any:
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


def _pyarrow(data: Any, columns: Any, noiser) -> Any:
    import pyarrow as pa

    if isinstance(data, (pa.Array, pa.ChunkedArray)):
        return _arrow_column(data, _single_name(columns, ""), noiser)
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        avail = data.schema.names
        if len(set(avail)) != len(avail):
            raise ValueError("the table has duplicate column names")
        names = _names(columns, avail)
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


# -- files ------------------------------------------------------------------------------------------------
def file_format(path: str, fmt: str | None = None) -> str:
    """"parquet" or "csv", from ``fmt`` or the file name (.parquet/.pq/.parq, .csv/.csv.gz/.csv.bz2)."""
    if fmt is not None:
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format must be 'parquet' or 'csv', got {fmt!r}")
        return fmt
    low = os.fspath(path).lower()
    if low.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if low.endswith((".csv", ".csv.gz", ".csv.bz2", ".tsv")):
        return "csv"
    raise ValueError(f"cannot tell the format of {os.fspath(path)!r} from its name: give format='parquet' or 'csv'")


def privatize_file(
    source: str | os.PathLike,
    target: str | os.PathLike,
    columns: str | Sequence[str],
    mechanism: Any,
    *,
    key: bytes | None = None,
    bounds: Any = None,
    format: str | None = None,
    output_format: str | None = None,
    batch_rows: int = BLOCK_ROWS,
    block_rows: int = BLOCK_ROWS,
    overwrite: bool = False,
    progress: Any = None,
    compression: str | None = "snappy",
    **privatize_kwargs: Any,
) -> int:
    """Privatise ``columns`` of a Parquet or CSV file into ``target``, streaming; returns the row count.

    The file is read ``batch_rows`` rows at a time (Parquet batches cross row groups; CSV is read in
    blocks), so files larger than memory work. The output is written to a temporary file next to
    ``target`` and renamed over it only when complete: an error, Ctrl-C or SIGTERM leaves no partial
    output, and the input is only ever read. ``target`` must not be ``source`` (refused, whatever
    ``overwrite`` says); an existing ``target`` is refused unless ``overwrite``.
    The noise is keyed by (key, column, row index), so a rerun with the same key writes the same file.
    ``progress`` is called with the number of rows of each batch written (e.g. ``tqdm.update``).
    CSV: the privatised columns are read as float64 and the others as text, which is copied unchanged
    (quoted on output).
    """
    from ._atomic import Pipeline, atomic_output, same_file

    source, target = os.fspath(source), os.fspath(target)
    fmt_in = file_format(source, format)
    if output_format is not None:
        fmt_out = file_format(target, output_format)
    else:
        try:
            fmt_out = file_format(target)
        except ValueError:
            fmt_out = fmt_in
    names = [columns] if isinstance(columns, str) else list(columns)
    if not os.path.exists(source):
        raise FileNotFoundError(f"input file {source!r} does not exist")
    if not os.path.isfile(source):
        raise IsADirectoryError(f"input {source!r} is not a regular file")
    if same_file(source, target):
        raise ValueError(f"refusing to overwrite the input file {source!r}: choose another output")
    if os.path.exists(target) and not overwrite:
        raise FileExistsError(f"output {target!r} exists (use --force / overwrite=True to replace it)")
    if os.path.isdir(target):
        raise IsADirectoryError(f"output {target!r} is a directory")
    key = generate_key() if key is None else check_key(key)
    batch_rows = _check_block_rows(batch_rows)
    noisers: dict[str, KeyedNoise] = {}
    for c in _names(names, _file_columns(source, fmt_in)):
        noisers[c] = KeyedNoise(
            _pick(mechanism, c, "mechanism"), key, c, bounds=_pick(bounds, c, "bounds", optional=True),
            block_rows=block_rows, privatize_kwargs=privatize_kwargs,
        )

    def noiser(col: str, values: np.ndarray) -> np.ndarray:
        return noisers[col].apply(values, start)

    rows = 0
    state: dict[str, Any] = {"writer": None}

    def write(out: Any) -> None:  # runs in the writer thread
        if state["writer"] is None:
            state["writer"] = _open_writer(tmp, fmt_out, out.schema, compression, list(noisers))
        state["writer"].write(out)
        if progress is not None:
            progress(out.num_rows)

    with atomic_output(target) as tmp:
        # Reading, noise and writing overlap: a reader thread and a writer thread around this one (pyarrow
        # and the samplers release the GIL). The output is renamed into place only after the writer is done.
        pipe = Pipeline(_read_batches(source, fmt_in, list(noisers), batch_rows), write)
        try:
            for batch in pipe.items():
                start = rows
                pipe.put(_pyarrow(batch, list(noisers), noiser))
                rows += batch.num_rows
            pipe.finish()
        finally:
            pipe.close()
            if state["writer"] is not None:
                state["writer"].close()
        if state["writer"] is None:  # empty input: write the (privatised) schema
            _open_writer(tmp, fmt_out, _empty_schema(source, fmt_in, list(noisers)), compression, list(noisers)).close()
    return rows


def _file_columns(source: str, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(source).schema_arrow.names
    return _csv_header(source)


def _csv_header(source: str) -> list[str]:
    import pyarrow.csv as pcsv

    return pcsv.open_csv(source, read_options=pcsv.ReadOptions(block_size=1 << 16)).schema.names


def _csv_reader(source: str, columns: list[str], block_bytes: int):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = _csv_header(source)
    types = {c: (pa.float64() if c in columns else pa.string()) for c in header}
    return pcsv.open_csv(
        source,
        read_options=pcsv.ReadOptions(block_size=block_bytes),
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False),
    )


def _read_batches(source: str, fmt: str, columns: list[str], batch_rows: int):
    if fmt == "parquet":
        import pyarrow.parquet as pq

        # pre_buffer=False: the default pre-buffering keeps every column chunk read so far in memory
        # (the whole file by the end); a buffered stream keeps memory at about one batch.
        pf = pq.ParquetFile(source, pre_buffer=False, buffer_size=1 << 22)
        yield from pf.iter_batches(batch_size=batch_rows)
        return
    # About 16 bytes a value for a float column: aim for batch_rows rows per block.
    reader = _csv_reader(source, columns, max(1 << 20, min(1 << 30, batch_rows * 16)))
    for batch in reader:
        yield batch


def _empty_schema(source: str, fmt: str, columns: list[str]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(source).schema_arrow if fmt == "parquet" else _csv_reader(source, columns, 1 << 20).schema
    fields = [pa.field(f.name, pa.float32() if pa.types.is_float32(f.type) else pa.float64()) if f.name in columns else f for f in schema]
    return pa.schema(fields, metadata=schema.metadata)


class _Writer:
    def __init__(self, inner: Any, kind: str) -> None:
        self.inner, self.kind = inner, kind

    def write(self, batch: Any) -> None:
        if self.kind == "parquet":
            self.inner.write_batch(batch)
        else:
            self.inner.write(batch)

    def close(self) -> None:
        self.inner.close()


def _open_writer(path: str, fmt: str, schema: Any, compression: str | None, noisy: list[str]) -> _Writer:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        # Noisy floats are (almost) all distinct: a dictionary would only cost time.
        plain = [n for n in schema.names if n not in noisy]
        return _Writer(pq.ParquetWriter(path, schema, compression=compression or "none", use_dictionary=plain or False), "parquet")
    import pyarrow.csv as pcsv

    return _Writer(pcsv.CSVWriter(path, schema), "csv")
