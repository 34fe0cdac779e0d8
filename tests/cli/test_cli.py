"""The pydp-core command line: calibrate, profile, privatize (files), mu, keygen."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import mpmath
import numpy as np
import pytest
from support import frames as sup  # noqa: E402
from support.paths import subprocess_env  # noqa: E402

import pydp_core  # noqa: E402
from pydp_core import cli  # noqa: E402
from pydp_core import io as etl  # noqa: E402
from pydp_core.accounting.guarantees import guarantees  # noqa: E402
from pydp_core.io import files as io_files  # noqa: E402
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # noqa: E402  (a check only: no record)

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is an optional extra (pydp_core[etl])")
pcsv = pytest.importorskip("pyarrow.csv", reason="pyarrow is an optional extra (pydp_core[etl])")

KEY = bytes(range(32))


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- calibrate --------------------------------------------------------------------------------------------
def test_calibrate_gaussian_json_matches_the_library(capsys):
    code, out, _ = run(capsys, "calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "2", "--json")
    assert code == 0
    doc = json.loads(out)
    scale = pydp_core.minimal_scale(pydp_core.Gaussian(), epsilon=1.0, delta=1e-6, sensitivity=2.0)
    assert doc["scale"] == scale and doc["variance"] == pytest.approx(scale**2, rel=1e-15)
    assert doc["GDP mu"] == pytest.approx(2.0 / scale, rel=1e-15)
    assert doc["zCDP rho"] == pytest.approx(2.0 / scale**2, rel=1e-15)
    assert doc["(epsilon, delta)-DP"]["1e-06"] == pytest.approx(1.0, rel=1e-9)
    assert doc["pure DP epsilon"] is None or doc["pure DP epsilon"] == "inf"


def test_calibrate_table_and_bounds(capsys):
    code, out, _ = run(capsys, "calibrate", "laplace", "--epsilon", "0.5", "--sensitivity", "bounds", "--bounds", "0", "10")
    assert code == 0
    assert "scale            20\n" in out and "variance         800\n" in out
    assert "pure DP epsilon  0.5\n" in out


@pytest.mark.parametrize("r", [1.0, 1.5, 3.0, 7.0])
def test_rao_theta_is_the_fisher_information_of_the_location(r):
    # I = integral of (d/dx log f_r)^2 f_r = E|X|^(2r - 2) for the standard Subbotin_r.
    rr = mpmath.mpf(r)
    c = 2 * mpmath.gamma(1 / rr) * rr ** (1 / rr - 1)
    info = 2 * mpmath.quad(lambda x: x ** (2 * rr - 2) * mpmath.exp(-(x**rr) / rr) / c, [0, 1, mpmath.inf])
    theta = guarantees(pydp_core.Subbotin(r), sensitivity=0.5, scale=2.0)["Rao-DP theta"]
    assert theta == pytest.approx(float(0.5 * mpmath.sqrt(info) / 2), rel=1e-12)


def test_pure_dp_conversions_for_logistic(capsys):
    g = guarantees(pydp_core.Logistic(), sensitivity=1.0, scale=1.0)
    eps = g["pure DP epsilon"]
    assert eps == pytest.approx(1.0, rel=1e-9)  # the Logistic is (D / s)-DP
    mu = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(eps)) - 1)
    assert g["GDP mu (bound via pure DP)"] == pytest.approx(float(mu), rel=1e-12)


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["calibrate", "gaussian", "--epsilon", "1"], 1, "delta = 0 is not reachable"),
        (["calibrate", "gaussian"], 1, "give --epsilon"),
        (["calibrate", "subbotin", "--epsilon", "1", "--delta", "1e-6"], 1, "--r is required"),
        (["calibrate", "laplace", "--scale", "-1"], 1, "--scale must be > 0"),
        (["calibrate", "laplace", "--scale", "1", "--sensitivity", "bounds"], 1, "needs --bounds"),
        (["calibrate", "laplace", "--epsilon", "nan"], 2, "must be finite"),
        (["calibrate", "cauchy", "--epsilon", "1"], 2, "invalid choice"),
    ],
)
def test_calibrate_errors(capsys, argv, code, message):
    if code == 2:
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
        assert message in capsys.readouterr().err
    else:
        got, out, err = run(capsys, *argv)
        assert got == code and out == "" and message in err and err.startswith("pydp-core calibrate: error:")


# -- profile ----------------------------------------------------------------------------------------------
def test_profile_table_is_the_exact_profile(capsys):
    code, out, _ = run(capsys, "profile", "gaussian", "--scale", "2", "--eps-max", "3", "--points", "4")
    assert code == 0
    rows = [line.split() for line in out.splitlines()[2:]]
    eps = np.array([float(r[0]) for r in rows])
    delta = np.array([float(r[1]) for r in rows])
    np.testing.assert_allclose(eps, [0, 1, 2, 3])
    np.testing.assert_allclose(delta, pydp_core.privacy_profile(pydp_core.Gaussian(), epsilon=eps, scale=2.0), rtol=1e-6)


def test_profile_png(capsys, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is an optional extra (pydp_core[plot])")
    png = tmp_path / "profile.png"
    code, out, _ = run(capsys, "profile", "laplace", "--epsilon", "1", "--png", str(png))
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["profile.png"]


# -- keygen -----------------------------------------------------------------------------------------------
def test_keygen_writes_an_owner_only_key_and_never_overwrites(capsys, tmp_path):
    path = tmp_path / "k"
    code, out, err = run(capsys, "keygen", str(path))
    assert code == 0 and out == ""
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    key = etl.load_key(path)
    assert len(key) == 32 and key.hex() not in err
    code, _, err = run(capsys, "keygen", str(path))
    assert code == 1 and "never overwritten without --force" in err
    assert etl.load_key(path) == key
    assert run(capsys, "keygen", "--force", str(path))[0] == 0
    assert etl.load_key(path) != key and stat.S_IMODE(os.stat(path).st_mode) == 0o600


# -- privatize: files -------------------------------------------------------------------------------------
def _table(n: int = 10_000) -> pa.Table:
    x = np.linspace(-5, 5, n)
    mask = np.zeros(n, bool)
    mask[::97] = True
    return pa.table({
        "id": np.arange(n),
        "x": pa.array(x, mask=mask),
        "y": np.arange(n, dtype=np.int32),
        "name": [f"r{i}" for i in range(n)],
    })


def _write_key(tmp_path):
    path = tmp_path / "release.key"
    etl.write_key(path, KEY)
    return str(path)


PRIV = ["--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "bounds", "--bounds", "-1", "1", "--block-rows", "1024"]


def _expected(table, mech, bounds=(-1.0, 1.0)):
    # A check of the CLI's output under its key: no record (the CLI recorded the release in this process).
    return pydp_core.privatize(table, mech, columns=["x", "y"], key=KEY, bounds=bounds, block_rows=1024,
                               ledger=UNRECORDED)


@pytest.mark.parametrize("batch_rows", [1000, 4096, 1 << 20])
def test_privatize_parquet_streams_and_matches_in_memory(capsys, tmp_path, batch_rows):
    table = _table()
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src, row_group_size=3000)
    before = src.read_bytes()
    code, out, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", "-c", "y", *PRIV,
                         "--key-file", _write_key(tmp_path), "--batch-rows", str(batch_rows), "--no-progress")
    assert code == 0, err
    assert "10000 rows" in err
    got = pq.read_table(dst)
    want = _expected(table, etl.mechanism("laplace", epsilon=0.5, sensitivity=2.0))  # --epsilon 1 over two columns
    assert got.equals(want)
    assert got.column("x").null_count == table.column("x").null_count
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "out.parquet", "release.key", "release.key.ledger"]


@pytest.mark.parametrize("codec", ["none", "zstd", "snappy"])
def test_privatize_parquet_compression(capsys, tmp_path, codec):
    table = _table(5000)
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV, "--key-file", _write_key(tmp_path),
                       "--compression", codec, "--no-progress")
    assert code == 0, err
    meta = pq.ParquetFile(dst).metadata
    assert meta.row_group(0).column(0).compression == ("UNCOMPRESSED" if codec == "none" else codec.upper())
    got = pq.read_table(dst)
    want = pydp_core.privatize(table, etl.mechanism("laplace", epsilon=1.0, sensitivity=2.0), columns=["x"], key=KEY,
                               bounds=(-1.0, 1.0), block_rows=1024)
    assert got.equals(want)


def test_privatize_csv_to_csv_and_parquet(capsys, tmp_path):
    table = _table(3000)
    src = tmp_path / "in.csv"
    pcsv.write_csv(table, src)
    key = _write_key(tmp_path)
    for name in ("out.csv", "out.parquet"):
        code, _, err = run(capsys, "privatize", str(src), str(tmp_path / name), "-c", "x", "-c", "y", *PRIV,
                           "--key-file", key, "--batch-rows", "700", "--no-progress")
        assert code == 0, err
    mech = etl.mechanism("laplace", epsilon=0.5, sensitivity=2.0)  # --epsilon 1 is the total over x and y
    want = _expected(table, mech)
    back = pcsv.read_csv(tmp_path / "out.csv", convert_options=pcsv.ConvertOptions(column_types={"name": pa.string()}))
    np.testing.assert_array_equal(back.column("x").to_numpy(zero_copy_only=False), want.column("x").to_numpy(zero_copy_only=False))
    np.testing.assert_array_equal(back.column("y").to_numpy(), want.column("y").to_numpy())
    assert back.column("x").null_count == table.column("x").null_count
    assert back.column("name").to_pylist() == table.column("name").to_pylist()
    assert back.column("id").to_pylist() == table.column("id").to_pylist()
    pqt = pq.read_table(tmp_path / "out.parquet")
    np.testing.assert_array_equal(pqt.column("y").to_numpy(), want.column("y").to_numpy())
    assert pqt.column("name").to_pylist() == table.column("name").to_pylist()


@pytest.mark.parametrize("per_column", [False, True])
def test_privatize_epsilon_is_the_total_per_record_unless_per_column(capsys, tmp_path, per_column):
    """--epsilon/--delta are the total per record, split evenly over the columns; --budget-per-column gives
    each column the whole budget. The Parquet metadata and the CSV sidecar record each column's share and
    the composed budget per record; --help says which."""
    table = _table(3000)
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    gauss = ["--mechanism", "gaussian", "--epsilon", "1.5", "--delta", "3e-6", "--sensitivity", "bounds", "--bounds",
             "-1", "1", "--block-rows", "1024"]
    flags = ["--budget-per-column"] if per_column else []
    key = _write_key(tmp_path)
    for name in ("out.parquet", "out.csv"):
        code, _, err = run(capsys, "privatize", str(src), str(tmp_path / name), "-c", "x", "-c", "y", "-c", "id",
                           *gauss, *flags, "--key-file", key, "--no-progress")
        assert code == 0, err
        total = "epsilon=4.5, delta=9e-06" if per_column else "epsilon=1.5, delta=3e-06"
        assert f"({total}) per record in total" in err
    eps, dl = (1.5, 3e-6) if per_column else (0.5, 1e-6)
    mech = etl.mechanism("gaussian", epsilon=eps, delta=dl, sensitivity=2.0)
    want = pydp_core.privatize(table, mech, columns=["x", "y", "id"], key=KEY, bounds=(-1.0, 1.0), block_rows=1024)
    got = pq.read_table(tmp_path / "out.parquet")
    assert got.select(["x", "y", "id"]).equals(want.select(["x", "y", "id"]))
    import json

    for rep in (json.loads(got.schema.metadata[b"pydp_core.release"]),
                json.loads((tmp_path / "out.csv.release.json").read_text())):
        assert {c: (v["epsilon"], v["delta"]) for c, v in rep["columns"].items()} == {c: (eps, dl) for c in "xy"} | {"id": (eps, dl)}
        per_record = rep["budget_per_record"]
        assert per_record["columns"] == 3
        assert per_record["epsilon"] == pytest.approx(3 * eps) and per_record["delta"] == pytest.approx(3 * dl)
        if not per_column:
            assert per_record["epsilon"] <= 1.5 and per_record["delta"] <= 3e-6
    with pytest.raises(SystemExit):
        cli.main(["privatize", "--help"])
    assert "TOTAL epsilon per record" in " ".join(capsys.readouterr().out.split())


def test_memory_stays_at_a_few_batches_not_the_file(tmp_path):
    """Streaming: Arrow's memory pool never holds more than a few batches (files larger than memory)."""
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    rows, batch = 8 << 19, 1 << 17
    with pq.ParquetWriter(src, pa.schema([("x", pa.float64())]), compression="none") as w:
        for i in range(0, rows, 1 << 19):
            w.write_table(pa.table({"x": np.random.default_rng(i).uniform(0, 1, 1 << 19)}))
    size = os.path.getsize(src)
    peak = [0]

    def progress(n):
        peak[0] = max(peak[0], pa.total_allocated_bytes())

    base = pa.total_allocated_bytes()
    etl.privatize_file(src, dst, columns=["x"], mechanism=sup.laplace(), key=KEY, sensitivity_holds=True, batch_rows=batch, block_rows=batch, progress=progress)
    assert pq.ParquetFile(dst).metadata.num_rows == rows
    assert peak[0] - base < 16 * batch * 8 < size / 2, (peak[0] - base, size)


def test_progress_bar_on_request(capsys, tmp_path):
    pytest.importorskip("tqdm", reason="tqdm is an optional extra (pydp_core[progress])")
    src = tmp_path / "in.parquet"
    pq.write_table(_table(5000), src)
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "o.parquet"), "-c", "x", *PRIV,
                       "--progress", "--batch-rows", "1000")
    assert code == 0 and "privatize:" in err and "/5.00k" in err


def test_privatize_releases_on_the_grid_unless_simulating(capsys, tmp_path):
    """Laplace noise goes through the exact discrete release (outputs on a power-of-two grid)."""
    from pydp_core import release as discrete

    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"x": np.linspace(-1, 1, 3000)}), src)
    grid = discrete.calibrate_laplace_release(epsilon=1.0, sensitivity=2.0).grid
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "r.parquet"), "-c", "x", *PRIV)
    assert code == 0, err
    out = pq.read_table(tmp_path / "r.parquet").column("x").to_numpy()
    np.testing.assert_array_equal(out / grid, np.round(out / grid))
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "s.parquet"), "-c", "x", *PRIV, "--simulate")
    assert code == 0, err
    sim = pq.read_table(tmp_path / "s.parquet").column("x").to_numpy()
    assert np.mean(sim / grid != np.round(sim / grid)) > 0.99
    # the Logistic (delta = 0: pure DP, the lattice table with its geometric tail) is released on its grid too
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "l.parquet"), "-c", "x", PRIV[0], "logistic", *PRIV[2:])
    assert code == 0, err
    lgrid = discrete.calibrate_logistic_release(epsilon=1.0, sensitivity=2.0).grid
    out = pq.read_table(tmp_path / "l.parquet").column("x").to_numpy()
    np.testing.assert_array_equal(out / lgrid, np.round(out / lgrid))


def test_privatize_refuses_to_overwrite_its_input(capsys, tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(_table(100), src)
    before = src.read_bytes()
    link = tmp_path / "link.parquet"
    link.symlink_to(src)
    for target in (src, link):
        code, out, err = run(capsys, "privatize", str(src), str(target), "-c", "x", *PRIV, "--force")
        assert code == 1 and "refusing to overwrite the input" in err
    assert src.read_bytes() == before


def test_privatize_refuses_an_existing_output_without_force(capsys, tmp_path):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(100), src)
    dst.write_bytes(b"precious")
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV)
    assert code == 1 and "exists" in err and dst.read_bytes() == b"precious"
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV, "--force", "-q")
    assert code == 0 and "wrote" not in err and pq.read_table(dst).num_rows == 100


@pytest.mark.parametrize(
    "extra, code, message",
    [
        (["-c", "nope"], 1, "column 'nope' not found"),
        (["-c", "name"], 1, "must be numeric"),
        (["-c", "x", "--key-file", "/nonexistent/key"], 1, "No such file"),
    ],
)
def test_privatize_errors(capsys, tmp_path, extra, code, message):
    src = tmp_path / "in.parquet"
    pq.write_table(_table(100), src)
    got, _, err = run(capsys, "privatize", str(src), str(tmp_path / "o.parquet"), *extra, *PRIV)
    assert got == code and message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_privatize_usage_errors_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main(["privatize", "a.parquet", "b.parquet", *PRIV])  # no --column
    assert exc.value.code == 2 and "--column" in capsys.readouterr().err
    got, _, err = run(capsys, "privatize", str(tmp_path / "missing.parquet"), str(tmp_path / "o.parquet"), "-c", "x", *PRIV)
    assert got == 1 and "does not exist" in err
    got, _, err = run(capsys, "privatize", str(tmp_path / "a.txt"), str(tmp_path / "o.txt"), "-c", "x", *PRIV)
    assert got == 1 and "cannot tell the format" in err


class _Failing:
    """Wraps a mechanism; raises ``exc`` on the ``after``-th privatize call."""

    def __init__(self, inner, after, exc):
        self.inner, self.after, self.exc, self.calls = inner, after, exc, 0
        self.sensitivity = inner.sensitivity

    def __repr__(self):  # the law of the noise is the inner mechanism's (the release description reads it)
        return f"_Failing({self.inner!r})"

    def privatize(self, values, rng=None):
        self.calls += 1
        if self.calls == self.after:
            raise self.exc
        return self.inner.privatize(values, rng=rng)


@pytest.mark.parametrize("exc", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_a_failure_midway_leaves_no_output_and_the_input_untouched(tmp_path, exc):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(20_000), src, row_group_size=2000)
    before = src.read_bytes()
    mech = _Failing(sup.laplace(), after=3, exc=exc)
    with pytest.raises(type(exc)):
        etl.privatize_file(src, dst, columns=["x"], mechanism=mech, key=KEY, sensitivity_holds=True, batch_rows=2000, block_rows=1000)
    assert mech.calls == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]
    assert src.read_bytes() == before
    # An existing output is kept as it was.
    dst.write_bytes(b"previous")
    with pytest.raises(type(exc)):
        etl.privatize_file(src, dst, columns=["x"], mechanism=_Failing(sup.laplace(), 2, exc), key=KEY, sensitivity_holds=True, overwrite=True, batch_rows=2000, block_rows=1000)
    assert dst.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "out.parquet"]


@pytest.mark.parametrize("side", ["reader", "writer"])
def test_a_failing_reader_or_writer_thread_leaves_no_output(tmp_path, monkeypatch, side):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(20_000), src, row_group_size=2000)
    if side == "reader":
        real_read = io_files._read_batches

        def read(*args):
            for i, batch in enumerate(real_read(*args)):
                if i == 3:
                    raise OSError("read error on the input device")
                yield batch

        monkeypatch.setattr(io_files, "_read_batches", read)
    else:
        real_open = io_files._open_writer

        def open_writer(*args):
            w = real_open(*args)
            calls = [0]
            inner = w.write

            def write(batch):
                calls[0] += 1
                if calls[0] == 3:
                    raise OSError("No space left on device")
                inner(batch)

            w.write = write
            return w

        monkeypatch.setattr(io_files, "_open_writer", open_writer)
    with pytest.raises(OSError, match="read error|No space"):
        etl.privatize_file(src, dst, columns=["x"], mechanism=sup.laplace(), key=KEY, sensitivity_holds=True, batch_rows=2000, block_rows=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_ctrl_c_exits_130(capsys, tmp_path, monkeypatch):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(5000), src)
    real = etl.mechanism

    def failing(*args, **kwargs):
        return _Failing(real(*args, **kwargs), 1, KeyboardInterrupt())

    monkeypatch.setattr(etl, "mechanism", failing)
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV)
    assert code == 130 and "interrupted" in err
    assert not dst.exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_process_never_leaves_a_partial_output(tmp_path, sig):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(20_000), src, row_group_size=2000)
    before = src.read_bytes()
    script = textwrap.dedent(f"""
        import os, signal, sys
        from support import frames as sup
        from pydp_core import io as etl

        class Suicidal:
            calls = 0
            def __init__(self):
                self.inner = sup.laplace()
            def privatize(self, values, rng=None):
                Suicidal.calls += 1
                if Suicidal.calls == 4:
                    os.kill(os.getpid(), {int(sig)})
                return self.inner.privatize(values, rng=rng)

        etl.privatize_file({str(src)!r}, {str(dst)!r}, ["x"], Suicidal(), key=bytes(32), sensitivity_holds=True, batch_rows=2000, block_rows=1000)
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert not dst.exists()
    assert src.read_bytes() == before
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name != "in.parquet")
    if sig == signal.SIGTERM:
        assert leftovers == [], proc.stderr  # cleaned up
    else:
        assert all(n.startswith(".out.parquet.") and n.endswith(".tmp") for n in leftovers)


def test_the_installed_entry_point_runs(tmp_path):
    # What the `pydp-core` console script runs: pydp_core.cli:main.
    launcher = "import sys; from pydp_core.cli import main; sys.exit(main())"
    proc = subprocess.run([sys.executable, "-c", launcher, "calibrate", "laplace", "--epsilon", "2"],
                          env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "scale            0.5\n" in proc.stdout and proc.stderr == ""


def _python_m(*argv):
    return subprocess.run([sys.executable, "-m", "pydp_core", *argv], env=subprocess_env(), capture_output=True,
                          text=True, timeout=300)


def test_python_m_pydp_core_is_the_command_line():
    """`python -m pydp_core ARGS` runs `pydp-core ARGS`: --version, a command, and argparse's usage errors."""
    proc = _python_m("--version")
    assert proc.returncode == 0 and proc.stdout == f"pydp-core {pydp_core.__version__}\n" and proc.stderr == ""
    proc = _python_m("calibrate", "laplace", "--epsilon", "1")
    assert proc.returncode == 0 and "scale            1\n" in proc.stdout and proc.stderr == ""
    proc = _python_m("no-such-command")
    assert proc.returncode == 2 and proc.stdout == "" and "invalid choice" in proc.stderr
    proc = _python_m()
    assert proc.returncode == 2 and proc.stdout == "" and "usage: pydp-core" in proc.stderr


def test_command_modules_import_nothing_heavy():
    """`pydp-core --version` imports every command module: none may load numpy, scipy, pandas or pyarrow."""
    script = ("import sys\n"
              "from pydp_core.cli import build_parser\n"
              "build_parser()\n"
              "print(' '.join(m for m in ('numpy', 'scipy', 'pandas', 'pyarrow', 'matplotlib') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", script], env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "", proc.stdout + proc.stderr


# -- mu ---------------------------------------------------------------------------------------------------
def test_mu_circle_reference(capsys):
    pytest.importorskip("pydp_core.manifolds", reason="pydp_core.manifolds is not in this build")
    code, out, _ = run(capsys, "mu", "circle", "--sigma", "1")
    assert code == 0 and float(out) == pytest.approx(0.9831692148, abs=1e-8)
    code, out, _ = run(capsys, "mu", "euclidean", "--dim", "3", "--sigma", "4", "--sensitivity", "2")
    assert code == 0 and float(out) == pytest.approx(0.5, rel=1e-12)


def _privatize_argv(src, dst, *extra):
    return [sys.executable, "-m", "pydp_core", "privatize", str(src), str(dst), "-c", "x", "-m", "gaussian",
            "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "bounds", "--bounds", "0", "100",
            "--batch-rows", "131072", "--no-progress", *extra]


@pytest.mark.parametrize("sig, fmt", [(signal.SIGTERM, "parquet"), (signal.SIGINT, "parquet"), (signal.SIGTERM, "csv")])
def test_a_signal_at_any_time_ends_privatize_promptly_without_output(tmp_path, sig, fmt):
    # The signal only sets a flag that the run checks at safe points: at every moment of the run (imports,
    # reading, noise, writing, the rename) it ends within 3 s (or, on a loaded machine where the interpreter's
    # start-up or one fsync alone takes longer, within the time of a whole run measured beside it), non-zero,
    # with no output and no temporary file.
    import time

    src, dst = tmp_path / f"in.{fmt}", tmp_path / f"out.{fmt}"
    data = pa.table({"x": np.random.default_rng(3).uniform(0, 100, 12_000_000 if fmt == "parquet" else 3_000_000)})
    if fmt == "parquet":
        pq.write_table(data, src)
    else:
        pcsv.write_csv(data, src)
    whole = float("inf")
    for _ in range(2):  # the faster of two runs (the first reads a cold file)
        t0 = time.monotonic()
        done = subprocess.run(_privatize_argv(src, dst), env=subprocess_env(), capture_output=True, text=True, timeout=300)
        whole = min(whole, time.monotonic() - t0)
        assert done.returncode == 0, done.stderr
        dst.unlink()
        Path(str(dst) + ".release.json").unlink(missing_ok=True)
    limit = max(3.0, whole)
    tries, interrupted = 10, 0
    for i in range(tries):
        delay = whole * (0.02 + 0.78 * i / (tries - 1))
        with subprocess.Popen(_privatize_argv(src, dst), env=subprocess_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            try:
                time.sleep(delay)
                if proc.poll() is not None:  # finished before the signal (a much faster machine): not a try
                    proc.communicate()
                    dst.unlink(missing_ok=True)
                    Path(str(dst) + ".release.json").unlink(missing_ok=True)
                    continue
                proc.send_signal(sig)
                sent = time.monotonic()
                try:
                    _, err = proc.communicate(timeout=limit)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"still running {limit:.1f} s after {sig.name} sent at {delay:.2f} s (a whole run: {whole:.1f} s)")
                took = time.monotonic() - sent
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
        if proc.returncode == 0 or err.startswith("wrote "):
            # The output was renamed into place before the signal: a completed run. A signal that lands after
            # that, while the interpreter shuts down with the default handlers back, ends it with -signal.
            assert err.startswith("wrote ") and proc.returncode in (0, -sig), (proc.returncode, err)
            dst.unlink()
            Path(str(dst) + ".release.json").unlink(missing_ok=True)
            continue
        interrupted += 1
        # 128 + signal from the command; -signal if it came before Python had started the command at all.
        assert proc.returncode in (128 + sig, -sig), (delay, proc.returncode, err)
        if proc.returncode > 0:
            assert "Traceback" not in err and "interrupted" in err, err
        assert took < limit
        assert sorted(p.name for p in tmp_path.iterdir()) == [src.name], (delay, whole, proc.returncode, err)
    assert interrupted >= tries - 2


def _dead_pid():
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          timeout=60)
    return int(proc.stdout)


def test_privatize_reports_and_cleans_the_temporary_files_of_killed_runs(capsys, tmp_path):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(100), src)
    stale = tmp_path / f".out.parquet.{_dead_pid()}.0123456789abcdef.tmp"
    running = tmp_path / f".out.parquet.{os.getppid()}.0123456789abcdef.tmp"  # a live process: not stale
    other = tmp_path / f".other.parquet.{_dead_pid()}.0123456789abcdef.tmp"  # another output's
    for p in (stale, running, other):
        p.write_bytes(b"partial")
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV, "-q")
    assert code == 0 and str(stale) in err and "--clean-stale" in err and str(running) not in err
    assert stale.exists()
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV, "-q", "-f", "--clean-stale")
    assert code == 0 and f"removed {stale}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["in.parquet", "out.parquet", running.name, other.name])


def test_an_interruption_wins_over_the_errors_it_causes(capsys, tmp_path, monkeypatch):
    # A writer stopped mid-batch can fail with an unrelated message (pyarrow: "Column 2 had 1048576 while
    # previous column had 131264"); the command reports the interruption, not that error.
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(5000), src)
    real = etl.mechanism

    class Torn:
        def __init__(self, inner):
            self.inner, self.sensitivity = inner, inner.sensitivity

        def privatize(self, values, rng=None):
            os.kill(os.getpid(), signal.SIGTERM)
            raise ValueError("Column 2 had 1048576 while previous column had 131264")

    monkeypatch.setattr(etl, "mechanism", lambda *a, **k: Torn(real(*a, **k)))
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", *PRIV)
    assert code == 143 and "interrupted (SIGTERM)" in err and "Column 2" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_privatize_says_that_the_output_folder_is_missing(capsys, tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(_table(100), src)
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "nope" / "out.parquet"), "-c", "x", *PRIV)
    assert code == 1 and f"output folder {str(tmp_path / 'nope')!r} does not exist" in err and ".tmp" not in err


def test_privatize_refuses_an_output_name_that_does_not_tell_the_format(capsys, tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(_table(100), src)
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "e.txt"), "-c", "x", *PRIV)
    assert code == 1 and "--output-format parquet or csv" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "e.txt"), "-c", "x", *PRIV, "--output-format", "csv")
    assert code == 0 and "id" in (tmp_path / "e.txt").read_text().splitlines()[0]


def test_privatize_nan_message_is_consistent_with_bounds(capsys, tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"x": [0.5, float("nan")]}), src)
    code, _, err = run(capsys, "privatize", str(src), str(tmp_path / "out.parquet"), "-c", "x", *PRIV)
    assert code == 1 and "NaN values: store missing values as nulls" in err and "--bounds to clamp" not in err


@pytest.mark.parametrize("extra, flags", [
    ([], ["--bounds LOWER UPPER", "--sensitivity-holds"]),  # no bounds: the two ways out, as flags
    (["--simulate", "--key-file", "KEY"], ["--simulate", "--key-file"]),  # floating-point noise under a key
])
def test_privatize_messages_name_the_command_line_flags(capsys, tmp_path, extra, flags):
    src = tmp_path / "in.parquet"
    pq.write_table(_table(100), src)
    key = tmp_path / "k.key"
    assert run(capsys, "keygen", str(key))[0] == 0
    base = ["--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1"]
    if extra:
        base += ["--bounds", "0", "1"]
    argv = ["privatize", str(src), str(tmp_path / "out.parquet"), "-c", "x", *base,
            *[str(key) if a == "KEY" else a for a in extra]]
    if "--simulate" in extra:
        with pytest.warns(pydp_core.PrivacyWarning) as caught:
            _, _, err = run(capsys, *argv)
        err += "".join(str(w.message) for w in caught)
    else:
        _, _, err = run(capsys, *argv)
    for flag in flags:
        assert flag in err, err
    for python in ("release=", "simulation=", "sensitivity_holds=", "bounds=", "overwrite=", "format="):
        assert python not in err, err


def test_privatize_logistic_at_delta_zero_is_an_exact_release(capsys, tmp_path):
    # The Logistic at delta = 0: the lattice table with its exact geometric tail (pure DP), on the grid.
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"x": np.linspace(0, 1, 100)}), src)
    code, out, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", "--mechanism", "logistic",
                         "--epsilon", "1", "--sensitivity", "1", "--bounds", "0", "1")
    assert code == 0, err
    y = pq.read_table(dst).column("x").to_numpy()
    assert np.array_equal(y * 2**16, np.round(y * 2**16)) and "delta=0" in out + err


def test_csv_output_keeps_the_types_readers_infer(capsys, tmp_path):
    # Text passed through is quoted only where CSV needs it, so numbers stay numbers; a noised column on a
    # coarse grid (whole numbers) is still written as floats, so that readers infer float64, not int64.
    pd = pytest.importorskip("pandas")
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text('name,id,score,age\n"a,b",1,1.5,30\n"say ""hi""",2,2.25,\nplain,3,-4e-3,50\n')
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "age", "--mechanism", "laplace", "--epsilon",
                       "0.01", "--sensitivity", "bounds", "--bounds", "0", "1000000", "-q")
    assert code == 0, err
    lines = dst.read_text().splitlines()
    assert lines[0] == "name,id,score,age"
    assert [ln.split(",")[-3:-1] for ln in lines[2:]] == [["2", "2.25"], ["3", "-4e-3"]]
    assert lines[1].startswith('"a,b",1,1.5,') and lines[2].startswith('"say ""hi""",2,2.25,')
    noisy = pcsv.read_csv(dst).column("age").to_pylist()
    assert all(v is None or float(v).is_integer() for v in noisy)  # a grid of whole numbers: the hard case
    for read in (lambda p: pd.read_csv(p).dtypes.map(str).to_dict(),
                 lambda p: {f.name: str(f.type) for f in pcsv.read_csv(p).schema}):
        types = read(dst)
        assert types["id"] == "int64" and types["score"] in ("float64", "double") and types["age"] in ("float64", "double")
        assert types["name"] in ("object", "str", "string")
    assert pd.read_csv(dst)["name"].tolist() == ["a,b", 'say "hi"', "plain"]


def test_csv_output_from_parquet_writes_floats_as_floats(capsys, tmp_path):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.csv"
    pq.write_table(pa.table({"n": pa.array([1, 2, None]), "f": [2.0, -3.0, 0.5], "x": [1.0, 2.0, 3.0],
                             "s": ["1", "x\ny", None]}), src)
    code, _, err = run(capsys, "privatize", str(src), str(dst), "-c", "x", "--mechanism", "laplace", "--epsilon",
                       "0.01", "--sensitivity", "bounds", "--bounds", "0", "1000000", "-q")
    assert code == 0, err
    back = pcsv.read_csv(dst)
    assert [str(f.type) for f in back.schema] == ["int64", "double", "double", "string"]
    assert back.column("f").to_pylist() == [2.0, -3.0, 0.5] and back.column("n").to_pylist() == [1, 2, None]
    assert back.column("s").to_pylist()[:2] == ["1", "x\ny"]


def test_profile_labels_epsilon_exactly(capsys):
    # A pure-DP mechanism must never seem to have delta > 0 at its own epsilon: every row printed with
    # delta > 0 has an epsilon below the Laplace's pure epsilon D / b = 1.
    assert cli.main(["profile", "laplace", "--epsilon", "1"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if not line.startswith("#")][1:]
    assert rows
    for eps_text, delta_text in rows:
        if float(delta_text) > 0:
            assert float(eps_text) < 1.0, (eps_text, delta_text)


@pytest.mark.parametrize("blocked, args, extra", [
    ("pyarrow", ["privatize", "in.parquet", "out.parquet", "-c", "x", "-m", "laplace", "--epsilon", "1",
                 "--sensitivity", "1", "--sensitivity-holds"], "etl"),
])
def test_missing_optional_dependency_is_one_line_naming_the_extra(tmp_path, blocked, args, extra):
    code = textwrap.dedent(f"""
        import sys
        sys.modules[{blocked!r}] = None  # as on a base install without the extra
        from pydp_core.cli import main
        sys.exit(main({args!r}))
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=subprocess_env())
    assert res.returncode == 1, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"'{extra}'" in lines[0] and "Traceback" not in res.stderr, res.stderr


def test_progress_without_tqdm_says_why(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("x\n1.0\n2.0\n")
    code = textwrap.dedent(f"""
        import sys
        sys.modules["tqdm"] = None
        from pydp_core.cli import main
        sys.exit(main(["privatize", {str(src)!r}, {str(tmp_path / 'out.csv')!r}, "-c", "x", "-m", "laplace",
                       "--epsilon", "1", "--sensitivity", "1", "--sensitivity-holds", "--progress"]))
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=subprocess_env())
    assert res.returncode == 0, res.stderr
    assert "--progress needs tqdm" in res.stderr and "progress" in res.stderr


def test_compose_help_shows_the_json_format(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["compose", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert "compose --help" not in out  # the help does not point at itself
    for key in ('"noise"', '"gdp"', '"approx_dp"', '"randomized_response"', '"discrete_laplace"',
                '"discrete_gaussian"', '"count"'):
        assert key in out, key
