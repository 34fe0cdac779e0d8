"""The Opacus accountant's sampler kinds (``PLDAccountant(sampler=...)``): random allocation and shuffling
by epochs, and the refusal of a data loader that draws its batches otherwise."""
import math

import pytest
import torch  # noqa: E402
from opacus.data_loader import DPDataLoader  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from pydp_core.accounting.pld import PLD
from pydp_core.adapters.opacus import PLDAccountant, loader_sampler
from pydp_core.noise import Gaussian


def _run(sampler, steps, nm=1.0, q=0.01):
    acc = PLDAccountant(sampler=sampler)
    for _ in range(steps):
        acc.step(noise_multiplier=nm, sample_rate=q)
    return acc


def test_random_allocation_epochs_compose_the_pass():
    got = _run("random_allocation", 300).get_epsilon_interval(1e-5)
    ref = PLD.random_allocation(Gaussian(), scale=1.0, steps=100).self_compose(3).epsilon(1e-5)
    assert got.lower == pytest.approx(ref.lower, abs=2e-5) and got.upper == pytest.approx(ref.upper, abs=2e-5)
    poisson = _run("poisson", 300).get_epsilon(1e-5)
    assert got.lower < got.upper < poisson  # same batch rate, less loss than Poisson sampling


def test_a_partial_epoch_is_a_full_one_above_and_nothing_below():
    part = _run("random_allocation", 250).get_epsilon_interval(1e-5)
    two = _run("random_allocation", 200).get_epsilon_interval(1e-5)
    three = _run("random_allocation", 300).get_epsilon_interval(1e-5)
    assert part.lower == pytest.approx(two.lower, abs=1e-12) and part.upper == pytest.approx(three.upper, abs=1e-12)


def test_shuffle_upper_end_is_one_gaussian_per_epoch():
    got = _run("shuffle", 400, nm=2.0).get_epsilon_interval(1e-5)
    ref = PLD.from_gdp(math.sqrt(4) / 2.0).epsilon(1e-5)
    assert got.upper == pytest.approx(ref.upper, abs=2e-5)
    assert 0.0 < got.lower < got.upper


def test_mixed_noise_in_an_epoch_takes_the_smallest_above_and_the_largest_below():
    acc = PLDAccountant(sampler="random_allocation")
    for i in range(100):
        acc.step(noise_multiplier=1.0 if i < 50 else 2.0, sample_rate=0.01)
    got = acc.get_epsilon_interval(1e-5)
    at1 = _run("random_allocation", 100, nm=1.0).get_epsilon_interval(1e-5)
    at2 = _run("random_allocation", 100, nm=2.0).get_epsilon_interval(1e-5)
    assert got.upper == pytest.approx(at1.upper, abs=1e-12) and got.lower == pytest.approx(at2.lower, abs=1e-12)


def test_epoch_samplers_need_a_fixed_integer_epoch():
    acc = PLDAccountant(sampler="shuffle")
    with pytest.raises(ValueError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=0.3)
    acc.step(noise_multiplier=1.0, sample_rate=0.1)
    with pytest.raises(ValueError, match="sample_rate changed"):
        acc.step(noise_multiplier=1.0, sample_rate=0.05)
    with pytest.raises(ValueError, match="sampler"):
        PLDAccountant(sampler="fixed_size")
    with pytest.raises(TypeError, match="sampler"):
        PLDAccountant(sampler=1)
    with pytest.raises(ValueError, match="get_epsilon_interval"):
        acc.pld()


def test_no_noise_is_infinite_and_poisson_default_unchanged():
    assert _run("shuffle", 10, nm=0.0, q=0.1).get_epsilon_interval(1e-5).upper == math.inf
    assert PLDAccountant().sampler == "poisson"


def test_the_data_loader_must_draw_the_declared_sampler():
    data = TensorDataset(torch.arange(20.0))
    shuffled = DataLoader(data, batch_size=5, shuffle=True)
    poisson = DPDataLoader.from_data_loader(DataLoader(data, batch_size=5))
    assert loader_sampler(shuffled) == "shuffle" and loader_sampler(poisson) == "poisson"
    PLDAccountant(sampler="shuffle").check_data_loader(shuffled)
    PLDAccountant().check_data_loader(poisson)
    with pytest.raises(ValueError, match="declared with sampler='shuffle'"):
        PLDAccountant(sampler="shuffle").check_data_loader(poisson)
    with pytest.raises(ValueError, match="SequentialSampler"):
        loader_sampler(DataLoader(data, batch_size=5))
