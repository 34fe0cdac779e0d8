"""The claims of Jiang et al. 2023 (Figure 1), checked with exact mu and seeded simulations.

PYDP_FULL=1 runs the paper's sizes (1000 repetitions per sigma); the default is a reduced run whose
statistical comparisons still have a fixed false-alarm rate (one-sided z test at alpha = 1e-6).
"""
import math
import os

import numpy as np
import pytest

import pydp_core as dp
from pydp_core import manifolds as M

FULL = os.environ.get("PYDP_FULL", "") == "1"


def test_circle_mu_below_euclidean_at_large_sigma():
    for k in range(8, 17):  # sigma = 2 .. 4
        s = k / 4
        assert M.gdp_mu(M.Circle(), sigma=s, sensitivity=1.0) < M.gdp_mu(M.Euclidean(1), sigma=s, sensitivity=1.0)


def test_circle_close_to_euclidean_at_small_sigma():
    for k in (1, 2):
        s = k / 4
        assert abs(M.gdp_mu(M.Circle(), sigma=s, sensitivity=1.0) * s - 1.0) < 1e-3


def test_algorithm2_overestimates_at_small_sigma_but_ci_is_honest():
    """The paper's Algorithm 2 estimate is biased upward at small sigma (Figure 1, panel 1)."""
    exact = M.gdp_mu(M.Circle(), sigma=0.25, sensitivity=1.0)
    res = M.gdp_mu(M.Circle(), sigma=0.25, sensitivity=1.0, method="monte_carlo", n=1000, m=100, n_eps=1000, rng=dp.Random(9))
    assert res.mu > exact
    assert res.ci_low <= exact <= res.ci_high


@pytest.mark.parametrize("k", [2, 6, 12])
def test_gaussian_beats_laplace_on_s2(k):
    """Section 5.2: at the same mu, the Riemannian Gaussian's release is closer to the Frechet mean."""
    reps = 1000 if FULL else 150
    S = M.Sphere(2)
    D = M.frechet_mean_sensitivity(math.pi / 8, 10, 1.0)
    sigma = k / 4 * D
    mu = M.gdp_mu(S, sigma=sigma, sensitivity=D)
    eps = M.mu_to_epsilon(mu)
    rng = np.random.default_rng(100 + k)
    r = dp.Random(200 + k)
    eg, el = [], []
    for _ in range(reps):
        th = rng.uniform(0, math.pi / 8, 10)
        ph = rng.uniform(0, 2 * math.pi, 10)
        x = np.column_stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)])
        mean = M.frechet_mean(S, x)
        eg.append(S.dist(mean, M.RiemannianGaussian(S, mean, sigma).sample(rng=r)))
        el.append(S.dist(mean, M.RiemannianLaplace(S, mean, D / eps).sample(rng=r)))
    eg, el = np.array(eg), np.array(el)
    diff = el - eg
    z = diff.mean() / (diff.std(ddof=1) / math.sqrt(reps))
    assert z > 4.75  # one-sided, alpha = 1e-6
