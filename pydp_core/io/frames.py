"""Noise for in-memory columnar data: numpy arrays, pandas Series and DataFrames, pyarrow arrays and tables.

Over 600 lines (about 460 of code) because each of the five container kinds needs its own reading and
rebuilding of columns around the one shared release step.
"""
from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Callable

import numpy as np

from .._arrays import as_ndarray, is_foreign
from .._safety import check_release_rng
from .._validation import check_int
from .keyed import (
    KeyedNoise,
    check_chargeable,
    check_contributions,
    check_mechanism,
    pick_column,
    precheck_charges,
    prepared_values,
    privatizer,
    release_bounds,
    release_description,
)
from .keys import BLOCK_ROWS, check_key, generate_key, release_id
from .ledger import _RECORDED_AT_DRIVER, KeyLedger, KeyReuseError, SessionLedger, ledger_for_key, unrecorded_refused
from .nulls import DEFAULT, Policies, describe_nulls, dropped_columns, fill_nulls, kept_rows, null_policies, with_nulls

#: The key of the release report in pandas ``attrs`` and Arrow / Parquet schema metadata.
REPORT_KEY = "pydp_core.release"

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
    ledger: Any = None,
    accountant: Any = None,
    sensitivity_holds: bool = False,
    simulation: bool = False,
    privacy_unit: Any = None,
    max_contributions: int = 1,
    nulls: Any = None,
    **privatize_kwargs: Any,
) -> Any:
    """Add ``mechanism``'s noise to ``data`` and return the same kind of object.

    With a ``key`` the noise of a value is a function of (key, column, row index) only, so pieces,
    partitions and retries reproduce it exactly (docs/io.md). Every piece is recorded in the key's
    ledger before its noise is drawn: a second release under the key with other values is refused
    (:class:`~pydp_core.io.KeyReuseError`).

    Parameters
    ----------
    data:
        a numpy array (numeric; a ``numpy.ma.MaskedArray``'s masked entries are nulls), a pandas Series or
        DataFrame, or a pyarrow Array, ChunkedArray, RecordBatch or Table. Multi-dimensional numpy arrays
        are privatised element by element in C order. A polars DataFrame, LazyFrame (collected) or Series
        goes through pyarrow and comes back as its kind, the report in ``attrs``. Any other array offering
        DLPack or ``__array__``
        (a torch CPU tensor, a jax array) is read as a numpy array without a copy and the result comes
        back as its kind (``pydp_core._arrays``).
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
        instead of a key, a generator passed straight to the mechanism; the noise then depends on how
        the data is split. A seeded ``pydp_core.Random`` or a ``numpy.random.Generator`` is refused for a
        release unless ``simulation=True``.
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
    ledger:
        the use record of ``key`` (:mod:`pydp_core.io.ledger`): ``None`` (the default) the key's
        ledger in :func:`~pydp_core.io.ledger.state_dir`; a path (``"<key file>.ledger"``) or a
        :class:`~pydp_core.io.KeyLedger`, each consulted together with the key's state-directory ledger.
        There is no switch that skips the record.
    accountant:
        an :class:`~pydp_core.Accountant` charged once per column before its noise is drawn (pieces of one
        release under one key are charged once; an exact repeat is not charged again).
    sensitivity_holds:
        declare that the mechanism's sensitivity holds for columns without bounds (for instance
        already-aggregated values); without it a column without bounds is refused. Recorded in the
        release report.
    simulation:
        allow a seeded or numpy ``rng``, and floating-point noise (``release=False``) under a key, without
        refusal or warning; the output is labelled a simulation in the release report.
    privacy_unit:
        the person (or other unit) each row belongs to: a column name or an array of ids. The guarantee is
        then per person: a person may hold at most ``max_contributions`` rows (else ``ValueError``), each
        of which is one release, so the report's ``budget_per_unit`` (and the accountant's charge) is
        ``max_contributions`` times the per-row budget. Without it the guarantee is per row.
    max_contributions:
        with ``privacy_unit``, the most rows one person may hold (default 1).
    nulls:
        what happens to the missing values of the privatised columns (:mod:`pydp_core.io.nulls`, the rule
        of :func:`~pydp_core.io.privatize_file` and ``pydp-core privatize --nulls``): ``"keep"`` (the
        default: a null stays null), ``"drop"`` (a row with a null in the column is left out: the output
        has fewer rows, numbered on without gaps from ``offset``, and ``index`` keeps the entries of the
        rows kept) or ``"replace=VALUE"`` (the null becomes VALUE and is noised like any value), for every
        column or as ``{column: policy}``. A plain numpy array's NaN are its missing values once a policy
        is given (without one they are refused); a multi-dimensional array cannot drop rows. No policy
        changes a sensitivity or a budget; a policy other than ``"keep"`` is part of the release's
        description and of its report (``nulls``).
    privatize_kwargs:
        passed on to ``mechanism.privatize`` (e.g. ``release=``).

    The release report (the mechanisms, bounds, ``sensitivity_holds`` and ``simulation``) is attached
    to pandas output as ``attrs["pydp_core.release"]`` and to pyarrow tables and record batches as the
    schema metadata key ``pydp_core.release`` (JSON).

    Returns
    -------
    object
        The same kind of object as ``data``. Nulls (pandas NA/NaN, pyarrow nulls, masked entries) stay
        null unless ``nulls`` says otherwise; privatised numeric columns come back as float64 (float32
        stays float32); other columns are untouched (but for the rows ``nulls="drop"`` leaves out).

    Raises
    ------
    TypeError
        If ``data`` is not a supported kind, a column is not numeric, or an argument has the wrong type.
    ValueError
        If a column is missing, a value is not finite without ``bounds``, both ``key`` and ``rng`` (or
        ``offset`` and ``index``) are given, the index is not unique and non-negative, a column has no
        bounds without ``sensitivity_holds``, the bounds exceed the sensitivity, or ``rng`` is seeded
        without ``simulation``, or ``nulls`` is not a policy (or names a column that is not privatised).
    KeyReuseError
        If the key's ledger holds other values for rows of this release.
    BudgetExceededError
        If ``accountant`` would exceed its limit (nothing is released).

    Examples
    --------
    >>> import pandas as pd
    >>> import pydp_core as dp
    >>> key = bytes(range(32))  # a fixed key for this example only: use dp.io.generate_key()
    >>> mech = dp.LaplaceMechanism(epsilon=1.0, sensitivity=6.0)
    >>> x = np.arange(6.0)
    >>> first = dp.privatize(x[:4], mech, key=key, bounds=(0, 6))
    >>> rest = dp.privatize(x[4:], mech, key=key, bounds=(0, 6), offset=4)   # the next piece
    >>> bool(np.array_equal(first, dp.privatize(x[:4], mech, key=key, bounds=(0, 6))))   # an exact repeat
    True
    >>> dp.privatize(x[4:] + 1, mech, key=key, bounds=(0, 6))   # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    KeyReuseError: rows 0..1 of column '' were released under this key with other values ...
    >>> df = pd.DataFrame({"age": [30.0, None, 50.0], "id": [1, 2, 3]})
    >>> out = dp.privatize(df, mech, key=bytes(range(1, 33)), columns="age", sensitivity_holds=True)
    >>> out["age"].isna().tolist(), out["id"].tolist()
    ([False, True, False], [1, 2, 3])
    >>> dp.privatize(df, mech, key=bytes(range(2, 34)), columns="age", sensitivity_holds=True,
    ...              nulls="drop")["id"].tolist()   # the row with a null is left out
    [1, 3]
    """
    if key is not None and rng is not None:
        raise ValueError("give either key or rng, not both")
    data, columns, restore = _as_supported(data, columns)
    release = privatize_kwargs.get("release", True) is not False
    release_key, key_ledger = _noise_source(key, rng, index, ledger, release=release, simulation=simulation)
    rid = None
    offset = check_int(offset, "offset", 0)
    if index is not None and offset != 0:
        raise ValueError("give either offset or index, not both")
    block_rows = check_int(block_rows, "block_rows", 1, 1 << 26)
    if columns is None and _is_table(data):
        column_names(None, ())  # the missing columns are the error, not a nulls mapping that names one
    described = _described_columns(data, columns)
    policies = null_policies(nulls, [described] if isinstance(described, str) else described)
    if rng is None:
        rid = release_id(with_nulls(release_description(mechanism, columns=described, bounds=bounds,
                                                        block_rows=block_rows, privatize_kwargs=privatize_kwargs),
                                    policies))
    rows = None if index is None else _index_rows(data, index)
    contributions = _contributions(data, privacy_unit, max_contributions)
    nan_is_null = nulls is not None
    data, kept = drop_null_rows(data, columns, policies, nan_is_null=nan_is_null)
    if kept is not None and rows is not None:
        rows = rows[kept]
    if rid is not None:
        precheck_charges(accountant, key_ledger, rid, mechanism, [described] if isinstance(described, str) else described,
                         simulated=not release, contributions=contributions)
    report: dict[str, Any] = {"columns": {}, "sensitivity_holds": sensitivity_holds, "simulation": simulation,
                              "release": release, "max_contributions": contributions if privacy_unit is not None else None}
    if describe_nulls(policies) is not None:
        report["nulls"] = describe_nulls(policies)

    def noiser(col: str, values: np.ndarray) -> np.ndarray:
        mech = pick_column(mechanism, col, "mechanism")
        bnd = pick_column(bounds, col, "bounds", optional=True)
        if rng is not None:
            bnd = release_bounds(check_mechanism(mech), bnd, col, sensitivity_holds)
            note_column(report, col, mech, bnd)
            if accountant is not None:
                for _ in range(contributions):
                    check_chargeable(mech).charge(accountant, release=release)
            arr = prepared_values(values, bnd, col)
            out = np.asarray(privatizer(mech, privatize_kwargs)(arr, rng), dtype=np.float64)
            if out.shape != arr.shape:
                raise RuntimeError(f"mechanism.privatize returned shape {out.shape} for input shape {arr.shape}")
            return out
        kn = KeyedNoise(mech, release_key, col, bounds=bnd, block_rows=block_rows, threads=threads,
                        privatize_kwargs=privatize_kwargs, release=rid, contributions=contributions, ledger=key_ledger,
                        accountant=accountant,
                        sensitivity_holds=sensitivity_holds, simulation=simulation)
        note_column(report, col, mech, kn.bounds)
        return kn.apply(values, offset) if rows is None else kn.apply_indexed(values, rows)

    out = attach_report(_dispatch(data, columns, noiser, policies, nan_is_null), report)
    return out if restore is None else restore(out)


def _noise_source(key: bytes | None, rng: Any, index: Any, ledger: Any, *, release: bool,
                  simulation: bool) -> tuple[bytes, Any]:
    """``(release key, key ledger)`` of a keyed release (a fresh key when ``key`` is None); with ``rng``
    instead, an empty key and the driver's marker, after the checks that apply to a generator."""
    if rng is None:
        return (generate_key() if key is None else check_key(key)), release_ledger(key, ledger)
    if index is not None:
        raise ValueError("index applies to keyed noise (key=), not to rng=")
    if release:
        check_release_rng(rng, simulation)
    return b"", _RECORDED_AT_DRIVER


def _contributions(data: Any, privacy_unit: Any, max_contributions: int) -> int:
    """The rows one person may hold: checked on every row, as the file path does (dropping rows only lowers
    the counts); 1 without ``privacy_unit``."""
    if privacy_unit is not None:
        return check_contributions(_unit_ids(data, privacy_unit), max_contributions)
    if max_contributions != 1:
        raise ValueError("max_contributions applies with privacy_unit (the rows of each person)")
    return 1


def _as_supported(data: Any, columns: Any) -> tuple[Any, Any, Callable[[Any], Any] | None]:
    """``(data, columns, restore)``: polars data as pyarrow and other foreign arrays as numpy, with the
    function that turns the result back into their kind (None for data already supported); a polars
    Series' name is the default column label."""
    if type(data).__module__.split(".")[0] == "polars":
        if columns is None and isinstance(getattr(data, "name", None), str):  # a Series: its name labels the stream
            columns = data.name
        data, restore = _from_polars(data)
        return data, columns, restore
    if is_foreign(data) and type(data).__module__.split(".")[0] not in ("pandas", "pyarrow"):
        data, restore = as_ndarray(data, "data", keep_float32=True)
        return data, columns, restore
    return data, columns, None


def _from_polars(data: Any) -> tuple[Any, Callable[[Any], Any]]:
    """A polars DataFrame, LazyFrame or Series as pyarrow (a LazyFrame is collected), and the function that
    turns the privatised pyarrow result back into the same kind, its release report in ``attrs``."""
    import json

    from .._validation import require_extra

    (pl,) = require_extra("polars", "polars")
    lazy = isinstance(data, pl.LazyFrame)
    if not isinstance(data, (pl.DataFrame, pl.LazyFrame, pl.Series)):
        raise TypeError(f"data must be a polars DataFrame, LazyFrame or Series, not {type(data).__name__}")
    table = (data.collect() if lazy else data).to_arrow()

    def restore(out: Any) -> Any:
        meta = getattr(getattr(out, "schema", None), "metadata", None) or {}
        result = pl.from_arrow(out.replace_schema_metadata(None) if meta else out)
        if isinstance(data, pl.Series):
            result = result.alias(data.name)
        result = result.lazy() if lazy else result
        if REPORT_KEY.encode() in meta:  # polars frames carry no schema metadata
            result.attrs = {REPORT_KEY: json.loads(meta[REPORT_KEY.encode()])}
        return result

    return table, restore


def _is_table(data: Any) -> bool:
    """True for a pandas DataFrame or a pyarrow Table or RecordBatch (whose columns must be named)."""
    mod = type(data).__module__.split(".")[0]
    return (mod == "pandas" and hasattr(data, "columns")) or (mod == "pyarrow" and hasattr(data, "schema"))


def _described_columns(data: Any, columns: Any) -> Any:
    """The columns of a release as its description names them: ``columns``, or the default name of a
    one-column input (a Series' name, else ``""``), so that a Series and the same column of its DataFrame
    are one release. Arguments of the wrong type are left to the dispatch's checks."""
    if columns is None:
        name = getattr(data, "name", None) if type(data).__module__.split(".")[0] == "pandas" else None
        return [name if isinstance(name, str) else ""]
    if isinstance(columns, str) or not isinstance(columns, Iterable):
        return columns if isinstance(columns, str) else [repr(columns)]
    return [c if isinstance(c, str) else repr(c) for c in columns]


def release_ledger(key: bytes | None, ledger: Any) -> Any:
    """The ledger of a release under ``key`` (:class:`KeyedNoise`'s argument) for a ``ledger=`` argument:
    :func:`resolve_ledger`'s, with the process record for ``None``; no record for a fresh key (``None``),
    which is used once. ``ledger=False`` is refused."""
    if ledger is False:
        raise unrecorded_refused(ledger)
    if key is None:
        return _RECORDED_AT_DRIVER
    raw = check_key(key)
    led = resolve_ledger(raw, ledger)
    return ledger_for_key(raw) if led is True else led


def resolve_ledger(key: bytes, ledger: Any) -> Any:
    """The ledger argument of :class:`KeyedNoise` for a ``ledger=`` given to :func:`privatize`.

    ``None``: the process record of ``key``; a path: the ledger file; a :class:`KeyLedger`: itself (each
    consulted with the process record, :mod:`pydp_core.io.ledger`); the internal marker of an engine task
    whose driver recorded the release: itself. ``False`` is refused.
    """
    if ledger is None or ledger is True:
        return True
    if ledger is _RECORDED_AT_DRIVER or isinstance(ledger, (KeyLedger, SessionLedger)):
        return ledger
    if isinstance(ledger, (str, os.PathLike)):
        return ledger_for_key(key, ledger)
    raise unrecorded_refused(ledger)


def _unit_ids(data: Any, unit: Any) -> list[Any]:
    """The privacy-unit id of every row: a column of ``data`` named ``unit``, or a sequence of ids."""
    mod = type(data).__module__.split(".")[0]
    if isinstance(unit, str):
        if mod == "pandas" and hasattr(data, "columns") and unit in data.columns:
            result: list[Any] = data[unit].tolist()
            return result
        if mod == "pyarrow" and hasattr(data, "schema") and unit in data.schema.names:
            ids: list[Any] = data.column(unit).to_pylist()
            return ids
        raise ValueError(f"privacy_unit column {unit!r} not found")
    ids = np.asarray(unit).ravel().tolist()
    n = data.size if isinstance(data, np.ndarray) else len(data)
    if len(ids) != n:
        raise ValueError(f"privacy_unit must have one entry per row ({n}), got {len(ids)}")
    return ids


def record_distributed_release(
    key: bytes, columns: Sequence[str], mechanism: Any, *, bounds: Any, block_rows: int,
    privatize_kwargs: Mapping[str, Any], ledger: Any, resume: bool, accountant: Any, nulls: Any = None,
) -> Policies:
    """Record a distributed (Spark, Dask) release of ``columns`` under ``key`` once, at the driver.

    The tasks run without a ledger (a retried task reproduces its noise exactly); the driver records each
    column as one piece covering every row, with a digest unique to this call, so a second release of the
    same key and column is refused unless ``resume=True`` says it is the same release (then nothing is
    recorded or charged again). The accountant is charged here, once per column. The release id is that of
    the tasks' :func:`privatize` calls (the same arguments), so a release with other parameters under the
    key is refused here, before any task runs. ``nulls`` is the tasks' null policy, part of the release id as
    in :func:`privatize`; the checked policies are returned.
    """
    import secrets

    policies = null_policies(nulls, list(columns))
    release = privatize_kwargs.get("release", True) is not False
    rid = release_id(with_nulls(release_description(mechanism, columns=list(columns), bounds=bounds,
                                                    block_rows=block_rows, privatize_kwargs=privatize_kwargs), policies))
    if not isinstance(resume, bool):
        raise TypeError(f"resume must be True or False, not {type(resume).__name__}")
    led = release_ledger(key, ledger)
    if resume:
        recorded = {p.column for p in (*getattr(led, "pieces", ()), *ledger_for_key(key).pieces)
                    if p.release == rid and p.digest.startswith("distributed:")}
        missing = [c for c in columns if c not in recorded]
        if missing:
            raise KeyReuseError(
                f"resume=True continues a release recorded under this key, but column {missing[0]!r} of this "
                "release (these parameters) was never recorded in the key's ledger: a resumed run must repeat the "
                "recorded release exactly (same mechanism, parameters, columns and bounds), else use a new key"
            )
        return policies
    precheck_charges(accountant, led, rid, mechanism, list(columns), simulated=not release)
    token = "distributed:" + secrets.token_hex(16)
    for col in columns:
        mech = pick_column(mechanism, col, "mechanism")
        charge = None
        if accountant is not None:
            charge = functools.partial(check_chargeable(mech).charge, accountant, release=release)
        if isinstance(led, (KeyLedger, SessionLedger)):
            led.claim(col, 0, 1 << 63, token, on_first=charge, release=rid)
        elif charge is not None:  # the internal marker (a check without a record): charged all the same
            charge()
    return policies


def note_column(report: dict[str, Any], col: str, mech: Any, bounds: Any) -> None:
    """Record a column's mechanism, guarantee and bounds in a release report, and the budget per record."""
    eps, dl = getattr(mech, "epsilon", None), getattr(mech, "delta", 0.0)
    report["columns"][col] = {"mechanism": repr(mech), "bounds": None if bounds is None else list(bounds),
                              "epsilon": None if eps is None else float(eps), "delta": float(dl or 0.0)}
    report["budget_per_record"] = record_budget(report["columns"])
    k = report.get("max_contributions")
    if k is not None and report["budget_per_record"] is not None:
        per = report["budget_per_record"]
        report["budget_per_unit"] = {"epsilon": _times_up(per["epsilon"], k), "delta": _times_up(per["delta"], k),
                                     "max_contributions": k,
                                     "composition": "sequential over the person's rows and the noised columns"}


def _times_up(value: float, k: int) -> float:
    """``k * value`` rounded up to a float."""
    from fractions import Fraction

    out = value * k
    return out if Fraction(out) >= k * Fraction(value) else math.nextafter(out, math.inf)


def record_budget(columns: dict[str, Any]) -> dict[str, Any] | None:
    """The (epsilon, delta) one record spends: a record has one value in each noised column, each value is
    released once, so the columns' guarantees add (sequential composition; rounded up). None when a
    column's mechanism does not state its epsilon."""
    from fractions import Fraction

    eps = [c["epsilon"] for c in columns.values()]
    if any(e is None for e in eps):
        return None
    out = {}
    for name, values in (("epsilon", eps), ("delta", [c["delta"] for c in columns.values()])):
        total = math.fsum(values)
        if Fraction(total) < sum(Fraction(v) for v in values):
            total = math.nextafter(total, math.inf)
        out[name] = total
    return {**out, "columns": len(eps), "composition": "sequential: one value per noised column and record"}


def attach_report(out: Any, report: dict[str, Any]) -> Any:
    """``out`` with the release report attached where the kind of object has metadata (pandas, pyarrow)."""
    import json

    mod = type(out).__module__.split(".")[0]
    if mod == "pandas":
        out.attrs[REPORT_KEY] = report
    elif mod == "pyarrow" and hasattr(out, "schema"):
        meta = dict(out.schema.metadata or {})
        meta[REPORT_KEY.encode()] = json.dumps(report, sort_keys=True).encode()
        out = out.replace_schema_metadata(meta)
    return out


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
    result: np.ndarray = arr.astype(np.int64)
    return result


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


def _noised(noiser: Noiser, col: str, values: np.ndarray, valid: np.ndarray | None,
            policies: Policies | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Noise for one column under its null policy, and the rows whose output is kept (None: all): a null
    under ``replace`` is noised as its replacement, any other is padded and its output discarded."""
    values, valid = fill_nulls(values, valid, (policies or {}).get(col, (DEFAULT, None)))
    return noiser(col, values), valid


def drop_null_rows(data: Any, columns: Any, policies: Policies, *, nan_is_null: bool = False) -> tuple[Any, np.ndarray | None]:
    """``data`` without the rows that a ``drop`` policy leaves out, and the mask of the rows kept (None when
    every row is kept, and then ``data`` itself).

    ``data`` is a numpy array (one-dimensional for a drop; its NaN are missing with ``nan_is_null``), a
    pandas Series or DataFrame, or a pyarrow Array, ChunkedArray, RecordBatch or Table; ``columns`` names
    the privatised columns as :func:`privatize` takes them.
    """
    drop = dropped_columns(policies)
    if not drop:
        return data, None
    mod = type(data).__module__.split(".")[0]
    if isinstance(data, np.ndarray):
        if data.ndim != 1:
            raise ValueError(f"nulls='drop' needs one-dimensional data: an array of shape {data.shape} has no rows "
                             "to leave out (use 'keep' or 'replace=VALUE')")
        valid = [_numpy_valid(data, nan_is_null)]
    elif mod == "pandas" and hasattr(data, "columns"):
        valid = [data[c].notna().to_numpy() for c in column_names(columns, [c for c in data.columns if isinstance(c, str)])
                 if c in drop]
    elif mod == "pandas":
        valid = [data.notna().to_numpy()]
    elif mod == "pyarrow" and hasattr(data, "schema"):
        valid = [_arrow_valid(data.column(c)) for c in column_names(columns, data.schema.names) if c in drop]
    elif mod == "pyarrow":
        valid = [_arrow_valid(data)]
    else:
        return data, None  # not a supported kind: the dispatch says so
    kept = kept_rows(valid)
    if kept is None:
        return data, None
    if mod == "pyarrow":
        import pyarrow as pa

        return data.filter(pa.array(kept)), kept
    return data[kept], kept


def apply_null_policies(table: Any, policies: Policies) -> Any:
    """A pyarrow Table (or RecordBatch) with the rows that ``drop`` leaves out removed and the nulls that
    ``replace`` fills filled (as float64 columns), for a consumer that takes no nulls (``pydp-core aggregate``);
    :func:`privatize` fills during its noise instead, to the same values."""
    import pyarrow as pa

    table, _ = drop_null_rows(table, list(policies), policies)
    for c, policy in policies.items():
        col = table.column(c)
        if policy[0] != "replace" or not col.null_count:
            continue
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            raise TypeError(f"nulls for column {c!r}: replace=VALUE needs a numeric column (got type {col.type})")
        import pyarrow.compute as pc

        values, _ = fill_nulls(pc.fill_null(col, 0).to_numpy(), _arrow_valid(col), policy)
        i = table.schema.get_field_index(c)
        filled = pa.array(values.astype(np.float64, copy=False))
        table = table.set_column(i, c, filled) if isinstance(table, pa.Table) else pa.RecordBatch.from_arrays(
            [filled if j == i else table.column(j) for j in range(table.num_columns)],
            names=table.schema.names)
    return table


def _numpy_valid(data: np.ndarray, nan_is_null: bool) -> np.ndarray | None:
    """The entries of a numpy array that are not missing (masked, or NaN with ``nan_is_null``), flat."""
    valid = ~np.ma.getmaskarray(data).ravel() if isinstance(data, np.ma.MaskedArray) else None
    if nan_is_null and data.dtype.kind == "f":
        values = np.ma.getdata(data).ravel()
        number = ~np.isnan(values)
        valid = number if valid is None else valid & number
    return valid


def _arrow_valid(col: Any) -> np.ndarray | None:
    if not col.null_count:
        return None
    out: np.ndarray = col.is_valid().to_numpy(zero_copy_only=False)
    return out


def output_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a privatised column: float32 stays float32, every other numeric dtype becomes float64."""
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def _dispatch(data: Any, columns: Any, noiser: Noiser, policies: Policies | None = None, nan_is_null: bool = False) -> Any:
    if isinstance(data, np.ndarray):
        return _numpy(data, columns, noiser, policies, nan_is_null)
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas":
        return _pandas(data, columns, noiser, policies)
    if mod == "pyarrow":
        return privatize_pyarrow(data, columns, noiser, policies)
    if isinstance(data, (list, tuple)):
        raise TypeError("data must be an array or a table; convert lists with numpy.asarray first")
    raise TypeError(f"data must be a numpy array, pandas Series/DataFrame or pyarrow Array/Table, not {type(data).__name__}")


def _numpy(data: np.ndarray, columns: Any, noiser: Noiser, policies: Policies | None = None,
           nan_is_null: bool = False) -> np.ndarray:
    name = single_column_name(columns, "")
    if data.dtype.kind == "b" or data.dtype.kind not in "iuf":
        raise TypeError(f"data must be numeric (got dtype {data.dtype})")
    valid = _numpy_valid(data, nan_is_null)
    out, valid = _noised(noiser, name, np.ma.getdata(data).ravel(), valid, policies)
    out = out.astype(output_dtype(data.dtype), copy=False).reshape(data.shape)
    if isinstance(data, np.ma.MaskedArray):
        return np.ma.MaskedArray(out, mask=np.zeros(data.shape, bool) if valid is None else ~valid.reshape(data.shape))
    if valid is not None:  # a NaN kept as the missing value it is
        out.reshape(-1)[~valid] = np.nan
    return out


def _pandas_column(s: Any, name: str, noiser: Noiser, policies: Policies | None = None) -> Any:
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
    out, kept = _noised(noiser, name, vals, valid, policies)
    out = out.astype(np_dtype, copy=False)
    if nullable:
        arr = pd.array(out, dtype="Float32" if np_dtype == np.float32 else "Float64")
        if kept is not None:
            arr[~kept] = pd.NA
        return pd.Series(arr, index=s.index, name=s.name)
    if kept is not None:
        out = out.copy()
        out[~kept] = np.nan
    return pd.Series(out, index=s.index, name=s.name)


def _pandas(data: Any, columns: Any, noiser: Noiser, policies: Policies | None = None) -> Any:
    import pandas as pd

    if isinstance(data, pd.Series):
        return _pandas_column(data, single_column_name(columns, data.name), noiser, policies)
    if isinstance(data, pd.DataFrame):
        avail = list(data.columns)
        names = column_names(columns, [c for c in avail if isinstance(c, str)])
        if len(set(avail)) != len(avail):
            raise ValueError("the DataFrame has duplicate column names")
        out = data.copy(deep=False)
        for c in names:
            out[c] = _pandas_column(data[c], c, noiser, policies)
        return out
    raise TypeError(f"unsupported pandas object {type(data).__name__} (use a Series or DataFrame)")


def _arrow_column(col: Any, name: str, noiser: Noiser, policies: Policies | None = None) -> Any:
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
    out, valid = _noised(noiser, name, vals, valid, policies)
    res = pa.array(out.astype(out_type.to_pandas_dtype(), copy=False), type=out_type, mask=None if valid is None else ~valid)
    return pa.chunked_array([res], type=out_type) if chunked else res


def privatize_pyarrow(data: Any, columns: Any, noiser: Noiser, policies: Policies | None = None) -> Any:
    """The pyarrow Array, ChunkedArray, RecordBatch or Table ``data`` with ``noiser`` applied to ``columns``.

    Nulls stay null, or take their replacement under a ``replace`` policy of ``policies``
    (:func:`~pydp_core.io.nulls.null_policies`; rows to drop are left out before, by
    :func:`drop_null_rows`); the privatised fields become nullable float64 (float32 stays float32) with their
    metadata kept.
    """
    import pyarrow as pa

    if isinstance(data, (pa.Array, pa.ChunkedArray)):
        return _arrow_column(data, single_column_name(columns, ""), noiser, policies)
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        avail = data.schema.names
        if len(set(avail)) != len(avail):
            raise ValueError("the table has duplicate column names")
        names = column_names(columns, avail)
        cols = list(data.columns)
        fields = list(data.schema)
        for c in names:
            i = avail.index(c)
            cols[i] = _arrow_column(cols[i], c, noiser, policies)
            fields[i] = pa.field(c, cols[i].type, nullable=True, metadata=fields[i].metadata)
        schema = pa.schema(fields, metadata=data.schema.metadata)
        if isinstance(data, pa.Table):
            return pa.Table.from_arrays(cols, schema=schema)
        return pa.RecordBatch.from_arrays(cols, schema=schema)
    raise TypeError(f"unsupported pyarrow object {type(data).__name__} (use an Array, ChunkedArray, RecordBatch or Table)")

