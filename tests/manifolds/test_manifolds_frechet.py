"""Frechet means (Section 5), their sensitivity and the private release."""
import math

import numpy as np
import pytest
from scipy import optimize

import pydp_core as dp
from pydp_core import manifolds as M


def _ball_points(n, radius, rng):
    """The paper's Section 5.2 data: polar angle uniform on [0, radius], uniform azimuth, around e3."""
    th = rng.uniform(0, radius, n)
    ph = rng.uniform(0, 2 * math.pi, n)
    return np.column_stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)])


def test_frechet_mean_sphere_matches_direct_minimisation():
    rng = np.random.default_rng(1)
    x = _ball_points(10, math.pi / 8, rng)
    S = M.Sphere(2)
    got = M.frechet_mean(S, x)

    def cost(a):
        p = np.array([math.sin(a[0]) * math.cos(a[1]), math.sin(a[0]) * math.sin(a[1]), math.cos(a[0])])
        return float(np.sum(S.dist(p, x) ** 2))

    res = optimize.minimize(cost, [0.1, 0.1], method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-15})
    a = res.x
    ref = np.array([math.sin(a[0]) * math.cos(a[1]), math.sin(a[0]) * math.sin(a[1]), math.cos(a[0])])
    assert S.dist(got, ref) < 1e-6
    # first-order condition: the mean of the logs vanishes
    assert np.linalg.norm(S.log(got, x).mean(axis=0)) < 1e-12


def test_frechet_mean_circle_and_hyperbolic():
    C = M.Circle()
    x = np.array([3.0, -3.0, 3.1])  # straddles the branch cut at pi
    m = M.frechet_mean(C, x)
    assert abs(np.mean(C.log(m, x))) < 1e-12
    assert C.dist(m, math.pi) < 0.2
    H = M.Hyperbolic(2)
    pts = M.RiemannianGaussian(H, [math.cosh(1.0), math.sinh(1.0), 0.0], 0.3).sample(20, rng=dp.Random(4))
    mh = M.frechet_mean(H, pts)
    g = H.log(mh, pts).mean(axis=0)
    assert np.sqrt(max(-g[0] ** 2 + g[1:] @ g[1:], 0)) < 1e-12
    np.testing.assert_allclose(M.frechet_mean(M.Euclidean(2), [[0, 0], [2, 4]]), [1, 2])


def test_frechet_mean_no_convergence_raises():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)  # spread over the whole sphere: no convex ball
    with pytest.raises(ArithmeticError):
        M.frechet_mean(M.Sphere(2), x, max_iter=3)


def test_sensitivity_section_5_value():
    # Corrected reference value: r = pi/8, n = 10, kappa = 1 gives D = 0.1214602
    assert abs(M.frechet_mean_sensitivity(math.pi / 8, 10, 1.0) - 0.1214602) < 5e-8
    assert M.frechet_mean_sensitivity(0.5, 4, 0.0) == 2 * 0.5 / 4
    assert M.frechet_mean_sensitivity(0.5, 4, -1.0) == 2 * 0.5 / 4
    with pytest.raises(ValueError):
        M.frechet_mean_sensitivity(math.pi / 4, 10, 1.0)
    with pytest.raises(ValueError):
        M.frechet_mean_sensitivity(-1.0, 10, 1.0)


def test_private_frechet_mean_routes():
    rng = np.random.default_rng(2)
    x = _ball_points(10, math.pi / 8, rng)
    S = M.Sphere(2)
    g = M.private_frechet_mean(S, x, radius=math.pi / 8, mu=1.0, rng=dp.Random(1))
    assert g.mechanism == "gaussian" and g.mu == 1.0
    assert abs(np.linalg.norm(g.release) - 1) < 1e-12
    assert M.gdp_mu(S, sigma=g.sigma, sensitivity=g.sensitivity) <= 1.0
    lap = M.private_frechet_mean(S, x, radius=math.pi / 8, mu=1.0, mechanism="laplace", rng=dp.Random(1))
    assert lap.epsilon == pytest.approx(M.mu_to_epsilon(1.0))
    assert lap.sigma == pytest.approx(lap.sensitivity / lap.epsilon)
    with pytest.raises(ValueError, match="exactly one"):
        M.private_frechet_mean(S, x, radius=math.pi / 8)
    with pytest.raises(ValueError, match="ball"):
        M.private_frechet_mean(S, x, radius=0.01, mu=1.0)
