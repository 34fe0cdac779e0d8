"""Extreme finite inputs and unbounded work get a clear, up-front error naming the argument.

Each case returned +-inf, raised an error from deep inside, or ran without bound (minutes to hours, or
tens of gigabytes) before these checks existed.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

import pydp_core as dp
from pydp_core import manifolds as M

S2 = M.Sphere(2)
P = np.array([1.0, 0.0, 0.0])


@pytest.mark.parametrize("method", ["normal", "laplace", "logistic"])
def test_samplers_refuse_a_scale_whose_draws_overflow(method):
    with pytest.raises(ValueError, match="scale must be at most"):
        getattr(dp.Random(1), method)(scale=1e308, size=8)
    x = getattr(dp.Random(1), method)(scale=1e300, size=10_000)
    assert np.isfinite(x).all()


def test_frechet_mean_needs_an_iteration():
    with pytest.raises(ValueError, match="max_iter"):
        M.frechet_mean(S2, np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), max_iter=0)


def test_metropolis_hastings_work_is_bounded_up_front():
    with pytest.raises(ValueError, match="steps"):
        M.RiemannianGaussian(S2, P, 0.5).sample_mh(10, steps=2**31, rng=dp.Random(1))


def test_monte_carlo_mu_refuses_an_impossible_allocation_up_front():
    with pytest.raises(ValueError, match="n_eps"):
        M.gdp_mu(S2, sigma=1.0, sensitivity=1.0, method="monte_carlo", n_eps=2**31)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000])
def test_a_deeply_nested_accountant_document_is_a_value_error(text):
    with pytest.raises(ValueError, match="nested too deeply"):
        dp.Accountant.from_json(text)
    assert json.loads("[1]") == [1]


@pytest.mark.parametrize("method", ["normal", "laplace", "logistic", "exponential"])
def test_float32_draws_refuse_a_scale_beyond_their_range(method):
    """float32 output is limited in proportion to its range (scale 1e38 gave inf); 1e30 stays finite."""
    with pytest.raises(ValueError, match="scale must be at most 1e\\+30 for float32"):
        getattr(dp.Random(1), method)(scale=1e38, size=8, dtype=np.float32)
    x = getattr(dp.Random(1), method)(scale=1e30, size=100_000, dtype=np.float32)
    assert np.isfinite(x).all()


def test_gamma_refuses_shape_times_scale_beyond_the_range():
    """Gamma(1e308, scale 2) gave inf: the draws are about shape * scale."""
    with pytest.raises(ValueError, match="scale must be at most"):
        dp.Random(1).gamma(1e308, scale=2.0, size=4)
    with pytest.raises(ValueError, match="scale must be at most"):
        dp.Random(1).gamma(2.0, scale=np.array([1.0, 1e38]), size=2, dtype=np.float32)
    x = dp.Random(1).gamma(1e308, scale=1.0, size=4)
    assert np.isfinite(x).all() and np.all(np.abs(x / 1e308 - 1) < 1e-100)


def test_float32_location_and_bounds_must_fit_the_dtype():
    with pytest.raises(ValueError, match="loc must be within the range of float32"):
        dp.Random(1).normal(loc=1e39, size=3, dtype=np.float32)
    with pytest.raises(ValueError, match="low and high must be within the range of float32"):
        dp.Random(1).uniform(-1e39, 1e39, size=3, dtype=np.float32)
    assert np.isfinite(dp.Random(1).uniform(-3e38, 3e38, size=1000, dtype=np.float32)).all()


@pytest.mark.parametrize("kind", [dp.PureDP, dp.ApproxDP, dp.GDP, dp.ZCDP, dp.RaoDP])
def test_budget_compose_class_methods_check_their_list(kind):
    """``GDP.compose(GDP(1.0))`` raised "'GDP' object is not iterable", ``GDP.compose([])`` returned
    GDP(0), a budget of another type an AttributeError: the class methods now check like dp.compose."""
    one = {dp.PureDP: dp.PureDP(1.0), dp.ApproxDP: dp.ApproxDP(1.0, 1e-6), dp.GDP: dp.GDP(1.0),
           dp.ZCDP: dp.ZCDP(1.0), dp.RaoDP: dp.RaoDP(1.0)}[kind]
    other = dp.KLDP(1.0)
    with pytest.raises(TypeError, match="not a single"):
        kind.compose(one)
    with pytest.raises(ValueError, match="budgets must not be empty"):
        kind.compose([])
    with pytest.raises(TypeError, match=r"cannot compose .* with KLDP \(budgets\[1\]\)"):
        kind.compose([one, other])
    with pytest.raises(TypeError, match=r"budgets\[0\] is not a privacy budget"):
        kind.compose([1.0])
    assert kind.compose([one, one]) == dp.compose([one, one])


def test_euclidean_mu_and_sigma_refuse_an_overflowing_ratio():
    """On R^d mu = D / sigma and sigma = D / mu returned inf for extreme finite inputs."""
    with pytest.raises(ValueError, match="mu = sensitivity / sigma overflows"):
        M.gdp_mu(M.Euclidean(2), sigma=1e-300, sensitivity=1e300)
    with pytest.raises(ValueError, match="sigma = sensitivity / mu overflows"):
        M.gdp_sigma(M.Euclidean(2), mu=1e-300, sensitivity=1e300)
    # rounded up: the smallest double at or above the exact quotient of the two doubles
    for sigma, D in ((1e-300, 1.0), (3.0, 1.0), (0.1, 0.3), (2.0, 1.0)):
        mu = M.gdp_mu(M.Hyperbolic(1), sigma=sigma, sensitivity=D)
        exact = Fraction(D) / Fraction(sigma)
        assert Fraction(mu) >= exact and Fraction(math.nextafter(mu, 0.0)) < exact
        s = M.gdp_sigma(M.Euclidean(3), mu=sigma, sensitivity=D)
        assert Fraction(s) >= exact and Fraction(math.nextafter(s, 0.0)) < exact
