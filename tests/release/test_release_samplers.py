"""Exactness of the integer samplers: chi-square of 10^6 draws against the exact pmf (alpha = 1e-6).

Scales cover below one grid step (t = 1/3, sigma = 1/2), powers of two, above 10^6 steps, and t above 2^31
(t = 3e6, sigma = 2e6). Bin probabilities come from 50-digit mpmath (discrete Laplace, small discrete
Gaussian) or from an independent float64 summation of the Gaussian weights (sigma = 2e6).
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from support.stats import chi_square

import pydp_core as pc
from pydp_core import release as dsc

N = 10**6


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
        (Fraction(2**20), -8 * 2**20, 8 * 2**20, 60),  # s a power of two
        (Fraction(3_000_000), -24_000_000, 24_000_000, 60),  # above 10^6 grid steps
    ],
)
def test_discrete_laplace_chi_square(t, lo, hi, nbins):
    x = dsc.sample_discrete_laplace(t, N, pc.Random(20260101))
    assert x.dtype == np.int64 and x.shape == (N,)
    edges, probs = bins_from_cdf(lambda m: dlap_cdf(m, t), lo, hi, nbins)
    stat, crit = chi_square(x, edges, probs)
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
    stat, crit = chi_square(x, edges, probs)
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
    stat, crit = chi_square(x, edges, probs)
    assert stat < crit, (stat, crit)


def test_thread_count_does_not_change_the_noise():
    a = dsc.sample_discrete_gaussian(Fraction(10**6, 3), 50_000, pc.Random(5, threads=1))
    b = dsc.sample_discrete_gaussian(Fraction(10**6, 3), 50_000, pc.Random(5, threads=2))
    c = dsc.sample_discrete_laplace(Fraction(77, 2), 50_000, pc.Random(5, threads=1))
    d = dsc.sample_discrete_laplace(Fraction(77, 2), 50_000, pc.Random(5, threads=2))
    assert np.array_equal(a, b) and np.array_equal(c, d)
    assert not np.array_equal(a[:4096], a[4096:8192])  # chunks use different streams


@pytest.mark.parametrize("t", [Fraction(1, 3), Fraction(77, 2), Fraction(10**9, 7)])
def test_a_partial_tile_gives_the_values_of_a_full_one(t):
    """A call of n values gives the first n values of a longer call from the same stream: partial tiles
    (n not a multiple of 256) generate only the keystream blocks they read, and read the same words."""
    full = dsc.sample_discrete_laplace(t, 600, pc.Random(7, threads=1).stream(3))
    for n in (1, 2, 7, 8, 9, 63, 64, 65, 255, 256, 257, 511):
        part = dsc.sample_discrete_laplace(t, n, pc.Random(7, threads=1).stream(3))
        assert np.array_equal(part, full[:n]), n
    assert len(set(full.tolist())) > 2


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


# ------------------------------------------------------------------------------------------------------
# The exact inversion (csrc/include/pydp/release/geometric.hpp): a floating-point bracket decides almost
# every magnitude; the rest are decided by exact comparisons with big-integer brackets of exp(-b d / s).
# ------------------------------------------------------------------------------------------------------
_D = pc._core.release


@pytest.mark.parametrize("s, d", [(1, 3), (7, 3), (1000, 1), (102400, 1), (2**20, 1), (2**31 + 5, 1), (3**19, 7)])
def test_fast_path_and_exact_comparisons_give_the_same_noise(s, d):
    # Same key, same words: the floating-point fast path must agree with exact comparisons everywhere. At
    # t = 2^31 + 5 the fast path defers to the exact comparisons about once in a thousand draws.
    n = 200_000
    fast = _D.discrete_laplace(pc.Random(9).kernel, s, d, n)
    exact = _D._discrete_laplace_exact(pc.Random(9).kernel, s, d, n)
    assert np.array_equal(fast, exact)


@pytest.mark.parametrize("num, den", [(1, 4), (2, 1), (1000, 7), ((2**16 + 12345) ** 2, 1), (2**62, 2**62 - 1), (4 * 10**12, 3)])
def test_gaussian_fast_trials_and_exact_comparisons_give_the_same_noise(num, den):
    # The vectorised acceptance bracket (and the proposals' fast path) against exact comparisons everywhere.
    n = 40_000
    fast = _D.discrete_gaussian(pc.Random(3).kernel, num, den, n)
    exact = _D._discrete_gaussian_exact(pc.Random(3).kernel, num, den, n)
    assert np.array_equal(fast, exact)


@pytest.mark.parametrize(
    "p, q, words",
    [(0, 1, 3), (1, 1, 3), (1, 3, 3), (45, 1, 3), (44 * 2**40 + 12345, 2**40 - 1, 3), (10**20 + 7, 10**9 + 9, 4),
     (2**100 + 12345, 2**61 - 1, 3), (5, 7, 1), (123, 1, 6), (2**62 - 1, 2**62, 2)],
)
def test_exp_neg_bracket_contains_the_true_value(p, q, words):
    lo, hi = (int(v) for v in _D._exp_neg_bracket(p >> 64, p & (2**64 - 1), q, words))
    with mpmath.workdps(400):
        true = mpmath.exp(-mpmath.mpf(p) / q) * mpmath.mpf(2) ** (64 * words)
        assert lo <= true <= hi
        assert hi - lo <= 10**4 and (true < 1 or hi - lo <= 1e-12 * true)


def _reference_geometric(words: list[int], t: Fraction) -> int:
    # floor(t * (-ln W)) for W = 0.w0 w1 w2 ... (the given words; the rest of W cannot move the floor here)
    with mpmath.workdps(400):
        w = mpmath.mpf(0)
        for i, v in enumerate(words):
            w += mpmath.mpf(v) / mpmath.mpf(2) ** (64 * (i + 1))
        x = -mpmath.log(w) * t.numerator / t.denominator
        # the unread bits move W by < 2^-1024 and t (-ln W) by < t 2^-1024 / W: the floor is settled
        assert abs(x - mpmath.nint(x)) > mpmath.mpf(t.numerator) / t.denominator * mpmath.mpf(2) ** -1000 / w
        return int(mpmath.floor(x))


@pytest.mark.parametrize("t", [Fraction(1, 3), Fraction(102400), Fraction(2**31 + 5), Fraction(3**30, 7)])
def test_exact_geometric_on_given_words_matches_mpmath(t):
    rng = np.random.default_rng(17)
    # 16 words = 1024 bits of W (the reader takes 16 at a time); 400 digits resolve them.
    cases = [rng.integers(0, 2**64, 16, dtype=np.uint64) for _ in range(20)]
    cases.append(np.array([0, 0] + [12345] + [7] * 13, dtype=np.uint64))  # W < 2^-128: leading zero words
    cases.append(np.array([2**64 - 1] * 15 + [2**63], dtype=np.uint64))  # W just below 1: X = 0
    cases.append(np.array([1] + [2**63] * 15, dtype=np.uint64))  # U = 1: the fast path defers
    for words in cases:
        x, fast = _D._geometric_exact(words, t.numerator, t.denominator)
        assert x == _reference_geometric([int(v) for v in words], t)
        assert fast in (-1, x)  # the fast path never answers wrongly


@pytest.mark.parametrize("t, nbins", [(Fraction(2**31 + 12345), 60), (Fraction(2**35 + 3), 60)])
def test_discrete_laplace_chi_square_large_t(t, nbins):
    # 2^31 + 12345: the inversion with frequent exact fallbacks; 2^35 + 3: the CKS geometric stage (t >= 2^32).
    x = dsc.sample_discrete_laplace(t, N, pc.Random(20261121))
    tt = int(t)
    edges, probs = bins_from_cdf(lambda m: dlap_cdf(m, t), -8 * tt, 8 * tt, nbins)
    stat, crit = chi_square(x, edges, probs)
    assert stat < crit, (stat, crit)


@pytest.mark.parametrize("s, d", [(102400, 1), (2**31 + 5, 1), (7, 3)])
def test_instruction_sets_give_identical_noise(s, d):
    # The vectorised passes are compiled for AVX-512, AVX2 and plain x86-64; each only proposes answers that
    # the exact comparisons would give, so the noise is the same on every CPU (Laplace t = s/d, Gaussian
    # sigma^2 = s/d).
    key = bytes(range(32))
    impls = pc._core.random.chacha_impls()
    outs = [_D.discrete_laplace(pc._core.random.Generator(key, 0, impl), s, d, 50_000, 2) for impl in impls]
    outs += [_D.discrete_gaussian(pc._core.random.Generator(key, 0, impl), s, d, 50_000, 2) for impl in impls]
    k = len(impls)
    for o in outs[1:k]:
        assert np.array_equal(o, outs[0])
    for o in outs[k + 1:]:
        assert np.array_equal(o, outs[k])


def _reference_exp_trial(words: list[int], u: int, s: int) -> bool:
    # CKS Algorithm 1 from one uniform: K = min{n >= 1 : W > (u/s)^n / n!}, answer "K odd"; W = 0.w0 then the
    # bits of w1, w2, ... least significant first (the bit reader's order), 15 * 64 bits after the first word.
    w = Fraction(words[0], 2**64)
    for i, v in enumerate(words[1:]):
        for b in range(64):
            w += Fraction((v >> b) & 1, 2 ** (64 + 64 * i + b + 1))
    gamma, t, n = Fraction(u, s), Fraction(1), 0
    while True:
        n += 1
        t = t * gamma / n
        if w > t:
            return n % 2 == 1


@pytest.mark.parametrize("u, s", [(1, 3), (2, 3), (50_000, 102_400), (2**62 - 1, 2**62), (123_456_789, 987_654_321), (5, 2**40)])
def test_cks_acceptance_trial_on_given_words_matches_exact_arithmetic(u, s):
    # The first word U = floor(2^64 u/s) sits inside the 64-bit bracket of T_1, so the big-integer
    # comparison decides; random first words exercise the fast path. Both against exact fractions.
    rng = np.random.default_rng(23)
    for k in range(12):
        words = [int(v) for v in rng.integers(0, 2**64, 16, dtype=np.uint64)]
        if k % 2 == 0:
            words[0] = (u << 64) // s
        got = _D._exp_ratio_words(np.array(words, dtype=np.uint64), u, s)
        assert got == _reference_exp_trial(words, u, s)
