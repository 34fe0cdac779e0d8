"""PLD calibration: the smallest noise scale whose composed upper bound meets (epsilon, delta).

The returned scale must pass (certified upper delta(epsilon) <= target on the grid it reports), 0.999 times
it must fail for certain (certified lower delta > target), and the certified bracket must contain the exact
minimal scale where one is known: k Gaussian releases of sensitivity d at scale sigma are exactly
GDP(sqrt(k) d / sigma) (Dong, Roth and Su 2022), whose profile the library evaluates in closed form.
"""
from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq

from pydp_core.accounting import ScaleCalibration, gdp
from pydp_core.accounting.pld import PLD
from pydp_core.calibration import calibrate_box
from pydp_core.noise import Gaussian, Laplace, Logistic, Subbotin

# (noise, epsilon, delta, sensitivity, steps, sampling_rate)
CASES = [
    (Gaussian(), 0.01, 1e-4, 0.002, 100, 1.0),  # a narrow composed loss: the automatic grid is far too coarse
    (Gaussian(), 10.0, 1e-6, 1.0, 10, 1.0),
    (Gaussian(), 1.0, 1e-5, 1.0, 1000, 0.01),
    (Laplace(), 0.01, 1e-4, 0.002, 100, 1.0),
    (Laplace(), 10.0, 1e-6, 1.0, 1, 1.0),
    (Laplace(), 1.0, 1e-6, 1.0, 50, 0.1),
    (Logistic(), 0.01, 1e-4, 0.01, 20, 1.0),
    (Logistic(), 10.0, 1e-8, 1.0, 5, 1.0),
    (Subbotin(1.5), 0.01, 1e-4, 0.002, 100, 1.0),
    (Subbotin(1.5), 10.0, 1e-6, 1.0, 3, 1.0),
    (Subbotin(1.5), 2.0, 1e-6, 1.0, 20, 0.2),
]


def _ids(case):
    noise, eps, delta, sens, k, q = case
    return f"{noise!r}-eps{eps:g}-delta{delta:g}-d{sens:g}-k{k}-q{q:g}"


def _pld(noise, scale, sens, k, q, step):
    return PLD.from_noise(noise, scale=scale, sensitivity=sens, sampling_rate=q).self_compose(k) \
        .with_discretization(value_step=step)


def _gdp_scale(eps, delta, sens, k):
    """The exact minimal sigma of k Gaussian releases: GDP(mu) with mu = sqrt(k) sens / sigma."""
    mu = brentq(lambda m: float(gdp.gdp_delta(m, epsilon=eps)) - delta, 1e-6, 50.0, xtol=1e-15, rtol=1e-15)
    return math.sqrt(k) * sens / mu


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_calibrated_scale_meets_the_target_and_999_permille_does_not(case):
    noise, eps, delta, sens, k, q = case
    c = PLD.calibrate(noise, epsilon=eps, delta=delta, sensitivity=sens, steps=k, sampling_rate=q, certificate=True)
    assert isinstance(c, ScaleCalibration)
    assert c.scale == c.scale_bounds.upper
    assert c.scale_bounds.lower > 0.0 and c.scale_bounds.upper <= c.scale_bounds.lower * (1.0 + 1e-3)
    # The certificate: on its grid the scale passes ...
    at = _pld(noise, c.scale, sens, k, q, c.value_step).delta(eps)
    assert at.upper <= delta
    assert at == c.delta_bounds
    # ... and the lower end of the bracket, and 0.1% less noise, fail for certain: the scale is within 0.1%
    # of the minimal one.
    assert _pld(noise, c.scale_bounds.lower, sens, k, q, c.value_step).delta(eps).lower > delta
    assert _pld(noise, 0.999 * c.scale, sens, k, q, c.value_step).delta(eps).lower > delta
    # The float form is the same search.
    assert PLD.calibrate(noise, epsilon=eps, delta=delta, sensitivity=sens, steps=k, sampling_rate=q) == c.scale


@pytest.mark.parametrize("eps, delta, sens, k", [(0.01, 1e-4, 0.002, 100), (10.0, 1e-6, 1.0, 10), (0.5, 1e-10, 1.0, 1000),
                                                 (1.0, 1e-5, 1e-5, 1)])
def test_gaussian_bracket_contains_the_exact_gdp_scale(eps, delta, sens, k):
    exact = _gdp_scale(eps, delta, sens, k)
    c = PLD.calibrate(Gaussian(), epsilon=eps, delta=delta, sensitivity=sens, steps=k, certificate=True)
    assert c.scale_bounds.lower <= exact * (1 + 1e-12) and exact <= c.scale * (1 + 1e-12)
    assert c.scale <= exact * 1.001


def test_reported_narrow_case_lands_on_the_exact_scale():
    # Found by a user: the automatic grid gave 15.06, 4.4 times the exact 3.4515.
    exact = _gdp_scale(0.01, 1e-4, 0.002, 100)
    assert exact == pytest.approx(3.4515, abs=1e-4)
    s = PLD.calibrate(Gaussian(), epsilon=0.01, delta=1e-4, sensitivity=0.002, steps=100)
    assert exact <= s <= exact * 1.005


def test_dpsgd_calibration():
    c = PLD.calibrate(Gaussian(), epsilon=4.0, delta=1e-5, steps=10_000, sampling_rate=0.01, certificate=True)
    assert c.scale_bounds.upper <= c.scale_bounds.lower * (1.0 + 1e-3)
    step = PLD.from_noise(Gaussian(), scale=c.scale, sampling_rate=0.01).self_compose(10_000)
    assert step.with_discretization(value_step=c.value_step).delta(4.0).upper <= 1e-5
    # sigma = 1 gives epsilon 6.19 at these settings: more noise is needed for epsilon = 4.
    assert c.scale_bounds.lower > 1.0


@pytest.mark.parametrize("noise, eps, n", [(Gaussian(), 0.01, 100), (Subbotin(1.5), 1.0, 10), (Laplace(), 4.0, 1)], ids=repr)
def test_calibrate_box_is_the_same_search(noise, eps, n):
    # The corner of the box at N = n is the n-fold one-dimensional mechanism: both brackets hold the same
    # exact minimal scale, so they overlap.
    box = calibrate_box(noise, epsilon=eps, delta=1e-4, sensitivity=0.002, dimension=n)
    pld = PLD.calibrate(noise, epsilon=eps, delta=1e-4, sensitivity=0.002, steps=n, certificate=True)
    assert max(box.scale_bounds.lower, pld.scale_bounds.lower) <= min(box.scale, pld.scale)
    assert box.delta_bounds.upper <= 1e-4


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=float("nan")), ValueError, "epsilon"),
    (dict(delta=0.0), ValueError, "delta"),
    (dict(delta=1.0), ValueError, "delta"),
    (dict(steps=1.5), TypeError, "steps"),
    (dict(steps=0), ValueError, "steps"),
    (dict(sensitivity=0.0), ValueError, "sensitivity"),
    (dict(sampling_rate=0.0), ValueError, "sampling_rate"),
    (dict(sampling_rate=1.5), ValueError, "sampling_rate"),
    (dict(rtol=0.0), ValueError, "rtol"),
    (dict(rtol=0.5), ValueError, "rtol"),
])
def test_bad_input_names_the_argument(kwargs, error, word):
    args = dict(epsilon=1.0, delta=1e-5)
    args.update(kwargs)
    with pytest.raises(error, match=word):
        PLD.calibrate(Gaussian(), **args)


@pytest.mark.parametrize("delta", [0.3, 0.7])
def test_large_delta_targets(delta):
    # Far from the usual tiny deltas: the pass/fail decisions are exact comparisons with the target.
    c = PLD.calibrate(Gaussian(), epsilon=0.5, delta=delta, steps=4, certificate=True)
    exact = _gdp_scale(0.5, delta, 1.0, 4)
    assert c.scale_bounds.lower <= exact <= c.scale <= exact * 1.001
    assert _pld(Gaussian(), c.scale, 1.0, 4, 1.0, c.value_step).delta(0.5).upper <= delta


def test_calibrate_under_substitution_is_the_add_remove_scale_at_twice_the_sensitivity():
    sub = PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-6, steps=4, neighbours="substitution", certificate=True)
    ar = PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-6, sensitivity=2.0, steps=4, certificate=True)
    assert sub.scale_bounds.lower <= ar.scale and ar.scale_bounds.lower <= sub.scale
    with pytest.raises(ValueError, match="neighbours"):
        PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-6, sampling_rate=0.1, sampling="without_replacement")
