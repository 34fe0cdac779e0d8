"""Budgets, composition, conversions, subsampling and the Gaussian calibration by definition.

References are 50-digit mpmath evaluations of the formulas' sources (not of our code paths), and the
property tests check the one inequality every conversion must satisfy: for the Gaussian mechanism no
RDP or zCDP route may give an epsilon below the exact privacy-profile epsilon.
"""
import dataclasses
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pydp_core as pc


def mp_gauss_delta(eps, mu):
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


# ------------------------------------------------------------------------------------------------------
# value types
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, arg",
    [
        (lambda v: pc.PureDP(v), "epsilon"),
        (lambda v: pc.ApproxDP(v, 1e-5), "epsilon"),
        (lambda v: pc.ApproxDP(1.0, v), "delta"),
        (lambda v: pc.KLDP(v), "epsilon"),
        (lambda v: pc.MCDP(v, 1.0), "mu"),
        (lambda v: pc.MCDP(1.0, v), "tau"),
        (lambda v: pc.ZCDP(v), "rho"),
        (lambda v: pc.ZCDP(1.0, v), "xi"),
        (lambda v: pc.RDP(2.0, v), "epsilon"),
        (lambda v: pc.GDP(v), "mu"),
        (lambda v: pc.TCDP(v, 4.0), "rho"),
        (lambda v: pc.RaoDP(v), "theta"),
    ],
)
@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_bad_fields_name_the_argument(make, arg, bad):
    with pytest.raises(ValueError, match=arg):
        make(bad)


@pytest.mark.parametrize("alpha", [1.0, 0.5, -2.0, float("nan")])
def test_alpha_must_exceed_one(alpha):
    with pytest.raises(ValueError, match="alpha"):
        pc.RDP(alpha, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        pc.GDP(1.0).to_rdp(alpha)
    with pytest.raises(ValueError, match="omega"):
        pc.TCDP(1.0, alpha)


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError, match="epsilon"):
        pc.PureDP("1")
    with pytest.raises(TypeError, match="mu"):
        pc.GDP(True)
    with pytest.raises(TypeError, match="epsilon"):
        pc.PureDP([1.0, 2.0])
    with pytest.raises(ValueError, match="delta"):
        pc.ApproxDP(1.0, 1.5)


def test_immutable_and_value_semantics():
    b = pc.GDP(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.mu = 2.0
    assert pc.GDP(1) == pc.GDP(1.0) and hash(pc.GDP(1)) == hash(pc.GDP(1.0))
    assert isinstance(pc.GDP(1).mu, float)
    c = pc.RDPCurve([1.0, 2.0], [2.0, 4.0])
    with pytest.raises(AttributeError):
        c.foo = 1
    with pytest.raises(ValueError):
        c.epsilons[0] = 5.0  # read-only view


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3, 2.0, float("nan")])
def test_conversion_delta_must_be_open_unit_interval(delta):
    for b in (pc.GDP(1.0), pc.ZCDP(0.5), pc.RDP(3.0, 1.0)):
        with pytest.raises(ValueError, match="delta"):
            b.to_approx_dp(delta)


# ------------------------------------------------------------------------------------------------------
# composition (Anonymous 2022, Table 1)
# ------------------------------------------------------------------------------------------------------
def test_compose_table_1():
    assert pc.compose([pc.PureDP(0.5), pc.PureDP(0.25)]) == pc.PureDP(0.75)
    assert pc.compose([pc.ApproxDP(0.5, 1e-6), pc.ApproxDP(0.25, 2e-6)]) == pc.ApproxDP(0.75, 3e-6)
    assert pc.compose([pc.KLDP(0.5), pc.KLDP(0.25)]) == pc.KLDP(0.75)
    assert pc.compose([pc.MCDP(1.0, 3.0), pc.MCDP(2.0, 4.0)]) == pc.MCDP(3.0, 5.0)
    assert pc.compose([pc.ZCDP(0.5), pc.ZCDP(0.25)]) == pc.ZCDP(0.75)
    assert pc.compose([pc.ZCDP(0.5, 0.1), pc.ZCDP(0.25, 0.2)]).xi == pytest.approx(0.3, rel=1e-15)
    assert pc.compose([pc.RDP(3.0, 0.5), pc.RDP(3.0, 0.25)]) == pc.RDP(3.0, 0.75)
    assert pc.compose([pc.GDP(3.0), pc.GDP(4.0)]) == pc.GDP(5.0)
    assert pc.compose([pc.RaoDP(5.0), pc.RaoDP(12.0)]) == pc.RaoDP(13.0)
    t = pc.compose([pc.TCDP(0.1, 10.0), pc.TCDP(0.2, 5.0)])
    assert isinstance(t, pc.TCDP) and t.rho == pytest.approx(0.3, rel=1e-15) and t.omega == 5.0
    assert pc.compose(pc.GDP(1.0) for _ in range(4)) == pc.GDP(2.0)  # any iterable


def test_compose_rejects_mixing_and_unequal_alpha():
    with pytest.raises(TypeError, match="GDP"):
        pc.compose([pc.GDP(1.0), pc.RaoDP(1.0)])
    with pytest.raises(TypeError):
        pc.compose([pc.PureDP(1.0), pc.ApproxDP(1.0, 0.0)])
    with pytest.raises(ValueError, match="alpha"):
        pc.compose([pc.RDP(2.0, 1.0), pc.RDP(3.0, 1.0)])
    with pytest.raises(ValueError):
        pc.compose([])
    with pytest.raises(TypeError):
        pc.compose([pc.GDP(1.0), 3.0])


def test_rdp_curves_compose_pointwise():
    a = np.array([2.0, 4.0, 8.0])
    c1 = pc.RDPCurve([1.0, 2.0, 3.0], a)
    c2 = pc.RDPCurve(lambda al: 0.5 * al)
    total = pc.compose([c1, c2])
    assert total.is_grid and np.allclose(total.epsilons, [2.0, 4.0, 7.0])
    f = pc.compose([pc.GDP(1.0).to_rdp_curve(), pc.GDP(2.0).to_rdp_curve()])
    assert f(10.0) == pytest.approx(10.0 * 5.0 / 2, rel=1e-15)
    with pytest.raises(ValueError, match="alphas"):
        pc.compose([c1, pc.RDPCurve([1.0, 2.0], [2.0, 3.0])])
    # between grid points the curve is bounded by the next order (monotonicity), never interpolated
    assert c1(3.0) == 2.0 and c1(8.0) == 3.0 and math.isinf(c1(9.0))


# ------------------------------------------------------------------------------------------------------
# conversions
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha, rho, delta", [(2.0, 0.5, 1e-5), (8.0, 4.0, 1e-5), (64.0, 10.0, 1e-10), (1.5, 0.01, 0.3),
                                               (3.0, 2.0, 0.5), (40.0, 1.0, 0.9), (1.01, 0.001, 1e-300)])
def test_rdp_methods_against_mpmath(alpha, rho, delta):
    a, r, d = mp.mpf(alpha), mp.mpf(rho), mp.mpf(delta)
    mir = r + mp.log(1 / d) / (a - 1)
    bal = r + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)
    if a * d >= 1:
        aso = r + mp.log(1 - d)
    else:
        zeta = (1 / a) * (1 - 1 / a) ** (a - 1)
        aso = min(((a - 1) * r - mp.log(d / zeta)) / (a - 1), mp.log((mp.exp((a - 1) * r) - 1) / (a * d) + 1) / (a - 1))
    for name, ref in (("mironov", mir), ("balle2020", bal), ("asoodeh", aso)):
        got = pc.RDP(alpha, rho).to_approx_dp(delta, method=name).epsilon
        assert got == pytest.approx(float(max(ref, 0)), rel=1e-13, abs=1e-300)
    best = pc.RDP(alpha, rho).to_approx_dp(delta).epsilon
    assert best == pytest.approx(float(max(min(mir, bal, aso), 0)), rel=1e-13, abs=1e-300)


def test_rdp_method_name_is_checked():
    with pytest.raises(ValueError, match="method"):
        pc.RDP(2.0, 1.0).to_approx_dp(1e-5, method="best")


def test_zcdp_rule_paper_003():
    for rho, xi, delta in [(0.5, 0.0, 1e-5), (0.01, 0.2, 1e-12), (3.0, 0.0, 0.2)]:
        ref = mp.mpf(xi) + rho + 2 * mp.sqrt(rho * mp.log(1 / mp.mpf(delta)))
        assert pc.ZCDP(rho, xi).to_approx_dp(delta).epsilon == pytest.approx(float(ref), rel=1e-14)
        assert pc.ZCDP(rho, xi).to_approx_dp(delta, method="rdp").epsilon <= float(ref) * (1 + 1e-12)
    assert pc.ZCDP(0.3).to_rdp(5.0) == pc.RDP(5.0, 1.5)
    assert pc.GDP(2.0).to_rdp(3.0) == pc.RDP(3.0, 6.0)
    assert pc.GDP(2.0).to_zcdp() == pc.ZCDP(2.0)


@pytest.mark.parametrize("mu, delta", [(0.01, 1e-300), (0.01, 1e-3), (0.3, 1e-5), (1.0, 1e-5), (1.0, 0.5), (5.0, 1e-100), (20.0, 1e-300), (20.0, 0.5)])
def test_gdp_to_approx_dp_exact(mu, delta):
    eps = pc.GDP(mu).to_approx_dp(delta).epsilon
    # the returned epsilon meets delta (rounded up) and one part in 1e-10 less does not
    assert mp_gauss_delta(eps, mu) <= mp.mpf(delta) * (1 + mp.mpf(10) ** -13)
    if eps > 0:
        assert mp_gauss_delta(eps * (1 - 1e-10), mu) > delta
        assert pc.GDP(mu).delta(eps) == pytest.approx(delta, rel=1e-9)
    else:
        assert mp_gauss_delta(0, mu) <= delta


def test_puredp_conversions_against_randomised_response():
    for eps in (0.1, 1.0, 5.0):
        e = mp.mpf(eps)
        p = mp.exp(e) / (1 + mp.exp(e))
        for delta in (1e-9, 1e-3, 0.2):
            out = pc.PureDP(eps).to_approx_dp(delta)
            # the hockey-stick divergence of randomised response at the returned epsilon is <= delta
            hs = max(mp.mpf(0), p - mp.exp(out.epsilon) * (1 - p))
            assert hs <= mp.mpf(delta) * (1 + mp.mpf(10) ** -12)
            if out.epsilon > 0:
                assert p - mp.exp(out.epsilon * (1 - 1e-9)) * (1 - p) > delta
        assert pc.PureDP(eps).to_approx_dp(0.0) == pc.ApproxDP(eps, 0.0)
        # exact RDP of randomised response
        for alpha in (1.5, 2.0, 10.0, 100.0):
            a = mp.mpf(alpha)
            ref = mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
            got = pc.PureDP(eps).to_rdp(alpha).epsilon
            assert got == pytest.approx(float(ref), rel=1e-12)
            assert got <= min(eps, alpha * eps * eps / 2) * (1 + 1e-14)
        # to_gdp: G_mu meets the randomised-response trade-off at its symmetric point 1 / (1 + e^eps)
        mu = pc.PureDP(eps).to_gdp().mu
        x = 1 / (1 + mp.exp(e))
        assert mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * x) - mu) == pytest.approx(x, rel=1e-12)
    assert pc.PureDP(800.0).to_gdp().mu > 0  # no overflow far in the tail
    assert pc.PureDP(0.5).to_zcdp() == pc.ZCDP(0.125)


@pytest.mark.parametrize("alpha", [0.5, 1.0, -3.0, float("nan"), [2.0, 1.0]])
def test_puredp_rdp_epsilon_validates_alpha(alpha):
    # alpha = 0.5 used to return 0.240 and alpha = 1 NaN: orders <= 1 are not Renyi orders of RDP
    with pytest.raises(ValueError, match="alpha"):
        pc.PureDP(1.0).rdp_epsilon(alpha)
    with pytest.raises(ValueError, match="alpha"):
        pc.PureDP(0.0).rdp_epsilon(alpha)


def test_puredp_rdp_epsilon_shapes_and_infinite_order():
    assert pc.PureDP(1.0).rdp_epsilon(math.inf) == 1.0
    assert isinstance(pc.PureDP(1.0).rdp_epsilon(2.0), float)
    out = pc.PureDP(1.0).rdp_epsilon(np.array([2.0, math.inf]))
    assert out.shape == (2,) and out[1] == 1.0 and out[0] < 1.0


def test_rao_conversions_paper_000():
    assert pc.PureDP(0.7).to_rao_dp("laplace") == pc.RaoDP(0.7)  # Corollary 4.5
    assert pc.GDP(0.7).to_rao_dp("gaussian") == pc.RaoDP(0.7)  # Corollary 4.9, first part
    with pytest.raises(ValueError, match="mechanism"):
        pc.PureDP(0.7).to_rao_dp("gaussian")
    # Corollary 4.9, second part: the analytic calibration gives theta = psi = 1 / sigma
    b = pc.ApproxDP(0.5, 1e-5)
    theta = b.to_rao_dp("gaussian").theta
    assert theta == pytest.approx(1.0 / pc.gaussian_sigma(b), rel=1e-15)
    classic = b.to_rao_dp("gaussian", method="classic").theta
    assert classic == pytest.approx(0.5 / math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    assert classic < theta  # the classic calibration adds more noise than needed
    with pytest.warns(pc.PrivacyWarning):
        pc.ApproxDP(2.0, 1e-5).to_rao_dp("gaussian", method="classic")
    assert pc.RaoDP(0.4).to_gdp("gaussian") == pc.GDP(0.4)
    assert pc.RaoDP(0.4).to_pure_dp("laplace") == pc.PureDP(0.4)
    # the Laplace mechanism with b = 1/theta at delta: the exact Laplace profile
    lap = pc.RaoDP(2.0).to_approx_dp(0.1, mechanism="laplace").epsilon
    assert lap == pytest.approx(2.0 + 2 * math.log(0.9), rel=1e-12)


def test_tcdp_conversion_matches_bun_et_al():
    rho, omega, delta = 0.01, 50.0, 1e-6
    # Bun et al. 2018: rho + 2 sqrt(rho log(1/delta)) if log(1/delta) <= (omega-1)^2 rho, else at alpha = omega
    L = math.log(1 / delta)
    ref = rho + 2 * math.sqrt(rho * L) if (omega - 1) ** 2 * rho >= L else rho * omega + L / (omega - 1)
    got = pc.TCDP(rho, omega).to_approx_dp(delta, method="mironov").epsilon
    assert got == pytest.approx(ref, rel=1e-9)
    assert pc.TCDP(rho, omega).to_approx_dp(delta).epsilon <= got
    rho, omega = 0.5, 3.0  # the optimum is cut off at omega
    ref = rho * omega + L / (omega - 1)
    assert pc.TCDP(rho, omega).to_approx_dp(delta, method="mironov").epsilon == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        pc.TCDP(rho, omega).to_rdp(4.0)


def test_rdp_curve_takes_the_best_alpha():
    curve = pc.GDP(1.0).to_rdp_curve()
    e, a = curve.best_alpha(1e-5, method="mironov")
    # Mironov on alpha psi^2/2: optimum at alpha = 1 + sqrt(2 log(1/delta)) / psi
    L = math.log(1e5)
    assert a == pytest.approx(1 + math.sqrt(2 * L), rel=1e-4)
    assert e == pytest.approx(0.5 + math.sqrt(2 * L), rel=1e-9)
    grid = pc.RDPCurve([0.5 * x for x in range(2, 65)], list(range(2, 65)))
    eg, ag = grid.best_alpha(1e-5)
    assert ag in range(2, 65) and eg >= e - 1e-12 - 1.0  # a grid never beats the continuous optimum by much
    assert eg == pytest.approx(min(pc.RDP(x, 0.5 * x).to_approx_dp(1e-5).epsilon for x in range(2, 65)), rel=1e-14)


# ------------------------------------------------------------------------------------------------------
# the property test: RDP and zCDP routes never beat the exact profile of the Gaussian mechanism
# ------------------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(
    mu=st.floats(0.02, 15.0),
    log10_delta=st.floats(-300.0, math.log10(0.9)),
    alpha=st.floats(1.0001, 500.0),
)
def test_every_rdp_or_zcdp_route_is_at_least_exact(mu, log10_delta, alpha):
    delta = 10.0**log10_delta
    exact = pc.GDP(mu).to_approx_dp(delta).epsilon
    slack = 1e-12 * max(exact, 1.0)
    rdp = pc.GDP(mu).to_rdp(alpha)
    for m in pc.RDP_METHODS:
        assert rdp.to_approx_dp(delta, method=m).epsilon >= exact - slack
    assert pc.GDP(mu).to_zcdp().to_approx_dp(delta).epsilon >= exact - slack
    assert pc.GDP(mu).to_zcdp().to_approx_dp(delta, method="rdp").epsilon >= exact - slack
    assert pc.GDP(mu).to_rdp_curve().to_approx_dp(delta).epsilon >= exact - slack


@settings(max_examples=200, deadline=None)
@given(alpha=st.floats(1.0001, 1e4), rho=st.floats(0.0, 100.0), log10_delta=st.floats(-300.0, -1e-3))
def test_asoodeh_le_balle_le_mironov(alpha, rho, log10_delta):
    b = pc.RDP(alpha, rho)
    d = 10.0**log10_delta
    a, bb, m = (b.to_approx_dp(d, method=x).epsilon for x in ("asoodeh", "balle2020", "mironov"))
    assert a <= bb * (1 + 1e-14) + 1e-300
    assert bb <= m * (1 + 1e-14) + 1e-300


# ------------------------------------------------------------------------------------------------------
# advanced composition and subsampling (Variants of DP 2019)
# ------------------------------------------------------------------------------------------------------
def test_advanced_composition_forms():
    b = pc.ApproxDP(0.01, 1e-8)
    k, dp = 100, 1e-6
    drv = pc.advanced_composition(b, k, dp)
    L = math.log(1 / dp)
    assert drv.epsilon == pytest.approx(0.01 * math.sqrt(2 * k * L) + k * 0.01 * math.expm1(0.01), rel=1e-14)
    assert drv.delta == pytest.approx(k * 1e-8 + dp, rel=1e-14)
    dr = pc.advanced_composition(b, k, dp, form="dwork_roth")
    assert dr.epsilon == pytest.approx(2 * 0.01 * math.sqrt(2 * k * L), rel=1e-14)
    assert dr.epsilon >= drv.epsilon
    with pytest.raises(ValueError, match="drv"):
        pc.advanced_composition(pc.ApproxDP(0.5, 1e-8), 1000, dp, form="dwork_roth")
    # the moments-accountant row: a statement about classically calibrated Gaussians, checked exactly
    g = pc.ApproxDP(0.5, 1e-5)
    mom = pc.advanced_composition(g, 50, form="moments")
    assert mom.epsilon == pytest.approx(4 * 0.5 * math.sqrt(2 * 50 * math.log(1e5)), rel=1e-14) and mom.delta == 1e-5
    sigma = math.sqrt(2 * math.log(1.25e5)) / 0.5
    assert mom.epsilon >= pc.GDP(math.sqrt(50) / sigma).to_approx_dp(1e-5).epsilon
    with pytest.raises(ValueError, match="moments"):
        pc.advanced_composition(g, 10**9, form="moments")
    with pytest.raises(TypeError):
        pc.advanced_composition(pc.GDP(1.0), 3, 1e-6)
    with pytest.raises(ValueError, match="k"):
        pc.advanced_composition(b, 0, 1e-6)


def test_subsample_approx_dp():
    out = pc.subsample(pc.ApproxDP(1.0, 1e-6), 0.01)
    assert out.epsilon == pytest.approx(float(mp.log(1 + mp.mpf("0.01") * (mp.e - 1))), rel=1e-14)
    assert out.delta == pytest.approx(1e-8, rel=1e-15)
    assert pc.subsample(pc.ApproxDP(1.0, 1e-6), 1.0) == pc.ApproxDP(1.0, 1e-6)
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="rate"):
            pc.subsample(pc.ApproxDP(1.0, 1e-6), bad)


def _mp_sub(alpha, s, eps_j):
    s = mp.mpf(s)
    tot = 1 + sum(2 * s**j * mp.binomial(alpha, j) * mp.exp((j - 1) * mp.mpf(eps_j(j))) for j in range(2, alpha + 1))
    return mp.log(tot) / (alpha - 1)


def test_subsample_rdp_both_forms():
    s = 0.02
    # fixed form: one RDP(alpha, eps)
    out = pc.subsample(pc.RDP(10, 3.0), s)
    assert out.alpha == 10 and out.epsilon == pytest.approx(float(_mp_sub(10, s, lambda j: 3.0)), rel=1e-12)
    # curve form: eps(j) of a Gaussian mechanism, psi = 1
    curve = pc.GDP(1.0).to_rdp_curve()
    sub = pc.subsample(curve, s, alphas=[2, 5, 32])
    for a in (2, 5, 32):
        ref = _mp_sub(a, s, lambda j: j / 2.0)
        assert sub(float(a)) == pytest.approx(float(ref), rel=1e-12)
        # the curve form is never looser than the fixed form at the same order
        assert sub(float(a)) <= pc.subsample(pc.RDP(a, a / 2.0), s).epsilon * (1 + 1e-14)
    with pytest.raises(ValueError, match="integer"):
        pc.subsample(pc.RDP(2.5, 1.0), s)
    with pytest.raises(TypeError, match="zCDP"):
        pc.subsample(pc.ZCDP(1.0), s)


def test_subsample_tcdp_preconditions():
    rho, s = 0.01, 0.01
    omega = math.log(1 / s) / (2 * rho)
    out = pc.subsample(pc.TCDP(rho, omega), s)
    assert out.rho == pytest.approx(13 * s * s * rho, rel=1e-15)
    assert out.omega == pytest.approx(math.log(1 / s) / (4 * rho), rel=1e-15)
    with pytest.raises(ValueError, match="omega"):
        pc.subsample(pc.TCDP(rho, omega / 2), s)
    with pytest.raises(ValueError, match="rho"):
        pc.subsample(pc.TCDP(0.5, 1e6), s)
    with pytest.raises(ValueError, match="rate"):
        pc.subsample(pc.TCDP(rho, 1e6), 0.5)


# ------------------------------------------------------------------------------------------------------
# gaussian_sigma by definition (Variants of DP 2019's table)
# ------------------------------------------------------------------------------------------------------
def test_gaussian_sigma_by_definition():
    D = 2.0
    b = pc.ApproxDP(0.5, 1e-5)
    s = pc.gaussian_sigma(b, sensitivity=D)
    # the analytic sigma meets (eps, delta) and is minimal
    assert mp_gauss_delta(0.5, D / s) <= 1e-5 * (1 + 1e-12)
    assert mp_gauss_delta(0.5, D / (s * (1 - 1e-9))) > 1e-5
    classic = pc.gaussian_sigma(b, sensitivity=D, method="classic")
    assert classic == pytest.approx(D * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    assert classic > s
    with pytest.warns(pc.PrivacyWarning, match="epsilon < 1"):
        pc.gaussian_sigma(pc.ApproxDP(2.0, 1e-5), sensitivity=D, method="classic")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pc.gaussian_sigma(pc.ApproxDP(2.0, 1e-5), sensitivity=D)  # analytic: no warning
    assert pc.gaussian_sigma(pc.RDP(4.0, 0.5), sensitivity=D) == pytest.approx(D * math.sqrt(4.0 / 1.0), rel=1e-15)
    assert pc.gaussian_sigma(pc.ZCDP(0.5), sensitivity=D) == pytest.approx(D, rel=1e-15)
    assert pc.gaussian_sigma(pc.GDP(0.5), sensitivity=D) == pytest.approx(4.0, rel=1e-15)
    assert pc.gaussian_sigma(pc.RaoDP(0.25), sensitivity=D) == pytest.approx(8.0, rel=1e-15)
    # the calibrations are consistent with the conversions: sigma for RDP gives back that RDP
    assert pc.GDP(D / pc.gaussian_sigma(pc.RDP(4.0, 0.5), sensitivity=D)).to_rdp(4.0).epsilon == pytest.approx(0.5, rel=1e-14)
    # tCDP: the arsinh mechanism
    t = pc.TCDP(0.1, 20.0)
    A, sig = pc.arsinh_parameters(t, sensitivity=D)
    assert pytest.approx(8 * D * 20.0) == A and sig == pytest.approx(D * math.sqrt(8 / 0.1))
    # consistency with Variants of DP 2019's first phrasing: sigma^2 = D^2 / (2 rho0), rho = 16 rho0, omega = A / (8 D)
    rho0 = D**2 / (2 * sig**2)
    assert 16 * rho0 == pytest.approx(0.1) and pytest.approx(20.0) == A / (8 * D)
    assert pc.gaussian_sigma(t, sensitivity=D) == sig
    with pytest.raises(ValueError, match="sensitivity"):
        pc.gaussian_sigma(pc.GDP(1.0), sensitivity=-1.0)
    with pytest.raises(TypeError):
        pc.gaussian_sigma(pc.KLDP(1.0))


# ------------------------------------------------------------------------------------------------------
# agreement with the peer libraries where they compute the same quantity
# ------------------------------------------------------------------------------------------------------
def test_agreement_with_dp_accounting():
    dpa = pytest.importorskip("dp_accounting", reason="dp-accounting is not installed")
    from dp_accounting import gaussian_mechanism
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    for sigma in (0.5, 1.0, 3.0, 20.0):
        for delta in (1e-10, 1e-5, 1e-2):
            ours = pc.GDP(1.0 / sigma).to_approx_dp(delta).epsilon
            theirs = gaussian_mechanism.get_epsilon_gaussian(sigma, delta, tol=1e-14)
            assert ours == pytest.approx(theirs, rel=1e-8, abs=1e-12)
    # RDP -> DP: dp-accounting uses the Balle et al. 2020 bound
    for alpha, rho, delta in [(2.0, 0.3, 1e-5), (10.0, 2.0, 1e-8), (64.0, 5.0, 1e-6)]:
        theirs, _ = rdp_acc.compute_epsilon([alpha], [rho], delta)
        assert pc.RDP(alpha, rho).to_approx_dp(delta, method="balle2020").epsilon == pytest.approx(theirs, rel=1e-13)
    # subsampled Gaussian without replacement: theirs is Wang et al.'s tighter bound, ours Variants of DP 2019's
    orders = [2, 4, 8, 16, 32]
    for q, sigma in [(0.01, 1.0), (0.1, 2.0)]:
        theirs = rdp_acc._compute_rdp_sample_wor_gaussian(q, sigma, orders)
        ours = pc.subsample(pc.GDP(1.0 / sigma).to_rdp_curve(), q, alphas=orders)
        for a, t in zip(orders, theirs):
            assert ours(float(a)) >= t * (1 - 1e-10)
    del dpa


def test_agreement_with_autodp():
    pytest.importorskip("autodp", reason="autodp is not installed")
    from autodp import converter, dp_bank, rdp_bank

    for sigma in (0.5, 1.0, 3.0, 20.0):
        for delta in (1e-10, 1e-5, 1e-2):
            ours = pc.GDP(1.0 / sigma).to_approx_dp(delta).epsilon
            theirs = dp_bank.get_eps_ana_gaussian(sigma, delta)
            assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-9)
    for eps in (0.1, 1.0, 4.0):
        f = converter.puredp_to_rdp(eps)
        for alpha in (1.5, 2.0, 16.0):
            assert pc.PureDP(eps).to_rdp(alpha).epsilon == pytest.approx(f(alpha), rel=1e-10)
    # best-alpha Balle et al. 2020 conversion of the Gaussian RDP curve
    for sigma in (1.0, 5.0):
        rdp = lambda a, s=sigma: a / (2 * s * s)  # noqa: E731
        with warnings.catch_warnings():  # autodp's bracketing search warns inside scipy; not our code
            warnings.simplefilter("ignore", RuntimeWarning)
            theirs = converter.rdp_to_approxdp(rdp, BBGHS_conversion=True)(1e-6)
        ours = pc.RDPCurve(lambda a, s=sigma: np.asarray(a) / (2 * s * s)).to_approx_dp(1e-6, method="balle2020").epsilon
        assert ours == pytest.approx(theirs, rel=1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            theirs_m = converter.rdp_to_approxdp(rdp, BBGHS_conversion=False)(1e-6)
        ours_m = pc.RDPCurve(lambda a, s=sigma: np.asarray(a) / (2 * s * s)).to_approx_dp(1e-6, method="mironov").epsilon
        assert ours_m == pytest.approx(theirs_m, rel=1e-6)
        for alpha in (1.5, 7.0, 100.0):
            assert pc.GDP(1 / sigma).to_rdp(alpha).epsilon == pytest.approx(rdp_bank.RDP_gaussian({"sigma": sigma}, alpha), rel=1e-14)
    # pure DP -> (eps', delta): autodp uses log(e^eps - delta); the exact region of randomised response
    # (Kairouz et al.) is tighter, never looser
    for eps in (0.1, 1.0, 4.0):
        for delta in (1e-8, 1e-3):
            assert pc.PureDP(eps).to_approx_dp(delta).epsilon <= converter.puredp_to_approxdp(eps)(delta) + 1e-15
    # the Laplace mechanism: autodp converts its RDP; the exact Laplace profile is never looser
    for b in (0.5, 2.0):
        exact = pc.RaoDP(1 / b).to_approx_dp(1e-6, mechanism="laplace").epsilon
        assert exact <= dp_bank.get_eps_laplace(b, 1e-6) * (1 + 1e-12)


def test_rdp_conversions_valid_for_arbitrary_pairs():
    """Beyond the Gaussian: for random discrete pairs (P, Q) with D_alpha(P||Q) = rho, the hockey-stick
    divergence at the converted epsilon never exceeds delta (to rounding)."""
    rng = np.random.default_rng(20261121)
    worst = {m: -1.0 for m in pc.RDP_METHODS}
    for _ in range(3000):
        k = int(rng.integers(2, 5))
        P = rng.dirichlet(np.ones(k) * rng.uniform(0.05, 2.0))
        Q = rng.dirichlet(np.ones(k) * rng.uniform(0.05, 2.0))
        if (P < 1e-200).any() or (Q < 1e-200).any():
            continue
        a = float(rng.uniform(1.01, 30.0))
        with np.errstate(over="ignore"):
            rho = float(np.log(np.sum(P**a * Q ** (1 - a))) / (a - 1))
        if not np.isfinite(rho):
            continue
        rho = max(rho, 0.0)
        d = float(10 ** rng.uniform(-8.0, -1e-3))
        for m in pc.RDP_METHODS:
            eps = pc.RDP(a, rho).to_approx_dp(d, method=m).epsilon
            with np.errstate(over="ignore"):
                hs = float(np.sum(np.maximum(P - np.exp(eps) * Q, 0.0)))
            worst[m] = max(worst[m], (hs - d) / d)
    for m, w in worst.items():
        assert w <= 1e-9, m


def test_pure_dp_conversion_valid_for_arbitrary_pairs():
    """eps-DP -> (eps', delta): for random pairs with max |log P/Q| = eps, both hockey-stick divergences
    at e^eps' are at most delta (Kairouz et al.: randomised response is the worst case)."""
    rng = np.random.default_rng(7)
    for _ in range(2000):
        k = int(rng.integers(2, 6))
        P = rng.dirichlet(np.ones(k))
        Q = rng.dirichlet(np.ones(k))
        eps = float(np.max(np.abs(np.log(P / Q))))
        delta = float(10 ** rng.uniform(-6.0, -0.5))
        e2 = pc.PureDP(eps).to_approx_dp(delta).epsilon
        for A, B in ((P, Q), (Q, P)):
            assert float(np.sum(np.maximum(A - np.exp(e2) * B, 0.0))) <= delta * (1 + 1e-9)


def test_kernel_rejects_bad_input_as_second_line():
    acc = pc._core.accounting
    one = np.ones(3)
    with pytest.raises(ValueError, match="alpha"):
        acc.rdp_to_epsilon(np.array([2.0, 1.0, 3.0]), one, one * 0.1, acc.RdpMethod.mironov)
    with pytest.raises(ValueError, match="delta"):
        acc.rdp_to_epsilon(one * 2, one, np.array([0.1, 0.0, 0.1]), acc.RdpMethod.asoodeh)
    with pytest.raises(TypeError):  # the conversion is an enum: a raw integer code is not accepted
        acc.rdp_to_epsilon(one * 2, one, one * 0.1, 7)
    with pytest.raises(ValueError, match="mu"):
        acc.gdp_epsilon(np.array([np.nan]), np.array([0.1]))
    with pytest.raises(ValueError, match="delta"):
        acc.gdp_epsilon_scalar(1.0, 1.5)
