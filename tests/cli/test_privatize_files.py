"""``pydp-core privatize`` on the files ETL jobs have: partitioned Parquet folders in and out, per-column
``--bounds C LOW HIGH``, ``--nulls``, a second run that adds to the release report, ``--progress`` only once
the checks pass, and messages that name the flags."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import pydp_core
from pydp_core import cli
from pydp_core import io as etl
from pydp_core.io.provenance import data_files

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")
pcsv = pytest.importorskip("pyarrow.csv")
ds = pytest.importorskip("pyarrow.dataset")

BASE = ["-m", "laplace", "--epsilon", "1", "--sensitivity", "bounds", "--block-rows", "256", "--no-progress"]


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _visits(n: int = 900, seed: int = 5):
    rng = np.random.default_rng(seed)
    spend = rng.uniform(0, 500, n).round(2)
    minutes = rng.uniform(0, 90, n).round(1)
    return pa.table({"person": np.arange(n) % 300, "month": rng.integers(1, 4, n), "spend": spend,
                     "minutes": pa.array([None if i % 9 == 0 else float(v) for i, v in enumerate(minutes)])})


def _hive(tmp_path, table=None):
    """A hive-partitioned folder as Spark writes it (with _SUCCESS and a hidden checksum file)."""
    folder = tmp_path / "visits_by_month"
    pq.write_to_dataset(_visits() if table is None else table, folder, partition_cols=["month"])
    (folder / "_SUCCESS").write_text("")
    (folder / "month=1" / ".part.crc").write_bytes(b"\0")
    return folder


def _key(capsys, tmp_path, name="k.key"):
    path = tmp_path / name
    assert run(capsys, "keygen", path)[0] == 0
    return path


def _report(path):
    files = data_files(str(path)) if os.path.isdir(path) else [str(path)]
    return json.loads(pq.read_schema(files[0]).metadata[b"pydp_core.release"])


# -- partitioned folders ---------------------------------------------------------------------------------
def test_a_partitioned_folder_becomes_a_folder_of_the_same_partitions(capsys, tmp_path):
    src, out = _hive(tmp_path), tmp_path / "out"
    key = _key(capsys, tmp_path)
    code, _, err = run(capsys, "privatize", src, out, "-c", "spend", *BASE, "--bounds", "0", "500", "-k", key)
    assert code == 0, err
    rel = sorted(os.path.relpath(f, out) for f in data_files(str(out)))
    assert rel == sorted(os.path.relpath(f, src) for f in data_files(str(src)))  # same layout, no _SUCCESS copied
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    mech = etl.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 500))
    start = 0
    for f in data_files(str(src)):  # each file is a piece of one release, its rows numbered on from the last
        piece = pq.read_table(f)
        want = pydp_core.privatize(piece, mech, key=etl.load_key(str(key)), columns="spend", bounds=(0, 500),
                                   block_rows=256, offset=start, ledger=str(key) + ".ledger")  # exact repeats: accepted
        got = pq.read_table(os.path.join(out, os.path.relpath(f, src)))
        assert np.array_equal(got.column("spend").to_numpy(), want.column("spend").to_numpy())
        assert got.column("person").equals(want.column("person"))
        start += piece.num_rows
    back = ds.dataset(str(out), partitioning="hive").to_table()  # the partition column is kept
    before = ds.dataset(str(src), partitioning="hive").to_table()
    assert sorted(back.column("month").to_pylist()) == sorted(before.column("month").to_pylist())
    assert _report(out)["columns"]["spend"]["bounds"] == [0.0, 500.0]


def test_a_failing_folder_release_writes_nothing(capsys, tmp_path):
    table = _visits()
    spend = table.column("spend").to_numpy().copy()
    months = table.column("month").to_numpy()
    spend[np.flatnonzero(months == 3)[-1]] = np.nan  # in the last partition: the first ones are done by then
    src = _hive(tmp_path, table.set_column(2, "spend", pa.array(spend)))
    out = tmp_path / "out"
    code, _, err = run(capsys, "privatize", src, out, "-c", "spend", *BASE, "--bounds", "0", "500")
    assert code == 1 and "NaN" in err
    assert sorted(os.listdir(tmp_path)) == ["visits_by_month"]  # no output folder, no temporary one
    out.mkdir()
    (out / "old.parquet").write_text("the previous output")
    code, _, err = run(capsys, "privatize", src, out, "-c", "spend", *BASE, "--bounds", "0", "500", "--force")
    assert code == 1 and os.listdir(out) == ["old.parquet"]  # --force replaces only a complete output
    assert sorted(os.listdir(tmp_path)) == ["out", "visits_by_month"]


def test_force_replaces_an_output_folder_whole(capsys, tmp_path):
    src, out = _hive(tmp_path), tmp_path / "out"
    argv = ["privatize", src, out, "-c", "spend", *BASE, "--bounds", "0", "500"]
    assert run(capsys, *argv)[0] == 0
    (out / "stray.parquet").write_text("not part of the release")
    code, _, err = run(capsys, *argv)
    assert code == 1 and "exists" in err and "--force" in err
    assert run(capsys, *argv, "--force")[0] == 0
    assert "stray.parquet" not in os.listdir(out)
    assert sorted(os.listdir(tmp_path)) == ["out", "visits_by_month"]


@pytest.mark.parametrize("extra, flag", [
    (["-c", "month"], "--column"),  # a partition column lives in the folder names
    (["-c", "spend", "--output-format", "csv"], "--output-format"),
])
def test_folder_refusals_name_the_flag(capsys, tmp_path, extra, flag):
    src = _hive(tmp_path)
    code, _, err = run(capsys, "privatize", src, tmp_path / "out", *extra, *BASE, "--bounds", "0", "500")
    assert code == 1 and flag in err, err
    assert sorted(os.listdir(tmp_path)) == ["visits_by_month"]


# -- per-column bounds -----------------------------------------------------------------------------------
def test_bounds_per_column_give_each_column_its_sensitivity(capsys, tmp_path):
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    table = _visits().drop_columns(["minutes"]).append_column("minutes", pa.array(np.linspace(0, 90, 900)))
    pq.write_table(table, src)
    key = _key(capsys, tmp_path)
    code, _, err = run(capsys, "privatize", src, out, "-c", "spend", "-c", "minutes", *BASE,
                       "--bounds", "spend", "0", "500", "--bounds", "minutes", "0", "90", "-k", key)
    assert code == 0, err
    report = _report(out)["columns"]
    assert report["spend"]["bounds"] == [0.0, 500.0] and report["minutes"]["bounds"] == [0.0, 90.0]
    assert "sensitivity=500" in report["spend"]["mechanism"] and "sensitivity=90" in report["minutes"]["mechanism"]
    mechs = {c: etl.mechanism("laplace", epsilon=0.5 if c == "spend" else 0.5, sensitivity="bounds", bounds=b)
             for c, b in (("spend", (0, 500)), ("minutes", (0, 90)))}
    want = pydp_core.privatize(table, mechs, key=etl.load_key(str(key)), columns=["spend", "minutes"],
                               bounds={"spend": (0, 500), "minutes": (0, 90)}, block_rows=256,
                               ledger=str(key) + ".ledger")
    got = pq.read_table(out)
    for c in ("spend", "minutes"):
        assert np.array_equal(got.column(c).to_numpy(), want.column(c).to_numpy()), c


def test_a_common_bounds_fills_the_columns_without_their_own(capsys, tmp_path):
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_visits(), src)
    code, _, err = run(capsys, "privatize", src, out, "-c", "spend", "-c", "minutes", *BASE,
                       "--bounds", "0", "500", "--bounds", "minutes", "0", "90")
    assert code == 0, err
    report = _report(out)["columns"]
    assert report["spend"]["bounds"] == [0.0, 500.0] and report["minutes"]["bounds"] == [0.0, 90.0]


@pytest.mark.parametrize("bounds, needle", [
    (["--bounds", "spend", "0", "500"], "--bounds minutes LOWER UPPER"),  # --sensitivity bounds needs them all
    (["--bounds", "other", "0", "1"], "--bounds other 0 1"),  # not a --column
    (["--bounds", "0", "1", "2", "3"], "--bounds takes [C] LOWER UPPER"),
    (["--bounds", "spend", "0", "x"], "--bounds spend: not a number"),
    (["--bounds", "spend", "5", "1", "--bounds", "minutes", "0", "1"], "--bounds spend"),  # low > high
    (["--bounds", "spend", "0", "1", "--bounds", "spend", "0", "2"], "--bounds is given twice for column 'spend'"),
])
def test_bad_bounds_name_the_flag(capsys, tmp_path, bounds, needle):
    src = tmp_path / "in.parquet"
    pq.write_table(_visits(), src)
    code, _, err = run(capsys, "privatize", src, tmp_path / "out.parquet", "-c", "spend", "-c", "minutes", *BASE, *bounds)
    assert code == 1 and needle in err, err
    assert sorted(os.listdir(tmp_path)) == ["in.parquet"]


# -- a second run adds to the release report -------------------------------------------------------------
def test_a_second_run_appends_to_the_release_report(capsys, tmp_path):
    src, mid, out = tmp_path / "in.parquet", tmp_path / "mid.parquet", tmp_path / "out.parquet"
    pq.write_table(_visits(), src)
    assert run(capsys, "privatize", src, mid, "-c", "spend", *BASE, "--epsilon", "0.5", "--bounds", "0", "500")[0] == 0
    code, _, err = run(capsys, "privatize", mid, out, "-c", "minutes", *BASE, "--epsilon", "0.25", "--bounds", "0", "90")
    assert code == 0, err
    report = _report(out)
    assert set(report["columns"]) == {"spend", "minutes"}
    assert report["columns"]["spend"]["bounds"] == [0.0, 500.0]  # the first run's provenance is kept
    assert [list(r["columns"]) for r in report["releases"]] == [["spend"], ["minutes"]]
    assert report["budget_per_record"]["epsilon"] == 0.75 and report["budget_per_record"]["releases"] == 2
    assert "2 releases" in err and "epsilon=0.75" in err
    # A column noised again keeps its first entry, and the total counts both.
    code, _, err = run(capsys, "privatize", out, tmp_path / "again.parquet", "-c", "spend", *BASE, "--epsilon", "0.5",
                       "--bounds", "0", "500")
    assert code == 0, err
    again = _report(tmp_path / "again.parquet")
    assert len(again["columns"]["spend"]["earlier"]) == 1 and again["budget_per_record"]["epsilon"] == 1.25


def test_a_second_run_appends_to_a_csv_report_too(capsys, tmp_path):
    src = tmp_path / "in.csv"
    pcsv.write_csv(_visits().drop_columns(["minutes"]), src)
    assert run(capsys, "privatize", src, tmp_path / "mid.csv", "-c", "spend", *BASE, "--bounds", "0", "500")[0] == 0
    code, _, err = run(capsys, "privatize", tmp_path / "mid.csv", tmp_path / "out.csv", "-c", "person", *BASE,
                       "--bounds", "0", "300")
    assert code == 0, err
    report = json.loads((tmp_path / "out.csv.release.json").read_text())
    assert set(report["columns"]) == {"spend", "person"} and report["budget_per_record"]["epsilon"] == 2.0


def test_a_second_release_under_one_key_is_still_refused(capsys, tmp_path):
    src, mid = tmp_path / "in.parquet", tmp_path / "mid.parquet"
    pq.write_table(_visits(), src)
    key = _key(capsys, tmp_path)
    assert run(capsys, "privatize", src, mid, "-c", "spend", *BASE, "--bounds", "0", "500", "-k", key)[0] == 0
    code, _, err = run(capsys, "privatize", mid, tmp_path / "out.parquet", "-c", "minutes", *BASE, "--bounds", "0", "90",
                       "-k", key)
    assert code == 1 and "another release" in err and not (tmp_path / "out.parquet").exists()


# -- nulls -----------------------------------------------------------------------------------------------
def test_nulls_keep_is_the_default_and_drop_leaves_the_rows_out(capsys, tmp_path):
    src = tmp_path / "in.parquet"
    table = _visits()
    pq.write_table(table, src)
    argv = ["-c", "minutes", *BASE, "--bounds", "0", "90"]
    assert run(capsys, "privatize", src, tmp_path / "keep.parquet", *argv)[0] == 0
    kept = pq.read_table(tmp_path / "keep.parquet")
    assert kept.column("minutes").null_count == table.column("minutes").null_count == 100
    assert "nulls" not in _report(tmp_path / "keep.parquet")
    code, _, err = run(capsys, "privatize", src, tmp_path / "drop.parquet", *argv, "--nulls", "drop")
    assert code == 0 and "800 rows" in err, err
    dropped = pq.read_table(tmp_path / "drop.parquet")
    valid = np.asarray(table.column("minutes").is_valid())
    assert dropped.num_rows == 800 and dropped.column("minutes").null_count == 0
    assert dropped.column("person").to_pylist() == np.asarray(table.column("person"))[valid].tolist()
    report = _report(tmp_path / "drop.parquet")
    assert report["nulls"] == {"minutes": "drop"}
    assert report["budget_per_record"]["epsilon"] == 1.0  # dropping rows changes no budget


def test_nulls_replace_noises_the_value_given(capsys, tmp_path):
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    table = _visits()
    pq.write_table(table, src)
    # epsilon 50 on [0, 1]: Laplace scale 0.02, so a value is within 0.5 of its input but for odds of e^-25.
    code, _, err = run(capsys, "privatize", src, out, "-c", "minutes", "-c", "spend", "-m", "laplace",
                       "--epsilon", "100", "--sensitivity", "bounds", "--bounds", "0", "1", "--no-progress",
                       "--nulls", "minutes", "replace=0.25", "--nulls", "keep")
    assert code == 0, err
    got = pq.read_table(out).column("minutes").to_numpy()
    nulls = ~np.asarray(table.column("minutes").is_valid())
    assert not np.isnan(got).any() and np.all(np.abs(got[nulls] - 0.25) < 0.5)
    assert _report(out)["nulls"] == {"minutes": "replace=0.25"}


@pytest.mark.parametrize("nulls, needle", [
    (["--nulls", "skip"], "--nulls must be 'keep', 'drop' or 'replace=VALUE'"),
    (["--nulls", "replace=x"], "--nulls: replace=VALUE needs a number"),
    (["--nulls", "other", "drop"], "--nulls other drop: 'other' is not one of the --column columns"),
    (["--nulls", "drop", "--nulls", "keep"], "--nulls is given twice"),
])
def test_bad_nulls_name_the_flag(capsys, tmp_path, nulls, needle):
    src = tmp_path / "in.parquet"
    pq.write_table(_visits(), src)
    code, _, err = run(capsys, "privatize", src, tmp_path / "out.parquet", "-c", "minutes", *BASE, "--bounds", "0", "90",
                       *nulls)
    assert code == 1 and needle in err, err


def test_another_null_policy_is_another_release_under_the_key(capsys, tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(_visits(), src)
    key = _key(capsys, tmp_path)
    argv = ["-c", "minutes", *BASE, "--bounds", "0", "90", "-k", key]
    assert run(capsys, "privatize", src, tmp_path / "a.parquet", *argv, "--nulls", "drop")[0] == 0
    assert run(capsys, "privatize", src, tmp_path / "b.parquet", *argv, "--nulls", "drop")[0] == 0  # a repeat
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    code, _, err = run(capsys, "privatize", src, tmp_path / "c.parquet", *argv, "--nulls", "replace=0")
    assert code == 1 and "another release" in err


# -- progress and messages -------------------------------------------------------------------------------
def test_progress_starts_only_after_the_checks(capsys, tmp_path):
    pytest.importorskip("tqdm")
    src = tmp_path / "in.parquet"
    pq.write_table(_visits(), src)
    argv = ["privatize", src, tmp_path / "out.parquet", *BASE[:-1], "--bounds", "0", "500", "--progress"]
    code, _, err = run(capsys, *argv, "-c", "nope")
    assert code == 1 and err.count("\n") == 1 and err.startswith("pydp-core privatize: error: --column"), err
    code, _, err = run(capsys, *argv, "-c", "spend")
    assert code == 0 and "privatize:" in err and "900" in err, err


@pytest.mark.parametrize("extra, needle", [
    (["-c", "spend", "--privacy-unit", "nobody"], "--privacy-unit column 'nobody'"),
    (["-c", "spend", "--max-contributions", "2"], "--max-contributions applies with --privacy-unit"),
    (["-c", "spend", "-c", "spend"], "--column lists a column twice"),
    (["-c", "spend", "--privacy-unit", "person"], "--max-contributions"),  # three rows each, one allowed
])
def test_messages_name_the_flags(capsys, tmp_path, extra, needle):
    src = tmp_path / "in.parquet"
    pq.write_table(_visits(), src)
    code, _, err = run(capsys, "privatize", src, tmp_path / "out.parquet", *extra, *BASE, "--bounds", "0", "500")
    assert code == 1 and needle in err, err
    for python in ("privacy_unit", "max_contributions", "=True", "output_format", "columns "):
        assert python not in err, err
