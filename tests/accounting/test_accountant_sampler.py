"""The accountant's declared batch sampler: a Poisson analysis of a declared non-Poisson sampler is
refused unless acknowledged, and then warned about."""
import pytest

from pydp_core import ApproxDP
from pydp_core._errors import PrivacyWarning
from pydp_core.accounting.accountant import Accountant

POISSON = {"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01}


@pytest.mark.parametrize("sampler", ["shuffled", "fixed_size", "random_allocation"])
def test_poisson_analysis_of_other_sampler_refused(sampler):
    acc = Accountant(ApproxDP(8.0, 1e-5), sampler=sampler)
    with pytest.raises(ValueError, match="acknowledge_poisson"):
        acc.spend_mechanism(POISSON, count=100)
    assert len(acc) == 0
    with pytest.warns(PrivacyWarning, match=sampler):
        acc.spend_mechanism(POISSON, count=100, acknowledge_poisson=True)
    assert len(acc) == 100


def test_poisson_sampler_and_unsampled_spends_pass():
    acc = Accountant(ApproxDP(8.0, 1e-5), sampler="poisson")
    acc.spend_mechanism(POISSON, count=10)
    other = Accountant(ApproxDP(8.0, 1e-5), sampler="shuffled")
    other.spend_mechanism({"noise": "gaussian", "scale": 5.0})  # no sampling: nothing is amplified
    assert len(acc) == 10 and len(other) == 1


def test_sampler_is_recorded():
    acc = Accountant(ApproxDP(8.0, 1e-5), sampler="shuffled")
    assert acc.sampler == "shuffled"
    assert acc.copy().sampler == "shuffled"
    assert Accountant.from_json(acc.to_json()).sampler == "shuffled"
    assert Accountant(ApproxDP(8.0, 1e-5)).sampler is None


def test_unknown_sampler_named():
    with pytest.raises(ValueError, match="sampler"):
        Accountant(ApproxDP(8.0, 1e-5), sampler="balls")
