"""Parquet and CSV files: streaming privatisation by batch with atomic output, and whole-column reads and
atomic result writes for the aggregation (whose bounding needs every row of a person).

Over 600 lines (about 450 of code) because reading, the per-batch release and the atomic write of one
file run as one pipeline whose cancellation and clean-up points must be in one place.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._validation import check_int, require_extra
from .atomic import Cancellation, Pipeline, atomic_folder, atomic_outputs, cancellation, same_file
from .frames import REPORT_KEY, column_names, drop_null_rows, note_column, privatize_pyarrow, release_ledger
from .keyed import KeyedNoise, check_contributions, pick_column, precheck_charges, release_description
from .keys import BLOCK_ROWS, check_key, generate_key, release_id
from .nulls import describe_nulls, dropped_columns, null_policies, with_nulls
from .provenance import accumulate, data_files, read_report


def file_format(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """The file format, "parquet" or "csv": ``fmt`` if given, else from the file name.

    Parameters
    ----------
    path : str or os.PathLike
        The file name (.parquet, .pq, .parq; .csv, .csv.gz, .csv.bz2, .tsv).
    fmt : {"parquet", "csv"}, optional
        An explicit format, which wins over the name.

    Returns
    -------
    str
        "parquet" or "csv".

    Raises
    ------
    ValueError
        If ``fmt`` is another string, or the name does not tell the format.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.file_format("sales.csv.gz"), io.file_format("sales.parquet"), io.file_format("x.dat", "csv")
    ('csv', 'parquet', 'csv')
    """
    if fmt is not None:
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format must be 'parquet' or 'csv', got {fmt!r}")
        return fmt
    low = os.fspath(path).lower()
    if low.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if low.endswith((".csv", ".csv.gz", ".csv.bz2", ".tsv", ".tsv.gz", ".tsv.bz2")):
        return "csv"
    raise ValueError(f"cannot tell the format of {os.fspath(path)!r} from its name: give format='parquet' or 'csv'")


#: The suffix of the JSON sidecar written next to an aggregation's output.
SIDECAR_SUFFIX = ".json"


def input_format(path: str, fmt: str | None) -> str:
    """"parquet" or "csv" from ``fmt`` or the name; a folder is a partitioned Parquet data set."""
    if fmt is None and os.path.isdir(path):
        return "parquet"
    return file_format(path, fmt)


def read_columns(path: str, columns: list[str], *, format: str | None = None, delimiter: str = ",",
                 progress: Any = None) -> Any:
    """The ``columns`` of a Parquet file or folder (hive partitions and Spark's ``_SUCCESS`` understood) or
    of a CSV file, as a pyarrow Table (read whole: only the columns asked for).

    ``progress``, if given, is called with 0 once the file and its columns are checked, then with the
    number of rows of each batch read (of the whole file at once for CSV)."""
    pa, pq, pacsv = require_extra("etl", "pyarrow", "pyarrow.parquet", "pyarrow.csv")
    if not os.path.exists(path):
        raise FileNotFoundError(f"input {path!r} does not exist")
    fmt = input_format(path, format)
    if fmt == "parquet":
        import pyarrow.dataset as ds

        data = ds.dataset(path, format="parquet", partitioning="hive")
        missing = [c for c in columns if c not in data.schema.names]
        if missing:
            raise ValueError(f"input {path!r} has no column(s) {', '.join(map(repr, missing))}")
        if progress is None:
            return data.to_table(columns=columns)
        progress(0)
        return pa.Table.from_batches(_counted(data.to_batches(columns=columns), progress),
                                     schema=data.schema.select(columns) if hasattr(data.schema, "select")
                                     else pa.schema([data.schema.field(c) for c in columns]))
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be one character, got {delimiter!r}")
    header = _csv_header(path, delimiter)
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"input {path!r} has no column(s) {', '.join(map(repr, missing))}")
    parse, convert = pacsv.ParseOptions(delimiter=delimiter), pacsv.ConvertOptions(include_columns=columns)
    if progress is None:
        return pacsv.read_csv(path, parse_options=parse, convert_options=convert)
    progress(0)
    table = pacsv.read_csv(path, parse_options=parse, convert_options=convert)  # whole: types from every block
    progress(table.num_rows)
    return table


def _counted(batches: Any, progress: Any) -> Any:
    """The record batches of ``batches``, ``progress`` called with the rows of each."""
    for batch in batches:
        progress(batch.num_rows)
        yield batch


def write_result(table: Any, target: str, report: dict[Any, Any], *, format: str = "parquet", delimiter: str = ",",
                 overwrite: bool = False, protect: tuple[str, ...] = ()) -> str:
    """Write a result table atomically, with its ``report`` in the table's Parquet key-value metadata (as the
    table carries it) and in the sidecar ``target + ".json"`` (always), the two published together (a failed
    rename leaves both old files). Returns the sidecar path."""
    pa, pq, pacsv = require_extra("etl", "pyarrow", "pyarrow.parquet", "pyarrow.csv")
    for p in protect:
        if same_file(p, target):
            raise ValueError(f"output {target!r} is the input: choose another path")
    sidecar = target + SIDECAR_SUFFIX
    for p in (target, sidecar):
        if os.path.exists(p) and not overwrite:
            raise FileExistsError(f"{p!r} exists (use --force to replace it)")
    # The sidecar is published first: a reader who finds the new table finds its sidecar (atomic_outputs).
    with atomic_outputs([sidecar, target]) as (side_tmp, tmp):
        if format == "parquet":
            pq.write_table(table, tmp)
        else:
            pacsv.write_csv(table.replace_schema_metadata(None), tmp,
                            write_options=pacsv.WriteOptions(delimiter=delimiter))
        with open(side_tmp, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2, sort_keys=True)
            fh.write("\n")
    return sidecar


def privatize_file(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    mechanism: Any,
    *,
    key: bytes | None = None,
    columns: str | Sequence[str],
    bounds: Any = None,
    format: str | None = None,
    output_format: str | None = None,
    batch_rows: int = BLOCK_ROWS,
    block_rows: int = BLOCK_ROWS,
    overwrite: bool = False,
    progress: Any = None,
    compression: str | None = "snappy",
    delimiter: str | None = None,
    ledger: Any = None,
    accountant: Any = None,
    sensitivity_holds: bool = False,
    simulation: bool = False,
    privacy_unit: str | None = None,
    max_contributions: int = 1,
    nulls: Any = None,
    **privatize_kwargs: Any,
) -> int:
    """Privatise ``columns`` of a Parquet or CSV file, or of a partitioned Parquet folder, into ``target``,
    streaming, with atomic output.

    The file is read ``batch_rows`` rows at a time (Parquet batches cross row groups; CSV is read in
    blocks), so files larger than memory work. The output is written to a temporary file next to
    ``target`` and renamed over it only when complete: an error, Ctrl-C or SIGTERM leaves no partial
    output, and the input is only ever read (docs/io.md). The noise is keyed by (key, column, row
    index), so a rerun with the same key writes the same file.

    A folder (hive ``key=value`` partitions, Spark's output) is written to a folder ``target`` of the same
    layout: each data file's output has the file's relative path, so the partition columns stay in the
    folder names. The new folder is built under a temporary name and renamed into place when complete.
    Its rows are numbered through the files in the order of their relative paths.

    When ``source`` carries a release report from an earlier run, the new report adds to it
    (:mod:`pydp_core.io.provenance`): every run's report, every noised column and the budget composed over
    the runs.

    Parameters
    ----------
    source, target : str or os.PathLike
        The input file (or partitioned Parquet folder) and the output file (or folder); ``target`` must not
        be ``source`` or lie inside it.
    mechanism : object
        As in :func:`privatize` (one mechanism, or ``{column: mechanism}``).
    key : bytes, optional
        The 32-byte release key (``None``: a fresh one, not reproducible).
    columns : str or sequence of str
        The columns to privatise.
    bounds : (real, real) or mapping, optional
        Clamping bounds, as in :func:`privatize`.
    format, output_format : {"parquet", "csv"}, optional
        The input and output formats (default: from the file names; an output name that does not tell
        the format, such as ``out.txt``, is refused rather than given the input's format).
    batch_rows : int, optional
        Rows read at a time, in [1, 2**26].
    block_rows : int, optional
        Rows per keyed block (the same for every piece of a release).
    overwrite : bool, optional
        Replace an existing ``target`` (never ``source``).
    progress : callable, optional
        Called with 0 once every check has passed (before any noise is drawn), then with the number of
        rows of each batch written (e.g. ``tqdm.update``; :func:`total_rows` gives the total for Parquet).
    compression : str or None, optional
        Parquet output compression (default "snappy"; ``None`` for none).
    delimiter : str, optional
        The field delimiter of a CSV input (:func:`csv_delimiter`: default a tab for ``.tsv``, else a comma).
    ledger : None, path or KeyLedger, optional
        The use record of ``key``, as in :func:`privatize` (the command line uses ``<key file>.ledger``).
        Each batch is checked and recorded before its noise is drawn; a rerun with the same data and
        ``batch_rows`` repeats its pieces exactly and is accepted.
    accountant : Accountant, optional
        Charged once per column before its noise is drawn, as in :func:`privatize`.
    sensitivity_holds, simulation : bool, optional
        As in :func:`privatize`. The release report (mechanisms, bounds and these two flags) is written to
        the Parquet key-value metadata ``pydp_core.release``, or for CSV output to the JSON file
        ``<target>.release.json``.
    privacy_unit, max_contributions : optional
        As in :func:`privatize`.
    nulls : str or mapping, optional
        What happens to the nulls of the privatised columns (:mod:`pydp_core.io.nulls`): ``"keep"`` (the
        default: a null stays null), ``"drop"`` (the row is left out) or ``"replace=VALUE"``, for all
        columns or as ``{column: policy}``. Dropping rows changes no sensitivity: each value is released on
        its own.
    **privatize_kwargs
        Passed on to the mechanism (e.g. ``release=False`` for simulations).

    Returns
    -------
    int
        The number of rows written.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If ``source`` is missing or not a regular file, ``target``'s folder is missing, or ``target`` is a
        directory.
    FileExistsError
        If ``target`` exists and ``overwrite`` is false.
    ValueError
        If ``target`` is ``source``, a format is unknown, a column is missing, a value is bad, or the
        bounds and sensitivities do not match (:func:`privatize`).
    KeyReuseError
        If the key's ledger holds other values for rows of this release (nothing is written).
    KeyboardInterrupt
        :class:`pydp_core.io.atomic.Interrupted` on Ctrl-C or SIGTERM (in the main thread the signals only
        set a flag, checked between batches; no output and no temporary file are left).

    Notes
    -----
    CSV: the privatised columns are read as float64 and the others as text, which is copied unchanged.
    CSV output quotes a value only when it holds a comma, a quote or a line break, and writes floats with
    a decimal point or an exponent, so that readers infer the column types back.

    Examples
    --------
    >>> import os, tempfile
    >>> import pydp_core as dp
    >>> from pydp_core import io
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "in.csv"), "w") as fh:
    ...     _ = fh.write("name,age\\nann,30\\nbob,50\\n")
    >>> key = bytes(range(32))  # a fixed key for this example only: use io.generate_key()
    >>> mech = io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 100))
    >>> io.privatize_file(os.path.join(d, "in.csv"), os.path.join(d, "out.csv"), mech, key=key, columns="age")
    2
    """
    require_extra("etl", "pyarrow", "pyarrow.parquet", "pyarrow.csv", "pyarrow.compute")
    with cancellation() as cancel:
        try:
            return _privatize_file(
                os.fspath(source), os.fspath(target), mechanism, key=key, columns=columns, bounds=bounds, format=format,
                output_format=output_format, batch_rows=batch_rows, block_rows=block_rows, overwrite=overwrite,
                progress=progress, compression=compression, delimiter=delimiter, ledger=ledger, accountant=accountant,
                sensitivity_holds=sensitivity_holds, simulation=simulation, cancel=cancel, privatize_kwargs=privatize_kwargs,
                privacy_unit=privacy_unit, max_contributions=max_contributions, nulls=nulls,
            )
        except BaseException:
            if cancel.is_set():  # the interruption wins over the errors it caused (a writer stopped mid-batch)
                raise cancel.error() from None
            raise


def csv_delimiter(path: str, delimiter: str | None = None) -> str:
    """The field delimiter of a CSV file: ``delimiter`` when given, else a tab for a ``.tsv`` name (also
    compressed) and a comma otherwise.

    Parameters
    ----------
    path : str
        The file name.
    delimiter : str, optional
        One character (``--delimiter``).

    Returns
    -------
    str
        One character.

    Raises
    ------
    ValueError
        If ``delimiter`` is not one character.

    Examples
    --------
    >>> csv_delimiter("visits.tsv"), csv_delimiter("visits.csv.gz"), csv_delimiter("visits.csv", ";")
    ('\\t', ',', ';')
    """
    if delimiter is None:
        low = os.fspath(path).lower()
        return "\t" if low.endswith((".tsv", ".tsv.gz", ".tsv.bz2")) else ","
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"the delimiter must be one character, got {delimiter!r}")
    return delimiter


def output_format_of(target: str, output_format: str | None) -> str:
    """The output format: ``output_format`` if given, else from ``target``'s name (an unknown name is refused).

    Raises
    ------
    ValueError
        If neither tells the format (e.g. ``out.txt``): a file whose name says nothing would be Parquet
        for some readers and text for others.
    """
    try:
        return file_format(target, output_format)
    except ValueError:
        raise ValueError(
            f"cannot tell the output format from the name {target!r} (.parquet, .pq, .parq, .csv, .csv.gz, .csv.bz2, "
            ".tsv): give output_format='parquet' or 'csv'"
        ) from None


def _privatize_file(source: str, target: str, mechanism: Any, *, key: Any, columns: Any, bounds: Any, format: Any,
                    output_format: Any, batch_rows: int, block_rows: int, overwrite: bool, progress: Any,
                    compression: Any, delimiter: Any, ledger: Any, accountant: Any, sensitivity_holds: bool, simulation: bool,
                    cancel: Cancellation, privatize_kwargs: dict[str, Any], privacy_unit: str | None = None,
                    max_contributions: int = 1, nulls: Any = None) -> int:
    folder, fmt_in, fmt_out = _file_formats(source, target, format, output_format)
    sep = csv_delimiter(source, delimiter)
    names = [columns] if isinstance(columns, str) else list(columns)
    _check_target(source, target, folder, overwrite)
    parts = _Parts(source, fmt_in, sep)
    key_ledger = release_ledger(key, ledger)
    key = generate_key() if key is None else check_key(key)
    batch_rows = check_int(batch_rows, "batch_rows", 1, 1 << 26)
    noisers, policies, report_text = _plan_file_release(
        parts, names, mechanism, key=key, key_ledger=key_ledger, bounds=bounds, block_rows=block_rows,
        privatize_kwargs=privatize_kwargs, accountant=accountant, sensitivity_holds=sensitivity_holds,
        simulation=simulation, privacy_unit=privacy_unit, max_contributions=max_contributions, nulls=nulls)
    cancel.check()
    if progress is not None:
        progress(0)  # every check passed: a progress display may start now
    _import_writer(fmt_out)  # imports here, never in the writer thread (the import lock)
    # Reading, noise and writing overlap: a reader thread and a writer thread around this one (pyarrow and
    # the samplers release the GIL). The output is renamed into place only after the writer is done.
    if folder:
        with atomic_folder(target, overwrite=overwrite, before_rename=cancel.check) as tmp:
            writer = _PartWriter(parts, tmp, fmt_out, report_text, compression, list(noisers), progress)
            return _stream_parts(parts, noisers, policies, writer, batch_rows, cancel)
    # A CSV output's release report goes to a sidecar, published with it (just before it).
    side = [target + ".release.json"] if fmt_out == "csv" else []
    with atomic_outputs([*side, target], before_rename=cancel.check) as tmps:
        writer = _PartWriter(parts, tmps[-1], fmt_out, report_text, compression, list(noisers), progress)
        rows = _stream_parts(parts, noisers, policies, writer, batch_rows, cancel)
        if side:
            with open(tmps[0], "w", encoding="utf-8") as fh:
                fh.write(report_text + "\n")
    return rows


def _file_formats(source: str, target: str, format: Any, output_format: Any) -> tuple[bool, str, str]:
    """``(folder, input format, output format)`` of a file release; a folder is read and written as Parquet."""
    folder = os.path.isdir(source)
    fmt_in = input_format(source, format)
    if folder:
        if fmt_in != "parquet":
            raise ValueError(f"input {source!r} is a folder: a partitioned Parquet data set is read as format='parquet'")
        fmt_out = output_format_of(target, output_format) if output_format is not None else "parquet"
        if fmt_out != "parquet" or file_format_or_none(target) == "csv":
            raise ValueError(f"input {source!r} is a partitioned folder: the output is a folder of the same partitions, "
                             "in Parquet (give an output name without .csv, and output_format='parquet' or none)")
    else:
        fmt_out = output_format_of(target, output_format)
        if not os.path.exists(source):
            raise FileNotFoundError(f"input file {source!r} does not exist")
        if not os.path.isfile(source):
            raise IsADirectoryError(f"input {source!r} is not a regular file")
    return folder, fmt_in, fmt_out


def _check_target(source: str, target: str, folder: bool, overwrite: bool) -> None:
    """Refuse an output that is the input, lies inside the input folder, exists (without ``overwrite``), is a
    directory for a file input, or has no folder."""
    if same_file(source, target):
        raise ValueError(f"refusing to overwrite the input file {source!r}: choose another output")
    if folder and _inside(target, source):
        raise ValueError(f"output {target!r} is inside the input folder {source!r}: choose another output")
    if os.path.exists(target) and not overwrite:
        raise FileExistsError(f"output {target!r} exists (use --force / overwrite=True to replace it)")
    if os.path.isdir(target) and not folder:
        raise IsADirectoryError(f"output {target!r} is a directory")
    out_folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(out_folder):
        raise FileNotFoundError(f"output folder {out_folder!r} does not exist")


def _plan_file_release(parts: _Parts, names: list[Any], mechanism: Any, *, key: bytes, key_ledger: Any, bounds: Any,
                       block_rows: int, privatize_kwargs: dict[str, Any], accountant: Any, sensitivity_holds: bool,
                       simulation: bool, privacy_unit: str | None, max_contributions: int,
                       nulls: Any) -> tuple[dict[str, KeyedNoise], Any, str]:
    """``(noisers, null policies, report text)`` of a file release: the columns checked, one keyed noise per
    privatised column, the charges prechecked, and the release report (added to the input's own)."""
    noisers: dict[str, KeyedNoise] = {}
    available = parts.columns()
    for c in names:
        if isinstance(c, str) and c in parts.partition_keys:
            raise ValueError(f"column {c!r} is a partition column of {parts.source!r} (its values are in the folder "
                             "names): it cannot be privatised")
    noised = column_names(names, available)
    policies = null_policies(nulls, noised)
    rid = release_id(with_nulls(release_description(mechanism, columns=names, bounds=bounds, block_rows=block_rows,
                                                    privatize_kwargs=privatize_kwargs), policies))
    contributions = 1
    if privacy_unit is not None:
        contributions = check_contributions(parts.unit_column(privacy_unit), max_contributions)
    elif max_contributions != 1:
        raise ValueError("max_contributions applies with privacy_unit (the rows of each person)")
    report: dict[str, Any] = {"columns": {}, "sensitivity_holds": sensitivity_holds, "simulation": simulation,
                              "release": privatize_kwargs.get("release", True) is not False,
                              "max_contributions": contributions if privacy_unit is not None else None}
    if describe_nulls(policies) is not None:
        report["nulls"] = describe_nulls(policies)
    for c in noised:
        noisers[c] = KeyedNoise(
            pick_column(mechanism, c, "mechanism"), key, c,
            bounds=pick_column(bounds, c, "bounds", optional=True), block_rows=block_rows,
            privatize_kwargs=privatize_kwargs, release=rid, contributions=contributions, ledger=key_ledger,
            accountant=accountant,
            sensitivity_holds=sensitivity_holds, simulation=simulation,
        )
        note_column(report, c, noisers[c].mechanism, noisers[c].bounds)
    precheck_charges(accountant, key_ledger, rid, mechanism, list(noisers), simulated=not report["release"],
                     contributions=contributions)
    report_text = json.dumps(accumulate(read_report(parts.source, parts.fmt), report), sort_keys=True)
    return noisers, policies, report_text


class _PartWriter:
    """The writer thread's end of a file release: one output file per input part under the temporary
    output ``root``, opened at the part's first batch (a part without rows gets the schema only)."""

    def __init__(self, parts: _Parts, root: str, fmt: str, report_text: str, compression: Any, columns: list[str],
                 progress: Any) -> None:
        self.parts, self.root, self.fmt, self.report_text = parts, root, fmt, report_text
        self.compression, self.columns, self.progress = compression, columns, progress
        self.writer: Any = None
        self.part: int | None = None

    def finish_part(self) -> None:
        """Complete the file in progress."""
        if self.part is not None and self.writer is None:
            schema = self.parts.empty_schema(self.part, self.columns)
            self.writer = self._open(self.part, schema)
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def write(self, item: Any) -> None:
        """Write ``(part, batch)``; a batch of None only marks the part (runs in the writer thread)."""
        part, out = item
        if self.part != part:
            self.finish_part()
            self.part = part
        if out is None:
            return
        if self.writer is None:
            self.writer = self._open(part, out.schema)
        self.writer.write(out)
        if self.progress is not None:
            self.progress(out.num_rows)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def _open(self, part: int, schema: Any) -> Any:
        return _open_writer(self.parts.output_path(self.root, part), self.fmt, _with_report(schema, self.report_text),
                            self.compression, self.columns)


def _stream_parts(parts: _Parts, noisers: dict[str, KeyedNoise], policies: Any, writer: _PartWriter, batch_rows: int,
                  cancel: Cancellation) -> int:
    """Read, privatise and write every batch through a :class:`Pipeline`; returns the number of rows."""
    dropping = bool(dropped_columns(policies))
    rows = 0

    def noiser(col: str, values: np.ndarray) -> np.ndarray:
        cancel.check()  # between columns of a batch
        return noisers[col].apply(values, start)

    pipe = Pipeline(parts.batches(list(noisers), batch_rows), writer.write, cancel=cancel)
    try:
        for part, batch in pipe.items():
            if batch is not None and dropping:
                batch = drop_null_rows(batch, list(noisers), policies)[0]
            if batch is None or batch.num_rows == 0:
                pipe.put((part, None))
                continue
            start = rows
            pipe.put((part, privatize_pyarrow(batch, list(noisers), noiser, policies)))
            rows += batch.num_rows
        pipe.finish()
        writer.finish_part()
    finally:
        pipe.close()
        writer.close()
    return rows


def file_format_or_none(path: str) -> str | None:
    """The format a file name tells (:func:`file_format`), or None."""
    try:
        return file_format(path)
    except ValueError:
        return None


def _inside(path: str, folder: str) -> bool:
    """True if ``path`` is ``folder`` or lies inside it (following links)."""
    a, b = os.path.realpath(path), os.path.realpath(folder)
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)


def _with_report(schema: Any, report_text: str) -> Any:
    meta = dict(schema.metadata or {})
    meta[REPORT_KEY.encode()] = report_text.encode()
    return schema.with_metadata(meta)


class _Parts:
    """The input of a file release: one Parquet or CSV file, or the data files of a partitioned Parquet folder
    (hive ``key=value`` folders; Spark's ``_SUCCESS`` and other ``_`` or ``.`` names are not data).

    A folder's files are taken in the order of their relative paths; the rows of the release are numbered
    through them in that order (the keyed noise's row index). Each file's output has the same relative path
    in the output folder, so the partition columns are kept as the folder names hold them.
    """

    def __init__(self, source: str, fmt: str, delimiter: str) -> None:
        self.source, self.fmt, self.delimiter = source, fmt, delimiter
        self.folder = os.path.isdir(source)
        self.files = data_files(source) if self.folder else [source]
        if not self.files:
            raise ValueError(f"input folder {source!r} holds no data files")
        keys: dict[str, None] = {}
        for f in self.files:
            for level in os.path.relpath(os.path.dirname(f), source).split(os.sep) if self.folder else []:
                name, eq, _ = level.partition("=")
                if eq:
                    keys[name] = None
        self.partition_keys = list(keys)

    def columns(self) -> list[str]:
        """The data columns, which every file must hold (the partition columns are not among them)."""
        first = _file_columns(self.files[0], self.fmt, self.delimiter)
        for f in self.files[1:]:
            cols = _file_columns(f, self.fmt, self.delimiter)
            if cols != first:
                raise ValueError(f"the files of {self.source!r} have different columns: {os.path.relpath(f, self.source)!r} "
                                 f"has {', '.join(cols)}, the first has {', '.join(first)}")
        return first

    def unit_column(self, name: str) -> list[Any]:
        """The privacy-unit column over every file (a partition column too)."""
        if not self.folder:
            return _unit_column(self.source, self.fmt, name, self.delimiter)
        import pyarrow.parquet as pq

        out: list[Any] = []
        for f in self.files:
            if name in self.partition_keys:
                level = [p for p in os.path.relpath(os.path.dirname(f), self.source).split(os.sep)
                         if p.partition("=")[0] == name]
                out.extend([level[0].partition("=")[2] if level else None] * pq.ParquetFile(f).metadata.num_rows)
            else:
                out.extend(_unit_column(f, "parquet", name))
        return out

    def batches(self, columns: list[str], batch_rows: int) -> Iterator[tuple[int, Any]]:
        """(file number, batch) for every batch of every file; (file number, None) for a file without rows."""
        for i, f in enumerate(self.files):
            empty = True
            for batch in _read_batches(f, self.fmt, columns, batch_rows, self.delimiter):
                empty = False
                yield i, batch
            if empty:
                yield i, None

    def output_path(self, root: str, part: int) -> str:
        """Where file ``part``'s output goes under the temporary output ``root`` (a file, or a folder)."""
        if not self.folder:
            return root
        path = os.path.join(root, os.path.relpath(self.files[part], self.source))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return path

    def empty_schema(self, part: int, columns: list[str]) -> Any:
        return _empty_schema(self.files[part], self.fmt, columns, self.delimiter)


def total_rows(source: str, format: str | None = None) -> int | None:
    """The number of rows of a Parquet file or partitioned folder from its metadata (None for CSV)."""
    import pyarrow.parquet as pq

    if input_format(source, format) != "parquet":
        return None
    files = data_files(source) if os.path.isdir(source) else [source]
    return int(sum(pq.ParquetFile(f).metadata.num_rows for f in files))


def _file_columns(source: str, fmt: str, delimiter: str = ",") -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        result: list[str] = pq.ParquetFile(source).schema_arrow.names
        return result
    return _csv_header(source, delimiter)


def _unit_column(source: str, fmt: str, name: str, delimiter: str = ",") -> list[Any]:
    """The privacy-unit column of a file (read alone, before the release)."""
    if name not in _file_columns(source, fmt, delimiter):
        raise ValueError(f"privacy_unit column {name!r} not found in {source!r}")
    if fmt == "parquet":
        import pyarrow.parquet as pq

        result: list[Any] = pq.read_table(source, columns=[name]).column(name).to_pylist()
        return result
    import pyarrow as pa
    import pyarrow.csv as pcsv

    opts = pcsv.ConvertOptions(include_columns=[name], column_types={name: pa.string()})
    ids: list[Any] = pcsv.read_csv(source, parse_options=pcsv.ParseOptions(delimiter=delimiter),
                                   convert_options=opts).column(name).to_pylist()
    return ids


def _csv_header(source: str, delimiter: str = ",") -> list[str]:
    import pyarrow.csv as pcsv

    names: list[str] = pcsv.open_csv(source, read_options=pcsv.ReadOptions(block_size=1 << 16),
                                     parse_options=pcsv.ParseOptions(delimiter=delimiter)).schema.names
    return names


def _csv_reader(source: str, columns: list[str], block_bytes: int, delimiter: str = ",") -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = _csv_header(source, delimiter)
    types = {c: (pa.float64() if c in columns else pa.string()) for c in header}
    return pcsv.open_csv(
        source,
        read_options=pcsv.ReadOptions(block_size=block_bytes),
        parse_options=pcsv.ParseOptions(delimiter=delimiter),
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False),
    )


def _read_batches(source: str, fmt: str, columns: list[str], batch_rows: int, delimiter: str = ",") -> Iterator[Any]:
    """The batches of ``source``; opened (and imported) in the calling thread, iterated in the reader's."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        # pre_buffer=False: the default pre-buffering keeps every column chunk read so far in memory
        # (the whole file by the end); a buffered stream keeps memory at about one batch.
        pf = pq.ParquetFile(source, pre_buffer=False, buffer_size=1 << 22)
        return iter(pf.iter_batches(batch_size=batch_rows))
    # About 16 bytes a value for a float column: aim for batch_rows rows per block.
    return iter(_csv_reader(source, columns, max(1 << 20, min(1 << 30, batch_rows * 16)), delimiter))


def _import_writer(fmt: str) -> None:
    if fmt == "parquet":
        import pyarrow.parquet  # noqa: F401
    else:
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401


def _empty_schema(source: str, fmt: str, columns: list[str], delimiter: str = ",") -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(source).schema_arrow if fmt == "parquet" else _csv_reader(source, columns, 1 << 20, delimiter).schema
    fields = [
        pa.field(f.name, pa.float32() if pa.types.is_float32(f.type) else pa.float64()) if f.name in columns else f
        for f in schema
    ]
    return pa.schema(fields, metadata=schema.metadata)


class _Writer:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, batch: Any) -> None:
        self.inner.write_batch(batch)

    def close(self) -> None:
        self.inner.close()


class _CsvWriter:
    """CSV (RFC 4180) in which a value is quoted only when it must be (it holds a comma, a quote or a line
    break), numbers are written as numbers, and floats always with a decimal point or an exponent: readers
    then infer the types back (a noised column on an integer grid stays float64, ids stay integers).

    pyarrow's own CSV writer quotes every string value (the text columns passed through) and prints 2.0 as
    ``2``. Each batch is formatted by pyarrow compute kernels into one large string per line.
    """

    def __init__(self, path: str, schema: Any) -> None:
        self._fh = open(path, "wb")  # noqa: SIM115 (the writer owns it until close())
        self._fh.write((",".join(_quoted(n) for n in schema.names) + "\n").encode("utf-8"))

    def write(self, batch: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if batch.num_rows == 0:
            return
        cols = [_csv_text(batch.column(i), batch.schema.field(i)) for i in range(batch.num_columns)]
        comma, newline, empty = (pa.scalar(c, pa.large_string()) for c in (",", "\n", ""))
        lines = pc.binary_join_element_wise(*cols, comma) if len(cols) > 1 else cols[0]
        lines = pc.binary_join_element_wise(lines, empty, newline)
        offsets = np.frombuffer(lines.buffers()[1], np.int64)[lines.offset : lines.offset + len(lines) + 1]
        self._fh.write(memoryview(lines.buffers()[2])[offsets[0] : offsets[-1]])

    def close(self) -> None:
        self._fh.close()


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def _csv_text(col: Any, field: Any) -> Any:
    """The CSV text of one column, as a large_string array without nulls (a null is an empty field)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    try:
        text = pc.cast(col, pa.large_string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        raise TypeError(f"column {field.name!r} of type {t} cannot be written to CSV: write Parquet instead") from None
    empty = pa.scalar("", pa.large_string())
    if pa.types.is_floating(t):  # 2.0 is cast to "2": add ".0" so that readers see a float
        whole = pc.match_substring_regex(text, r"^-?[0-9]+$")
        if pc.any(whole).as_py():
            text = pc.if_else(whole, pc.binary_join_element_wise(text, pa.scalar(".0", pa.large_string()), empty), text)
    elif not (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t)):
        needs = pc.match_substring_regex(text, '[,"\r\n]')
        if not pc.any(needs).as_py():  # the common case: nothing to quote
            return pc.fill_null(text, empty)
        quoted = pc.binary_join_element_wise(
            pa.scalar('"', pa.large_string()), pc.replace_substring(text, '"', '""'), pa.scalar('"', pa.large_string()), empty
        )
        text = pc.if_else(needs, quoted, text)
    return pc.fill_null(text, empty)


def _open_writer(path: str, fmt: str, schema: Any, compression: str | None, noisy: list[str]) -> Any:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        # Noisy floats are (almost) all distinct: a dictionary would only cost time.
        plain = [n for n in schema.names if n not in noisy]
        writer = pq.ParquetWriter(path, schema, compression=compression or "none", use_dictionary=plain or False)
        return _Writer(writer)
    return _CsvWriter(path, schema)
