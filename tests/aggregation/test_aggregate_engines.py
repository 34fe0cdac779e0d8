"""pydp_core.aggregation on Dask and Spark: the release equals the local one bit for bit for one key, does
not depend on the partitioning, and a killed-and-retried Spark task reproduces its output."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pydp_core.aggregation import aggregate, aggregate_report

dd = pytest.importorskip("dask.dataframe", reason="dask is an optional extra (pydp_core[dask])")

from pydp_core.aggregation.engines import aggregate_dask, aggregate_spark  # noqa: E402

# pyspark 4 warns that it does not fully support pandas 3 whenever it touches pandas.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

KEY = bytes(range(32))


def table(n=30_000, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"pid": rng.integers(0, 3000, n), "city": rng.choice(["a", "b", "c", "d"], n),
                         "g": rng.integers(0, 25, n), "x": rng.uniform(-2.0, 12.0, n)})


ARGS = dict(privacy_unit="pid", by="g", aggregations={"x": ["count", "sum", "mean", "variance"], "pid": ["privacy_id_count"]},
            bounds={"x": (0.0, 10.0)}, max_partitions=3, max_contributions=2, epsilon=4.0, delta=1e-6, key=KEY)
PUBLIC = dict(ARGS, by=["city", "g"], aggregations={"x": ["sum"]}, delta=0.0,
              public_partitions=[("a", 1), ("b", 2), ("zz", 99)])


ZCDP = {k: v for k, v in ARGS.items() if k != "epsilon"} | dict(rho=0.8)
GAUSS = dict(ARGS, noise="gaussian")


@pytest.mark.parametrize("args", [ARGS, PUBLIC, ZCDP, GAUSS], ids=["selection", "public", "zcdp", "gaussian"])
def test_dask_equals_local_for_any_partitioning(args):
    df = table()
    local = aggregate(df, **args)
    assert len(local) > 0
    for parts in (1, 3, 7):
        out = aggregate_dask(dd.from_pandas(df.sample(frac=1.0, random_state=parts), npartitions=parts), **args)
        # dask stores strings as string[pyarrow]: same values, another pandas dtype for the group column
        pd.testing.assert_frame_equal(out, local, check_dtype=False)
        assert list(out.dtypes[len(args["by"]) if isinstance(args["by"], list) else 1:]) == \
            list(local.dtypes[len(args["by"]) if isinstance(args["by"], list) else 1:])
        assert aggregate_report(out) == aggregate_report(local)


@pytest.mark.parametrize("args", [ARGS, PUBLIC], ids=["selection", "public"])
def test_spark_equals_local_for_any_partitioning(spark, args):
    df = table()
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    local = aggregate(arrow, **args)
    for parts in (2, 5):
        sdf = spark.createDataFrame(arrow).repartition(parts)
        out = aggregate_spark(sdf, **args)
        assert out.to_pandas().equals(local.to_pandas())
        assert aggregate_report(out) == aggregate_report(local)


def test_spark_retried_task_reproduces_its_output(spark, monkeypatch, tmp_path):
    """The first attempt of partition 0 dies half-way; Spark retries it (local[2, 4]) and the release is
    the local one."""
    import pydp_core.aggregation.engines as engines

    real = engines._partial_arrays

    def flaky(pdf, spec):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None and ctx.partitionId() == 0 and ctx.attemptNumber() == 0:
            (marker / f"failed-{ctx.stageId()}").write_text("x")
            raise RuntimeError("simulated executor loss")
        return real(pdf, spec)

    marker = tmp_path
    monkeypatch.setattr(engines, "_partial_arrays", flaky)
    arrow = pa.Table.from_pandas(table(seed=8), preserve_index=False)
    out = aggregate_spark(spark.createDataFrame(arrow).repartition(3), **ARGS)
    local = aggregate(arrow, **ARGS)
    assert out.to_pandas().equals(local.to_pandas())
    assert list(tmp_path.glob("failed-*"))  # the first attempt did fail


def test_dask_rerun_at_another_epsilon_is_refused_at_the_driver():
    from pydp_core.io import KeyReuseError

    ddf = dd.from_pandas(table(3000), npartitions=3)
    first = aggregate_dask(ddf, **ARGS)
    pd.testing.assert_frame_equal(aggregate_dask(ddf, **ARGS), first)  # the same release on the same data
    with pytest.raises(KeyReuseError, match="another release"):
        aggregate_dask(ddf, **{**ARGS, "epsilon": 8.0})


def test_spark_rerun_at_another_epsilon_is_refused_at_the_driver(spark):
    from pydp_core.io import KeyReuseError

    sdf = spark.createDataFrame(pa.Table.from_pandas(table(3000), preserve_index=False))
    aggregate_spark(sdf, **ARGS)
    with pytest.raises(KeyReuseError, match="another release"):
        aggregate_spark(sdf, **{**ARGS, "epsilon": 8.0})
