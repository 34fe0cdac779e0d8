"""Training batch samplers against dp-accounting in the same run: CPU time and the epsilons.

- fixed-size batches without replacement (q = 0.01, 1e4 steps, delta = 1e-5, replace-one) against
  dp-accounting's RDP for that sampler (the only accounting it has): the epsilon and the time;
- truncated Poisson (n = 1e4, q = 0.01, B = 200 and B = 130, 1000 steps) against dp-accounting's PLD.

Run: ``pytest bench/bench_pld_batches.py -s`` (the figures are printed and kept in extra_info).
"""
from __future__ import annotations

import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian

DELTA = 1e-5


def _fixed_ours(n, b, sigma, steps):
    # The replace-one displacement of dp-accounting's RDP is 1: a record norm of 1/2 here.
    return PLD.fixed_size(Gaussian(), scale=sigma, batch_size=b, dataset_size=n, sensitivity=0.5,
                          neighbours="substitution").self_compose(steps).epsilon(DELTA)


def _fixed_rdp(n, b, sigma, steps):
    import dp_accounting as dpa
    from dp_accounting.rdp import RdpAccountant

    acc = RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(n, b, dpa.GaussianDpEvent(sigma)), steps))
    return acc.get_epsilon(DELTA)


def _truncated_ours(n, q, cap, sigma, steps):
    return PLD.truncated_poisson(Gaussian(), scale=sigma, sampling_rate=q, dataset_size=n,
                                 max_batch_size=cap).self_compose(steps).epsilon(DELTA)


def _truncated_dpa(n, q, cap, sigma, steps):
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    pld = dpa_pld.from_truncated_subsampled_gaussian_mechanism(
        dataset_size=n, sampling_probability=q, truncated_batch_size=cap, noise_multiplier=sigma,
        value_discretization_interval=1e-4)
    return pld.self_compose(steps).get_epsilon_for_delta(DELTA)


def _measure(speed, ours_fn, peer_fn, case):
    """(our interval, our CPU seconds, the peer's epsilon, its CPU seconds), all in this run."""
    iv = speed.benchmark.pedantic(ours_fn, args=case, rounds=1, iterations=1)
    ours = speed.cpu_time(lambda: ours_fn(*case), repeat=3)
    peer = peer_fn(*case)
    return iv, ours, peer, speed.cpu_time(lambda: peer_fn(*case), repeat=1)


@pytest.mark.parametrize("sigma", [0.8, 1.0, 2.0])
def test_fixed_size_vs_dp_accounting_rdp(speed, sigma):
    case = (10_000, 100, sigma, 10_000)
    iv, ours, rdp, theirs = _measure(speed, _fixed_ours, _fixed_rdp, case)
    assert iv.upper - iv.lower < 1e-3
    print(f"\nfixed-size sigma={sigma}: ours [{iv.lower:.6f}, {iv.upper:.6f}] {ours:.3f} s; "
          f"dp-accounting RDP {rdp:.6f} {theirs:.3f} s; ours/RDP = {iv.upper / rdp:.3f}")
    speed.benchmark.extra_info.update({f"fixed_sigma{sigma}_ours": iv.upper, f"fixed_sigma{sigma}_rdp": rdp})
    assert iv.upper <= 0.9 * rdp
    speed.ratio(f"fixed_size_sigma{sigma}_vs_rdp", ours, theirs)


@pytest.mark.parametrize("cap", [200, 130])
def test_truncated_poisson_vs_dp_accounting(speed, cap):
    case = (10_000, 0.01, cap, 1.0, 1000)
    iv, ours, peer, theirs = _measure(speed, _truncated_ours, _truncated_dpa, case)
    print(f"\ntruncated Poisson B={cap}: ours [{iv.lower:.6f}, {iv.upper:.6f}] {ours:.3f} s; "
          f"dp-accounting PLD {peer:.6f} {theirs:.3f} s; speed-up {theirs / ours:.1f}x")
    speed.benchmark.extra_info.update({f"truncated_B{cap}_ours": iv.upper, f"truncated_B{cap}_dpa": peer})
    assert iv.upper <= peer + 1e-4
    speed.ratio(f"truncated_B{cap}_vs_dp_accounting", ours, theirs)


@pytest.mark.parametrize("epsilon", [2.0, 8.0])
def test_balls_in_bins_calibration(speed, epsilon):
    # 1000 steps, 10 batches per epoch, delta = 1e-6: certified (jax_privacy's Monte Carlo estimator, the
    # only other accounting of this sampler, is not installed here); Poisson sampling at q = 0.1 beside it.
    def ours():
        return PLD.calibrate_sampler("balls_in_bins", Gaussian(), epsilon=epsilon, delta=1e-6, bins=10, epochs=100,
                                     certificate=True)

    def poisson():
        return PLD.calibrate(Gaussian(), epsilon=epsilon, delta=1e-6, steps=1000, sampling_rate=0.1)

    import time

    # Cold: the first call builds the random-allocation laws (cached for later calls).
    start = time.process_time()
    c = speed.benchmark.pedantic(ours, rounds=1, iterations=1)
    t_ours = time.process_time() - start
    start = time.process_time()
    p = poisson()
    t_poisson = time.process_time() - start
    print(f"\nballs-in-bins eps={epsilon}: sigma in [{c.scale_bounds.lower:.5f}, {c.scale:.5f}] {t_ours:.2f} s CPU; "
          f"Poisson q=0.1 sigma {p:.5f} {t_poisson:.2f} s CPU")
    speed.benchmark.extra_info.update({f"bins_eps{epsilon}_sigma": c.scale, f"bins_eps{epsilon}_cpu_s": t_ours})
    assert c.scale_bounds.upper <= 1.001 * c.scale_bounds.lower
