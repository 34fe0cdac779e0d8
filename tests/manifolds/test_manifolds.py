"""pydp_core.manifolds: geometry against mpmath, exact samplers (KS at alpha 1e-6), exact mu against
corrected references and independent 30-50 digit references, Algorithm 2 coverage, Frechet means."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from support.stats import ALPHA

import pydp_core as dp
from pydp_core import manifolds as M


# ------------------------------------------------------------------------------------------------------
# geometry
# ------------------------------------------------------------------------------------------------------
def _mp_angle(x, y):
    x = [mp.mpf(float(v)) for v in x]
    y = [mp.mpf(float(v)) for v in y]
    nx = mp.sqrt(sum(v * v for v in x))
    ny = mp.sqrt(sum(v * v for v in y))
    dot = sum(a * b for a, b in zip(x, y))
    cross2 = sum((x[i] * y[j] - x[j] * y[i]) ** 2 for i in range(len(x)) for j in range(i + 1, len(x)))
    return mp.atan2(mp.sqrt(cross2) / (nx * ny), dot / (nx * ny))


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _sphere_pairs(d, rng):
    """Pairs at distances from 1e-12 to pi - 1e-9: nearly equal and nearly antipodal included."""
    xs, ys = [], []
    for gap in [1e-12, 1e-9, 1e-6, 1e-3, 0.5, 1.5, 2.5, math.pi - 1e-3, math.pi - 1e-6, math.pi - 1e-9]:
        for _ in range(3):
            p = _unit(rng.normal(size=d + 1))
            v = rng.normal(size=d + 1)
            v -= (v @ p) * p
            v = _unit(v)
            xs.append(p)
            ys.append(_unit(math.cos(gap) * p + math.sin(gap) * v))
    return np.array(xs), np.array(ys)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_sphere_dist_matches_mpmath(d):
    rng = np.random.default_rng(10 + d)
    x, y = _sphere_pairs(d, rng)
    got = M.Sphere(d).dist(x, y)
    for i in range(len(x)):
        ref = _mp_angle(x[i], y[i])
        assert abs(got[i] - float(ref)) <= 1e-12 * float(ref), (i, got[i], ref)


def test_sphere_arccos_would_fail_but_we_do_not():
    x = np.array([1.0, 0.0, 0.0])
    y = _unit([1.0, 1e-9, 0.0])
    assert np.arccos(np.clip(x @ y, -1, 1)) == 0.0  # the naive formula loses everything here
    assert abs(M.Sphere(2).dist(x, y) - 1e-9) < 1e-21


def _hyp_point(xs):
    xs = np.asarray(xs, float)
    return np.concatenate([[math.sqrt(1 + xs @ xs)], xs])


def _mp_hyp_dist(x, y):
    xs = [mp.mpf(float(v)) for v in x[1:]]
    ys = [mp.mpf(float(v)) for v in y[1:]]
    x0 = mp.sqrt(1 + sum(v * v for v in xs))
    y0 = mp.sqrt(1 + sum(v * v for v in ys))
    return mp.acosh(x0 * y0 - sum(a * b for a, b in zip(xs, ys)))


@pytest.mark.parametrize("d", [1, 2, 4])
def test_hyperbolic_dist_matches_mpmath(d):
    rng = np.random.default_rng(20 + d)
    H = M.Hyperbolic(d)
    xs, ys = [], []
    for radius in [0.0, 0.3, 1.0, 3.0]:
        for gap in [1e-10, 1e-6, 1e-2, 0.7, 3.0, 8.0]:
            for _ in range(2):
                u = _unit(rng.normal(size=d))
                p = _hyp_point(math.sinh(radius) * u)
                v = rng.normal(size=d + 1)
                B = H._tangent_basis(p)
                v = B @ _unit(rng.normal(size=d)) * gap
                xs.append(p)
                ys.append(H.exp(p, v))
    xs, ys = np.array(xs), np.array(ys)
    got = H.dist(xs, ys)
    for i in range(len(xs)):
        ref = float(_mp_hyp_dist(xs[i], ys[i]))
        assert abs(got[i] - ref) <= 1e-12 * ref + 1e-300, (i, got[i], ref)


def test_circle_dist_and_wrap():
    C = M.Circle()
    a = np.array([0.0, 3.0, -3.0, 1e-12, 100.0, 2 * math.pi * 1000 + 0.25])
    b = np.array([math.pi, -3.0, 3.0, -1e-12, -100.0, 0.0])
    got = C.dist(a, b)
    for i in range(len(a)):
        diff = mp.mpf(float(b[i])) - mp.mpf(float(a[i]))
        r = diff - 2 * mp.pi * mp.nint(diff / (2 * mp.pi))
        ref = abs(r)
        assert abs(got[i] - float(ref)) <= 1e-12 * float(ref), (i, got[i], ref)
    assert C.log(0.0, 3.5) == pytest.approx(3.5 - 2 * math.pi, rel=1e-15)
    assert C.exp(3.0, 1.0) == pytest.approx(4.0 - 2 * math.pi, rel=1e-15)


@pytest.mark.parametrize("man", [M.Sphere(2), M.Sphere(4), M.Hyperbolic(2), M.Hyperbolic(3), M.Euclidean(3)])
def test_exp_log_roundtrip(man):
    rng = np.random.default_rng(3)
    p = M.RiemannianGaussian(man, man._reference_pair(0.5)[1], 0.7).sample(50, rng=dp.Random(1))
    B = [man._tangent_basis(q) for q in p]
    lim = 3.0 if isinstance(man, M.Sphere) else 4.0
    v = np.array([b @ (rng.normal(size=man.dim)) for b in B])
    v *= (rng.uniform(1e-8, lim, size=(50, 1)) / np.sqrt(np.sum(v * v, axis=1, keepdims=True)))
    q = man.exp(p, v)
    back = man.log(p, q)
    np.testing.assert_allclose(back, v, rtol=1e-9, atol=1e-11)
    norms = np.sqrt(np.sum(v * v, axis=1)) if not isinstance(man, M.Hyperbolic) else np.sqrt(
        -v[:, 0] ** 2 + np.sum(v[:, 1:] ** 2, axis=1))
    np.testing.assert_allclose(man.dist(p, q), norms, rtol=1e-10)


def test_sphere_exp_matches_mpmath():
    p = np.array([0.0, 0.0, 1.0])
    v = np.array([0.3, -1.1, 0.0])
    got = M.Sphere(2).exp(p, v)
    t = mp.sqrt(mp.mpf(0.3) ** 2 + mp.mpf(-1.1) ** 2)
    ref = [mp.sin(t) * mp.mpf(0.3) / t, mp.sin(t) * mp.mpf(-1.1) / t, mp.cos(t)]
    for g, r in zip(got, ref):
        assert abs(g - float(r)) < 2e-16


def test_batching_broadcasts():
    S = M.Sphere(2)
    p = np.array([0.0, 0.0, 1.0])
    q = M.RiemannianGaussian(S, p, 0.5).sample(12, rng=dp.Random(2)).reshape(3, 4, 3)
    d = S.dist(p, q)
    assert d.shape == (3, 4)
    np.testing.assert_allclose(d, S.dist(q, p))
    assert isinstance(S.dist(p, p), float) and S.dist(p, p) == 0.0
    assert S.log(p, q).shape == (3, 4, 3)


@pytest.mark.parametrize("bad,match", [
    (np.array([1.0, 0.0, 0.1]), "not on the sphere"),
    (np.array([1.0, 0.0]), "shape"),
    (np.array([np.nan, 0.0, 1.0]), "not on the sphere"),
    (np.array([np.inf, 0.0, 1.0]), "not on the sphere"),
    (np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]), "not on the sphere"),
])
def test_sphere_bad_points(bad, match):
    with pytest.raises(ValueError, match=match):
        M.Sphere(2).dist(bad, np.array([1.0, 0.0, 0.0]))


def test_bad_tangent_and_cut_locus():
    S = M.Sphere(2)
    p = np.array([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="tangent"):
        S.exp(p, [0.0, 0.1, 0.5])
    with pytest.raises(ValueError, match="antipode"):
        S.log(p, -p)
    H = M.Hyperbolic(2)
    with pytest.raises(ValueError, match="hyperboloid"):
        H.dist([1.0, 0.5, 0.0], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="hyperboloid"):
        H.dist([-math.sqrt(2), 1.0, 0.0], [1.0, 0.0, 0.0])
    with pytest.raises(TypeError):
        M.Sphere("2")
    with pytest.raises(ValueError):
        M.Sphere(0)
    with pytest.raises(TypeError):
        S.dist(["a", "b", "c"], p)


def test_manifold_attributes():
    assert (M.Sphere(3).dim, M.Sphere(3).curvature, M.Sphere(3).injectivity_radius) == (3, 1.0, math.pi)
    assert (M.Hyperbolic(2).curvature, M.Hyperbolic(2).injectivity_radius) == (-1.0, math.inf)
    assert (M.Circle().dim, M.Circle().injectivity_radius) == (1, math.pi)
    assert M.Euclidean(4).dim == 4


# ------------------------------------------------------------------------------------------------------
# distributions
# ------------------------------------------------------------------------------------------------------
CASES = [
    (M.Sphere(2), 0.5, False), (M.Sphere(2), 3.0, False), (M.Sphere(4), 0.8, False), (M.Sphere(2), 0.4, True),
    (M.Hyperbolic(2), 1.0, False), (M.Hyperbolic(3), 0.3, True), (M.Circle(), 2.0, False),
    (M.Circle(), 0.7, True), (M.Euclidean(3), 1.5, False), (M.Sphere(1), 1.0, False),
    (M.Circle(), 30.0, True), (M.Circle(), 100.0, False), (M.Sphere(2), 1e-3, False), (M.Hyperbolic(2), 10.0, False),
]


@pytest.mark.parametrize("man,sigma,laplace", CASES)
def test_exact_sampler_ks(man, sigma, laplace):
    cls = M.RiemannianLaplace if laplace else M.RiemannianGaussian
    fp = man._reference_pair(0.4)[1]
    dist = cls(man, fp, sigma)
    y = dist.sample(100_000, rng=dp.Random(12345))
    t = np.asarray(man.dist(dist.footpoint, y))
    assert stats.kstest(t, dist.radial_cdf).pvalue > ALPHA


@pytest.mark.parametrize("man,sigma", [(M.Sphere(2), 0.8), (M.Hyperbolic(2), 0.6), (M.Circle(), 1.2)])
def test_mh_sampler_ks(man, sigma):
    dist = M.RiemannianGaussian(man, man._reference_pair(0.3)[0], sigma)
    y = dist.sample_mh(3000, rng=dp.Random(7), steps=150)
    t = np.asarray(man.dist(dist.footpoint, y))
    assert stats.kstest(t, dist.radial_cdf).pvalue > ALPHA


def test_sample_direction_is_uniform():
    """The exact sampler's direction: around the north pole the azimuth is uniform (KS)."""
    S = M.Sphere(2)
    y = M.RiemannianGaussian(S, [0.0, 0.0, 1.0], 0.7).sample(100_000, rng=dp.Random(3))
    az = (np.arctan2(y[:, 1], y[:, 0]) + math.pi) / (2 * math.pi)
    assert stats.kstest(az, "uniform").pvalue > ALPHA


def test_sampler_thread_independent_and_seeded():
    g = M.RiemannianGaussian(M.Sphere(3), [1.0, 0, 0, 0], 0.9)
    a = g.sample(50_000, rng=dp.Random(5, threads=1))
    b = g.sample(50_000, rng=dp.Random(5, threads=2))
    np.testing.assert_array_equal(a, b)
    c = g.sample(10, rng=np.random.default_rng(1))
    d = g.sample(10, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(c, d)
    assert g.sample(rng=None).shape == (4,)
    assert g.sample((2, 3), rng=dp.Random(1)).shape == (2, 3, 4)
    assert g.sample(0, rng=dp.Random(1)).shape == (0, 4)
    assert M.RiemannianGaussian(M.Circle(), 0.5, 1.0).sample((5,), rng=dp.Random(1)).shape == (5,)
    with pytest.raises(ValueError):
        g.sample(-1)
    with pytest.raises(TypeError):
        g.sample(2.5)


@pytest.mark.parametrize("man,sigma,laplace", [(M.Sphere(2), 0.7, False), (M.Sphere(3), 1.3, True),
                                               (M.Hyperbolic(2), 0.8, False), (M.Circle(), 1.1, False)])
def test_log_normalizer_mpmath(man, sigma, laplace):
    d = man.dim
    core = (lambda t: -t / sigma) if laplace else (lambda t: -t * t / (2 * sigma**2))
    if isinstance(man, M.Circle):
        ref = mp.log(2 * mp.quad(lambda t: mp.exp(core(t)), [0, mp.pi]))
    else:
        S = mp.sin if isinstance(man, M.Sphere) else mp.sinh
        top = mp.pi if isinstance(man, M.Sphere) else 40
        area = 2 * mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2)
        ref = mp.log(area * mp.quad(lambda t: mp.exp(core(t)) * S(t) ** (d - 1), [0, 1, 3, top]))
    cls = M.RiemannianLaplace if laplace else M.RiemannianGaussian
    got = cls(man, man._reference_pair(0.1)[0], sigma).log_normalizer
    assert abs(got - float(ref)) < 1e-12 * max(1.0, abs(float(ref)))


def test_laplace_hyperbolic_not_normalisable():
    with pytest.raises(ValueError, match="normalisable"):
        M.RiemannianLaplace(M.Hyperbolic(3), [1.0, 0, 0, 0], 0.6)


def test_sphere2_batched_kernel_random_pairs():
    """S^2 rows go through a vectorised kernel (AVX2 when present): check random pairs of every angle,
    bad rows inside a block of four, and the block tail."""
    rng = np.random.default_rng(77)
    x = rng.normal(size=(403, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.normal(size=(403, 3))
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    y[5] = -x[5]
    y[6] = x[6]
    got = M.Sphere(2).dist(x, y)
    for i in range(len(x)):
        ref = float(_mp_angle(x[i], y[i]))
        assert abs(got[i] - ref) <= 1e-12 * ref + (0 if ref else 1e-300), (i, got[i], ref)
    y[201] *= 1.001
    with pytest.raises(ValueError, match="y is not on the sphere .row 201"):
        M.Sphere(2).dist(x, y)



_vec3 = st.lists(st.floats(-10, 10, allow_nan=False), min_size=3, max_size=3).filter(
    lambda v: math.sqrt(sum(a * a for a in v)) > 1e-3)


@settings(max_examples=200, deadline=None)
@given(_vec3, _vec3, _vec3)
def test_sphere_metric_properties(a, b, c):
    """Symmetry, range [0, pi] and the triangle inequality for the S^2 kernel (vectorised path)."""
    S = M.Sphere(2)
    x, y, z = (_unit(v) for v in (a, b, c))
    dxy, dyx, dxz, dzy = S.dist(x, y), S.dist(y, x), S.dist(x, z), S.dist(z, y)
    assert dxy == pytest.approx(dyx, abs=1e-15)
    assert 0.0 <= dxy <= math.pi
    assert dxy <= dxz + dzy + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=2),
       st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=2))
def test_hyperbolic_exp_log_inverse(a, b):
    H = M.Hyperbolic(2)
    p, q = _hyp_point(a), _hyp_point(b)
    v = H.log(p, q)
    back = H.exp(p, v)
    assert H.dist(back, q) <= 1e-9 * max(1.0, H.dist(p, q))
