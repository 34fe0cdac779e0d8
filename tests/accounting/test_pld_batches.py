"""Fixed-size, truncated Poisson and balls-in-bins batches (``pydp_core.accounting.pld.batches``).

References: exact enumeration of every batch of small datasets (n <= 6 records, one-dimensional
contributions in [-1, 1]) in mpmath, the output law a finite mixture of normals and delta(eps) a
30-digit integral of (P - e^eps Q)_+ over its crossing points; dp-accounting's truncated-Poisson PLD
and its RDP for sampling without replacement.
"""
from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.accounting.pld.batches import min_sep_participations, truncation_weights
from pydp_core.noise import Gaussian, Laplace

G = Gaussian()


# ----- exact references ----------------------------------------------------------------------------------
def _mixture_delta(p_atoms: dict, q_atoms: dict, sigma: float, eps: float) -> mp.mpf:
    """int (P - e^eps Q)_+ for P, Q finite mixtures {mean: weight} of N(mean, sigma^2), in mpmath.

    The integrand's sign changes where P = e^eps Q; the line is cut at every mean (and a scan finds the
    crossings), so mp.quad integrates a smooth function on each piece."""
    s = mp.mpf(sigma)
    e = mp.e ** mp.mpf(eps)

    def dens(atoms, x):
        return mp.fsum(w * mp.npdf(x, m, s) for m, w in atoms.items())

    def f(x):
        return dens(p_atoms, x) - e * dens(q_atoms, x)

    means = sorted(set(p_atoms) | set(q_atoms))
    lo, hi = float(means[0]) - 40 * sigma, float(means[-1]) + 40 * sigma
    # The sign of log P - eps - log Q on a fine double-precision scan brackets the crossings.
    x = np.linspace(lo, hi, 20001)

    def log_mix(atoms):
        m = np.array([float(k) for k in atoms])[:, None]
        w = np.log(np.array([float(v) for v in atoms.values()]))[:, None]
        return np.logaddexp.reduce(w - (x[None, :] - m) ** 2 / (2 * sigma ** 2), axis=0)

    sign = log_mix(p_atoms) - eps - log_mix(q_atoms) > 0
    cuts = [mp.mpf(lo)]
    for i in np.flatnonzero(sign[1:] != sign[:-1]):
        cuts.append(mp.findroot(f, (mp.mpf(x[i]), mp.mpf(x[i + 1])), solver="bisect"))
    cuts.append(mp.mpf(hi))
    total = mp.mpf(0)
    for a, b in zip(cuts, cuts[1:]):
        mid = (a + b) / 2
        if f(mid) > 0:
            total += mp.quad(f, [a, mid, b])
    return total


def _fixed_size_law(data, b: int) -> dict:
    """{batch sum: probability} of a uniform b-subset of ``data``."""
    law: dict = {}
    subsets = list(itertools.combinations(range(len(data)), b))
    for s in subsets:
        m = mp.mpf(sum(data[i] for i in s))
        law[m] = law.get(m, 0) + mp.mpf(1) / len(subsets)
    return law


def _truncated_law(data, q: float, cap: int) -> dict:
    """{batch sum: probability} of Poisson sampling at q cut to a uniform cap-subset."""
    law: dict = {}
    qq = mp.mpf(q)
    n = len(data)
    for mask in itertools.product((0, 1), repeat=n):
        chosen = [i for i in range(n) if mask[i]]
        w = qq ** len(chosen) * (1 - qq) ** (n - len(chosen))
        subs = list(itertools.combinations(chosen, cap)) if len(chosen) > cap else [tuple(chosen)]
        for s in subs:
            m = mp.mpf(sum(data[i] for i in s))
            law[m] = law.get(m, 0) + w / len(subs)
    return law


def _worst(a: dict, b: dict, sigma: float, eps: float) -> float:
    with mp.workdps(20):
        return float(max(_mixture_delta(a, b, sigma, eps), _mixture_delta(b, a, sigma, eps)))


# ----- fixed-size batches ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n, b, sigma", [(4, 1, 1.0), (5, 2, 0.8), (6, 3, 1.5)])
def test_fixed_size_contains_every_small_dataset(n, b, sigma):
    rng = np.random.default_rng(7)
    for neighbours in ("add_remove", "substitution"):
        pld = PLD.fixed_size(G, scale=sigma, batch_size=b, dataset_size=n, neighbours=neighbours)
        # The attaining pair (every other record at -z) and random datasets in [-1, 1].
        datasets = [[-1.0] * (n - 1)] + [list(rng.uniform(-1, 1, n - 1)) for _ in range(3)]
        for eps in (0.1, 0.7):
            iv = pld.delta(eps)
            values = []
            for others in datasets:
                big = _fixed_size_law(others + [1.0], b)
                small = _fixed_size_law(others + ([-1.0] if neighbours == "substitution" else []), b)
                values.append(_worst(big, small, sigma, eps))
            assert max(values) <= iv.upper, (neighbours, eps, values, iv)
            assert iv.lower <= values[0] <= iv.upper, (neighbours, eps, values[0], iv)  # attained


def _with_replacement_law(data, b: int) -> dict:
    """{batch sum: probability} of b independent uniform draws from ``data``."""
    law: dict = {}
    for idx in itertools.product(range(len(data)), repeat=b):
        m = mp.mpf(sum(data[i] for i in idx))
        law[m] = law.get(m, 0) + mp.mpf(1) / len(data) ** b
    return law


@pytest.mark.parametrize("n, b, sigma", [(3, 2, 1.0), (4, 3, 1.5)])
def test_fixed_size_with_replacement_contains_every_small_dataset(n, b, sigma):
    pld = PLD.fixed_size(G, scale=sigma, batch_size=b, dataset_size=n, neighbours="substitution", replacement=True)
    rng = np.random.default_rng(5)
    datasets = [[-1.0] * (n - 1)] + [list(rng.uniform(-1, 1, n - 1)) for _ in range(2)]
    for eps in (0.1, 0.7):
        iv = pld.delta(eps)
        values = [_worst(_with_replacement_law(d + [1.0], b), _with_replacement_law(d + [-1.0], b), sigma, eps)
                  for d in datasets]
        assert max(values) <= iv.upper, (eps, values, iv)
        assert iv.lower <= values[0], (eps, values[0], iv)  # every other record at the replacement attains it


def test_fixed_size_without_replacement_agrees_with_from_noise():
    a = PLD.fixed_size(Laplace(), scale=1.0, batch_size=20, dataset_size=1000, neighbours="substitution")
    b = PLD.from_noise(Laplace(), scale=1.0, sampling_rate=0.02, sampling="without_replacement",
                       neighbours="substitution")
    assert a.self_compose(30).epsilon(1e-6) == b.self_compose(30).epsilon(1e-6)


def test_fixed_size_below_dp_accounting_rdp():
    # dp-accounting's RDP for sampling without replacement (Wang, Balle and Kasiviswanathan 2019) bounds
    # the replacement's displacement of the sum by 1: here a record norm of 1/2.
    import dp_accounting as dpa
    from dp_accounting.rdp import RdpAccountant

    n, b, sigma, steps, delta = 10_000, 100, 1.0, 10_000, 1e-5
    rdp = RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(n, b, dpa.GaussianDpEvent(sigma)), steps))
    theirs = rdp.get_epsilon(delta)
    ours = PLD.fixed_size(G, scale=sigma, batch_size=b, dataset_size=n, sensitivity=0.5,
                          neighbours="substitution").self_compose(steps).epsilon(delta)
    assert ours.upper - ours.lower < 1e-3
    assert ours.upper <= 0.9 * theirs, (ours, theirs)


# ----- truncated Poisson ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n, q, cap, sigma", [(4, 0.5, 1, 1.0), (5, 0.4, 2, 0.8), (6, 0.6, 3, 1.2)])
def test_truncated_poisson_contains_every_small_dataset(n, q, cap, sigma):
    pld = PLD.truncated_poisson(G, scale=sigma, sampling_rate=q, dataset_size=n, max_batch_size=cap)
    rng = np.random.default_rng(11)
    datasets = [[0.0] * (n - 1), [-1.0] * (n - 1)] + [list(rng.uniform(-1, 1, n - 1)) for _ in range(2)]
    for eps in (0.1, 0.7):
        iv = pld.delta(eps)
        values = [_worst(_truncated_law(d + [1.0], q, cap), _truncated_law(d, q, cap), sigma, eps) for d in datasets]
        assert max(values) <= iv.upper, (eps, values, iv)
        assert iv.lower <= values[0], (eps, values[0], iv)  # the zero dataset attains the lower end


def test_truncated_poisson_without_truncation_is_poisson():
    a = PLD.truncated_poisson(G, scale=1.0, sampling_rate=0.01, dataset_size=1000, max_batch_size=1000)
    b = PLD.from_noise(G, scale=1.0, sampling_rate=0.01)
    assert a.self_compose(100).epsilon(1e-6) == b.self_compose(100).epsilon(1e-6)


def test_truncation_weights_against_mpmath():
    q, n, cap = 0.3, 20, 5
    with mp.workdps(30):
        pmf = [mp.binomial(n - 1, k) * mp.mpf(q) ** k * (1 - mp.mpf(q)) ** (n - 1 - k) for k in range(n)]
        tau = mp.fsum(pmf[cap:])
        q_eff = mp.fsum(mp.mpf(q) * min(1, mp.mpf(cap) / (k + 1)) * pmf[k] for k in range(n))
        r = mp.fsum(mp.mpf(q) * cap / (k + 1) * pmf[k] for k in range(cap, n)) / tau
    t, rr, qe = truncation_weights(q, n, cap)
    for ours, ref in ((t, tau), (rr, r), (qe, q_eff)):
        assert abs(ours - float(ref)) <= 1e-13 * float(ref)


def test_truncated_poisson_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    n, q, sigma, steps, delta = 10_000, 0.01, 1.0, 1000, 1e-5
    for cap, rare in ((200, True), (130, False)):
        theirs = dpa_pld.from_truncated_subsampled_gaussian_mechanism(
            dataset_size=n, sampling_probability=q, truncated_batch_size=cap, noise_multiplier=sigma,
            value_discretization_interval=1e-4).self_compose(steps).get_epsilon_for_delta(delta)
        ours = PLD.truncated_poisson(G, scale=sigma, sampling_rate=q, dataset_size=n,
                                     max_batch_size=cap).self_compose(steps).epsilon(delta)
        # dp-accounting's pessimistic estimate is an upper bound too, looser for the truncated batches
        # (its replace-one pair); where truncation is rare both are the Poisson value.
        assert ours.lower <= theirs + 1e-6
        assert ours.upper <= theirs + 1e-4, (cap, ours, theirs)
        if rare:
            assert abs(ours.upper - theirs) < 1e-4, (cap, ours, theirs)


# ----- balls-in-bins --------------------------------------------------------------------------------------
def test_balls_in_bins_one_bin_is_the_gaussian_mechanism():
    iv = PLD.balls_in_bins(G, scale=2.0, bins=1, epochs=9).epsilon(1e-6)
    g = PLD.from_gdp(1.5).epsilon(1e-6)
    assert iv.lower <= g.upper and g.lower <= iv.upper


def test_balls_in_bins_reassigned_is_independent_passes():
    a = PLD.balls_in_bins(G, scale=1.0, bins=20, epochs=3, reassign=True).epsilon(1e-5)
    b = PLD.random_allocation(G, scale=1.0, steps=20).self_compose(3).epsilon(1e-5)
    assert a == b
    fixed = PLD.balls_in_bins(G, scale=1.0, bins=20, epochs=3).epsilon(1e-5)
    assert fixed.lower > a.upper  # the same bin every epoch correlates the participations


def test_balls_in_bins_two_bins_two_epochs_against_quadrature():
    # P = (N((1,0,1,0) d) + N((0,1,0,1) d)) / 2 vs N(0, I): the ratio is (e^{d u - d^2} + e^{d v - d^2}) / 2
    # with u = x1 + x3, v = x2 + x4 iid N(0, 2) under Q, and delta = E_Q[(ratio - e^eps)_+]. Given u the
    # expectation over v is a log-normal call price (closed form); the integral over u is mpmath's.
    sigma, eps = 1.0, 0.5
    d = mp.mpf(1) / sigma
    pld = PLD.balls_in_bins(G, scale=sigma, bins=2, epochs=2)
    with mp.workdps(25):
        e = mp.e ** mp.mpf(eps)
        s = mp.sqrt(2) * d  # sd of d v

        def given_u(u):
            c = e - mp.e ** (d * u - d * d) / 2  # E[(Y - c)_+], Y = e^{d v - d^2} / 2, E[Y] = 1/2
            if c <= 0:
                return mp.mpf(1) / 2 - c
            d1 = (mp.log(mp.mpf(1) / 2 / c) + s * s / 2) / s
            return mp.ncdf(d1) / 2 - c * mp.ncdf(d1 - s)

        truth = float(mp.quad(lambda u: given_u(u) * mp.npdf(u, 0, mp.sqrt(2)), [-mp.inf, 0, 2, 4, mp.inf]))
    iv = pld.delta(eps)
    assert iv.lower <= truth <= iv.upper, (iv, truth)
    assert iv.upper - iv.lower < 1e-3 * truth


# ----- b-min-separation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("steps, b, p, warm", [(6, 2, 0.5, False), (7, 3, 0.3, True), (5, 1, 0.2, False)])
def test_min_sep_participations_against_enumeration(steps, b, p, warm):
    # Every coin sequence of the sampler (and, warm, every initial wait with its stationary weight).
    starts = {0: 1.0} if not warm or b == 1 else {0: 1 / (1 + (b - 1) * p), **{j: p / (1 + (b - 1) * p)
                                                                                for j in range(1, b)}}
    law = np.zeros(steps + 1)
    for wait0, w0 in starts.items():
        for coins in itertools.product((0, 1), repeat=steps):
            wait, m, w = wait0, 0, w0
            for c in coins:
                w *= p if c else 1 - p
                if wait == 0 and c:
                    m, wait = m + 1, b - 1
                elif wait > 0:
                    wait -= 1
            law[m] += w
    assert np.allclose(min_sep_participations(steps, b, p, warm), law, rtol=1e-12, atol=1e-15)


def test_b_min_sep_brackets_poisson_at_separation_one():
    iv = PLD.b_min_sep(G, scale=1.0, steps=200, separation=1, sampling_rate=0.05).epsilon(1e-5)
    poisson = PLD.from_noise(G, scale=1.0, sampling_rate=0.05).self_compose(200).epsilon(1e-5)
    assert iv.lower <= poisson.upper and poisson.lower <= iv.upper
    # Every record in every step of its window: the upper end is the exact Gaussian composition.
    full = PLD.b_min_sep(G, scale=2.0, steps=40, separation=4, sampling_rate=1.0, warm_start=False).epsilon(1e-5)
    g = PLD.from_gdp(math.sqrt(10) / 2).epsilon(1e-5)
    assert abs(full.upper - g.upper) < 1e-4 and full.lower <= g.upper


# ----- calibration --------------------------------------------------------------------------------------
def test_calibrate_sampler_certifies_both_ends():
    c = PLD.calibrate_sampler("fixed_size", G, epsilon=1.0, delta=1e-6, count=100, batch_size=10, dataset_size=1000,
                              certificate=True)
    at = PLD.fixed_size(G, scale=c.scale, batch_size=10, dataset_size=1000).self_compose(100)
    assert at.with_discretization(value_step=c.value_step).delta(1.0).upper <= 1e-6
    below = PLD.fixed_size(G, scale=c.scale_bounds.lower, batch_size=10, dataset_size=1000).self_compose(100)
    assert below.with_discretization(value_step=c.value_step).delta(1.0).lower > 1e-6
    assert c.scale_bounds.upper <= c.scale_bounds.lower * 1.001
    with pytest.raises(ValueError, match="sampler"):
        PLD.calibrate_sampler("shuffle", G, epsilon=1.0, delta=1e-6)
    with pytest.raises(TypeError, match="scale"):
        PLD.calibrate_sampler("balls_in_bins", G, epsilon=1.0, delta=1e-6, scale=1.0, bins=3)
    with pytest.raises(ValueError, match="bins"):
        PLD.calibrate_sampler("balls_in_bins", G, epsilon=1.0, delta=1e-6, bins=0)


# ----- bad input ------------------------------------------------------------------------------------------
def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="batch_size"):
        PLD.fixed_size(G, scale=1.0, batch_size=11, dataset_size=10)
    with pytest.raises(ValueError, match="batch_size"):
        PLD.fixed_size(G, scale=1.0, batch_size=10, dataset_size=10)
    with pytest.raises(ValueError, match="neighbours"):
        PLD.fixed_size(G, scale=1.0, batch_size=1, dataset_size=10, neighbours="replace")
    with pytest.raises(ValueError, match="substitution"):
        PLD.fixed_size(G, scale=1.0, batch_size=1, dataset_size=10, replacement=True)
    with pytest.raises(TypeError, match="replacement"):
        PLD.fixed_size(G, scale=1.0, batch_size=1, dataset_size=10, replacement=1)
    with pytest.raises(ValueError, match="sampling_rate"):
        PLD.truncated_poisson(G, scale=1.0, sampling_rate=1.5, dataset_size=10, max_batch_size=2)
    with pytest.raises(ValueError, match="sampling_rate"):
        PLD.truncated_poisson(G, scale=1.0, sampling_rate=math.nan, dataset_size=10, max_batch_size=2)
    with pytest.raises(ValueError, match="max_batch_size"):
        PLD.truncated_poisson(G, scale=1.0, sampling_rate=0.1, dataset_size=10, max_batch_size=0)
    with pytest.raises(TypeError, match="dataset_size"):
        PLD.truncated_poisson(G, scale=1.0, sampling_rate=0.1, dataset_size=10.5, max_batch_size=2)
    with pytest.raises(TypeError, match="Gaussian"):
        PLD.balls_in_bins(Laplace(), scale=1.0, bins=10)
    with pytest.raises(ValueError, match="bins"):
        PLD.balls_in_bins(G, scale=1.0, bins=0)
    with pytest.raises(ValueError, match="scale"):
        PLD.balls_in_bins(G, scale=-1.0, bins=3)
    with pytest.raises(ValueError, match="separation"):
        PLD.b_min_sep(G, scale=1.0, steps=10, separation=0, sampling_rate=0.1)
    with pytest.raises(ValueError, match="sampling_rate"):
        PLD.b_min_sep(G, scale=1.0, steps=10, separation=2, sampling_rate=-0.1)
    with pytest.raises(TypeError, match="warm_start"):
        PLD.b_min_sep(G, scale=1.0, steps=10, separation=2, sampling_rate=0.1, warm_start=1)
