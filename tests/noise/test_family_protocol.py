"""What a noise family answers for itself, as the rest of the package asks it.

The kernel handle, the identity behind ``==``, the name :func:`pydp_core.noise.from_name` parses, the
Subbotin order, the privacy loss psi(u) - psi(u - d) and the Fisher information, each against a
closed form or an mpmath quadrature; and the public handles of :class:`pydp_core.Random`.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from pydp_core import io
from pydp_core.noise import Gaussian, Laplace, LogConcaveFamily, Logistic, Subbotin, Truncated, from_name
from pydp_core.random import Random

STANDARD = [Laplace(), Gaussian(), Logistic(), Subbotin(1.5), Subbotin(3.0)]


def _psi(fam, x):
    """psi = -log f of the unit-scale density, up to a constant, in mpmath."""
    x = mp.mpf(x)
    if isinstance(fam, Logistic):
        return abs(x) + 2 * mp.log1p(mp.exp(-abs(x)))
    r = {"laplace": 1, "gaussian": 2}.get(fam.spec_name) or mp.mpf(fam.r)
    return abs(x) ** r / r


@pytest.mark.parametrize("fam", STANDARD, ids=repr)
def test_psi_diff_is_the_loss_of_a_shift(fam):
    for u, d in [(0.5, 1.0), (0.8, 1.0), (2.5, 0.5), (1.0, 2.0), (7.0, 3.0)]:  # u >= d / 2
        ref = float(_psi(fam, u) - _psi(fam, u - d))
        assert fam.psi_diff(u, d) == pytest.approx(ref, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("fam", STANDARD, ids=repr)
def test_fisher_information_is_the_expected_squared_score(fam):
    mp.mp.dps = 30
    score2 = lambda x: mp.diff(lambda t: _psi(fam, t), x) ** 2 * mp.e ** (-_psi(fam, x))  # noqa: E731
    norm = mp.quad(lambda x: mp.e ** (-_psi(fam, x)), [0, 1, mp.inf])
    ref = float(mp.quad(score2, [0, 1, mp.inf]) / norm)
    assert fam.fisher_information == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("fam", [Truncated(Laplace(), 3.0),
                                 LogConcaveFamily(logpdf=Gaussian().logpdf, cdf=Gaussian().cdf, name="n")], ids=repr)
def test_families_without_a_closed_form_have_no_fisher_information_or_name(fam):
    assert fam.spec_name is None and fam.subbotin_order is None
    with pytest.raises(TypeError, match="Fisher information"):
        fam.fisher_information


def test_kernel_handle_and_identity():
    assert Laplace().kernel.kind == Subbotin(1.0).kernel.kind
    assert Truncated(Gaussian(), 2.0).kernel.bound == 2.0
    assert LogConcaveFamily(logpdf=Gaussian().logpdf, cdf=Gaussian().cdf).kernel is None
    assert Subbotin(2.0).identity == Gaussian().identity != Laplace().identity
    assert Truncated(Subbotin(1.0), 2.0) == Truncated(Laplace(), 2.0) != Truncated(Laplace(), 3.0)
    assert [f.subbotin_order for f in (Laplace(), Gaussian(), Subbotin(1.5), Logistic())] == [1.0, 2.0, 1.5, None]


@pytest.mark.parametrize("fam", STANDARD, ids=repr)
def test_from_name_inverts_spec_name(fam):
    back = from_name(fam.spec_name, getattr(fam, "r", None) if fam.spec_name == "subbotin" else None)
    assert back == fam and type(back) is type(fam)


def test_random_handles():
    key = bytes(range(32))
    r = Random.from_secret_key(key, threads=2)
    assert not r.seeded and r.threads == 2 and r.kernel_threads == 2
    assert np.array_equal(r.random_raw(8), Random(key).random_raw(8))
    assert Random(1).kernel_threads == 0 and Random(1, threads=3).with_threads(None).kernel_threads == 0
    assert type(Random(1).kernel).__name__ == "Generator"


def test_a_mechanism_records_the_bounds_it_is_tied_to():
    assert io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 4)).tied_bounds == (0.0, 4.0)
    assert io.mechanism("laplace", epsilon=1.0).tied_bounds is None
    assert math.isfinite(io.mechanism("subbotin", r=1.5, epsilon=1.0, delta=1e-6).scale)
