"""Random allocation (``PLD.random_allocation``): the certified interval against exact values in mpmath,
the limits k = t and t = 1, the peer pld-accounting, and bad input."""
import math

import mpmath as mp
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace, Logistic, Truncated


def _gauss_call(d, k):
    """E[(R - k)_+] for R = exp(d X - d^2 / 2), X ~ N(0, 1) (the lognormal call price); E R - k if k <= 0."""
    if k <= 0:
        return 1 - k
    return mp.ncdf(d / 2 - mp.log(k) / d) - k * mp.ncdf(-d / 2 - mp.log(k) / d)


def _gauss_outer(d, g, x0):
    """E[g(R)] for the Gaussian step's ratio R, by quadrature split at x0."""
    return mp.quad(lambda x: g(mp.exp(d * x - d * d / 2)) * mp.npdf(x), [-mp.inf, x0 - 4, x0, x0 + 4, mp.inf])


def _laplace_call(d, k):
    """E[(R - k)_+] for the Laplace step's ratio: atoms e^-d (mass 1/2) and e^d (mass e^-d / 2), and
    R = e^{2x - d} for x in (0, d) with density e^-x / 2."""
    if k <= mp.exp(-d):
        return 1 - k
    if k >= mp.exp(d):
        return mp.mpf(0)
    xs = (mp.log(k) + d) / 2
    return mp.exp(-d) / 2 * (mp.exp(d) - k) + ((1 - mp.exp(xs - d)) - k * (mp.exp(-xs) - mp.exp(-d))) / 2


def _laplace_outer(d, g, x0):
    mid = mp.quad(lambda x: g(mp.exp(2 * x - d)) * mp.exp(-x) / 2, [0, max(min(x0, d), 0), d])
    return g(mp.exp(-d)) / 2 + mp.exp(-d) / 2 * g(mp.exp(d)) + mid


_EXACT = {"gaussian": (_gauss_call, _gauss_outer, lambda d, K: (mp.log(2 * K) + d * d / 2) / d),
          "laplace": (_laplace_call, _laplace_outer, lambda d, K: (mp.log(2 * K) + d) / 2)}


def _mean_of_two_call(family, d, K):
    """E[(M - K)_+] for M = (R1 + R2) / 2: the inner expectation in closed form, the outer by quadrature."""
    call, outer, split = _EXACT[family]
    d, K = mp.mpf(d), mp.mpf(K)
    return outer(d, lambda r1: call(d, 2 * K - r1) / 2, split(d, K))


def _exact_delta_two_steps(family, d, eps):
    """The worse order's delta(eps) of one participation in two steps, exactly (40 digits)."""
    with mp.workdps(40):
        c = mp.exp(eps)
        remove = _mean_of_two_call(family, d, c)
        add = c * (_mean_of_two_call(family, d, 1 / c) - 1 + 1 / c)  # E[(1 - c M)_+] by put-call parity
        return float(max(remove, add))


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.25, 1.0, 2.5])
def test_two_steps_contain_exact_value(family, sigma, eps):
    exact = _exact_delta_two_steps(family, 1.0 / sigma, eps)
    noise = Gaussian() if family == "gaussian" else Laplace()
    iv = PLD.random_allocation(noise, scale=sigma, steps=2).delta(eps)
    # 1e-35: the quadrature's noise where the exact delta is 0 (the Laplace's loss is at most d).
    assert iv.lower - 1e-35 <= exact <= iv.upper + 1e-35
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
    assert a.upper - a.lower < 1e-4 * g.upper


@pytest.mark.parametrize("noise, scale, t, eps", [(Laplace(), 2.0, 3, 1.2), (Logistic(), 1.5, 4, 1.0)])
def test_all_steps_is_the_composition(noise, scale, t, eps):
    a = PLD.random_allocation(noise, scale=scale, steps=t, participations=t).delta(eps)
    g = PLD.from_noise(noise, scale=scale).self_compose(t).delta(eps)
    assert a.lower <= g.upper and g.lower <= a.upper
    # The single step is cut at loss steps of 0.005 (the chains' grid), coarser than the engine's.
    assert a.upper - a.lower < 1e-3 * g.upper


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
    (dict(steps=3, scale=0.05), ValueError, "sensitivity / scale"),
])
def test_bad_input(kwargs, exc, word):
    kw = dict(scale=1.0)
    kw.update(kwargs)
    with pytest.raises(exc, match=word):
        PLD.random_allocation(Gaussian(), **kw)


def test_other_families_refused_by_name():
    with pytest.raises(TypeError, match="noise"):
        PLD.random_allocation(Truncated(Logistic(), 5.0), scale=1.0, steps=3)
