"""Mixture-of-Gaussians PLD (MMCC) against dp-accounting's pessimistic PLD: CPU time, same run."""
from __future__ import annotations

import pytest

from pydp_core.accounting.pld import PLD

CASES = {
    "three_k100": (1.0, (0.0, 0.5, 1.0), (0.5, 0.3, 0.2), 100),
    "three_k1000": (2.0, (0.0, 1.0, 2.0), (0.9, 0.07, 0.03), 1000),
}


def _ours(sigma, sens, probs, k):
    return PLD.from_mixture_of_gaussians(sigma=sigma, sensitivities=sens, probabilities=probs).self_compose(k).epsilon(1e-5)


def _dp_accounting(sigma, sens, probs, k):
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    pld = dpa_pld.from_mixture_gaussian_mechanism(standard_deviation=sigma, sensitivities=list(sens),
                                                  sampling_probs=list(probs), value_discretization_interval=1e-4)
    return pld.self_compose(k).get_epsilon_for_delta(1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mixture_vs_dp_accounting(speed, name):
    case = CASES[name]
    iv = speed.benchmark.pedantic(_ours, args=case, rounds=1, iterations=1)
    assert iv.lower <= iv.upper and iv.upper - iv.lower < 1e-4
    ours = speed.cpu_time(lambda: _ours(*case), repeat=3)
    speed.benchmark.extra_info[f"ours_{name}_s"] = round(ours, 4)
    if speed.enabled:
        theirs_eps = _dp_accounting(*case)
        assert abs(iv.upper - theirs_eps) < 1e-4  # the peer's pessimistic value, within its grid error
        theirs = speed.cpu_time(lambda: _dp_accounting(*case), repeat=1)
        speed.ratio(f"mixture_{name}_vs_dp_accounting", ours, theirs, goal=10.0)
