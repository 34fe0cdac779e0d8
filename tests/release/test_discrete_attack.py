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
import math

import numpy as np
import pytest
from scipy import stats
from support.stats import ALPHA  # noqa: E402

import pydp_core as pc
from pydp_core import release as dsc

N = 400_000
JS = list(range(-1080, 1025))


def lowest_bit_exponent(y: np.ndarray) -> np.ndarray:
    """v with y = odd * 2^v for y != 0 (exact, from the float's bits); a large value for y == 0."""
    m, e = np.frexp(y)  # y = m 2^e, 0.5 <= |m| < 1, m has at most 53 significant bits
    mant = np.abs(np.ldexp(m, 53)).astype(np.int64)  # integer mantissa, exact
    low = mant & -mant  # lowest set bit as a power of two
    v = e.astype(np.int64) - 53 + np.log2(np.maximum(low, 1)).astype(np.int64)
    return np.where(y == 0, 10**6, v)


def cp_bounds(count: np.ndarray, n: int, alpha: float):
    lo = np.where(count > 0, stats.beta.ppf(alpha / 2, count, n - count + 1), 0.0)
    hi = np.where(count < n, stats.beta.isf(alpha / 2, count + 1, n - count), 1.0)
    return lo, hi


def event_counts(v: np.ndarray) -> np.ndarray:
    """Counts of S_j = {v < j} for j in JS, then of the complements."""
    below = np.searchsorted(np.sort(v), JS, side="left")
    return np.concatenate([below, v.size - below])


def worst_violation(out0: np.ndarray, out1: np.ndarray, eps: float, delta: float) -> tuple[float, float]:
    """(largest certain violation, largest point-estimate advantage) over all events and both directions.

    certain violation = lower(P(S|a)) - e^eps upper(P(S|b)) - delta (> 0 means the guarantee is broken
    with confidence 1 - 1e-6)."""
    c0, c1 = event_counts(lowest_bit_exponent(out0)), event_counts(lowest_bit_exponent(out1))
    alpha = ALPHA / (2 * 2 * len(c0))  # Bonferroni: events x directions x two intervals each
    lo0, hi0 = cp_bounds(c0, out0.size, alpha)
    lo1, hi1 = cp_bounds(c1, out1.size, alpha)
    e = math.exp(eps)
    certain = max(np.max(lo0 - e * hi1 - delta), np.max(lo1 - e * hi0 - delta))
    point = max(np.max(c0 / out0.size - e * c1 / out1.size), np.max(c1 / out1.size - e * c0 / out0.size))
    return float(certain), float(point)


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
