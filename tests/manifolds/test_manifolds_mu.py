"""The privacy parameter mu on manifolds: corrected reference values, independent mpmath references of
the one-dimensional reduction, the Euclidean identity, Algorithm 2's coverage, conversions."""
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from support import mpref_manifolds as mpm

import pydp_core as dp
from pydp_core import _core
from pydp_core import manifolds as M
from pydp_core._logspace import lse_groups
from pydp_core.manifolds._gdp import _log_delta_mu
from pydp_core.manifolds.mu import _eps_range
from pydp_core.manifolds.profile import _log_profile
from pydp_core.manifolds.profile_quadrature import _beta_cdf, _loss_tails, _piece_nodes, _t_pieces, _tail_sums, _tail_terms
from pydp_core.manifolds.radial import RadialLaw

CIRCLE_REF = {0.5: 1.9999994776, 1.0: 0.9831692148, 2.0: 0.3623900942, 4.0: 0.1002499798}


@pytest.mark.parametrize("sigma", sorted(CIRCLE_REF))
def test_circle_reference_values(sigma):
    assert abs(M.gdp_mu(M.Circle(), sigma=sigma, sensitivity=1.0) - CIRCLE_REF[sigma]) < 1e-8
    assert abs(M.gdp_mu(M.Sphere(1), sigma=sigma, sensitivity=1.0) - CIRCLE_REF[sigma]) < 1e-8


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.5])
def test_circle_profile_against_direct_integral(eps):
    got = M.privacy_profile(M.Circle(), epsilon=eps, sigma=1.0, sensitivity=1.0)
    ref = mpm.circle_delta_direct(eps, 1.0, 1.0)
    assert ref <= got <= float(ref) * (1 + 3e-11)  # rounded up by at most the documented error bound


def test_circle_profile_zero_beyond_eps_max():
    sigma, D = 0.8, 1.0
    emax = D * (2 * math.pi - D) / (2 * sigma**2)
    assert M.privacy_profile(M.Circle(), epsilon=emax * 1.0001, sigma=sigma, sensitivity=D) == 0.0
    assert M.privacy_profile(M.Circle(), epsilon=emax * 0.99, sigma=sigma, sensitivity=D) > 0.0


@pytest.mark.parametrize("man,kind,sigma,eps", [
    (M.Hyperbolic(2), "H", 1.0, 0.0), (M.Hyperbolic(2), "H", 0.7, 1.5), (M.Hyperbolic(3), "H", 1.2, 0.4),
    (M.Sphere(3), "S", 0.9, 0.3), (M.Sphere(3), "S", 2.0, 0.0),
])
def test_profile_other_spaces_against_mpmath(man, kind, sigma, eps):
    with mp.workdps(30):
        U, L = mpm.tails(eps, sigma, 1.0, kind, man.dim)
        ref = U - mp.exp(eps) * L
    got = M.privacy_profile(man, epsilon=eps, sigma=sigma, sensitivity=1.0)
    assert ref <= got <= float(ref) * (1 + 2e-9)  # rounded up by the 1e-9 bound, accurate to 1e-10


@pytest.mark.parametrize("sigma,eps", [(1.0, 0.0), (1.0, 0.7), (0.4, 2.0), (2.0, 0.1)])
def test_sphere_profile_against_mpmath(sigma, eps):
    with mp.workdps(30):
        U, L = mpm.tails_s2(eps, sigma, 1.0)
        ref = U - mp.exp(eps) * L
    got = M.privacy_profile(M.Sphere(2), epsilon=eps, sigma=sigma, sensitivity=1.0)
    assert ref <= got <= float(ref) * (1 + 2e-9)  # rounded up by the 1e-9 bound, accurate to 1e-10


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_sphere_mu_against_mpmath(sigma):
    """mu on S^2 to 1e-8: the supremum sits at eps -> 0 here, where mu = 2 Phi^-1((1 + TV)/2); the mpmath
    mu_eps at a few other eps must not exceed it (so the reference is the supremum)."""
    with mp.workdps(30):
        U, L = mpm.tails_s2(0, sigma, 1.0)
        tv = U - L
        ref = 2 * mp.sqrt(2) * mp.erfinv(tv)  # 2 Phi^-1((1 + tv)/2)
        for eps in (0.05, 0.5):
            u, l = mpm.tails_s2(eps, sigma, 1.0)
            delta = u - mp.exp(eps) * l
            g = lambda m: mp.ncdf(-eps / m + m / 2) - mp.exp(eps) * mp.ncdf(-eps / m - m / 2) - delta  # noqa: E731
            assert mp.findroot(g, ref) <= ref
    got = M.gdp_mu(M.Sphere(2), sigma=sigma, sensitivity=1.0)
    assert abs(got - float(ref)) <= 1e-8 * float(ref)


def test_quadrature_machinery_on_euclidean_plane():
    """The same 1-D reduction with S(t) = t (the plane) must reproduce the Gaussian mechanism exactly."""
    law = RadialLaw(M.Euclidean(2), 0.8, False)
    eps = np.array([0.0, 0.5, 2.0, 6.0])
    lu, ll = _loss_tails(law, 1.0, eps)
    got = np.exp(lu) - np.exp(eps + ll)
    mu = 1.0 / 0.8
    ref = [float(mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)) for e in eps]
    np.testing.assert_allclose(got, ref, rtol=1e-10)


@pytest.mark.parametrize("sigma", [0.25, 1.0, 3.7])
def test_euclidean_mu(sigma):
    """mu = D / sigma rounded up: the quotient of the doubles, or the next double above it."""
    for d, D in ((1, 1.0), (3, 1.0), (2, 2.5)):
        got = M.gdp_mu(M.Euclidean(d), sigma=sigma, sensitivity=D)
        assert got in (D / sigma, math.nextafter(D / sigma, math.inf))
        assert Fraction(got) >= Fraction(D) / Fraction(sigma)


def test_hyperbolic_mu_properties():
    mus = [M.gdp_mu(M.Hyperbolic(2), sigma=s, sensitivity=1.0) for s in (0.25, 0.5, 1.0)]
    assert mus[0] > mus[1] > mus[2]
    # locally Euclidean: at small sigma mu approaches D / sigma
    assert abs(mus[0] / 4.0 - 1.0) < 0.05
    assert M.gdp_mu(M.Hyperbolic(1), sigma=2.0, sensitivity=1.0) == 0.5  # H^1 is a line


def test_mu_dominates_profile():
    """The returned mu is the supremum: delta(eps) <= delta_mu(eps) on a fine eps grid (and tight)."""
    for man, sigma in [(M.Sphere(2), 0.7), (M.Hyperbolic(3), 0.9), (M.Circle(), 1.3)]:
        mu = M.gdp_mu(man, sigma=sigma, sensitivity=1.0)
        eps = np.linspace(0, 8, 161)
        ld, ok = _log_profile(man, eps, sigma, 1.0)
        bound = _log_delta_mu(eps, np.full(eps.shape, mu))
        live = ok & np.isfinite(ld)
        assert np.all(ld[live] <= bound[live] + 1e-9)
        assert np.max((ld - bound)[live]) > -1e-3  # touches somewhere


def test_privacy_profile_validation_and_gdp_sigma():
    with pytest.raises(ValueError):
        M.privacy_profile(M.Sphere(2), epsilon=-1.0, sigma=1.0)
    with pytest.raises(ValueError):
        M.gdp_mu(M.Sphere(2), sigma=1.0, sensitivity=4.0)  # sensitivity beyond pi
    with pytest.raises(ValueError):
        M.gdp_mu(M.Sphere(2), sigma=0.0)
    with pytest.raises(ValueError):
        M.gdp_mu(M.Sphere(2), sigma=1.0, method="bogus")
    with pytest.raises(TypeError):
        M.gdp_mu("sphere", sigma=1.0)
    for man in (M.Sphere(2), M.Circle()):
        s = M.gdp_sigma(man, mu=0.5, sensitivity=0.3)
        assert M.gdp_mu(man, sigma=s, sensitivity=0.3) <= 0.5
        assert M.gdp_mu(man, sigma=s * (1 - 1e-6), sensitivity=0.3) > 0.5
    assert M.gdp_sigma(M.Euclidean(2), mu=0.5, sensitivity=1.0) == 2.0
    with pytest.raises(ValueError, match="not reachable"):
        M.gdp_sigma(M.Hyperbolic(2), mu=0.05, sensitivity=1.0)


def test_eps_mu_conversions():
    for eps in (0.1, 1.0, 5.0):
        mu = M.epsilon_to_mu(eps)
        ref = -2 * mp.sqrt(2) * mp.erfinv(2 / (1 + mp.exp(eps)) - 1)
        assert abs(mu - float(ref)) < 1e-12 * float(ref)
        assert abs(M.mu_to_epsilon(mu) - eps) < 1e-10 * eps


def _mu_reference(eps: float) -> float:
    """mu = -2 Phi^-1(1 / (1 + e^eps)) at 50 digits, solved in log space (erfinv near -1 loses digits)."""
    with mp.workdps(50):
        log_p = -mp.log1p(mp.exp(mp.mpf(eps)))
        x = mp.findroot(lambda t: mp.log(mp.ncdf(t)) - log_p, -mp.sqrt(2 * abs(log_p)))
        return float(-2 * x)


@pytest.mark.parametrize("eps", [1e-2, 0.3, 1.0, 7.5, 40.0, 102.17, 110.63, 300.0, 746.0])
def test_epsilon_to_mu_is_the_accounting_conversion(eps):
    """One formula: manifolds.epsilon_to_mu is PureDP.to_gdp, finite at eps = 746 (it was inf) and exact."""
    mu = M.epsilon_to_mu(eps)
    assert mu == dp.PureDP(eps).to_gdp().mu
    assert abs(mu - _mu_reference(eps)) < 1e-13 * mu


def test_epsilon_to_mu_at_746_agrees_with_accounting():
    assert M.epsilon_to_mu(746) == dp.PureDP(746).to_gdp().mu
    assert 77.0 < M.epsilon_to_mu(746) < 77.1


def test_mu_to_epsilon_is_the_inverse_to_1e_12():
    for eps in np.geomspace(1e-2, 746.0, 400):
        assert abs(M.mu_to_epsilon(M.epsilon_to_mu(eps)) - eps) <= 1e-12 * eps
    for mu in np.geomspace(1e-2, 77.0, 400):
        assert abs(M.epsilon_to_mu(M.mu_to_epsilon(mu)) - mu) <= 1e-12 * mu


# ------------------------------------------------------------------------------------------------------
# Algorithm 2
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("man,sigma", [(M.Sphere(2), 1.0), (M.Circle(), 2.0), (M.Hyperbolic(2), 0.8)])
def test_monte_carlo_ci_covers_exact(man, sigma):
    """The confidence interval covers the exact mu in at least 90% of 40 independent repeats."""
    exact = M.gdp_mu(man, sigma=sigma, sensitivity=1.0)
    hits = 0
    for rep in range(40):
        res = M.gdp_mu(man, sigma=sigma, sensitivity=1.0, method="monte_carlo", n=400, m=40, n_eps=200, rng=dp.Random(1000 + rep))
        assert res.ci_low <= res.mu <= res.ci_high and res.stderr > 0
        hits += res.ci_low <= exact <= res.ci_high
    assert hits >= 36, hits


def test_monte_carlo_result_object():
    res = M.gdp_mu(M.Sphere(2), sigma=0.8, sensitivity=1.0, method="monte_carlo", n=200, m=10, n_eps=50, rng=dp.Random(1))
    assert isinstance(res, M.MonteCarloMu)
    assert res.confidence_interval == (res.ci_low, res.ci_high)
    assert (res.n, res.m, res.n_eps) == (200, 10, 50)
    with pytest.raises(ValueError):
        M.gdp_mu(M.Sphere(2), sigma=0.8, method="monte_carlo", n=1)


def test_mc_fractions_kernel_matches_double_loop():
    rng = np.random.default_rng(0)
    losses = rng.normal(size=(5, 300))
    losses[0, :10] = 0.5  # ties at a threshold
    thr = np.array([-1.0, 0.0, 0.5, 2.0, 10.0])
    got = _core.manifolds.mc_fractions(losses, thr)
    ref = (losses[:, :, None] >= thr[None, None, :]).mean(axis=1)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("sigma", [0.01, 0.05, 0.1])
def test_circle_small_sigma_is_euclidean(sigma):
    """Wrap-around terms are below 1e-40 here, so mu = D/sigma; delta(0) rounds to 1 in double, and the
    eps where mu is ill-conditioned must not leak into the supremum."""
    assert abs(M.gdp_mu(M.Circle(), sigma=sigma, sensitivity=1.0) * sigma - 1.0) < 1e-10


@pytest.mark.parametrize("a", [0.5, 1.0, 2.0, 1.5, 3.0])
def test_beta_cdf_both_tails_against_mpmath(a):
    """I_x(a, a) of the S^d / H^d tails (closed forms for a = 1/2, 1, 2, scipy otherwise) keeps its relative
    accuracy at tiny x, near x = 1/2 and, through the complement argument, near x = 1."""
    tol = 1e-14 if a in (0.5, 1.0, 2.0) else 1e-12
    small = [1e-300, 1e-200, 1e-40, 1e-12, 1e-3, 0.1, 0.3, 0.5 - 1e-9, 0.5 - 2.0**-53, 0.5]
    for u in small:
        xc = 1.0 - u  # the doubles u and 1 - u; the reference takes exactly these arguments
        ref = mp.betainc(a, a, 0, mp.mpf(u), regularized=True)
        got = _beta_cdf(a, np.array([u]), np.array([xc]))[0]
        assert abs(got - float(ref)) <= tol * float(ref), (a, u, got, ref)
        # near 1 from the small complement argument: I_(1-u) = 1 - I_u, and the pair (1 - u, u) gives it
        up = _beta_cdf(a, np.array([xc]), np.array([u]))[0]
        assert abs(up - (1.0 - float(ref))) <= 2.0**-52 + tol * float(ref), (a, u, up)
    x = np.array([0.0, -1e-17, 0.25, 1.0, 1.0 + 1e-16])
    got = _beta_cdf(a, x, 1.0 - x)
    assert got[0] == 0.0 and got[1] == 0.0 and got[3] == 1.0 and got[4] == 1.0
    assert abs(got[2] - float(mp.betainc(a, a, 0, 0.25, regularized=True))) <= tol


@pytest.mark.parametrize("manifold, sigma, D", [(M.Sphere(2), 0.01, 1.0), (M.Sphere(3), 0.003, 3.1),
                                                (M.Hyperbolic(2), 0.01, 1.0), (M.Sphere(5), 0.1, 0.5)])
def test_tail_quadrature_skips_only_negligible_pieces(manifold, sigma, D):
    """The tail sums skip the pieces whose terms underflow in the log-sum-exp: the same sums as over every
    node, up to the order of the additions."""
    law = RadialLaw(manifold, sigma, False)
    eps = np.linspace(0.0, _eps_range(manifold, sigma, D) * 0.999, 60)
    for tails, got in ((("upper", "lower"), _tail_sums(law, D, eps, ("upper", "lower"))),
                       (("inside", "lower"), _tail_sums(law, D, eps, ("inside", "lower")))):
        row, lo, hi = _t_pieces(law, D, eps, reach="inside" in tails)
        t, lw = _piece_nodes(law, lo, hi)
        q = sigma * sigma * eps[row][:, None]
        for tail, value in zip(tails, got):
            full = lse_groups(_tail_terms(law, D, q, t, lw, tail), row)
            fin = np.isfinite(full)
            assert np.array_equal(np.isfinite(value), fin) and np.array_equal(value[~fin], full[~fin])
            np.testing.assert_allclose(value[fin], full[fin], rtol=1e-14, atol=0)
