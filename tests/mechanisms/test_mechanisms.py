"""Mechanisms: exact calibration (checked against 50-digit mpmath references), noise, bad input."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats
from support.stats import ALPHA

import pydp_core
from pydp_core import GaussianMechanism, LaplaceMechanism, LogisticMechanism, Random, SubbotinMechanism, minimal_scale


def mp_gaussian_delta(eps, s, d):
    """Balle-Wang: delta(s) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)."""
    eps, s, d = mp.mpf(eps), mp.mpf(s), mp.mpf(d)
    return mp.ncdf(d / (2 * s) - eps * s / d) - mp.e ** eps * mp.ncdf(-d / (2 * s) - eps * s / d)


def mp_subbotin_delta(r, eps, s, d):
    """Lemma 1 for Subbotin_r (r > 1): t solves psi(t/s) - psi((t - D)/s) = eps on t > D/2."""
    r, eps, s, d = mp.mpf(r), mp.mpf(eps), mp.mpf(s), mp.mpf(d)
    psi = lambda x: abs(x) ** r / r  # noqa: E731

    def sf(x):
        q = mp.gammainc(1 / r, 0, abs(x) ** r / r, regularized=True)  # P(|X| <= |x|)
        return (1 - q) / 2 if x >= 0 else 1 - (1 - q) / 2

    g = lambda t: psi(t / s) - psi((t - d) / s) - eps  # noqa: E731
    lo, hi = d / 2, d
    while g(hi) < 0:
        hi *= 2
    t = mp.findroot(g, (lo, hi), solver="anderson")
    return sf((t - d) / s) - mp.e ** eps * sf(t / s)


@pytest.mark.parametrize("eps,delta,sens", [(1.0, 0.0, 1.0), (0.1, 1e-6, 2.0), (5.0, 0.3, 0.5)])
def test_laplace_closed_form(eps, delta, sens):
    m = LaplaceMechanism(epsilon=eps, delta=delta, sensitivity=sens, confirm_delta=True)
    ref = mp.mpf(sens) / (eps - 2 * mp.log(1 - mp.mpf(delta)))
    assert m.scale >= float(ref) * (1 - 1e-15)
    assert math.isclose(m.scale, float(ref), rel_tol=1e-10)
    assert math.isclose(m.variance, 2 * m.scale ** 2, rel_tol=1e-15)
    assert (m.epsilon, m.delta, m.sensitivity) == (eps, delta, sens)


@pytest.mark.parametrize("eps,delta,sens", [(1.0, 1e-5, 1.0), (0.05, 1e-10, 3.0), (8.0, 1e-3, 1.0), (1.0, 1e-100, 1.0)])
def test_gaussian_is_exact_analytic(eps, delta, sens):
    m = GaussianMechanism(epsilon=eps, delta=delta, sensitivity=sens)
    # Private at the returned scale, and not private 1e-9 below it (50-digit reference).
    assert mp_gaussian_delta(eps, m.scale, sens) <= mp.mpf(delta) * (1 + mp.mpf("1e-12"))
    assert mp_gaussian_delta(eps, m.scale * (1 - 1e-9), sens) > delta
    assert math.isclose(m.variance, m.scale ** 2, rel_tol=1e-15)


@pytest.mark.parametrize("r,eps,delta", [(1.5, 1.0, 1e-5), (3.0, 0.5, 1e-8), (7.5, 1.0, 1e-4)])
def test_subbotin_calibration_mpmath(r, eps, delta):
    m = SubbotinMechanism(r, epsilon=eps, delta=delta, sensitivity=1.0)
    assert m.r == r
    assert mp_subbotin_delta(r, eps, m.scale, 1.0) <= mp.mpf(delta) * (1 + mp.mpf("1e-10"))
    assert mp_subbotin_delta(r, eps, m.scale * (1 - 1e-7), 1.0) > delta
    var = mp.mpf(r) ** (2 / mp.mpf(r)) * mp.gamma(3 / mp.mpf(r)) / mp.gamma(1 / mp.mpf(r))
    assert math.isclose(m.variance, float(var) * m.scale ** 2, rel_tol=1e-12)


def test_logistic_variance_and_scale():
    m = LogisticMechanism(epsilon=1.0, delta=0.0, sensitivity=2.0)
    assert m.scale == float(minimal_scale(pydp_core.Logistic(), epsilon=1.0, delta=0.0, sensitivity=2.0))
    assert math.isclose(m.variance, math.pi ** 2 / 3 * m.scale ** 2, rel_tol=1e-15)
    # delta = 0: the Logistic is MLR-bounded; its loss is at most D / s, so s = D / eps
    assert math.isclose(m.scale, 2.0, rel_tol=1e-9)


def test_subbotin_special_orders_match():
    assert math.isclose(SubbotinMechanism(1, epsilon=1.0, delta=1e-5).scale, LaplaceMechanism(epsilon=1.0, delta=1e-5).scale, rel_tol=1e-9)
    assert math.isclose(SubbotinMechanism(2, epsilon=1.0, delta=1e-5).scale, GaussianMechanism(epsilon=1.0, delta=1e-5).scale, rel_tol=1e-9)


@pytest.mark.parametrize("mech,cdf", [
    (LaplaceMechanism(epsilon=0.5, delta=0.0, sensitivity=1.0), lambda s: stats.laplace(scale=s).cdf),
    (GaussianMechanism(epsilon=0.5, delta=1e-6, sensitivity=1.0), lambda s: stats.norm(scale=s).cdf),
    (LogisticMechanism(epsilon=0.5, delta=0.0, sensitivity=1.0), lambda s: stats.logistic(scale=s).cdf),
    (SubbotinMechanism(4.0, epsilon=0.5, delta=1e-6, sensitivity=1.0), lambda s: (lambda x: pydp_core.Subbotin(4.0).cdf(np.asarray(x) / s))),
])
def test_privatize_adds_the_calibrated_noise(mech, cdf):
    values = np.linspace(-100, 100, 100_000)
    out = mech.privatize(values, rng=Random(31), release=False)
    assert out.shape == values.shape and out.dtype == np.float64
    noise = out - values
    assert stats.kstest(noise, cdf(mech.scale)).pvalue > ALPHA


def test_privatize_scalars_arrays_and_rngs():
    m = GaussianMechanism(epsilon=1.0, delta=1e-5)
    assert isinstance(m.privatize(3.0), float)
    assert isinstance(m.privatize(np.float32(3.0)), float)
    assert m.privatize([[1.0, 2.0], [3.0, 4.0]]).shape == (2, 2)
    assert m.privatize(np.arange(5)).dtype == np.float64  # integers are converted exactly
    a = m.privatize(np.zeros(100), rng=Random(1), simulation=True)
    assert np.array_equal(a, m.privatize(np.zeros(100), rng=Random(1), simulation=True))
    s = m.simulate(np.zeros(100), rng=Random(1))  # the floating-point path, release=False
    assert np.array_equal(s, m.privatize(np.zeros(100), rng=Random(1), release=False))
    assert np.array_equal(s, Random(1).normal(0.0, m.scale, size=100))
    b = m.privatize(np.zeros(100), rng=np.random.default_rng(7), simulation=True)
    assert np.array_equal(b, m.privatize(np.zeros(100), rng=np.random.default_rng(7), simulation=True))
    assert not np.array_equal(m.privatize(np.zeros(10)), m.privatize(np.zeros(10)))  # secure default


def test_docstrings_warn_about_floating_point():
    import pydp_core.mechanisms as mod

    assert "least-significant-bit" in mod.__doc__
    for cls in (LaplaceMechanism, GaussianMechanism, LogisticMechanism, SubbotinMechanism):
        assert "least-significant-bit" in cls.__doc__
    assert "least-significant-bit" in LaplaceMechanism.privatize.__doc__


@pytest.mark.parametrize("make,exc,name", [
    (lambda: LaplaceMechanism(epsilon=-1.0), ValueError, "epsilon"),
    (lambda: LaplaceMechanism(epsilon=float("nan")), ValueError, "epsilon"),
    (lambda: LaplaceMechanism(epsilon=0.0, delta=0.0), ValueError, "epsilon"),
    (lambda: LaplaceMechanism(epsilon=1.0, delta=1.0), ValueError, "delta"),
    (lambda: LaplaceMechanism(epsilon=1.0, delta=-0.1), ValueError, "delta"),
    (lambda: LaplaceMechanism(epsilon=1.0, delta=0.0, sensitivity=0.0), ValueError, "sensitivity"),
    (lambda: LaplaceMechanism(epsilon=1.0, delta=0.0, sensitivity=float("inf")), ValueError, "sensitivity"),
    (lambda: LaplaceMechanism(epsilon=[1.0, 2.0]), TypeError, "epsilon"),
    (lambda: GaussianMechanism(epsilon=1.0, delta=0.0), ValueError, "delta"),
    (lambda: SubbotinMechanism(0.5, epsilon=1.0, delta=1e-5), ValueError, "r"),
    (lambda: SubbotinMechanism(float("nan"), epsilon=1.0, delta=1e-5), ValueError, "r"),
    (lambda: SubbotinMechanism(3.0, epsilon=1.0, delta=0.0), ValueError, "delta"),
    (lambda: GaussianMechanism(epsilon="1", delta=1e-5), TypeError, "epsilon"),
])
def test_bad_construction(make, exc, name):
    with pytest.raises(exc, match=name):
        make()


@pytest.mark.parametrize("values,exc", [
    (float("nan"), ValueError), (np.array([1.0, np.inf]), ValueError), (np.array([np.nan]), ValueError),
    ("abc", TypeError), (np.array(["a"]), TypeError), (True, TypeError),
])
def test_privatize_rejects_bad_values(values, exc):
    with pytest.raises(exc, match="values"):
        LaplaceMechanism(epsilon=1.0).privatize(values)


def test_privatize_rejects_bad_rng():
    with pytest.raises(TypeError, match="rng"):
        LaplaceMechanism(epsilon=1.0).privatize(1.0, rng=123)
