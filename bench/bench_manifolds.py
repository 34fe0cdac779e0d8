"""Manifold GDP: speed figures, each measured against a baseline in the same run.

- exact mu on Sphere(2) (goal < 50 ms), checked against the mpmath total-variation reference; and at
  sigma = 0.01 (nearly Gaussian, the certificate's costliest regime; goal < 5 s);
- Algorithm 2 with the paper's parameters n = 1000, n_eps = 1000, m = 100 on Sphere(2) (goal < 1 s),
  against the paper's n x n_eps double loop for the counting step; the interval must cover exact mu;
- exact Riemannian Gaussian sampling on Sphere(2) (goal >= 1e7 points/s), with a KS check;
- Sphere.dist on batches against numpy running the same stable formula (goal >= 5x);
- the circle's privacy profile at 1000 epsilons (certified, rounded up) against scipy's textbook closed
  form of Corollary 3.2.1 (corrected, not rounded: it cancels near the largest loss), goal <= 20x its time.

Goals are printed and stored in ``benchmark.extra_info``; they are asserted only with timings on and
PYDP_ASSERT_SPEED=1 (the machine is shared: wall-clock figures are noisy). Run:
``pytest bench/bench_manifolds.py`` (timings) or ``--benchmark-disable`` (CI: correctness only).
"""
from __future__ import annotations

import math
import os
import time

import mpmath as mp
import numpy as np
from scipy import stats

import pydp_core as dp
from pydp_core import manifolds as M
from pydp_core.manifolds.loss import largest_loss

ASSERT_SPEED = os.environ.get("PYDP_ASSERT_SPEED", "") == "1"


def _best(fn, repeat: int, enabled: bool) -> float:
    best = math.inf
    for _ in range(repeat if enabled else 1):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _record(benchmark, name: str, value: float, goal_ok: bool) -> None:
    benchmark.extra_info[name] = value
    print(f"\n{name}: {value:.4g} (goal {'met' if goal_ok else 'NOT met'})")
    if ASSERT_SPEED and not benchmark.disabled:
        assert goal_ok, name


def _tv_reference_s2(sigma: float, D: float) -> float:
    """mu at eps = 0 on S^2 from a 30-digit mpmath integral (the supremum for these parameters)."""
    with mp.workdps(30):
        s, D = mp.mpf(sigma), mp.mpf(D)
        f = lambda t: mp.exp(-t * t / (2 * s * s)) * mp.sin(t)  # noqa: E731

        def p_far(t):  # P(d(eta2, y) > t | d(eta1, y) = t), phi uniform on [0, pi]
            c = (mp.cos(t) - mp.cos(t) * mp.cos(D)) / (mp.sin(t) * mp.sin(D))
            return 1 - mp.acos(max(min(c, 1), -1)) / mp.pi

        Z = mp.quad(f, [0, mp.pi])
        U = mp.quad(lambda t: f(t) * p_far(t), [0, D / 2, mp.pi - D / 2, mp.pi]) / Z
        tv = 2 * U - 1
        return float(2 * mp.sqrt(2) * mp.erfinv(tv))


def test_exact_mu_sphere2(benchmark):
    mu = benchmark(M.gdp_mu, M.Sphere(2), sigma=1.0, sensitivity=1.0)
    assert abs(mu - _tv_reference_s2(1.0, 1.0)) < 1e-8 * mu
    t = _best(lambda: M.gdp_mu(M.Sphere(2), sigma=1.0, sensitivity=1.0), 5, not benchmark.disabled)
    _record(benchmark, "exact_mu_sphere2_ms", t * 1e3, t < 0.05)


def test_exact_mu_sphere2_small_sigma(benchmark):
    """The nearly Gaussian case (sigma = 0.01, D = 0.05, mu near 5): the certificate's costliest regime on S^2.
    The value is at least the TV bound and within the documented 2e-3 of the search's estimate."""
    from pydp_core.manifolds import mu as P

    run = lambda: M.gdp_mu(M.Sphere(2), sigma=0.01, sensitivity=0.05)  # noqa: E731
    mu = benchmark.pedantic(run, rounds=1, iterations=1)
    est = P._mu_exact(M.Sphere(2), 0.01, 0.05, certify=False)
    assert mu >= _tv_reference_s2(0.01, 0.05) and est <= mu <= est * (1 + 2e-3)
    t = _best(run, 2, not benchmark.disabled)
    print(f"\nexact_mu_sphere2_sigma0.01: inflation over the estimate {mu / est - 1:.2e}")
    _record(benchmark, "exact_mu_sphere2_sigma0.01_s", t, t < 5.0)


def test_algorithm2_sphere2(benchmark):
    exact = M.gdp_mu(M.Sphere(2), sigma=1.0, sensitivity=1.0)
    run = lambda: M.gdp_mu(M.Sphere(2), sigma=1.0, sensitivity=1.0, method="monte_carlo", n=1000, m=100, n_eps=1000,  # noqa: E731
                           rng=dp.Random(11), progress=False)
    res = benchmark.pedantic(run, rounds=1, iterations=1)
    assert res.ci_low <= exact <= res.ci_high
    t = _best(run, 3, not benchmark.disabled)
    _record(benchmark, "algorithm2_sphere2_s", t, t < 1.0)
    # the counting step against the paper's double loop (numpy, vectorised over n per eps)
    rng = np.random.default_rng(0)
    losses = rng.normal(size=(100, 1000))
    thr = np.linspace(0, 3, 1001)
    t_ours = _best(lambda: dp._core.manifolds.mc_fractions(losses, thr), 3, True)

    def double_loop():
        out = np.empty((100, len(thr)))
        for j in range(100):
            for k, c in enumerate(thr):
                out[j, k] = np.count_nonzero(losses[j] >= c) / 1000
        return out

    t_loop = _best(double_loop, 1, True)
    np.testing.assert_array_equal(dp._core.manifolds.mc_fractions(losses, thr), double_loop())
    _record(benchmark, "counting_speedup_vs_double_loop", t_loop / t_ours, t_loop / t_ours > 10)


def test_sampling_sphere2(benchmark):
    g = M.RiemannianGaussian(M.Sphere(2), [0.0, 0.0, 1.0], 0.5)
    r = dp.Random(1)
    n = 2_000_000
    y = benchmark.pedantic(lambda: g.sample(n, rng=r), rounds=1, iterations=1)
    t = np.asarray(M.Sphere(2).dist(g.footpoint, y[:100_000]))
    assert stats.kstest(t, g.radial_cdf).pvalue > 1e-6
    secs = _best(lambda: g.sample(n, rng=r), 3, not benchmark.disabled)
    rate = n / secs
    # baseline in the same run: numpy's normal generator filling the same number of doubles
    npg = np.random.default_rng(0)
    base = _best(lambda: npg.standard_normal(3 * n), 3, not benchmark.disabled)
    benchmark.extra_info["numpy_normal_3n_s"] = base
    _record(benchmark, "gaussian_sphere2_points_per_s", rate, rate >= 1e7)


def _numpy_sphere_dist(x, y):
    """The same formula as the C++ kernel, in numpy: residual of y orthogonal to x, projected twice."""
    xx = np.einsum("ij,ij->i", x, x)
    xy = np.einsum("ij,ij->i", x, y)
    r = y - (xy / xx)[:, None] * x
    r -= (np.einsum("ij,ij->i", x, r) / xx)[:, None] * x
    return np.arctan2(np.sqrt(xx * np.einsum("ij,ij->i", r, r)), xy)


def test_sphere_dist_vs_numpy(benchmark):
    rng = np.random.default_rng(2)
    n = 1_000_000
    x = rng.normal(size=(n, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.normal(size=(n, 3))
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    S = M.Sphere(2)
    got = benchmark(S.dist, x, y)
    np.testing.assert_allclose(got, _numpy_sphere_dist(x, y), rtol=1e-13, atol=1e-15)
    t_ours = _best(lambda: S.dist(x, y), 5, not benchmark.disabled)
    t_np = _best(lambda: _numpy_sphere_dist(x, y), 5, not benchmark.disabled)
    _record(benchmark, "sphere_dist_speedup_vs_numpy", t_np / t_ours, t_np / t_ours >= 5)


def _scipy_circle_profile(eps, sigma, D):
    """The corrected closed form P([a, b]) - e^eps P'([a, b]) with scipy's ndtr (docs/manifolds.md,
    Section 2): the uncertified baseline, which loses its digits near the largest loss."""
    from scipy.special import ndtr

    c = ndtr(math.pi / sigma) - ndtr(-math.pi / sigma)
    b = D / 2 - sigma**2 * eps / D
    a = sigma**2 * eps / (2 * math.pi - D) - math.pi + D / 2
    p = ndtr(b / sigma) - ndtr(a / sigma)
    q = (ndtr((D - np.maximum(a, D - math.pi)) / sigma) - ndtr((D - b) / sigma)
         + np.where(a < D - math.pi, ndtr(math.pi / sigma) - ndtr((2 * math.pi + a - D) / sigma), 0.0))
    return np.where(b > a, np.maximum((p - np.exp(eps) * q) / c, 0.0), 0.0)


def test_circle_profile_vs_scipy_closed_form(benchmark):
    sigma, D = 1.0, 1.0
    eps = np.linspace(0.0, largest_loss(sigma, D), 1000)
    got = benchmark(M.privacy_profile, M.Circle(), epsilon=eps, sigma=sigma, sensitivity=D)
    base = _scipy_circle_profile(eps, sigma, D)
    mid = base > 1e-3  # where the closed form keeps its digits
    np.testing.assert_allclose(got[mid], base[mid], rtol=1e-9)
    assert np.all(got[mid] >= base[mid] * (1 - 1e-12))
    t_ours = _best(lambda: M.privacy_profile(M.Circle(), epsilon=eps, sigma=sigma, sensitivity=D), 5, True)
    t_scipy = _best(lambda: _scipy_circle_profile(eps, sigma, D), 5, True)
    benchmark.extra_info["scipy_closed_form_s"] = t_scipy
    _record(benchmark, "circle_profile_1000_eps_time_ratio_vs_scipy", t_ours / t_scipy, t_ours / t_scipy <= 20)
