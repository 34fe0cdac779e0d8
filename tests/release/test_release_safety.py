"""Release safety: misuse that would silently weaken privacy fails loudly.

Keys are bound to one release (the ledger), sensitivities are checked against bounds, seeded generators
are refused in releases, the accountant is charged before noise and journals durably, and the silent
opt-outs warn. Each case shows the refusal or warning and the correct path still working.
"""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats
from support.stats import ALPHA  # noqa: E402

import pydp_core as dp
from pydp_core import io, release
from pydp_core.accounting import JournalError
from pydp_core.cli import main as cli
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED


def _fresh_key():
    return io.generate_key()


# -- 1. keys ------------------------------------------------------------------------------------------------
MECH = io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 100))


def test_two_releases_under_one_key_with_one_changed_row_are_refused():
    key = _fresh_key()
    x = np.linspace(0, 100, 5000)
    dp.privatize(x, MECH, key=key)
    y = x.copy()
    y[17] += 37.0
    with pytest.raises(io.KeyReuseError, match="other values"):
        dp.privatize(y, MECH, key=key)


def test_two_pieces_both_at_offset_zero_are_refused():
    key = _fresh_key()
    x = np.linspace(0, 100, 10000)
    dp.privatize(x[:5000], MECH, key=key)
    with pytest.raises(io.KeyReuseError, match="first unused row is 5000"):
        dp.privatize(x[5000:], MECH, key=key)


def test_pieces_with_offsets_are_accepted_and_equal_the_whole():
    key = _fresh_key()
    x = np.linspace(0, 100, 10000)
    pieces = np.concatenate(
        [dp.privatize(x[:3000], MECH, key=key), dp.privatize(x[3000:], MECH, key=key, offset=3000)]
    )
    whole = dp.privatize(x, MECH, key=key, ledger=UNRECORDED)  # a check only: no record
    assert np.array_equal(pieces, whole)


def test_an_exact_rerun_is_accepted_and_identical():
    key = _fresh_key()
    df = pd.DataFrame({"income": np.linspace(0, 100, 1000), "id": np.arange(1000)})
    a = dp.privatize(df, MECH, key=key, columns="income")
    b = dp.privatize(df, MECH, key=key, columns="income")
    assert a.equals(b)


def test_a_file_ledger_survives_the_process_and_refuses_changed_data(tmp_path):
    key = _fresh_key()
    led = tmp_path / "k.ledger"
    x = np.linspace(0, 100, 100)
    dp.privatize(x, MECH, key=key, ledger=led)
    fresh = io.KeyLedger(key, led)  # as a new process would read it
    assert len(fresh.pieces) == 1
    with pytest.raises(io.KeyReuseError):
        dp.privatize(x + 1, MECH, key=key, ledger=io.KeyLedger(key, led))


def test_two_writers_of_one_ledger_file_see_each_other(tmp_path):
    """Two processes (two KeyLedger objects) appending to one ledger file keep one valid chain."""
    key, path = _fresh_key(), tmp_path / "k.ledger"
    a, b = io.KeyLedger(key, path), io.KeyLedger(key, path)
    assert a.claim("x", 0, 10, "d1") == "first"
    with pytest.raises(io.KeyReuseError):
        b.claim("x", 5, 15, "d2")  # b re-reads the file and sees a's piece
    assert b.claim("x", 10, 20, "d2") == "next"
    assert a.claim("x", 20, 30, "d3") == "next"
    assert [p.start for p in io.KeyLedger(key, path).pieces] == [0, 10, 20]


def test_row_id_pieces_disjoint_ranges_accepted_overlapping_other_content_refused():
    key = _fresh_key()
    ids = np.arange(100, 200)
    df = pd.DataFrame({"v": np.linspace(0, 100, 100), "id": ids})
    a = dp.privatize(df, MECH, key=key, columns="v", index="id")
    # the same rows in another order: the same piece, the same noise per row
    shuffled = df.iloc[::-1].reset_index(drop=True)
    b = dp.privatize(shuffled, MECH, key=key, columns="v", index="id")
    assert np.array_equal(a["v"].to_numpy(), b["v"].to_numpy()[::-1])
    # a disjoint id range: the next piece
    dp.privatize(df.assign(id=ids + 100), MECH, key=key, columns="v", index="id")
    # an overlapping id range with other content
    with pytest.raises(io.KeyReuseError):
        dp.privatize(df.assign(id=ids + 50), MECH, key=key, columns="v", index="id")


def test_tampered_ledger_is_refused(tmp_path):
    key = _fresh_key()
    led = tmp_path / "k.ledger"
    dp.privatize(np.linspace(0, 100, 10), MECH, key=key, ledger=led)
    dp.privatize(np.linspace(0, 100, 10), MECH, key=key, ledger=led, offset=10)
    lines = led.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["piece"]["stop"] = 5
    led.write_text(json.dumps(doc, sort_keys=True) + "\n" + lines[1] + "\n")
    with pytest.raises(io.KeyReuseError, match="authentication"):
        io.KeyLedger(key, led)
    led.write_text(lines[1] + "\n" + lines[0] + "\n")  # reordered
    with pytest.raises(io.KeyReuseError, match="authentication"):
        io.KeyLedger(key, led)
    led.write_text("\n".join(lines) + "\n")
    with pytest.raises(io.KeyReuseError, match="authentication"):
        io.KeyLedger(_fresh_key(), led)  # another key
    assert len(io.KeyLedger(key, led).pieces) == 2


def _parquet(path, values):
    pq.write_table(pa.table({"x": pa.array(values, type=pa.float64())}), path)


def test_cli_rerun_on_changed_data_exits_1_with_a_clear_message(tmp_path, capsys):
    keyf = str(tmp_path / "release.key")
    assert cli(["keygen", keyf]) == 0
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    _parquet(a, np.linspace(0, 100, 50))
    y = np.linspace(0, 100, 50)
    y[3] = 40.0
    _parquet(b, y)
    args = ["-c", "x", "-m", "laplace", "--epsilon", "1", "--sensitivity", "bounds", "--bounds", "0", "100",
            "-k", keyf, "-q"]
    assert cli(["privatize", str(a), str(tmp_path / "o1.parquet"), *args]) == 0
    assert cli(["privatize", str(a), str(tmp_path / "o2.parquet"), *args]) == 0  # an exact rerun
    assert pq.read_table(tmp_path / "o1.parquet").equals(pq.read_table(tmp_path / "o2.parquet"))
    capsys.readouterr()
    assert cli(["privatize", str(b), str(tmp_path / "o3.parquet"), *args]) == 1
    err = capsys.readouterr().err
    assert "released under this key with other values" in err and "new key" in err
    assert not (tmp_path / "o3.parquet").exists()
    assert os.path.exists(keyf + ".ledger")
    # a tampered ledger stops the CLI as well
    with open(keyf + ".ledger", "a") as fh:
        fh.write('{"mac": "00", "piece": {}}\n')
    assert cli(["privatize", str(a), str(tmp_path / "o4.parquet"), *args]) == 1
    assert "authentication" in capsys.readouterr().err


def test_attacker_with_two_releases_learns_nothing_beyond_the_guarantee():
    """Same key: the second release is refused. Fresh keys: the difference of the outputs is the
    difference of two independent calibrated noises, not the data change (KS test at alpha 1e-6)."""
    n, change = 20000, 37.0
    mech = io.mechanism("gaussian", epsilon=1.0, delta=1e-6, sensitivity="bounds", bounds=(0, 100))
    x = np.full(n, 50.0)
    y = x.copy()
    y[0] += change
    key = _fresh_key()
    out1 = dp.privatize(x, mech, key=key)
    with pytest.raises(io.KeyReuseError):
        dp.privatize(y, mech, key=key)
    out2 = dp.privatize(y, mech, key=_fresh_key())
    d = out2 - out1
    assert d[0] != change
    sigma = release.calibrate_gaussian_release(epsilon=1.0, delta=1e-6, sensitivity=100.0).scale
    residual = d - (y - x)
    assert stats.kstest(residual, stats.norm(scale=np.sqrt(2.0) * sigma).cdf).pvalue > ALPHA


def test_dask_records_the_release_once_and_refuses_a_second_unless_resumed():
    da = pytest.importorskip("dask.array")
    key = _fresh_key()
    x = da.from_array(np.linspace(0, 100, 64), chunks=16)
    a = dp.dask.privatize(x, MECH, key=key, block_rows=16).compute()
    with pytest.raises(io.KeyReuseError, match="resume=True"):
        dp.dask.privatize(x + 1, MECH, key=key, block_rows=16)
    b = dp.dask.privatize(x, MECH, key=key, block_rows=16, resume=True).compute()
    assert np.array_equal(a, b)
    acc = dp.Accountant(dp.PureDP(1.5))
    dp.dask.privatize(x, MECH, key=_fresh_key(), block_rows=16, accountant=acc)  # charged at the driver
    assert acc.total().epsilon == pytest.approx(1.0)
    with pytest.raises(dp.BudgetExceededError):
        dp.dask.privatize(x, MECH, key=_fresh_key(), block_rows=16, accountant=acc)


# -- 2. bounds ----------------------------------------------------------------------------------------------
def test_sensitivity_below_the_bounds_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"sensitivity 1.0 is below upper - lower = 100.0"):
        dp.privatize(np.zeros(3), dp.LaplaceMechanism(epsilon=1.0), bounds=(0, 100))
    with pytest.raises(ValueError, match=r"sensitivity 1.0 is below upper - lower = 100.0"):
        io.mechanism("laplace", epsilon=1.0, sensitivity=1.0, bounds=(0, 100))
    out = dp.privatize(np.zeros(3), dp.LaplaceMechanism(epsilon=1.0, sensitivity=100.0), bounds=(0, 100))
    assert out.shape == (3,)


@pytest.mark.parametrize("bounds, exc", [((100, 0), ValueError), ((0, float("nan")), ValueError),
                                         ((0, float("inf")), ValueError), (("0", "100"), TypeError),
                                         ("ab", TypeError), ((1, 1), ValueError)])
def test_mechanism_with_numeric_sensitivity_validates_bounds(bounds, exc):
    with pytest.raises(exc, match="bounds"):
        io.mechanism("laplace", epsilon=1.0, sensitivity=1000.0, bounds=bounds)


def test_mechanism_tied_to_bounds_refuses_other_bounds_and_clamps_without():
    mech = io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 100))
    with pytest.raises(ValueError, match=r"made for bounds \(0.0, 100.0\)"):
        dp.privatize(np.zeros(3), mech, bounds=(0, 1000))
    out = dp.privatize(np.array([1e6]), mech)  # clamped to the mechanism's bounds
    assert out[0] < 100 + 100 * 30  # P(|Laplace(100)| > 3000) = e^-30


def test_release_without_bounds_needs_the_declaration_and_records_it(tmp_path):
    mech = dp.LaplaceMechanism(epsilon=1.0)
    with pytest.raises(ValueError, match="sensitivity_holds=True"):
        dp.privatize(np.zeros(3), mech)
    df = pd.DataFrame({"count": [3.0, 5.0]})
    out = dp.privatize(df, mech, columns="count", sensitivity_holds=True)
    assert out.attrs["pydp_core.release"]["sensitivity_holds"] is True
    tab = dp.privatize(pa.table({"count": [3.0, 5.0]}), mech, columns="count", sensitivity_holds=True)
    assert json.loads(tab.schema.metadata[b"pydp_core.release"])["sensitivity_holds"] is True
    src = tmp_path / "in.parquet"
    _parquet(src, [3.0, 5.0])
    with pytest.raises(ValueError, match="no bounds"):
        io.privatize_file(src, tmp_path / "o.parquet", mech, columns="x")
    io.privatize_file(src, tmp_path / "o.parquet", mech, columns="x", sensitivity_holds=True)
    meta = json.loads(pq.read_schema(tmp_path / "o.parquet").metadata[b"pydp_core.release"])
    assert meta["sensitivity_holds"] is True and meta["columns"]["x"]["bounds"] is None
    io.privatize_file(src, tmp_path / "o.csv", mech, columns="x", sensitivity_holds=True)
    assert json.loads((tmp_path / "o.csv.release.json").read_text())["sensitivity_holds"] is True


def test_cli_bounds_rules(tmp_path, capsys):
    src = tmp_path / "in.parquet"
    _parquet(src, [1.0, 2.0])
    base = ["privatize", str(src), "-c", "x", "-m", "laplace", "--epsilon", "1", "-q"]
    assert cli([*base, str(tmp_path / "a.parquet"), "--sensitivity", "1", "--bounds", "0", "100"]) == 1
    assert "below upper - lower" in capsys.readouterr().err
    assert cli([*base, str(tmp_path / "b.parquet"), "--sensitivity", "1"]) == 1
    assert "no bounds" in capsys.readouterr().err
    assert cli([*base, str(tmp_path / "c.parquet"), "--sensitivity", "1", "--sensitivity-holds"]) == 0
    meta = json.loads(pq.read_schema(tmp_path / "c.parquet").metadata[b"pydp_core.release"])
    assert meta["sensitivity_holds"] is True


# -- 3. seeds -----------------------------------------------------------------------------------------------
SEEDED = [lambda: dp.Random(42), lambda: np.random.default_rng(0)]


@pytest.mark.parametrize("make", SEEDED, ids=["Random(42)", "numpy"])
def test_releases_refuse_seeded_generators_unless_simulation(make):
    mech = dp.GaussianMechanism(epsilon=1.0, delta=1e-6)
    calls = [
        lambda **k: mech.privatize(np.zeros(3), **k),
        lambda **k: dp.release_gaussian(np.zeros(3), epsilon=1.0, delta=1e-6, **k),
        lambda **k: dp.release_laplace(1.0, epsilon=1.0, **k),
        lambda **k: release.calibrate_laplace_release(epsilon=1.0).release(np.zeros(2), **k),
        lambda **k: dp.privatize(np.zeros(3), mech, sensitivity_holds=True, **k),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="simulation=True"):
            call(rng=make())
        call(rng=make(), simulation=True)
        call(rng=dp.Random())  # a secure generator is fine


def test_simulations_are_labelled():
    out = dp.privatize(pd.Series([1.0, 2.0], name="s"), dp.LaplaceMechanism(epsilon=1.0), rng=dp.Random(1),
                       simulation=True, sensitivity_holds=True)
    assert out.attrs["pydp_core.release"]["simulation"] is True


def test_cli_simulate_is_labelled(tmp_path, capsys):
    src = tmp_path / "in.parquet"
    _parquet(src, [1.0, 2.0])
    assert cli(["privatize", str(src), str(tmp_path / "o.parquet"), "-c", "x", "-m", "laplace", "--epsilon", "1",
                "--sensitivity", "bounds", "--bounds", "0", "10", "--simulate"]) == 0
    assert "SIMULATION" in capsys.readouterr().err
    meta = json.loads(pq.read_schema(tmp_path / "o.parquet").metadata[b"pydp_core.release"])
    assert meta["simulation"] is True and meta["release"] is False


# -- 4. accountant ------------------------------------------------------------------------------------------
def test_mechanisms_charge_the_accountant_before_noise():
    acc = dp.Accountant(dp.PureDP(5.0))
    mech = dp.LaplaceMechanism(epsilon=1.0)
    for _ in range(5):
        mech.privatize(1.0, accountant=acc)
    assert acc.total().epsilon == pytest.approx(5.0)
    with pytest.raises(dp.BudgetExceededError):
        mech.privatize(1.0, accountant=acc)
    assert acc.total().epsilon == pytest.approx(5.0)
    g = dp.Accountant(dp.ApproxDP(1.0, 1e-5))
    dp.GaussianMechanism(epsilon=0.5, delta=1e-6).privatize(np.zeros(4), accountant=g)
    assert g.total().epsilon == pytest.approx(0.5)


def test_front_end_charges_once_per_column_and_release():
    acc = dp.Accountant(dp.PureDP(2.5))
    key = _fresh_key()
    df = pd.DataFrame({"a": np.linspace(0, 100, 10), "b": np.linspace(0, 100, 10)})
    dp.privatize(df.iloc[:5], MECH, key=key, columns=["a", "b"], accountant=acc)
    dp.privatize(df.iloc[5:], MECH, key=key, columns=["a", "b"], accountant=acc, offset=5)  # same release
    dp.privatize(df.iloc[:5], MECH, key=key, columns=["a", "b"], accountant=acc)  # exact repeat
    assert acc.total().epsilon == pytest.approx(2.0)
    with pytest.raises(dp.BudgetExceededError):
        dp.privatize(df, MECH, key=_fresh_key(), columns=["a"], accountant=acc)
    assert acc.total().epsilon == pytest.approx(2.0)


def test_accountant_needs_a_mechanism_that_can_charge():
    class Custom:
        sensitivity = 100.0

        def privatize(self, values, rng=None):
            return values

    with pytest.raises(TypeError, match="charge"):
        dp.privatize(np.zeros(3), Custom(), bounds=(0, 100), accountant=dp.Accountant(dp.PureDP(1.0)))


def test_journal_is_durable_replayed_and_tamper_evident(tmp_path):
    path, key = tmp_path / "budget.journal", _fresh_key()
    acc = dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=key)
    acc.spend_laplace(scale=2.0)
    acc.spend_laplace(scale=4.0)
    # the process "dies" here: no save(); a new process reopens the journal
    again = dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=key)
    assert again.total().epsilon == pytest.approx(0.75)
    with pytest.raises(dp.BudgetExceededError):
        again.spend_laplace(scale=1.0)
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    with pytest.raises(JournalError, match="another limit"):
        dp.Accountant(dp.PureDP(2.0), journal=path, journal_key=key)
    edited = json.loads(lines[0])
    edited["entry"]["limit"]["fields"]["epsilon"] = 10.0
    path.write_text("\n".join([json.dumps(edited), *lines[1:]]) + "\n")
    with pytest.raises(JournalError, match="authentication"):
        dp.Accountant(dp.PureDP(10.0), journal=path, journal_key=key)
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")  # a spend deleted
    with pytest.raises(JournalError, match="authentication"):
        dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=key)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError, match="authentication"):
        dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=_fresh_key())
    with pytest.raises(TypeError, match="journal_key"):
        dp.Accountant(dp.PureDP(1.0), journal=path)


def test_mechanism_spend_goes_to_the_journal(tmp_path):
    path, key = tmp_path / "j", _fresh_key()
    acc = dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=key)
    dp.LaplaceMechanism(epsilon=0.25).privatize(3.0, accountant=acc)
    assert dp.Accountant(dp.PureDP(1.0), journal=path, journal_key=key).total().epsilon == pytest.approx(0.25)


def test_save_leaves_no_temporary_file(tmp_path):
    acc = dp.Accountant(dp.PureDP(1.0))
    acc.spend_laplace(scale=2.0)
    acc.save(tmp_path / "a.json")
    assert os.listdir(tmp_path) == ["a.json"]
    assert dp.Accountant.load(tmp_path / "a.json").total() == acc.total()


# -- 5. warnings --------------------------------------------------------------------------------------------
def test_floating_point_noise_in_a_keyed_release_warns():
    with pytest.warns(dp.PrivacyWarning, match="floating-point"):
        dp.privatize(np.zeros(3), MECH, key=_fresh_key(), release=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp.privatize(np.zeros(3), MECH, key=_fresh_key(), release=False, simulation=True)


def test_large_delta_warns_unless_confirmed_and_delta_from_one_half_is_refused():
    with pytest.warns(dp.PrivacyWarning, match="confirm_delta"):
        dp.GaussianMechanism(epsilon=1.0, delta=1e-2)
    with pytest.warns(dp.PrivacyWarning, match="confirm_delta"):
        dp.release_gaussian(1.0, epsilon=1.0, delta=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp.GaussianMechanism(epsilon=1.0, delta=1e-2, confirm_delta=True)
        dp.GaussianMechanism(epsilon=1.0, delta=1e-3)
    for delta in (0.5, 1 - 2**-53):
        with pytest.raises(ValueError, match="delta must be < 1/2"):
            dp.GaussianMechanism(epsilon=1.0, delta=delta, confirm_delta=True)


def test_rows_of_one_person_beyond_max_contributions_are_refused_and_the_budget_is_per_person():
    """With privacy_unit the guarantee is per person: more rows than max_contributions is an error, and a
    person's rows are max_contributions releases (charged and reported so)."""
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0], "person": ["ann", "bob", "ann"]})
    with pytest.raises(ValueError, match="hold more than max_contributions=1 row"):
        dp.privatize(df, MECH, columns="v", privacy_unit="person", sensitivity_holds=True)
    with pytest.raises(ValueError, match="max_contributions applies with privacy_unit"):
        dp.privatize(df, MECH, columns="v", max_contributions=2, sensitivity_holds=True)
    acc = dp.Accountant(dp.PureDP(10.0))
    out = dp.privatize(df, MECH, columns="v", privacy_unit="person", max_contributions=2, sensitivity_holds=True,
                       accountant=acc)
    per_row = out.attrs["pydp_core.release"]["budget_per_record"]["epsilon"]
    assert out.attrs["pydp_core.release"]["budget_per_unit"]["epsilon"] == 2 * per_row
    assert acc.total() == dp.PureDP(2 * MECH.epsilon)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp.privatize(df.iloc[:2], MECH, columns="v", privacy_unit="person", sensitivity_holds=True)


def test_cli_simulate_under_a_key_warns(tmp_path):
    src, keyf = tmp_path / "in.parquet", str(tmp_path / "k.key")
    _parquet(src, [1.0, 2.0])
    assert cli(["keygen", keyf]) == 0
    with pytest.warns(dp.PrivacyWarning, match="floating-point"):
        code = cli(["privatize", str(src), str(tmp_path / "o.parquet"), "-c", "x", "-m", "laplace", "--epsilon", "1",
                    "--sensitivity", "bounds", "--bounds", "0", "10", "--simulate", "-k", keyf, "-q"])
    assert code == 0
