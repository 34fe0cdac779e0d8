"""The training-sampler PLDs in the JSON description (``PLD.from_spec``): mixture of Gaussians, banded
matrix factorization and random allocation build the same PLD as their constructors."""
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace


def _same(a, b, delta=1e-6):
    x, y = a.epsilon(delta), b.epsilon(delta)
    assert x.lower == pytest.approx(y.lower, abs=1e-12) and x.upper == pytest.approx(y.upper, abs=1e-12)


def test_mixture_of_gaussians():
    args = {"sigma": 1.2, "sensitivities": [0.0, 1.0, 2.0], "probabilities": [0.9, 0.08, 0.02]}
    _same(PLD.from_spec({"mixture_of_gaussians": args, "count": 10}),
          PLD.mixture_of_gaussians(**args).self_compose(10))


def test_banded_matrix_factorization():
    args = {"sigma": 2.0, "bands": 2, "column_sensitivities": [1.0, 0.6, 0.6, 0.6], "sampling_rate": 0.1}
    _same(PLD.from_spec({"banded_matrix_factorization": args}), PLD.from_banded_matrix_factorization(**args))


@pytest.mark.parametrize("name, family", [("gaussian", Gaussian()), ("laplace", Laplace())])
def test_random_allocation(name, family):
    spec = {"random_allocation": {"noise": name, "scale": 1.5, "steps": 50, "participations": 2}, "count": 3}
    _same(PLD.from_spec(spec), PLD.random_allocation(family, scale=1.5, steps=50, participations=2).self_compose(3))


@pytest.mark.parametrize("name", ["discrete_laplace", "discrete_gaussian"])
def test_random_allocation_discrete(name):
    spec = {"random_allocation": {"noise": name, "scale": 1.5, "steps": 50, "participations": 2, "sensitivity": 1}}
    _same(PLD.from_spec(spec), PLD.random_allocation(name, scale=1.5, steps=50, participations=2))


def test_malformed_descriptions_name_the_field():
    with pytest.raises(ValueError, match="noise family"):
        PLD.from_spec({"random_allocation": {"scale": 1.0, "steps": 10}})
    with pytest.raises(ValueError, match="random_allocation"):
        PLD.from_spec({"random_allocation": {"noise": "cauchy", "scale": 1.0, "steps": 10}})
    with pytest.raises(ValueError, match="JSON object"):
        PLD.from_spec({"mixture_of_gaussians": [1.0]})
    with pytest.raises(ValueError, match="probabilities"):
        PLD.from_spec({"mixture_of_gaussians": {"sigma": 1.0, "sensitivities": [1.0], "probabilities": []}})
    with pytest.raises(ValueError, match="exactly one"):
        PLD.from_spec({"mixture_of_gaussians": {}, "random_allocation": {}})
