"""The exact privacy profiles of the discrete mechanisms against 50-digit mpmath enumeration.

The reference enumerates delta(eps) = sum_y max(0, P(y) - e^eps P(y - k)) term by term (no closed form,
no log-space trick), so it checks both the derivation and the numerics, at the hard places: tiny delta
(eps near the largest privacy loss, deep tails), eps = 0, large shifts and scales below one step.
"""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from pydp_core import release as dsc


def ref_dlap_log_delta(eps: float, t: Fraction, k: int) -> mpmath.mpf:
    tm = mpmath.mpf(t.numerator) / t.denominator
    q = mpmath.exp(-1 / tm)
    z = (1 - q) / (1 + q)
    e = mpmath.exp(mpmath.mpf(eps))

    def p(y):
        return z * q ** abs(y)

    # y <= 0: the loss is k/t for all of them, a geometric series; y >= k: loss -k/t < 0, no contribution.
    total = max(mpmath.mpf(0), (1 - e * q**k)) * z / (1 - q)
    for y in range(1, k):  # the loss (k - 2y)/t decreases in y: stop at the first non-positive term
        d = p(y) - e * p(y - k)
        if d <= 0:
            break
        total += d
    return mpmath.log(total) if total > 0 else mpmath.mpf("-inf")


def ref_dgauss_log_delta(eps: float, s2: Fraction, k: int) -> mpmath.mpf:
    s2m = mpmath.mpf(s2.numerator) / s2.denominator
    e = mpmath.exp(mpmath.mpf(eps))
    # Normaliser by Poisson summation (a theta-function identity, independent of the code under test).
    z = mpmath.sqrt(2 * mpmath.pi * s2m) * (1 + 2 * mpmath.nsum(lambda j: mpmath.exp(-2 * mpmath.pi**2 * s2m * j**2), [1, mpmath.inf]))

    def w(y):
        return mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2m))

    # Positive terms of sum_y max(0, P(y) - e^eps P(y - k)) form the half-line y < k/2 - eps s2/k: find its
    # top by scanning (no formula), then sum downwards until the terms are negligible.
    y = k  # P(k) - e^eps P(0) <= 0 for every eps >= 0
    while w(y) - e * w(y - k) <= 0:
        y -= 1
    total = mpmath.mpf(0)
    while True:
        d = w(y) - e * w(y - k)
        total += d
        if y < 0 and d < total * mpmath.mpf(10) ** -35:
            break
        y -= 1
    return mpmath.log(total / z)


LAPLACE_CASES = [
    (0.0, Fraction(1, 3), 1),
    (0.5, Fraction(1, 3), 1),
    (2.9, Fraction(1, 3), 1),  # just below the largest loss 3: delta ~ 1e-2 of the (1 - e^-0.1) factor
    (2.9999999, Fraction(1, 3), 1),  # tiny delta by cancellation in the naive form
    (0.3, Fraction(5, 2), 1),
    (0.3, Fraction(5, 2), 4),
    (1.0, Fraction(100), 150),
    (1.4999, Fraction(100), 150),
    (0.99, Fraction(65537), 65537),
    (0.999999, Fraction(1001), 1001),
]


@pytest.mark.parametrize("eps, t, k", LAPLACE_CASES)
def test_discrete_laplace_profile_matches_mpmath(eps, t, k):
    got = dsc.discrete_laplace_log_delta(epsilon=eps, t=t, shift=k)
    ref = ref_dlap_log_delta(eps, t, k)
    assert got == pytest.approx(float(ref), rel=1e-12, abs=1e-12), (got, ref)


def test_discrete_laplace_pure_dp_threshold_is_exact():
    # eps >= k/t exactly gives delta = 0, decided in rational arithmetic
    assert dsc.discrete_laplace_delta(epsilon=0.5, t=4, shift=2) == 0.0
    assert dsc.discrete_laplace_delta(epsilon=np.nextafter(0.5, 0), t=4, shift=2) > 0.0


GAUSS_CASES = [
    (0.0, Fraction(1, 4), 1),  # sigma below one step: total variation
    (0.5, Fraction(1, 4), 1),
    (3.0, Fraction(1, 4), 1),
    (1.0, Fraction(2), 1),
    (10.0, Fraction(2), 1),  # deep tail, delta ~ 1e-28
    (40.0, Fraction(2), 3),  # delta ~ 1e-150
    (0.1, Fraction(100), 5),
    (2.0, Fraction(1000, 7), 4),
    (0.01, Fraction(10**4), 1),  # small loss per step: many terms near the boundary
    (5.0, Fraction(10**4), 50),
]


@pytest.mark.parametrize("eps, s2, k", GAUSS_CASES)
def test_discrete_gaussian_profile_matches_mpmath(eps, s2, k):
    got = dsc.discrete_gaussian_log_delta(epsilon=eps, sigma2=s2, shift=k)
    ref = ref_dgauss_log_delta(eps, s2, k)
    assert got == pytest.approx(float(ref), rel=1e-11, abs=1e-11), (got, ref)


@pytest.mark.slow
def test_discrete_gaussian_profile_large_sigma_matches_mpmath():
    # sigma = 2^11: about 1.5e5 reference terms; exercises the re-anchored recurrences over many blocks.
    with mpmath.workdps(30):
        for eps, k in [(0.5, 700), (3.0, 400)]:
            got = dsc.discrete_gaussian_log_delta(epsilon=eps, sigma2=2**22, shift=k)
            ref = ref_dgauss_log_delta(eps, Fraction(2**22), k)
            assert got == pytest.approx(float(ref), rel=1e-11), (eps, k, got, ref)


@pytest.mark.parametrize("s2", [Fraction(1, 4), Fraction(3), Fraction(10**4, 3)])
def test_discrete_gaussian_cdf_matches_mpmath(s2):
    s2m = mpmath.mpf(s2.numerator) / s2.denominator
    width = int(mpmath.ceil(40 * mpmath.sqrt(s2m))) + 5
    w = {y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2m)) for y in range(-width, width + 1)}
    z = mpmath.fsum(w.values())

    def lower_sum(m):  # sum_{y <= m}, continued below the window until the terms are negligible
        total, y = mpmath.mpf(0), m
        while True:
            term = mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2m))
            total += term
            if y < -width and term < total * mpmath.mpf(10) ** -40:
                return total
            y -= 1

    for m in [-width + 3, -int(3 * mpmath.sqrt(s2m)) - 1, -1, 0, 2]:
        ref = mpmath.log(lower_sum(m) / z)
        assert dsc.discrete_gaussian_log_cdf(m, s2) == pytest.approx(float(ref), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("t", [Fraction(1, 3), Fraction(9, 2), Fraction(1000)])
def test_discrete_laplace_cdf_matches_mpmath(t):
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
    for m in [-50, -1, 0, 3]:
        ref = q ** (-m) / (1 + q) if m < 0 else 1 - q ** (m + 1) / (1 + q)
        assert dsc.discrete_laplace_log_cdf(m, t) == pytest.approx(float(mpmath.log(ref)), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize(
    "profile, param",
    [
        (lambda e, p, k: dsc.discrete_laplace_log_delta(epsilon=e, t=p, shift=k), Fraction(7, 2)),
        (lambda e, p, k: dsc.discrete_gaussian_log_delta(epsilon=e, sigma2=p, shift=k), Fraction(9, 2)),
    ],
    ids=["laplace", "gaussian"],
)
def test_profiles_increase_with_the_shift_and_decrease_with_eps(profile, param):
    # The calibration charges the largest shift k; every smaller shift must be at most as bad.
    for eps in [0.0, 0.3, 1.0]:
        vals = [profile(eps, param, k) for k in range(1, 12)]
        assert all(a <= b + 1e-15 for a, b in zip(vals, vals[1:])), vals
    vals = [profile(e, param, 3) for e in np.linspace(0, 3, 31)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: dsc.discrete_laplace_log_delta(epsilon=-0.1, t=2, shift=1), ValueError),
        (lambda: dsc.discrete_laplace_log_delta(epsilon=float("nan"), t=2, shift=1), ValueError),
        (lambda: dsc.discrete_laplace_log_delta(epsilon=1.0, t=2, shift=0), ValueError),
        (lambda: dsc.discrete_laplace_log_delta(epsilon=1.0, t=2, shift=1.5), TypeError),
        (lambda: dsc.discrete_gaussian_log_delta(epsilon=1.0, sigma2=0, shift=1), ValueError),
        (lambda: dsc.discrete_gaussian_log_delta(epsilon=[1.0, 2.0], sigma2=1, shift=1), TypeError),
    ],
)
def test_bad_profile_arguments(call, exc):
    with pytest.raises(exc):
        call()


@pytest.mark.parametrize("s2", [2.0**20, 2.0**26, 2.0**30, 7.66e10])
def test_discrete_gaussian_euler_maclaurin_matches_the_direct_sum(s2):
    # Large s2 uses the Euler-Maclaurin form near the centre; the term-by-term sum (direct=True) is an
    # independent algorithm. Agreement in log delta to 1e-12 absolute (1e-12 relative in delta).
    from pydp_core import _core

    sig = math.sqrt(s2)
    for eps in [0.0, 1e-3, 0.5, 1.0, 3.0]:
        for k in [1, int(sig / 100) + 1, int(sig / 3) + 1, int(sig)]:
            a = _core.release.dgauss_log_delta(eps, s2, k)
            b = _core.release.dgauss_log_delta(eps, s2, k, True)
            assert a == pytest.approx(b, rel=1e-11, abs=1e-12), (eps, k, a, b)
