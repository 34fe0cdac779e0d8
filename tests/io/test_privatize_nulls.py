"""``nulls=`` of the in-memory :func:`pydp_core.privatize`: the rule of the file path (``privatize_file``,
``pydp-core privatize --nulls``) for pandas, pyarrow and numpy data, with the policy in the release's
description, and the same output as the file path for one key and one data set."""
from __future__ import annotations

import json

import numpy as np
import pytest

import pydp_core as dp
from pydp_core import io as etl

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

KEY = bytes(range(32))
# epsilon 100 on [0, 1]: Laplace scale 0.01, so an output is within 0.5 of its input but for odds of e^-50
# per value (far below the 1e-6 false-alarm rate over every value of this file).
SHARP = etl.mechanism("laplace", epsilon=100.0, sensitivity="bounds", bounds=(0, 1))
MECH = etl.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 10))


def _frame():
    return pd.DataFrame({"x": [0.1, None, np.nan, 0.4, 0.5, 0.6],
                         "n": pd.array([1, 0, None, 1, None, 0], dtype="Int64"),
                         "id": [10, 11, 12, 13, 14, 15]})


def _table(n: int = 3000, seed: int = 3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    return pa.table({"x": pa.array([None if i % 7 == 0 else float(v) for i, v in enumerate(x)]),
                     "n": pa.array([None if i % 11 == 3 else int(v) for i, v in enumerate(rng.integers(0, 10, n))]),
                     "id": np.arange(n)})


# -- pandas ----------------------------------------------------------------------------------------------
def test_pandas_keep_leaves_nan_and_none_null():
    df = _frame()
    out = dp.privatize(df, SHARP, key=KEY, columns=["x", "n"], bounds=(0, 1), nulls="keep")
    assert out["x"].isna().tolist() == df["x"].isna().tolist() == [False, True, True, False, False, False]
    assert out["n"].isna().tolist() == df["n"].isna().tolist()
    assert np.all(np.abs(out["x"].dropna().to_numpy() - df["x"].dropna().to_numpy()) < 0.5)
    assert "nulls" not in out.attrs["pydp_core.release"]  # keep is the default: the same release


def test_pandas_drop_leaves_out_every_row_with_a_null_in_a_dropping_column():
    df = _frame()
    out = dp.privatize(df, SHARP, key=KEY, columns=["x", "n"], bounds=(0, 1), nulls={"x": "drop"})
    assert len(out) == 4 and out["id"].tolist() == [10, 13, 14, 15]  # rows 11, 12 had a null in x
    assert out.index.tolist() == [0, 3, 4, 5]  # the pandas index of the rows kept
    assert not out["x"].isna().any() and out["n"].isna().tolist() == [False, False, True, False]
    both = dp.privatize(df, SHARP, key=bytes(range(1, 33)), columns=["x", "n"], bounds=(0, 1), nulls="drop")
    assert both["id"].tolist() == [10, 13, 15]
    report = out.attrs["pydp_core.release"]
    assert report["nulls"] == {"x": "drop"} and report["budget_per_record"]["epsilon"] == 200.0  # no change


def test_pandas_drop_is_the_release_of_the_rows_kept_numbered_on():
    df = _frame()
    out = dp.privatize(df, MECH, key=KEY, columns="x", bounds=(0, 10), nulls="drop")
    kept = df[df["x"].notna()].reset_index(drop=True)
    again = dp.privatize(kept, MECH, key=KEY, columns="x", bounds=(0, 10), nulls="drop")  # an exact repeat
    assert np.array_equal(out["x"].to_numpy(), again["x"].to_numpy())


def test_pandas_replace_noises_the_value_given():
    df = _frame()
    out = dp.privatize(df, MECH, key=KEY, columns=["x", "n"], bounds=(0, 10), nulls="replace=0.25")
    assert not out["x"].isna().any() and not out["n"].isna().any()
    filled = df.assign(x=df["x"].fillna(0.25), n=df["n"].astype("Float64").fillna(0.25))
    same = dp.privatize(filled, MECH, key=KEY, columns=["x", "n"], bounds=(0, 10), nulls="replace=0.25")
    assert np.array_equal(out["x"].to_numpy(), same["x"].to_numpy())  # a replaced null is noised as the value
    assert np.array_equal(out["n"].to_numpy(dtype=float), same["n"].to_numpy(dtype=float))
    assert out.attrs["pydp_core.release"]["nulls"] == {"x": "replace=0.25", "n": "replace=0.25"}


def test_a_series_is_given_its_policy_by_name():
    s = pd.Series([0.2, None, 0.7], name="x")
    out = dp.privatize(s, SHARP, key=KEY, bounds=(0, 1), nulls={"x": "replace=0.5"})
    assert out.notna().all() and abs(out.iloc[1] - 0.5) < 0.5


# -- pyarrow ---------------------------------------------------------------------------------------------
def test_pyarrow_keep_drop_and_replace():
    t = _table(300)
    valid_x = np.asarray(t.column("x").is_valid())
    valid_n = np.asarray(t.column("n").is_valid())
    kept = dp.privatize(t, MECH, key=KEY, columns=["x", "n"], bounds=(0, 10))
    assert kept.column("x").null_count == (~valid_x).sum() and kept.column("n").null_count == (~valid_n).sum()
    dropped = dp.privatize(t, MECH, key=bytes(range(1, 33)), columns=["x", "n"], bounds=(0, 10), nulls="drop")
    assert dropped.num_rows == int((valid_x & valid_n).sum()) < t.num_rows
    assert dropped.column("id").to_pylist() == np.asarray(t.column("id"))[valid_x & valid_n].tolist()
    assert dropped.column("x").null_count == dropped.column("n").null_count == 0
    replaced = dp.privatize(t, SHARP, key=bytes(range(2, 34)), columns=["x", "n"], bounds=(0, 1),
                            nulls={"n": "replace=1"})
    n = replaced.column("n").to_numpy()
    assert replaced.column("n").null_count == 0 and np.all(np.abs(n[~valid_n] - 1) < 0.5)
    assert replaced.column("x").null_count == (~valid_x).sum()  # x keeps its nulls
    assert b"nulls" in replaced.schema.metadata[b"pydp_core.release"]


def test_pyarrow_arrays_and_record_batches():
    arr = pa.chunked_array([[0.1, None], [0.3, None, 0.5]])
    out = dp.privatize(arr, SHARP, key=KEY, bounds=(0, 1), nulls="drop")
    assert isinstance(out, pa.ChunkedArray) and len(out) == 3 and out.null_count == 0
    batch = pa.record_batch({"x": pa.array([None, 0.2, 0.3]), "k": ["a", "b", "c"]})
    out = dp.privatize(batch, SHARP, key=bytes(range(1, 33)), columns="x", bounds=(0, 1), nulls="drop")
    assert isinstance(out, pa.RecordBatch) and out.column("k").to_pylist() == ["b", "c"]


def test_nan_in_arrow_data_is_not_a_missing_value():
    t = pa.table({"x": pa.array([0.1, float("nan"), None])})
    with pytest.raises(ValueError, match="NaN values: store missing values as nulls"):
        dp.privatize(t, MECH, key=KEY, columns="x", bounds=(0, 10), nulls="drop")


# -- numpy -----------------------------------------------------------------------------------------------
def test_numpy_nan_is_refused_without_a_policy_and_missing_with_one():
    x = np.array([0.1, np.nan, 0.3, np.nan, 0.5])
    with pytest.raises(ValueError, match="NaN values"):
        dp.privatize(x, SHARP, key=KEY, bounds=(0, 1))
    kept = dp.privatize(x, SHARP, key=KEY, bounds=(0, 1), nulls="keep")
    assert np.array_equal(np.isnan(kept), np.isnan(x)) and np.all(np.abs(kept[~np.isnan(x)] - x[~np.isnan(x)]) < 0.5)
    dropped = dp.privatize(x, SHARP, key=bytes(range(1, 33)), bounds=(0, 1), nulls="drop")
    assert dropped.shape == (3,) and np.all(np.abs(dropped - [0.1, 0.3, 0.5]) < 0.5)
    replaced = dp.privatize(x, MECH, key=bytes(range(2, 34)), bounds=(0, 10), nulls="replace=2")
    same = dp.privatize(np.nan_to_num(x, nan=2.0), MECH, key=bytes(range(2, 34)), bounds=(0, 10), nulls="replace=2")
    assert np.array_equal(replaced, same)


def test_numpy_masked_entries_and_multidimensional_arrays():
    m = np.ma.MaskedArray([0.1, 0.2, 0.3], mask=[False, True, False])
    out = dp.privatize(m, SHARP, key=KEY, bounds=(0, 1), nulls="replace=0.9")
    assert isinstance(out, np.ma.MaskedArray) and not out.mask.any() and abs(out[1] - 0.9) < 0.5
    assert dp.privatize(m, SHARP, key=bytes(range(1, 33)), bounds=(0, 1), nulls="drop").shape == (2,)
    grid = np.array([[0.1, np.nan], [0.3, 0.4]])
    assert np.isnan(dp.privatize(grid, SHARP, key=bytes(range(2, 34)), bounds=(0, 1), nulls="keep")[0, 1])
    with pytest.raises(ValueError, match="nulls='drop' needs one-dimensional data"):
        dp.privatize(grid, SHARP, key=bytes(range(3, 35)), bounds=(0, 1), nulls="drop")


# -- rows, pieces and the index under drop ---------------------------------------------------------------
def test_drop_keeps_the_index_entries_of_the_rows_kept():
    x = np.array([0.5, np.nan, 0.2, 0.7])
    rows = np.array([30, 10, 20, 0])
    out = dp.privatize(x, MECH, key=KEY, bounds=(0, 10), nulls="drop", index=rows)
    ordered = dp.privatize(x[[3, 2, 0]], MECH, key=KEY, bounds=(0, 10), nulls="drop", index=rows[[3, 2, 0]])
    assert np.array_equal(out, ordered[[2, 1, 0]])  # the noise of a row follows its index, not its place


# -- bad input and the release description ---------------------------------------------------------------
@pytest.mark.parametrize("nulls, error, needle", [
    ("skip", ValueError, "nulls must be 'keep', 'drop' or 'replace=VALUE', got 'skip'"),
    ("replace=x", ValueError, "nulls: replace=VALUE needs a number"),
    ("replace=inf", ValueError, "nulls: replace=VALUE needs a finite number"),
    ("replace", ValueError, "nulls must be"),
    ({"x": "nope"}, ValueError, "nulls for column 'x' must be"),
    ({"other": "drop"}, ValueError, "nulls names column 'other', which is not privatised"),
    (3, TypeError, "nulls must be 'keep', 'drop' or 'replace=VALUE' \\(a str\\), not int"),
])
def test_bad_nulls_name_the_argument(nulls, error, needle):
    with pytest.raises(error, match=needle):
        dp.privatize(_frame(), MECH, key=KEY, columns="x", bounds=(0, 10), nulls=nulls)


def test_a_table_without_columns_is_refused_for_its_columns():
    with pytest.raises(ValueError, match="columns is required"):
        dp.privatize(_frame(), MECH, key=KEY, bounds=(0, 10), nulls={"x": "drop"})


def test_another_null_policy_is_another_release_under_the_key():
    t = _table(200)
    a = dp.privatize(t, MECH, key=KEY, columns="x", bounds=(0, 10), nulls="drop")
    assert a.equals(dp.privatize(t, MECH, key=KEY, columns="x", bounds=(0, 10), nulls="drop"))  # a repeat
    with pytest.raises(etl.KeyReuseError, match="null policy"):
        dp.privatize(t, MECH, key=KEY, columns="x", bounds=(0, 10), nulls="replace=0")
    with pytest.raises(etl.KeyReuseError):  # keep (the default) is a third release
        dp.privatize(t, MECH, key=KEY, columns="x", bounds=(0, 10))


# -- the file path and the in-memory path ----------------------------------------------------------------
@pytest.mark.parametrize("nulls", ["keep", "drop", "replace=4", {"x": "drop", "n": "replace=4"}])
def test_the_file_and_the_frame_give_the_same_release(tmp_path, nulls):
    t = _table()
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(t, src)
    key = etl.generate_key()
    args = dict(key=key, columns=["x", "n"], bounds=(0, 10), nulls=nulls, block_rows=256)
    mem = dp.privatize(t, MECH, **args)
    assert etl.privatize_file(str(src), str(out), MECH, batch_rows=1 << 20, **args) == mem.num_rows
    got = pq.read_table(out)
    assert got.equals(mem)
    as_pandas = dp.privatize(t.to_pandas(), MECH, **args)  # the same release: an exact repeat
    assert np.array_equal(as_pandas["x"].to_numpy(dtype=float, na_value=np.nan), got.column("x").to_numpy(),
                          equal_nan=True)
    reports = [json.loads(r.schema.metadata[b"pydp_core.release"]) for r in (got, mem)]
    assert reports[0].get("nulls") == reports[1].get("nulls") == etl.nulls.describe_nulls(
        etl.nulls.null_policies(nulls, ["x", "n"]))

def test_file_batches_are_the_frame_pieces_with_their_offsets(tmp_path):
    """Under drop a piece's offset counts the rows kept before it: the file's batches are exactly the
    pieces privatised in memory with those offsets (and the whole file is the whole frame, above)."""
    t = _table()
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(t, src)
    args = dict(key=KEY, columns=["x", "n"], bounds=(0, 10), nulls={"x": "drop", "n": "replace=4"}, block_rows=256)
    etl.privatize_file(str(src), str(out), MECH, batch_rows=500, **args)
    got, start, pieces = pq.read_table(out), 0, []
    for lo in range(0, t.num_rows, 500):
        pieces.append(dp.privatize(t.slice(lo, 500), MECH, offset=start, **args))  # exact repeats: accepted
        start += pieces[-1].num_rows
    assert start == got.num_rows < t.num_rows
    assert pa.concat_tables(pieces).select(["x", "n", "id"]).equals(got.select(["x", "n", "id"]))


# -- Dask ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [None, "id"], ids=["positional", "indexed"])
@pytest.mark.parametrize("nulls", ["drop", "replace=4", {"x": "drop", "n": "replace=4"}])
def test_dask_frames_are_the_local_release_for_any_partitioning(nulls, index):
    """Each partition applies the policy; under drop the counting pass counts the rows kept, so the rows are
    numbered on as in the computed frame."""
    from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # compared under one key on purpose

    dd = pytest.importorskip("dask.dataframe")
    df = _table().to_pandas()
    args = dict(key=KEY, columns=["x", "n"], bounds=(0, 10), nulls=nulls, block_rows=256, index=index,
                ledger=UNRECORDED)
    want = dp.privatize(df, MECH, **args)
    assert want["x"].notna().all() and len(want) < len(df) if nulls != "replace=4" else len(want) == len(df)
    for parts in (1, 3, 7):
        got = dp.dask.privatize(dd.from_pandas(df, npartitions=parts), MECH, **args).compute()
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_dask_null_policy_is_part_of_the_release_and_drop_needs_rows():
    from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED

    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    key = etl.generate_key()
    ddf = dd.from_pandas(_table(300).to_pandas(), npartitions=2)
    dp.dask.privatize(ddf, MECH, key=key, columns="x", bounds=(0, 10), nulls="drop")
    dp.dask.privatize(ddf, MECH, key=key, columns="x", bounds=(0, 10), nulls="drop", resume=True)  # the same release
    with pytest.raises(etl.KeyReuseError, match="another release"):
        dp.dask.privatize(ddf, MECH, key=key, columns="x", bounds=(0, 10), nulls="replace=0")
    x = np.where(np.arange(500) % 5 == 0, np.nan, 1.0)
    args = dict(key=etl.generate_key(), bounds=(0, 10), nulls="replace=2", block_rows=64, ledger=UNRECORDED)
    want = dp.privatize(x, MECH, **args)
    assert not np.isnan(want).any()
    assert np.array_equal(dp.dask.privatize(da.from_array(x, chunks=77), MECH, **args).compute(), want)
    with pytest.raises(ValueError, match="nulls='drop' needs a Dask DataFrame or Series"):
        dp.dask.privatize(da.from_array(x, chunks=77), MECH, key=etl.generate_key(), bounds=(0, 10), nulls="drop")


def test_a_session_passes_the_null_policy_to_dask_and_charges_it_once():
    from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED

    dd = pytest.importorskip("dask.dataframe")
    df = _table(500).to_pandas()
    key = etl.generate_key()
    s = dp.Session(dp.PureDP(3.0), key=key)
    got = s.privatize(dd.from_pandas(df, npartitions=3), MECH, columns="x", bounds=(0, 10), nulls="drop").compute()
    want = dp.privatize(df, MECH, key=key, columns="x", bounds=(0, 10), nulls="drop", ledger=UNRECORDED)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)
    assert s.spent() == dp.PureDP(1.0)
