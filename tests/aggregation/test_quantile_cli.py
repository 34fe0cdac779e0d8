"""``pydp-core aggregate --quantile C Q.. / --median C / --min C / --max C``: the same release as the library."""
from __future__ import annotations

import argparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pydp_core.aggregation import aggregate
from pydp_core.cli import aggregate as cmd
from pydp_core.io import write_key
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

KEY = bytes(range(32))


def run(*argv: str) -> int:
    p = argparse.ArgumentParser(prog="pydp-core aggregate")
    cmd.configure(p)
    return cmd.run(p.parse_args(list(argv)))


def test_quantile_flags_give_the_library_release(tmp_path):
    rng = np.random.default_rng(5)
    n = 3000
    table = pa.table({"user": np.arange(n), "city": rng.choice(["a", "b"], n), "x": rng.uniform(0, 100, n)})
    pq.write_table(table, tmp_path / "in.parquet")
    write_key(tmp_path / "k.key", KEY)
    assert run(str(tmp_path / "in.parquet"), str(tmp_path / "out.parquet"), "--privacy-unit", "user",
               "--group-by", "city", "--median", "x", "--quantile", "x", "0.1", "0.9", "--max", "x",
               "--bounds", "x", "0", "100", "--max-partitions", "1", "--max-contributions", "1", "--epsilon", "4",
               "--delta", "1e-7", "--key-file", str(tmp_path / "k.key"), "--quiet") == 0
    got = pq.read_table(tmp_path / "out.parquet")
    want = aggregate(table, privacy_unit="user", by="city", aggregations={"x": ["median", "max", ("quantile", [0.1, 0.9])]},
                     bounds={"x": (0.0, 100.0)}, max_partitions=1, max_contributions=1, epsilon=4.0, delta=1e-7,
                     key=KEY, ledger=UNRECORDED)
    for name in ("x_median", "x_max", "x_quantile_0.1", "x_quantile_0.9"):
        assert got.column(name).to_pylist() == want.column(name).to_pylist()


def test_quantile_without_levels_is_refused(tmp_path):
    pq.write_table(pa.table({"user": [1, 2], "city": ["a", "b"], "x": [1.0, 2.0]}), tmp_path / "in.parquet")
    with pytest.raises(ValueError, match="--quantile x"):
        run(str(tmp_path / "in.parquet"), str(tmp_path / "o.parquet"), "--privacy-unit", "user", "--group-by", "city",
            "--quantile", "x", "--bounds", "x", "0", "1", "--max-partitions", "1", "--max-contributions", "1",
            "--epsilon", "1", "--delta", "1e-7", "--quiet")
