"""No public switch, ledger object or copy of a key file gives two releases with shared noise.

Every keyed release is checked against the key's ledger in the state directory (named by the key's
fingerprint, not by a file's path), whatever ledger the caller gives and whether the key is a key file or
``bytes`` in memory; ``ledger=False`` is refused. The attack each test tries is the linear recovery of
two outputs under one key (a rerun at another epsilon, or the same release on other data).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from support.paths import subprocess_env

import pydp_core as dp
from pydp_core import io
from pydp_core.cli import main
from pydp_core.io import ledger as ledger_mod
from pydp_core.io.frames import record_distributed_release

pd = pytest.importorskip("pandas", reason="pandas is an optional extra (pydp_core[etl])")
pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")

BOUNDS = (0.0, 500.0)


def _data(n: int = 5000, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 500, n)


def _mech(epsilon: float) -> dp.LaplaceMechanism:
    return io.mechanism("laplace", epsilon=epsilon, sensitivity="bounds", bounds=BOUNDS)


def _recovery_error(out1: np.ndarray, out2: np.ndarray, truth: np.ndarray) -> float:
    """Mean absolute error of the linear recovery 2 out2 - out1 (epsilons 1 and 2 under shared noise)."""
    return float(np.mean(np.abs(2 * out2 - out1 - truth)))


def _new_process() -> None:
    """Forget this process's ledger objects, as a new process starts (the state directory stays)."""
    ledger_mod._PROCESS_LEDGERS.clear()


# -- the public switch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("call", ["privatize", "aggregate", "KeyedNoise"])
def test_ledger_false_is_refused_with_the_way_out(call):
    key = io.generate_key()
    x = _data(10)
    with pytest.raises(ValueError, match=r"ledger=False is no longer accepted.*fresh key.*Session"):
        if call == "privatize":
            dp.privatize(x, _mech(1.0), key=key, ledger=False)
        elif call == "aggregate":
            df = pd.DataFrame({"pid": [1, 2], "g": [0, 1], "x": [1.0, 2.0]})
            dp.aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds={"x": (0, 5)},
                         max_partitions=1, max_contributions=1, public_partitions=[0, 1], epsilon=1.0, key=key,
                         ledger=False)
        else:
            io.KeyedNoise(_mech(1.0), key, "x", ledger=False)


def test_the_engines_marker_is_not_exported():
    assert not any("RECORDED" in name for name in io.__all__) and "_RECORDED_AT_DRIVER" not in dir(dp)


# -- a fresh ledger object -------------------------------------------------------------------------------
def test_a_fresh_ledger_object_does_not_forget_the_key():
    key = io.generate_key()
    x = _data()
    o1 = dp.privatize(x, _mech(1.0), key=key)
    with pytest.raises(io.KeyReuseError, match="another release"):  # the rerun at another epsilon
        dp.privatize(x, _mech(2.0), key=key, ledger=io.KeyLedger(key))
    with pytest.raises(io.KeyReuseError, match="other values"):  # the same release on other data
        dp.privatize(x + 1.0, _mech(1.0), key=key, ledger=io.KeyLedger(key))
    again = dp.privatize(x, _mech(1.0), key=key, ledger=io.KeyLedger(key))  # the exact repeat: identical
    assert np.array_equal(o1, again)
    # Everything the attacker could get is o1 (twice): the recovery is off by the noise (mean |.| ~ 500).
    assert _recovery_error(o1, again, x) > 200


def test_a_fresh_ledger_first_then_the_default_record():
    key = io.generate_key()
    x = _data()
    dp.privatize(x, _mech(1.0), key=key, ledger=io.KeyLedger(key))
    with pytest.raises(io.KeyReuseError, match="another release"):
        dp.privatize(x, _mech(2.0), key=key)


def test_a_ledger_file_and_the_process_record_see_each_other(tmp_path):
    key = io.generate_key()
    x = _data()
    dp.privatize(x, _mech(1.0), key=key, ledger=str(tmp_path / "a.ledger"))
    with pytest.raises(io.KeyReuseError, match="another release"):
        dp.privatize(x, _mech(2.0), key=key)
    with pytest.raises(io.KeyReuseError, match="other values"):
        dp.privatize(x[::-1].copy(), _mech(1.0), key=key, ledger=str(tmp_path / "b.ledger"))


def test_aggregate_under_a_fresh_ledger_object_is_refused():
    key = io.generate_key()
    df = pd.DataFrame({"pid": [1, 2, 3, 4], "g": [0, 0, 1, 1], "x": [1.0, 2.0, 3.0, 4.0]})
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds={"x": (0, 5)}, max_partitions=1,
                max_contributions=1, public_partitions=[0, 1], key=key)
    dp.aggregate(df, epsilon=1.0, **args)
    with pytest.raises(io.KeyReuseError, match="another release"):
        dp.aggregate(df, epsilon=2.0, ledger=io.KeyLedger(key), **args)
    with pytest.raises(io.KeyReuseError, match="other data"):
        dp.aggregate(df.assign(x=[1.0, 2.0, 3.0, 5.0]), epsilon=1.0, ledger=io.KeyLedger(key), **args)


# -- a copied key file ----------------------------------------------------------------------------------
def _key_files(tmp_path):
    x = _data(3000)
    rng = np.random.default_rng(5)
    src = tmp_path / "data.parquet"
    pq.write_table(pa.table({"spend": x, "user": rng.integers(0, 800, x.size), "city": rng.integers(0, 20, x.size)}),
                   src)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"spend": _data(3000, seed=8), "user": rng.integers(0, 800, x.size),
                             "city": rng.integers(0, 20, x.size)}), other)
    key = tmp_path / "release.key"
    assert main(["keygen", str(key)]) == 0
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "release.key"
    shutil.copy2(key, copy)
    return src, other, key, copy


PRIV = ["-c", "spend", "-m", "laplace", "--sensitivity", "bounds", "--bounds", "0", "500", "--no-progress"]
AGG = ["--privacy-unit", "user", "--group-by", "city", "--count", "--sum", "spend", "--bounds", "spend", "0", "500",
       "--max-partitions", "1", "--max-contributions", "2", "--delta", "1e-7"]


def test_cli_privatize_with_a_copied_key_file_is_refused(tmp_path, capsys):
    src, other, key, copy = _key_files(tmp_path)
    out1, out2 = tmp_path / "o1.parquet", tmp_path / "o2.parquet"
    assert main(["privatize", str(src), str(out1), *PRIV, "--epsilon", "1", "-k", str(key)]) == 0
    _new_process()
    capsys.readouterr()
    assert main(["privatize", str(src), str(out2), *PRIV, "--epsilon", "2", "-k", str(copy)]) == 1
    assert "another release" in capsys.readouterr().err and not out2.exists()
    assert not os.path.exists(str(copy) + ".ledger") or os.path.getsize(str(copy) + ".ledger") == 0
    _new_process()
    assert main(["privatize", str(other), str(out2), *PRIV, "--epsilon", "1", "-k", str(copy)]) == 1
    assert "other values" in capsys.readouterr().err and not out2.exists()
    _new_process()  # the exact rerun through the copy is accepted and identical
    assert main(["privatize", str(src), str(out2), *PRIV, "--epsilon", "1", "-k", str(copy)]) == 0
    assert pq.read_table(out1).equals(pq.read_table(out2))


def test_cli_aggregate_with_a_copied_key_file_is_refused(tmp_path, capsys):
    src, other, key, copy = _key_files(tmp_path)
    e1, e2 = tmp_path / "e1.parquet", tmp_path / "e2.parquet"
    assert main(["aggregate", str(src), str(e1), *AGG, "--epsilon", "1", "-k", str(key)]) == 0
    _new_process()
    capsys.readouterr()
    assert main(["aggregate", str(src), str(e2), *AGG, "--epsilon", "2", "-k", str(copy)]) == 1
    assert "another release" in capsys.readouterr().err and not e2.exists()
    _new_process()
    assert main(["aggregate", str(other), str(e2), *AGG, "--epsilon", "1", "-k", str(copy)]) == 1
    assert "other data" in capsys.readouterr().err and not e2.exists()


def test_the_state_ledger_is_named_by_the_key_and_authenticated(tmp_path):
    src, _, key, copy = _key_files(tmp_path)
    assert main(["privatize", str(src), str(tmp_path / "o.parquet"), *PRIV, "--epsilon", "1", "-k", str(key)]) == 0
    ledgers = os.listdir(os.path.join(ledger_mod.state_dir(), "ledgers"))
    assert len(ledgers) == 1 and ledgers[0] == ledger_mod._fingerprint(io.load_key(key)) + ".ledger"
    with open(os.path.join(ledger_mod.state_dir(), "ledgers", ledgers[0])) as fh:
        text = fh.read()
    assert '"release"' in text and io.load_key(key).hex() not in text  # the key is never written
    assert main(["privatize", str(src), str(tmp_path / "o2.parquet"), *PRIV, "--epsilon", "1", "-k", str(copy)]) == 0
    assert os.listdir(os.path.join(ledger_mod.state_dir(), "ledgers")) == ledgers  # one ledger for both copies


def test_a_copied_key_file_in_another_process_is_refused(tmp_path):
    """Two real processes, two copies of one key file: the second sees the first's use."""
    src, _, key, copy = _key_files(tmp_path)
    env = subprocess_env()

    def run(epsilon: str, keyfile) -> subprocess.CompletedProcess:
        out = tmp_path / f"o{epsilon}-{os.path.basename(os.path.dirname(keyfile))}.parquet"
        return subprocess.run([sys.executable, "-m", "pydp_core", "privatize", str(src), str(out), *PRIV,
                               "--epsilon", epsilon, "-k", str(keyfile)], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)

    assert run("1", key).returncode == 0
    second = run("2", copy)
    assert second.returncode == 1 and "another release" in second.stderr


_BYTES_KEY_RELEASE = """
import sys
import numpy as np
import pydp_core as dp
from pydp_core import io
key = bytes.fromhex(sys.argv[1])
x = np.random.default_rng(7).uniform(0, 500, 2000)
mech = io.mechanism("laplace", epsilon=float(sys.argv[2]), sensitivity="bounds", bounds=(0.0, 500.0))
try:
    out = dp.privatize(x, mech, key=key)
except io.KeyReuseError as exc:
    print("refused:", exc)
    sys.exit(3)
np.save(sys.argv[3], out)
"""


def test_a_bytes_key_in_two_processes_is_refused(tmp_path):
    """Two real processes, one key held as bytes (no key file): the second release, at another epsilon,
    is refused; without the refusal its output and the first's would give the data back."""
    key = io.generate_key()
    env = subprocess_env()

    def run(epsilon: str, out: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _BYTES_KEY_RELEASE, key.hex(), epsilon, str(tmp_path / out)],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

    first = run("1", "first.npy")
    assert first.returncode == 0, first.stderr
    second = run("2", "second.npy")
    assert second.returncode == 3 and "another release" in second.stdout, (second.stdout, second.stderr)
    assert not (tmp_path / "second.npy").exists()
    again = run("1", "again.npy")  # the same release on the same data repeats recorded pieces: accepted
    assert again.returncode == 0, again.stderr
    assert np.array_equal(np.load(tmp_path / "first.npy"), np.load(tmp_path / "again.npy"))


def test_a_bytes_key_then_its_key_file_is_refused(tmp_path, capsys):
    """The key read into memory and released, then the same key as a key file at another epsilon."""
    src, _, keyfile, _ = _key_files(tmp_path)
    key = io.load_key(keyfile)
    table = pq.read_table(src).to_pandas()
    column = PRIV[PRIV.index("-c") + 1]
    dp.privatize(table[column].to_numpy(), _mech(1.0), key=key)
    _new_process()
    code = main(["privatize", str(src), str(tmp_path / "o.parquet"), *PRIV, "--epsilon", "2", "-k", str(keyfile)])
    assert code == 1 and "another release" in capsys.readouterr().err
    assert not (tmp_path / "o.parquet").exists()


def test_an_unwritable_state_directory_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(ledger_mod.STATE_DIR_ENV, str(blocker / "sub"))
    with pytest.raises(OSError, match="PYDP_STATE_DIR"):
        dp.privatize(_data(10), _mech(1.0), key=io.generate_key(), ledger=str(tmp_path / "k.ledger"))


# -- distributed releases --------------------------------------------------------------------------------
def test_resume_needs_the_release_recorded():
    key = io.generate_key()
    args = dict(bounds=BOUNDS, block_rows=1024, privatize_kwargs={}, ledger=None, accountant=None)
    with pytest.raises(io.KeyReuseError, match="never recorded"):  # nothing recorded yet
        record_distributed_release(key, ["x"], _mech(1.0), resume=True, **args)
    record_distributed_release(key, ["x"], _mech(1.0), resume=False, **args)
    record_distributed_release(key, ["x"], _mech(1.0), resume=True, **args)  # the same release: accepted
    with pytest.raises(io.KeyReuseError, match="never recorded"):  # a rerun at another epsilon
        record_distributed_release(key, ["x"], _mech(2.0), resume=True, **args)
    with pytest.raises(io.KeyReuseError, match="another release"):
        record_distributed_release(key, ["x"], _mech(2.0), resume=False, **dict(args, ledger=io.KeyLedger(key)))
    with pytest.raises(ValueError, match="ledger=False"):
        record_distributed_release(key, ["x"], _mech(1.0), resume=False, **dict(args, ledger=False))
