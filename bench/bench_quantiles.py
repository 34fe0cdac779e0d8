"""Throughput of the quantile aggregates and of ``top_k`` (CPU time, end to end on an in-memory table).

- ``median``: N rows, N persons, 100 groups, median and 0.9-quantile per group at epsilon 1 (public groups),
  beside pyarrow's exact ``approximate_median`` group-by on the same table, same run.
- ``top_k``: N rows, N/2 persons, Zipf-distributed codes, the 10 most frequent at epsilon 1, delta 1e-6.

N = PYDP_BENCH_Q_N (default 2*10^5, what CI runs once with --benchmark-disable; the figure of the issue is
N = 10^7 rows, goal >= 10^7 rows/s per core). Correctness is asserted in every mode: the medians lie within
the rank error bound of ``docs/aggregate.md`` section 9 (beta 10^-6), and the top value is the most frequent.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from pydp_core.aggregation import aggregate, aggregate_report, top_k
from pydp_core.aggregation import quantiles as qm
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")

N = int(os.environ.get("PYDP_BENCH_Q_N", 200_000))
KEY = bytes(range(32))


def _table(n: int):
    rng = np.random.default_rng(25)
    return pa.table({"pid": np.arange(n), "g": rng.integers(0, 100, n), "x": rng.normal(500.0, 100.0, n),
                     "code": (rng.zipf(1.5, n) % 1000).astype(np.int64)})


TABLE = _table(N)


def _median():
    return aggregate(TABLE, privacy_unit="pid", by="g", aggregations={"x": ["median", ("quantile", [0.9])]},
                     bounds={"x": (0.0, 1024.0)}, max_partitions=1, max_contributions=1, epsilon=1.0, key=KEY,
                     public_partitions=list(range(100)), ledger=UNRECORDED)


def test_median(benchmark):
    out = benchmark(_median)
    d = aggregate_report(out)["aggregates"]["x_median"]
    plan = qm.QuantilePlan("median", 0.0, (0.0, 1024.0), d["level_fraction"][0], d["step_sensitivity"],
                           qm.Fraction(*d["t"]))
    bound = qm.error_bound(plan, 1e-6)
    g = TABLE.column("g").to_numpy()
    cells = np.ceil(TABLE.column("x").to_numpy())
    meds = qm.value_index(out.column("x_median").to_numpy(), (0.0, 1024.0))
    for grp, med in zip(out.column("g").to_pylist(), meds):
        c = cells[g == grp]
        assert (c <= med).sum() > c.size / 2 - bound and (c <= med - 1).sum() < c.size / 2 + bound


def test_pyarrow_median(benchmark):
    benchmark(lambda: TABLE.group_by("g").aggregate([("x", "approximate_median")]))


def test_top_k(benchmark):
    out = benchmark(lambda: top_k(TABLE, column="code", k=10, privacy_unit="pid", max_partitions=1, epsilon=1.0,
                                  delta=1e-6, key=KEY, ledger=UNRECORDED))
    counts = np.bincount(TABLE.column("code").to_numpy())
    assert out.column("code")[0].as_py() == int(np.argmax(counts))
