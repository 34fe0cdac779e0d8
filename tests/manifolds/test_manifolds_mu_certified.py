"""gdp_mu rounded toward the safe side: the exact mu is an
upper bound of the true mu, proven by an interval certificate over eps (docs/manifolds.md, Section 1),
and still accurate. References: 50-digit mpmath (tests/support/mpref.py: circle_parts, circle_mu,
mu_for_delta), the TV identity at eps = 0 on S^d and H^d, and the definition of delta."""
import math

import mpmath as mp
import numpy as np
import pytest
from support import mpref as R
from support import mpref_manifolds as mpm

from pydp_core import manifolds as M
from pydp_core.manifolds._gdp import mu_for_log_delta
from pydp_core.manifolds.certificate import _CERT_MAX_INFLATION, _certify_mu
from pydp_core.manifolds.loss import largest_loss
from pydp_core.manifolds.mu import _mu_exact
from pydp_core.manifolds.profile import _QUADRATURE_LOG_ERROR, _log_profile
from pydp_core.manifolds.profile_circle import _circle_log_error, _circle_log_pieces
from pydp_core.manifolds.profile_quadrature import _loss_log_complement
from pydp_core.manifolds.radial import RadialLaw

# sigma, D: moderate; tiny sigma (nearly Euclidean, mu = 100 and mu = 1000, the latter beyond the former
# bracket of mu_for_log_delta); large sigma; D near 0; D = pi (antipodal)
CIRCLE_MU_CASES = [(1.0, 1.0), (0.01, 1.0), (0.001, 1.0), (1000.0, 1.0), (1.0, 1e-12), (1.0, math.pi), (0.5, 1.0)]


@pytest.mark.parametrize("sigma,D", CIRCLE_MU_CASES)
def test_circle_mu_is_an_upper_bound_and_accurate(sigma, D):
    ref = R.circle_mu(sigma, D)
    got = M.gdp_mu(M.Circle(), sigma=sigma, sensitivity=D)
    assert mp.mpf(got) >= ref
    assert float((mp.mpf(got) - ref) / ref) <= 1e-9


def test_circle_mu_reference_agrees_with_the_definition():
    """circle_parts (arcs of the loss) against circle_delta (the integral of the definition)."""
    for eps, sigma, D in ((0.0, 1.0, 1.0), (0.7, 0.5, 2.0), (3.0, 1.0, math.pi)):
        d, c = R.circle_parts(eps, sigma, D)
        ref = R.circle_delta(eps, sigma, D)
        assert abs(d - ref) <= mp.mpf(10) ** -40
        assert abs(d + c - 1) <= mp.mpf(10) ** -40


@pytest.mark.parametrize("sigma,D", [(1.0, 1.0), (0.01, 1.0), (0.001, 3.0), (3.0, 1e-6), (1.0, math.pi)])
def test_circle_pieces_against_mpmath(sigma, D):
    """P1(L > eps), e^eps P1(L < -eps) and 1 - delta on S^1 in log space, within the circle's error bound,
    also where 1 - delta underflows a double (log(1 - delta) near -1e6)."""
    top = D * (2 * math.pi - D) / (2 * sigma**2)
    eps = np.array([0.0, 0.3 * top, 0.5 * top, 0.9 * top])
    la, lb, lc = _circle_log_pieces(eps, sigma, D)
    tol = _circle_log_error(sigma)
    for k, e in enumerate(eps):
        d, c = R.circle_parts(float(e), sigma, D)
        with mp.workdps(70):
            assert abs(lc[k] - float(mp.log(c))) <= tol
            if d > 0 and lb[k] - la[k] < math.log(0.5):  # where the certificate uses P1(L > eps) - e^eps P1(L < -eps)
                assert abs(la[k] + math.log1p(-math.exp(lb[k] - la[k])) - float(mp.log(d))) <= 3 * tol


@pytest.mark.parametrize("man,kind,sigma,eps", [
    (M.Sphere(2), "S", 0.1, 0.5), (M.Sphere(3), "S", 0.15, 0.0), (M.Hyperbolic(2), "H", 0.15, 1.0),
])
def test_loss_complement_against_mpmath(man, kind, sigma, eps):
    """1 - delta on S^d and H^d from its own quadrature, where delta is within 1e-3 of 1 (1 - U in double
    would keep only a few digits)."""
    D = 1.0
    with mp.workdps(40):
        U, L = (mpm.tails_s2(eps, sigma, D) if man.dim == 2 and kind == "S" else mpm.tails(eps, sigma, D, kind, man.dim))
        ref = mp.log(1 - U + mp.exp(eps) * L)
    got = float(_loss_log_complement(RadialLaw(man, sigma, False), D, np.array([eps]))[0])
    assert float(ref) < -4.6  # delta within 1e-2 of 1 here
    assert abs(got - float(ref)) <= _QUADRATURE_LOG_ERROR * max(1.0, abs(float(ref)))


@pytest.mark.parametrize("man,kind,sigma", [
    (M.Sphere(2), "S", 1.0), (M.Sphere(3), "S", 1.0), (M.Hyperbolic(2), "H", 1.0), (M.Hyperbolic(3), "H", 2.0),
])
@pytest.mark.parametrize("shift", [1e-12, 1e-6])
def test_small_shift_mu_is_an_upper_bound(man, kind, sigma, shift):
    """At small shifts the supremum sits at eps -> 0: mu >= 2 Phi^-1((1 + TV)/2) (the mpmath TV) and within
    1e-8 of it."""
    D = shift * sigma
    with mp.workdps(40):
        U, L = mpm.tails(0, sigma, D, kind, man.dim) if not (kind == "S" and man.dim == 2) else mpm.tails_s2(0, sigma, D)
        ref = 2 * mp.sqrt(2) * mp.erfinv(U - L)
    got = M.gdp_mu(man, sigma=sigma, sensitivity=D)
    assert mp.mpf(got) >= ref
    assert float(mp.mpf(got) / ref - 1) <= 1e-8


def test_certificate_refuses_an_underestimate():
    """The certificate proves delta <= delta_(mu_up) over all eps: fed an estimate 5e-2 below the true mu
    (more than the largest inflation it tries), it raises rather than return a value below mu; fed one
    1e-3, 1e-5 or 1e-7 below, it returns a value at or above mu."""
    sigma, D = 1.0, 1.0
    ref = float(R.circle_mu(sigma, D))
    law = RadialLaw(M.Circle(), sigma, False)
    e = np.linspace(0.0, largest_loss(sigma, D), 40)
    ld = _log_profile(M.Circle(), e, sigma, D, law)[0]
    with pytest.raises(ArithmeticError, match="could not certify"):
        _certify_mu(M.Circle(), sigma, D, law, ref * (1 - 5e-2), 1.0, e, ld)
    for low in (1e-3, 1e-5, 1e-7):
        assert _certify_mu(M.Circle(), sigma, D, law, ref * (1 - low), 1.0, e, ld) >= ref


def test_mu_for_log_delta_beyond_500():
    """mu_eps above the former fixed bracket end 500 (reached on S^1 and S^2 from sigma = 2e-3 at D = 1)."""
    for mu in (600.0, 3000.0):
        eps = mu * mu / 2
        with mp.workdps(50):
            m, e = mp.mpf(mu), mp.mpf(eps)
            ld = float(mp.log(mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)))
        got = mu_for_log_delta(np.array([eps]), np.array([ld]))[0]
        assert abs(got / mu - 1) <= 1e-12


def test_gdp_sigma_meets_the_certified_target():
    for man, target in ((M.Circle(), 2.0), (M.Sphere(2), 0.8), (M.Hyperbolic(2), 1.5)):
        s = M.gdp_sigma(man, mu=target, sensitivity=1.0)
        assert M.gdp_mu(man, sigma=s, sensitivity=1.0) <= target
        assert M.gdp_mu(man, sigma=s * (1 - 1e-7), sensitivity=1.0) > target


@pytest.mark.parametrize("man,kind,sigma,D,close", [
    (M.Sphere(3), "S", 0.1, 3.14, True), (M.Sphere(5), "S", 0.1, 3.14, False), (M.Hyperbolic(2), "H", 0.1, 1.0, True),
])
def test_flat_profile_mu_certified_above_the_tv_bound(man, kind, sigma, D, close):
    """Small sigma, large shift: delta is within 1e-50 of 1 over a long range of eps and mu_eps is nearly
    flat. mu_eps there comes from the quadrature of 1 - delta (the search used to skip those eps, stayed
    below the sup, and the certificate rightly refused). mu >= mu_0 = 2 sqrt(2) erfinv(TV) from the
    80-digit TV; on S^3 and H^2 the sup sits at (or next to) eps = 0, so mu is also within 1e-7 of it."""
    with mp.workdps(80):
        U, L = mpm.tails(0, sigma, D, kind, man.dim)
        ref = 2 * mp.sqrt(2) * mp.erfinv(U - L)
    got = M.gdp_mu(man, sigma=sigma, sensitivity=D)
    assert mp.mpf(got) >= ref
    if close:
        assert float(mp.mpf(got) / ref - 1) <= 1e-7


def _mp_log_complement_h2(eps, sigma, D):
    """log(1 - delta(eps)) = log(P1(L <= eps) + e^eps P1(L < -eps)) on H^2 by mpmath, each tail integrated
    directly (P(d(eta2, y) <= r | t) = acos(c)/pi), so that values far below the double range (mass only
    beyond D/2, hundreds of sigma out) keep their digits. Breakpoints at the kinks D/2 -+ q/D, where the
    tails start, and geometric steps of sigma^2 / kink after them."""
    eps, sigma, D = mp.mpf(eps), mp.mpf(sigma), mp.mpf(D)

    def f(t):
        return mp.exp(-t * t / (2 * sigma**2)) * mp.sinh(t)

    def p_near(t, r):
        c = (mp.cosh(t) * mp.cosh(D) - mp.cosh(r)) / (mp.sinh(t) * mp.sinh(D))
        return mp.acos(max(min(c, 1), -1)) / mp.pi

    q = sigma**2 * eps
    top = 12 + 30 * sigma

    def after(k):
        return sorted({k, top} | {x for x in (k + sigma**2 / k * 2**j for j in range(-4, 14)) if x < top})

    inside = mp.quad(lambda t: f(t) * p_near(t, mp.sqrt(t * t + 2 * q)), after(D / 2 - q / D))
    below = mp.quad(lambda t: f(t) * p_near(t, mp.sqrt(t * t - 2 * q)), after(D / 2 + q / D))
    Z = mp.quad(f, [0] + [sigma * 2**j for j in range(7)] + [top])
    return mp.log(inside + mp.exp(eps) * below) - mp.log(Z)


@pytest.mark.parametrize("sigma,D,eps", [(0.1, 1.0, 10.0), (0.003, 3.1, 0.0), (0.003, 3.1, 1e5)])
def test_hyperbolic_complement_beyond_the_radial_range(sigma, D, eps):
    """On H^d the quadrature reaches D/2 + q/D however far that is beyond the radial law's own range: at
    sigma = 0.003, D = 3.1, 1 - delta(0) = e^-133479 comes only from distances beyond D/2, 500 sigma out
    (it was 0, log -inf, and the certificate of mu could not close)."""
    with mp.workdps(30):
        ref = _mp_log_complement_h2(eps, sigma, D)
    got = _loss_log_complement(RadialLaw(M.Hyperbolic(2), sigma, False), D, np.array([eps]))[0]
    assert abs(mp.mpf(got) - ref) <= 1e-9, (got, mp.nstr(ref, 17))


def test_hyperbolic_mu_certified_at_a_shift_beyond_the_radial_range():
    """gdp_mu on H^2 at sigma = 0.003, D = 3.1 (mu near 1033) is certified and at least mu_0, the mu of the
    Gaussian mechanism with the same 1 - delta(0) = 2 Phi(-mu_0 / 2) (the sup over eps is at least the
    value at eps = 0)."""
    sigma, D = 0.003, 3.1
    with mp.workdps(30):
        lc0 = _mp_log_complement_h2(0, sigma, D)
        mu0 = mp.findroot(lambda m: mp.log(2 * mp.ncdf(-m / 2)) - lc0, 2 * D / sigma / 2 * 2)
    got = M.gdp_mu(M.Hyperbolic(2), sigma=sigma, sensitivity=D)
    est = _mu_exact(M.Hyperbolic(2), sigma, D, certify=False)
    assert mp.mpf(got) >= mu0
    assert est <= got <= est * (1 + _CERT_MAX_INFLATION)
