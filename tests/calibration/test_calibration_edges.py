"""Calibration at its edges against the 50-digit references of tests/support/mpref.py.

- epsilon_for_delta, gdp.gdp_epsilon and GDP.to_approx_dp are rounded up: the exact delta at the
  returned epsilon never exceeds the target, also just below the total variation delta(0) (where
  epsilon -> 0 and the equation is ill-conditioned) and as delta -> 1. The answer is also checked not to
  be loose: the exact delta there is within 1e-9 (relative to min(delta, 1 - delta)) of the target.
- minimal_scale keeps its 1e-12 relative margin as delta -> 1, is exact for the Logistic at tiny
  epsilon and delta (where delta^2 underflows), and raises CalibrationError, naming the overflow, where
  the true minimal scale is beyond the double range.
"""
import math

import mpmath as mp
import pytest
from support import mpref as R

import pydp_core as dp


def _targets(key, scale, sens=1.0):
    """Deltas just below the total variation TV = delta(0): TV (1 - 10^-k), and a few doubles below TV."""
    with mp.workdps(60):
        tv = mp.exp(R.log_privacy_profile(key, 0.0, scale, sens))
        out = {float(tv * (1 - mp.mpf(10) ** -k)) for k in range(3, 17)}
        top = float(tv)
        if top > tv:
            top = math.nextafter(top, 0.0)
        for _ in range(4):
            out.add(top)
            top = math.nextafter(top, 0.0)
    return sorted(x for x in out if 0 < x < 1)


def _near_one():
    return [float(1 - mp.mpf(10) ** -k) for k in (1, 2, 4, 6, 8, 10, 12, 14, 15)]


def _check_eps(key, eps, delta, scale, sens=1.0):
    """'' if eps is a correct, tight rounded-up answer for delta, else a message with the numbers."""
    with mp.workdps(60):
        target = mp.mpf(delta)
        exact_delta = mp.exp(R.log_privacy_profile(key, eps, scale, sens))
        if exact_delta > target:
            ref = R.epsilon_for_delta(key, delta, scale, sens)
            return (f"delta={delta!r} scale={scale!r} D={sens!r}: eps {eps!r} below exact {mp.nstr(ref, 20)}; "
                    f"exact delta there {mp.nstr(exact_delta, 20)} exceeds the target by "
                    f"{float(exact_delta / target - 1):.3g} relative")
        if eps > 0 and target - exact_delta > 1e-9 * min(target, 1 - target):
            return (f"delta={delta!r} scale={scale!r} D={sens!r}: eps {eps!r} too loose: exact delta "
                    f"{mp.nstr(exact_delta, 20)} vs target {delta!r}")
    return ""


CASES = [
    (dp.Laplace(), 1.0), (dp.Logistic(), 1.0), (dp.Gaussian(), 1.0), (dp.Subbotin(3.0), 1.0),
    (dp.Subbotin(1.5), 0.5), (dp.Gaussian(), 1 / 8.01), (dp.Subbotin(3.0), 0.3),
]


@pytest.mark.parametrize("noise,scale", CASES, ids=lambda v: repr(v))
def test_epsilon_for_delta_never_below_exact_near_total_variation(noise, scale):
    key = R.family_key(noise)
    bad = [m for dl in _targets(key, scale) if (m := _check_eps(key, float(dp.epsilon_for_delta(noise, delta=dl, scale=scale)), dl, scale))]
    assert not bad, f"{noise!r}:\n" + "\n".join(bad)


@pytest.mark.parametrize("noise,scale", [(dp.Laplace(), 0.02), (dp.Logistic(), 0.02), (dp.Gaussian(), 0.025),
                                         (dp.Subbotin(3.0), 0.1), (dp.Subbotin(1.5), 0.05)], ids=lambda v: repr(v))
def test_epsilon_for_delta_never_below_exact_as_delta_tends_to_one(noise, scale):
    key = R.family_key(noise)
    bad = [m for dl in _near_one() if (m := _check_eps(key, float(dp.epsilon_for_delta(noise, delta=dl, scale=scale)), dl, scale))]
    assert not bad, f"{noise!r}:\n" + "\n".join(bad)


@pytest.mark.parametrize("mu", [0.5, 1.0, 8.0, 8.01, 12.0, 40.0])
def test_gdp_and_sensitivity_index_epsilon_never_below_exact(mu):
    key = ("Gaussian",)
    deltas = _targets(key, 1.0, mu) + _near_one()
    bad = []
    for dl in deltas:
        for how, eps in (("GDP.to_approx_dp", dp.GDP(mu).to_approx_dp(dl).epsilon),
                         ("gdp.gdp_epsilon", float(dp.gdp.gdp_epsilon(mu, delta=dl)))):
            m = _check_eps(key, eps, dl, 1.0, mu)
            if m:
                bad.append(f"{how}: {m}")
    assert not bad, f"mu={mu}:\n" + "\n".join(bad)


@pytest.mark.parametrize("noise", [dp.Laplace(), dp.Logistic(), dp.Gaussian(), dp.Subbotin(3.0)], ids=repr)
def test_minimal_scale_margin_as_delta_tends_to_one(noise):
    key = R.family_key(noise)
    bad = []
    for dl in _near_one():
        s = float(dp.minimal_scale(noise, epsilon=1.0, delta=dl))
        exact = R.minimal_scale(key, 1.0, dl, 1.0, guess=1.0 / s)
        with mp.workdps(50):
            rel = float(mp.mpf(s) / exact - 1)
        if not 0 <= rel <= 2e-12:
            bad.append(f"delta={dl!r}: scale {s!r} vs exact {mp.nstr(exact, 20)} (rel {rel:.3g})")
    assert not bad, f"{noise!r}:\n" + "\n".join(bad)


@pytest.mark.parametrize("eps,delta", [(1e-200, 1e-200), (1e-160, 1e-160), (1e-300, 1e-250), (0.0, 1e-170), (1e-20, 1e-300)])
def test_logistic_minimal_scale_tiny_epsilon_and_delta(eps, delta):
    # Theorem 4 (Vinterbo 2022) in 700 digits: D / s* = 2 log((e^(eps/2) + sqrt(delta (e^eps + delta - 1))) / (1 - delta))
    s = float(dp.minimal_scale(dp.Logistic(), epsilon=eps, delta=delta, sensitivity=1e-280))
    with mp.workdps(700):
        e, dl = mp.mpf(eps), mp.mpf(delta)
        shift = 2 * mp.log((mp.exp(e / 2) + mp.sqrt(dl * (mp.exp(e) + dl - 1))) / (1 - dl))
        exact = mp.mpf(1e-280) / shift
        rel = float(mp.mpf(s) / exact - 1)
    assert 0 <= rel <= 1e-9, (s, mp.nstr(exact, 20), rel)


@pytest.mark.parametrize("noise,eps,delta,sens", [
    (dp.Laplace(), 1e-300, 1e-300, 1e10),
    (dp.Laplace(), 1e-300, 0.0, 1e10),
    (dp.Logistic(), 1e-300, 1e-300, 1e10),
    (dp.Logistic(), 1e-300, 0.0, 1e10),
    (dp.Subbotin(3.0), 1e-300, 1e-300, 1e10),
    (dp.Gaussian(), 1.0, 1e-10, 1e308),
    (dp.Subbotin(3.0), 1.0, 1e-10, 1e308),
])
def test_minimal_scale_beyond_the_double_range_raises(noise, eps, delta, sens):
    with pytest.raises(dp.CalibrationError, match="overflows"):
        dp.minimal_scale(noise, epsilon=eps, delta=delta, sensitivity=sens)


@pytest.mark.parametrize("r,eps,delta", [(1.001, 1.0, 2.9899806045183994e-40), (1.001, 1.0, 1e-60), (1.001, 3.0, 1e-35),
                                         (1.003, 1.0, 1e-100)])
def test_minimal_scale_subbotin_near_laplace_where_the_profile_bends_sharply(r, eps, delta):
    # Subbotin r ~ 1 with the shift just below eps: the threshold lies astronomically far out and log delta
    # falls by ~1e17 over a few percent of the shift, where Newton crawled and the solver stopped 3.7% high.
    noise = dp.Subbotin(r)
    s = float(dp.minimal_scale(noise, epsilon=eps, delta=delta))
    exact = R.minimal_scale(R.family_key(noise), eps, delta, 1.0, guess=1.0 / s)
    with mp.workdps(50):
        rel = float(mp.mpf(s) / exact - 1)
    assert 0 <= rel <= 1e-9, (s, mp.nstr(exact, 20), rel)
