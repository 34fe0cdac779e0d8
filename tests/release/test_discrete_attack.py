"""Mironov's least-significant-bit attack (Mironov 2012), against naive float noise and the release path.

Two neighbouring inputs x0 = 0 and x1 = sensitivity - g (g the release grid; x1 is an odd number of grid
steps, so the low bits of the outputs differ in distribution as much as they can). The distinguisher looks
only at the binary representation of an output y: v(y) = the exponent of its lowest set bit
(y = odd * 2^v(y)). It uses the events S_j = {v(y) < j} and S'_j = {v(y) >= j} for every j.

A mechanism is (eps, delta)-DP only if P(S | x0) <= e^eps P(S | x1) + delta for every event S (and with
x0, x1 swapped). From n draws under each input we bound both probabilities with Clopper-Pearson intervals
at a total false-alarm rate of 1e-6 (Bonferroni over all events):

- naive numpy Laplace noise: the lower bound of P(S|x0) exceeds e^eps times the upper bound of P(S|x1)
  by far more than delta (the attack wins, with confidence);
- the release path: no event violates the guarantee even at the confidence limits.
"""

import numpy as np
import pytest
from support.lsb import N, lowest_bit_exponent, worst_violation

import pydp_core as pc
from pydp_core import release as dsc

EPS = 1.0
SENS = 1.0


def test_lowest_bit_exponent():
    y = np.array([1.0, 3.0, 0.75, 2.0**-60, -6.0, 5 * 2.0**-1074, 0.0])
    assert lowest_bit_exponent(y).tolist() == [0, 0, -2, -60, 1, -1074, 10**6]


def test_attack_wins_against_naive_float_laplace():
    plan = dsc.calibrate_laplace_release(epsilon=EPS, sensitivity=SENS)
    x0, x1 = 0.0, SENS - plan.grid
    rng = np.random.default_rng(2012)
    scale = SENS / EPS  # the textbook calibration: pure eps-DP on paper
    out0 = x0 + rng.laplace(0.0, scale, N)
    out1 = x1 + rng.laplace(0.0, scale, N)
    certain, point = worst_violation(out0, out1, EPS, 0.0)
    # the guarantee is broken with confidence, by a wide margin: an event with P(S|x0) - e P(S|x1) > 0.25
    assert certain > 0.25, (certain, point)


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_attack_stays_inside_the_guarantee_on_the_release_path(mech):
    if mech == "laplace":
        plan, delta = dsc.calibrate_laplace_release(epsilon=EPS, sensitivity=SENS), 0.0
    else:
        delta = 1e-6
        plan = dsc.calibrate_gaussian_release(epsilon=EPS, delta=delta, sensitivity=SENS)
    x0, x1 = 0.0, SENS - plan.grid
    assert round(x1 / plan.grid) % 2 == 1
    r = pc.Random(414)
    out0 = plan.release(np.full(N, x0), rng=r, simulation=True)
    out1 = plan.release(np.full(N, x1), rng=r, simulation=True)
    certain, point = worst_violation(out0, out1, EPS, delta)
    assert certain <= 0.0, (certain, point)
    # and the same distinguisher sees essentially nothing (grid outputs: low bits carry no signal)
    assert point < 0.01
