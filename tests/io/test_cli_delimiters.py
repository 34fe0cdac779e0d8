"""Both data commands read CSV with any delimiter (``--delimiter``; a tab for ``.tsv``) as they read Parquet."""
from __future__ import annotations

import numpy as np
import pytest

from pydp_core.cli import main
from pydp_core.io.files import csv_delimiter

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")
pcsv = pytest.importorskip("pyarrow.csv")

PRIV = ["-c", "spend", "-m", "laplace", "--epsilon", "1", "--sensitivity", "bounds", "--bounds", "0", "500",
        "--no-progress"]
AGG = ["--privacy-unit", "user", "--group-by", "city", "--count", "--sum", "spend", "--bounds", "spend", "0", "500",
       "--max-partitions", "1", "--max-contributions", "1", "--epsilon", "1", "--delta", "1e-7"]


def _table(n: int = 2000):
    rng = np.random.default_rng(3)
    return pa.table({"user": np.arange(n), "city": rng.integers(0, 5, n), "spend": rng.uniform(0, 500, n).round(2)})


def _write(table, path, sep):
    pcsv.write_csv(table, path, write_options=pcsv.WriteOptions(delimiter=sep, quoting_style="none"))


@pytest.mark.parametrize(("name", "flag"), [("in.tsv", None), ("in.csv", ";"), ("in.txt.csv", "|")])
def test_privatize_reads_any_delimiter_as_it_reads_parquet(tmp_path, name, flag):
    table = _table()
    pq.write_table(table, tmp_path / "in.parquet")
    _write(table, tmp_path / name, flag or "\t")
    key = tmp_path / "k"
    assert main(["keygen", str(key)]) == 0
    assert main(["privatize", str(tmp_path / "in.parquet"), str(tmp_path / "a.parquet"), *PRIV, "-k", str(key)]) == 0
    extra = [] if flag is None else ["--delimiter", flag]
    assert main(["privatize", str(tmp_path / name), str(tmp_path / "b.parquet"), *PRIV, *extra, "-k", str(key)]) == 0
    a, b = pq.read_table(tmp_path / "a.parquet"), pq.read_table(tmp_path / "b.parquet")
    assert np.array_equal(a.column("spend").to_numpy(), b.column("spend").to_numpy())  # one release, one output


def test_aggregate_reads_a_tsv_with_tabs(tmp_path, capsys):
    table = _table()
    pq.write_table(table, tmp_path / "in.parquet")
    _write(table, tmp_path / "in.tsv", "\t")
    key = tmp_path / "k"
    assert main(["keygen", str(key)]) == 0
    assert main(["aggregate", str(tmp_path / "in.parquet"), str(tmp_path / "a.parquet"), *AGG, "-k", str(key)]) == 0
    assert main(["aggregate", str(tmp_path / "in.tsv"), str(tmp_path / "b.parquet"), *AGG, "-k", str(key)]) == 0, \
        capsys.readouterr().err
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))


def test_a_bad_delimiter_names_the_flag(tmp_path, capsys):
    _write(_table(10), tmp_path / "in.csv", ",")
    assert main(["privatize", str(tmp_path / "in.csv"), str(tmp_path / "o.parquet"), *PRIV, "--delimiter", ";;"]) != 0
    assert "delimiter" in capsys.readouterr().err
    with pytest.raises(ValueError, match="one character"):
        csv_delimiter("x.csv", "ab")
