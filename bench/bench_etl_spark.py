"""Spark local mode: pydp_core.spark.privatize against a plain mapInArrow identity.

One float64 column of N rows (spark.range, P partitions) is written to Spark's "noop" sink, so the
timings cover the scan, the Arrow round trip to the Python workers and the noise, not a file format:

- ``identity``: ``df.mapInArrow(identity)`` (the floor for any Arrow-based Python transformation);
- ``by_order``: ``pydp_core.spark.privatize(df, ["x"], mech, key)`` (a counting pass, then the noise);
- ``by_id``: the same with ``index="id"`` (one pass).

Reported: overhead ratios against the identity. N = PYDP_BENCH_SPARK_N (default 2*10^5 for CI's single
--benchmark-disable run; bench/README.md uses 2*10^7). Correctness: the output equals
pydp_core.privatize of the same column with the same key.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import pydp_core
from pydp_core import io as etl

pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pytest.importorskip("pyspark", reason="pyspark is an optional extra (pydp_core[spark])")
from pydp_core import spark as pspark  # noqa: E402
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # noqa: E402  (a check only: no record)

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

N = int(os.environ.get("PYDP_BENCH_SPARK_N", 200_000))
P = 4
KEY = bytes(range(32))
# The benchmark releases the same column under one key repeatedly (and the values are already bounded).
SIM = dict(ledger=UNRECORDED, sensitivity_holds=True)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    root = os.path.dirname(os.path.dirname(os.path.abspath(pydp_core.__file__)))
    os.environ["PYTHONPATH"] = root + os.pathsep + os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONSAFEPATH"] = "1"  # workers import the package under test, never the working directory's
    try:
        s = (SparkSession.builder.master("local[2]").appName("pydp_core-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as exc:
        pytest.skip(f"a local Spark session cannot start here: {exc}")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _run(df):
    df.write.format("noop").mode("overwrite").save()


def test_spark_overhead_against_mapinarrow_identity(benchmark, speed, spark):
    def _identity(batches):  # defined here, so that it reaches the workers by value, not by module name
        yield from batches

    mech = etl.mechanism("laplace", epsilon=1.0, sensitivity=1.0)
    df = spark.range(0, N, numPartitions=P).selectExpr("id", "cast(id % 1000 as double) as x")
    _run(df.mapInArrow(_identity, df.schema))  # warm up the Python workers
    t_id = speed.time(lambda: _run(df.mapInArrow(_identity, df.schema)), repeat=3, min_time=0)
    t_order = speed.time(lambda: _run(pspark.privatize(df, mech, columns=["x"], key=KEY, **SIM)), repeat=3, min_time=0)
    t_index = speed.time(lambda: _run(pspark.privatize(df, mech, columns=["x"], key=KEY, index="id", **SIM)), repeat=3, min_time=0)

    head = pspark.privatize(df, mech, columns=["x"], key=KEY, **SIM).where(f"id < {min(N, 100_000)}").toArrow().sort_by("id")
    want = pydp_core.privatize((np.arange(head.num_rows) % 1000).astype(float), mech, key=KEY, columns="x", **SIM)
    np.testing.assert_array_equal(head.column("x").to_numpy(), want)

    benchmark.extra_info.update(
        N=N, identity_values_per_s=round(N / t_id), by_order_over_identity=round(t_order / t_id, 2),
        by_id_over_identity=round(t_index / t_id, 2),
    )
    print(f"\nN = {N}, {P} partitions, local[2]: identity {N / t_id:.3g} values/s; privatize by order "
          f"{t_order / t_id:.2f} x identity time, by row id {t_index / t_id:.2f} x")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
