"""Certified PLDs of the discrete Gaussian, truncated and user-defined families; GDP, ROC and budget
queries; the accountant's PLD route. Every interval must contain an independent reference: the release
path's exact discrete-Gaussian profile, mpmath sums and integrals (tests/support/mpref.py), exact GDP.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import mpref as REF

import pydp_core as pc
from pydp_core import release
from pydp_core.accounting import gdp as G
from pydp_core.accounting.pld import PLD, Interval
from pydp_core.noise import Gaussian, Laplace, LogConcaveFamily, Logistic, Subbotin, Truncated


def _inside(iv: Interval, truth, slack: float = 0.0) -> bool:
    return iv.lower - slack <= truth <= iv.upper + slack


# ----- discrete Gaussian ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma2,D", [(0.3, 1), (1, 1), (4, 1), (4, 3), (100, 2), (1e6, 1), (2.5e9, 7)])
def test_discrete_gaussian_contains_release_profile(sigma2, D):
    pld = PLD.from_discrete_gaussian(sigma2=sigma2, sensitivity=D)
    top = D * D / (2.0 * sigma2)  # L(y) = D (2 y - D) / (2 sigma2): eps of interest up to a few times this
    for e in [0.0, 1e-3, 0.1 * top, 0.5 * top, top, 3.0 * top, 10.0 * top + 1.0]:
        truth = release.discrete_gaussian_delta(epsilon=e, sigma2=sigma2, shift=D)
        iv = pld.delta(e)
        # The library's profile is accurate to ~1e-14 relative.
        assert _inside(iv, truth, 1e-13 * truth), (sigma2, D, e, iv, truth)


def test_discrete_gaussian_tiny_delta():
    pld = PLD.from_discrete_gaussian(sigma2=4, sensitivity=1)
    for e, below in [(10.0, 1e-80), (15.0, 1e-180), (18.0, 1e-270)]:
        truth = release.discrete_gaussian_delta(epsilon=e, sigma2=4, shift=1)
        assert 0.0 < truth < below
        iv = pld.delta(e)
        assert _inside(iv, truth, 1e-12 * truth), (e, iv, truth)
        assert iv.upper - iv.lower <= 1e-6 * truth  # exact atoms: relative precision in the deep tail


def _dgauss_atoms(sigma2, D, q, remove):
    """(loss, P-mass) of the sampled discrete-Gaussian pair in mpmath, the pmf summed directly."""
    s2 = mp.mpf(sigma2)
    span = int(10 * math.sqrt(sigma2)) + 10  # the mass beyond is below e^-50
    ys = range(-span, span + D + 1)
    z = mp.fsum(mp.exp(-mp.mpf(y) ** 2 / (2 * s2)) for y in range(-span - D, span + 2 * D + 1))
    out = []
    for y in ys:
        n0 = mp.exp(-mp.mpf(y) ** 2 / (2 * s2)) / z
        n1 = mp.exp(-mp.mpf(y - D) ** 2 / (2 * s2)) / z
        mix = (1 - q) * n0 + q * n1
        P, Q = (mix, n0) if remove else (n0, mix)
        out.append((mp.log(P / Q), P))
    return out


def _composed_delta(atoms, k, eps):
    comp = [(mp.mpf(0), mp.mpf(1))]
    for _ in range(k):
        merged: dict = {}
        for l1, m1 in comp:
            for l2, m2 in atoms:
                key = mp.nstr(l1 + l2, 20)
                l0, m0 = merged.get(key, (l1 + l2, 0))
                merged[key] = (l0, m0 + m1 * m2)
        comp = list(merged.values())
    return mp.fsum(m * max(0, 1 - mp.exp(eps - l)) for l, m in comp)


@pytest.mark.parametrize("sigma2,D,q,k", [(1.0, 1, 1.0, 3), (2.0, 2, 0.4, 2), (0.5, 1, 0.1, 2)])
def test_discrete_gaussian_composition_contains_mpmath(sigma2, D, q, k):
    pld = PLD.from_discrete_gaussian(sigma2=sigma2, sensitivity=D, sampling_rate=q).self_compose(k)
    with mp.workdps(30):
        orders = (True,) if q == 1.0 else (True, False)
        atoms = {rem: _dgauss_atoms(sigma2, D, mp.mpf(q), rem) for rem in orders}
        for eps in [0.05, 0.5, 1.5]:
            truth = max(_composed_delta(atoms[rem], k, mp.mpf(eps)) for rem in orders)
            iv = pld.delta(eps)
            assert iv.lower - 1e-15 <= truth <= iv.upper + 1e-15, (eps, iv, truth)
            fine = pld.with_discretization(value_step=2e-4).delta(eps)
            assert fine.lower - 1e-15 <= truth <= fine.upper + 1e-15, (eps, fine, truth)
            assert fine.upper - fine.lower < max(0.25 * (iv.upper - iv.lower), 1e-12)


def test_discrete_gaussian_scale_and_sampling():
    a = PLD.from_discrete_gaussian(scale=2.0).delta(0.5)
    b = PLD.from_discrete_gaussian(sigma2=4).delta(0.5)
    assert a == b
    assert PLD.from_discrete_gaussian(sigma2=Fraction(9, 4)).delta(0.5) == PLD.from_discrete_gaussian(sigma2=2.25).delta(0.5)
    assert PLD.from_discrete_gaussian(sigma2=4, sampling_rate=0.0).delta(0.0).upper < 1e-12
    # Sampling makes it more private; the large-sigma discrete Gaussian is nearly the continuous one.
    assert PLD.from_discrete_gaussian(sigma2=4, sampling_rate=0.2).delta(0.5).upper < b.lower
    cont = G.gdp_delta(1 / 300.0, epsilon=1e-4)
    iv = PLD.from_discrete_gaussian(sigma2=300.0**2).delta(1e-4)
    assert _inside(iv, cont, 1e-6 * cont)  # they differ by ~e^{-2 pi^2 sigma^2} (Poisson summation)


@pytest.mark.parametrize("kwargs,exc,word", [
    (dict(), TypeError, "sigma2"),
    (dict(sigma2=4, scale=2.0), TypeError, "sigma2"),
    (dict(sigma2=-1.0), ValueError, "sigma2"),
    (dict(sigma2=float("nan")), ValueError, "sigma2"),
    (dict(sigma2="4"), TypeError, "sigma2"),
    (dict(scale=float("inf")), ValueError, "scale"),
    (dict(sigma2=4, sensitivity=1.5), TypeError, "sensitivity"),
    (dict(sigma2=4, sensitivity=0), ValueError, "sensitivity"),
    (dict(sigma2=4, sampling_rate=1.5), ValueError, "sampling_rate"),
    (dict(sigma2=1e14), ValueError, "sigma2"),
])
def test_discrete_gaussian_bad_input(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        PLD.from_discrete_gaussian(**kwargs)


# ----- truncated and user-defined log-concave families --------------------------------------------------------
def _logistic_family() -> LogConcaveFamily:
    return LogConcaveFamily(lambda x: -np.abs(x) - 2 * np.log1p(np.exp(-np.abs(x))),
                            lambda x: 0.5 * (1 + np.tanh(0.5 * np.asarray(x, dtype=float))),
                            logcdf=lambda x: -np.logaddexp(0.0, -np.asarray(x, dtype=float)),
                            mlr_bounded=True, name="logistic")


TRUNCATED = [Truncated(Laplace(), 3.0), Truncated(Gaussian(), 2.0), Truncated(Subbotin(3.0), 1.5),
             Truncated(Logistic(), 4.0)]


@pytest.mark.parametrize("noise", TRUNCATED, ids=repr)
@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_truncated_single_contains_mpmath(noise, scale):
    pld = PLD.from_density(noise, scale=scale)
    key = REF.family_key(noise)
    for e in [1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 50.0]:
        truth = REF.privacy_profile(key, e, scale)
        iv = pld.delta(e)
        assert _inside(iv, truth), (noise, scale, e, iv, float(truth))
        assert iv.upper - iv.lower <= 1e-2 * float(truth) + 1e-12


def test_truncated_disjoint_supports_are_not_private():
    # A shift of twice the bound or more: every output identifies the neighbour (delta = 1).
    for d, k in [(2.5, 1), (2.0, 1), (2.0, 3)]:
        iv = PLD.from_density(Truncated(Gaussian(), 1.0), scale=1.0, sensitivity=d).self_compose(k).delta([0.0, 10.0])
        assert np.all(iv.lower <= 1.0) and np.all(iv.upper >= 1.0) and np.all(iv.lower > 1 - 1e-12), (d, k, iv)
    # With sampling at rate q only the sampled record is identified: delta = q at every eps (remove order).
    iv = PLD.from_density(Truncated(Gaussian(), 1.0), scale=1.0, sensitivity=2.0, sampling_rate=0.2).delta([0.0, 10.0])
    assert np.all(iv.lower <= 0.2 + 1e-15) and np.all(iv.upper >= 0.2 - 1e-15) and np.all(iv.upper - iv.lower < 1e-12)


def _truncated_delta2(f, eps, d):
    """delta of the 2-fold composition: int_overlap P(x) delta1(eps - L(x)) dx + P(L = inf) (mpmath)."""
    a = f.bound

    def delta1(e):
        if e < 0:  # the pair is its own reverse (x -> d - x)
            return 1 - mp.exp(e) + mp.exp(e) * delta1(-e)
        return mp.exp(REF._log_profile(f, e, d))

    def integrand(x):
        lp = f.logpdf(x - d)
        return mp.exp(lp) * delta1(eps - (lp - f.logpdf(x)))

    p_inf = f.sf(a - d)  # P-mass on (a, a + d), where Q has none
    pts = sorted({-a + d, mp.mpf(0), d / 2, d, a} & set(p for p in (-a + d, mp.mpf(0), d / 2, d, a) if -a + d <= p <= a))
    return mp.quad(integrand, pts) + p_inf


@pytest.mark.parametrize("noise", [Truncated(Laplace(), 3.0), Truncated(Gaussian(), 2.0)], ids=repr)
def test_truncated_two_fold_contains_convolution(noise):
    f = REF.family(REF.family_key(noise))
    pld = PLD.from_density(noise, scale=1.0).self_compose(2)
    with mp.workdps(20):
        for eps in [0.3, 1.0, 2.5]:
            truth = _truncated_delta2(f, mp.mpf(eps), mp.mpf(1))
            iv = pld.delta(eps)
            assert iv.lower - 1e-12 <= truth <= iv.upper + 1e-12, (noise, eps, iv, truth)
            assert iv.upper - iv.lower < 1e-4


def test_user_family_matches_builtin_and_mpmath():
    fam = _logistic_family()
    for q in [1.0, 0.3]:
        mine = PLD.from_density(fam, scale=1.0, sampling_rate=q)
        fast = PLD.from_noise(Logistic(), scale=1.0, sampling_rate=q)
        eps = np.array([0.01, 0.1, 0.3, 0.6, 0.9])
        a, b = mine.self_compose(3).delta(eps), fast.self_compose(3).delta(eps)
        assert np.all(a.lower <= b.upper) and np.all(b.lower <= a.upper)
        assert np.all(a.upper - a.lower < 1e-4)
    one = PLD.from_density(fam, scale=0.7)
    for e in [1e-3, 0.5, 1.2]:
        assert _inside(one.delta(e), REF.privacy_profile(("Logistic",), e, 0.7))


def test_user_family_with_bounded_support():
    # A user-defined truncated Laplace on (-3, 3): the +inf mass beyond the support is carried.
    a = 3.0
    z = -math.expm1(-a)

    def cdf(x):
        x = np.clip(np.asarray(x, dtype=float), -a, a)
        return np.where(x < 0, (0.5 * np.exp(x) - 0.5 * math.exp(-a)) / z, 1 - (0.5 * np.exp(-x) - 0.5 * math.exp(-a)) / z)

    fam = LogConcaveFamily(lambda x: -np.abs(x) - math.log(2 * z), cdf, bound=a, mlr_bounded=True)
    one = PLD.from_density(fam, scale=1.0)
    for e in [1e-3, 0.3, 0.9, 2.0]:
        assert _inside(one.delta(e), REF.privacy_profile(("Truncated", ("Laplace",), a), e, 1.0), 1e-14)
    eps = np.array([0.2, 1.0, 2.5])
    mine = PLD.from_density(fam, scale=1.0, sampling_rate=0.3).self_compose(2).delta(eps)
    builtin = PLD.from_density(Truncated(Laplace(), a), scale=1.0, sampling_rate=0.3).self_compose(2).delta(eps)
    assert np.all(mine.lower <= builtin.upper + 1e-14) and np.all(builtin.lower <= mine.upper + 1e-14)


@pytest.mark.parametrize("noise", [Gaussian(), Subbotin(1.5)], ids=repr)
def test_density_path_agrees_with_builtin_path(noise):
    # The slow path on a built-in family: an independent discretisation of the same PLD.
    for q in [1.0, 0.1]:
        a = PLD.from_density(noise, scale=1.3, sampling_rate=q).self_compose(5).epsilon([1e-3, 1e-6])
        b = PLD.from_noise(noise, scale=1.3, sampling_rate=q).self_compose(5).epsilon([1e-3, 1e-6])
        assert np.all(a.lower <= b.upper) and np.all(b.lower <= a.upper)
    iv = PLD.from_density(Gaussian(), scale=2.0).self_compose(4).epsilon(1e-5)
    assert _inside(iv, G.gdp_epsilon(1.0, delta=1e-5))


def test_sampled_truncated_contains_mpmath():
    noise, q = Truncated(Laplace(), 3.0), 0.3
    f = REF.family(REF.family_key(noise))
    pld = PLD.from_density(noise, scale=1.0, sampling_rate=q)
    with mp.workdps(30):
        qq, d = mp.mpf(q), mp.mpf(1)

        def dens(x, shift):
            return mp.exp(f.logpdf(x - shift))

        def one(remove, eps):
            def P(x):
                return (1 - qq) * dens(x, 0) + qq * dens(x, d) if remove else dens(x, 0)

            def Q(x):
                return dens(x, 0) if remove else (1 - qq) * dens(x, 0) + qq * dens(x, d)

            def h(x):
                return P(x) - mp.exp(eps) * Q(x)

            # The sign of h changes once on the overlap (-2, 3) of the supports (the loss is monotone
            # there): split the quadrature at the crossing, the kinks and the support ends. Where Q = 0
            # the integrand is P (the +inf loss).
            lo, hi = mp.mpf(-2) + mp.mpf(10) ** -25, mp.mpf(3) - mp.mpf(10) ** -25
            pts = {-3, -2, 0, 1, 3, 4}
            if (h(lo) > 0) != (h(hi) > 0):
                up = h(hi) > 0
                for _ in range(120):
                    mid = (lo + hi) / 2
                    if (h(mid) > 0) == up:
                        hi = mid
                    else:
                        lo = mid
                pts.add(hi)
            return mp.quad(lambda x: max(h(x), 0), sorted(mp.mpf(v) for v in pts))

        for eps in [0.05, 0.2, 0.5]:
            truth = max(one(True, mp.mpf(eps)), one(False, mp.mpf(eps)))
            iv = pld.delta(eps)
            assert iv.lower - 1e-12 <= truth <= iv.upper + 1e-12, (eps, iv, truth)


@pytest.mark.parametrize("kwargs,exc,word", [
    (dict(noise="gaussian", scale=1.0), TypeError, "noise"),
    (dict(noise=Truncated(Laplace(), 2.0), scale=float("nan")), ValueError, "scale"),
    (dict(noise=Truncated(Laplace(), 2.0), scale=-1.0), ValueError, "scale"),
    (dict(noise=Truncated(Laplace(), 2.0), scale=1.0, sensitivity=0.0), ValueError, "sensitivity"),
    (dict(noise=Truncated(Laplace(), 2.0), scale=1.0, sampling_rate=-0.5), ValueError, "sampling_rate"),
])
def test_density_bad_input(kwargs, exc, word):
    noise = kwargs.pop("noise")
    with pytest.raises(exc, match=word):
        PLD.from_density(noise, **kwargs)


@settings(max_examples=8, deadline=None)
@given(bound=st.floats(1.0, 6.0), scale=st.floats(0.5, 3.0), k=st.integers(1, 40), q=st.sampled_from([1.0, 0.2]))
def test_truncated_properties(bound, scale, k, q):
    step = PLD.from_density(Truncated(Laplace(), bound), scale=scale, sampling_rate=q)
    eps = np.array([0.1, 1.0, 3.0])
    a, b = step.self_compose(k).delta(eps), step.self_compose(k + 4).delta(eps)
    assert np.all(a.lower <= a.upper) and np.all(b.lower <= b.upper)
    assert np.all(a.lower <= b.upper + 1e-12)  # more compositions are never more private
    wider = PLD.from_density(Truncated(Laplace(), bound), scale=2.0 * scale, sampling_rate=q).self_compose(k).delta(eps)
    assert np.all(wider.lower <= a.upper + 1e-12)


# ----- GDP bracket, ROC, conversions ---------------------------------------------------------------------------
@pytest.mark.parametrize("mu,k", [(1.0, 1), (0.5, 16), (0.1, 400), (2.0, 3)])
def test_mu_contains_gdp(mu, k):
    iv = PLD.from_gdp(mu).self_compose(k).mu()
    truth = mu * math.sqrt(k)
    assert iv.lower <= truth <= iv.upper, (iv, truth)
    assert iv.upper - iv.lower < 2e-4 * truth
    assert PLD.from_gdp(mu).self_compose(k).to_gdp().mu == iv.upper


def test_mu_of_laplace_by_its_definition():
    # mu* = inf{mu : delta(eps) <= max(delta_mu(eps), floor) for all eps}: check both ends against the
    # 50-digit Laplace profile.
    floor = 1e-10
    iv = PLD.from_noise(Laplace(), scale=1.0).mu(delta_floor=floor)
    eps = np.linspace(0.0, 1.0, 401)
    truth = np.array([float(REF.privacy_profile(("Laplace",), float(e), 1.0)) for e in eps])
    assert np.all(truth <= np.maximum(G.gdp_delta(iv.upper, epsilon=eps), floor) * (1 + 1e-9))
    below = iv.lower * (1 - 1e-6)
    assert np.any(truth > np.maximum(G.gdp_delta(below, epsilon=eps), floor))
    assert iv.upper - iv.lower < 1e-5


def test_mu_of_pure_identity_and_bad_floor():
    assert PLD.identity().mu() == Interval(0.0, 0.0)
    for bad in [0.0, 0.5, float("nan"), -1e-3]:
        with pytest.raises(ValueError, match="delta_floor"):
            PLD.from_gdp(1.0).mu(delta_floor=bad)
    # An (eps, delta) mechanism keeps mass delta at +inf: no GDP bound covers it above a smaller floor.
    assert PLD.from_approx_dp(epsilon=1.0, delta=1e-6).mu(delta_floor=1e-9).upper == math.inf
    with pytest.raises(ValueError, match="mu"):
        PLD.from_approx_dp(epsilon=1.0, delta=1e-6).to_gdp(delta_floor=1e-9)


@pytest.mark.parametrize("mu,k", [(1.0, 1), (0.3, 25)])
def test_roc_contains_gdp(mu, k):
    fpr = np.array([0.0, 1e-6, 1e-3, 0.05, 0.3, 0.9, 1.0])
    iv = PLD.from_gdp(mu).self_compose(k).roc(fpr)
    truth = G.roc(fpr, mu * math.sqrt(k))
    assert iv.lower.shape == fpr.shape
    assert np.all(iv.lower <= truth + 1e-15) and np.all(truth <= iv.upper + 1e-15)
    assert np.all(np.diff(iv.lower) >= -1e-12)  # non-decreasing in the false-positive rate
    s = PLD.from_gdp(1.0).roc(0.05)
    assert isinstance(s.lower, float)
    with pytest.raises(ValueError, match="fpr"):
        PLD.from_gdp(1.0).roc(1.5)


def test_conversions_to_budgets():
    p = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.05).self_compose(200)
    b = p.to_approx_dp(1e-6)
    assert isinstance(b, pc.ApproxDP) and b.delta == 1e-6 and b.epsilon == p.epsilon(1e-6).upper
    prof = p.approx_dp_profile([1e-3, 1e-6, 1e-9])
    assert [x.delta for x in prof] == [1e-3, 1e-6, 1e-9]
    assert prof[0].epsilon < prof[1].epsilon < prof[2].epsilon
    with pytest.raises(ValueError, match="delta"):
        p.to_approx_dp(0.0)
    with pytest.raises(ValueError, match="delta"):
        p.approx_dp_profile([1e-3, 2.0])
    with pytest.raises(ValueError, match="delta"):  # below the truncated mass of the discretisation
        PLD.from_approx_dp(epsilon=1.0, delta=1e-3).to_approx_dp(1e-4)


@settings(max_examples=8, deadline=None)
@given(mu=st.floats(0.2, 2.0), k=st.integers(1, 30), fpr=st.floats(0.0, 1.0))
def test_gdp_roc_properties(mu, k, fpr):
    a, b = PLD.from_gdp(mu).self_compose(k), PLD.from_gdp(mu).self_compose(k + 5)
    ma, mb = a.mu(), b.mu()
    assert ma.lower <= ma.upper and mb.lower <= mb.upper
    assert ma.lower <= mb.upper  # more compositions are never more private
    ra, rb = a.roc(fpr), b.roc(fpr)
    assert ra.lower <= ra.upper and ra.lower <= rb.upper + 1e-12


@settings(max_examples=10, deadline=None)
@given(s2=st.floats(0.3, 50.0), k=st.integers(1, 20), q=st.sampled_from([1.0, 0.3]))
def test_discrete_gaussian_properties(s2, k, q):
    step = PLD.from_discrete_gaussian(sigma2=s2, sampling_rate=q)
    a, b = step.self_compose(k).epsilon(1e-6), step.self_compose(k + 3).epsilon(1e-6)
    assert a.lower <= a.upper and b.lower <= b.upper
    assert a.lower <= b.upper + 1e-12
    more_noise = PLD.from_discrete_gaussian(sigma2=2.0 * s2, sampling_rate=q).self_compose(k).epsilon(1e-6)
    assert more_noise.lower <= a.upper + 1e-12


# ----- the accountant's PLD route ---------------------------------------------------------------------------------
def test_accountant_dpsgd_through_the_pld_route():
    acc = pc.Accountant(pc.ApproxDP(8.0, 1e-5))
    acc.spend_mechanism({"noise": "gaussian", "scale": 1.0, "sampling_rate": 0.01}, count=10_000)
    tot = acc.total()
    assert abs(tot.epsilon - 6.18771) < 1e-4 and tot.epsilon >= 6.18771 - 1e-9  # the peers' converged digits
    # JSON round trip keeps the route (and the replay accepts the spends)
    back = pc.Accountant.from_json(acc.to_json())
    assert back.total().epsilon == tot.epsilon
    # the RDP route of the same mechanism is far looser
    rdp = pc.subsample(pc.GDP(1.0).to_rdp_curve(), 0.01)
    acc_rdp = pc.Accountant(pc.ApproxDP(100.0, 1e-5))
    acc_rdp.spend(rdp, count=10_000)
    assert acc_rdp.total().epsilon > 1.5 * tot.epsilon


def test_accountant_accepts_what_only_the_pld_route_certifies(tmp_path):
    # Forty Laplace(4) runs: pure DP says 10, the best of the RDP/GDP/zCDP routes about 8.07; the PLD
    # composition certifies about 7.41. A limit in between is met only through the PLD route, also on replay.
    pld = PLD.from_noise(Laplace(), scale=4.0).self_compose(40).epsilon(1e-6)
    probe = pc.Accountant(pc.ApproxDP(100.0, 1e-6))
    probe.spend_laplace(scale=4.0, count=40)
    cheap = probe._rule.quick_total(probe._spends, delta=1e-6).epsilon
    assert pld.upper < cheap
    limit = 0.5 * (pld.upper + cheap)
    acc = pc.Accountant(pc.ApproxDP(limit, 1e-6), journal=tmp_path / "j", journal_key=bytes(range(32)))
    acc.spend_laplace(scale=4.0, count=40)
    assert acc.total().epsilon == pld.upper
    again = pc.Accountant(pc.ApproxDP(limit, 1e-6), journal=tmp_path / "j", journal_key=bytes(range(32)))
    assert len(again) == 40
    with pytest.raises(pc.BudgetExceededError):
        acc.spend_laplace(scale=4.0, count=10)


def test_accountant_mixes_pld_and_rdp_only_spends():
    acc = pc.Accountant(pc.ApproxDP(20.0, 1e-6))
    acc.spend_mechanism({"discrete_gaussian": {"sigma2": 16}}, count=5)
    acc.spend_mechanism({"noise": "logistic", "scale": 2.0, "sampling_rate": 0.2}, count=3)
    acc.spend(pc.ZCDP(0.05))  # no PLD: it shares delta with the composed PLD
    tot = acc.total()
    comp = PLD.composition([PLD.from_discrete_gaussian(sigma2=16).self_compose(5),
                            PLD.from_noise(Logistic(), scale=2.0, sampling_rate=0.2).self_compose(3)])
    assert tot.epsilon <= comp.epsilon(0.5e-6).upper + pc.ZCDP(0.05).to_approx_dp(0.5e-6).epsilon + 1e-12
    assert tot.epsilon >= comp.epsilon(1e-6).lower  # never below the PLD part alone


@settings(max_examples=10, deadline=None)
@given(sigmas=st.lists(st.floats(0.5, 5.0), min_size=1, max_size=3), scales=st.lists(st.floats(1.0, 10.0), max_size=2),
       k=st.integers(1, 50))
def test_accountant_total_is_the_tightest_and_never_below_the_truth(sigmas, scales, k):
    acc = pc.Accountant(pc.ApproxDP(1e6, 1e-6))
    plds = []
    for s in sigmas:
        acc.spend_gaussian(sigma=s, count=k)
        plds.append(PLD.from_noise(Gaussian(), scale=s).self_compose(k))
    for b in scales:
        acc.spend_laplace(scale=b, count=k)
        plds.append(PLD.from_noise(Laplace(), scale=b).self_compose(k))
    tight = acc.total().epsilon
    assert tight <= acc._rule.quick_total(acc._spends, delta=1e-6).epsilon
    assert tight >= PLD.composition(plds).epsilon(1e-6).lower  # the composition's certified lower end


def test_accountant_mechanism_bad_input():
    acc = pc.Accountant(pc.ApproxDP(1.0, 1e-6))
    with pytest.raises(ValueError, match="count"):
        acc.spend_mechanism({"gdp": 0.1, "count": 3})
    with pytest.raises(ValueError, match="unknown fields"):
        acc.spend_mechanism({"gdp": 0.1, "sigma": 3})
    with pytest.raises(ValueError, match="noise must be one of"):
        acc.spend_mechanism({"noise": "cauchy", "scale": 1.0})
    with pytest.raises(ValueError, match="exactly one"):
        acc.spend_mechanism({"gdp": 0.1, "randomized_response": {"epsilon": 1.0}})
    with pytest.raises(TypeError, match="sigma2"):
        acc.spend_mechanism({"discrete_gaussian": {"sigma2": 4, "scale": 2.0}})
    assert len(acc) == 0


def test_subsampled_gdp_curve_does_not_overflow():
    # subsample(GDP(1).to_rdp_curve(), 0.01) once raised OverflowError (floor of an infinite alpha_max)
    curve = pc.subsample(pc.GDP(1.0).to_rdp_curve(), 0.01)
    assert isinstance(curve, pc.RDPCurve)
    eps = np.asarray(curve(np.array([2.0, 8.0, 32.0])))
    assert np.all(np.isfinite(eps)) and np.all(eps < pc.GDP(1.0).to_rdp_curve()(np.array([2.0, 8.0, 32.0])))


# ----- the compose command ---------------------------------------------------------------------------------------
def test_compose_command_new_constructors(tmp_path, capsys):
    from pydp_core import cli

    spec = tmp_path / "m.json"
    spec.write_text(json.dumps({"mechanisms": [
        {"discrete_gaussian": {"sigma2": 9, "sensitivity": 1}, "count": 3},
        {"discrete_laplace": {"scale": 2.0}},
        {"noise": "laplace", "scale": 2.0, "bound": 4.0},
    ]}))
    assert cli.main(["compose", str(spec), "--epsilon", "1.0", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = PLD.composition([PLD.from_discrete_gaussian(sigma2=9).self_compose(3), PLD.from_discrete_laplace(scale=2.0),
                           PLD.from_density(Truncated(Laplace(), 4.0), scale=2.0)]).delta(1.0)
    assert got["delta"]["lower"] == ref.lower and got["delta"]["upper"] == ref.upper
    for bad, word in [({"discrete_gaussian": {"sigma2": 9}, "scale": 1.0}, "belong to noise"),
                      ({"noise": "gaussian", "scale": 1.0, "r": 3}, "r is required"),
                      ({"discrete_gaussian": 9}, "JSON object")]:
        spec.write_text(json.dumps([bad]))
        assert cli.main(["compose", str(spec), "--delta", "1e-5"]) == 1
        assert word in capsys.readouterr().err
