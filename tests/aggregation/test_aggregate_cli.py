"""``pydp-core aggregate`` (pydp_core.cli.aggregate): Parquet files and partitioned folders, CSV with a
delimiter, the guarantee in the Parquet metadata and the JSON sidecar, atomic output."""
from __future__ import annotations

import argparse
import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from pydp_core.aggregation import REPORT_KEY, aggregate
from pydp_core.cli import aggregate as cmd
from pydp_core.io import write_key

KEY = bytes(range(32))


def run(*argv: str) -> int:
    p = argparse.ArgumentParser(prog="pydp-core aggregate")
    cmd.configure(p)
    return cmd.run(p.parse_args(list(argv)))


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(4)
    n = 6000
    table = pa.table({"user": rng.integers(0, 1500, n), "city": rng.choice(["a", "b", "c"], n),
                      "spend": rng.uniform(0, 600, n), "other": rng.normal(size=n)})
    key = tmp_path / "release.key"
    write_key(key, KEY)
    return table, str(key)


COMMON = ["--privacy-unit", "user", "--group-by", "city", "--count", "--sum", "spend", "--mean", "spend",
          "--bounds", "spend", "0", "500", "--privacy-id-count", "--max-partitions", "2", "--max-contributions", "3",
          "--epsilon", "2", "--delta", "1e-7", "--quiet"]


def expected(table, **kw):
    return aggregate(table, privacy_unit="user", by="city", aggregations={"user": ["count", "privacy_id_count"],
                     "spend": ["sum", "mean"]}, bounds={"spend": (0.0, 500.0)}, max_partitions=2, max_contributions=3,
                     epsilon=2.0, delta=1e-7, key=KEY, **kw)


def test_parquet_file_metadata_and_sidecar(tmp_path, data):
    table, key = data
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    assert run(str(src), str(dst), *COMMON, "-k", key) == 0
    out = pq.read_table(dst)
    ref = expected(table)
    assert out.drop_columns([]).equals(ref.replace_schema_metadata(out.schema.metadata))
    meta = json.loads(pq.read_metadata(dst).metadata[REPORT_KEY.encode()])
    side = json.loads((tmp_path / "out.parquet.json").read_text())
    assert meta == side
    assert side["budget"]["epsilon"] <= 2.0 and side["budget"]["delta"] <= 1e-7
    assert set(side["aggregates"]) == {"count", "privacy_id_count", "spend_sum", "spend_mean"}
    assert side["library_version"] and side["partition_selection"]["method"] == "laplace_threshold"
    for blob in (dst.read_bytes(), (tmp_path / "out.parquet.json").read_bytes()):
        assert KEY not in blob and KEY.hex().encode() not in blob


def test_partitioned_folder_and_csv_with_delimiter_give_the_same_release(tmp_path, data):
    table, key = data
    folder = tmp_path / "spark_out"
    pq.write_to_dataset(table, folder, partition_cols=["city"])
    (folder / "_SUCCESS").write_bytes(b"")
    csv = tmp_path / "in.csv"
    pacsv.write_csv(table, csv, write_options=pacsv.WriteOptions(delimiter=";"))
    assert run(str(folder), str(tmp_path / "a.parquet"), *COMMON, "-k", key) == 0
    # The CSV text rounds some values in their last bit: other data, which the key's ledger refuses. A copy of
    # the key (with a ledger of its own) checks that the formats are read alike.
    copy = tmp_path / "copy.key"
    shutil.copy(key, copy)
    assert run(str(csv), str(tmp_path / "b.csv"), *COMMON, "-k", str(copy), "--delimiter", ";") == 0
    a = pq.read_table(tmp_path / "a.parquet").to_pandas()
    b = pacsv.read_csv(tmp_path / "b.csv", parse_options=pacsv.ParseOptions(delimiter=";")).to_pandas()
    ref = expected(table).to_pandas()
    assert list(a["city"].astype(str)) == list(ref["city"]) == list(b["city"])
    for col in ref.columns[1:]:
        assert np.array_equal(a[col].to_numpy(), ref[col].to_numpy()), col
        assert np.allclose(b[col].to_numpy(), ref[col].to_numpy(), rtol=1e-15, atol=0), col


def test_public_partitions_file_and_budget_split(tmp_path, data):
    table, key = data
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    pub = tmp_path / "cities.csv"
    pub.write_text("city\na\nb\nzz\n")
    split = ["--budget-split", "count=2", "--budget-split", "privacy_id_count=1",
             "--budget-split", "spend_sum=1", "--budget-split", "spend_mean=1"]
    assert run(str(src), str(tmp_path / "o.parquet"), *COMMON, "-k", key, "--public-partitions", str(pub), *split) == 0
    out = pq.read_table(tmp_path / "o.parquet")
    assert out.column("city").to_pylist() == ["a", "b", "zz"]
    rep = json.loads((tmp_path / "o.parquet.json").read_text())
    assert rep["aggregates"]["count"]["epsilon"] == pytest.approx(0.8)


def test_output_is_atomic_and_never_the_input(tmp_path, data):
    table, key = data
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    dst.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        run(str(src), str(dst), *COMMON, "-k", key)
    assert dst.read_bytes() == b"old"
    with pytest.raises(ValueError, match="input"):
        run(str(src), str(src), *COMMON, "-k", key, "--force")
    with pytest.raises(ValueError, match="no column"):
        run(str(src), str(tmp_path / "x.parquet"), *COMMON[:-1], "--sum", "nope", "--bounds", "nope", "0", "1")
    with pytest.raises(ValueError, match="at least one aggregate"):
        run(str(src), str(tmp_path / "y.parquet"), "--privacy-unit", "user", "--group-by", "city",
            "--max-partitions", "1", "--max-contributions", "1", "--epsilon", "1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "out.parquet", "release.key", "release.key.ledger"]


@pytest.mark.parametrize("budget, kw", [
    (["--rho", "0.7", "--delta", "1e-7"], dict(rho=0.7, delta=1e-7)),
    (["--epsilon", "2", "--delta", "1e-7", "--noise", "gaussian"], dict(epsilon=2.0, delta=1e-7, noise="gaussian")),
])
def test_gaussian_budgets_on_the_command_line(tmp_path, data, budget, kw):
    """--rho and --noise gaussian give the library's release; the metadata and sidecar record the definition,
    the noise and every aggregate's sigma2."""
    table, key = data
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    common = COMMON[:-5] + ["--quiet"]  # without --epsilon 2 --delta 1e-7
    assert run(str(src), str(dst), *common, *budget, "-k", key) == 0
    out = pq.read_table(dst)
    ref = aggregate(table, privacy_unit="user", by="city", aggregations={"user": ["count", "privacy_id_count"],
                    "spend": ["sum", "mean"]}, bounds={"spend": (0.0, 500.0)}, max_partitions=2, max_contributions=3,
                    key=KEY, **kw)
    assert out.equals(ref.replace_schema_metadata(out.schema.metadata))
    meta = json.loads(pq.read_metadata(dst).metadata[REPORT_KEY.encode()])
    assert meta == json.loads((tmp_path / "out.parquet.json").read_text())
    assert meta["budget"]["noise"] == "gaussian"
    if "rho" in kw:
        assert meta["budget"]["definition"] == "approximate zCDP" and meta["budget"]["rho"] <= 0.7
    else:
        assert meta["budget"]["epsilon"] <= 2.0 and meta["budget"]["delta"] <= 1e-7
    assert all("sigma2" in c for a in meta["aggregates"].values() for c in a["components"].values())


def test_epsilon_and_rho_are_exclusive(tmp_path, data, capsys):
    table, key = data
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    with pytest.raises(SystemExit):
        run(str(src), str(tmp_path / "o.parquet"), *COMMON, "--rho", "1")
    assert "--rho" in capsys.readouterr().err
