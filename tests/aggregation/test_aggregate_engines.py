"""pydp_core.aggregation on Dask and Spark: the release equals the local one bit for bit for one key (histograms
and vector sums included), does not depend on the partitioning, and a killed-and-retried Spark task reproduces
its output; count_distinct and bounds="auto" included (the distinct values of each group united over the
partitions, the bounds searched on grid counts summed over the partitions)."""
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


# -- histograms and vector sums -----------------------------------------------------------------------------
EDGES = [-1.0, 0.0, 2.5, 5.0, 11.0]
SHAPES = dict(privacy_unit="pid", by="g", aggregations={"x": [("histogram", EDGES), "sum"], "v": [("vector_sum", "l2", 1.5, 3)],
                                                         "w": [("vector_sum", "linf", 0.75, 2)]},
              bounds={"x": (0.0, 10.0)}, max_partitions=3, max_contributions=2, epsilon=4.0, delta=1e-6, key=KEY)
SHAPES_GAUSS = dict(SHAPES, noise="gaussian", public_partitions=[0, 3, 7, 99])


def vector_table(n=6000, seed=5):
    rng = np.random.default_rng(seed)
    df = table(n, seed)
    df["v"] = list(rng.standard_cauchy((n, 3)))  # heavy tails: many rows are clipped
    df["w"] = list(rng.normal(0.0, 1.0, (n, 2)))
    return df


def _bits(col) -> list:
    """A column as comparable values: float cells and vectors by their bits, anything else as is."""
    out = []
    for v in (col.to_pylist() if hasattr(col, "to_pylist") else list(col)):
        if isinstance(v, (list, np.ndarray)):
            out.append(np.asarray(v, dtype=np.float64).view(np.int64).tolist())
        elif isinstance(v, float):
            out.append(np.float64(v).view(np.int64).item())
        else:
            out.append(v)
    return out


def _same_release(got, want) -> None:
    names = got.column_names if hasattr(got, "column_names") else list(got.columns)
    assert names == (want.column_names if hasattr(want, "column_names") else list(want.columns))
    for c in names:
        assert _bits(got[c]) == _bits(want[c]), c
    assert aggregate_report(got) == aggregate_report(want)


@pytest.mark.parametrize("args", [SHAPES, SHAPES_GAUSS], ids=["selection", "public-gaussian"])
def test_dask_histograms_and_vector_sums_equal_local(args):
    import dask

    df = vector_table()
    local = aggregate(df, **args)
    assert len(local) > 0 and "x_histogram_3" in local.columns and len(local["v_vector_sum"].iloc[0]) == 3
    for parts in (1, 4):
        shuffled = df.sample(frac=1.0, random_state=parts)
        with dask.config.set({"dataframe.convert-string": False}):  # keep the vector cells as arrays
            ddf = dd.from_pandas(shuffled, npartitions=parts)
        _same_release(aggregate_dask(ddf, **args), local)
    # pyarrow list columns need no setting
    list_type = pd.ArrowDtype(pa.list_(pa.float64()))
    arrow_lists = df.assign(**{c: pd.array(pa.array(df[c].map(list).tolist(), pa.list_(pa.float64())), dtype=list_type)
                               for c in ("v", "w")})
    _same_release(aggregate_dask(dd.from_pandas(arrow_lists, npartitions=3), **args), local)


def test_dask_vector_column_made_strings_is_refused_by_name():
    ddf = dd.from_pandas(vector_table(50), npartitions=2)  # the default convert-string turns arrays into text
    with pytest.raises(TypeError, match=r"column 'v'.*convert-string"):
        aggregate_dask(ddf, **SHAPES)


@pytest.mark.parametrize("args", [SHAPES, SHAPES_GAUSS], ids=["selection", "public-gaussian"])
def test_spark_histograms_and_vector_sums_equal_local(spark, args):
    df = vector_table()
    arrow = pa.Table.from_pandas(df.assign(v=df["v"].map(list), w=df["w"].map(list)), preserve_index=False)
    assert pa.types.is_list(arrow.schema.field("v").type)
    local = aggregate(arrow, **args)
    assert local.num_rows > 0
    _same_release(aggregate_spark(spark.createDataFrame(arrow).repartition(3), **args), local)


# -- distinct counts and automatic bounds -------------------------------------------------------------------
DISTINCT = dict(privacy_unit="pid", by="g", aggregations={"prod": ["count_distinct"], "name": ["count_distinct"],
                                                         "z": ["count_distinct"], "x": ["sum", "median"], "y": ["mean"]},
                bounds="auto", max_partitions=3, max_contributions=2, epsilon=4.0, delta=1e-6, key=KEY)
DISTINCT_PUBLIC = dict(DISTINCT, by=["city", "g"], aggregations={"name": ["count_distinct"], "x": ["sum"], "y": ["mean"]},
                       bounds={"x": "auto", "y": (0.0, 5.0)}, rho=0.5, epsilon=None, delta=0.0, bounds_share=0.2,
                       public_partitions=[("a", 1), ("b", 2), ("c", 3), ("zz", 99)])
# Spark sums a quantile's 1025 grid cells as 1025 columns, slowly: its tests leave the median out.
DISTINCT_SPARK = dict(DISTINCT, aggregations={k: [a for a in v if a != "median"] for k, v in DISTINCT["aggregations"].items()})


def distinct_table(n=20_000, seed=11):
    rng = np.random.default_rng(seed)
    df = table(n, seed)
    df["prod"] = rng.integers(0, 400, n)  # dense integer codes in the whole table, sparse in a small partition
    df["name"] = rng.choice([f"n{i}" for i in range(300)], n)
    df["y"] = rng.lognormal(0.0, 1.0, n)
    df["z"] = rng.choice([-0.0, 0.0, 0.5], n) + rng.integers(0, 40, n)  # -0.0 and 0.0: one value
    return df


def _local_partials(df, args, null_rules=None):
    """The local engine's exact grid counts (bounds search) and partials per group, without a ledger
    (``null_rules``: the release's null policies, already applied to ``df``)."""
    from pydp_core.aggregation.local import bounded_partials, grid_partials
    from pydp_core.aggregation.spec import aggregate_spec

    spec = aggregate_spec(list(df.columns), **args, null_rules=null_rules)
    grid = grid_partials(df, spec) if spec.pending else None
    _, groups, partials = bounded_partials(df, spec, None)
    return grid, _by_group(groups, partials)


def _by_group(groups, partials):
    """Partials as {partial name: {group values: int64 values}}, independent of the order of the groups."""
    keys = list(zip(*[np.asarray(g).tolist() for g in groups]))
    return {name: {k: np.asarray(v[i]).tolist() for i, k in enumerate(keys)} for name, v in partials.items()}


def _capture(monkeypatch):
    """Record what the engine hands the driver: the summed grid counts and the combined partials."""
    import pydp_core.aggregation.engines as engines

    seen = {}
    search, release = engines.search_bounds, engines.release_partials

    def searched(spec, counts, use):
        seen["grid"] = counts
        return search(spec, counts, use)

    def released(spec, kind_types, groups, partials, use):
        seen["partials"] = _by_group(groups, partials)
        return release(spec, kind_types, groups, partials, use)

    monkeypatch.setattr(engines, "search_bounds", searched)
    monkeypatch.setattr(engines, "release_partials", released)
    return seen


def _same_inputs(seen, grid, partials) -> None:
    assert (seen.get("grid") is None) == (grid is None)
    if grid is not None:
        assert sorted(seen["grid"]) == sorted(grid)
        for c in grid:
            np.testing.assert_array_equal(seen["grid"][c], grid[c])
    assert seen["partials"] == partials


@pytest.mark.parametrize("args", [DISTINCT, DISTINCT_PUBLIC], ids=["selection", "public-zcdp"])
def test_dask_distinct_counts_and_auto_bounds_equal_local(args, monkeypatch):
    df = distinct_table()
    local = aggregate(df, **args)
    assert len(local) > 0 and aggregate_report(local)["bounds_search"]
    grid, partials = _local_partials(df, args)
    assert any(n.endswith("\x00distinct") for n in partials)
    seen = _capture(monkeypatch)
    for parts in (1, 3, 7):
        ddf = dd.from_pandas(df.sample(frac=1.0, random_state=parts), npartitions=parts)
        _same_release(aggregate_dask(ddf, **args), local)
        _same_inputs(seen, grid, partials)


def _dropping(real, pid):
    """A partition function that leaves out the partition holding ``pid`` (a lost contribution)."""

    def partition(table, spec):
        pids = table["pid"] if isinstance(table, pd.DataFrame) else table.column("pid").to_pandas()
        return real(table[:0] if isinstance(table, pd.DataFrame) else table.slice(0, 0), spec) \
            if (pids == pid).any() else real(table, spec)

    return partition


def test_dask_lost_partition_is_seen_in_distinct_counts_and_bounds_search(monkeypatch):
    """The comparisons above fail when one partition's distinct values or grid counts are not combined."""
    import pydp_core.aggregation.engines as engines

    df = distinct_table(4000)
    grid, partials = _local_partials(df, DISTINCT)
    seen = _capture(monkeypatch)
    monkeypatch.setattr(engines, "_partial_arrays", _dropping(engines._partial_arrays, int(df["pid"].iloc[0])))
    monkeypatch.setattr(engines, "_grid_arrays", _dropping(engines._grid_arrays, int(df["pid"].iloc[0])))
    aggregate_dask(dd.from_pandas(df, npartitions=3), **{**DISTINCT, "key": bytes(32)})
    assert any(not np.array_equal(seen["grid"][c], grid[c]) for c in grid)
    for name in ("prod\x00distinct", "name\x00distinct"):
        assert sum(seen["partials"][name].values()) < sum(partials[name].values())


def test_spark_distinct_counts_and_auto_bounds_equal_local(spark, monkeypatch):
    df = distinct_table()
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    local = aggregate(arrow, **DISTINCT_SPARK)
    grid, partials = _local_partials(df, DISTINCT_SPARK)
    seen = _capture(monkeypatch)
    for parts in (1, 3, 7):
        _same_release(aggregate_spark(spark.createDataFrame(arrow).repartition(parts), **DISTINCT_SPARK), local)
        _same_inputs(seen, grid, partials)
    public = dict(DISTINCT_PUBLIC, key=bytes(range(1, 33)))  # another release: another key
    _same_release(aggregate_spark(spark.createDataFrame(arrow).repartition(3), **public), aggregate(arrow, **public))


def test_spark_lost_partition_is_seen_in_distinct_counts_and_bounds_search(spark, monkeypatch):
    import pydp_core.aggregation.engines as engines

    df = distinct_table(4000)
    grid, partials = _local_partials(df, DISTINCT_SPARK)
    seen = _capture(monkeypatch)
    monkeypatch.setattr(engines, "_partial_arrays", _dropping(engines._partial_arrays, int(df["pid"].iloc[0])))
    monkeypatch.setattr(engines, "_grid_arrays", _dropping(engines._grid_arrays, int(df["pid"].iloc[0])))
    sdf = spark.createDataFrame(pa.Table.from_pandas(df, preserve_index=False)).repartition(3)
    aggregate_spark(sdf, **{**DISTINCT_SPARK, "key": bytes(32)})
    assert any(not np.array_equal(seen["grid"][c], grid[c]) for c in grid)
    for name in ("prod\x00distinct", "name\x00distinct"):
        assert sum(seen["partials"][name].values()) < sum(partials[name].values())


# -- null policies -----------------------------------------------------------------------------------------
def null_table(n=20_000, seed=13, nullable=False):
    """``distinct_table`` with missing values in the aggregated columns x and y: NaN (float64), or pandas NA
    in nullable ``Float64`` columns."""
    df = distinct_table(n, seed)
    x, y = df["x"].astype("Float64" if nullable else "float64"), df["y"].astype("Float64" if nullable else "float64")
    x[::7] = pd.NA if nullable else np.nan
    y[3::11] = pd.NA if nullable else np.nan
    return df.assign(x=x, y=y)


NULL_ARGS = dict(privacy_unit="pid", by="g", aggregations={"x": ["count", "sum", "mean"], "y": ["sum"],
                                                           "pid": ["privacy_id_count"]},
                 bounds={"x": (0.0, 10.0), "y": (0.0, 5.0)}, max_partitions=3, max_contributions=2, epsilon=4.0,
                 delta=1e-6, key=KEY)
NULL_AUTO = dict(DISTINCT_PUBLIC, aggregations={"name": ["count_distinct"], "x": ["sum"], "y": ["mean"]})
POLICIES = [("drop", "drop"),  # one policy for every aggregated column
            ({"x": "replace=1.5", "y": "drop"}, {"x": "replace=1.5", "y": "drop"}),
            ({"x": "replace=-3.0", "y": "replace=0.25"}, {"x": "replace=-3.0", "y": "replace=0.25"})]


def _described(described, args):
    """The report's ``nulls`` of a POLICIES entry: one policy is every aggregated column's."""
    return {c: described for c in args["aggregations"] if c != "pid"} if isinstance(described, str) else described


def _treated(df, nulls):
    """The table as the policy makes it, by pandas' own means: the rows the engines must bound."""
    rules = {c: nulls for c in ("x", "y")} if isinstance(nulls, str) else nulls
    drop = [c for c, r in rules.items() if r == "drop"]
    fill = {c: float(r.split("=")[1]) for c, r in rules.items() if r.startswith("replace=")}
    return df.dropna(subset=drop).fillna(fill).astype({c: "float64" for c in ("x", "y")}).reset_index(drop=True)


@pytest.mark.parametrize("nullable", [False, True], ids=["nan", "pandas-na"])
@pytest.mark.parametrize("nulls,described", POLICIES, ids=["drop", "replace-drop", "replace"])
@pytest.mark.parametrize("args", [NULL_ARGS, NULL_AUTO], ids=["selection", "public-auto-distinct"])
def test_dask_null_policies_equal_local(args, nulls, described, nullable, monkeypatch):
    """Each policy is applied in every partition: the driver sees exactly the partials (and bounds-search
    counts) of the treated table, and the release and its report are the local ones, for any partitioning."""
    df = null_table(nullable=nullable)
    args = dict(args, nulls=nulls)
    described = _described(described, args)
    local = aggregate(df, **args)
    assert len(local) > 0 and aggregate_report(local)["nulls"] == described
    grid, partials = _local_partials(_treated(df, nulls), {k: v for k, v in args.items() if k != "nulls"}, described)
    seen = _capture(monkeypatch)
    for parts in (1, 3, 7):
        ddf = dd.from_pandas(df.sample(frac=1.0, random_state=parts), npartitions=parts)
        _same_release(aggregate_dask(ddf, **args), local)
        _same_inputs(seen, grid, partials)


def test_dask_top_k_by_score_with_a_null_policy_equals_local():
    from pydp_core.aggregation import top_k
    from pydp_core.aggregation.engines import top_k_dask

    df = null_table()
    args = dict(column="city", k=2, privacy_unit="pid", max_partitions=1, epsilon=3.0, delta=1e-6, key=KEY,
                score="x", bounds=(0.0, 10.0), release_values=True, nulls="replace=2.0")
    local = top_k(df, **args)
    assert aggregate_report(local)["nulls"] == {"x": "replace=2.0"}
    for parts in (1, 3, 7):
        _same_release(top_k_dask(dd.from_pandas(df, npartitions=parts), **args), local)


@pytest.mark.parametrize("nulls", [None, "keep", {"y": "drop"}], ids=["none", "keep", "other-column"])
def test_dask_kept_nulls_are_refused_as_locally(nulls):
    df = null_table(2000)
    args = dict(NULL_ARGS, nulls=nulls)
    with pytest.raises(ValueError, match="'x' has missing values") as want:
        aggregate(df, **args)
    with pytest.raises(ValueError) as got:
        aggregate_dask(dd.from_pandas(df, npartitions=3), **args)
    assert str(got.value) == str(want.value)


def test_dask_bad_null_policy_is_refused_before_any_job():
    ddf = dd.from_pandas(null_table(200), npartitions=2)
    with pytest.raises(ValueError, match="nulls must be 'keep', 'drop' or 'replace=VALUE'"):
        aggregate_dask(ddf, **dict(NULL_ARGS, nulls="fill"))
    with pytest.raises(ValueError, match="nulls names column 'city', which is not privatised"):
        aggregate_dask(ddf, **dict(NULL_ARGS, nulls={"city": "drop"}))


def _spark_nulls(spark, df, parts):
    """``df`` as a Spark DataFrame whose missing x and y are SQL NULLs (not NaN)."""
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    for c in ("x", "y"):
        arrow = arrow.set_column(arrow.schema.get_field_index(c), c,
                                 pa.array(df[c].to_numpy(), type=pa.float64(), from_pandas=True))
    assert arrow.column("x").null_count > 0
    return arrow, spark.createDataFrame(arrow).repartition(parts)


@pytest.mark.parametrize("nulls,described", POLICIES[:2], ids=["drop", "replace-drop"])
def test_spark_null_policies_equal_local(spark, nulls, described, monkeypatch):
    df = null_table(6000)
    args = dict(NULL_ARGS, nulls=nulls)
    arrow, _ = _spark_nulls(spark, df, 1)
    local = aggregate(arrow, **args)
    described = _described(described, args)
    assert aggregate_report(local)["nulls"] == described
    _, partials = _local_partials(_treated(df, nulls), NULL_ARGS, described)
    seen = _capture(monkeypatch)
    for parts in (1, 3):
        _same_release(aggregate_spark(_spark_nulls(spark, df, parts)[1], **args), local)
        _same_inputs(seen, None, partials)


def test_spark_kept_nulls_are_refused_as_locally(spark):
    arrow, sdf = _spark_nulls(spark, null_table(500), 2)
    with pytest.raises(ValueError, match="'x' has missing values") as want:
        aggregate(arrow, **NULL_ARGS)
    with pytest.raises(Exception) as got:
        aggregate_spark(sdf, **dict(NULL_ARGS, nulls="keep"))
    assert str(want.value) in str(got.value)
