"""The release report of a file carried from run to run: privatising an output again adds to its report.

A privatised file holds its release report (the mechanisms, bounds and budget of each noised column): in
the Parquet key-value metadata ``pydp_core.release`` or, for CSV, in ``<file>.release.json``. When such a
file is privatised again (say another column, with its own bounds), the new report keeps the old one:

- ``releases``: every run's own report, oldest first;
- ``columns``: every noised column; a column noised again lists its earlier entries under ``earlier``;
- ``budget_per_record`` (and ``budget_per_unit`` when every run has one): the sequential composition of
  all the runs, rounded up, since a record's values were released by each of them.

Whether the second run may happen at all is the key ledger's question (a second release under one key is
refused unless both go through one session); this module only keeps the account.
"""
from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from typing import Any

from .frames import REPORT_KEY

__all__ = ["read_report", "accumulate", "data_files"]


def read_report(path: str, fmt: str) -> dict[str, Any] | None:
    """The release report a file (or partitioned folder) carries from an earlier run, or None.

    Raises
    ------
    ValueError
        If the report is there but is not readable JSON.
    """
    text: Any = None
    if fmt == "csv":
        side = path + ".release.json"
        if os.path.isfile(side):
            with open(side, encoding="utf-8") as fh:
                text = fh.read()
    else:
        import pyarrow.parquet as pq

        files = data_files(path) if os.path.isdir(path) else [path]
        meta = pq.read_schema(files[0]).metadata if files else None
        if meta and REPORT_KEY.encode() in meta:
            text = meta[REPORT_KEY.encode()].decode()
    if text is None:
        return None
    try:
        report = json.loads(text)
    except ValueError:
        raise ValueError(f"the release report of {path!r} is not valid JSON") from None
    if not isinstance(report, dict) or not isinstance(report.get("columns"), dict):
        raise ValueError(f"the release report of {path!r} has no 'columns'")
    return report


def data_files(folder: str) -> list[str]:
    """The data files of a Parquet folder, sorted by relative path (names starting ``_`` or ``.``, such as
    Spark's ``_SUCCESS`` and checksums, are not data, in any folder level)."""
    out: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        out.extend(os.path.join(root, n) for n in names if not n.startswith(("_", ".")))
    return sorted(out, key=lambda p: os.path.relpath(p, folder).split(os.sep))


def _runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs of a report: its ``releases``, or the report itself for a single run."""
    return list(report["releases"]) if "releases" in report else [report]


def _sum_up(values: list[float]) -> float:
    total = math.fsum(values)
    return total if Fraction(total) >= sum(Fraction(v) for v in values) else math.nextafter(total, math.inf)


def accumulate(previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """The report of a run over a file that already carries ``previous`` (unchanged if None).

    Examples
    --------
    >>> one = {"columns": {"a": {"epsilon": 0.5, "delta": 0.0}}, "budget_per_record": {"epsilon": 0.5, "delta": 0.0}}
    >>> two = {"columns": {"b": {"epsilon": 1.0, "delta": 0.0}}, "budget_per_record": {"epsilon": 1.0, "delta": 0.0}}
    >>> both = accumulate(one, two)
    >>> sorted(both["columns"]), both["budget_per_record"]["epsilon"], len(both["releases"])
    (['a', 'b'], 1.5, 2)
    """
    if previous is None:
        return current
    runs = [*_runs(previous), current]
    columns: dict[str, Any] = {}
    for run in runs:
        for name, entry in run["columns"].items():
            if name in columns:
                earlier = columns[name]
                entry = {**entry, "earlier": [*earlier.get("earlier", []), {k: v for k, v in earlier.items()
                                                                               if k != "earlier"}]}
            columns[name] = entry
    out: dict[str, Any] = {**current, "columns": columns, "releases": runs}
    for budget in ("budget_per_record", "budget_per_unit"):
        found = [run.get(budget) for run in runs]
        parts = [p for p in found if isinstance(p, dict)]
        if len(parts) == len(found):
            out[budget] = {"epsilon": _sum_up([p["epsilon"] for p in parts]),
                           "delta": _sum_up([p["delta"] for p in parts]), "releases": len(parts),
                           "composition": "sequential over the releases of this file"}
        else:
            out.pop(budget, None)
    return out
