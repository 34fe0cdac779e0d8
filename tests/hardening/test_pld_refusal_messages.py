"""PLDs that no loss grid can hold fail with a ValueError naming what the caller can change."""
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian


@pytest.mark.parametrize("make", [
    lambda: PLD.from_noise(Gaussian(), scale=1e-300),
    lambda: PLD.from_noise(Gaussian(), scale=1.0).self_compose(2**62),
    lambda: PLD.from_approx_dp(epsilon=1.0, delta=1e-6).self_compose(10**9),
    lambda: PLD.from_discrete_gaussian(scale=2.0).self_compose(10**9),
], ids=["gaussian-1e-300", "gaussian-k-2^62", "approx-dp-k-1e9", "discrete-gaussian-k-1e9"])
def test_an_unrepresentable_loss_range_names_scale_or_steps(make):
    with pytest.raises(ValueError, match="noise scale|fewer steps") as info:
        make().delta(1.0)
    assert "max_size" not in str(info.value) and "std::" not in str(info.value)


@pytest.mark.parametrize("plds", ["str", [PLD.from_gdp(1.0), "x"], 3])
def test_composition_of_non_plds_is_a_type_error_naming_plds(plds):
    with pytest.raises(TypeError, match="plds"):
        PLD.composition(plds)
