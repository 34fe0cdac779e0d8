"""Random allocation for the discrete Laplace and the discrete Gaussian (``PLD.random_allocation`` with
``"discrete_laplace"`` / ``"discrete_gaussian"``): the exact deltas of small passes by enumerating every
outcome in mpmath, k = t as the plain discrete mechanism composed, the approach to Poisson sampling at rate
k / t as the pass grows, substitution, calibration, and bad input."""
import itertools
import math
import warnings

import mpmath as mp
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.accounting.pld.allocation import allocation_terms

_DPS = 40


def _step_atoms(family, scale, D):
    """The law of one step's likelihood ratio R(y) = p(y - D) / p(y) under the null, as (ratio, Q-mass)
    pairs in mpmath, and the Q- plus P-mass left out (0 for the discrete Laplace, whose ratio takes the D + 1
    values of the classes y <= 0, 0 < y < D, y >= D)."""
    s = mp.mpf(scale)
    if family == "discrete_laplace":
        a = mp.exp(-1 / s)
        pmf = lambda y: (1 - a) / (1 + a) * a ** abs(y)  # noqa: E731
        atoms = [(a ** D, 1 / (1 + a))] + [(a ** (D - 2 * y), pmf(y)) for y in range(1, D)]
        atoms.append((a ** -D, a ** D / (1 + a)))
        return atoms, mp.mpf(0)
    # discrete Gaussian: every integer within `reach` of 0 or D (the rest has mass below 1e-30)
    s2 = s * s
    z = mp.nsum(lambda y: mp.exp(-y * y / (2 * s2)), [-mp.inf, mp.inf])
    reach = int(mp.ceil(mp.sqrt(2 * s2 * 75)))
    pmf = lambda y: mp.exp(-mp.mpf(y) ** 2 / (2 * s2)) / z  # noqa: E731
    ys = range(-reach, D + reach + 1)
    atoms = [(mp.exp(D * (2 * mp.mpf(y) - D) / (2 * s2)), pmf(y)) for y in ys]
    left = (1 - mp.fsum(q for _, q in atoms)) + (1 - mp.fsum(pmf(y - D) for y in ys))
    return atoms, left


def _pass_law(family, scale, D, t, k):
    """The law under the null of the pass's likelihood ratio M = e_k(R_1, ..., R_t) / C(t, k) (the record's
    k steps a uniform k-subset of t), over every outcome: the atoms of each multiset of step classes with
    its multinomial weight. Returns ([(M, Q-mass)], the mass left out)."""
    with mp.workdps(_DPS):
        atoms, left = _step_atoms(family, scale, D)
        law = []
        for combo in itertools.combinations_with_replacement(range(len(atoms)), t):
            counts = [combo.count(c) for c in set(combo)]
            weight = mp.mpf(math.factorial(t))
            for c in counts:
                weight /= math.factorial(c)
            e = [mp.mpf(1)] + [mp.mpf(0)] * k  # elementary symmetric polynomials e_0..e_k
            q = weight
            for c in combo:
                r, qc = atoms[c]
                q *= qc
                for j in range(k, 0, -1):
                    e[j] += e[j - 1] * r
            law.append((e[k] / math.comb(t, k), q))
        return law, t * left


def _exact_delta(law, eps):
    """max over the two orders of delta(eps): E_Q[(M - e^eps)_+] (remove) and E_Q[(1 - e^eps M)_+] (add)."""
    with mp.workdps(_DPS):
        c = mp.exp(eps)
        remove = mp.fsum(q * (m - c) for m, q in law if m > c)
        add = mp.fsum(q * (1 - c * m) for m, q in law if c * m < 1)
        return max(remove, add)


_CASES = [("discrete_laplace", 1.0, 1, 3, 1), ("discrete_laplace", 1.0, 1, 4, 2), ("discrete_laplace", 3.0, 1, 4, 1),
          ("discrete_laplace", 3.0, 1, 3, 2), ("discrete_laplace", 2.0, 2, 4, 1), ("discrete_laplace", 2.0, 2, 3, 3),
          ("discrete_gaussian", 1.0, 1, 4, 1), ("discrete_gaussian", 1.0, 1, 3, 2), ("discrete_gaussian", 1.0, 1, 2, 2),
          ("discrete_gaussian", 2.0, 1, 3, 1), ("discrete_gaussian", 2.0, 1, 3, 2), ("discrete_gaussian", 0.7, 1, 4, 2)]


@pytest.fixture(scope="module")
def laws():
    return {case: _pass_law(*case) for case in _CASES}


@pytest.mark.parametrize("case", _CASES)
def test_small_passes_contain_the_exact_delta_and_epsilon(laws, case):
    family, scale, D, t, k = case
    law, left = laws[case]
    pld = PLD.random_allocation(family, scale=scale, steps=t, participations=k, sensitivity=D)
    slack = float(left) * 10 + 1e-15  # the outcomes left out of the enumeration, and the double rounding
    for eps in (0.1, 0.5, 1.2):
        exact = float(_exact_delta(law, eps))
        iv = pld.delta(eps)
        assert iv.lower - slack <= exact <= iv.upper + slack, (eps, iv, exact)
        if k in (1, t) and exact > 1e-12:  # one participation or all: both ends tight
            assert iv.upper - iv.lower <= 2e-2 * exact + 1e-9
    for target in (1e-2, 1e-5):
        iv = pld.epsilon(target)
        # [lower, upper] contains the exact epsilon: the exact delta is <= target at the upper end and
        # >= target just below the lower end (delta(eps) is nonincreasing)
        assert float(_exact_delta(law, iv.upper)) <= target * (1 + 1e-9) + slack
        if iv.lower > 0.0:
            assert float(_exact_delta(law, iv.lower * (1 - 1e-9))) >= target * (1 - 1e-9) - slack
        if k == 1:
            assert iv.upper - iv.lower <= 2e-2 * iv.upper + 1e-6


@pytest.mark.parametrize("family, scale", [("discrete_laplace", 1.5), ("discrete_gaussian", 1.5)])
def test_all_steps_is_the_plain_mechanism_composed(family, scale):
    t = 5
    ctor = PLD.from_discrete_laplace if family == "discrete_laplace" else PLD.from_discrete_gaussian
    plain = ctor(scale=scale).self_compose(t).epsilon(1e-6)
    a = PLD.random_allocation(family, scale=scale, steps=t, participations=t).epsilon(1e-6)
    assert a.lower <= plain.upper and plain.lower <= a.upper and a.upper - a.lower < 1e-2 * a.upper
    # and one step alone (the chain of a one-step pass) is that mechanism too
    one = PLD.random_allocation(family, scale=scale, steps=1).epsilon(1e-6)
    single = ctor(scale=scale).epsilon(1e-6)
    assert one.lower <= single.upper and single.lower <= one.upper and one.upper - one.lower < 1e-2 * one.upper


def _separation(a, b):
    """The largest relative distance between a point of interval a and a point of interval b."""
    return max(abs(a.upper - b.lower), abs(b.upper - a.lower)) / b.upper


@pytest.mark.parametrize("family, ctor", [("discrete_laplace", PLD.from_discrete_laplace),
                                          ("discrete_gaussian", PLD.from_discrete_gaussian)])
def test_long_passes_approach_poisson_sampling(family, ctor):
    # One participation in t steps against Poisson sampling at rate 1 / t over t steps (Feldman and
    # Shenfeld 2025: the two agree as t grows): both ends of ours close in on the Poisson interval.
    gaps = []
    for t in (10, 100, 1000):
        ra = PLD.random_allocation(family, scale=2.0, steps=t).epsilon(1e-5)
        poisson = ctor(scale=2.0, sampling_rate=1.0 / t).self_compose(t).epsilon(1e-5)
        gaps.append(_separation(ra, poisson))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.03
    # k / t = 1 / 10 with k = 2: the upper end (two blocks of t / 2 steps) approaches the Poisson value.
    ups = []
    for t in (20, 200, 2000):
        ra = PLD.random_allocation(family, scale=2.0, steps=t, participations=2).epsilon(1e-5)
        poisson = ctor(scale=2.0, sampling_rate=2.0 / t).self_compose(t).epsilon(1e-5)
        ups.append(abs(ra.upper - poisson.upper) / poisson.upper)
        assert ra.lower <= poisson.upper  # the lower end stays below: it is loose for 1 < k < t
    assert ups[0] > ups[1] > ups[2] and ups[2] < 0.03


@pytest.mark.parametrize("family", ["discrete_laplace", "discrete_gaussian"])
def test_substitution_is_bracketed_by_removal_and_the_doubled_sensitivity(family):
    ctor = PLD.from_discrete_laplace if family == "discrete_laplace" else PLD.from_discrete_gaussian
    sub = PLD.random_allocation(family, scale=2.0, steps=50, neighbours="substitution").epsilon(1e-5)
    rem = PLD.random_allocation(family, scale=2.0, steps=50).epsilon(1e-5)
    bare = ctor(scale=2.0, sensitivity=2).epsilon(1e-5)
    assert sub.lower <= rem.lower + 1e-4 and rem.lower - sub.lower < 2e-3 and bare.lower <= sub.upper < bare.upper + 5e-3
    # k = t: the k steps at sensitivity 2 D, exactly
    all_steps = PLD.random_allocation(family, scale=2.0, steps=3, participations=3, neighbours="substitution")
    iv, plain = all_steps.epsilon(1e-5), ctor(scale=2.0, sensitivity=2).self_compose(3).epsilon(1e-5)
    assert iv.lower <= plain.upper and plain.lower <= iv.upper and iv.upper - iv.lower < 1e-2 * iv.upper


def test_block_lower_end_for_several_participations():
    # 1 < k < t, discrete Laplace: the lower end is the event "one step in each block" (0 below epsilon
    # ~ log(1 / alpha)); it is positive at a small scale and below the upper end.
    iv = PLD.random_allocation("discrete_laplace", scale=0.6, steps=6, participations=2).epsilon(1e-5)
    assert 0.0 < iv.lower < iv.upper


@pytest.mark.parametrize("sigma", [1.0, 3.0])
def test_discrete_gaussian_sum_statistic_is_the_gaussian_one(sigma):
    # 1 < k < t, discrete Gaussian: the lower end is the sum of the t outputs, S + k D against S. For
    # sigma >= 1 the characteristic function of N_Z(0, sigma^2) is that of N(0, sigma^2) up to
    # terms of order e^{-sigma^2 pi^2 / 2}, so S is close to N_Z(0, t sigma^2): the discrete Gaussian mechanism at
    # sensitivity k D (on the lattice: not the continuous Gaussian's value, which it exceeds slightly).
    from pydp_core.noise import Gaussian

    t, k = 400, 4
    dg = PLD.random_allocation("discrete_gaussian", scale=sigma, steps=t, participations=k).epsilon(1e-5)
    ref = PLD.from_discrete_gaussian(sigma2=round(t * sigma * sigma), sensitivity=k).epsilon(1e-5)
    g = PLD.random_allocation(Gaussian(), scale=sigma, steps=t, participations=k).epsilon(1e-5)
    assert ref.lower * (1 - 2e-3) <= dg.lower <= ref.upper * (1 + 1e-6) and dg.lower < dg.upper
    assert abs(dg.lower - g.lower) < 5e-3 * g.lower


@pytest.mark.parametrize("family, k", [("discrete_gaussian", 1), ("discrete_laplace", 1), ("discrete_gaussian", 2)])
def test_calibrated_scale_meets_the_target(family, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # k > 1: a wide bracket, said by a warning
        c = PLD.calibrate_random_allocation(family, epsilon=1.0, delta=1e-5, steps=100, participations=k,
                                            certificate=True)
    pld = PLD.random_allocation(family, scale=c.scale, steps=100, participations=k)
    assert pld.with_discretization(value_step=c.value_step).delta(1.0).upper <= 1e-5
    # the scale smaller by 1 + rtol fails on the chains of the search (loss step 0.02)
    smaller = allocation_terms(family, scale=c.scale / 1.001, steps=100, participations=k, sensitivity=1, step=0.02)
    assert PLD(smaller).with_discretization(tail_mass=1e-8).delta(1.0).upper > 1e-5
    if k == 1:
        assert c.scale_bounds.upper <= 1.001 * c.scale_bounds.lower


def test_bad_input():
    with pytest.raises(ValueError, match="participations"):
        PLD.random_allocation("discrete_gaussian", scale=1.0, steps=3, participations=4)
    for bad in (math.nan, 0.0, -1.0):
        with pytest.raises(ValueError, match="scale"):
            PLD.random_allocation("discrete_laplace", scale=bad, steps=3)
        with pytest.raises(ValueError, match="scale"):
            PLD.random_allocation("discrete_gaussian", scale=bad, steps=3)
    with pytest.raises(ValueError, match="sensitivity"):
        PLD.random_allocation("discrete_gaussian", scale=1.0, steps=3, sensitivity=1.5)
    with pytest.raises(ValueError, match="sensitivity"):
        PLD.random_allocation("discrete_gaussian", scale=1.0, steps=3, sensitivity=0)
    with pytest.raises(ValueError, match="sensitivity / scale"):
        PLD.random_allocation("discrete_laplace", scale=0.05, steps=3)
    with pytest.raises(TypeError, match="noise"):
        PLD.random_allocation("discrete_cauchy", scale=1.0, steps=3)
    with pytest.raises(TypeError, match="steps"):
        PLD.random_allocation("discrete_gaussian", scale=1.0, steps=3.0)
    with pytest.raises(ValueError, match="participations"):
        PLD.calibrate_random_allocation("discrete_gaussian", epsilon=1.0, delta=1e-5, steps=3, participations=4)


def test_a_wide_discrete_gaussian_is_the_gaussian():
    # sigma = D = 600: over 8000 atoms in the window, so the step's atoms are binned into cells (spread
    # and contracted); the discrete Gaussian then differs from N(0, sigma^2) by ~e^{-2 pi^2 sigma^2}, so the
    # pass is that of the Gaussian at shift 1.
    from pydp_core.noise import Gaussian

    for eps in (0.3, 1.0):
        dg = PLD.random_allocation("discrete_gaussian", scale=600.0, steps=10, sensitivity=600).delta(eps)
        g = PLD.random_allocation(Gaussian(), scale=1.0, steps=10).delta(eps)
        assert dg.lower <= g.upper and g.lower <= dg.upper
        assert dg.upper - dg.lower < 2e-3 * dg.upper
