"""Files in, files out: :func:`aggregate_file` for Parquet (files or partitioned folders, Spark's output
included) and CSV, with atomic output and the guarantee in the Parquet key-value metadata and a JSON
sidecar ``OUT.json``.

Contribution bounding needs every row of a person, so the input is read whole, but only the columns the
aggregation uses; the output (one row per group) is small.
"""
from __future__ import annotations

import json
import os
from typing import Any

from .._validation import require_extra

#: The suffix of the JSON sidecar written next to the output.
SIDECAR_SUFFIX = ".json"


def input_format(path: str, fmt: str | None) -> str:
    """"parquet" or "csv" from ``fmt`` or the name; a folder is a partitioned Parquet data set."""
    from ..io.files import file_format

    if fmt is None and os.path.isdir(path):
        return "parquet"
    return file_format(path, fmt)


def read_columns(path: str, columns: list[str], *, format: str | None = None, delimiter: str = ",") -> Any:
    """The ``columns`` of a Parquet file or folder (hive partitions and Spark's ``_SUCCESS`` understood) or
    of a CSV file, as a pyarrow Table."""
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
        return data.to_table(columns=columns)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be one character, got {delimiter!r}")
    header = _csv_header(path, delimiter)
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"input {path!r} has no column(s) {', '.join(map(repr, missing))}")
    return pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                          convert_options=pacsv.ConvertOptions(include_columns=columns))


def _csv_header(path: str, delimiter: str) -> list[str]:
    import pyarrow.csv as pacsv

    reader = pacsv.open_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter))
    return list(reader.schema.names)


def write_result(table: Any, target: str, *, format: str = "parquet", delimiter: str = ",", overwrite: bool = False,
                 protect: tuple[str, ...] = ()) -> str:
    """Write an :func:`~pydp_core.aggregate.aggregate` result atomically with its report in the Parquet
    key-value metadata (Parquet) and in the sidecar ``target + ".json"`` (always). Returns the sidecar path."""
    pa, pq, pacsv = require_extra("etl", "pyarrow", "pyarrow.parquet", "pyarrow.csv")
    from ..io.atomic import atomic_output, same_file
    from . import aggregate_report

    for p in protect:
        if same_file(p, target):
            raise ValueError(f"output {target!r} is the input: choose another path")
    sidecar = target + SIDECAR_SUFFIX
    for p in (target, sidecar):
        if os.path.exists(p) and not overwrite:
            raise FileExistsError(f"{p!r} exists (use --force to replace it)")
    report = aggregate_report(table)
    with atomic_output(target) as tmp:
        if format == "parquet":
            pq.write_table(table, tmp)
        else:
            pacsv.write_csv(table.replace_schema_metadata(None), tmp,
                            write_options=pacsv.WriteOptions(delimiter=delimiter))
    with atomic_output(sidecar) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2, sort_keys=True)
            fh.write("\n")
    return sidecar
