"""Extreme finite inputs and unbounded work get a clear, up-front error naming the argument.

Each case returned +-inf, raised an error from deep inside, or ran without bound (minutes to hours, or
tens of gigabytes) before these checks existed.
"""
from __future__ import annotations

import json

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
