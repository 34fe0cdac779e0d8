"""Mixtures of Gaussians (MMCC) and banded matrix factorization: the certified intervals contain 50-digit
references, agree with the Gaussian PLD where they must, and with dp-accounting's pessimistic PLD."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from pydp_core.accounting.pld import PLD
from pydp_core.accounting.pld import mixture as _mixture
from pydp_core.noise import Gaussian

mp.mp.dps = 50


def _hockey_stick(sigma, sens, probs, eps):
    """max over both orders of E_Q[(dP/dQ - e^eps)_+] for P = sum p_i N(c_i, s^2), Q = N(0, s^2), by
    50-digit quadrature on each side of the root of L(z) = eps (L is monotone in z)."""
    with mp.workdps(50):
        s = mp.mpf(sigma)
        m = [mp.mpf(c) / s for c in sens]
        w = [mp.mpf(p) for p in probs]
        e = mp.e ** mp.mpf(eps)

        def mix(z):
            return sum(wi * mp.npdf(z - mi) for wi, mi in zip(w, m))

        def loss(z):
            return mp.log(sum(wi * mp.e ** (mi * z - mi * mi / 2) for wi, mi in zip(w, m)))

        def root(target):
            lo, hi = mp.mpf(-200), mp.mpf(200)
            for _ in range(400):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if loss(mid) <= target else (lo, mid)
            return (lo + hi) / 2

        # remove: P = mixture, Q = N(0, 1): the loss exceeds eps for z > z1.
        z1 = root(mp.mpf(eps))
        remove = mp.quad(lambda z: mix(z) - e * mp.npdf(z), [z1, z1 + 10, z1 + 40, mp.inf])
        # add: P = N(0, 1), Q = mixture: the loss -L exceeds eps for z < z2.
        z2 = root(-mp.mpf(eps))
        add = mp.quad(lambda z: mp.npdf(z) - e * mix(z), [-mp.inf, z2 - 40, z2 - 10, z2])
        return float(max(remove, add, 0))


CASES = [
    (1.0, [0.0, 1.0], [0.9, 0.1]),
    (1.0, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2]),
    (0.7, [0.3, 1.0, 2.0], [0.2, 0.5, 0.3]),
    (2.0, [0.0, 1.0, 3.0], [0.97, 0.02, 0.01]),
]


@pytest.mark.parametrize("sigma,sens,probs", CASES)
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 3.0])
def test_single_contains_quadrature(sigma, sens, probs, eps):
    ref = _hockey_stick(sigma, sens, probs, eps)
    iv = PLD.from_mixture_of_gaussians(sigma=sigma, sensitivities=sens, probabilities=probs).delta(eps)
    assert iv.lower <= ref <= iv.upper
    assert iv.upper - iv.lower <= 1e-3 * ref + 1e-12  # second order in the grid step


@pytest.mark.parametrize("m", [0.3, 1.0, 4.0])
def test_one_component_through_the_mixture_path_is_the_gaussian(m):
    # The mixture kernel itself (not the shortcut to the Gaussian term) on one component of weight 1.
    term = _mixture._mixture(np.array([m]), np.array([1.0]))
    pld = PLD([(term, 1)])
    for eps in (0.0, 0.5, 2.0):
        ref = _hockey_stick(1.0, [m], [1.0], eps)
        iv = pld.delta(eps)
        assert iv.lower <= ref <= iv.upper
        g = PLD.from_gdp(m).delta(eps)
        assert iv.lower <= g.upper and g.lower <= iv.upper


def test_one_component_constructor_equals_gaussian():
    a = PLD.from_mixture_of_gaussians(sigma=2.0, sensitivities=[3.0], probabilities=[1.0]).self_compose(5)
    b = PLD.from_noise(Gaussian(), scale=2.0, sensitivity=3.0).self_compose(5)
    assert a.epsilon(1e-6) == b.epsilon(1e-6)


@pytest.mark.parametrize("p", [1e-3, 1e-8, 1e-12])
def test_small_probability_edges(p):
    sens, probs = [0.0, 1.0], [1.0 - p, p]
    for eps in (0.0, 1e-3):
        ref = _hockey_stick(1.0, sens, probs, eps)
        iv = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=sens, probabilities=probs).delta(eps)
        assert iv.lower <= ref <= iv.upper
        assert iv.upper <= 2.0 * ref + 1e-14  # the bound tracks the vanishing delta


def test_zero_probability_component_and_zero_sensitivity():
    a = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=[0.0, 5.0, 1.0], probabilities=[0.5, 0.0, 0.5])
    b = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=[0.0, 1.0], probabilities=[0.5, 0.5])
    assert a.epsilon(1e-5) == b.epsilon(1e-5)
    nothing = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=[0.0], probabilities=[1.0])
    assert nothing.delta(0.0).upper == 0.0


def test_two_point_mixture_matches_poisson_gaussian_composed():
    a = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=[0.0, 1.0], probabilities=[0.99, 0.01])
    b = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01)
    ia, ib = a.self_compose(1000).epsilon(1e-5), b.self_compose(1000).epsilon(1e-5)
    assert ia.lower <= ib.upper and ib.lower <= ia.upper
    assert ia.upper - ia.lower < 1e-3


def test_against_dp_accounting_upper():
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    sigma, sens, probs, k = 1.0, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2], 10
    peer = dpa_pld.from_mixture_gaussian_mechanism(standard_deviation=sigma, sensitivities=sens,
                                                   sampling_probs=probs, value_discretization_interval=1e-4)
    e_peer = peer.self_compose(k).get_epsilon_for_delta(1e-5)
    iv = PLD.from_mixture_of_gaussians(sigma=sigma, sensitivities=sens, probabilities=probs).self_compose(k).epsilon(1e-5)
    assert iv.lower <= e_peer + 1e-9  # the peer's pessimistic PLD is an upper bound
    assert abs(iv.upper - e_peer) < 1e-4


@pytest.mark.parametrize("kwargs,exc,name", [
    (dict(sigma=1.0, sensitivities=[], probabilities=[]), ValueError, "sensitivities"),
    (dict(sigma=1.0, sensitivities=[1.0, 2.0], probabilities=[1.0]), ValueError, "same length"),
    (dict(sigma=1.0, sensitivities=[1.0, 2.0], probabilities=[0.5, 0.6]), ValueError, "sum to 1"),
    (dict(sigma=1.0, sensitivities=[1.0, math.nan], probabilities=[0.5, 0.5]), ValueError, "sensitivities"),
    (dict(sigma=1.0, sensitivities=[1.0, -1.0], probabilities=[0.5, 0.5]), ValueError, "sensitivities"),
    (dict(sigma=1.0, sensitivities=[1.0, 2.0], probabilities=[1.5, -0.5]), ValueError, "probabilities"),
    (dict(sigma=0.0, sensitivities=[1.0], probabilities=[1.0]), ValueError, "sigma"),
    (dict(sigma=math.nan, sensitivities=[1.0], probabilities=[1.0]), ValueError, "sigma"),
    (dict(sigma=1.0, sensitivities="ab", probabilities=[1.0]), TypeError, "sensitivities"),
])
def test_bad_input(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        PLD.from_mixture_of_gaussians(**kwargs)


def test_positional_refused():
    with pytest.raises(TypeError):
        PLD.from_mixture_of_gaussians(1.0, [1.0], [1.0])  # type: ignore[misc]


# ----- banded matrix factorization ------------------------------------------------------------------------
def test_banded_one_band_is_poisson_dp_sgd():
    mf = PLD.from_banded_matrix_factorization(sigma=1.0, bands=1, column_sensitivities=[1.0] * 200,
                                              sampling_rate=0.02)
    sgd = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.02).self_compose(200)
    assert mf.epsilon(1e-5) == sgd.epsilon(1e-5)


def test_banded_explicit_pattern_is_the_composition_of_its_columns():
    cols = np.linspace(0.5, 1.5, 12)
    mf = PLD.from_banded_matrix_factorization(sigma=1.0, bands=3, column_sensitivities=cols, sampling_rate=0.1,
                                              participations=[1, 4, 7, 10])
    ref = PLD.composition(PLD.from_noise(Gaussian(), scale=1.0, sensitivity=float(cols[j]), sampling_rate=0.1)
                          for j in (1, 4, 7, 10))
    a, b = mf.epsilon(1e-6), ref.epsilon(1e-6)
    assert a.lower <= b.upper and b.lower <= a.upper


def test_banded_default_dominates_every_group():
    rng = np.random.default_rng(5)
    cols = rng.uniform(0.2, 1.2, 20)
    b = 4
    worst = PLD.from_banded_matrix_factorization(sigma=1.0, bands=b, column_sensitivities=cols, sampling_rate=0.2)
    up = worst.epsilon(1e-6).upper
    for g in range(b):
        one = PLD.from_banded_matrix_factorization(sigma=1.0, bands=b, column_sensitivities=cols, sampling_rate=0.2,
                                                   participations=list(range(g, 20, b)))
        assert one.epsilon(1e-6).lower <= up


def test_banded_bad_input():
    with pytest.raises(ValueError, match="apart"):
        PLD.from_banded_matrix_factorization(sigma=1.0, bands=3, column_sensitivities=[1.0] * 9, sampling_rate=0.1,
                                             participations=[0, 2])
    with pytest.raises(ValueError, match="column_sensitivities"):
        PLD.from_banded_matrix_factorization(sigma=1.0, bands=3, column_sensitivities=[1.0, -1.0], sampling_rate=0.1)
    with pytest.raises(ValueError, match="sampling_rate"):
        PLD.from_banded_matrix_factorization(sigma=1.0, bands=3, column_sensitivities=[1.0], sampling_rate=1.5)
    with pytest.raises(ValueError, match="participations"):
        PLD.from_banded_matrix_factorization(sigma=1.0, bands=1, column_sensitivities=[1.0], sampling_rate=0.1,
                                             participations=[3])


# ----- the dp-accounting adapter ----------------------------------------------------------------------------
def test_adapter_maps_mixture_of_gaussians():
    from dp_accounting import dp_event as dpa

    from pydp_core.adapters import dp_accounting as adapter

    ev = dpa.SelfComposedDpEvent(dpa.MixtureOfGaussiansDpEvent(1.0, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2]), 20)
    got = adapter.epsilon(ev, delta=1e-5)
    ref = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=[0.0, 0.5, 1.0],
                                        probabilities=[0.5, 0.3, 0.2]).self_compose(20).epsilon(1e-5)
    assert got.lower <= ref.upper and ref.lower <= got.upper
    with pytest.raises(ValueError, match="MixtureOfGaussiansDpEvent"):
        adapter.to_pld(ev, neighbours="substitution")
    with pytest.raises(ValueError, match="MixtureOfGaussiansDpEvent.*sum to 1"):
        adapter.to_pld(dpa.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.6]))
    assert math.isinf(adapter.epsilon(dpa.MixtureOfGaussiansDpEvent(0.0, [1.0], [1.0]), delta=1e-5).upper)


def test_adapter_maps_discrete_laplace_and_tree_aggregation():
    from dp_accounting import dp_event as dpa

    from pydp_core.adapters import dp_accounting as adapter

    # DLap(a) with sensitivity 1 is pure a-DP: delta(a) = 0 and delta just below a is positive.
    dl = adapter.to_pld(dpa.DiscreteLaplaceDpEvent(0.7, 1))
    assert dl.delta(0.7).upper <= 1e-12 and dl.delta(0.6).lower > 0.0
    tree = adapter.to_pld(dpa.SingleEpochTreeAggregationDpEvent(2.0, [7, 3]))  # depth ceil(log2 8) = 3
    g = PLD.from_gdp(math.sqrt(3.0) / 2.0)
    assert tree.epsilon(1e-6) == g.epsilon(1e-6)


@pytest.mark.parametrize("name", ["ZCDpEvent", "UnsupportedDpEvent"])
def test_adapter_refusal_names_the_event(name):
    from dp_accounting import dp_event as dpa

    from pydp_core.adapters import dp_accounting as adapter

    ev = dpa.ZCDpEvent(0.5) if name == "ZCDpEvent" else dpa.UnsupportedDpEvent()
    with pytest.raises(ValueError, match=name):
        adapter.to_pld(ev)
