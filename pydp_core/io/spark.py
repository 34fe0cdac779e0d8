"""Keyed noise for PySpark DataFrames, through ``DataFrame.mapInArrow``.

:func:`privatize` adds a mechanism's noise to columns of a Spark DataFrame. Every value's noise is a
function of (key, column, global row index) only (see :mod:`pydp_core.io`): the task for a partition
starting at global row ``o`` draws block ``b`` of column ``c`` from
``Random(HMAC(key, c)).stream(b)`` for the blocks ``b`` covering its rows ``o, o + 1, ...``. Therefore

- a retried, speculative or recomputed task reproduces its noise bit for bit, so recomputation cannot
  average the noise away;
- different partitions, blocks and columns draw from different streams (independent noise);
- the output does not depend on how the rows are split into partitions: with ``index=None`` it depends
  on the rows' order only (a first pass counts the rows of every partition to find ``o``); with
  ``index="id"`` (a unique non-negative integer row id) it depends on neither order nor partitioning.

With ``index=None`` the DataFrame must be deterministic: evaluated twice it must give the same rows in
the same partitions in the same order (file scans, ``spark.range``, narrow transformations: yes; a
shuffle without a sort, or non-deterministic expressions: no). The noise pass checks every partition's
row count against the counting pass and fails the job if they differ; use ``index=`` (or checkpoint the
input) when in doubt.

The key is a 256-bit secret (``pydp-core keygen``): generate it once per release, never log it, never
reuse it for another release. It reaches the executors inside the task closure and appears in no plan,
configuration or log written by this module.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .._validation import check_int, require_extra
from .frames import column_names, drop_null_rows, record_distributed_release
from .frames import privatize as privatize_local
from .keyed import check_mechanism, pick_column, release_bounds
from .keys import BLOCK_ROWS, check_key
from .ledger import _RECORDED_AT_DRIVER
from .nulls import Policies

__all__ = ["privatize"]


def _partition_id(context: Any) -> int:
    """The partition of the running Spark task (``TaskContext.get()``, None outside a task)."""
    if context is None:
        raise RuntimeError("pydp_core.io.spark: a partition function ran outside a Spark task")
    return int(context.partitionId())


def _spark() -> Any:
    return require_extra("spark", "pyarrow", "pyspark", "pyspark.sql.types")[2]


def _worker_python(session: Any) -> str | None:
    """Run a local session's Python workers with this interpreter when the driver runs in a virtual environment.

    PySpark starts its workers with ``PYSPARK_PYTHON`` (default ``python3``, the system's Python), which
    does not see the packages of a virtual environment: the workers fail with ``ModuleNotFoundError:
    pydp_core``. When neither ``PYSPARK_PYTHON`` nor ``spark.pyspark.python`` is set, the master is local
    (``local``, ``local[N]``, ``local-cluster[...]``: the workers run on this machine) and this interpreter
    belongs to a virtual environment, the workers of the functions created from now on run
    ``sys.executable``. On a cluster the executors need their own Python with pydp_core installed: set
    ``PYSPARK_PYTHON`` (or ``spark.pyspark.python``) to it; nothing is changed there.

    Parameters
    ----------
    session : pyspark.sql.SparkSession
        The session (Spark Connect sessions have no local workers and are left alone).

    Returns
    -------
    str or None
        The interpreter set for the workers, or None if nothing was changed.
    """
    import os
    import sys

    sc = getattr(session, "_sc", None)
    if sc is None or os.environ.get("PYSPARK_PYTHON") or sys.prefix == sys.base_prefix:
        return None
    conf = sc.getConf()
    if conf.get("spark.pyspark.python") or not str(sc.master).startswith("local"):
        return None
    if sc.pythonExec != sys.executable:
        sc.pythonExec = sys.executable
        return sys.executable
    return None


def _output_schema(schema: Any, columns: Sequence[str], T: Any) -> Any:
    fields = []
    for f in schema.fields:
        if f.name in columns:
            kind = T.FloatType() if isinstance(f.dataType, T.FloatType) else T.DoubleType()
            fields.append(T.StructField(f.name, kind, True, f.metadata))
        else:
            fields.append(f)
    return T.StructType(fields)


def _check_columns(schema: Any, columns: Any, index: Any, T: Any) -> list[str]:
    names = [columns] if isinstance(columns, str) else list(columns)
    byname = {f.name: f for f in schema.fields}
    if len(byname) != len(schema.fields):
        raise ValueError("the DataFrame has duplicate column names")
    numeric = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
    out = column_names(names, list(byname))
    for c in out:
        if not isinstance(byname[c].dataType, numeric):
            raise TypeError(f"column {c!r} must be numeric (got {byname[c].dataType.simpleString()})")
    if index is not None:
        if not isinstance(index, str):
            raise TypeError("index must be the name of an integer column")
        if index not in byname:
            raise ValueError(f"index column {index!r} not found")
        if not isinstance(byname[index].dataType, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            raise TypeError(f"index column {index!r} must be an integer column")
        if index in out:
            raise ValueError(f"index column {index!r} cannot also be privatised")
    return out


def privatize(
    df: Any,
    mechanism: Any,
    *,
    key: bytes,
    columns: str | Sequence[str],
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
    """A new DataFrame with ``mechanism``'s noise added to ``columns`` (lazy, like any transformation).

    The front end shares the signature of :func:`pydp_core.privatize` (privacy parameters live in the
    mechanism; everything after ``mechanism`` is keyword-only).

    Parameters
    ----------
    df:
        a ``pyspark.sql.DataFrame``.
    columns:
        numeric columns to privatise; they become ``double`` (``float`` stays ``float``), nullable, with
        nulls kept (unless ``nulls`` says otherwise). The other columns pass through.
    mechanism:
        ``pydp_core.LaplaceMechanism`` / ``GaussianMechanism`` (each value released on the exact discrete
        path, :func:`pydp_core.io.privatizer`; ``release=False`` for floating-point simulations), any
        object with ``privatize(values, rng=...)``, or ``{column: mechanism}``; pickled to the executors.
    key:
        the 32-byte release key (required: without it a retried task could not reproduce its noise).
    bounds:
        clamping bounds ``(lower, upper)`` or ``{column: (lower, upper)}`` (:func:`pydp_core.privatize`).
    index:
        name of a unique non-negative integer row-id column; ``None`` numbers the rows in DataFrame order
        (one extra counting pass over the input, run by this call).
    block_rows:
        rows per keyed block (:data:`pydp_core.BLOCK_ROWS`). A task draws every block it touches once
        (Spark's Arrow batches are regrouped on block boundaries); with ``index=`` and ids scattered over
        many blocks per partition, a smaller value costs less.
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
        what happens to the SQL NULLs of ``columns``, as in :func:`pydp_core.privatize`
        (:mod:`pydp_core.io.nulls`; NaN is not a missing value), applied in each task: ``"drop"`` numbers the
        rows kept on without gaps (the counting pass counts them), so the result is that of ``df.toArrow()``.
    **privatize_kwargs
        Passed on to the mechanism (e.g. ``release=False`` for simulations).

    Returns
    -------
    pyspark.sql.DataFrame
        The noisy DataFrame (lazy; with ``index=None`` this call runs one counting job).

    Raises
    ------
    ImportError
        If pyspark or pyarrow is not installed (the ``spark`` extra).
    TypeError
        If ``df`` is not a Spark DataFrame, a column is not numeric, or an argument has the wrong type.
    ValueError
        If the key is not 32 bytes, or a column or the index is missing or duplicated.
    RuntimeError
        At run time, if a partition's rows differ from the counting pass (the input is not deterministic).

    Examples
    --------
    >>> import pydp_core as dp
    >>> df = spark.range(1000).selectExpr("id", "cast(id % 100 as double) as age")
    >>> key = dp.io.generate_key()
    >>> noisy = dp.spark.privatize(df, dp.LaplaceMechanism(epsilon=1.0), key=key, columns="age", index="id")
    >>> noisy.count()
    1000
    """
    T = _spark()
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise TypeError(f"df must be a pyspark.sql.DataFrame, not {type(df).__name__}")
    _worker_python(df.sparkSession)
    key = check_key(key)
    block_rows = check_int(block_rows, "block_rows", 1, 1 << 26)
    names = _check_columns(df.schema, columns, index, T)
    for c in names:
        release_bounds(check_mechanism(pick_column(mechanism, c, "mechanism")),
                       pick_column(bounds, c, "bounds", optional=True), c, sensitivity_holds)
    out_schema = _output_schema(df.schema, names, T)
    policies = record_distributed_release(key, names, mechanism, bounds=bounds, block_rows=block_rows,
                                          privatize_kwargs=privatize_kwargs, ledger=ledger, resume=resume,
                                          accountant=accountant, nulls=nulls)
    # One generator thread per task: Spark already runs one task per core. The driver recorded the release.
    options = dict(columns=names, bounds=bounds, key=key, block_rows=block_rows, threads=1, ledger=_RECORDED_AT_DRIVER,
                   sensitivity_holds=sensitivity_holds, simulation=simulation, nulls=nulls, **privatize_kwargs)

    if index is not None:
        def indexed(batches: Iterable[Any]) -> Iterator[Any]:
            for table in _buffered(batches, block_rows):
                out = privatize_local(table, mechanism, index=index, **options)
                yield from out.to_batches()

        return df.mapInArrow(indexed, out_schema)

    starts, counts = _partition_offsets(df, names, policies)

    def positional(batches: Iterable[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        pid = _partition_id(TaskContext.get())
        first = starts.get(pid, 0)
        pos = first
        for pos, table in _block_aligned(_kept(batches, names, policies), first, block_rows):
            if table.num_rows and pid not in starts:
                raise RuntimeError(
                    f"partition {pid} has rows but had none when counted: the input is not deterministic"
                )
            out = privatize_local(table, mechanism, offset=pos, **options)
            yield from out.to_batches()
            pos += table.num_rows
        if pos - first != counts.get(pid, 0):
            raise RuntimeError(
                f"partition {pid} has {pos - first} rows, but {counts.get(pid, 0)} when counted: the input is not "
                "deterministic (use index= with a stable row id, or checkpoint the input)"
            )

    return df.mapInArrow(positional, out_schema)


def _block_aligned(batches: Any, start: int, block_rows: int) -> Any:
    """Regroup Arrow batches holding the rows ``start, start + 1, ...`` into tables that end on block
    boundaries (a multiple of ``block_rows``) or at the end, as ``(first_row, table)``: every keyed block
    is then drawn once per task, whatever Spark's batch size (zero-copy slices; about one block buffered)."""
    import pyarrow as pa

    pending: list[Any] = []
    held, pos = 0, start
    for batch in batches:
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        held += batch.num_rows
        cut = ((pos + held) // block_rows) * block_rows - pos  # rows up to the last boundary reached
        if cut > 0:
            table = pa.Table.from_batches(pending)
            yield pos, table.slice(0, cut)
            rest = table.slice(cut)
            pending = rest.to_batches() if rest.num_rows else []
            pos += cut
            held -= cut
    if held:
        yield pos, pa.Table.from_batches(pending)


def _buffered(batches: Any, rows: int) -> Any:
    """Regroup Arrow batches into tables of at least ``rows`` rows (the last may be shorter)."""
    import pyarrow as pa

    pending: list[Any] = []
    held = 0
    for batch in batches:
        pending.append(batch)
        held += batch.num_rows
        if held >= rows:
            yield pa.Table.from_batches(pending)
            pending, held = [], 0
    if held:
        yield pa.Table.from_batches(pending)


def _kept(batches: Iterable[Any], names: Sequence[str], policies: Policies) -> Iterator[Any]:
    """The Arrow batches without the rows that a ``drop`` policy leaves out (as they are without one)."""
    for batch in batches:
        yield drop_null_rows(batch, names, policies)[0]


def _partition_offsets(df: Any, names: Sequence[str], policies: Policies) -> tuple[dict[int, int], dict[int, int]]:
    """Global row offset and row count of every partition of ``df`` (one Spark job), counting the rows that
    the null policies keep."""

    def count(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        n = 0
        for batch in _kept(batches, names, policies):
            n += batch.num_rows
        yield pa.RecordBatch.from_pydict({"pid": [_partition_id(TaskContext.get())], "n": [n]})

    rows = df.mapInArrow(count, "pid long, n long").collect()
    counts = {int(r["pid"]): int(r["n"]) for r in rows}
    starts, pos = {}, 0
    for pid in sorted(counts):
        starts[pid] = pos
        pos += counts[pid]
    return starts, counts
