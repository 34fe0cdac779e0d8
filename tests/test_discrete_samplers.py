"""Exactness of the integer samplers: chi-square of 10^6 draws against the exact pmf (alpha = 1e-6).

Scales cover below one grid step (t = 1/3, sigma = 1/2), the power-of-two fast path and above 10^6 steps
(t = 3e6, sigma = 2e6). Bin probabilities come from 50-digit mpmath (discrete Laplace, small discrete
Gaussian) or from an independent float64 summation of the Gaussian weights (sigma = 2e6).
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

import pydp_core as pc
from pydp_core import discrete as dsc

ALPHA = 1e-6
N = 10**6


def chi_square_ok(samples: np.ndarray, edges: list, probs: np.ndarray) -> tuple[float, float]:
    """Counts in the bins (-inf, e0], (e0, e1], ..., (e_last, inf) against probabilities; (stat, critical)."""
    idx = np.searchsorted(np.asarray(edges, dtype=np.int64), samples, side="left")
    counts = np.bincount(idx, minlength=len(edges) + 1)
    expected = probs * samples.size
    assert abs(probs.sum() - 1) < 1e-9
    assert expected.min() >= 5, "bins too thin for the chi-square approximation"
    stat = float(((counts - expected) ** 2 / expected).sum())
    return stat, float(stats.chi2.isf(ALPHA, len(probs) - 1))


def dlap_cdf(m: int, t: Fraction) -> mpmath.mpf:
    q = mpmath.exp(-1 / mpmath.mpf(t.numerator) * t.denominator)
    if m < 0:
        return q ** (-m) / (1 + q)
    return 1 - q ** (m + 1) / (1 + q)


def bins_from_cdf(cdf, lo: int, hi: int, nbins: int):
    """Edges spread over [lo, hi] and the bin probabilities from an mpmath cdf."""
    edges = sorted(set(int(round(v)) for v in np.linspace(lo, hi, nbins)))
    c = [cdf(e) for e in edges]
    probs = [c[0]] + [c[i] - c[i - 1] for i in range(1, len(c))] + [1 - c[-1]]
    return edges, np.array([float(p) for p in probs])


@pytest.mark.parametrize(
    "t, lo, hi, nbins",
    [
        (Fraction(1, 3), -2, 2, 5),  # below one grid step
        (Fraction(7, 3), -15, 15, 31),  # general rational path (d != 1)
        (Fraction(1000), -8000, 8000, 60),
        (Fraction(2**20), -8 * 2**20, 8 * 2**20, 60),  # power-of-two fast path
        (Fraction(3_000_000), -24_000_000, 24_000_000, 60),  # above 10^6 grid steps
    ],
)
def test_discrete_laplace_chi_square(t, lo, hi, nbins):
    x = dsc.sample_discrete_laplace(t, N, pc.Random(20260101))
    assert x.dtype == np.int64 and x.shape == (N,)
    edges, probs = bins_from_cdf(lambda m: dlap_cdf(m, t), lo, hi, nbins)
    stat, crit = chi_square_ok(x, edges, probs)
    assert stat < crit, (stat, crit)


def dgauss_cdf_mp(s2: Fraction):
    s2m = mpmath.mpf(s2.numerator) / s2.denominator
    width = int(mpmath.ceil(40 * mpmath.sqrt(s2m))) + 5
    w = {y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2m)) for y in range(-width, width + 1)}
    z = mpmath.fsum(w.values())

    def cdf(m):
        return mpmath.fsum(v for y, v in w.items() if y <= m) / z

    return cdf


@pytest.mark.parametrize(
    "s2, lo, hi, nbins",
    [
        (Fraction(1, 4), -1, 1, 3),  # sigma = 1/2: below one grid step
        (Fraction(2), -4, 4, 9),
        (Fraction(1000, 7), -30, 30, 61),  # rational sigma^2, t = 2^4 proposal
    ],
)
def test_discrete_gaussian_chi_square_small(s2, lo, hi, nbins):
    x = dsc.sample_discrete_gaussian(s2, N, pc.Random(7))
    edges, probs = bins_from_cdf(dgauss_cdf_mp(s2), lo, hi, nbins)
    stat, crit = chi_square_ok(x, edges, probs)
    assert stat < crit, (stat, crit)


@pytest.mark.parametrize("sigma", [2**16 + 12345, 2_000_000])
def test_discrete_gaussian_chi_square_large(sigma):
    s2 = sigma * sigma
    x = dsc.sample_discrete_gaussian(s2, N, pc.Random(11))
    edges = [int(v) for v in np.linspace(-4 * sigma, 4 * sigma, 61)]
    # Independent reference: float64 sums of exp(-y^2 / (2 s2)) over each bin, in slices of <= 2^20 terms.
    bounds = [-13 * sigma] + edges + [13 * sigma]
    sums = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        total = 0.0
        for start in range(a + 1, b + 1, 2**20):
            y = np.arange(start, min(b, start + 2**20 - 1) + 1, dtype=np.float64)
            total += float(np.exp(-(y * y) / (2.0 * s2)).sum())
        sums.append(total)
    probs = np.array(sums) / sum(sums)
    stat, crit = chi_square_ok(x, edges, probs)
    assert stat < crit, (stat, crit)


def test_thread_count_does_not_change_the_noise():
    a = dsc.sample_discrete_gaussian(Fraction(10**6, 3), 50_000, pc.Random(5, threads=1))
    b = dsc.sample_discrete_gaussian(Fraction(10**6, 3), 50_000, pc.Random(5, threads=2))
    c = dsc.sample_discrete_laplace(Fraction(77, 2), 50_000, pc.Random(5, threads=1))
    d = dsc.sample_discrete_laplace(Fraction(77, 2), 50_000, pc.Random(5, threads=2))
    assert np.array_equal(a, b) and np.array_equal(c, d)
    assert not np.array_equal(a[:4096], a[4096:8192])  # chunks use different streams


def test_seeded_streams_are_reproducible_and_advance():
    r1, r2 = pc.Random(99), pc.Random(99)
    x1, x2 = dsc.sample_discrete_laplace(5, 1000, r1), dsc.sample_discrete_laplace(5, 1000, r2)
    assert np.array_equal(x1, x2)
    assert not np.array_equal(x1, dsc.sample_discrete_laplace(5, 1000, r1))  # fresh chunks next call


def test_secure_default_and_numpy_generator():
    assert isinstance(dsc.sample_discrete_gaussian(3), int)
    x = dsc.sample_discrete_laplace(2, (3, 4), np.random.default_rng(1))
    assert x.shape == (3, 4)


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: dsc.sample_discrete_laplace(0, 3), ValueError),
        (lambda: dsc.sample_discrete_laplace(-1.5, 3), ValueError),
        (lambda: dsc.sample_discrete_laplace(float("nan"), 3), ValueError),
        (lambda: dsc.sample_discrete_laplace(float("inf"), 3), ValueError),
        (lambda: dsc.sample_discrete_laplace(2**41, 3), ValueError),
        (lambda: dsc.sample_discrete_laplace("2", 3), TypeError),
        (lambda: dsc.sample_discrete_laplace(True, 3), TypeError),
        (lambda: dsc.sample_discrete_gaussian(Fraction(1, 2**63), 3), ValueError),
        (lambda: dsc.sample_discrete_gaussian(2**63, 3), ValueError),
        (lambda: dsc.sample_discrete_gaussian(1, -1), ValueError),
        (lambda: dsc.sample_discrete_gaussian(1, 2.5), TypeError),
        (lambda: dsc.sample_discrete_gaussian(1, 3, rng=42), TypeError),
    ],
)
def test_bad_sampler_arguments(call, exc):
    with pytest.raises(exc):
        call()


def test_extreme_parameters_still_sample():
    # sigma^2 = 2^62 / 2^62 exercises the 128-bit bounds; t just below 2^40 the Laplace limit.
    x = dsc.sample_discrete_gaussian(Fraction(2**62, 2**62 - 1), 20_000, pc.Random(3))
    assert abs(x.var() - 1.0) < 0.1
    y = dsc.sample_discrete_laplace(2**40 - 1, 1000, pc.Random(3))
    assert np.abs(y).max() < 2**62
