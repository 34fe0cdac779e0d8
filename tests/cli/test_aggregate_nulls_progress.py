"""``pydp-core aggregate --nulls`` (the grammar and rule of ``privatize --nulls``) and ``--progress`` (the
display ``privatize`` has, started only after the argument and file checks), with messages that name the
flags (pydp_core.cli._common, shared by both commands)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pydp_core import cli
from pydp_core.aggregation import REPORT_KEY, aggregate
from pydp_core.io import generate_key, write_key

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


def _expected(table, nulls=None, key=KEY, ledger=None):
    return aggregate(table, privacy_unit="user", by="city", aggregations={"user": ["count"], "spend": ["sum"]},
                     bounds={"spend": (0.0, 500.0)}, max_partitions=2, max_contributions=3, epsilon=2.0, delta=1e-7,
                     key=key, nulls=nulls, ledger=ledger)


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
    library = _expected(table, "drop")  # the command is the library's release: a repeat
    assert _values(pq.read_table(out)) == _values(library)
    report = json.loads((tmp_path / "out.parquet.json").read_text())
    assert json.loads(library.schema.metadata[REPORT_KEY.encode()])["nulls"] == {"spend": "drop"}
    assert report["nulls"] == {"spend": "drop"}
    assert json.loads(pq.read_metadata(out).metadata[REPORT_KEY.encode()]) == report
    assert report["budget"]["epsilon"] <= 2.0  # dropping rows changes no budget


def test_nulls_replace_aggregates_the_value_given(capsys, tmp_path, visits):
    table, src, key = visits
    out = tmp_path / "out.parquet"
    code, _, err = run(capsys, "aggregate", src, out, *ARGS, "-k", key, "--nulls", "spend", "replace=100")
    assert code == 0, err
    assert _values(pq.read_table(out)) == _values(_expected(table, {"spend": "replace=100"}))
    assert json.loads((tmp_path / "out.parquet.json").read_text())["nulls"] == {"spend": "replace=100.0"}


def test_library_nulls_on_pandas_and_pyarrow(visits):
    """``nulls=`` of the library: keep refuses, drop and replace release the same groups and values from a
    pyarrow Table (nulls) and a pandas DataFrame (NaN) for one key, and the report names the policy."""
    pd = pytest.importorskip("pandas")
    table, _, _ = visits
    frame = table.to_pandas()
    assert frame["spend"].isna().sum() == 500
    key = bytes(range(1, 33))
    for data in (table, frame):
        with pytest.raises(ValueError, match="'spend' has missing values"):
            _expected(data, "keep", key=key)
        with pytest.raises(ValueError, match="'spend' has missing values"):
            _expected(data, key=key)
    for nulls, filled, key in (("drop", table.filter(pc.is_valid(table.column("spend"))), bytes(range(2, 34))),
                               ({"spend": "replace=100"},
                                table.set_column(2, "spend", pc.fill_null(table.column("spend"), 100.0)),
                                bytes(range(3, 35)))):
        arrow = _expected(table, nulls, key=key)
        pandas = _expected(frame, nulls, key=key)
        assert isinstance(pandas, pd.DataFrame)
        assert _values(arrow) == {c: pandas[c].tolist() for c in pandas.columns}
        report = json.loads(arrow.schema.metadata[REPORT_KEY.encode()])
        assert report["nulls"] == ({"spend": "drop"} if nulls == "drop" else {"spend": "replace=100.0"})
        assert pandas.attrs[REPORT_KEY]["nulls"] == report["nulls"]
        # The policy applied by hand gives the same partials: the values differ by the noise only, which is
        # the release's own (the policy is in its description).
        by_hand = _expected(filled, key=generate_key())
        assert by_hand.column("city").to_pylist() == arrow.column("city").to_pylist()
        assert abs(sum(by_hand.column("count").to_pylist()) - sum(arrow.column("count").to_pylist())) < 200


def test_another_policy_under_one_key_is_refused_by_the_ledger(tmp_path, visits):
    from pydp_core.aggregation import top_k
    from pydp_core.io import KeyReuseError

    table, _, _ = visits
    key, ledger = generate_key(), tmp_path / "k.ledger"
    first = _expected(table, "drop", key=key, ledger=ledger)
    assert _values(_expected(table, "drop", key=key, ledger=ledger)) == _values(first)  # a repeat
    with pytest.raises(KeyReuseError, match="another release"):
        _expected(table, "replace=0", key=key, ledger=ledger)
    kept = table.filter(pc.is_valid(table.column("spend")))
    with pytest.raises(KeyReuseError, match="another release"):  # the rows the policy kept, without the policy
        _expected(kept, key=key, ledger=ledger)
    args = dict(column="city", k=2, privacy_unit="user", max_partitions=2, epsilon=1.0, candidates=["a", "b", "c"],
                score="spend", bounds=(0.0, 500.0), max_contributions=3, release_values=True)
    key2, ledger2 = generate_key(), tmp_path / "k2.ledger"
    with pytest.raises(ValueError, match="'spend' has missing values"):
        top_k(table, key=key2, ledger=ledger2, **args)
    ranked = top_k(table, key=key2, ledger=ledger2, nulls="drop", **args)
    assert json.loads(ranked.schema.metadata[REPORT_KEY.encode()])["nulls"] == {"spend": "drop"}
    again = top_k(table.to_pandas(), key=key2, ledger=ledger2, nulls="drop", **args)  # NaN: a repeat
    assert {c: again[c].tolist() for c in again.columns} == _values(ranked)
    with pytest.raises(KeyReuseError, match="another release"):
        top_k(table, key=key2, ledger=ledger2, nulls="replace=1", **args)


def test_cli_top_k_nulls_is_the_library_release(capsys, tmp_path, visits):
    from pydp_core.aggregation import top_k

    table, src, key = visits
    out = tmp_path / "top.parquet"
    code, _, err = run(capsys, "aggregate", src, out, "--privacy-unit", "user", "--top-k", "city", "2",
                       "--top-k-score", "spend", "--bounds", "spend", "0", "500", "--max-partitions", "2",
                       "--max-contributions", "3", "--epsilon", "1", "--delta", "1e-7", "--no-progress", "-k", key,
                       "--nulls", "replace=50")
    assert code == 0, err
    library = top_k(table, column="city", k=2, privacy_unit="user", max_partitions=2, epsilon=1.0, delta=1e-7,
                    key=KEY, score="spend", bounds=(0.0, 500.0), max_contributions=3, nulls="replace=50",
                    ledger=key + ".ledger")
    assert _values(pq.read_table(out)) == _values(library)


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
