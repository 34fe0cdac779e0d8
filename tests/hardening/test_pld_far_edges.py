"""The PLD's certified delta interval at its far edges: the deep tail down to delta = 1e-300 and nearly
non-private mechanisms (delta = 1 to double precision), against the 70-digit Lemma 1 profile of
support.mpref (written from the definitions, independent of the kernels)."""
import mpmath as mp
import numpy as np
import pytest
from support import mpref

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian, Laplace, Subbotin


def _contains(iv, key, eps, scale):
    ref = mpref.privacy_profile(key, float(eps), scale)
    return mp.mpf(float(iv.lower)) <= ref <= mp.mpf(float(iv.upper)), (eps, iv, mp.nstr(ref, 20))


@pytest.mark.parametrize("noise, scale, top", [(Gaussian(), 1.0, 37.2), (Gaussian(), 2.0, 18.55), (Subbotin(1.5), 1.0, 10.05)])
def test_deep_tail_intervals_contain_the_exact_delta_down_to_1e_300(noise, scale, top):
    pld = PLD.from_noise(noise, scale=scale).with_discretization(tail_mass=1e-300)
    h = pld.value_step
    key = mpref.family_key(noise)
    # Half the points on the loss grid (where the pessimistic side is exact and only rounding separates
    # it from the truth), half between grid points; from delta ~ 1e-20 down to ~ 1e-300.
    lo = 0.25 * top
    on_grid = np.round(np.linspace(lo, top, 50) / h) * h
    between = np.linspace(lo, top, 50) + 0.37 * h
    eps = np.concatenate([on_grid, between])
    iv = pld.delta(eps)
    refs = [mpref.privacy_profile(key, float(e), scale) for e in eps]
    assert min(refs) < mp.mpf("1e-290")
    bad = [(float(e), float(lo_), float(up), mp.nstr(r, 17)) for e, lo_, up, r in zip(eps, iv.lower, iv.upper, refs)
           if not (mp.mpf(float(lo_)) <= r <= mp.mpf(float(up)))]
    assert not bad, bad[:5]


@pytest.mark.parametrize("scale, eps", [(1.0, 35.0), (2.0, 16.995)])
def test_the_reported_deep_tail_points_are_contained(scale, eps):
    iv = PLD.from_noise(Gaussian(), scale=scale).with_discretization(tail_mass=1e-300).delta(eps)
    ok, info = _contains(iv, ("Gaussian",), eps, scale)
    assert ok, info


@pytest.mark.parametrize("noise, scale", [(Gaussian(), 0.01), (Gaussian(), 0.05), (Subbotin(1.5), 0.01),
                                          (Laplace(), 0.01)])
@pytest.mark.parametrize("eps", [0.0, 1.0, 5.0])
def test_nearly_non_private_mechanisms_have_an_upper_end_at_the_truth(noise, scale, eps):
    iv = PLD.from_noise(noise, scale=scale).delta(eps)
    ok, info = _contains(iv, mpref.family_key(noise), eps, scale)
    assert ok, info
    assert iv.upper <= 1.0
    assert iv.upper - iv.lower < 1e-12
