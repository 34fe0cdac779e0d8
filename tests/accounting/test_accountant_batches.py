"""The accountant takes the analyses of fixed-size, truncated Poisson and balls-in-bins batches, and refuses an
analysis charged to another sampler than the declared one."""
from __future__ import annotations

import pytest

from pydp_core import PrivacyWarning
from pydp_core.accounting import ApproxDP
from pydp_core.accounting.accountant import Accountant
from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian

FIXED = {"fixed_size": {"noise": "gaussian", "scale": 1.0, "batch_size": 10, "dataset_size": 1000}}
TRUNCATED = {"truncated_poisson": {"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01, "dataset_size": 1000,
                                   "max_batch_size": 30}}
BINS = {"balls_in_bins": {"noise": "gaussian", "scale": 1.0, "bins": 100, "epochs": 2}}


@pytest.mark.parametrize("sampler, spec, pld", [
    ("fixed_size", FIXED, PLD.fixed_size(Gaussian(), scale=1.0, batch_size=10, dataset_size=1000)),
    ("truncated_poisson", TRUNCATED, PLD.truncated_poisson(Gaussian(), scale=1.0, sampling_rate=0.01,
                                                           dataset_size=1000, max_batch_size=30)),
    ("balls_in_bins", BINS, PLD.balls_in_bins(Gaussian(), scale=1.0, bins=100, epochs=2)),
])
def test_sampler_analysis_is_charged(sampler, spec, pld):
    acc = Accountant(ApproxDP(20.0, 1e-5), sampler=sampler)
    acc.spend_mechanism(spec, count=50)
    assert acc.total().epsilon == pld.self_compose(50).epsilon(1e-5).upper
    # Charged to another declared sampler (Poisson included), the analysis is refused, even acknowledged.
    other = Accountant(ApproxDP(20.0, 1e-5), sampler="poisson")
    with pytest.raises(ValueError, match=sampler):
        other.spend_mechanism(spec, acknowledge_poisson_analysis=True)
    assert len(other) == 0


def test_poisson_analysis_refused_for_the_new_samplers():
    poisson = {"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01}
    for sampler in ("truncated_poisson", "balls_in_bins", "b_min_sep"):
        acc = Accountant(ApproxDP(8.0, 1e-5), sampler=sampler)
        with pytest.raises(ValueError, match="acknowledge_poisson_analysis"):
            acc.spend_mechanism(poisson)
        with pytest.warns(PrivacyWarning):
            acc.spend_mechanism(poisson, acknowledge_poisson_analysis=True)
        assert len(acc) == 1


def test_undeclared_sampler_takes_every_analysis():
    acc = Accountant(ApproxDP(20.0, 1e-5))
    acc.spend_mechanism(FIXED)
    acc.spend_mechanism(BINS)
    assert len(acc) == 2


def test_bad_batch_spec_names_the_field():
    with pytest.raises(ValueError, match="noise"):
        PLD.from_spec({"fixed_size": {"noise": "cauchy", "scale": 1.0, "batch_size": 1, "dataset_size": 10}})
    with pytest.raises(ValueError, match="batch_size"):
        PLD.from_spec({"fixed_size": {"noise": "gaussian", "scale": 1.0, "batch_size": 20, "dataset_size": 10}})
