"""Random allocation (``PLD.random_allocation``): the certified interval against exact values in mpmath,
the limits k = t and t = 1, the peer pld-accounting, and bad input."""
import math

import mpmath as mp
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace


def _call_mean_of_two(d, K):
    """E[(M - K)_+] for M = (R1 + R2) / 2, R = exp(d X - d^2 / 2), X ~ N(0, 1), at 40 digits: the inner
    expectation over X2 in closed form (the lognormal call price), the outer one by quadrature."""
    d, K = mp.mpf(d), mp.mpf(K)

    def call(k):  # E[(R - k)_+], k > 0
        return mp.ncdf(d / 2 - mp.log(k) / d) - k * mp.ncdf(-d / 2 - mp.log(k) / d)

    def inner(x1):
        a = mp.exp(d * x1 - d * d / 2) / 2
        b = K - a
        return a + mp.mpf(1) / 2 - K if b <= 0 else call(2 * b) / 2

    x0 = (mp.log(2 * K) + d * d / 2) / d  # where b = 0
    dens = lambda x: inner(x) * mp.npdf(x)  # noqa: E731
    return mp.quad(dens, [-mp.inf, x0 - 4, x0, x0 + 4, mp.inf])


def _exact_delta_two_steps(d, eps):
    """The worse order's delta(eps) of one participation in two Gaussian steps, exactly."""
    with mp.workdps(40):
        c = mp.exp(eps)
        remove = _call_mean_of_two(d, c)
        add = c * (_call_mean_of_two(d, 1 / c) - 1 + 1 / c)  # E[(1 - c M)_+] by put-call parity
        return float(max(remove, add))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.25, 1.0, 2.5])
def test_two_steps_contain_exact_value(sigma, eps):
    exact = _exact_delta_two_steps(1.0 / sigma, eps)
    iv = PLD.random_allocation(Gaussian(), scale=sigma, steps=2).delta(eps)
    assert iv.lower <= exact <= iv.upper
    assert iv.upper - iv.lower <= 1e-3 * exact + 1e-12


def test_one_step_is_the_gaussian_mechanism():
    a = PLD.random_allocation(Gaussian(), scale=0.8, steps=1).delta(1.0)
    g = PLD.from_noise(Gaussian(), scale=0.8).delta(1.0)
    assert a.lower <= g.upper and g.lower <= a.upper
    assert a.upper - a.lower < 2e-5 * g.upper


@pytest.mark.parametrize("t", [2, 5])
def test_all_steps_is_no_subsampling(t):
    # k = t: every step holds the record, t Gaussian steps, which is mu-GDP with mu = sqrt(t) / sigma.
    a = PLD.random_allocation(Gaussian(), scale=1.5, steps=t, participations=t).epsilon(1e-6)
    g = PLD.from_gdp(math.sqrt(t) / 1.5).epsilon(1e-6)
    assert a.lower <= g.upper and g.lower <= a.upper
    assert a.upper - a.lower < 1e-4


def test_more_participations_lower_side_is_the_sum_statistic():
    # k > 1: the lower end is the Gaussian mechanism on the sum of outputs, a post-processing.
    a = PLD.random_allocation(Gaussian(), scale=1.0, steps=10, participations=3).epsilon(1e-5)
    g = PLD.from_gdp(3 / math.sqrt(10)).epsilon(1e-5)
    assert abs(a.lower - g.lower) < 1e-3
    one = PLD.random_allocation(Gaussian(), scale=1.0, steps=10, participations=1).epsilon(1e-5)
    assert a.upper > one.upper


def test_epochs_compose():
    one = PLD.random_allocation(Gaussian(), scale=1.0, steps=50)
    two = one.self_compose(2).epsilon(1e-5)
    single = one.epsilon(1e-5)
    assert two.lower > single.upper
    assert two.upper - two.lower < 1e-3


def test_more_steps_more_private():
    e = [PLD.random_allocation(Gaussian(), scale=1.0, steps=t).epsilon(1e-5) for t in (10, 100)]
    assert e[1].upper < e[0].lower


# pld-accounting warns at import when numba (optional for it) is absent.
@pytest.mark.filterwarnings("ignore::ImportWarning")
def test_peer_pld_accounting_brackets_ours():
    # pld-accounting 2.0 (Feldman and Shenfeld): its (upper, lower) pair at two steps.
    from PLD_accounting import gaussian_allocation_epsilon_range

    upper, lower = gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=2)
    ours = PLD.random_allocation(Gaussian(), scale=1.0, steps=2).epsilon(1e-5)
    assert lower <= ours.lower <= ours.upper <= upper


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(steps=3, participations=4), ValueError, "participations"),
    (dict(steps=0), ValueError, "steps"),
    (dict(steps=2.5), TypeError, "steps"),
    (dict(steps=3, scale=float("nan")), ValueError, "scale"),
    (dict(steps=3, sensitivity=-1.0), ValueError, "sensitivity"),
])
def test_bad_input(kwargs, exc, word):
    kw = dict(scale=1.0)
    kw.update(kwargs)
    with pytest.raises(exc, match=word):
        PLD.random_allocation(Gaussian(), **kw)


def test_other_families_refused_by_name():
    with pytest.raises(TypeError, match="noise"):
        PLD.random_allocation(Laplace(), scale=1.0, steps=3)
