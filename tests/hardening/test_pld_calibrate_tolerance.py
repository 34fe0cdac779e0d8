"""PLD.calibrate at small delta: a certified scale within rtol of the exact minimum (mpmath), or a warning."""
import mpmath as mp
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Logistic

mp.mp.dps = 50


def _exact_gaussian_scale(epsilon, delta, sensitivity, start=2):
    """The smallest sigma with Gaussian delta(eps) <= delta (Balle and Wang 2018), by root finding."""
    def f(log_sigma):
        mu = sensitivity / mp.e**log_sigma
        return mp.log(mp.ncdf(-epsilon / mu + mu / 2) - mp.e**epsilon * mp.ncdf(-epsilon / mu - mu / 2)) - mp.log(delta)
    return float(mp.e ** mp.findroot(f, mp.log(start)))


@pytest.mark.parametrize("delta", [1e-15, 1e-16, 1e-20])
def test_gaussian_calibration_at_small_delta_is_certified_and_within_rtol(delta):
    exact = _exact_gaussian_scale(8, mp.mpf(delta), 2)
    c = PLD.calibrate(Gaussian(), epsilon=8, delta=delta, sensitivity=2, certificate=True)
    assert exact <= c.scale <= exact * (1 + 1e-3), (c, exact)
    assert c.scale_bounds.lower <= exact <= c.scale_bounds.upper
    assert c.scale_bounds.upper <= c.scale_bounds.lower * (1 + 1e-3)


def test_a_calibration_that_misses_its_tolerance_says_so():
    # Logistic at (1, 1e-6): the grid leaves the minimum in a bracket wider than rtol = 1e-3; the
    # certified scale comes with a warning naming rtol, and the bracket it states is honest.
    with pytest.warns(RuntimeWarning, match="rtol"):
        c = PLD.calibrate(Logistic(), epsilon=1, delta=1e-6, certificate=True)
    assert c.scale_bounds.upper > c.scale_bounds.lower * (1 + 1e-3)
    assert PLD.from_noise(Logistic(), scale=c.scale).delta(1.0).upper <= 1e-6


@pytest.mark.parametrize("delta", [5e-324, 1e-299])
def test_a_delta_below_what_the_tails_allow_is_refused_at_once(delta):
    with pytest.raises(ValueError, match="delta must be >="):
        PLD.calibrate(Gaussian(), epsilon=1, delta=delta)


def test_calibration_at_delta_1e_297_is_certified_against_the_exact_scale():
    exact = _exact_gaussian_scale(1, mp.mpf("1e-297"), 1, start=37)
    scale = PLD.calibrate(Gaussian(), epsilon=1, delta=1e-297)
    assert exact <= scale <= exact * (1 + 1e-3)
