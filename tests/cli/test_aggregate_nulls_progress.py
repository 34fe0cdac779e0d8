"""``pydp-core aggregate --nulls`` (the grammar and rule of ``privatize --nulls``) and ``--progress`` (the
display ``privatize`` has, started only after the argument and file checks), with messages that name the
flags (pydp_core.cli._common, shared by both commands)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pydp_core import cli
from pydp_core.aggregation import REPORT_KEY, aggregate
from pydp_core.io import write_key

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")

KEY = bytes(range(32))
ARGS = ["--privacy-unit", "user", "--group-by", "city", "--count", "--sum", "spend", "--bounds", "spend", "0", "500",
        "--max-partitions", "2", "--max-contributions", "3", "--epsilon", "2", "--delta", "1e-7", "--no-progress"]


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def visits(tmp_path):
    rng = np.random.default_rng(8)
    n = 5000
    spend = rng.uniform(0, 600, n)
    table = pa.table({"user": rng.integers(0, 1200, n), "city": rng.choice(["a", "b", "c"], n),
                      "spend": pa.array([None if i % 10 == 0 else float(v) for i, v in enumerate(spend)])})
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    key = tmp_path / "release.key"
    write_key(key, KEY)
    return table, src, str(key)


def _expected(table):
    return aggregate(table, privacy_unit="user", by="city", aggregations={"user": ["count"], "spend": ["sum"]},
                     bounds={"spend": (0.0, 500.0)}, max_partitions=2, max_contributions=3, epsilon=2.0, delta=1e-7,
                     key=KEY)


def _values(table):
    return {c: table.column(c).to_pylist() for c in table.column_names}


def test_nulls_keep_is_the_default_and_the_aggregation_refuses_them(capsys, tmp_path, visits):
    _, src, key = visits
    code, _, err = run(capsys, "aggregate", src, tmp_path / "out.parquet", *ARGS, "-k", key)
    assert code == 1 and err.count("\n") == 1, err
    assert "'spend' has missing values" in err and "give --nulls C drop or --nulls C replace=VALUE" in err
    assert not (tmp_path / "out.parquet").exists()


def test_nulls_drop_aggregates_the_rows_without_nulls(capsys, tmp_path, visits):
    table, src, key = visits
    out = tmp_path / "out.parquet"
    code, _, err = run(capsys, "aggregate", src, out, *ARGS, "-k", key, "--nulls", "drop")
    assert code == 0, err
    kept = table.filter(pc.is_valid(table.column("spend")))
    assert kept.num_rows == 4500
    assert _values(pq.read_table(out)) == _values(_expected(kept))  # the release of the rows kept: a repeat
    report = json.loads((tmp_path / "out.parquet.json").read_text())
    assert report["nulls"] == {"spend": "drop"}
    assert json.loads(pq.read_metadata(out).metadata[REPORT_KEY.encode()]) == report
    assert report["budget"]["epsilon"] <= 2.0  # dropping rows changes no budget


def test_nulls_replace_aggregates_the_value_given(capsys, tmp_path, visits):
    table, src, key = visits
    out = tmp_path / "out.parquet"
    code, _, err = run(capsys, "aggregate", src, out, *ARGS, "-k", key, "--nulls", "spend", "replace=100")
    assert code == 0, err
    filled = table.set_column(2, "spend", pc.fill_null(table.column("spend"), 100.0))
    assert _values(pq.read_table(out)) == _values(_expected(filled))
    assert json.loads((tmp_path / "out.parquet.json").read_text())["nulls"] == {"spend": "replace=100.0"}


@pytest.mark.parametrize("nulls, needle", [
    (["--nulls", "skip"], "--nulls must be 'keep', 'drop' or 'replace=VALUE'"),
    (["--nulls", "replace=x"], "--nulls: replace=VALUE needs a number"),
    (["--nulls", "city", "drop"], "--nulls city drop: 'city' is not one of the aggregated columns (spend)"),
    (["--nulls", "drop", "--nulls", "keep"], "--nulls is given twice"),
])
def test_bad_nulls_name_the_flag(capsys, tmp_path, visits, nulls, needle):
    _, src, key = visits
    code, _, err = run(capsys, "aggregate", src, tmp_path / "out.parquet", *ARGS, "-k", key, *nulls)
    assert code == 1 and needle in err and err.count("\n") == 1, err


def test_progress_starts_only_after_the_checks(capsys, tmp_path, visits):
    pytest.importorskip("tqdm")
    _, src, key = visits
    argv = ["aggregate", src, tmp_path / "out.parquet", *ARGS[:-1], "-k", key, "--nulls", "drop", "--progress"]
    (tmp_path / "out.parquet").write_bytes(b"old")
    code, _, err = run(capsys, *argv)  # the output exists: refused before anything is read or drawn
    assert code == 1 and err.count("\n") == 1 and "exists (use --force" in err, err
    code, _, err = run(capsys, "aggregate", src, tmp_path / "o.parquet", *ARGS[:-1], "--nulls", "drop", "--progress",
                       "-k", tmp_path / "missing.key")
    assert code == 1 and err.count("\n") == 1 and "--key-file" in err and "Errno" not in err, err
    code, _, err = run(capsys, *argv, "--force")
    assert code == 0 and "aggregate" in err and "5.00k" in err, err  # the bar, with the rows read


def test_messages_name_the_flags(capsys, tmp_path, visits):
    _, src, key = visits
    code, _, err = run(capsys, "aggregate", src, tmp_path / "out.parquet", *ARGS, "-k", key, "--nulls", "drop",
                       "--budget-split", "count=1")
    assert code == 1 and "budget_split" not in err, err
