"""pydp_core.spark.privatize on a local Spark session (local[2, 4]: 2 threads, up to 4 task attempts)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from support import frames as sup  # noqa: E402

import pydp_core  # noqa: E402

pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pyspark = pytest.importorskip("pyspark", reason="pyspark is an optional extra (pydp_core[spark])")
from support.paths import REPO_ROOT, subprocess_env  # noqa: E402

from pydp_core import spark as pspark  # noqa: E402
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # noqa: E402  (a check only: no record)

# pyspark 4.0 warns that it does not fully support pandas 3 whenever it touches pandas (mapInArrow's
# set-up does); that is about the environment, not about this code.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

KEY = bytes(range(32))
N = 60_000
B = 4096

# The noise of different data under one key is compared on purpose (the ledger is tested in
# tests/release/test_release_safety.py): no ledger, and the sensitivity declared to hold without bounds.
SIM = dict(ledger=UNRECORDED, sensitivity_holds=True)


def _frame(spark, partitions, n=N):
    return spark.range(0, n, numPartitions=partitions).selectExpr(
        "id", "cast(id % 100 as double) as x", "cast(id as int) as y", "concat('r', id) as s"
    )


def _collect(df, *cols):
    pdf = df.toArrow().to_pandas().sort_values("id")
    return {c: pdf[c].to_numpy() for c in ("id", *cols)}


def _reference(mech, n=N, columns=("x", "y")):
    """The local release of the same columns (one release: its description names all its columns)."""
    import pandas as pd

    ids = np.arange(n)
    frame = pd.DataFrame({"x": (ids % 100).astype(float), "y": ids.astype(float)})
    out = pydp_core.privatize(frame, mech, **SIM, key=KEY, columns=list(columns), block_rows=B)
    return {c: out[c].to_numpy() for c in columns}


def test_output_does_not_depend_on_the_partitioning(spark):
    mech = sup.laplace()
    ref = _reference(mech)
    for parts in (1, 3, 8):
        out = pspark.privatize(_frame(spark, parts), mech, columns=["x", "y"], **SIM, key=KEY, block_rows=B)
        assert [f.dataType.simpleString() for f in out.schema.fields] == ["bigint", "double", "double", "string"]
        got = _collect(out, "x", "y")
        np.testing.assert_array_equal(got["id"], np.arange(N))
        np.testing.assert_array_equal(got["x"], ref["x"])
        np.testing.assert_array_equal(got["y"], ref["y"])


def test_row_id_index_survives_a_shuffle(spark):
    mech = sup.laplace()
    ref = _reference(mech, columns=("x",))
    shuffled = _frame(spark, 5).repartition(3)  # hash-partitioned: order and split both change
    got = _collect(pspark.privatize(shuffled, mech, columns=["x"], **SIM, key=KEY, index="id", block_rows=B), "x")
    np.testing.assert_array_equal(got["x"], ref["x"])


def test_noise_statistics_and_independent_partitions(spark):
    mech = sup.laplace(epsilon=0.5)
    n = 4 * 25_000
    df = spark.range(0, n, numPartitions=4).selectExpr("id", "cast(0 as double) as x")
    got = _collect(pspark.privatize(df, mech, columns=["x"], **SIM, key=KEY, block_rows=B), "x")
    sup.assert_noise_distribution(got["x"], mech)
    parts = got["x"].reshape(4, -1)
    for i in range(3):
        sup.assert_uncorrelated(parts[i], parts[i + 1])


def test_a_retried_task_reproduces_its_noise(spark, tmp_path):
    mech = sup.gaussian()
    ref = _reference(mech)
    marks = str(tmp_path)

    def flaky(batches):
        # Fails the first attempt of partition 1 after it has produced a batch.
        from pyspark import TaskContext

        ctx = TaskContext.get()
        for i, batch in enumerate(batches):
            yield batch
            if ctx.partitionId() == 1 and ctx.attemptNumber() == 0 and i == 0:
                open(os.path.join(marks, f"failed-stage{ctx.stageId()}"), "w").close()
                raise RuntimeError("injected task failure")

    df = _frame(spark, 4)
    df = df.mapInArrow(flaky, df.schema)
    got = _collect(pspark.privatize(df, mech, columns=["x", "y"], **SIM, key=KEY, block_rows=B), "x", "y")
    assert len(os.listdir(marks)) >= 2  # both the counting pass and the noise pass were retried
    np.testing.assert_array_equal(got["x"], ref["x"])
    np.testing.assert_array_equal(got["y"], ref["y"])


def test_nulls_bounds_and_passthrough(spark):
    mech = pydp_core.LaplaceMechanism(epsilon=1.0, sensitivity=10.0)  # the sensitivity of bounds (0, 10)
    df = spark.range(0, 1000, numPartitions=3).selectExpr(
        "id", "case when id % 7 = 0 then null else cast(id as double) end as x", "concat('r', id) as s"
    )
    got = df.toArrow()
    out = pspark.privatize(df, mech, columns="x", **SIM, key=KEY, bounds=(0, 10), block_rows=B).toArrow().sort_by("id")
    want = pydp_core.privatize(got.sort_by("id"), mech, columns=["x"], **SIM, key=KEY, bounds=(0, 10), block_rows=B)
    assert out.column("x").to_pylist() == want.column("x").to_pylist()
    assert out.column("s").to_pylist() == want.column("s").to_pylist()
    assert out.column("x").null_count == 143


@pytest.mark.parametrize("index", [None, "id"], ids=["positional", "indexed"])
def test_null_policies_are_the_local_release(spark, index):
    """drop and replace=VALUE on SQL NULLs, applied in each task: the rows kept are numbered on as in
    ``df.toArrow()`` (the counting pass counts them)."""
    mech = pydp_core.LaplaceMechanism(epsilon=1.0, sensitivity=10.0)
    df = spark.range(0, 3000, numPartitions=3).selectExpr(
        "id", "case when id % 7 = 0 then null else cast(id % 10 as double) end as x",
        "case when id % 11 = 3 then null else cast(id % 9 as double) end as y")
    arrow = df.toArrow()
    for nulls in ("drop", {"x": "replace=2.5", "y": "drop"}):
        args = dict(columns=["x", "y"], **SIM, key=KEY, bounds=(0, 10), block_rows=256, index=index, nulls=nulls)
        out = pspark.privatize(df, mech, **args).toArrow().sort_by("id")
        want = pydp_core.privatize(arrow, mech, **args).sort_by("id")
        assert out.num_rows == want.num_rows < arrow.num_rows
        assert out.column("x").null_count == 0
        for c in ("id", "x", "y"):
            assert out.column(c).to_pylist() == want.column(c).to_pylist(), (nulls, c)


def test_nondeterministic_input_fails_closed(spark):
    mech = sup.laplace()
    df = spark.range(0, 1000, numPartitions=2).selectExpr("id", "cast(id as double) as x")

    def drop_at_random(batches):  # a different subset of rows at every evaluation
        rng = np.random.default_rng()
        for batch in batches:
            yield batch.filter(rng.random(batch.num_rows) < 0.5)

    df = df.mapInArrow(drop_at_random, df.schema)
    with pytest.raises(Exception, match="not deterministic"):
        pspark.privatize(df, mech, columns=["x"], **SIM, key=KEY).collect()


def test_errors(spark):
    mech = sup.laplace()
    df = _frame(spark, 2, 10)
    with pytest.raises(ValueError, match="32 bytes|exactly"):
        pspark.privatize(df, mech, columns=["x"], key=b"short")
    with pytest.raises(TypeError, match="must be numeric"):
        pspark.privatize(df, mech, columns=["s"], **SIM, key=KEY)
    with pytest.raises(ValueError, match="not found"):
        pspark.privatize(df, mech, columns=["nope"], **SIM, key=KEY)
    with pytest.raises(TypeError, match="integer column"):
        pspark.privatize(df, mech, columns=["x"], **SIM, key=KEY, index="s")
    with pytest.raises(TypeError, match="DataFrame"):
        pspark.privatize(None, mech, columns=["x"], **SIM, key=KEY)
    with pytest.raises(TypeError, match="privatize"):
        pspark.privatize(df, object(), columns=["x"], **SIM, key=KEY)


def test_a_second_release_under_the_key_is_refused_unless_resumed(spark):
    """The driver records the release once (the tasks run without a ledger)."""
    key = pydp_core.io.generate_key()
    mech = pydp_core.io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 100))
    df = spark.range(0, 500, numPartitions=2).selectExpr("id", "cast(id % 100 as double) as x")
    first = _collect(pspark.privatize(df, mech, columns="x", key=key, index="id", block_rows=B), "x")
    with pytest.raises(pydp_core.io.KeyReuseError, match="resume=True"):
        pspark.privatize(df, mech, columns="x", key=key, index="id", block_rows=B)
    again = _collect(pspark.privatize(df, mech, columns="x", key=key, index="id", block_rows=B, resume=True), "x")
    np.testing.assert_array_equal(first["x"], again["x"])


def test_workers_find_pydp_core_without_pyspark_python(tmp_path):
    # A driver in a virtual environment, no PYSPARK_PYTHON: the local workers must run this interpreter
    # (the default "python3" does not see the environment's packages: ModuleNotFoundError in the worker).
    import subprocess

    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests do not run in a virtual environment")
    script = (
        "import pydp_core as dp\n"
        "from pyspark.sql import SparkSession\n"
        "from pydp_core import spark as ps\n"
        "s = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "df = s.range(0, 100).selectExpr('cast(id as double) as x')\n"
        "out = ps.privatize(df, dp.LaplaceMechanism(epsilon=1.0), key=bytes(32), columns='x',\n"
        "                   sensitivity_holds=True).collect()\n"
        "print('rows', len(out))\n"
        "s.stop()\n"
    )
    env = {k: v for k, v in subprocess_env().items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    if "JAVA_HOME is not set" in proc.stderr or "Java gateway process exited" in proc.stderr:
        pytest.skip("no Java for a local Spark session")
    assert proc.returncode == 0 and "rows 100" in proc.stdout, proc.stderr[-3000:]


def test_the_spark_extra_pins_the_pandas_and_pyarrow_that_pyspark_supports():
    # pyspark declares its pandas and pyarrow minimums and warns at import time of pandas >= 3 (a warning
    # that filterwarnings = error turns into a failure): the extra must stay inside that range.
    import re
    from importlib.metadata import requires

    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    from packaging.requirements import Requirement
    from packaging.version import Version

    with open(REPO_ROOT / "pyproject.toml", "rb") as fh:
        extra = {Requirement(r).name: Requirement(r).specifier for r in tomllib.load(fh)["project"]["optional-dependencies"]["spark"]}
    declared = {}
    for line in requires("pyspark") or []:
        m = re.match(r"(pandas|pyarrow)\s*>=\s*([0-9.]+)", line)
        if m:
            declared[m.group(1)] = Version(m.group(2))
    assert set(declared) == {"pandas", "pyarrow"}
    for name, minimum in declared.items():
        assert name in extra, f"the spark extra does not name {name}"
        lowest = [Version(spec.version) for spec in extra[name] if spec.operator == ">="]
        assert lowest and max(lowest) >= minimum, (name, str(extra[name]), minimum)
    assert not extra["pandas"].contains(Version("3.0.0"))


def test_rerun_at_another_epsilon_is_refused_at_the_driver(spark):
    from pydp_core.io import KeyReuseError

    df = _frame(spark, 2, n=2000)
    pspark.privatize(df, sup.laplace(), key=KEY, columns="x", sensitivity_holds=True, index="id")
    with pytest.raises(KeyReuseError, match="another release"):
        pspark.privatize(df, sup.laplace(sensitivity=2.0), key=KEY, columns="x", sensitivity_holds=True, index="id")


def test_session_charges_once_at_the_driver_and_refuses_past_its_limit(spark):
    from pydp_core.io import generate_key

    df = _frame(spark, 4, n=4000).selectExpr("id", "x", "cast(id % 1000 as long) as pid", "cast(id % 4 as long) as g")
    s = pydp_core.Session(pydp_core.PureDP(2.5), key=generate_key())
    noisy = s.privatize(df, sup.laplace(), columns="x", sensitivity_holds=True, index="id")
    assert s.spent() == pydp_core.PureDP(1.0)  # recorded and charged at the driver, before any task ran
    first = _collect(noisy, "x")["x"]
    assert np.array_equal(_collect(noisy, "x")["x"], first) and s.spent() == pydp_core.PureDP(1.0)
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds={"x": (0, 100)}, max_partitions=1,
                max_contributions=4, public_partitions=[0, 1, 2, 3])
    out = s.aggregate(df, epsilon=1.0, **args)
    assert out.count() == 4 and s.spent() == pydp_core.PureDP(2.0)  # a Spark DataFrame, as given
    with pytest.raises(pydp_core.BudgetExceededError):
        s.aggregate(df, epsilon=1.0, **dict(args, bounds={"x": (0, 50)}))
    with pytest.raises(pydp_core.BudgetExceededError):
        s.privatize(df, sup.laplace(), columns="x", sensitivity_holds=True, index="id", block_rows=1 << 12)
    assert s.spent() == pydp_core.PureDP(2.0)
