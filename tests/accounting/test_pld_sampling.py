"""Sampling without replacement and substitution neighbours for ``PLD.from_noise`` (docs/pld.md,
"Neighbouring relations").

References: a 30-digit mpmath integral of (P - e^eps Q)_+ for the substitution pair
P = (1-q) f + q f(. - d), Q = (1-q) f + q f(. + d) (one step), and dp-accounting's PLD with
``NeighboringRelation.REPLACE_ONE`` (the same convention: ``sensitivity`` bounds each record's
contribution, so a substitution moves the query by up to twice it).
"""
from __future__ import annotations

import math

import mpmath as mp
import pytest
from support import mpref as REF

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace, Logistic, Subbotin

FAMILIES = [Gaussian(), Laplace(), Logistic(), Subbotin(1.5), Subbotin(3.0)]


def _substitution_delta(f, q, d, eps):
    """int (P - e^eps Q)_+ for P = (1-q) f + q f(. - d), Q = (1-q) f + q f(. + d) (both orders agree)."""

    def dens(x, shift):
        return mp.exp(f.logpdf(x - shift))

    def P(x):
        return (1 - q) * dens(x, 0) + q * dens(x, d)

    def Q(x):
        return (1 - q) * dens(x, 0) + q * dens(x, -d)

    g = lambda x: mp.log(P(x)) - eps - mp.log(Q(x))  # nondecreasing in x (log-concave f)  # noqa: E731
    lo, hi = mp.mpf(-60), mp.mpf(60)
    if g(hi) <= 0:
        return mp.mpf(0)
    for _ in range(200):  # bisection for the crossing
        mid = (lo + hi) / 2
        if g(mid) > 0:
            hi = mid
        else:
            lo = mid
    x0 = (lo + hi) / 2
    # Split also at the kinks of |x|^r and |x -+ d|^r, where the integrand is not smooth.
    inner = sorted(set(p for p in (-d, mp.mpf(0), d) if p > x0))
    return mp.quad(lambda x: max(P(x) - mp.exp(eps) * Q(x), 0), [x0, *inner, x0 + 10 + 2 * d, mp.inf])


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
@pytest.mark.parametrize("q", [0.05, 0.3])
def test_substitution_single_step_contains_mpmath(noise, q):
    f = REF.family(REF.family_key(noise))
    for sampling in ("poisson",):
        pld = PLD.from_noise(noise, scale=1.0, sampling_rate=q, sampling=sampling, neighbours="substitution")
        with mp.workdps(30):
            for eps in [0.01, 0.1, 0.5]:
                truth = _substitution_delta(f, mp.mpf(q), mp.mpf(1), mp.mpf(eps))
                iv = pld.delta(eps)
                assert iv.lower <= truth <= iv.upper, (noise, q, sampling, eps, iv, truth)
                assert iv.upper - iv.lower < 1e-2 * float(truth) + 1e-9


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_substitution_without_sampling_is_add_remove_at_twice_the_shift(noise):
    sub = PLD.from_noise(noise, scale=2.0, sensitivity=0.7, neighbours="substitution")
    double = PLD.from_noise(noise, scale=2.0, sensitivity=1.4)
    for d in [1e-3, 1e-6]:
        assert sub.epsilon(d) == double.epsilon(d)


def test_sampling_without_replacement_is_the_add_remove_pair_at_twice_the_shift():
    # The replaced record displaces another one in the fixed-size batch (tests/accounting/test_pld_batches.py
    # checks the pair against every batch of small datasets).
    a = PLD.from_noise(Gaussian(), scale=1.5, sensitivity=2.0, sampling_rate=0.02).self_compose(50)
    b = PLD.from_noise(Gaussian(), scale=1.5, sampling_rate=0.02, sampling="without_replacement",
                       neighbours="substitution").self_compose(50)
    assert a.epsilon(1e-6) == b.epsilon(1e-6)


def test_substitution_dominates_add_remove():
    # Replacing a record is removing one and adding another: never less private than either.
    for q, k in [(0.01, 1), (0.01, 1000), (0.2, 20)]:
        sub = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=q, neighbours="substitution").self_compose(k)
        ar = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=q).self_compose(k)
        assert sub.epsilon(1e-5).lower >= ar.epsilon(1e-5).upper


@pytest.mark.parametrize("q, k, sigma", [(0.01, 1, 1.0), (0.3, 1, 1.0), (0.01, 100, 1.0), (0.3, 10, 2.0),
                                         (1.0, 10, 2.0), (0.05, 1000, 1.5)])
def test_substitution_agrees_with_dp_accounting(q, k, sigma):
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    # dp-accounting's connect-the-dots estimate is pessimistic: at or above the truth, and above it by at
    # most its discretisation error (grid 1e-4 per step; 2e-3 in epsilon is generous for these k).
    theirs = dpa_pld.from_gaussian_mechanism(standard_deviation=sigma, sampling_prob=q,
                                             neighboring_relation=NeighboringRelation.REPLACE_ONE,
                                             value_discretization_interval=1e-4).self_compose(k)
    ours = PLD.from_noise(Gaussian(), scale=sigma, sampling_rate=q, neighbours="substitution").self_compose(k)
    for delta in [1e-3, 1e-5]:
        e = theirs.get_epsilon_for_delta(delta)
        iv = ours.epsilon(delta)
        assert iv.lower <= e <= iv.upper + 2e-3, (q, k, sigma, delta, e, iv)
        assert iv.upper - iv.lower < 1e-3


def test_sampling_and_neighbours_bad_input():
    with pytest.raises(ValueError, match="sampling"):
        PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.1, sampling="bernoulli")
    with pytest.raises(ValueError, match="neighbours"):
        PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.1, neighbours="replace")
    with pytest.raises(TypeError, match="neighbours"):
        PLD.from_noise(Gaussian(), scale=1.0, neighbours=None)
    with pytest.raises(TypeError, match="sampling"):
        PLD.from_noise(Gaussian(), scale=1.0, sampling=1)
    # A fixed-size sample has no add/remove analysis here: both arguments are named.
    with pytest.raises(ValueError, match="without_replacement.*substitution"):
        PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.1, sampling="without_replacement")
    with pytest.raises(ValueError, match="without_replacement.*substitution"):
        PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.1, sampling="without_replacement",
                       neighbours="add_remove")


def test_substitution_laplace_keeps_its_pure_dp_bound():
    # Sampled Laplace under substitution is (k L_max, 0)-DP, L_max = log((1 - q + q e^d) / (1 - q + q e^-d))
    # (the loss's atoms at +-L_max): no certified lower bound on delta beyond k L_max, and the certified
    # epsilon at a tiny delta lies just below it.
    q, b, k = 0.2, 1.0, 5
    lmax = math.log((1 - q + q * math.e) / (1 - q + q / math.e))
    pld = PLD.from_noise(Laplace(), scale=b, sampling_rate=q, neighbours="substitution").self_compose(k)
    assert pld.delta(k * lmax).lower == 0.0
    assert pld.delta(0.99 * k * lmax).lower > 0.0
    iv = pld.epsilon(1e-12)
    assert k * lmax - 0.05 < iv.lower and iv.upper < k * lmax + 0.05


def _discrete_laplace_substitution_delta(scale, D, q, k, eps, support=80):
    """Exact k-fold delta(eps) of (1-q) p + q p(. - D) vs (1-q) p + q p(. + D), p the discrete Laplace."""
    with mp.workdps(40):
        a = mp.e ** (-1 / mp.mpf(scale))
        c = (1 - a) / (1 + a)
        xs = range(-support, support + 1)
        P = [(1 - q) * c * a ** abs(x) + q * c * a ** abs(x - D) for x in xs]
        Q = [(1 - q) * c * a ** abs(x) + q * c * a ** abs(x + D) for x in xs]
        dist = {"0": (mp.mpf(0), mp.mpf(1), mp.mpf(1))}
        for _ in range(k):
            nxt: dict = {}
            for loss, pm, qm in dist.values():
                for pi, qi in zip(P, Q):
                    l2 = loss + mp.log(pi) - mp.log(qi)
                    key = mp.nstr(l2, 25)
                    old = nxt.get(key, (l2, 0, 0))
                    nxt[key] = (l2, old[1] + pm * pi, old[2] + qm * qi)
            dist = nxt
        return float(sum(max(pm - mp.e ** eps * qm, 0) for _, pm, qm in dist.values()))


@pytest.mark.parametrize("scale, D, q, k", [(1.0, 1, 0.3, 1), (2.0, 3, 0.1, 1), (0.5, 2, 0.5, 2)])
def test_discrete_laplace_substitution_contains_exact(scale, D, q, k):
    pld = PLD.from_discrete_laplace(scale=scale, sensitivity=D, sampling_rate=q, sampling="poisson",
                                    neighbours="substitution").self_compose(k)
    for eps in [0.05, 0.3, 0.8]:
        truth = _discrete_laplace_substitution_delta(scale, D, q, k, eps)
        iv = pld.delta(eps)
        assert iv.lower <= truth <= iv.upper, (scale, D, q, k, eps, iv, truth)


def test_discrete_laplace_substitution_without_sampling_and_bad_input():
    a = PLD.from_discrete_laplace(scale=1.5, sensitivity=2, neighbours="substitution")
    b = PLD.from_discrete_laplace(scale=1.5, sensitivity=4)
    assert a.epsilon(1e-6) == b.epsilon(1e-6)
    with pytest.raises(ValueError, match="neighbours"):
        PLD.from_discrete_laplace(scale=1.0, neighbours="swap")
    with pytest.raises(ValueError, match="without_replacement.*substitution"):
        PLD.from_discrete_laplace(scale=1.0, sampling_rate=0.5, sampling="without_replacement")
