"""The accountant records the declared batch sampler and refuses a Poisson analysis charged to another one."""
from __future__ import annotations

import pytest

from pydp_core import PrivacyWarning
from pydp_core.accounting import ApproxDP
from pydp_core.accounting.accountant import Accountant

POISSON = {"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01}
FULL = {"noise": "gaussian", "scale": 4.0}


def test_records_the_sampler():
    assert Accountant(ApproxDP(8.0, 1e-5)).sampler is None
    assert Accountant(ApproxDP(8.0, 1e-5), sampler="shuffle").sampler == "shuffle"


@pytest.mark.parametrize("sampler", ["shuffle", "fixed_size", "random_allocation"])
def test_poisson_analysis_refused_for_other_samplers(sampler):
    acc = Accountant(ApproxDP(8.0, 1e-5), sampler=sampler)
    with pytest.raises(ValueError, match=f"{sampler}.*acknowledge_poisson_analysis"):
        acc.spend_mechanism(POISSON, count=10)
    assert len(acc) == 0
    nested = {"discrete_laplace": {"scale": 2.0, "sampling_rate": 0.5}}
    with pytest.raises(ValueError, match="Poisson"):
        acc.spend_mechanism(nested)
    acc.spend_mechanism(FULL)  # no sampling: no sampler assumption
    assert len(acc) == 1


def test_acknowledged_poisson_analysis_warns_and_records():
    acc = Accountant(ApproxDP(8.0, 1e-5), sampler="shuffle")
    with pytest.warns(PrivacyWarning, match="shuffle"):
        acc.spend_mechanism(POISSON, count=10, acknowledge_poisson_analysis=True)
    assert len(acc) == 10


def test_poisson_sampler_accepts_poisson_analysis():
    for sampler in ("poisson", None):
        acc = Accountant(ApproxDP(8.0, 1e-5), sampler=sampler)
        acc.spend_mechanism(POISSON, count=10)
        assert len(acc) == 10


def test_bad_sampler_and_acknowledgement():
    with pytest.raises(ValueError, match="sampler"):
        Accountant(ApproxDP(8.0, 1e-5), sampler="balls")
    with pytest.raises(TypeError, match="acknowledge_poisson_analysis"):
        Accountant(ApproxDP(8.0, 1e-5), sampler="shuffle").spend_mechanism(POISSON, acknowledge_poisson_analysis=1)


def test_the_sampler_survives_copy_and_json():
    acc = Accountant(ApproxDP(8.0, 1e-5), sampler="shuffle")
    assert acc.copy().sampler == "shuffle"
    assert Accountant.from_json(acc.to_json()).sampler == "shuffle"
