"""Certified privacy-loss distributions: every interval must contain an independent reference.

References: 50-digit mpmath privacy profiles (tests/support/mpref.py) for one mechanism, the exact GDP profile
for k-fold Gaussian compositions, mpmath convolution integrals for k = 2, and dp-accounting /
prv_accountant for the subsampled Gaussian.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import mpref as REF

import pydp_core
from pydp_core.accounting.pld import PLD, Interval
from pydp_core.noise import Gaussian, Laplace, Logistic, Subbotin, Truncated

FAMILIES = [Gaussian(), Laplace(), Logistic(), Subbotin(1.5), Subbotin(3.0)]


def _contains(iv: Interval, truth: float) -> bool:
    return iv.lower <= truth <= iv.upper


# ----- one mechanism against the 50-digit privacy profile ---------------------------------------------------
@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0])
def test_single_mechanism_delta_contains_mpmath(noise, scale):
    pld = PLD.from_noise(noise, scale=scale)
    key = REF.family_key(noise)
    eps = np.array([1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0])
    iv = pld.delta(eps)
    for e, lo, up in zip(eps, iv.lower, iv.upper):
        truth = REF.privacy_profile(key, float(e), scale)
        if truth < mp.mpf("1e-290"):
            # Below the double range the upper bound must still be a bound.
            assert up >= 0.0 and lo <= float(truth) + 1e-300
            continue
        assert lo <= truth <= up, (noise, scale, e, lo, float(truth), up)
        # The automatic step for one mechanism is 0.005: relative width <~1e-2 (second order in the step).
        assert up - lo <= 1e-2 * float(truth) + 1e-12
    fine = pld.with_discretization(value_step=5e-4).delta(eps)
    assert np.all(fine.upper - fine.lower <= 2e-4 * iv.upper + 1e-12)


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_single_mechanism_epsilon_contains_mpmath(noise):
    pld = PLD.from_noise(noise, scale=1.0)
    key = REF.family_key(noise)
    for d in [1e-1, 1e-3, 1e-6, 1e-10]:
        iv = pld.epsilon(d)
        if iv.upper == 0.0:
            assert REF.privacy_profile(key, 0.0, 1.0) <= d
            continue
        if math.isfinite(iv.upper):
            assert REF.privacy_profile(key, iv.upper, 1.0) <= d * (1 + 1e-12)
        if iv.lower > 0:
            assert REF.privacy_profile(key, iv.lower, 1.0) >= d * (1 - 1e-12)


def test_tiny_delta_single_gaussian():
    # delta down to 1e-300: the single mechanism has no FFT, so its masses keep their relative precision.
    pld = PLD.from_noise(Gaussian(), scale=0.05)  # mu = 20
    for e in [200.0, 230.0]:
        truth = REF.privacy_profile(("Gaussian",), e, 0.05)
        iv = pld.delta(e)
        assert truth > mp.mpf("1e-300")
        assert iv.lower <= truth <= iv.upper


# ----- k-fold Gaussian against exact GDP ---------------------------------------------------------------------
@pytest.mark.parametrize("k,scale", [(2, 1.0), (10, 3.0), (1000, 30.0), (10**5, 300.0), (10**6, 1000.0), (10**6, 1.0)])
def test_k_fold_gaussian_contains_gdp(k, scale):
    pld = PLD.from_noise(Gaussian(), scale=scale).self_compose(k)
    mu = math.sqrt(k) / scale
    for d in [1e-3, 1e-5, 1e-8]:
        iv = pld.epsilon(d)
        truth = pydp_core.gdp.gdp_epsilon(mu, delta=d)
        assert _contains(iv, truth), (k, scale, d, iv, truth)
    eps = np.array([0.0, 0.5 * mu * mu, mu * mu])
    ivd = pld.delta(eps)
    truth = pydp_core.gdp.gdp_delta(mu, epsilon=eps)
    assert np.all(ivd.lower <= truth) and np.all(truth <= ivd.upper)


@pytest.mark.parametrize("k", [20_011, 65_536, 100_000])
def test_two_level_composition_contains_gdp(k):
    # Large counts are composed in blocks on a fine grid, regridded, then composed on a coarse grid;
    # a prime k exercises the two block sizes, 65536 the exact split.
    scale = math.sqrt(k) / 1.5
    iv = PLD.from_noise(Gaussian(), scale=scale).self_compose(k).epsilon(np.array([1e-3, 1e-6]))
    truth = pydp_core.gdp.gdp_epsilon(1.5, delta=np.array([1e-3, 1e-6]))
    assert np.all(iv.lower <= truth) and np.all(truth <= iv.upper), (iv, truth)
    assert np.all(iv.upper - iv.lower < 1e-3)


def test_two_level_with_small_companion_contains_gdp():
    big = PLD.from_noise(Gaussian(), scale=100.0).self_compose(30_000)
    small = PLD.from_noise(Gaussian(), scale=2.0).self_compose(3)
    mu = math.sqrt(30_000 / 100.0**2 + 3 / 4.0)
    iv = big.compose(small).epsilon(1e-5)
    assert _contains(iv, pydp_core.gdp.gdp_epsilon(mu, delta=1e-5)), iv


def test_gdp_constructor_matches_noise():
    a = PLD.from_gdp(1.5).self_compose(4).epsilon(1e-6)
    truth = pydp_core.gdp.gdp_epsilon(3.0, delta=1e-6)
    assert _contains(a, truth)
    assert a.upper - a.lower < 1e-3


# ----- k = 2 against a high-precision convolution -----------------------------------------------------------
def _delta1(f, e, d):
    """delta of one mechanism (P = f(. - d), Q = f) at any real e (mpmath); the PLD is its own reverse."""
    if e < 0:
        # delta_{P,Q}(e) = e^e delta_{Q,P}(-e) + 1 - e^e, and (Q, P) has the PLD of (P, Q) by symmetry.
        return mp.exp(e) * _delta1(f, -e, d) + 1 - mp.exp(e)
    ld = REF._log_profile(f, e, d)
    return mp.exp(ld)


def _delta2(f, eps, d):
    """delta of the 2-fold composition: int f(x - d) delta1(eps - L(x)) dx, L(x) = psi(x) - psi(x - d)."""

    def integrand(x):
        lx = f.logpdf(x - d)
        return mp.exp(lx) * _delta1(f, eps - (f.logpdf(x - d) - f.logpdf(x)), d)

    pts = [-mp.inf, d / 2 - 8, 0, d / 2, d, d / 2 + 8, mp.inf]
    return mp.quad(integrand, pts)


@pytest.mark.parametrize("noise", [Laplace(), Logistic(), Subbotin(1.5), Subbotin(3.0)], ids=repr)
def test_two_fold_contains_convolution(noise):
    f = REF.family(REF.family_key(noise))
    pld = PLD.from_noise(noise, scale=1.0).self_compose(2)
    with mp.workdps(25):
        for eps in [0.3, 1.0]:
            truth = _delta2(f, mp.mpf(eps), mp.mpf(1))
            iv = pld.delta(eps)
            assert iv.lower <= truth <= iv.upper, (noise, eps, iv, truth)
            assert iv.upper - iv.lower < 1e-4


# ----- subsampled Gaussian against the peers --------------------------------------------------------------------
def test_dpsgd_against_dp_accounting_and_prv():
    import dp_accounting as dpa  # both peers are in the test extra
    import prv_accountant as prv
    q, sigma, k, delta = 0.01, 1.0, 1000, 1e-5
    iv = PLD.from_noise(Gaussian(), scale=sigma, sampling_rate=q).self_compose(k).epsilon(delta)
    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), k)
    theirs = acc.get_epsilon(delta)  # a pessimistic estimate (connect-the-dots, 1e-4 grid)
    assert iv.lower <= theirs + 1e-9
    assert abs(theirs - iv.upper) < 2e-3
    acc2 = prv.PRVAccountant(prvs=prv.PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q),
                             max_self_compositions=k, eps_error=0.01, delta_error=1e-10)
    lo, est, up = acc2.compute_epsilon(delta=delta, num_self_compositions=[k])
    assert lo <= iv.upper and iv.lower <= up  # their bracket and ours overlap
    assert lo - 1e-9 <= est + 0.01 and iv.lower <= est + 0.01 and iv.upper >= est - 0.01


def test_dpsgd_truth_in_interval():
    # The digits both peers converge to.
    iv = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(10_000).epsilon(1e-5)
    assert iv.lower <= 6.18771 <= iv.upper or abs(iv.lower - 6.18771) < 1e-5 or abs(iv.upper - 6.18771) < 1e-5
    assert abs(iv.lower - 6.18771) < 1e-4 and abs(iv.upper - 6.18771) < 1e-4


def test_screened_orders_are_as_tight_and_history_free():
    # delta and epsilon bound both neighbour orders on a coarse grid first and refine only the orders that
    # can attain the maximum (docs/pld.md, "Screening the neighbour orders"): each end must be at least as
    # tight as the maximum over both orders on the requested grid, and answers must not depend on which
    # orders earlier queries refined.
    def fresh():
        return PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(1000) \
            .with_discretization(value_step=2e-4)

    both = fresh()._compute()  # both orders on the requested grid
    for query, arg in [("delta", np.array([0.0, 0.05, 0.5, 1.0, 2.0])), ("epsilon", np.array([0.3, 1e-3, 1e-5, 1e-8]))]:
        pld = fresh()
        iv = getattr(pld, query)(arg)
        ends = [getattr(b, query)(arg) for b in both]
        lo, up = np.maximum.reduce([e[0] for e in ends]), np.maximum.reduce([e[1] for e in ends])
        assert np.all(iv.lower >= lo) and np.all(iv.upper <= up) and np.all(iv.lower <= iv.upper), (query, iv, lo, up)
    # Far from eps = 0 the add order is screened out: one order refined, same answer as after refining both.
    one = fresh()
    iv = one.epsilon(1e-5)
    assert len(one._fine) == 1
    two = fresh()
    two.delta(0.0)  # the orders coincide at eps = 0: both are refined
    assert len(two._fine) == 2
    assert two.epsilon(1e-5) == iv


def test_interval_narrows_with_finer_grid():
    base = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.02).self_compose(500)
    widths = []
    for h in [4e-3, 2e-3, 1e-3, 5e-4]:
        iv = base.with_discretization(value_step=h).epsilon(1e-5)
        widths.append(iv.upper - iv.lower)
    assert all(b < a for a, b in zip(widths, widths[1:])), widths
    # Second order: halving the step cuts the width by about four.
    assert widths[-1] < widths[0] / 20


def test_heterogeneous_composition_contains_gdp():
    a = PLD.from_noise(Gaussian(), scale=2.0)
    b = PLD.from_noise(Gaussian(), scale=1.0, sensitivity=0.5)
    c = a.self_compose(3).compose(b.self_compose(5))
    mu = math.sqrt(3 * 0.25 + 5 * 0.25)
    assert _contains(c.epsilon(1e-6), pydp_core.gdp.gdp_epsilon(mu, delta=1e-6))
    d = PLD.composition([a, a, a, b, b, b, b, b])
    assert _contains(d.epsilon(1e-6), pydp_core.gdp.gdp_epsilon(mu, delta=1e-6))


def test_approx_dp_worst_case():
    # One (eps, delta)-DP step: delta(eps) is delta exactly, and k = 1 gives eps back.
    p = PLD.from_approx_dp(epsilon=1.0, delta=1e-4)
    iv = p.delta(1.0)
    assert iv.lower <= 1e-4 <= iv.upper
    ive = p.epsilon(1e-4)
    assert ive.lower <= 1.0 <= ive.upper
    # Pure eps-DP composed k times: delta(eps) of the k-fold worst case is a binomial sum (Kairouz et al.).
    e, k = 0.5, 20
    pk = PLD.from_randomized_response(epsilon=e).self_compose(k)
    for t in [2.0, 5.0]:
        with mp.workdps(50):
            pe = mp.exp(e) / (1 + mp.exp(e))
            truth = mp.fsum(mp.binomial(k, i) * pe ** (k - i) * (1 - pe) ** i * max(0, 1 - mp.exp(t - (k - 2 * i) * e))
                            for i in range(k + 1))
        iv = pk.delta(t)
        assert iv.lower <= truth <= iv.upper, (t, iv, truth)


# ----- properties --------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(q=st.floats(0.001, 1.0), sigma=st.floats(0.5, 5.0), k=st.integers(1, 300), d=st.sampled_from([1e-3, 1e-6]))
def test_upper_not_below_lower_and_monotone_in_k(q, sigma, k, d):
    step = PLD.from_noise(Gaussian(), scale=sigma, sampling_rate=q).with_discretization(value_step=2e-3)
    a = step.self_compose(k).epsilon(d)
    b = step.self_compose(k + 7).epsilon(d)
    assert a.lower <= a.upper and b.lower <= b.upper
    assert a.lower <= b.upper + 1e-12
    assert a.upper <= b.upper + 1e-9  # the pessimistic side is monotone in k on a fixed grid


@settings(max_examples=20, deadline=None)
@given(q=st.floats(0.01, 0.5), sigma=st.floats(0.6, 3.0), k=st.integers(1, 100),
       noise=st.sampled_from([Gaussian(), Laplace(), Logistic()]))
def test_monotone_in_noise_and_sampling_rate(q, sigma, k, noise):
    def iv(qq, ss):
        return PLD.from_noise(noise, scale=ss, sampling_rate=qq).self_compose(k).epsilon(1e-6)

    base = iv(q, sigma)
    more_noise = iv(q, sigma * 1.3)
    more_sampling = iv(min(1.0, q * 1.5), sigma)
    assert more_noise.lower <= base.upper + 1e-12
    assert base.lower <= more_sampling.upper + 1e-12


@settings(max_examples=15, deadline=None)
@given(mu=st.floats(0.2, 3.0), k=st.integers(1, 50))
def test_upper_never_below_proven_lower_bound(mu, k):
    # The exact GDP profile is both a lower and an upper bound for the Gaussian mechanism.
    iv = PLD.from_gdp(mu).self_compose(k).epsilon(1e-5)
    truth = pydp_core.gdp.gdp_epsilon(mu * math.sqrt(k), delta=1e-5)
    assert iv.upper >= truth >= iv.lower


# ----- arrays -------------------------------------------------------------------------------------------------
def test_arrays_in_arrays_out():
    p = PLD.from_noise(Laplace(), scale=1.0)
    iv = p.delta(np.array([[0.1, 0.2], [0.3, 0.4]]))
    assert iv.lower.shape == (2, 2) and iv.upper.shape == (2, 2)
    e = p.epsilon([1e-3, 1e-5])
    assert e.lower.shape == (2,)
    s = p.epsilon(1e-3)
    assert isinstance(s.lower, float) and isinstance(s.upper, float)
    # Laplace at scale 1 is exactly 1-DP: delta(1) = 0 and epsilon(0) = 1.
    assert p.delta(1.0).lower == 0.0 and p.delta(1.0).upper < 1e-12
    assert p.epsilon(0.0).lower <= 1.0 <= p.epsilon(0.0).upper


# ----- bad input ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,word", [
    (dict(scale=float("nan")), ValueError, "scale"),
    (dict(scale=-1.0), ValueError, "scale"),
    (dict(scale=float("inf")), ValueError, "scale"),
    (dict(scale=1.0, sensitivity=0.0), ValueError, "sensitivity"),
    (dict(scale=1.0, sensitivity=float("nan")), ValueError, "sensitivity"),
    (dict(scale=1.0, sampling_rate=1.5), ValueError, "sampling_rate"),
    (dict(scale=1.0, sampling_rate=-0.1), ValueError, "sampling_rate"),
    (dict(scale=1.0, sampling_rate=float("nan")), ValueError, "sampling_rate"),
    (dict(scale="1"), TypeError, "scale"),
    (dict(scale=[1.0, 2.0]), TypeError, "scale"),
])
def test_bad_noise_arguments(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        PLD.from_noise(Gaussian(), **kwargs)


def test_truncated_family_takes_the_density_path():
    fast = PLD.from_noise(Truncated(Gaussian(), 3.0), scale=1.0).delta(1.0)
    slow = PLD.from_density(Truncated(Gaussian(), 3.0), scale=1.0).delta(1.0)
    assert (fast.lower, fast.upper) == (slow.lower, slow.upper)
    with pytest.raises(ValueError, match="neighbours"):
        PLD.from_noise(Truncated(Gaussian(), 3.0), scale=1.0, neighbours="substitution")


def test_bad_family():
    with pytest.raises(TypeError, match="noise"):
        PLD.from_noise("gaussian", scale=1.0)


@pytest.mark.parametrize("k,exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError), (2.0, TypeError),
                                   (True, TypeError), ("3", TypeError)])
def test_bad_k(k, exc):
    with pytest.raises(exc, match="k"):
        PLD.from_gdp(1.0).self_compose(k)


def test_bad_compose_and_queries():
    p = PLD.from_gdp(1.0)
    with pytest.raises(TypeError, match="other"):
        p.compose(3)
    with pytest.raises(ValueError, match="plds"):
        PLD.composition([])
    with pytest.raises(ValueError, match="epsilon"):
        p.delta(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        p.delta(float("nan"))
    with pytest.raises(ValueError, match="delta"):
        p.epsilon(1.5)
    with pytest.raises(ValueError, match="delta"):
        p.epsilon(float("nan"))
    with pytest.raises(ValueError, match="value_step"):
        p.with_discretization(value_step=2.0)
    with pytest.raises(ValueError, match="value_step"):
        p.with_discretization(value_step=float("nan"))
    with pytest.raises(ValueError, match="value_step"):
        p.with_discretization(value_step=1e-9).self_compose(10**6).epsilon(1e-5)
    with pytest.raises(ValueError, match="tail_mass"):
        p.with_discretization(tail_mass=0.5)
    with pytest.raises(ValueError, match="mu"):
        PLD.from_gdp(-1.0)
    with pytest.raises(ValueError, match="delta"):
        PLD.from_approx_dp(epsilon=1.0, delta=1.0)


# ----- calibration ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("noise,q,k", [(Gaussian(), 0.05, 100), (Laplace(), 1.0, 10), (Subbotin(1.5), 0.2, 20)], ids=repr)
def test_calibrate_meets_target_and_is_nearly_smallest(noise, q, k):
    c = PLD.calibrate(noise, epsilon=2.0, delta=1e-6, steps=k, sampling_rate=q, certificate=True)
    s = c.scale
    # Certified on the grid of the certificate (the search may refine the automatic one).
    at = PLD.from_noise(noise, scale=s, sampling_rate=q).self_compose(k).with_discretization(value_step=c.value_step)
    assert at.epsilon(1e-6).upper <= 2.0 and at.delta(2.0).upper <= 1e-6
    # 3% less noise is certainly not enough (its lower bound exceeds the target).
    below = PLD.from_noise(noise, scale=s * 0.97, sampling_rate=q).self_compose(k)
    assert below.epsilon(1e-6).lower > 2.0


def test_calibrate_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        PLD.calibrate(Gaussian(), epsilon=-1.0, delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        PLD.calibrate(Gaussian(), epsilon=1.0, delta=0.0)
    with pytest.raises(TypeError, match="steps"):
        PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, steps=1.5)


# ----- discrete Laplace: exact atoms, exact composition ------------------------------------------------------
def _exact_atoms_dlap(scale, D, q, remove):
    """(loss, P-mass) atoms of the discrete Laplace pair in mpmath, from the pmf summed directly."""
    a = mp.exp(-1 / mp.mpf(scale))
    c = (1 - a) / (1 + a)
    out = {}
    for x in range(-400, 400 + D):
        pq = c * a ** abs(x)
        pp = c * a ** abs(x - D)
        mix = (1 - q) * pq + q * pp
        P, Q = (mix, pq) if remove else (pq, mix)
        key = mp.nstr(mp.log(P / Q), 30)
        l0, m0 = out.get(key, (mp.log(P / Q), 0))
        out[key] = (l0, m0 + P)
    return list(out.values())


def _exact_delta(atoms, k, eps):
    comp = {mp.mpf(0): mp.mpf(1)}
    for _ in range(k):
        nxt = {}
        for l1, m1 in comp.items():
            for l2, m2 in atoms:
                key = l1 + l2
                nxt[key] = nxt.get(key, 0) + m1 * m2
        # merge numerically equal losses
        merged = {}
        for l, m in nxt.items():
            kk = mp.nstr(l, 25)
            lm = merged.get(kk, (l, 0))
            merged[kk] = (lm[0], lm[1] + m)
        comp = {l: m for l, m in merged.values()}
    return mp.fsum(m * max(0, 1 - mp.exp(eps - l)) for l, m in comp.items())


@pytest.mark.parametrize("scale,D,q,k", [(1.0, 1, 1.0, 3), (2.0, 3, 1.0, 2), (1.5, 2, 0.3, 3)])
def test_discrete_laplace_contains_exact_composition(scale, D, q, k):
    pld = PLD.from_discrete_laplace(scale=scale, sensitivity=D, sampling_rate=q).self_compose(k)
    with mp.workdps(30):
        for eps in [0.1, 0.5, 1.0]:
            truth = max(_exact_delta(_exact_atoms_dlap(scale, D, mp.mpf(q), rem), k, mp.mpf(eps)) for rem in (True, False))
            iv = pld.delta(eps)
            assert iv.lower - 1e-15 <= truth <= iv.upper + 1e-15, (eps, iv, truth)


def test_discrete_laplace_bad_input():
    with pytest.raises(TypeError, match="sensitivity"):
        PLD.from_discrete_laplace(scale=1.0, sensitivity=1.5)
    with pytest.raises(ValueError, match="sensitivity"):
        PLD.from_discrete_laplace(scale=1.0, sensitivity=0)
    with pytest.raises(ValueError, match="scale"):
        PLD.from_discrete_laplace(scale=0.0)


# ----- trade-off function -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mu,k", [(1.0, 1), (0.5, 16), (0.02, 2500), (3.0, 2)])
def test_tradeoff_contains_gdp(mu, k):
    alpha = np.array([0.0, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9, 1.0])
    iv = PLD.from_gdp(mu).self_compose(k).tradeoff(alpha)
    truth = pydp_core.gdp.tradeoff(alpha, mu * math.sqrt(k))
    assert np.all(iv.lower <= truth + 1e-15) and np.all(truth <= iv.upper + 1e-15), (iv, truth)
    assert np.all(iv.upper - iv.lower < 1e-4)


def test_tradeoff_subsampled_is_a_tradeoff_function():
    alpha = np.linspace(0.0, 1.0, 41)
    iv = PLD.from_noise(Laplace(), scale=1.0, sampling_rate=0.1).self_compose(50).tradeoff(alpha)
    assert np.all(iv.lower <= iv.upper)
    assert np.all(np.diff(iv.lower) <= 1e-12) and np.all(np.diff(iv.upper) <= 1e-12)  # non-increasing
    assert np.all(iv.upper <= 1.0 - alpha + 1e-12)  # beta <= 1 - alpha
    # Pure DP: the composed trade-off is above the (eps, 0)-DP one for the composed eps = 50 * log(1 + q(e - 1)).
    e = 50 * math.log1p(0.1 * math.expm1(1.0))
    floor = np.maximum.reduce([np.zeros_like(alpha), 1 - math.exp(e) * alpha, math.exp(-e) * (1 - alpha)])
    assert np.all(iv.upper >= floor - 1e-12)


def test_tradeoff_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        PLD.from_gdp(1.0).tradeoff(1.5)
    with pytest.raises(ValueError, match="alpha"):
        PLD.from_gdp(1.0).tradeoff(float("nan"))


def test_too_coarse_for_tolerance_names_value_step():
    p = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(1000)
    with pytest.raises(ValueError, match="value_step"):
        p.with_discretization(value_step=0.05).epsilon(1e-5, tolerance=1e-4)
    with pytest.raises(ValueError, match="value_step"):
        p.with_discretization(value_step=0.05).delta([1.0, 2.0], tolerance=1e-9)
    iv = p.epsilon(1e-5, tolerance=1e-3)
    assert iv.upper - iv.lower <= 1e-3
    with pytest.raises(ValueError, match="tolerance"):
        p.epsilon(1e-5, tolerance=-1.0)


# ----- Poisson sampling for the other families, one step, against mpmath ---------------------------------------
def _sampled_delta(f, q, d, eps):
    """max over both orders of int (P - e^eps Q)_+ for P = (1-q) f + q f(. - d), Q = f (and reversed)."""

    def dens(x, shift):
        return mp.exp(f.logpdf(x - shift))

    def one(remove):
        def P(x):
            mix = (1 - q) * dens(x, 0) + q * dens(x, d)
            return mix if remove else dens(x, 0)

        def Q(x):
            mix = (1 - q) * dens(x, 0) + q * dens(x, d)
            return dens(x, 0) if remove else mix

        g = lambda x: mp.log(P(x)) - eps - mp.log(Q(x))  # monotone in x (log-concave f)  # noqa: E731
        lo, hi = mp.mpf(-60), mp.mpf(60)
        if g(hi) <= 0 and g(lo) <= 0:
            return mp.mpf(0)
        increasing = g(hi) > g(lo)
        for _ in range(200):  # bisection for the crossing
            mid = (lo + hi) / 2
            if (g(mid) > 0) == increasing:
                hi = mid
            else:
                lo = mid
        x0 = (lo + hi) / 2
        # Split also at the kinks of |x|^r and |x - d|^r, where the integrand is not smooth.
        inner = sorted(set(p for p in (mp.mpf(0), d) if (p > x0) == increasing))
        piece = [x0, *inner, x0 + 10 + d, mp.inf] if increasing else [-mp.inf, x0 - 10 - d, *inner, x0]
        return mp.quad(lambda x: max(P(x) - mp.exp(eps) * Q(x), 0), piece)

    return max(one(True), one(False))


@pytest.mark.parametrize("noise", [Laplace(), Logistic(), Subbotin(1.5), Subbotin(3.0)], ids=repr)
def test_sampled_single_step_contains_mpmath(noise):
    f = REF.family(REF.family_key(noise))
    q = 0.3
    pld = PLD.from_noise(noise, scale=1.0, sampling_rate=q)
    with mp.workdps(30):
        for eps in [0.05, 0.2, 0.5]:
            truth = _sampled_delta(f, mp.mpf(q), mp.mpf(1), mp.mpf(eps))
            iv = pld.delta(eps)
            assert iv.lower <= truth <= iv.upper, (noise, eps, iv, truth)


# ----- extreme scales (regressions) ----------------------------------------------------------------------------
@pytest.mark.parametrize("scale,k", [(1e3, 1), (1e3, 100), (1e-3, 1), (1e-3, 100), (3e-2, 1)])
def test_extreme_scales_contain_gdp(scale, k):
    # A loss narrower than the grid step once gave a lower end above the truth (the epsilon search took the
    # top of the first cell); losses beyond e^{-700} once placed the optimistic atoms at the top of their
    # cells (an underflowed Q-mass); both must stay certified.
    pld = PLD.from_noise(Gaussian(), scale=scale).self_compose(k)
    mu = math.sqrt(k) / scale
    for d in [1e-2, 1e-5]:
        iv = pld.epsilon(d)
        assert _contains(iv, pydp_core.gdp.gdp_epsilon(mu, delta=d)), (scale, k, d, iv)
    eps = np.array([0.0, 0.25 * mu * mu, 0.5 * mu * mu + mu])
    ivd = pld.delta(eps)
    truth = pydp_core.gdp.gdp_delta(mu, epsilon=eps)
    assert np.all(ivd.lower <= truth * (1 + 1e-12) + 1e-300) and np.all(truth <= ivd.upper * (1 + 1e-12) + 1e-300)


# ----- k = 3 against a nested convolution integral (independent double-precision reference) ----------------------
def _plain_family(noise):
    """(logpdf, sf) of the unit family in plain math / scipy.special, independent of pydp_core's kernels."""
    from scipy import special

    if isinstance(noise, Laplace):
        return (lambda x: -abs(x) - math.log(2.0)), (lambda x: 0.5 * math.exp(-x) if x >= 0 else 1 - 0.5 * math.exp(x))
    if isinstance(noise, Logistic):
        def logpdf(x):
            a = abs(x)
            return -a - 2.0 * math.log1p(math.exp(-a))

        return logpdf, (lambda x: special.expit(-x))
    r = noise.r
    log_c = math.log(2.0) + special.gammaln(1.0 / r) + (1.0 / r - 1.0) * math.log(r)

    def sf(x):
        tail = 0.5 * special.gammaincc(1.0 / r, abs(x) ** r / r)
        return tail if x >= 0 else 1.0 - tail

    return (lambda x: -abs(x) ** r / r - log_c), sf


def _nested_delta(noise, k, eps, d=1.0):
    """delta of the k-fold composition of P = f(. - d) vs Q = f: delta_k(e) = int f(x - d) delta_{k-1}(e - L(x)) dx."""
    from scipy import integrate, optimize

    logpdf, sf = _plain_family(noise)

    def loss(x):
        return logpdf(x - d) - logpdf(x)

    lmax = loss(40.0)
    last = [d]  # warm start: consecutive quadrature nodes ask for nearby thresholds

    def threshold(e):
        g = lambda z: loss(z) - e  # noqa: E731
        z, h = last[0], 1e-7
        for _ in range(30):  # secant-free Newton with a numerical slope, kept inside (d/2, 40)
            slope = (g(z + h) - g(z - h)) / (2 * h)
            if not slope > 0:
                break
            nz = min(max(z - g(z) / slope, d / 2), 40.0)
            if abs(nz - z) < 1e-13 * (1 + abs(z)):
                last[0] = nz
                return nz
            z = nz
        z = optimize.brentq(g, d / 2, 40.0, xtol=1e-14, rtol=1e-15)
        last[0] = z
        return z

    def delta1(e):
        if e < 0:  # the PLD is its own reverse: delta(e) = e^e delta(-e) + 1 - e^e
            return math.exp(e) * delta1(-e) + 1.0 - math.exp(e)
        if e >= lmax - 1e-12:
            return 0.0
        u = d / 2 if e == 0.0 else threshold(e)
        return sf(u - d) - math.exp(e) * sf(u)

    def delta_k(j, e):
        if j == 1:
            return delta1(e)
        f = lambda x: math.exp(logpdf(x - d)) * delta_k(j - 1, e - loss(x))  # noqa: E731
        return integrate.quad(f, -20.0, 21.0, points=[0.0, d / 2, d], epsabs=1e-11, epsrel=1e-9, limit=100)[0]

    return delta_k(k, eps)


@pytest.mark.parametrize("noise", [Laplace(), Logistic(), Subbotin(1.5)], ids=repr)
def test_three_fold_contains_nested_integral(noise):
    truth = _nested_delta(noise, 3, 1.2)
    iv = PLD.from_noise(noise, scale=1.0).self_compose(3).delta(1.2)
    # The reference is accurate to ~1e-9 (double precision, nested quadrature); the interval is ~1e-5 wide.
    assert iv.lower - 1e-8 <= truth <= iv.upper + 1e-8, (noise, iv, truth)
    assert iv.upper - iv.lower < 1e-3


def test_compose_command_prints_a_certified_interval(tmp_path, capsys):
    import json

    from pydp_core import cli

    spec = tmp_path / "mechs.json"
    spec.write_text(json.dumps({"mechanisms": [
        {"noise": "gaussian", "scale": 2.0, "count": 4},
        {"gdp": 0.5},
    ]}))
    assert cli.main(["compose", str(spec), "--delta", "1e-5", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # four GDP(0.5) steps and one GDP(0.5): GDP(sqrt(5) / 2) exactly
    truth = pydp_core.gdp.gdp_epsilon(math.sqrt(5.0) / 2.0, delta=1e-5)
    assert got["epsilon"]["lower"] <= truth <= got["epsilon"]["upper"]
    assert got["epsilon"]["upper"] - got["epsilon"]["lower"] < 1e-3
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"noise": "cauchy", "scale": 1.0}]))
    assert cli.main(["compose", str(bad), "--delta", "1e-5"]) == 1
    assert "noise must be one of" in capsys.readouterr().err
