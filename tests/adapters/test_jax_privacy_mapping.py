"""jax_privacy's batch-selection strategies mapped to certified PLDs (``pydp_core.adapters.jax_privacy``).

jax_privacy is not installed with the peers (it pins its own jax), so the strategies are stand-ins with
jax_privacy's class names and fields (``jax_privacy/batch_selection.py``): the mapping is by name."""
import dataclasses
import enum
import math

import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.adapters import jax_privacy as jp
from pydp_core.noise import Gaussian


class PartitionType(enum.Enum):
    INDEPENDENT = "independent"
    EQUAL_SPLIT = "equal_split"


@dataclasses.dataclass(frozen=True)
class CyclicPoissonSampling:
    sampling_prob: float
    iterations: int
    truncated_batch_size: int | None = None
    cycle_length: int = 1
    partition_type: PartitionType = PartitionType.EQUAL_SPLIT


@dataclasses.dataclass(frozen=True)
class RandomAllocationSampling:
    total_participations: int
    iterations: int


@dataclasses.dataclass(frozen=True)
class BallsInBinsSampling:
    iterations: int
    cycle_length: int


@dataclasses.dataclass(frozen=True)
class FixedBatchSampling:
    batch_size: int
    iterations: int
    replace: bool = False


@dataclasses.dataclass(frozen=True)
class BMinSepSampling:
    sampling_prob: float
    iterations: int
    min_sep: int


def _same(a, b):
    assert a.lower == pytest.approx(b.lower, abs=1e-12) and a.upper == pytest.approx(b.upper, abs=1e-12)


def test_poisson_is_the_composition_of_subsampled_gaussians():
    got = jp.epsilon(CyclicPoissonSampling(0.01, 500), noise_multiplier=1.0, delta=1e-5)
    ref = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(500).epsilon(1e-5)
    assert got.lower <= ref.upper and ref.lower <= got.upper
    assert got.upper - got.lower < 1e-4
    # the peer jax_privacy accounts this strategy with: dp-accounting's PLD of the same event (its
    # pessimistic estimate, an upper bound up to its discretisation)
    import dp_accounting as dpa
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 500)
    peer = acc.get_epsilon(1e-5)
    assert got.lower <= peer and peer - got.upper < 1e-3


def test_cyclic_poisson_counts_the_eligible_steps_and_the_partition_sets_the_neighbours():
    s = CyclicPoissonSampling(0.05, 10, cycle_length=4, partition_type=PartitionType.INDEPENDENT)
    ref = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.05).self_compose(3)  # ceil(10 / 4)
    _same(jp.strategy_pld(s, noise_multiplier=1.0).epsilon(1e-6), ref.epsilon(1e-6))
    eq = CyclicPoissonSampling(0.05, 10, cycle_length=4, partition_type=PartitionType.EQUAL_SPLIT)
    sub = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.05, neighbours="substitution").self_compose(3)
    _same(jp.strategy_pld(eq, noise_multiplier=1.0).epsilon(1e-6), sub.epsilon(1e-6))


def test_random_allocation_is_the_pld_constructor():
    got = jp.strategy_pld(RandomAllocationSampling(4, 400), noise_multiplier=1.5).epsilon(1e-5)
    ref = PLD.random_allocation(Gaussian(), scale=1.5, steps=400, participations=4).epsilon(1e-5)
    _same(got, ref)


def test_balls_in_bins_with_one_bin_is_the_composed_gaussian():
    # one bin: every record in all 9 steps, the Gaussian mechanism with mu = sqrt(9) / sigma exactly
    got = jp.epsilon(BallsInBinsSampling(iterations=9, cycle_length=1), noise_multiplier=2.0, delta=1e-5)
    ref = PLD.from_gdp(1.5).epsilon(1e-5)
    assert got.lower <= ref.upper and ref.lower <= got.upper
    assert got.upper - got.lower < 1e-3


def test_balls_in_bins_full_cycles_are_one_pass_at_a_lower_scale():
    got = jp.strategy_pld(BallsInBinsSampling(iterations=40, cycle_length=10), noise_multiplier=2.0)
    ref = PLD.random_allocation(Gaussian(), scale=1.0, steps=10)  # sigma / sqrt(4)
    _same(got.epsilon(1e-5), ref.epsilon(1e-5))


def test_balls_in_bins_partial_cycle_is_bracketed_by_the_full_ones():
    part = jp.epsilon(BallsInBinsSampling(iterations=35, cycle_length=10), noise_multiplier=2.0, delta=1e-5)
    three = jp.epsilon(BallsInBinsSampling(iterations=30, cycle_length=10), noise_multiplier=2.0, delta=1e-5)
    four = jp.epsilon(BallsInBinsSampling(iterations=40, cycle_length=10), noise_multiplier=2.0, delta=1e-5)
    assert part.lower == pytest.approx(three.lower, abs=1e-12)
    assert part.upper == pytest.approx(four.upper, abs=1e-12)
    assert three.upper < four.lower
    with pytest.raises(ValueError, match="partial cycle"):
        jp.strategy_pld(BallsInBinsSampling(iterations=35, cycle_length=10), noise_multiplier=2.0)


def test_no_participation_is_no_loss():
    iv = jp.epsilon(BallsInBinsSampling(iterations=0, cycle_length=10), noise_multiplier=1.0, delta=1e-5)
    assert iv.lower == 0.0 and iv.upper == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("strategy, name", [(FixedBatchSampling(10, 100), "FixedBatchSampling"),
                                            (BMinSepSampling(0.1, 100, 5), "BMinSepSampling"),
                                            (CyclicPoissonSampling(0.1, 10, truncated_batch_size=5),
                                             "truncated_batch_size")])
def test_strategies_without_a_certified_pld_are_refused_by_name(strategy, name):
    with pytest.raises(ValueError, match=name):
        jp.epsilon(strategy, noise_multiplier=1.0, delta=1e-5)


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="strategy"):
        jp.strategy_pld(object(), noise_multiplier=1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        jp.strategy_pld(RandomAllocationSampling(1, 10), noise_multiplier=0.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        jp.strategy_pld(RandomAllocationSampling(1, 10), noise_multiplier=math.nan)
    with pytest.raises(ValueError, match="participations"):
        jp.strategy_pld(RandomAllocationSampling(11, 10), noise_multiplier=1.0)
    with pytest.raises(ValueError, match="cycle_length"):
        jp.strategy_pld(BallsInBinsSampling(iterations=10, cycle_length=0), noise_multiplier=1.0)
    with pytest.raises(ValueError, match="delta"):
        jp.epsilon(RandomAllocationSampling(1, 10), noise_multiplier=1.0, delta=-0.1)
