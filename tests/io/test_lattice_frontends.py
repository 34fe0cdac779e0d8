"""The data front ends take the lattice path for Subbotin_r and Logistic noise: the keyed release, the CLI
(``-m subbotin:r=R`` or ``-m subbotin --r R``), Dask and Spark, with noise that depends on the key and the
row index only (not on chunks or partitions)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import pydp_core
from pydp_core import cli, release
from pydp_core import io as etl
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

KEY = bytes(range(32))
B = 1024
SIM = dict(ledger=UNRECORDED, sensitivity_holds=True)


def _on_grid(values: np.ndarray, grid: float) -> bool:
    k = values / grid
    return bool(np.all(k == np.round(k)))


@pytest.mark.parametrize("name, kw, plan", [
    ("subbotin", dict(r=1.5, delta=1e-6), lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6)),
    ("logistic", dict(delta=1e-9), lambda: release.calibrate_logistic_release(epsilon=1.0, delta=1e-9)),
])
def test_keyed_release_is_the_lattice_release(name, kw, plan):
    mech = etl.mechanism(name, epsilon=1.0, sensitivity=1.0, **kw)
    x = (np.arange(5000) % 7).astype(float)
    out = pydp_core.privatize(x, mech, **SIM, key=KEY, block_rows=B)
    p = plan()
    assert _on_grid(out, p.grid) and not _on_grid(out, 2 * p.grid)  # on the plan's grid, not a coarser one
    assert np.array_equal(out, pydp_core.privatize(x, mech, **SIM, key=KEY, block_rows=B))  # keyed: reproducible
    other = pydp_core.privatize(x, mech, **SIM, key=bytes(range(1, 33)), block_rows=B)
    assert not np.array_equal(other, out)
    # The noise has the table law's spread (a loose 6-sigma check of the sample variance).
    noise = out - x
    var = float(p.table.weights().astype(float) @ (np.arange(p.table.half_size + 1.0) ** 2)) * 2.0 / p.table.total
    assert abs(noise.var() / (var * p.grid**2) - 1.0) < 6.0 * np.sqrt(2.0 / x.size) * 2.0


def test_cli_privatize_takes_subbotin_with_its_order(capsys, tmp_path):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is an optional extra (pydp_core[etl])")
    table = pa.table({"x": (np.arange(3000) % 11 / 11.0 - 0.5)})
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    key = tmp_path / "release.key"
    etl.write_key(key, KEY)
    common = ["-c", "x", "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "bounds", "--bounds", "-1", "1",
              "--block-rows", str(B), "--key-file", str(key), "--no-progress"]
    outs = []
    for i, spec in enumerate((["-m", "subbotin:r=1.5"], ["-m", "subbotin", "--r", "1.5"])):
        dst = tmp_path / f"out{i}.parquet"
        if os.path.exists(str(key) + ".ledger"):  # the second spelling is the same release: start a fresh ledger
            os.unlink(str(key) + ".ledger")
        assert cli.main(["privatize", str(src), str(dst), *spec, *common]) == 0, capsys.readouterr().err
        outs.append(pq.read_table(dst))
    assert outs[0].equals(outs[1])
    want = pydp_core.privatize(table, etl.mechanism("subbotin", r=1.5, epsilon=1.0, delta=1e-6, sensitivity=2.0),
                               columns=["x"], key=KEY, bounds=(-1.0, 1.0), block_rows=B, ledger=UNRECORDED)
    assert outs[0].equals(want)
    grid = release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6, sensitivity=2.0).grid
    assert _on_grid(outs[0].column("x").to_numpy(), grid)
    capsys.readouterr()
    assert cli.main(["privatize", str(src), str(tmp_path / "o.parquet"), "-m", "subbotin:r=1.5", "--r", "2",
                     *common]) != 0
    assert "--r, not both" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["privatize", str(src), str(tmp_path / "o.parquet"), "-m", "laplace:r=1.5", *common])
    assert "only subbotin takes a parameter" in capsys.readouterr().err


def test_dask_lattice_release_does_not_depend_on_the_chunking():
    da = pytest.importorskip("dask.array", reason="dask is an optional extra (pydp_core[dask])")
    from pydp_core import dask as pdask

    mech = etl.mechanism("subbotin", r=3.0, epsilon=1.0, delta=1e-6, sensitivity=1.0)
    x = (np.arange(20_000, dtype=float) % 13).reshape(100, 200)
    ref = pydp_core.privatize(x, mech, **SIM, key=KEY, block_rows=B)
    grid = release.calibrate_subbotin_release(r=3.0, epsilon=1.0, delta=1e-6).grid
    assert _on_grid(ref, grid)
    for chunks in [(100, 200), (30, 70), (1, 1000)]:
        out = pdask.privatize(da.from_array(x, chunks=chunks), mech, **SIM, key=KEY, block_rows=B)
        np.testing.assert_array_equal(out.compute(scheduler="synchronous"), ref)


def test_spark_lattice_release_does_not_depend_on_the_partitioning(spark):
    import pandas as pd

    from pydp_core import spark as pspark

    n = 12_000
    mech = etl.mechanism("logistic", epsilon=1.0, delta=1e-9, sensitivity=1.0)
    ref = pydp_core.privatize(pd.DataFrame({"x": (np.arange(n) % 100).astype(float)}), mech, **SIM, key=KEY,
                              columns=["x"], block_rows=B)["x"].to_numpy()
    grid = release.calibrate_logistic_release(epsilon=1.0, delta=1e-9).grid
    assert _on_grid(ref, grid)
    for parts in (1, 3):
        df = spark.range(0, n, numPartitions=parts).selectExpr("id", "cast(id % 100 as double) as x")
        out = pspark.privatize(df, mech, columns=["x"], **SIM, key=KEY, block_rows=B)
        got = out.toArrow().to_pandas().sort_values("id")["x"].to_numpy()
        np.testing.assert_array_equal(got, ref)
