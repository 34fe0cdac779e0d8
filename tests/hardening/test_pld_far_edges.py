"""The PLD's certified delta interval at its far edges: the deep tail down to delta = 1e-300 and nearly
non-private mechanisms (delta = 1 to double precision), against the 70-digit Lemma 1 profile of
support.mpref (written from the definitions, independent of the kernels)."""
import mpmath as mp
import numpy as np
import pytest
from support import mpref

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace, Logistic, Subbotin


def _contains(iv, key, eps, scale):
    ref = mpref.privacy_profile(key, float(eps), scale)
    return mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (eps, iv, mp.nstr(ref, 20))


@pytest.mark.parametrize("noise, scale, top", [(Gaussian(), 1.0, 37.2), (Gaussian(), 2.0, 18.55), (Subbotin(1.5), 1.0, 10.05)])
def test_deep_tail_intervals_contain_the_exact_delta_down_to_1e_300(noise, scale, top):
    pld = PLD.from_noise(noise, scale=scale).with_discretization(tail_mass=1e-300)
    h = pld.value_step
    key = mpref.family_key(noise)
    # Half the points on the loss grid (where the pessimistic side is exact and only rounding separates
    # it from the truth), half between grid points; from delta ~ 1e-20 down to ~ 1e-300.
    lo = 0.25 * top
    on_grid = np.round(np.linspace(lo, top, 50) / h) * h
    between = np.linspace(lo, top, 50) + 0.37 * h
    eps = np.concatenate([on_grid, between])
    iv = pld.delta(eps)
    refs = [mpref.privacy_profile(key, float(e), scale) for e in eps]
    assert min(refs) < mp.mpf("1e-290")
    bad = [(float(e), float(lo_), float(up), mp.nstr(r, 17)) for e, lo_, up, r in zip(eps, iv.lower, iv.upper, refs)
           if not (mp.mpf(float(lo_)) <= r <= mp.mpf(float(up)))]
    assert not bad, bad[:5]


@pytest.mark.parametrize("scale, eps", [(1.0, 35.0), (2.0, 16.995)])
def test_the_reported_deep_tail_points_are_contained(scale, eps):
    iv = PLD.from_noise(Gaussian(), scale=scale).with_discretization(tail_mass=1e-300).delta(eps)
    ok, info = _contains(iv, ("Gaussian",), eps, scale)
    assert ok, info


@pytest.mark.parametrize("noise, scale", [(Gaussian(), 0.01), (Gaussian(), 0.05), (Subbotin(1.5), 0.01),
                                          (Laplace(), 0.01)])
@pytest.mark.parametrize("eps", [0.0, 1.0, 5.0])
def test_nearly_non_private_mechanisms_have_an_upper_end_at_the_truth(noise, scale, eps):
    iv = PLD.from_noise(noise, scale=scale).delta(eps)
    ok, info = _contains(iv, mpref.family_key(noise), eps, scale)
    assert ok, info
    assert iv.upper <= 1.0
    assert iv.upper - iv.lower < 1e-12


def _gdp_delta(mu: float, eps: float):
    """delta(eps) of the Gaussian mechanism with mu = sensitivity / scale (Balle and Wang 2018):
    Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), with enough digits for its cancellation (relative
    size about max(mu, eps)); erf(mu / (2 sqrt 2)) at eps = 0, exact without cancellation."""
    m, e = mp.mpf(mu), mp.mpf(eps)
    with mp.workdps(80 + int(-mp.log10(m))):
        if e == 0:
            return +mp.erf(m / (2 * mp.sqrt(2)))
        return +(mp.ncdf(m / 2 - e / m) - mp.exp(e) * mp.ncdf(-m / 2 - e / m))


@pytest.mark.parametrize("scale", [float(s) for s in np.logspace(12, 300, 25)])
def test_huge_scales_keep_the_exact_delta_inside_the_interval(scale):
    # Nearly all of both laws sits in the one or two grid cells around loss 0, where the P- and Q-masses
    # (about 1/2 each) agree to ~1/scale: below 1e-16 their difference is lost in the tails' rounding,
    # so the upper end is the tails' error allowance (~1.3e-15) rather than 2 delta; it must never be 0.
    # Width: the pessimistic side raises every loss by at most one grid step h, so its delta(eps) is at most
    # the exact delta(eps - h) (delta(0) for eps <= h), up to that allowance.
    mu = 1.0 / scale
    pld = PLD.from_noise(Gaussian(), scale=scale)
    h = pld.value_step
    for eps in (0.0, 1e-12, mu / 3.0):
        iv = pld.delta(eps)
        if eps / mu - mu / 2 > 40.0:
            # The truth lies in (0, Phi(-40)) and Phi(-40) < 1e-349 is below every positive double.
            assert iv.lower == 0.0 and iv.upper > 0.0, (scale, eps, iv)
            continue
        ref = _gdp_delta(mu, eps)
        assert mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (scale, eps, iv, mp.nstr(ref, 17))
        assert iv.upper <= 2 * _gdp_delta(mu, max(eps - h, 0.0)) + 2e-15, (scale, eps, h, iv, mp.nstr(ref, 17))


@pytest.mark.parametrize("scale", [1e15, 1e18, 1e20, 1e50, 1e300])
def test_huge_scales_compose_to_an_interval_that_contains_the_truth(scale):
    # k-fold composition of GDP(mu) is GDP(sqrt(k) mu). The composed upper end carries the composition's
    # own allowances (8.4e-9 at scale 1e15 on its automatic step of 3.3e-8, 4.4e-13 from 1e18 on).
    k = 16
    iv = PLD.from_noise(Gaussian(), scale=scale).self_compose(k).delta(0.0)
    ref = _gdp_delta(4.0 / scale, 0.0)
    assert mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (scale, iv, mp.nstr(ref, 17))
    assert iv.upper <= 2 * ref + 1e-8


@pytest.mark.parametrize("scale", [1e12, 1e15, 1e18, 1e50, 1e300])
def test_huge_scales_of_the_logistic_keep_its_exact_delta_at_zero(scale):
    # Logistic noise: the loss is monotone with the privacy-loss set {x > d/2}, so
    # delta(0) = F(d/2) - F(-d/2) = tanh(d/4) exactly.
    with mp.workdps(60):
        ref = mp.tanh(1 / (4 * mp.mpf(scale)))
    iv = PLD.from_noise(Logistic(), scale=scale).delta(0.0)
    assert mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (scale, iv, mp.nstr(ref, 17))
    assert iv.upper <= 2 * ref + 2e-15


# Laplace noise of a huge scale b (sensitivity 1, add/remove): the loss is bounded by d = 1/b, with atoms
# at +-d; its grid window and the composed window must scale with d down to 1e-300.
_LAPLACE_SCALES = [1e12, 1e14, 1e16, 1e18, 1e20, 1e30, 1e50, 1e80, 1e100, 1e150, 1e200, 1e250, 1e300]


def _laplace_delta(scale: float, eps: float):
    """delta(eps) of Laplace(b) noise at sensitivity 1, either order: with d = 1/b the loss is
    |x| - |x - d| (in units of b), so L > eps iff x > (eps + d) / 2 for eps in [0, d), and
    P(L > eps) - e^eps Q(L > eps) = 1 - e^{(eps - d)/2} (0 from eps = d on)."""
    with mp.workdps(60):
        d = 1 / mp.mpf(scale)
        e = mp.mpf(eps)
        return max(mp.mpf(0), -mp.expm1((e - d) / 2))


@pytest.mark.parametrize("scale, eps", [(0.5, 0.3), (1.0, 0.0), (1.0, 0.7), (3.0, 0.1), (3.0, 0.5)])
def test_the_laplace_closed_form_is_the_lemma_1_profile(scale, eps):
    ref = mpref.privacy_profile(("Laplace",), eps, scale)
    assert abs(_laplace_delta(scale, eps) - ref) <= mp.mpf("1e-25") * max(ref, mp.mpf(1)), (scale, eps, ref)


@pytest.mark.parametrize("scale", _LAPLACE_SCALES)
@pytest.mark.parametrize("value_step", [None, 1e-4])
def test_huge_scales_of_the_laplace_keep_its_exact_delta(scale, value_step):
    # Width as for the Gaussian above: the pessimistic delta(eps) is at most the exact delta(eps - h)
    # (delta(0) itself at eps = 0), twice over for the cells' spread, plus the tails' allowance.
    pld = PLD.from_noise(Laplace(), scale=scale)
    if value_step is not None:
        pld = pld.with_discretization(value_step=value_step)
        assert pld.value_step == value_step  # kept: the largest loss 1/scale lies below it
    h = pld.value_step
    for eps in (0.0, 1e-12, 1.0 / (3.0 * scale)):
        iv = pld.delta(eps)
        ref = _laplace_delta(scale, eps)
        assert mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (scale, eps, iv, mp.nstr(ref, 17))
        assert iv.upper <= 2 * _laplace_delta(scale, max(eps - h, 0.0)) + 2e-14, (scale, eps, h, iv, mp.nstr(ref, 17))


@pytest.mark.parametrize("scale", [1e16, 1e50, 1e300])
def test_huge_scales_of_the_laplace_compose_tightly(scale):
    # The k-fold delta(0) is a total variation distance: at least that of one step, at most k times it.
    k = 16
    iv = PLD.from_noise(Laplace(), scale=scale).self_compose(k).delta(0.0)
    one = _laplace_delta(scale, 0.0)
    assert mp.mpf(float(iv.lower)) <= k * one and mp.mpf(float(iv.upper)) >= one, (scale, iv)
    assert iv.upper <= 2 * k * one + 2e-13, (scale, iv, mp.nstr(one, 17))


def test_a_given_value_step_is_kept_above_the_laplace_loss_and_barely_moved_below_it():
    assert PLD.from_noise(Laplace(), scale=1e6).with_discretization(value_step=1e-3).value_step == 1e-3
    h = PLD.from_noise(Laplace(), scale=0.5).with_discretization(value_step=1e-3).value_step
    n = 2.0 / 1e-3  # grid steps below the largest loss 2
    assert 1e-3 * n / (n + 1) < h <= 1e-3


@pytest.mark.parametrize("scale", [1e12, 1e20, 1e300])
def test_huge_scales_of_the_discrete_laplace_keep_the_sign_of_their_losses(scale):
    # The discrete Laplace on the integers: L > 0 on the outputs >= 1 (P-mass e^0 / (1 + a) with a = e^{-1/t}
    # for the outputs >= 1, Q-mass a / (1 + a)), so delta(0) = (1 - a) / (1 + a) = tanh(1 / (2 t)).
    with mp.workdps(60):
        ref = mp.tanh(1 / (2 * mp.mpf(scale)))
    iv = PLD.from_discrete_laplace(scale=scale).delta(0.0)
    assert mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (scale, iv, mp.nstr(ref, 17))
    assert iv.upper <= 2 * ref + 2e-14


def test_a_discrete_gaussian_of_a_huge_scale_is_refused_naming_scale():
    with pytest.raises(ValueError, match="scale"):
        PLD.from_discrete_gaussian(scale=1e300).delta(0.0)
