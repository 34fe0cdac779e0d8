"""Valid PLDs that the automatic grid used to refuse, checked against closed forms in mpmath.

The automatic step looks at the losses on a coarse grid before it chooses the fine one; mechanisms
whose loss is concentrated far inside a wide range (randomized response at epsilon 30, a discrete
Laplace of small scale) or spread over a range wider than the coarse grid can hold (a Gaussian at
sensitivity / scale 1e5) must get a grid that fits, not a ValueError about a step never set.
"""
import mpmath as mp
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian

mp.mp.dps = 60


def _contains(iv, truth):
    assert iv.lower <= truth <= iv.upper, (iv, truth)


def _pure_dp_delta(eps_mech, eps):
    """delta(eps) of binary randomized response at eps_mech: (e^a - e^eps) / (1 + e^a)."""
    a = mp.mpf(eps_mech)
    return (mp.e**a - mp.e**eps) / (1 + mp.e**a)


def test_randomized_response_at_epsilon_30_has_an_automatic_grid():
    truth = float(_pure_dp_delta(30, 1))
    _contains(PLD.from_randomized_response(epsilon=30).delta(1.0), truth)


def test_approx_dp_at_epsilon_30_has_an_automatic_grid():
    d = mp.mpf(1e-6)
    truth = float(d + (1 - d) * _pure_dp_delta(30, 1))
    _contains(PLD.from_approx_dp(epsilon=30, delta=1e-6).delta(1.0), truth)


def test_discrete_laplace_of_small_scale_has_an_automatic_grid():
    # X ~ DLap, P(x) proportional to e^{-|x| / s}, against X + 1: the loss is +-1/s, with
    # P(L = 1/s) = P(X <= 0) = 1 / (1 + e^{-1/s}); delta(eps) = P(X <= 0) (1 - e^{eps - 1/s}).
    a = 1 / mp.mpf(0.03)
    truth = float((1 - mp.e ** (1 - a)) / (1 + mp.e ** (-a)))
    _contains(PLD.from_discrete_laplace(scale=0.03).delta(1.0), truth)


def _gaussian_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("eps", [4.9998e9, 5.0e9, 5.0002e9])
def test_gaussian_with_a_loss_range_wider_than_the_coarse_grid(eps):
    # scale 1e-5: mu = 1e5, the loss is N(mu^2 / 2, mu^2), far wider than 2^25 steps of 1e-2.
    pld = PLD.from_noise(Gaussian(), scale=1e-5)
    _contains(pld.delta(eps), float(_gaussian_delta(1e5, eps)))


@pytest.mark.parametrize("scale", [0.001, 1e-5])
def test_discrete_laplace_whose_tail_mass_underflows(scale):
    # e^{-1/s} underflows: the losses are still +-1/s, delta(eps) = (1 - e^{eps - 1/s}) / (1 + e^{-1/s}).
    a = 1 / mp.mpf(scale)
    for eps in (1.0, 0.5 / scale):
        truth = float((1 - mp.e ** (eps - a)) / (1 + mp.e ** (-a)))
        _contains(PLD.from_discrete_laplace(scale=scale).delta(eps), truth)
