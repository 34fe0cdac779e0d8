"""Speed of the certified PLD engine on DP-SGD problems, against dp-accounting and
prv_accountant in the same run.

Problem: Poisson-subsampled Gaussian, q = 0.01, sigma = 1, delta = 1e-5; 1e4 steps (true eps 6.18771)
and 1e5 steps (25.5731), both ends of our interval asserted within 1e-4 of the truth. K = 100 distinct
sampling rates in [0.005, 0.015] with 1e4 steps in all; calibration of sigma for eps = 4 at 1e4 steps.
The peers run only under timing (``pytest bench``): dp-accounting's 1e5-step and K = 100 runs take
minutes, so with ``--benchmark-disable`` (CI) only our side runs, once, with its correctness checks.
Timings are single-threaded (the engine has no threads) and CPU time of this process.
"""
from __future__ import annotations

import numpy as np
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian

TRUTH = {10_000: 6.18771, 100_000: 25.5731}


def _ours(k: int):
    return PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(k).epsilon(1e-5)


def _dp_accounting(k: int) -> float:
    import dp_accounting as dpa

    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), k)
    return acc.get_epsilon(1e-5)


@pytest.mark.parametrize("k", [10_000, 100_000])
def test_dpsgd(speed, k):
    iv = speed.benchmark.pedantic(_ours, args=(k,), rounds=1, iterations=1)
    assert abs(iv.lower - TRUTH[k]) < 1e-4 and abs(iv.upper - TRUTH[k]) < 1e-4, iv
    ours = speed.cpu_time(lambda: _ours(k), repeat=3)
    speed.benchmark.extra_info[f"ours_{k}_s"] = round(ours, 4)
    print(f"\nPLD DP-SGD k={k}: [{iv.lower:.6f}, {iv.upper:.6f}] in {ours:.3f} s")
    if speed.enabled:
        pytest.importorskip("dp_accounting")
        theirs = speed.cpu_time(lambda: _dp_accounting(k), repeat=1)
        speed.ratio(f"dpsgd_{k}_vs_dp_accounting", ours, theirs)
        if k == 10_000:  # prv_accountant's 1e5-step run takes minutes
            pytest.importorskip("prv_accountant")
            speed.ratio(f"dpsgd_{k}_vs_prv_accountant", ours, speed.cpu_time(lambda: _prv(k), repeat=1))


def _prv(k: int) -> float:
    import prv_accountant as prv

    acc = prv.PRVAccountant(prvs=prv.PoissonSubsampledGaussianMechanism(noise_multiplier=1.0, sampling_probability=0.01),
                            max_self_compositions=k, eps_error=0.01, delta_error=1e-10)
    return acc.compute_epsilon(delta=1e-5, num_self_compositions=[k])[2]


def _heterogeneous():
    qs = np.linspace(0.005, 0.015, 100)
    return PLD.composition([PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=q).self_compose(100) for q in qs])


def test_hundred_sampling_rates(speed):
    iv = speed.benchmark.pedantic(lambda: _heterogeneous().epsilon(1e-5), rounds=1, iterations=1)
    assert iv.lower <= iv.upper and iv.upper - iv.lower < 1e-3
    ours = speed.cpu_time(lambda: _heterogeneous().epsilon(1e-5), repeat=1)
    speed.benchmark.extra_info["ours_K100_s"] = round(ours, 4)
    print(f"\nPLD K=100 rates: [{iv.lower:.6f}, {iv.upper:.6f}] in {ours:.3f} s")


def _calibrate() -> float:
    return PLD.calibrate(Gaussian(), epsilon=4.0, delta=1e-5, steps=10_000, sampling_rate=0.01)


def test_calibrate_sigma(speed):
    s = speed.benchmark.pedantic(_calibrate, rounds=1, iterations=1)
    c = PLD.calibrate(Gaussian(), epsilon=4.0, delta=1e-5, steps=10_000, sampling_rate=0.01, certificate=True)
    assert c.scale == s and c.scale_bounds.upper <= c.scale_bounds.lower * (1 + 1e-3)
    iv = PLD.from_noise(Gaussian(), scale=s, sampling_rate=0.01).self_compose(10_000) \
        .with_discretization(value_step=c.value_step).epsilon(1e-5)
    assert iv.upper <= 4.0 and iv.upper > 3.99
    ours = speed.cpu_time(_calibrate, repeat=3)
    speed.benchmark.extra_info["ours_calibrate_s"] = round(ours, 4)
    print(f"\nPLD calibrate sigma = {s:.6f} in {ours:.3f} s")
    if speed.enabled:
        pytest.importorskip("dp_accounting")
        from dp_accounting import dp_event, mechanism_calibration, pld

        def theirs_fn():
            return mechanism_calibration.calibrate_dp_mechanism(
                pld.PLDAccountant, lambda sig: dp_event.SelfComposedDpEvent(
                    dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(sig)), 10_000),
                4.0, 1e-5, mechanism_calibration.LowerEndpointAndGuess(0.5, 1.0), tol=1e-3)

        theirs = speed.cpu_time(theirs_fn, repeat=1)
        speed.ratio("calibrate_vs_dp_accounting", ours, theirs)
