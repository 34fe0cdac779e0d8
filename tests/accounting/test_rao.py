"""Rao DP (Anonymous 2022, with the corrections derived in docs/accounting.md) against mpmath references."""
import math

import mpmath as mp
import numpy as np
import pytest

import pydp_core as pc
from pydp_core import rao


def mp_normal_paper(mu1, s1, mu2, s2):
    """Example 1's closed form with the corrected sqrt(2) prefactor."""
    mu1, s1, mu2, s2 = map(mp.mpf, (mu1, s1, mu2, s2))
    A = mp.sqrt((mu1 - mu2) ** 2 + 2 * (s1 + s2) ** 2)
    B = mp.sqrt((mu1 - mu2) ** 2 + 2 * (s1 - s2) ** 2)
    return mp.sqrt(2) * mp.log((A + B) / (A - B))


@pytest.mark.parametrize("args", [(0, 1, 1, 1), (0, 1, 0, 3), (-2, 0.5, 3, 4), (1e-8, 1, 0, 1), (0, 1, 1e4, 1e-3), (5, 2, 5.000001, 2.000001)])
def test_normal_distance_closed_form(args):
    got = rao.normal_distance(*args)
    assert got == pytest.approx(float(mp_normal_paper(*args)), rel=1e-12)


def test_normal_distance_special_cases_and_geodesic():
    # equal means: sqrt(2) |log(s2/s1)|
    assert rao.normal_distance(0, 1, 0, math.e) == pytest.approx(math.sqrt(2), rel=1e-15)
    # Corrected reference value: N(0,1) to N(1,1) is sqrt(2) log 2 in the 2-D family, less than the fixed-sigma 1
    assert rao.normal_distance(0, 1, 1, 1) == pytest.approx(math.sqrt(2) * math.log(2), rel=1e-15)
    assert rao.normal_distance(0, 1, 1, 1) < rao.location_distance(pc.Gaussian(), 0, 1, 1)
    # the distance is the length of the geodesic: integrate the metric along the half-circle geodesic
    mu1, s1, mu2, s2 = 0.0, 1.0, 3.0, 2.0
    x1, x2 = mu1 / math.sqrt(2), mu2 / math.sqrt(2)  # half-plane coordinates (x = mu / sqrt 2, y = sigma)
    c = (x2**2 + s2**2 - x1**2 - s1**2) / (2 * (x2 - x1))
    R = math.hypot(x1 - c, s1)
    t1, t2 = math.atan2(s1, x1 - c), math.atan2(s2, x2 - c)
    length = mp.quad(lambda t: mp.sqrt(2) * R / (R * mp.sin(t)), [t2, t1])
    assert rao.normal_distance(mu1, s1, mu2, s2) == pytest.approx(float(length), rel=1e-10)
    # vectorised
    out = rao.normal_distance(np.array([0.0, 1.0]), 1.0, 0.0, 1.0)
    assert out.shape == (2,) and out[0] == 0.0


def mp_fisher(r, s):
    """Fisher information of the location of s X, X ~ Subbotin_r, by quadrature of the squared score."""
    r, s = mp.mpf(r), mp.mpf(s)
    C = 2 * mp.gamma(1 / r) * r ** (1 / r - 1)
    dens = lambda z: mp.exp(-abs(z) ** r / r) / C  # noqa: E731
    # score in x for a location shift: d/dmu log f((x - mu)/s) = |z|^(r-1) sign(z) / s
    return 2 * mp.quad(lambda z: (z ** (r - 1) / s) ** 2 * dens(z), [0, 1, mp.inf])


@pytest.mark.parametrize("r", [1.0, 1.5, 2.0, 3.0, 7.5])
def test_fisher_information_corrected(r):
    s = 0.7
    noise = pc.Laplace() if r == 1 else pc.Gaussian() if r == 2 else pc.Subbotin(r)
    assert rao.fisher_information(noise, s) == pytest.approx(float(mp_fisher(r, s)), rel=1e-10)
    # the paper's printed (uncorrected) sigma^2 form differs except where it coincides
    d = rao.location_distance(noise, 0.0, 2.0, s)
    assert d == pytest.approx(2.0 * math.sqrt(float(mp_fisher(r, s))), rel=1e-10)


def test_laplace_distance_uses_b_not_sqrt_b():
    # Theorem 4.2 corrected: ||mu1 - mu2||_2 / b
    assert rao.location_distance(pc.Laplace(), [0.0, 0.0], [3.0, 4.0], 4.0) == pytest.approx(5.0 / 4.0, rel=1e-15)
    assert rao.location_distance(pc.Subbotin(1.0), 0.0, 1.0, 4.0) == pytest.approx(0.25, rel=1e-15)
    with pytest.raises(ValueError, match="shape"):
        rao.location_distance(pc.Laplace(), [0.0], [1.0, 2.0], 1.0)
    # the Logistic location has Fisher information 1/3
    assert rao.location_distance(pc.Logistic(), 0.0, 1.0, 1.0) == pytest.approx(math.sqrt(1.0 / 3.0), rel=1e-15)
    with pytest.raises(TypeError):
        rao.location_distance(pc.Truncated(pc.Laplace(), 2.0), 0.0, 1.0, 1.0)


def test_calibrate_theorems():
    assert rao.calibrate(pc.Laplace(), theta=0.5, sensitivity=2.0) == 4.0  # Theorem 4.4
    assert rao.calibrate(pc.Gaussian(), theta=0.5, sensitivity=2.0) == 4.0  # Theorem 4.8
    assert rao.calibrate(pc.Gaussian(), theta=0.5, sensitivity=2.0, dimension=10) == 4.0  # Theorem F.4 with l2 sensitivity
    for r in (1.5, 4.0):
        s = rao.calibrate(pc.Subbotin(r), theta=0.3, sensitivity=1.7)  # Theorem E.3, corrected
        # the calibrated mechanism is exactly theta-Rao-DP: the distance at the sensitivity is theta
        assert rao.location_distance(pc.Subbotin(r), 0.0, 1.7, s) == pytest.approx(0.3, rel=1e-13)
        assert rao.theta(pc.Subbotin(r), scale=s, sensitivity=1.7).theta == pytest.approx(0.3, rel=1e-13)
    # composition through compose (Lemma 3.2)
    th = pc.compose([rao.theta(pc.Gaussian(), scale=2.0, sensitivity=1.0), rao.theta(pc.Laplace(), scale=1.0, sensitivity=1.0)])
    assert th == pc.RaoDP(math.hypot(0.5, 1.0))
    with pytest.raises(ValueError, match="theta"):
        rao.calibrate(pc.Gaussian(), theta=0.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="theta"):
        rao.calibrate(pc.Gaussian(), theta=-1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        rao.calibrate(pc.Gaussian(), theta=1.0, sensitivity=float("nan"))
    with pytest.raises(ValueError, match="dimension"):
        rao.calibrate(pc.Gaussian(), theta=1.0, sensitivity=1.0, dimension=0)


def test_nonparametric_distance():
    from scipy import stats

    for D, s in [(1.0, 1.0), (0.1, 2.0), (5.0, 1.0), (1e-4, 1.0)]:
        got = rao.nonparametric_distance(stats.norm(0, s).pdf, stats.norm(D, s).pdf)
        ref = 2 * mp.acos(mp.exp(-mp.mpf(D) ** 2 / (8 * mp.mpf(s) ** 2)))
        assert got == pytest.approx(float(ref), rel=1e-8)
        # never larger than the parametric distance (fixed-sigma family, or the 2-D family)
        assert got <= rao.location_distance(pc.Gaussian(), 0.0, D, s) * (1 + 1e-12)
    # Laplace, with the kinks given as break points: BC = (1 + D/(2b)) e^(-D/(2b))
    D, b = 1.3, 0.8
    got = rao.nonparametric_distance(stats.laplace(0, b).pdf, stats.laplace(D, b).pdf, points=[0.0, D])
    x = mp.mpf(D) / (2 * b)
    assert got == pytest.approx(float(2 * mp.acos((1 + x) * mp.exp(-x))), rel=1e-8)
    assert got <= rao.location_distance(pc.Laplace(), 0.0, D, b)
    assert rao.nonparametric_distance(stats.norm.pdf, stats.norm.pdf) == 0.0
    with pytest.raises(TypeError):
        rao.nonparametric_distance(1.0, stats.norm.pdf)
    with pytest.raises(ValueError, match="lower"):
        rao.nonparametric_distance(stats.norm.pdf, stats.norm.pdf, 1.0, 0.0)


def test_bad_input():
    with pytest.raises(ValueError, match="sigma1"):
        rao.normal_distance(0, -1, 0, 1)
    with pytest.raises(ValueError, match="mu2"):
        rao.normal_distance(0, 1, float("nan"), 1)
    with pytest.raises(ValueError, match="scale"):
        rao.location_distance(pc.Gaussian(), 0, 1, 0.0)
