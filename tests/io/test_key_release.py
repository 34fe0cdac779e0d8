"""A key is one release: reruns under one key with other parameters are refused, sessions charge one budget.

The attack these tests defend against: two releases under one key whose noise is proportional (the same
keyed draws at two scales) give the data back by a linear combination of the outputs. The randomness of a
release is now derived from the key and the release's description, and the key's ledger refuses any
second release under a key that is not an exact repeat, unless one Session makes both and charges each.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats
from support.paths import subprocess_env  # noqa: E402
from support.stats import ALPHA

import pydp_core as dp
from pydp_core import io
from pydp_core.cli import main
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

pd = pytest.importorskip("pandas", reason="pandas is an optional extra (pydp_core[etl])")
pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")

KEY = bytes(range(32))
N = 20_000
BOUNDS = (0.0, 500.0)


def _data(n: int = N) -> np.ndarray:
    return np.random.default_rng(7).uniform(0, 500, n)


def _mech(epsilon: float) -> dp.LaplaceMechanism:
    return io.mechanism("laplace", epsilon=epsilon, sensitivity="bounds", bounds=BOUNDS)


# -- the description and the derivation -------------------------------------------------------------------
def test_release_keys_differ_in_every_parameter_of_the_law_and_agree_for_one_release():
    base = io.release_description(_mech(1.0), columns=["x"], bounds=BOUNDS)
    same = io.release_description(_mech(1.0), columns="x", bounds=None)  # the mechanism's own bounds: the same
    assert io.release_id(base) == io.release_id(same)
    variants = [
        io.release_description(_mech(2.0), columns="x"),
        io.release_description(_mech(1.0), columns="y"),
        io.release_description(_mech(1.0), columns=["x", "y"]),
        io.release_description(io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 400)), columns="x"),
        io.release_description(_mech(1.0), columns="x", block_rows=1024),
        io.release_description(io.mechanism("gaussian", epsilon=1.0, delta=1e-6, sensitivity="bounds", bounds=BOUNDS),
                               columns="x"),
        io.release_description(_mech(1.0), columns="x", privatize_kwargs={"release": False}),
        io.release_description(_mech(float(np.nextafter(1.0, 2.0))), columns="x"),  # floats compared exactly
    ]
    ids = {io.release_id(d) for d in variants} | {io.release_id(base)}
    assert len(ids) == len(variants) + 1
    keys = {io.release_key(KEY, r) for r in ids}
    assert len(keys) == len(ids)
    with pytest.raises(ValueError, match="release id"):
        io.release_key(KEY, "abc")
    with pytest.raises(ValueError, match="NaN"):
        io.release_id({"epsilon": float("nan")})


# -- privatize: a rerun at another epsilon is refused -----------------------------------------------------
@pytest.mark.parametrize("kind", ["numpy", "pandas", "pyarrow"])
def test_privatize_rerun_at_another_epsilon_is_refused(kind):
    x = _data(1000)
    data = {"numpy": x, "pandas": pd.DataFrame({"x": x}), "pyarrow": pa.table({"x": x})}[kind]
    cols = None if kind == "numpy" else ["x"]
    first = dp.privatize(data, _mech(1.0), key=KEY, columns=cols)
    again = dp.privatize(data, _mech(1.0), key=KEY, columns=cols)  # an exact repeat: the same output
    if kind == "numpy":
        np.testing.assert_array_equal(first, again)
    for other in (_mech(2.0), _mech(0.5), io.mechanism("gaussian", epsilon=1.0, delta=1e-6, sensitivity="bounds",
                                                           bounds=BOUNDS)):
        with pytest.raises(io.KeyReuseError, match="another release.*new key.*Session"):
            dp.privatize(data, other, key=KEY, columns=cols)
    with pytest.raises(io.KeyReuseError, match="other values"):  # the same release on other data
        dp.privatize(data[::-1] if kind != "pyarrow" else data.take(np.arange(999, -1, -1)), _mech(1.0), key=KEY,
                     columns=cols)


def _attack(out1: np.ndarray, out2: np.ndarray, truth: np.ndarray) -> float:
    """The mean absolute error of the linear recovery 2 out2 - out1 (epsilons 1 and 2)."""
    return float(np.mean(np.abs(2 * out2 - out1 - truth)))


def test_independent_noise_defeats_the_linear_recovery_even_without_the_ledger():
    """Bypassing the record (the engines' internal marker, a check only), the two releases' noise is still
    independent."""
    x = _data()
    o1 = dp.privatize(x, _mech(1.0), key=KEY, ledger=UNRECORDED)
    o2 = dp.privatize(x, _mech(2.0), key=KEY, ledger=UNRECORDED)
    n1, n2 = o1 - x, o2 - x
    r = stats.pearsonr(n1, n2)
    assert r.pvalue > ALPHA
    # The combination 2 o2 - o1 - x = 2 N2 - N1 with independent N1, N2: the law of fresh independent draws.
    f1 = dp.privatize(x, _mech(1.0), key=io.generate_key()) - x
    f2 = dp.privatize(x, _mech(2.0), key=io.generate_key()) - x
    assert stats.ks_2samp(2 * n2 - n1, 2 * f2 - f1).pvalue > ALPHA
    assert _attack(o1, o2, x) > 200  # noise of 2 N2 - N1 has mean |.| about 400, not the 0.0024 of shared noise


# -- sessions -------------------------------------------------------------------------------------------------
def test_a_session_charges_each_release_and_refuses_past_its_budget():
    x = _data(2000)
    s = dp.Session(dp.PureDP(3.0), key=KEY)
    o1 = s.privatize(pd.DataFrame({"x": x}), _mech(1.0), columns="x")
    assert s.spent() == dp.PureDP(1.0)
    again = s.privatize(pd.DataFrame({"x": x}), _mech(1.0), columns="x")  # identical: free, identical output
    pd.testing.assert_frame_equal(o1, again)
    assert s.spent() == dp.PureDP(1.0)
    assert again.attrs["pydp_core.release"]["session"]["spent"] == "PureDP(epsilon=1.0)"
    o2 = s.privatize(pd.DataFrame({"x": x}), _mech(2.0), columns="x")
    assert s.spent() == dp.PureDP(3.0)
    assert stats.pearsonr(o1["x"] - x, o2["x"] - x).pvalue > ALPHA
    with pytest.raises(dp.BudgetExceededError):
        s.privatize(x, _mech(0.1))
    with pytest.raises(dp.BudgetExceededError):
        s.aggregate(pd.DataFrame({"pid": [1, 2], "g": [0, 1]}), privacy_unit="pid", by="g",
                    aggregations={"pid": ["count"]}, bounds=None, max_partitions=1, max_contributions=1,
                    epsilon=0.5, public_partitions=[0, 1])
    assert s.spent() == dp.PureDP(3.0)
    # The key belongs to the session: a release outside it is refused, and so is a second session on it.
    with pytest.raises(io.KeyReuseError, match="another release"):
        dp.privatize(x, _mech(0.1), key=KEY)
    with pytest.raises(io.KeyReuseError, match="another session"):
        dp.Session(dp.PureDP(1.0), key=KEY).privatize(x, _mech(0.1))
    with pytest.raises(TypeError, match="supplies key"):
        s.privatize(x, _mech(1.0), key=KEY)


def test_session_releases_at_two_epsilons_combine_to_the_composed_law_only():
    """The headline: two accepted outputs under one key (one session) give nothing beyond their composition."""
    x = np.clip(_data(), *BOUNDS)
    s = dp.Session(dp.PureDP(3.0), key=KEY)
    o1, o2 = s.privatize(x, _mech(1.0)), s.privatize(x, _mech(2.0))
    f1 = dp.privatize(x, _mech(1.0), key=io.generate_key()) - x
    f2 = dp.privatize(x, _mech(2.0), key=io.generate_key()) - x
    assert stats.ks_2samp(2 * (o2 - x) - (o1 - x), 2 * f2 - f1).pvalue > ALPHA
    assert _attack(o1, o2, x) > 200


def test_session_aggregate_two_epsilons_independent_and_charged():
    rng = np.random.default_rng(3)
    g = rng.integers(0, 400, 40_000)
    df = pd.DataFrame({"pid": np.arange(g.size), "g": g})  # one row per person: nothing is bounded away
    truth = np.bincount(g, minlength=400)
    args = dict(privacy_unit="pid", by="g", aggregations={"pid": ["count"]}, bounds=None, max_partitions=1,
                max_contributions=1, public_partitions=list(range(400)), confidence=None)
    s = dp.Session(dp.PureDP(3.0), key=KEY)
    e1, e2 = s.aggregate(df, epsilon=1.0, **args), s.aggregate(df, epsilon=2.0, **args)
    assert s.spent() == dp.PureDP(3.0)
    assert e1.attrs["pydp_core.aggregation"]["session"]["spent"] == "PureDP(epsilon=1.0)"
    n1, n2 = e1.iloc[:, 1].to_numpy(float) - truth, e2.iloc[:, 1].to_numpy(float) - truth
    assert stats.pearsonr(n1, n2).pvalue > ALPHA
    assert np.mean(np.abs(2 * n2 - n1)) > 0.5  # with shared noise, 2 e2 - e1 was the exact count


def _codes(n: int = 30_000, values: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    code = np.random.default_rng(11).integers(0, values, n)
    return pd.DataFrame({"pid": np.arange(n), "code": code}), np.bincount(code, minlength=values)


def test_session_top_k_charges_refuses_past_the_limit_and_repeats_free():
    df, _ = _codes(2000, 20)
    args = dict(column="code", k=3, privacy_unit="pid", max_partitions=1, candidates=list(range(20)))
    key = io.generate_key()
    s = dp.Session(dp.PureDP(3.0), key=key)
    first = s.top_k(df, epsilon=1.0, **args)
    assert s.spent() == dp.PureDP(1.0)
    assert first.attrs["pydp_core.aggregation"]["session"]["spent"] == "PureDP(epsilon=1.0)"
    assert first.attrs["pydp_core.aggregation"]["mechanism"] == "pydp_core.top_k"
    again = s.top_k(df.iloc[::-1], epsilon=1.0, **args)  # an exact repeat (row order is not data): free
    pd.testing.assert_frame_equal(first, again)
    assert s.spent() == dp.PureDP(1.0)
    with pytest.raises(dp.BudgetExceededError):  # past the limit: refused, nothing charged
        s.top_k(df, epsilon=2.5, **args)
    assert s.spent() == dp.PureDP(1.0)
    s.top_k(df, epsilon=2.0, **args)
    assert s.spent() == dp.PureDP(3.0)
    with pytest.raises(TypeError, match="supplies key"):
        s.top_k(df, epsilon=0.1, key=io.generate_key(), **args)
    with pytest.raises(TypeError, match="supplies ledger"):
        s.top_k(df, epsilon=0.1, ledger=None, **args)
    # The key is the session's: a top_k outside it is refused.
    with pytest.raises(io.KeyReuseError, match="another release"):
        dp.top_k(df, epsilon=1.0, key=key, **args)


def test_session_top_k_releases_have_independent_noise():
    """Two top_k releases under the session key (other epsilons) draw independent noise: their noisy counts
    are uncorrelated, and a linear combination gives back no exact count."""
    df, truth = _codes()
    args = dict(column="code", k=truth.size, privacy_unit="pid", max_partitions=1, candidates=list(range(truth.size)),
                release_values=True)
    s = dp.Session(dp.PureDP(3.0), key=io.generate_key())
    o1, o2 = s.top_k(df, epsilon=1.0, **args), s.top_k(df, epsilon=2.0, **args)
    assert s.spent() == dp.PureDP(3.0)
    n1 = o1.set_index("code")["count"].sort_index().to_numpy(float) - truth
    n2 = o2.set_index("code")["count"].sort_index().to_numpy(float) - truth
    assert stats.pearsonr(n1, n2).pvalue > ALPHA
    assert np.mean(np.abs(2 * n2 - n1)) > 0.5
    with pytest.raises(dp.BudgetExceededError):  # and a third, other k, does not fit
        s.top_k(df, epsilon=0.5, **dict(args, k=5))


def test_aggregate_rerun_at_another_epsilon_is_refused():
    df = pd.DataFrame({"pid": [1, 2, 3, 4], "g": [0, 0, 1, 1], "x": [1.0, 2.0, 3.0, 4.0]})
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds={"x": (0, 5)}, max_partitions=1,
                max_contributions=1, public_partitions=[0, 1], key=KEY)
    first = dp.aggregate(df, epsilon=1.0, **args)
    pd.testing.assert_frame_equal(first, dp.aggregate(df.iloc[::-1], epsilon=1.0, **args))  # repeat
    with pytest.raises(io.KeyReuseError, match="another release"):
        dp.aggregate(df, epsilon=2.0, **args)
    with pytest.raises(io.KeyReuseError, match="other data"):
        dp.aggregate(df.assign(x=[1.0, 2.0, 3.0, 5.0]), epsilon=1.0, **args)
    with pytest.raises(io.KeyReuseError, match="another release"):  # a key used by aggregate cannot privatize
        dp.privatize(df["x"].to_numpy(), dp.LaplaceMechanism(epsilon=1.0), key=KEY, bounds=(0, 1))


# -- the command line -------------------------------------------------------------------------------------
def _files(tmp_path):
    x = _data(3000)
    src = tmp_path / "data.parquet"
    rng = np.random.default_rng(5)
    pq.write_table(pa.table({"spend": x, "minutes": x / 5, "user": rng.integers(0, 800, x.size),
                             "city": rng.integers(0, 20, x.size)}), src)
    key = tmp_path / "release.key"
    assert main(["keygen", str(key)]) == 0
    return src, key


PRIV = ["-c", "spend", "-c", "minutes", "-m", "laplace", "--sensitivity", "bounds", "--bounds", "0", "500",
        "--no-progress"]
AGG = ["--privacy-unit", "user", "--group-by", "city", "--count", "--sum", "spend", "--bounds", "spend", "0", "500",
       "--max-partitions", "1", "--max-contributions", "2", "--delta", "1e-7"]


def test_cli_privatize_rerun_at_another_epsilon_is_refused(tmp_path, capsys):
    src, key = _files(tmp_path)
    out1, out2 = tmp_path / "out1.parquet", tmp_path / "out2.parquet"
    assert main(["privatize", str(src), str(out1), *PRIV, "--epsilon", "1", "-k", str(key)]) == 0
    capsys.readouterr()
    assert main(["privatize", str(src), str(out2), *PRIV, "--epsilon", "2", "-k", str(key)]) == 1
    err = capsys.readouterr().err
    assert "another release" in err and "new key" in err and not out2.exists()
    # the identical rerun is accepted and gives the identical file content
    assert main(["privatize", str(src), str(out2), *PRIV, "--epsilon", "1", "-k", str(key)]) == 0
    assert pq.read_table(out1).equals(pq.read_table(out2))


def test_cli_aggregate_keeps_a_ledger_and_refuses_a_rerun(tmp_path, capsys):
    src, key = _files(tmp_path)
    e1, e2 = tmp_path / "e1.parquet", tmp_path / "e2.parquet"
    assert main(["aggregate", str(src), str(e1), *AGG, "--epsilon", "1", "-k", str(key)]) == 0
    assert os.path.exists(str(key) + ".ledger")
    capsys.readouterr()
    assert main(["aggregate", str(src), str(e2), *AGG, "--epsilon", "2", "-k", str(key)]) == 1
    assert "another release" in capsys.readouterr().err and not e2.exists()
    assert main(["aggregate", str(src), str(e2), *AGG, "--epsilon", "1", "-k", str(key)]) == 0  # identical rerun
    assert pq.read_table(e1).equals(pq.read_table(e2))


def test_cli_session_shares_one_budget_between_commands(tmp_path, capsys):
    src, key = _files(tmp_path)
    sess = tmp_path / "budget.session"
    assert main(["session", "create", str(sess), "-k", str(key), "--epsilon", "4", "--delta", "1e-6"]) == 0
    assert main(["session", "create", str(sess), "-k", str(key), "--epsilon", "9"]) == 1  # never replaced
    assert main(["aggregate", str(src), str(tmp_path / "a1.parquet"), *AGG, "--epsilon", "1", "-k", str(key),
                 "--session", str(sess)]) == 0
    assert main(["aggregate", str(src), str(tmp_path / "a2.parquet"), *AGG, "--epsilon", "2", "-k", str(key),
                 "--session", str(sess)]) == 0
    capsys.readouterr()
    assert main(["privatize", str(src), str(tmp_path / "p.parquet"), *PRIV, "--epsilon", "2", "-k", str(key),
                 "--session", str(sess)]) == 1
    assert "spend refused" in capsys.readouterr().err and not (tmp_path / "p.parquet").exists()
    assert main(["privatize", str(src), str(tmp_path / "p.parquet"), *PRIV, "--epsilon", "0.5", "-k", str(key),
                 "--session", str(sess)]) == 0
    capsys.readouterr()
    assert main(["session", "show", str(sess), "-k", str(key)]) == 0
    shown = capsys.readouterr().out
    assert "spent ApproxDP(epsilon=3.49999" in shown  # 1 + 2 + 0.5, composed by the tightest route
    meta = pq.read_table(tmp_path / "a2.parquet").schema.metadata
    assert json.loads(meta[b"pydp_core.aggregation"])["session"]["id"]
    # outside the session, the key is refused
    assert main(["privatize", str(src), str(tmp_path / "q.parquet"), *PRIV, "--epsilon", "0.1", "-k", str(key)]) == 1


def test_cli_top_k_through_a_session(tmp_path, capsys):
    src, key = _files(tmp_path)
    sess = tmp_path / "budget.session"
    assert main(["session", "create", str(sess), "-k", str(key), "--epsilon", "2"]) == 0
    top = ["--privacy-unit", "user", "--top-k", "city", "3", "--max-partitions", "1", "--no-progress", "-k", str(key),
           "--session", str(sess), "--public-partitions"]
    cand = tmp_path / "cities.csv"
    cand.write_text("city\n" + "\n".join(str(c) for c in range(20)) + "\n")
    assert main(["aggregate", str(src), str(tmp_path / "t1.parquet"), *top, str(cand), "--epsilon", "1.5"]) == 0
    assert main(["aggregate", str(src), str(tmp_path / "t2.parquet"), *top, str(cand), "--epsilon", "1.5"]) == 0
    assert pq.read_table(tmp_path / "t1.parquet").equals(pq.read_table(tmp_path / "t2.parquet"))  # a free repeat
    capsys.readouterr()
    assert main(["aggregate", str(src), str(tmp_path / "t3.parquet"), *top, str(cand), "--epsilon", "1"]) == 1
    assert "spend refused" in capsys.readouterr().err and not (tmp_path / "t3.parquet").exists()
    meta = pq.read_table(tmp_path / "t1.parquet").schema.metadata
    assert json.loads(meta[b"pydp_core.aggregation"])["session"]["id"]


# -- the records under crashes and concurrency ----------------------------------------------------------------
def test_a_torn_last_ledger_line_is_discarded_and_an_edited_one_refused(tmp_path):
    path = tmp_path / "k.ledger"
    led = io.KeyLedger(KEY, path)
    led.claim("x", 0, 2, "a", release="a" * 64)
    led.claim("x", 2, 4, "b", release="a" * 64)
    whole = path.read_bytes()
    path.write_bytes(whole[:-20])  # a write cut short: no newline at the end
    with pytest.warns(RuntimeWarning, match="incomplete line"):
        again = io.KeyLedger(KEY, path)
    assert [p.stop for p in again.pieces] == [2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        again.claim("x", 2, 4, "b", release="a" * 64)  # cuts the torn tail off, then appends
    assert [p.stop for p in io.KeyLedger(KEY, path).pieces] == [2, 4]
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(lines[0].replace(b'"stop": 2', b'"stop": 3') + b"\n" + b"\n".join(lines[1:]))
    with pytest.raises(io.KeyReuseError, match="fails its authentication at line 1"):
        io.KeyLedger(KEY, path)


_SPENDER = """
import sys
import pydp_core as dp
acc = dp.Accountant(dp.PureDP(1.0), journal=sys.argv[1], journal_key=bytes(range(32)))
ok = 0
for _ in range(6):
    try:
        acc.spend_laplace(scale=10.0)
        ok += 1
    except dp.BudgetExceededError:
        pass
print(ok)
"""


def test_concurrent_spenders_on_one_journal_never_overspend(tmp_path):
    """Three processes spend 0.1 six times each against PureDP(1.0) on one journal: exactly ten fit."""
    path = str(tmp_path / "budget.journal")
    dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=KEY)
    env = subprocess_env()
    procs = [subprocess.Popen([sys.executable, "-c", _SPENDER, path], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    accepted = sum(int(p.communicate(timeout=300)[0]) for p in procs)
    assert accepted == 10
    reopened = dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=KEY)
    assert len(reopened) == 10 and reopened.total().epsilon <= 1.0 + 1e-12


def test_cli_privatize_per_person_refuses_persons_over_the_limit(tmp_path, capsys):
    src, key = _files(tmp_path)
    out = tmp_path / "o.parquet"
    users = pq.read_table(src).column("user").to_numpy()
    most = int(np.bincount(users).max())
    assert main(["privatize", str(src), str(out), *PRIV, "--epsilon", "1", "--privacy-unit", "user"]) == 1
    assert "hold more than --max-contributions 1" in capsys.readouterr().err and not out.exists()
    assert main(["privatize", str(src), str(out), *PRIV, "--epsilon", "1", "--privacy-unit", "user",
                 "--max-contributions", str(most)]) == 0
    assert f"per person ({most} row(s) at most)" in capsys.readouterr().err
    report = json.loads(pq.read_table(out).schema.metadata[b"pydp_core.release"])
    assert report["budget_per_unit"]["epsilon"] >= most * 1.0 and report["max_contributions"] == most
