"""Random allocation for the Logistic and Subbotin_r families (``PLD.random_allocation``), its lower end
for 1 < k < t, substitution neighbours, and its sigma calibration (``PLD.calibrate_random_allocation``):
exact two-step deltas in mpmath, the limits t = 1 and k = t, a Monte Carlo check at alpha = 1e-6, and the
calibrated scale meeting its target."""
import math
import warnings

import mpmath as mp
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace, Logistic, Subbotin


def _logistic():
    cdf = lambda x: 1 / (1 + mp.exp(-x))  # noqa: E731
    return (lambda x: -x - 2 * mp.log1p(mp.exp(-x))), cdf, (lambda x: cdf(-x))


def _subbotin(r):
    r = mp.mpf(r)
    c = 2 * mp.gamma(1 / r) * r ** (1 / r - 1)

    def sf(x):
        if x < 0:
            return 1 - sf(-x)
        return mp.gammainc(1 / r, x ** r / r, mp.inf, regularized=True) / 2

    return (lambda x: -abs(x) ** r / r - mp.log(c)), (lambda x: 1 - sf(x)), sf


def _exact_delta_two_steps(family, d, eps):
    """The worse order's delta(eps) of one participation in two steps: E[(M - c)_+] and c E[(1/c - M)_+]
    for M = (R(X1) + R(X2)) / 2, the inner expectation from the family's tails (x* where R(x*) = level),
    the outer by quadrature split where the integrand is not smooth (25 digits)."""
    with mp.workdps(25):
        logpdf, cdf, sf = family
        d = mp.mpf(d)
        loss = lambda x: logpdf(x - d) - logpdf(x)  # noqa: E731  nondecreasing
        lo_r, hi_r = mp.exp(loss(mp.mpf(-60))), mp.exp(loss(mp.mpf(60) + d))

        def root(level):  # x with loss(x) = log(level), by bisection
            a, b, target = mp.mpf(-60), mp.mpf(60) + d, mp.log(level)
            for _ in range(110):
                m = (a + b) / 2
                a, b = (m, b) if loss(m) < target else (a, m)
            return (a + b) / 2

        def call(level):  # E[(R - level)_+] for one step
            if level <= lo_r:
                return 1 - level
            if level >= hi_r:
                return mp.mpf(0)
            x = root(level)
            return sf(x - d) - level * sf(x)

        def f(x):
            return mp.exp(logpdf(x))

        def mean_call(K):
            xk = root(min(max(2 * K, lo_r * 1.0001), hi_r * 0.9999))
            # split at the kink of the inner call (R(x) = 2K) and at 0 and d (|x|^r is not smooth there)
            cuts = sorted({mp.mpf(-40), xk - 2, xk, xk + 2, mp.mpf(0), d, 40 + d})
            return mp.quad(lambda x: call(2 * K - mp.exp(loss(x))) / 2 * f(x), cuts)

        c = mp.exp(eps)
        remove = mean_call(c)
        add = c * (mean_call(1 / c) - 1 + 1 / c)
        return float(max(remove, add))


@pytest.mark.slow
@pytest.mark.parametrize("noise, ref, scale, eps", [(Logistic(), _logistic(), 0.5, 1.0),
                                                    (Logistic(), _logistic(), 2.0, 0.1),
                                                    (Subbotin(1.5), _subbotin(1.5), 0.5, 1.0)])
def test_two_steps_contain_exact_value(noise, ref, scale, eps):
    exact = _exact_delta_two_steps(ref, 1.0 / scale, eps)
    iv = PLD.random_allocation(noise, scale=scale, steps=2).delta(eps)
    assert iv.lower - 1e-25 <= exact <= iv.upper + 1e-25
    assert iv.upper - iv.lower <= 2e-3 * exact + 1e-12


@pytest.mark.parametrize("noise", [Logistic(), Subbotin(1.5), Subbotin(3.0)])
def test_one_step_is_the_noise_mechanism(noise):
    a = PLD.random_allocation(noise, scale=0.8, steps=1).delta(1.0)
    g = PLD.from_noise(noise, scale=0.8).delta(1.0)
    assert a.lower <= g.upper and g.lower <= a.upper
    assert a.upper - a.lower < 1e-3 * g.upper


def test_subbotin_one_agrees_with_the_laplace_chain():
    a = PLD.random_allocation(Subbotin(1.0001), scale=1.0, steps=200).epsilon(1e-6)
    b = PLD.random_allocation(Laplace(), scale=1.0, steps=200).epsilon(1e-6)
    assert abs(a.upper - b.upper) < 2e-3 and a.lower <= a.upper


def test_a_long_pass_is_tight():
    iv = PLD.random_allocation(Logistic(), scale=1.0, steps=10000).epsilon(1e-5)
    assert iv.lower > 0.0 and iv.upper - iv.lower < 1e-3


@pytest.mark.parametrize("noise, k, epochs", [(Gaussian(), 1, 1), (Laplace(), 1, 3), (Gaussian(), 2, 1)])
def test_calibrated_scale_meets_the_target(noise, k, epochs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # k > 1: a wide bracket, said by a warning
        c = PLD.calibrate_random_allocation(noise, epsilon=1.0, delta=1e-5, steps=100, participations=k,
                                            epochs=epochs, certificate=True)
    pld = PLD.random_allocation(noise, scale=c.scale, steps=100, participations=k).self_compose(epochs)
    assert pld.with_discretization(value_step=c.value_step).delta(1.0).upper <= 1e-5
    low = PLD.random_allocation(noise, scale=c.scale_bounds.lower, steps=100, participations=k).self_compose(epochs)
    assert c.scale_bounds.lower == 0.0 or low.with_discretization(value_step=c.value_step).delta(1.0).lower > 1e-5
    if k == 1:
        assert c.scale_bounds.upper <= 1.001 * c.scale_bounds.lower


def test_calibration_with_several_participations_is_certified_and_minimal_on_its_upper_end():
    # 1 < k < t: the scale is searched on the certified upper end alone; it passes there, the scale
    # smaller by the factor 1 + rtol fails there (on the default chains, tighter than the search's), and
    # the bracket's lower end (the sum statistic's scale) fails for certain.
    t, k, rtol = 10000, 4, 1e-3
    with pytest.warns(RuntimeWarning, match="lower end is loose"):
        c = PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=1e-5, steps=t, participations=k,
                                            rtol=rtol, certificate=True)

    def delta(scale):
        pld = PLD.random_allocation(Gaussian(), scale=scale, steps=t, participations=k)
        return pld.with_discretization(value_step=c.value_step).delta(1.0)

    assert c.delta_bounds.upper <= 1e-5 and delta(c.scale).upper <= 1e-5
    assert delta(c.scale / (1.0 + rtol)).upper > 1e-5
    assert 0.0 < c.scale_bounds.lower < c.scale and delta(c.scale_bounds.lower).lower > 1e-5


@pytest.mark.parametrize("noise", [Laplace(), Logistic()])
def test_calibration_with_several_participations_for_other_families(noise):
    # No sum statistic: the failing end of the search is found by halving. The scale passes on the default
    # chains; the scale smaller by 1 + rtol fails on the chains the search runs on (loss step 0.02, the
    # default 0.005 is tighter and may pass there), on its automatic grid with the search's tail mass.
    from pydp_core.accounting.pld.allocation import allocation_terms

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the lower end is loose
        c = PLD.calibrate_random_allocation(noise, epsilon=1.0, delta=1e-5, steps=100, participations=2, epochs=2,
                                            certificate=True)
    pld = PLD.random_allocation(noise, scale=c.scale, steps=100, participations=2).self_compose(2)
    assert pld.with_discretization(value_step=c.value_step).delta(1.0).upper <= 1e-5
    smaller = allocation_terms(noise, scale=c.scale / 1.001, steps=100, participations=2, sensitivity=1.0, step=0.02)
    assert PLD(smaller).self_compose(2).with_discretization(tail_mass=1e-8).delta(1.0).upper > 1e-5


def test_calibration_bad_input():
    with pytest.raises(ValueError, match="delta"):
        PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=0.0, steps=10)
    with pytest.raises(ValueError, match="epsilon"):
        PLD.calibrate_random_allocation(Gaussian(), epsilon=-1.0, delta=1e-5, steps=10)
    with pytest.raises(ValueError, match="participations"):
        PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=1e-5, steps=10, participations=11)
    with pytest.raises(TypeError, match="epochs"):
        PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=1e-5, steps=10, epochs=1.5)
    with pytest.raises(ValueError, match="rtol"):
        PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=1e-5, steps=10, rtol=0.7)


def test_block_event_lower_end_brackets_a_monte_carlo_estimate():
    # Laplace, k = 2 of t = 3 steps, d = 1: the ratio of the pass is M = e_2(R) / 3. Both orders'
    # deltas are means of bounded functions of M under the null, estimated from 4e6 seeded draws with
    # Hoeffding's bound at alpha = 1e-6 (an estimate with that confidence, not an exact value).
    import numpy as np

    rng = np.random.default_rng(20261202)
    n, eps, d = 4_000_000, 0.3, 1.0
    x = rng.laplace(size=(n, 3))
    r = np.exp(np.abs(x) - np.abs(x - d))
    m = (r[:, 0] * r[:, 1] + r[:, 0] * r[:, 2] + r[:, 1] * r[:, 2]) / 3.0
    c = math.exp(eps)
    z = math.sqrt(math.log(2 / 1e-6) / (2 * n))
    remove, add = float(np.mean(np.maximum(m - c, 0.0))), float(np.mean(np.maximum(1.0 - c * m, 0.0)))
    dev_remove, dev_add = (math.exp(2 * d) - c) * z, z  # ranges of the two bounded variables
    iv = PLD.random_allocation(Laplace(), scale=1.0, steps=3, participations=2).delta(eps)
    assert iv.lower > 0.0  # the block event gives a lower end (the Laplace had none before)
    assert iv.lower <= max(remove + dev_remove, add + dev_add)
    assert max(remove - dev_remove, add - dev_add) <= iv.upper


def test_substitution_all_steps_is_the_doubled_shift():
    # k = t: the record's contribution v -> v' in every step, shift 2 d per step: mu = 2 d sqrt(t)
    a = PLD.random_allocation(Gaussian(), scale=2.0, steps=5, participations=5, neighbours="substitution")
    g = PLD.from_gdp(math.sqrt(5)).epsilon(1e-5)
    iv = a.epsilon(1e-5)
    assert iv.lower <= g.upper and g.lower <= iv.upper and iv.upper - iv.lower < 1e-4


@pytest.mark.parametrize("k", [1, 4])
def test_substitution_is_bracketed_by_removal_and_no_amplification(k):
    sub = PLD.random_allocation(Laplace(), scale=2.0, steps=100, participations=k,
                                neighbours="substitution").epsilon(1e-5)
    rem = PLD.random_allocation(Laplace(), scale=2.0, steps=100, participations=k).epsilon(1e-5)
    bare = PLD.from_noise(Laplace(), scale=2.0, sensitivity=2.0).self_compose(k).epsilon(1e-5)
    assert sub.lower <= rem.lower + 1e-4 and rem.lower - sub.lower < 1e-3
    # the upper end is that composition (on the coarser grid of the whole PLD)
    assert bare.lower <= sub.upper < bare.upper + 5e-3
    with pytest.raises(ValueError, match="neighbours"):
        PLD.random_allocation(Laplace(), scale=2.0, steps=10, neighbours="swap")


# pld-accounting warns at import when numba (optional for it) is absent.
@pytest.mark.filterwarnings("ignore::ImportWarning")
@pytest.mark.parametrize("t, k", [(20, 2), (40, 4)])
def test_peer_pld_accounting_brackets_the_block_upper_end(t, k):
    # pld-accounting 2.0 bounds the same block composition (Feldman and Shenfeld) from both sides; our
    # certified upper end of it lies between its two ends.
    from PLD_accounting import gaussian_allocation_epsilon_range

    upper, lower = gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=t, num_selected=k)
    ours = PLD.random_allocation(Gaussian(), scale=1.0, steps=t, participations=k).epsilon(1e-5)
    assert lower <= ours.upper <= upper
