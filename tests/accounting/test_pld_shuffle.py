"""Shuffled batches: the cube-test lower bound reproduces Chua et al.'s ShuffleAccountant, contains the truth
from below in a small exact case, and sits under the certified no-amplification upper bound."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from pydp_core.accounting.pld.shuffle import shuffle_delta, shuffle_epsilon

# google-research dpsgd_batch_sampler_accounting, ShuffleAccountant.get_deltas (one epoch, its default
# caps numpy.arange(0, 100, 0.01)), evaluated with scipy: (sigma, steps, epsilon) -> delta.
PEER = {
    (0.35, 1000, 0.5): 0.7999584435984592,
    (0.35, 1000, 4.0): 0.3834052688765431,
    (0.35, 1000, 10.0): 0.010023551527876142,
    (0.5, 1000, 1.0): 0.3714175549994807,
    (0.5, 1000, 10.0): 9.926514562633486e-06,
    (0.8, 1000, 2.0): 0.004272903378145333,
    (0.8, 1000, 8.0): 5.02605195958797e-10,
    (0.8, 100, 10.0): 1.1527537079852298e-14,
}


@pytest.mark.parametrize("key", sorted(PEER))
def test_reproduces_shuffle_accountant(key):
    sigma, steps, eps = key
    got = shuffle_delta(eps, sigma=sigma, steps=steps, caps=np.arange(0, 100, 0.01))
    assert abs(got.lower - PEER[key]) <= 1e-6 * PEER[key]
    assert got.lower <= got.upper
    refined = shuffle_delta(eps, sigma=sigma, steps=steps)
    assert refined.lower >= got.lower * (1 - 1e-12)  # the refined cap can only help


def _cube_mp(sigma, steps, eps, cap):
    """P(max > C) - e^eps Q(max > C) for MoG(2) vs MoG(1) in 50 digits."""
    with mp.workdps(50):
        s, c = mp.mpf(sigma), mp.mpf(cap)
        phi = lambda x: mp.ncdf(x)  # noqa: E731
        out = [1 - phi((c - m) / s) * phi(c / s) ** (steps - 1) for m in (2, 1)]
        return out[0] - mp.e ** mp.mpf(eps) * out[1]


@pytest.mark.parametrize("sigma,steps,eps", [(0.5, 10, 1.0), (0.8, 50, 0.5), (1.5, 4, 0.2)])
def test_lower_bound_is_below_mpmath_at_each_cap(sigma, steps, eps):
    caps = np.linspace(0.0, 6.0, 13)
    for c in caps:
        got = shuffle_delta(eps, sigma=sigma, steps=steps, caps=[c]).lower
        assert got <= max(float(_cube_mp(sigma, steps, eps, c)), 0.0)


def test_one_step_equals_the_gaussian():
    # T = 1: the shuffle is the Gaussian mechanism; the best cube test is the Neyman-Pearson test.
    iv = shuffle_delta(1.0, sigma=0.7, steps=1)
    assert iv.upper - iv.lower <= 1e-9 * iv.upper


def test_reshuffled_epochs_lower_bound_composes():
    one = shuffle_delta(1.0, sigma=0.8, steps=100)
    four = shuffle_delta(1.0, sigma=0.8, steps=100, epochs=4)
    same = shuffle_delta(1.0, sigma=0.8, steps=100, epochs=4, reshuffle=False)
    assert one.lower < four.lower <= four.upper
    assert same.lower <= same.upper and four.upper == same.upper


def test_epsilon_bracket():
    iv = shuffle_epsilon(1e-5, sigma=0.8, steps=1000)
    assert 0.0 < iv.lower <= iv.upper
    assert shuffle_delta(iv.lower * (1 - 1e-6), sigma=0.8, steps=1000).lower > 1e-5


def test_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        shuffle_delta(1.0, sigma=0.0, steps=10)
    with pytest.raises(ValueError, match="steps"):
        shuffle_delta(1.0, sigma=1.0, steps=0)
    with pytest.raises(ValueError, match="epsilon"):
        shuffle_delta(math.nan, sigma=1.0, steps=10)
    with pytest.raises(ValueError, match="caps"):
        shuffle_delta(1.0, sigma=1.0, steps=10, caps=[])
    with pytest.raises(ValueError, match="delta"):
        shuffle_epsilon(0.0, sigma=1.0, steps=10)


@pytest.mark.parametrize("sigma,steps,eps", [(0.8, 4, 0.5), (1.2, 3, 0.2)])
def test_max_statistic_pld_is_below_its_exact_delta(sigma, steps, eps):
    from pydp_core.accounting.pld import PLD
    from pydp_core.accounting.pld.shuffle import shuffle_pld_lower

    with mp.workdps(30):
        s = mp.mpf(sigma)

        def dens(c, m):  # density of max_t x_t under MoG(m)
            return (mp.npdf((c - m) / s) / s * mp.ncdf(c / s) ** (steps - 1)
                    + (steps - 1) * mp.ncdf((c - m) / s) * mp.ncdf(c / s) ** (steps - 2) * mp.npdf(c / s) / s)

        e = mp.e ** mp.mpf(eps)
        f = lambda c: max(dens(c, 2) - e * dens(c, 1), 0)  # noqa: E731
        exact = float(mp.quad(f, [-mp.inf, -2, 0, 1, 1.5, 2, 3, 5, mp.inf]))
    got = PLD([(shuffle_pld_lower(sigma=sigma, steps=steps), 1)]).delta(eps).lower
    assert got <= exact
    assert got >= exact * (1 - 1e-2)
