"""End-to-end `pydp-core privatize` on a float64 Parquet column, against pyarrow alone.

Measured in the same run, on the same file (N float64 values, one column, row groups of 2^20 rows,
uncompressed, in the page cache after the first read):

- ``read``: pyarrow reads and decodes every batch of the column (the floor for any reader);
- ``copy``: pyarrow reads and writes the file back unchanged (the floor for read + write);
- ``noise``: the exact discrete Laplace release alone on an in-memory block of 2^20 values (scaled to N);
- ``cli``: ``pydp-core privatize IN OUT --column x --compression none`` with the exact discrete Laplace
  release (cli.main in-process: argument parsing, key file, streaming, noise, atomic write and rename);
- ``copy_snappy`` and ``cli_snappy``: the same two with snappy output compression (the command's default).

Reported: values/s of each, and cli/read and cli/copy time ratios. N = PYDP_BENCH_ETL_N (default 2*10^6,
what CI runs once with --benchmark-disable; the figure in bench/README.md uses N = 10^8). With
PYDP_BENCH_ETL_RSS=1 the CLI also runs once as a subprocess and its peak RSS is reported (streaming:
far below the file size). Correctness is asserted in every mode: row count, nulls, the noise of the
first rows equals pydp_core.privatize with the same key, and the noise variance.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import pydp_core
from pydp_core import cli
from pydp_core import io as etl
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is an optional extra (pydp_core[etl])")

N = int(os.environ.get("PYDP_BENCH_ETL_N", 2_000_000))
ROW_GROUP = 1 << 20
KEY = bytes(range(32))
EPS = 1.0


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("etl")
    src = d / "in.parquet"
    writer = pq.ParquetWriter(src, pa.schema([("x", pa.float64())]), compression="none")
    rng = np.random.default_rng(1)
    for start in range(0, N, ROW_GROUP):
        n = min(ROW_GROUP, N - start)
        writer.write_table(pa.table({"x": rng.uniform(0, 100, n)}), row_group_size=ROW_GROUP)
    writer.close()
    key = d / "release.key"
    etl.write_key(key, KEY)
    return d, src, key


def _read(src):
    total = 0
    for batch in pq.ParquetFile(src).iter_batches(batch_size=ROW_GROUP):
        total += batch.num_rows
    return total


def _copy(src, dst, compression="none"):
    pf = pq.ParquetFile(src)
    with pq.ParquetWriter(dst, pf.schema_arrow, compression=compression, use_dictionary=False) as w:
        for batch in pf.iter_batches(batch_size=ROW_GROUP):
            w.write_batch(batch)


def _argv(src, dst, key, compression="none"):
    return ["privatize", str(src), str(dst), "--column", "x", "--mechanism", "laplace", "--epsilon", str(EPS),
            "--sensitivity", "bounds", "--bounds", "0", "100", "--key-file", str(key), "--no-progress", "--quiet", "--force",
            "--compression", compression]


def test_cli_privatize_parquet_throughput(benchmark, speed, files):
    d, src, key = files
    dst, copy_dst = d / "out.parquet", d / "copy.parquet"
    _read(src)  # warm the page cache
    t_read = speed.time(lambda: _read(src), repeat=3, min_time=0)
    t_copy = speed.time(lambda: _copy(src, copy_dst), repeat=3, min_time=0)
    t_cli = speed.time(lambda: cli.main(_argv(src, dst, key)), repeat=3, min_time=0)
    # The command's default output compression (snappy) against a snappy copy.
    t_copy_snappy = speed.time(lambda: _copy(src, copy_dst, "snappy"), repeat=3, min_time=0)
    t_cli_snappy = speed.time(lambda: cli.main(_argv(src, dst, key, "snappy")), repeat=3, min_time=0)
    # The noise alone: the release path on one in-memory block of 2^20 values, scaled to N.
    block = np.random.default_rng(2).uniform(0, 100, ROW_GROUP)
    noisy = etl.privatizer(etl.mechanism("laplace", epsilon=EPS, sensitivity=100.0), {})
    t_noise = speed.time(lambda: noisy(block, pydp_core.Random(KEY).stream(0)), repeat=3, min_time=0) * N / ROW_GROUP

    # Correctness: every row, no nulls, the keyed noise of the first rows, the noise variance.
    out = pq.ParquetFile(dst)
    assert out.metadata.num_rows == N
    head_in = next(pq.ParquetFile(src).iter_batches(batch_size=100_000)).column(0).to_numpy()
    head_out = next(out.iter_batches(batch_size=100_000)).column(0).to_numpy()
    mech = etl.mechanism("laplace", epsilon=EPS, sensitivity=100.0)
    want = pydp_core.privatize(head_in, mech, key=KEY, columns="x", bounds=(0, 100), ledger=UNRECORDED)  # a check
    np.testing.assert_array_equal(head_out, want)
    noise = head_out - head_in
    assert abs(noise.var() / float(mech.variance) - 1) < 0.05

    rate = {k: N / t for k, t in (("read", t_read), ("copy", t_copy), ("noise", t_noise), ("cli", t_cli),
                                  ("copy_snappy", t_copy_snappy), ("cli_snappy", t_cli_snappy))}
    info = {f"{k}_values_per_s": round(v) for k, v in rate.items()}
    info.update(N=N, cli_over_read=round(t_cli / t_read, 2), cli_over_copy=round(t_cli / t_copy, 2),
                cli_over_noise=round(t_cli / t_noise, 2))
    benchmark.extra_info.update(info)
    print(f"\nN = {N}: read {rate['read']:.3g} values/s, copy {rate['copy']:.3g} values/s, noise alone "
          f"{rate['noise']:.3g} values/s, CLI privatize {rate['cli']:.3g} values/s; CLI time = "
          f"{t_cli / t_read:.2f} x read, {t_cli / t_copy:.2f} x copy, {t_cli / t_noise:.2f} x noise alone; snappy output: "
          f"copy {rate['copy_snappy']:.3g}, CLI {rate['cli_snappy']:.3g} values/s ({t_cli_snappy / t_copy_snappy:.2f} x copy)")
    if os.environ.get("PYDP_BENCH_ETL_RSS"):
        # The child reports its own high-water mark (VmHWM is per address space, reset by exec; ru_maxrss
        # of children would include this process's pages copied at fork).
        code = ("import sys; from pydp_core import cli; code = cli.main(sys.argv[1:]); "
                "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]); sys.exit(code)")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pydp_core.__file__)), PYTHONSAFEPATH="1")
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code, *_argv(src, dst, key)], check=True, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t
        rss = int(proc.stdout.split()[-1]) / 1024
        size = os.path.getsize(src) / 2**20
        benchmark.extra_info.update(subprocess_s=round(wall, 2), peak_rss_mib=round(rss), file_mib=round(size))
        print(f"subprocess: {N / wall:.3g} values/s, peak RSS {rss:.0f} MiB for a {size:.0f} MiB file")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
