"""pydp_core.Random: distributions (KS / tail tests at alpha = 1e-6), determinism, threads, bad input."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats
from support.stats import assert_binomial, assert_ks

import pydp_core
from pydp_core import Random, _core
from pydp_core.random import CHUNK, as_random

N = 200_000


def subbotin_cdf(r):
    """Independent reference for Subbotin_r: P(|X| <= t) = P(1/r, t^r / r) (regularised lower gamma).

    Where t^r / r underflows (large r, |t| < 1) the series P(a, z) = z^a / Gamma(a + 1) (1 + O(z)) is
    used in log space, so the reference stays exact for r in the hundreds.
    """
    a = 1.0 / r

    def cdf(x):
        x = np.asarray(x, dtype=float)
        t = np.abs(x)
        with np.errstate(divide="ignore"):
            logz = r * np.log(t) - math.log(r)
        small = logz < -600
        p = np.where(small, np.exp(a * logz - special.gammaln(a + 1.0)),
                     special.gammainc(a, np.exp(np.minimum(logz, 700.0))))
        return 0.5 + np.sign(x) * 0.5 * p

    return cdf


# ------------------------------------------------------------------------------------------------------
# Distributions
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loc,scale", [(0.0, 1.0), (3.0, 0.25), (-1e6, 1e3)])
def test_normal_ks(loc, scale):
    x = Random(11).normal(loc, scale, size=N)
    assert_ks(x, stats.norm(loc, scale).cdf)


def test_normal_tail_and_wedges():
    # The ziggurat's tail (|z| > R = 3.654) and its wedges: the counts beyond several cut-offs are
    # binomial; 2e6 draws see ~500 tail values.
    n = 2_000_000
    z = Random(12).normal(size=n)
    for t in (1.0, 2.5, 3.654152885361009, 4.5, 5.0):
        assert_binomial(np.count_nonzero(np.abs(z) > t), n, 2 * stats.norm.sf(t))
    assert_ks(np.abs(z[np.abs(z) > 3.654152885361009]), lambda v: 1 - stats.norm.sf(v) / stats.norm.sf(3.654152885361009))
    assert_binomial(np.count_nonzero(z < 0), n, 0.5)


@pytest.mark.parametrize("loc,scale", [(0.0, 1.0), (2.0, 7.5)])
def test_laplace_ks(loc, scale):
    x = Random(13).laplace(loc, scale, size=N)
    assert_ks(x, stats.laplace(loc, scale).cdf)


def test_exponential_ks_and_tail():
    n = 2_000_000
    x = Random(14).exponential(2.0, size=n)
    assert_ks(x[:N], stats.expon(scale=2.0).cdf)
    r = 7.697117470131050 * 2.0  # the ziggurat tail starts at R (scale 2)
    assert_binomial(np.count_nonzero(x > r), n, math.exp(-r / 2.0))
    tail = x[x > r] - r
    assert_ks(tail, stats.expon(scale=2.0).cdf)


@pytest.mark.parametrize("loc,scale", [(0.0, 1.0), (-4.0, 0.5)])
def test_logistic_ks(loc, scale):
    x = Random(15).logistic(loc, scale, size=N)
    assert_ks(x, stats.logistic(loc, scale).cdf)


def test_logistic_tails():
    n = 2_000_000
    x = Random(16).logistic(size=n)
    for t in (5.0, 10.0):
        assert_binomial(np.count_nonzero(np.abs(x) > t), n, 2 * stats.logistic.sf(t))


@pytest.mark.parametrize("low,high", [(0.0, 1.0), (-3.0, 5.0)])
def test_uniform_ks(low, high):
    x = Random(17).uniform(low, high, size=N)
    assert x.min() >= low and x.max() < high
    assert_ks(x, stats.uniform(low, high - low).cdf)


@pytest.mark.parametrize("shape", [0.01, 0.07, 0.3, 0.999, 1.0, 2.5, 30.0, 1e4])
def test_gamma_ks(shape):
    x = Random(18).gamma(shape, 1.5, size=N)
    assert (x >= 0).all()
    assert_ks(x, stats.gamma(shape, scale=1.5).cdf)


# r = 1.5, 3 and 6 take the exp/log-free finishing pass (tiles.hpp), the others the general one.
@pytest.mark.parametrize("r", [1.0, 1.0001, 1.01, 1.5, 2.0, 2.5, 3.0, 3.5, 6.0, 7.5, 14.0, 50.0, 1000.0])
def test_subbotin_ks(r):
    x = Random(19).subbotin(r, size=N)
    assert_ks(x, subbotin_cdf(r))


def test_subbotin_loc_scale_and_family_cdf():
    r = 4.5
    x = Random(20).subbotin(r, loc=1.0, scale=0.3, size=N)
    fam = pydp_core.Subbotin(r)
    assert_ks(x, lambda v: np.asarray(fam.cdf((np.asarray(v) - 1.0) / 0.3)))


@pytest.mark.parametrize("r", [1.05, 1.5, 3.0, 6.0])
def test_subbotin_tail(r):
    n = 1_000_000
    x = Random(21).subbotin(r, size=n)
    fam = pydp_core.Subbotin(r)
    for t in (2.0, 4.0):
        assert_binomial(np.count_nonzero(np.abs(x) > t), n, 2 * float(fam.sf(t)))


@pytest.mark.parametrize("A,sigma", [(0.5, 1.0), (5.0, 2.0), (100.0, 0.1)])
def test_arsinh_normal_ks(A, sigma):
    x = Random(22).arsinh_normal(A, sigma, size=N)
    # P(A asinh(Z/A) <= x) = Phi(A sinh(x/A) / sigma)
    assert_ks(x, lambda v: stats.norm.cdf(A * np.sinh(np.asarray(v) / A) / sigma))


@pytest.mark.parametrize("d", [1, 2, 3, 10, 300])
def test_sphere_uniform(d):
    n = 40_000 if d < 300 else 2_000
    v = Random(23).sphere(d, size=n)
    assert v.shape == (n, d)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-14)
    if d == 1:
        assert_binomial(np.count_nonzero(v[:, 0] > 0), n, 0.5)
        return
    # x_1^2 ~ Beta(1/2, (d - 1)/2) for a uniform direction; the sign of x_1 is a fair coin; and
    # different coordinates are exchangeable (test the last one too).
    assert_ks(v[:, 0] ** 2, stats.beta(0.5, (d - 1) / 2).cdf)
    assert_ks(v[:, -1] ** 2, stats.beta(0.5, (d - 1) / 2).cdf)
    assert_binomial(np.count_nonzero(v[:, 0] > 0), n, 0.5)
    if d == 3:  # Archimedes: each coordinate is uniform on [-1, 1]
        assert_ks(v[:, 1], stats.uniform(-1, 2).cdf)


def test_sphere_float32_unit_norm():
    v = Random(24).sphere(5, size=(10, 3), dtype=np.float32)
    assert v.shape == (10, 3, 5) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v.astype(float), axis=-1), 1.0, atol=1e-6)


def test_float32_output():
    x = Random(25).normal(size=N, dtype=np.float32)
    assert x.dtype == np.float32
    assert_ks(x, stats.norm.cdf)
    x64 = Random(25).normal(size=N)
    assert np.array_equal(x, x64.astype(np.float32))


@pytest.mark.parametrize("method,args", [
    ("normal", ()), ("laplace", ()), ("logistic", ()), ("exponential", ()), ("uniform", ()),
    ("gamma", (0.4,)), ("gamma", (3.0,)), ("subbotin", (1.0,)), ("subbotin", (2.0,)), ("subbotin", (6.5,)),
    ("arsinh_normal", (2.0, 1.0)),
])
def test_means_and_variances_are_right(method, args):
    # A second, moment-based check (z-scores at 1e-6 two-sided, |z| < 4.9).
    x = getattr(Random(26), method)(*args, size=N)
    dist = {
        "normal": stats.norm(), "laplace": stats.laplace(), "logistic": stats.logistic(),
        "exponential": stats.expon(), "uniform": stats.uniform(),
    }.get(method)
    if method == "gamma":
        dist = stats.gamma(args[0])
    if method == "subbotin":
        r = args[0]
        c = r ** (1.0 / r)
        dist = stats.gennorm(r, scale=c)
    if method == "arsinh_normal":
        ref = 2.0 * np.arcsinh(np.random.default_rng(0).standard_normal(4 * N) / 2.0)
        mean, var = 0.0, float(np.var(ref))
    else:
        mean, var = dist.mean(), dist.var()
    z = (x.mean() - mean) / math.sqrt(var / x.size)
    assert abs(z) < 4.9


# ------------------------------------------------------------------------------------------------------
# Determinism, streams, threads and instruction sets
# ------------------------------------------------------------------------------------------------------
SAMPLERS = [
    ("normal", (0.5, 2.0)), ("laplace", (0.0, 1.0)), ("logistic", ()), ("exponential", ()),
    ("uniform", (-1.0, 1.0)), ("gamma", (0.3,)), ("gamma", (4.0, 2.0)), ("subbotin", (3.0,)),
    ("subbotin", (1.5,)), ("subbotin", (6.0,)), ("subbotin", (3.5,)), ("subbotin", (1.0,)), ("subbotin", (2.0,)), ("arsinh_normal", (1.0, 3.0)),
]


@pytest.mark.parametrize("method,args", SAMPLERS)
def test_threads_give_identical_bits(method, args):
    n = 3 * CHUNK + 1234
    ref = getattr(Random(7, threads=1), method)(*args, size=n)
    for threads in (2, 3, 8):
        assert np.array_equal(getattr(Random(7, threads=threads), method)(*args, size=n), ref)


def test_sphere_threads_identical():
    ref = Random(8, threads=1).sphere(7, size=CHUNK // 2)
    assert np.array_equal(Random(8, threads=4).sphere(7, size=CHUNK // 2), ref)


@pytest.mark.parametrize("method,args", SAMPLERS + [("sphere", (4,))])
def test_instruction_sets_give_identical_bits(method, args):
    key = bytes(range(32))
    outs = []
    for impl in _core.random.chacha_impls():
        rng = Random._wrap(_core.random.Generator(key, 0, impl), 2, True)
        outs.append(getattr(rng, method)(*args, size=20_000))
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])


def test_seeded_reproducible_and_distinct():
    a, b = Random(42), Random(42)
    assert np.array_equal(a.normal(size=1000), b.normal(size=1000))
    assert np.array_equal(a.laplace(size=10), b.laplace(size=10))
    assert not np.array_equal(Random(42).normal(size=100), Random(43).normal(size=100))
    # int and bytes seeds live in different spaces
    assert not np.array_equal(Random(1).normal(size=100), Random(b"\x01").normal(size=100))
    assert np.array_equal(Random(b"abc").normal(size=100), Random(bytearray(b"abc")).normal(size=100))
    assert np.array_equal(Random(2**200).normal(size=5), Random(2**200).normal(size=5))


def test_successive_calls_never_repeat():
    rng = Random(3)
    a = rng.normal(size=500)
    b = rng.normal(size=500)
    c = rng.normal()
    assert not np.array_equal(a, b) and c not in a and c not in b
    assert len(np.intersect1d(a, b)) == 0


def test_streams_are_reproducible_and_independent():
    root = Random(9)
    s1 = root.stream(1).normal(size=10_000)
    root.normal(size=12345)  # the parent's position does not matter
    assert np.array_equal(root.stream(1).normal(size=10_000), s1)
    assert np.array_equal(Random(9).stream(1).normal(size=10_000), s1)
    s2 = root.stream(2).normal(size=10_000)
    assert not np.array_equal(s1, s2)
    assert abs(np.corrcoef(s1, s2)[0, 1]) < 4.9 / math.sqrt(10_000)
    nested = root.stream(1).stream(2).normal(size=100)
    assert not np.array_equal(nested, s2[:100])


def test_loc_scale_are_affine_maps_of_the_standard_stream():
    z = Random(5).normal(size=1000)
    assert np.array_equal(Random(5).normal(2.0, 3.0, size=1000), 2.0 + 3.0 * z)
    loc = np.linspace(-1, 1, 1000)
    scale = np.linspace(0.5, 2, 1000)
    assert np.array_equal(Random(5).normal(loc, scale), loc + scale * z)
    lap = Random(6).laplace(size=(10, 100))
    assert np.array_equal(Random(6).laplace(loc[:100], 2.0, size=(10, 100)), loc[:100] + 2.0 * lap)


def test_scalars_shapes_and_out():
    rng = Random(4)
    assert isinstance(rng.normal(), float)
    assert isinstance(rng.subbotin(3.0), float)
    assert rng.normal(size=(2, 3)).shape == (2, 3)
    assert rng.normal(size=0).shape == (0,)
    assert rng.normal(size=()).shape == ()
    out = np.empty((4, 5))
    res = rng.laplace(out=out)
    assert res is out and np.isfinite(out).all()
    out32 = np.empty(7, dtype=np.float32)
    assert rng.normal(out=out32, dtype=np.float32) is out32
    assert rng.normal(scale=0.0, size=3).tolist() == [0.0, 0.0, 0.0]


def test_numpy_generator_is_accepted():
    g1 = as_random(np.random.default_rng(5))
    g2 = as_random(np.random.default_rng(5))
    assert np.array_equal(g1.normal(size=10), g2.normal(size=10))
    assert g1.seeded
    r = Random(1)
    assert as_random(r) is r
    assert not as_random(None).seeded


def test_random_raw_and_threads_property():
    r = Random(1, threads=3)
    assert r.threads == 3 and Random(1).threads is None
    w = r.random_raw(5)
    assert w.dtype == np.uint64 and w.shape == (5,)
    assert r.with_threads(1).threads == 1


# ------------------------------------------------------------------------------------------------------
# Bad input: clear errors naming the argument
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,exc,name", [
    (lambda r: r.normal(scale=-1.0), ValueError, "scale"),
    (lambda r: r.normal(scale=float("nan")), ValueError, "scale"),
    (lambda r: r.normal(scale=np.array([1.0, -2.0])), ValueError, "scale"),
    (lambda r: r.laplace(loc=float("inf")), ValueError, "loc"),
    (lambda r: r.laplace(scale=float("inf")), ValueError, "scale"),
    (lambda r: r.logistic(loc=float("nan")), ValueError, "loc"),
    (lambda r: r.subbotin(0.5), ValueError, "r"),
    (lambda r: r.subbotin(float("nan")), ValueError, "r"),
    (lambda r: r.subbotin(float("inf")), ValueError, "r"),
    (lambda r: r.subbotin([2.0, 3.0]), TypeError, "r"),
    (lambda r: r.gamma(0.0), ValueError, "shape"),
    (lambda r: r.gamma(-1.0), ValueError, "shape"),
    (lambda r: r.arsinh_normal(0.0, 1.0), ValueError, "A"),
    (lambda r: r.arsinh_normal(1.0, -1.0), ValueError, "sigma"),
    (lambda r: r.uniform(-1e308, 1e308), ValueError, "high - low"),
    (lambda r: r.normal(size=-1), ValueError, "size"),
    (lambda r: r.normal(size=(3, -2)), ValueError, "size"),
    (lambda r: r.normal(size=2.5), TypeError, "size"),
    (lambda r: r.normal(size=True), TypeError, "size"),
    (lambda r: r.normal(size=3, dtype=np.int64), TypeError, "dtype"),
    (lambda r: r.normal(size=3, dtype=np.float16), TypeError, "dtype"),
    (lambda r: r.normal(size=3, dtype="nonsense"), TypeError, "dtype"),
    (lambda r: r.normal(out=np.empty(3, dtype=np.float32)), TypeError, "out"),
    (lambda r: r.normal(size=4, out=np.empty(3)), ValueError, "out"),
    (lambda r: r.normal(out=np.empty((4, 4))[:, 0]), ValueError, "out"),
    (lambda r: r.normal(out=[1.0, 2.0]), TypeError, "out"),
    (lambda r: r.normal(loc=np.zeros(3), size=4), ValueError, "size"),
    (lambda r: r.normal(loc=np.zeros(3), scale=np.ones(4)), ValueError, "loc"),
    (lambda r: r.normal(scale="1"), TypeError, "scale"),
    (lambda r: r.sphere(0), ValueError, "d"),
    (lambda r: r.sphere(2.0), TypeError, "d"),
    (lambda r: r.stream(-1), ValueError, "i"),
    (lambda r: r.stream(1.0), TypeError, "i"),
])
def test_bad_arguments_are_named(call, exc, name):
    with pytest.raises(exc, match=name):
        call(Random(0))


@pytest.mark.parametrize("seed,exc", [(1.5, TypeError), ("abc", TypeError), (-1, ValueError), (True, TypeError),
                                      ([1, 2], TypeError), (np.random.default_rng(0), TypeError)])
def test_bad_seed(seed, exc):
    with pytest.raises(exc, match="seed"):
        Random(seed)


@pytest.mark.parametrize("threads,exc", [(0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError)])
def test_bad_threads(threads, exc):
    with pytest.raises(exc, match="threads"):
        Random(1, threads=threads)


def test_bad_rng_argument():
    with pytest.raises(TypeError, match="rng"):
        as_random(5)
    with pytest.raises(TypeError, match="rng"):
        as_random(np.random.RandomState(0))


def test_reference_cdf_is_consistent():
    # The test's reference CDF against scipy's generalised normal (X = r^(1/r) Y, Y ~ gennorm(r)) where
    # that one is reliable, and against the package's own Subbotin family.
    for r in (1.0, 1.3, 2.0, 3.0, 9.0):
        xs = np.linspace(-4, 4, 17)
        ref = subbotin_cdf(r)(xs)
        assert np.allclose(ref, stats.gennorm.cdf(xs / r ** (1.0 / r), r), rtol=1e-12, atol=1e-15)
        assert np.allclose(ref, pydp_core.Subbotin(r).cdf(xs), rtol=1e-12, atol=1e-15)
    # r = 1000: nearly uniform on [-r^(1/r), r^(1/r)]; at t = 0.4, P(|X| <= t) = t r^(-1/r) / Gamma(1 + 1/r)
    t = 0.4
    assert math.isclose(subbotin_cdf(1000.0)(t) - 0.5, 0.5 * t * 1000.0 ** -0.001 / math.gamma(1.001), rel_tol=1e-12)


# ------------------------------------------------------------------------------------------------------
# The Subbotin path's own exp and log (identical bits on every instruction set) against mpmath
# ------------------------------------------------------------------------------------------------------
def _ulps(got, ref):
    ref_f = np.array([float(v) for v in ref])
    return np.abs(got - ref_f) / np.spacing(np.abs(ref_f))


def test_det_log_against_mpmath():
    rng = np.random.default_rng(3)
    x = np.concatenate([10 ** rng.uniform(-300, 300, 3000), rng.uniform(0.5, 2.0, 3000),
                        1 + rng.uniform(-1e-6, 1e-6, 200), [1.0, 2.0, 0.5, math.sqrt(0.5), math.sqrt(2.0)]])
    got = _core.random.det_log(x)
    ref = [mp.log(mp.mpf(float(v))) for v in x]
    nonzero = np.array([r != 0 for r in ref])
    assert np.max(_ulps(got[nonzero], [r for r, k in zip(ref, nonzero) if k])) <= 2.0
    assert got[x == 1.0].tolist() == [0.0]


def test_det_exp_against_mpmath():
    rng = np.random.default_rng(4)
    y = np.concatenate([rng.uniform(-700, 700, 3000), rng.uniform(-1, 1, 3000), [0.0, 1.0, -1.0, 700.0, -700.0]])
    got = _core.random.det_exp(y)
    ref = [mp.exp(mp.mpf(float(v))) for v in y]
    assert np.max(_ulps(got, ref)) <= 2.0


def test_sequential_direction_and_scalar_samplers():
    # The C++ sequential forms other bindings may use (Generator.normal / direction) are right too.
    g = _core.random.Generator(bytes(range(32)), 5)
    v = np.array([g.direction(3) for _ in range(20_000)])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-14)
    assert_ks(v[:, 2], stats.uniform(-1, 2).cdf)
    assert_ks([g.normal() for _ in range(50_000)], stats.norm.cdf)
    assert_ks([g.exponential() for _ in range(50_000)], stats.expon.cdf)
    u = np.array([g.uniform_open() for _ in range(50_000)])
    assert (u > 0).all() and (u < 1).all()
    assert_ks(u, stats.uniform.cdf)


def test_arsinh_normal_with_the_accounting_parameters():
    A, sigma = pydp_core.arsinh_parameters(pydp_core.TCDP(0.5, 10.0), sensitivity=2.0)
    x = Random(27).arsinh_normal(A, sigma, size=N)
    assert_ks(x, lambda v: stats.norm.cdf(A * np.sinh(np.asarray(v) / A) / sigma))


def test_one_generator_shared_by_python_threads_never_repeats():
    # Bulk calls reserve their chunks with the GIL held and sample with it released: concurrent calls on
    # one generator get disjoint chunks, so no value repeats across all of them.
    import threading

    rng = Random(77, threads=2)
    outs = []
    lock = threading.Lock()

    def work():
        for _ in range(6):
            x = rng.normal(size=30_000)
            with lock:
                outs.append(x)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    allv = np.concatenate(outs)
    assert allv.size == 4 * 6 * 30_000
    assert np.unique(allv).size == allv.size
