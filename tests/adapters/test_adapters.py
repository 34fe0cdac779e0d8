"""Adapters for dp-accounting and Opacus (pydp_core.adapters), against the real packages."""
import copy
import math
import warnings

import dp_accounting as dpa
import mpmath
import numpy as np
import opacus
import pytest
import torch
from dp_accounting.pld import PLDAccountant as GooglePLD
from dp_accounting.rdp import RdpAccountant
from opacus.accountants import RDPAccountant as OpacusRDP

import pydp_core as dp
from pydp_core.adapters import dp_accounting as ad
from pydp_core.adapters import opacus as ao

DELTA = 1e-5


def gdp_epsilon(mu, delta):
    """The exact epsilon(delta) of mu-GDP (Dong, Roth and Su 2022), 50 digits."""
    mu = mpmath.mpf(mu)

    def f(e):
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2) - delta

    return float(mpmath.findroot(f, (mpmath.mpf(0), 20 * mu + 20), solver="bisect", tol=1e-30, maxsteps=200))


def google(event, relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE):
    acc = GooglePLD(relation)
    acc.compose(event)
    return acc.get_epsilon(DELTA)


# -- dp-accounting ---------------------------------------------------------------------------------------
def test_composed_gaussians_contain_the_exact_epsilon():
    ev = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 3), dpa.GaussianDpEvent(2.0)])
    iv = ad.epsilon(ev, delta=DELTA)
    exact = gdp_epsilon(1.0, DELTA)  # four Gaussians of sigma 2: mu = sqrt(4) / 2
    assert iv.lower <= exact <= iv.upper and iv.upper - iv.lower <= 1e-5
    assert abs(iv.upper - google(ev)) <= 1e-5


@pytest.mark.parametrize("q, sigma, steps", [(0.01, 1.0, 1000), (0.001, 0.8, 20000), (0.2, 3.0, 50)])
def test_poisson_sampled_gaussian_matches_or_beats_the_peers(q, sigma, steps):
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    iv = ad.epsilon(ev, delta=DELTA)
    g = google(ev)  # dp-accounting's pessimistic estimate: an upper bound on the truth
    assert iv.lower <= g  # our certified lower bound is below every upper bound
    assert iv.upper <= g + 1e-5  # equal within 1e-5, or tighter
    rdp = RdpAccountant()
    rdp.compose(ev)
    assert iv.upper < rdp.get_epsilon(DELTA)  # RDP is looser
    acc = ad.PLDAccountant()
    acc.compose(ev)
    assert acc.get_epsilon(DELTA) == ad.to_pld(ev).epsilon(DELTA).upper  # the engine's own answer
    refining = ad.PLDAccountant(tolerance=1e-5)
    refining.compose(ev)
    assert refining.get_epsilon(DELTA) == iv.upper


def test_mixed_tree_with_laplace():
    lap = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.02, dpa.LaplaceDpEvent(2.0)), 100)
    ev = dpa.ComposedDpEvent([lap, dpa.GaussianDpEvent(5.0), dpa.NoOpDpEvent()])
    iv = ad.epsilon(ev, delta=DELTA)
    g = google(ev)
    # A zero-fold composition reveals nothing (dp-accounting refuses count 0).
    with_empty = dpa.ComposedDpEvent([ev, dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(3.0), 0), dpa.ComposedDpEvent([])])
    assert ad.epsilon(with_empty, delta=DELTA).upper == pytest.approx(iv.upper, abs=1e-4)
    assert iv.lower <= g and iv.upper <= g + 1e-5
    d = ad.delta(ev, epsilon=iv.upper)
    assert d.lower <= DELTA * (1 + 1e-9)
    # A pure Laplace: delta(eps) = 0 from eps = 1 / b on; the certified upper bound reaches 0 one grid step later.
    assert ad.delta(dpa.LaplaceDpEvent(2.0), epsilon=0.51).upper < 1e-12
    assert ad.delta(dpa.LaplaceDpEvent(2.0), epsilon=0.4).lower > 0.0


def test_randomized_response_needs_substitution():
    rr = dpa.RandomizedResponseDpEvent(0.5, 4)
    iv = ad.epsilon(rr, delta=0.0, neighbours="substitution")
    assert iv.lower <= math.log(5.0) <= iv.upper  # (1 - p + p/k) / (p/k) = 5
    with pytest.raises(ValueError, match="substitution"):
        ad.epsilon(rr, delta=DELTA)


def test_non_private_unsupported_and_bad_events():
    ev = dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.NonPrivateDpEvent()])
    assert ad.epsilon(ev, delta=DELTA) == (math.inf, math.inf)
    assert ad.epsilon(dpa.GaussianDpEvent(0.0), delta=DELTA).upper == math.inf
    with pytest.raises(ValueError, match="non-private"):
        ad.to_pld(ev)
    acc = ad.PLDAccountant()
    acc.compose(ev)
    assert acc.get_epsilon(DELTA) == math.inf and acc.get_delta(1.0) == 1.0
    with pytest.raises(ValueError, match="not supported"):
        ad.to_pld(dpa.UnsupportedDpEvent())
    assert not acc.supports(dpa.UnsupportedDpEvent())
    with pytest.raises(ValueError, match="GaussianDpEvent or LaplaceDpEvent"):
        ad.to_pld(dpa.PoissonSampledDpEvent(0.1, dpa.RandomizedResponseDpEvent(0.5, 2)))
    with pytest.raises(ValueError, match="sampling_probability"):
        ad.to_pld(dpa.PoissonSampledDpEvent(1.5, dpa.GaussianDpEvent(1.0)))
    with pytest.raises(TypeError, match="DpEvent"):
        ad.to_pld("gaussian")
    with pytest.raises(ValueError, match="neighbours"):
        ad.to_pld(dpa.GaussianDpEvent(1.0), neighbours="replace")
    with pytest.raises(ValueError, match="neighboring_relation"):
        ad.PLDAccountant(dpa.NeighboringRelation.REPLACE_SPECIAL)


def test_sampled_without_replacement_needs_substitution():
    ev = dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0))
    with pytest.raises(ValueError, match="substitution"):
        ad.to_pld(ev)


def test_sampled_without_replacement_against_rdp():
    ev = dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0)), 1000)
    iv = ad.epsilon(ev, delta=DELTA, neighbours="substitution")
    rdp = RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(ev)
    assert 0 < iv.lower <= iv.upper < rdp.get_epsilon(DELTA)
    # Amplification without replacement at rate m/n is at least as strong as no sampling at all.
    assert iv.upper < ad.epsilon(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), 1000), delta=DELTA).lower


# -- Opacus ----------------------------------------------------------------------------------------------
def test_opacus_accountant_interface():
    acc = ao.PLDAccountant()
    assert isinstance(acc, opacus.accountants.IAccountant) and len(acc) == 0 and acc.get_epsilon(DELTA) == 0.0
    for _ in range(300):
        acc.step(noise_multiplier=1.1, sample_rate=0.02)
    acc.step(noise_multiplier=0.9, sample_rate=0.02)
    assert len(acc) == 301 and acc.history == [(1.1, 0.02, 300), (0.9, 0.02, 1)]
    ref = OpacusRDP()
    ref.history = list(acc.history)
    eps = acc.get_epsilon(DELTA)
    assert 0 < eps < ref.get_epsilon(DELTA)
    ev = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.1)), 300),
                              dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(0.9))])
    assert eps <= google(ev) + 1e-5
    state = acc.state_dict()
    other = ao.PLDAccountant()
    other.load_state_dict(state)
    assert len(other) == 301 and other.get_epsilon(DELTA) == eps
    assert state["mechanism"] == ao.PLDAccountant.mechanism() == "pydp_core"
    with pytest.raises(ValueError, match="noise_multiplier"):
        acc.step(noise_multiplier=-1.0, sample_rate=0.1)
    with pytest.raises(ValueError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)
    acc.step(noise_multiplier=0.0, sample_rate=0.1)
    assert acc.get_epsilon(DELTA) == math.inf


def _train(model, pydp_seed, torch_seed, accountant="pydp_core"):
    torch.manual_seed(1234)
    X, y = torch.randn(64, 4), torch.randint(0, 2, (64,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=16)
    torch.manual_seed(torch_seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's advice on secure_mode and its data loader
        engine = opacus.PrivacyEngine(accountant=accountant)
        model, opt, loader = engine.make_private(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
            noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=False,
            noise_generator=ao.SecureNoise(dp.Random(pydp_seed), simulation=True))
        for xb, yb in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
    return engine, torch.cat([p.detach().ravel() for p in model.parameters()])


def test_opacus_training_with_pld_accountant_and_secure_noise():
    torch.manual_seed(0)
    base = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    engine, w1 = _train(copy.deepcopy(base), 1, 10)
    assert isinstance(engine.accountant, ao.PLDAccountant)
    assert len(engine.accountant) == 4 and engine.accountant.history == [(1.0, 0.25, 4)]
    ref = OpacusRDP()
    ref.history = list(engine.accountant.history)
    assert 0 < engine.get_epsilon(DELTA) < ref.get_epsilon(DELTA)
    # The noise comes from pydp_core's generator, not torch's: a different torch seed changes nothing,
    # a different pydp_core seed changes the weights.
    _, w2 = _train(copy.deepcopy(base), 1, 20)
    _, w3 = _train(copy.deepcopy(base), 2, 10)
    assert torch.equal(w1, w2) and not torch.equal(w1, w3)
    # Other optimizers keep Opacus's own noise.
    _, w4 = _train(copy.deepcopy(base), 1, 10, accountant="rdp")
    assert torch.equal(w1, w4)


def test_make_private_with_epsilon_calibrates_with_the_pld():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 2))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,))),
                                         batch_size=16)
    sigmas = {}
    for name in ("pydp_core", "rdp"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine = opacus.PrivacyEngine(accountant=name)
            m = copy.deepcopy(model)
            _, opt, _ = engine.make_private_with_epsilon(
                module=m, optimizer=torch.optim.SGD(m.parameters(), lr=0.1), data_loader=loader,
                target_epsilon=2.0, target_delta=DELTA, epochs=5, max_grad_norm=1.0)
        sigmas[name] = opt.noise_multiplier
    assert sigmas["pydp_core"] < sigmas["rdp"]  # the tighter accountant needs less noise
    acc = ao.PLDAccountant()
    acc.history = [(sigmas["pydp_core"], 0.25, 20)]
    assert acc.get_epsilon(DELTA) <= 2.0


def test_gaussian_noise_for_tensors():
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        z = ao.gaussian_noise_like(torch.empty(200_000, dtype=dtype), 2.0, rng=dp.Random(3), simulation=True)
        assert z.dtype == dtype and z.shape == (200_000,)
        x = z.double().numpy()
        # mean 0 and std 2 at alpha ~ 1e-6 (5 standard errors)
        assert abs(x.mean()) < 5 * 2.0 / math.sqrt(x.size)
        assert abs(x.std() - 2.0) < 5 * 2.0 / math.sqrt(2 * x.size) + (0.01 if dtype == torch.bfloat16 else 0)
    same = ao.gaussian_noise_like(torch.empty(5, dtype=torch.float64), 2.0, rng=dp.Random(3), simulation=True)
    np.testing.assert_array_equal(same.numpy(), dp.Random(3).normal(0.0, 2.0, size=5))
    g = torch.ones(3)
    assert ao.add_gaussian_noise_(g, 0.0) is g and torch.equal(g, torch.ones(3))
    with pytest.raises(ValueError, match="seeded"):
        ao.gaussian_noise_like(torch.zeros(2), 1.0, rng=dp.Random(1))
    with pytest.raises(ValueError, match="seeded"):
        ao.SecureNoise(dp.Random(1))
    with pytest.raises(TypeError, match="floating"):
        ao.gaussian_noise_like(torch.zeros(2, dtype=torch.int64), 1.0)
    with pytest.raises(TypeError, match="torch tensor"):
        ao.gaussian_noise_like(np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="CPU"):
        ao.gaussian_noise_like(torch.empty(2, device="meta"), 1.0)
    with pytest.raises(ValueError, match="std"):
        ao.gaussian_noise_like(torch.zeros(2), -1.0)
