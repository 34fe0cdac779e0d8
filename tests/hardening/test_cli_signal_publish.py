"""A signal at the end of a ``pydp-core aggregate`` run, or during its start-up, in a subprocess: once the
output is published the run completes (table and sidecar) and exits 0; during start-up it ends as
interrupted (143), with no traceback and no output. The signal is sent by the process to itself at a
chosen point (after the table, the last file, is renamed into place; after the whole write; between the
renames of the sidecar and of the table, which leaves neither; during the imports), so each case is exact
and needs no timing."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.paths import subprocess_env

_DRIVER = textwrap.dedent("""
    import importlib.abc, os, signal, sys

    where, argv = sys.argv[1], sys.argv[2:]

    def term():
        os.kill(os.getpid(), signal.SIGTERM)

    if where.startswith("startup"):
        class Hook(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "pydp_core.cli.aggregate":
                    term()
                return None
        sys.meta_path.insert(0, Hook())
    from pydp_core.cli import main
    import pydp_core.io.files as files
    if where in ("between_renames", "after_table"):  # the sidecar is renamed into place first, the table last
        real_replace = os.replace

        def replace(src, dst):
            real_replace(src, dst)
            if os.fspath(dst).endswith(".parquet.json" if where == "between_renames" else ".parquet"):
                term()
        os.replace = replace
    if where == "after_write":
        real_write = files.write_result

        def write_result(*a, **k):
            out = real_write(*a, **k)
            term()
            return out
        files.write_result = write_result
    if where == "startup_program":  # as the pydp-core program: main() reads sys.argv
        sys.argv = ["pydp-core", *argv]
        raise SystemExit(main())
    raise SystemExit(main(argv))
""")


@pytest.fixture
def job(tmp_path):
    rng = np.random.default_rng(5)
    n = 2000
    src, dst, key = tmp_path / "in.parquet", tmp_path / "out.parquet", tmp_path / "release.key"
    pq.write_table(pa.table({"user": rng.integers(0, 500, n), "city": rng.choice(["a", "b"], n),
                             "spend": rng.uniform(0, 100, n)}), src)
    done = subprocess.run([sys.executable, "-m", "pydp_core", "keygen", str(key)], env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    argv = ["aggregate", str(src), str(dst), "--privacy-unit", "user", "--group-by", "city", "--count", "--sum",
            "spend", "--bounds", "spend", "0", "100", "--max-partitions", "1", "--max-contributions", "2",
            "--epsilon", "1", "--delta", "1e-7", "-k", str(key)]
    return tmp_path, dst, argv


def _run(where, argv):
    return subprocess.run([sys.executable, "-c", _DRIVER, where, *argv], env=subprocess_env(), capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("where", ["after_table", "after_write"])
def test_a_signal_after_publication_leaves_a_complete_successful_run(job, where):
    tmp_path, dst, argv = job
    done = _run(where, argv)
    assert done.returncode == 0, (done.returncode, done.stderr[-1500:])
    assert dst.exists() and (tmp_path / "out.parquet.json").exists()
    assert "budget" in json.loads((tmp_path / "out.parquet.json").read_text())
    assert pq.read_table(dst).num_rows > 0 and "Traceback" not in done.stderr


def test_a_signal_between_the_sidecar_and_the_table_is_an_interruption_that_leaves_neither(job):
    tmp_path, dst, argv = job
    done = _run("between_renames", argv)
    assert done.returncode == 128 + signal.SIGTERM, (done.returncode, done.stderr[-1500:])
    assert "interrupted (SIGTERM)" in done.stderr and "Traceback" not in done.stderr
    # no table, no sidecar (the one renamed first is taken back), no temporary file
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(("out.", ".out."))] == []


@pytest.mark.parametrize("where", ["startup", "startup_program"])
def test_a_signal_during_start_up_is_an_interruption(job, where):
    tmp_path, dst, argv = job
    done = _run(where, argv)
    assert done.returncode == 128 + signal.SIGTERM, (done.returncode, done.stderr[-1500:])
    assert "interrupted (SIGTERM)" in done.stderr and "Traceback" not in done.stderr
    assert not dst.exists() and not (tmp_path / "out.parquet.json").exists()
