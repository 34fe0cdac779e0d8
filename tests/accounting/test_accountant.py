"""The budget accountant: totals by the tightest valid route, refusal, persistence, threads."""
import json
import math
import threading

import numpy as np
import pytest

import pydp_core as pc


def test_gaussian_spends_report_exactly():
    acc = pc.Accountant(pc.ApproxDP(5.0, 1e-6))
    acc.spend_gaussian(sigma=4.0, sensitivity=1.0)
    acc.spend_gaussian(sigma=2.0, sensitivity=0.5, count=3)
    mu = math.sqrt(0.25**2 + 3 * 0.25**2)
    assert acc.total(pc.GDP).mu == pytest.approx(mu, rel=1e-15)
    # the ApproxDP total is the exact GDP profile (tightest): no RDP route may beat it
    assert acc.total(pc.ApproxDP, delta=1e-6).epsilon == pc.GDP(mu).to_approx_dp(1e-6).epsilon
    assert acc.total(pc.ZCDP).rho == pytest.approx(mu * mu / 2, rel=1e-14)
    assert acc.total(pc.RDP, alpha=8.0).epsilon == pytest.approx(8.0 * mu * mu / 2, rel=1e-14)
    assert acc.total(pc.RaoDP).theta == pytest.approx(mu, rel=1e-15)
    with pytest.raises(TypeError):
        acc.total(pc.PureDP)  # a Gaussian mechanism is never pure DP
    assert len(acc) == 4


def test_mixed_spends_take_the_best_valid_route():
    acc = pc.Accountant(pc.ApproxDP(10.0, 1e-6))
    acc.spend_laplace(scale=4.0)  # 0.25-DP
    acc.spend_gaussian(sigma=3.0)
    acc.spend(pc.RDP(10.0, 0.2))  # only valid at alpha <= 10
    tot = acc.total(pc.ApproxDP, delta=1e-6)
    # the RDP route at one order: alpha <= 10 only; check against an explicit computation at alpha = 10
    lap_rdp = pc.PureDP(0.25).rdp_epsilon(10.0)
    explicit = pc.RDP(10.0, lap_rdp + 10 / 18 + 0.2).to_approx_dp(1e-6).epsilon
    assert tot.epsilon <= explicit + 1e-12
    # and it is a real composition: more than each part alone
    assert tot.epsilon > pc.GDP(1 / 3).to_approx_dp(1e-6).epsilon
    # (eps, delta) spends: summed with their delta taken out of the total (the basic route), or composed
    # with the Gaussian as privacy-loss distributions (the worst case of (eps, delta)-DP): the smaller wins
    acc2 = pc.Accountant(pc.ApproxDP(10.0, 1e-5))
    acc2.spend(pc.ApproxDP(0.5, 4e-6))
    acc2.spend_gaussian(sigma=2.0)
    t2 = acc2.total()
    basic = 0.5 + pc.GDP(0.5).to_approx_dp(6e-6).epsilon
    pld = pc.PLD.from_approx_dp(epsilon=0.5, delta=4e-6).compose(pc.PLD.from_gdp(0.5)).epsilon(1e-5)
    assert t2.epsilon == min(basic, pld.upper) and pld.upper < basic
    with pytest.raises(TypeError):
        acc2.total(pc.GDP)


def test_refuses_without_recording():
    acc = pc.Accountant(pc.GDP(1.0))
    acc.spend_gaussian(sigma=1.25)  # mu = 0.8
    with pytest.raises(pc.BudgetExceededError):
        acc.spend_gaussian(sigma=1.0)  # would give sqrt(0.64 + 1) > 1
    assert len(acc) == 1
    acc.spend_gaussian(sigma=1 / 0.6)  # sqrt(0.64 + 0.36) = 1: exactly at the limit is allowed
    assert acc.total().mu == pytest.approx(1.0, rel=1e-14)
    assert acc.remaining().mu == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(TypeError):
        acc.spend(pc.ApproxDP(0.1, 1e-9))  # no GDP representation: refused, not recorded
    assert len(acc) == 2


def test_subbotin_and_rao_limit():
    acc = pc.Accountant(pc.RaoDP(1.0))
    acc.spend_subbotin(3.0, scale=2.0, sensitivity=1.0)
    th = pc.rao.theta(pc.Subbotin(3.0), scale=2.0, sensitivity=1.0).theta
    assert acc.total().theta == pytest.approx(th, rel=1e-15)
    acc.spend_laplace(scale=2.0)
    assert acc.total().theta == pytest.approx(math.hypot(th, 0.5), rel=1e-15)
    # the Subbotin spend reports (eps, delta) through its exact profile
    e = acc.total(pc.ApproxDP, delta=1e-6).epsilon
    assert math.isfinite(e) and e > 0.5


def test_json_round_trip(tmp_path):
    acc = pc.Accountant(pc.ApproxDP(8.0, 1e-6))
    acc.spend_gaussian(sigma=3.0, sensitivity=2.0)
    acc.spend_laplace(scale=5.0)
    acc.spend(pc.ZCDP(0.01))
    acc.spend(pc.RDPCurve([0.1, 0.2], [2.0, 4.0]))
    path = tmp_path / "acc.json"
    acc.save(path)
    back = pc.Accountant.load(path)
    assert back.limit == acc.limit
    assert back.spends == acc.spends
    assert back.total().epsilon == acc.total().epsilon
    doc = json.loads(path.read_text())
    assert doc["format"] == "pydp_core.Accountant/1" and len(doc["spends"]) == 4
    # resume: the loaded accountant keeps refusing past the limit
    with pytest.raises(pc.BudgetExceededError):
        back.spend_gaussian(sigma=0.01)
    with pytest.raises(ValueError):
        pc.Accountant.from_json('{"format": "other"}')
    with pytest.raises(ValueError, match="malformed"):
        pc.Accountant.from_json('{"format": "pydp_core.Accountant/1", "limit": {"type": "GDP"}, "spends": []}')
    bad = json.loads(acc.to_json())
    bad["spends"][0]["sigma"] = -1.0
    with pytest.raises(ValueError, match="sigma"):
        pc.Accountant.from_json(json.dumps(bad))
    # a callable curve could not be persisted, so it is refused at spend time (nothing recorded)
    with pytest.raises(TypeError, match="callable"):
        acc.spend(pc.RDPCurve(lambda a: 0.001 * np.asarray(a)))
    assert len(acc) == 4


def test_concurrent_spends_never_overshoot():
    limit = pc.ZCDP(1.0)
    acc = pc.Accountant(limit)
    # each spend is rho = 0.5 / 100; 8 threads try 40 spends each: exactly 200 fit
    sigma = 1.0 / math.sqrt(2 * 0.005)
    refused = []

    def worker():
        for _ in range(40):
            try:
                acc.spend_gaussian(sigma=sigma)
            except pc.BudgetExceededError:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acc) + len(refused) == 320
    assert acc.total().rho <= 1.0 * (1 + 1e-12)
    assert len(acc) == 200  # serial result: rho accumulates to exactly the limit after 200 spends


def test_bad_input():
    with pytest.raises(TypeError):
        pc.Accountant(3.0)
    with pytest.raises(ValueError, match="delta"):
        pc.Accountant(pc.ApproxDP(1.0, 0.0))
    acc = pc.Accountant(pc.ApproxDP(1.0, 1e-6))
    with pytest.raises(ValueError, match="sigma"):
        acc.spend_gaussian(sigma=-1.0)
    with pytest.raises(ValueError, match="sigma"):
        acc.spend_gaussian(sigma=float("nan"))
    with pytest.raises(ValueError, match="scale"):
        acc.spend_laplace(scale=0.0)
    with pytest.raises(ValueError, match="r"):
        acc.spend_subbotin(0.5, scale=1.0)
    with pytest.raises(ValueError, match="count"):
        acc.spend_gaussian(sigma=1.0, count=0)
    with pytest.raises(TypeError):
        acc.spend(1.0)
    assert len(acc) == 0


def test_laplace_only_routes():
    acc = pc.Accountant(pc.ApproxDP(10.0, 1e-6))
    acc.spend_laplace(scale=2.0, count=3)  # three 0.5-DP mechanisms
    # the exact conversion of the composed 1.5-DP is one of the routes, so the total is no larger
    assert acc.total().epsilon <= pc.PureDP(1.5).to_approx_dp(1e-6).epsilon
    assert acc.total(pc.PureDP) == pc.PureDP(1.5)
    mu = acc.total(pc.GDP).mu
    assert mu <= min(math.sqrt(3) * pc.PureDP(0.5).to_gdp().mu, pc.PureDP(1.5).to_gdp().mu) * (1 + 1e-15)


def test_repeated_spends_are_one_record_with_a_count():
    acc = pc.Accountant(pc.ApproxDP(50.0, 1e-5))
    for _ in range(2000):  # a DP-SGD-like loop: one spend per step stays cheap
        acc.spend_gaussian(sigma=20.0)
    acc.spend_gaussian(sigma=20.0, count=8000)
    assert len(acc) == 10000 and len(acc.spends) == 1 and acc.spends[0]["count"] == 10000
    assert acc.total(pc.GDP).mu == pytest.approx(math.sqrt(10000) / 20.0, rel=1e-14)
    assert acc.total().epsilon == pc.GDP(5.0).to_approx_dp(1e-5).epsilon
    # counts compose in every representation: Subbotin pieces each get their share of delta, and the
    # 3-fold PLD composition is tighter
    a2 = pc.Accountant(pc.ApproxDP(100.0, 1e-6))
    a2.spend_subbotin(3.0, scale=5.0, count=3)
    share = 1e-6 / 3
    ref = 3 * pc.epsilon_for_delta(pc.Subbotin(3.0), delta=share, scale=5.0, sensitivity=1.0)
    pld = pc.PLD.from_noise(pc.Subbotin(3.0), scale=5.0).self_compose(3).epsilon(1e-6)
    assert a2.total().epsilon == pld.upper and pld.upper < ref
    assert a2.total(pc.RaoDP).theta == pytest.approx(math.sqrt(3) * pc.rao.theta(pc.Subbotin(3.0), scale=5.0).theta, rel=1e-14)
    back = pc.Accountant.from_json(a2.to_json())
    assert back.total().epsilon == a2.total().epsilon and len(back) == 3


def test_save_leaves_no_temporary_file_when_it_fails(tmp_path, monkeypatch):
    import os

    acc = pc.Accountant(pc.ApproxDP(8.0, 1e-6))
    acc.spend_laplace(scale=5.0)
    path = tmp_path / "budget.json"
    acc.save(path)

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    acc.spend_laplace(scale=5.0)
    with pytest.raises(OSError, match="No space"):
        acc.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["budget.json"]
    assert len(pc.Accountant.load(path)) == 1  # the previous state is intact


def test_save_syncs_the_folder_after_the_rename(tmp_path, monkeypatch):
    from pydp_core import _files

    synced = []
    monkeypatch.setattr(_files, "fsync_dir", synced.append)
    pc.Accountant(pc.ApproxDP(8.0, 1e-6)).save(tmp_path / "budget.json")
    assert synced == [str(tmp_path)]
