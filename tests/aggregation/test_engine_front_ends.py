"""``pydp_core.spark.aggregate`` / ``pydp_core.dask.aggregate`` (and ``top_k``) and polars LazyFrames: the
kind given comes back, bit for bit the local release for one key, quantiles and top-k included, and a
Session is charged once, at the driver."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import pydp_core
from pydp_core.aggregation import aggregate, aggregate_report, top_k

dd = pytest.importorskip("dask.dataframe", reason="dask is an optional extra (pydp_core[dask])")

# pyspark 4 warns that it does not fully support pandas 3 whenever it touches pandas.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

KEY = bytes(range(1, 33))
QUANTILES = dict(privacy_unit="pid", by="g", aggregations={"x": ["median", ("quantile", [0.1, 0.9]), "sum", "max"],
                                                           "pid": ["privacy_id_count"]},
                 bounds={"x": (0.0, 10.0)}, max_partitions=2, max_contributions=2, epsilon=4.0, delta=1e-6, key=KEY)
TOP = dict(column="code", k=3, privacy_unit="pid", max_partitions=2, epsilon=2.0, delta=1e-6, key=KEY)


def visits(n=20_000, seed=11):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"pid": rng.integers(0, 2500, n), "g": rng.integers(0, 6, n),
                         "code": rng.choice(list("abcdefgh"), n, p=[.3, .2, .15, .1, .1, .05, .05, .05]),
                         "x": rng.uniform(-2.0, 12.0, n)})


def _same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Equal column for column; float columns bit for bit."""
    assert list(got.columns) == list(want.columns)
    for c in want.columns:
        g, w = np.asarray(got[c]), np.asarray(want[c])
        if w.dtype.kind == "f":
            assert np.array_equal(g.view(np.int64), w.view(np.int64)), c
        else:
            assert g.tolist() == w.tolist(), c


# -- Dask ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("parts", [1, 4])
def test_dask_aggregate_is_a_dask_frame_equal_to_the_local_release(parts):
    df = visits()
    local = aggregate(df, **QUANTILES)
    assert len(local) == 6 and "x_median" in local.columns
    out = pydp_core.dask.aggregate(dd.from_pandas(df.sample(frac=1.0, random_state=parts), npartitions=parts),
                                   **QUANTILES)
    assert isinstance(out, dd.DataFrame) and out.npartitions == 1
    _same(out.compute(), local)
    assert aggregate_report(out.compute()) == aggregate_report(local) == aggregate_report(out)


def test_dask_top_k_equals_the_local_one():
    df = visits()
    local = top_k(df, **TOP)
    assert len(local) == 3
    out = pydp_core.dask.top_k(dd.from_pandas(df, npartitions=3), **TOP)
    assert isinstance(out, dd.DataFrame)
    _same(out.compute(), local)
    with pytest.raises(TypeError, match="by"):
        pydp_core.dask.top_k(dd.from_pandas(df, npartitions=3), **TOP, by="g")


def test_a_session_is_charged_once_at_the_driver_for_a_dask_quantile_release():
    df = visits()
    ddf = dd.from_pandas(df, npartitions=4)
    args = {k: v for k, v in QUANTILES.items() if k not in ("key", "epsilon", "delta")}
    s = pydp_core.Session(pydp_core.ApproxDP(5.0, 1e-5), key=pydp_core.io.generate_key())
    out = s.aggregate(ddf, epsilon=4.0, delta=1e-6, **args)
    assert isinstance(out, dd.DataFrame)
    out.compute()
    out.compute()  # computing again runs no release
    alone = pydp_core.Session(pydp_core.ApproxDP(5.0, 1e-5), key=pydp_core.io.generate_key())
    alone.aggregate(df, epsilon=4.0, delta=1e-6, **args)
    assert s.spent() == alone.spent() != pydp_core.ApproxDP(0.0, 0.0)  # one charge, as the local release's
    assert out.attrs["pydp_core.aggregation"]["session"]["spent"] == repr(s.spent())
    with pytest.raises(pydp_core.BudgetExceededError):
        s.aggregate(ddf, epsilon=4.0, delta=1e-6, **dict(args, bounds={"x": (0.0, 5.0)}))


def test_session_top_k_of_a_dask_frame_is_the_local_release_charged_once():
    df = visits()
    args = {k: v for k, v in TOP.items() if k != "key"}
    key = pydp_core.io.generate_key()
    s = pydp_core.Session(pydp_core.ApproxDP(5.0, 1e-5), key=key)
    out = s.top_k(dd.from_pandas(df, npartitions=3), **args)
    assert isinstance(out, dd.DataFrame)
    got = out.compute()
    assert list(got.columns) == ["code", "rank"] and len(got) == 3
    spent = s.spent()
    assert spent != pydp_core.ApproxDP(0.0, 0.0)
    assert out.attrs["pydp_core.aggregation"]["session"]["spent"] == repr(spent)
    again = s.top_k(df, **args)  # the local release of the same data: a free repeat, bit for bit
    _same(again, got)
    assert s.spent() == spent
    with pytest.raises(pydp_core.BudgetExceededError):
        s.top_k(dd.from_pandas(df, npartitions=2), **dict(args, epsilon=4.0))


def _with_nulls(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every seventh x missing (NaN)."""
    x = df["x"].to_numpy().copy()
    x[::7] = np.nan
    return df.assign(x=x)


def test_a_null_policy_on_dask_is_the_local_release_in_the_ledger_and_the_session():
    df = _with_nulls(visits())
    ddf = dd.from_pandas(df, npartitions=3)
    key = pydp_core.io.generate_key()
    args = dict(QUANTILES, key=key, nulls={"x": "replace=1.5"})
    out = pydp_core.dask.aggregate(ddf, **args).compute()
    _same(out, aggregate(df, **args))  # the local release under the same key: an exact repeat
    assert aggregate_report(out)["nulls"] == {"x": "replace=1.5"}
    with pytest.raises(pydp_core.io.KeyReuseError, match="another release"):
        aggregate(df, **dict(args, nulls="drop"))  # another policy is another release under the key
    ranked = pydp_core.dask.top_k(ddf, **dict(TOP, key=pydp_core.io.generate_key(), score="x", bounds=(0.0, 10.0),
                                               nulls="drop")).compute()
    assert len(ranked) == 3
    s = pydp_core.Session(pydp_core.ApproxDP(10.0, 1e-5), key=pydp_core.io.generate_key())
    plain = {k: v for k, v in QUANTILES.items() if k != "key"}
    got = s.aggregate(ddf, **dict(plain, nulls="drop")).compute()
    spent = s.spent()
    _same(s.aggregate(df, **dict(plain, nulls="drop")), got)  # a free repeat, bit for bit
    assert s.spent() == spent
    s.aggregate(ddf, **dict(plain, nulls="replace=0"))  # another policy: another release, charged
    assert s.spent() != spent


def test_polars_nulls_are_the_pyarrow_release():
    pl = pytest.importorskip("polars")
    df = visits()
    x = df["x"].to_numpy().copy()
    table = pa.Table.from_pandas(df, preserve_index=False).set_column(
        3, "x", pa.array([None if i % 7 == 0 else v for i, v in enumerate(x.tolist())], pa.float64()))
    args = dict(QUANTILES, key=pydp_core.io.generate_key(), nulls={"x": "replace=1.5"})
    want = aggregate(table, **args)
    got = aggregate(pl.from_arrow(table), **args).to_arrow()
    for c in want.column_names:
        assert got.column(c).to_pylist() == want.column(c).to_pylist(), c
    assert aggregate_report(want)["nulls"] == {"x": "replace=1.5"}


# -- polars ----------------------------------------------------------------------------------------------
def test_polars_lazy_frames_come_back_lazy_with_the_same_release():
    pl = pytest.importorskip("polars")
    df = visits()
    want = aggregate(pa.Table.from_pandas(df, preserve_index=False), **QUANTILES)
    out = aggregate(pl.from_pandas(df).lazy(), **QUANTILES)
    assert isinstance(out, pl.LazyFrame)
    got = out.collect().to_arrow()
    for c in want.column_names:
        assert got.column(c).to_pylist() == want.column(c).to_pylist(), c
    assert aggregate_report(out) == aggregate_report(want)


def test_privatize_takes_polars_frames_and_series():
    pl = pytest.importorskip("polars")
    table = pa.table({"x": [0.5, None, 0.25, 1.0], "id": [1, 2, 3, 4]})
    mech = pydp_core.LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    want = pydp_core.privatize(table, mech, key=KEY, columns="x", bounds=(0, 1))
    for data, kind in ((pl.from_arrow(table), pl.DataFrame), (pl.from_arrow(table).lazy(), pl.LazyFrame)):
        out = pydp_core.privatize(data, mech, key=KEY, columns="x", bounds=(0, 1))
        assert isinstance(out, kind)
        frame = out.collect() if kind is pl.LazyFrame else out
        assert frame["x"].to_list() == want.column("x").to_pylist() and frame["id"].to_list() == [1, 2, 3, 4]
        assert out.attrs["pydp_core.release"]["columns"]["x"]["bounds"] == [0.0, 1.0]
    series = pydp_core.privatize(pl.from_arrow(table)["x"], mech, key=KEY, bounds=(0, 1))  # the column's own stream
    assert isinstance(series, pl.Series) and series.name == "x" and series.to_list() == want.column("x").to_pylist()


# -- Spark (the run's one session: the ``spark`` fixture of tests/conftest.py) ---------------------------------
def test_spark_aggregate_is_a_spark_frame_equal_to_the_local_release(spark):
    from pyspark.sql import DataFrame

    df = visits()
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    local = aggregate(arrow, **QUANTILES)
    out = pydp_core.spark.aggregate(spark.createDataFrame(arrow).repartition(4), **QUANTILES)
    assert isinstance(out, DataFrame)
    _same(out.toArrow().to_pandas(), local.to_pandas())
    assert aggregate_report(out) == aggregate_report(local)
    meta = out.schema[out.columns[0]].metadata["pydp_core.aggregation"]
    assert meta and "x_median" in meta  # the report travels with the frame's schema


def test_spark_top_k_equals_the_local_one(spark):
    df = visits()
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    local = top_k(arrow, **TOP)
    out = pydp_core.spark.top_k(spark.createDataFrame(arrow).repartition(3), **TOP)
    _same(out.toArrow().to_pandas(), local.to_pandas())
    nulls = pa.Table.from_pandas(_with_nulls(df), preserve_index=False)  # x: SQL NULLs on Spark
    nulls = nulls.set_column(3, "x", pa.array(_with_nulls(df)["x"].to_numpy(), from_pandas=True))
    args = dict(TOP, key=pydp_core.io.generate_key(), score="x", bounds=(0.0, 10.0), nulls="replace=2.5")
    out = pydp_core.spark.top_k(spark.createDataFrame(nulls).repartition(3), **args)
    _same(out.toArrow().to_pandas(), top_k(nulls, **args).to_pandas())
    assert aggregate_report(out)["nulls"] == {"x": "replace=2.5"}
