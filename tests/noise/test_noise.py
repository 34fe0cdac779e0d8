"""The noise families against 50-digit mpmath references written from their definitions (tests/support/mpref.py).

Tolerance: relative error <= 1e-13 + 4 * cond * 2^-53, where cond = |x g'(x) / g(x)| is the relative
condition number of the quantity g at the exact double x (computed in mpmath, printed on failure). For
log values in the tails cond is about r, so the bound is 1e-13 there; for sf/pdf values far out it is
about |x|^r (every implementation rounds x^r / r once; no double algorithm can do better than this up to
a small factor); next to the truncation bound S_T(x) = (S(x) - S(A)) / M it grows like x / (A - x).
Values below the normal double range may underflow (2 subnormal ulps absolute).
"""
import math

import mpmath as mp
import numpy as np
import pytest
from support import mpref as R

import pydp_core
from pydp_core import Gaussian, Laplace, Logistic, Subbotin, Truncated

RTOL = 1e-13
ORDERS = [1.0, 1.001, 1.5, 2.0, 2.5, 3.0, 7.5, 14.0, 50.0]
METHODS = ["logpdf", "pdf", "logsf", "sf", "logcdf", "cdf"]


def _families():
    fams = [Laplace(), Gaussian(), Logistic()] + [Subbotin(r) for r in ORDERS if r not in (1.0, 2.0)]
    fams += [Truncated(Laplace(), 3.0), Truncated(Gaussian(), 2.0), Truncated(Subbotin(3.0), 1.5),
             Truncated(Logistic(), 10.0), Truncated(Subbotin(1.5), 40.0)]
    return fams


FAMILIES = _families()


def _order(noise):
    key = R.family_key(noise)
    return {"Laplace": 1.0, "Gaussian": 2.0, "Logistic": 1.0}.get(key[0], key[-1] if key[0] == "Subbotin" else None)


def _grid(noise):
    """Points reaching log S = -1.2e5 on both sides, the centre, and (truncations) the bound."""
    if isinstance(noise, Truncated):
        a = noise.bound
        pts = np.linspace(-1.2 * a, 1.2 * a, 25).tolist()
        pts += [a * (1 - 1e-9), -a * (1 - 1e-9), a * (1 - 1e-12), a, -a, math.nextafter(a, 0), 0.5 * a]
        return np.array(sorted(set(pts)))
    r = _order(noise)
    xmax = (r * 1.2e5) ** (1 / r)
    tail = np.geomspace(1e-8, xmax, 24)
    return np.array(sorted(set(np.linspace(-10, 10, 11).tolist() + tail.tolist() + (-tail).tolist() + [0.0])))


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
@pytest.mark.parametrize("method", METHODS)
def test_family_against_reference(noise, method):
    key = R.family_key(noise)
    ref_f = R.family(key)
    x = _grid(noise)
    got = getattr(noise, method)(x)
    bad = []
    for xv, g in zip(x, got):
        ref = R.evaluate(key, method, float(xv))
        with mp.workdps(40):
            cond = ref_f.condition(method, R.X(xv)) if mp.isfinite(ref) and ref != 0 else 0
        m = R.mismatch(float(g), ref, RTOL, cond)
        if m:
            bad.append(f"{noise!r}.{method}({xv!r}): {m}")
    assert not bad, f"{len(bad)} of {len(x)} points:\n" + "\n".join(bad)


@pytest.mark.parametrize("noise", [Laplace(), Gaussian(), Logistic()] + [Subbotin(r) for r in (1.001, 2.5, 14.0, 50.0)], ids=repr)
def test_logsf_reaches_minus_1e5(noise):
    r = _order(noise)
    x = (r * 1e5) ** (1 / r)  # log S(x) ~ -1e5
    got = noise.logsf(x)
    assert got < -9e4
    assert R.mismatch(got, R.evaluate(R.family_key(noise), "logsf", x), RTOL, r) is None
    assert noise.logcdf(-x) == got  # symmetry, exactly


PPF_Q = [1e-300, 1e-100, 1e-30, 1e-10, 1e-3, 0.1, 0.3, 0.49, 0.5 - 2**-40, 0.5, 0.5 + 2**-40, 0.51, 0.7, 0.9,
         1 - 1e-10, 1 - 2**-53]


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_ppf_against_reference(noise):
    """ppf(q) vs the 70-digit root of F(x) = q; cond = min(q, 1 - q) / (|x| f(x)), the condition number of
    x in the tail mass (exact in double): near q = 1/2 x is ill-conditioned, far out it is ~ 1/|x|^r."""
    key = R.family_key(noise)
    ref_f = R.family(key)
    q = [v for v in PPF_Q if not (isinstance(noise, Truncated) and min(v, 1 - v) < 1e-30)]
    got = noise.ppf(np.array(q))
    bad = []
    for qv, g in zip(q, got):
        ref = R.ppf(key, qv)
        with mp.workdps(40):
            tail = min(R.X(qv), 1 - R.X(qv))
            lf = ref_f.logpdf(ref)
            cond = float(tail / (abs(ref) * mp.exp(lf))) if ref != 0 and lf != mpf_ninf() else 0.0
        m = R.mismatch(float(g), ref, RTOL, cond)
        if m:
            bad.append(f"{noise!r}.ppf({qv!r}): {m}")
    assert not bad, "\n".join(bad)


def mpf_ninf():
    return mp.mpf("-inf")


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_ppf_cdf_round_trip(noise):
    """ppf(cdf(x)) = x and cdf(ppf(q)) = q to 1e-12 + 8 cond 2^-53, cond = F / (|x| f) (the condition number
    of x in F, computed from the library's own values; large next to the median and the truncation bound)."""
    q = np.geomspace(1e-250 if not isinstance(noise, Truncated) else 1e-12, 0.45, 40)
    x = noise.ppf(q)
    cond = noise.cdf(x) / (np.abs(x) * noise.pdf(x))
    back = noise.ppf(noise.cdf(x))
    tol = 1e-12 + 8 * cond * R.EPS_MACH
    assert np.all(np.abs(back / x - 1) <= tol), np.max(np.abs(back / x - 1) / tol)
    fwd = noise.cdf(noise.ppf(q))
    # x = ppf(q) is held to 1e-13 relative (test_ppf_against_reference); F moves by 1 / cond times that
    assert np.all(np.abs(fwd / q - 1) <= 1e-12 + (RTOL + 8 * R.EPS_MACH) / cond), np.max(np.abs(fwd / q - 1))
    assert noise.ppf(0.5) == 0.0
    bound = noise.support_bound
    assert noise.ppf(0.0) == -bound and noise.ppf(1.0) == bound
    # isf is the mirrored ppf
    assert np.array_equal(noise.isf(q), -noise.ppf(q))


@pytest.mark.parametrize("r", ORDERS)
def test_subbotin_variance(r):
    v = Subbotin(r).variance
    with mp.workdps(50):
        rr = R.X(r)
        ref = rr ** (2 / rr) * mp.gamma(3 / rr) / mp.gamma(1 / rr)
    assert R.mismatch(v, ref, RTOL) is None, (v, ref)


def test_named_variances():
    assert Laplace().variance == 2.0
    assert Gaussian().variance == 1.0
    assert R.mismatch(Logistic().variance, mp.pi ** 2 / 3, RTOL) is None


@pytest.mark.parametrize("noise", [n for n in FAMILIES if isinstance(n, Truncated)], ids=repr)
def test_truncated_variance_by_quadrature(noise):
    # The library integrates numerically; the reference integrates in 50 digits.
    ref = R.variance(R.family_key(noise))
    assert R.mismatch(noise.variance, ref, 1e-10) is None, (noise.variance, ref)
    # Truncation removes variance; by Subbotin(1.5) at 40 only 1e-73 of it, below one rounding step.
    assert noise.variance <= noise.base.variance


def test_subbotin_1_and_2_are_bitwise_laplace_and_gaussian():
    x = np.concatenate([np.linspace(-50, 50, 1001), [-1e5, -447.0, 1e-300, 700.0, 1e5]])
    q = np.concatenate([np.linspace(0, 1, 101), [1e-300, 1 - 2**-53]])
    for sub, named in ((Subbotin(1), Laplace()), (Subbotin(2), Gaussian()), (Subbotin(1.0), Laplace())):
        for m in METHODS:
            assert np.array_equal(getattr(sub, m)(x), getattr(named, m)(x)), m
        assert np.array_equal(sub.ppf(q), named.ppf(q))
        assert sub.variance == named.variance
        assert sub == named and hash(sub) == hash(named)
    # The profile and calibration take the same path as well.
    for sub, named in ((Subbotin(1), Laplace()), (Subbotin(2), Gaussian())):
        assert pydp_core.minimal_scale(sub, epsilon=0.5, delta=1e-9) == pydp_core.minimal_scale(named, epsilon=0.5, delta=1e-9)
        assert pydp_core.privacy_profile(sub, epsilon=0.5, scale=2.0) == pydp_core.privacy_profile(named, epsilon=0.5, scale=2.0)


def test_subbotin_near_one_is_close_to_laplace():
    # r = 1.001 is a genuinely different density, but only slightly: a continuity check across the dispatch.
    x = np.linspace(-5, 5, 11)
    assert np.allclose(Subbotin(1.001).logpdf(x), Laplace().logpdf(x), rtol=0, atol=5e-3)
    assert not np.array_equal(Subbotin(1.001).logpdf(x), Laplace().logpdf(x))


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_scalars_arrays_and_symmetry(noise):
    for m in METHODS + ["ppf"]:
        arg = 0.3
        assert isinstance(getattr(noise, m)(arg), float)
        arr = np.full((2, 3), arg)
        out = getattr(noise, m)(arr)
        assert out.shape == (2, 3) and np.all(out == getattr(noise, m)(arg))
        assert getattr(noise, m)([arg, arg]).shape == (2,)
    x = np.linspace(-4, 4, 17)
    assert np.array_equal(noise.logpdf(x), noise.logpdf(-x))
    assert np.array_equal(noise.logsf(x), noise.logcdf(-x))
    assert abs(noise.cdf(0.0) - 0.5) <= 2 ** -53 and abs(noise.sf(0.0) - 0.5) <= 2 ** -53
    assert np.all(np.diff(noise.cdf(x)) >= 0)


def test_threaded_equals_serial():
    fam = Subbotin(3.0).kernel
    x = np.linspace(-30.0, 30.0, 40_001)
    for m in ("logsf", "cdf", "logpdf", "ppf"):
        arg = x if m != "ppf" else np.linspace(0, 1, 40_001)
        assert np.array_equal(getattr(fam, m)(arg, threads=1), getattr(fam, m)(arg, threads=3)), m


# ------------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("r", [0.5, 0.999999, 0.0, -2.0, np.nan, np.inf, -np.inf])
def test_subbotin_bad_order(r):
    expected = r"r must not be NaN" if np.isnan(r) else r"r must be finite" if r == np.inf else r"r must be >= 1 \(log-concavity\)"
    with pytest.raises(ValueError, match=expected):
        Subbotin(r)


@pytest.mark.parametrize("r", ["2", None, [2.0, 3.0], True, 2 + 0j])
def test_subbotin_order_wrong_type(r):
    with pytest.raises(TypeError, match="r must be"):
        Subbotin(r)


@pytest.mark.parametrize("noise", [Laplace(), Gaussian(), Logistic(), Subbotin(3.0), Truncated(Laplace(), 2.0)], ids=repr)
def test_family_bad_input(noise):
    for m in METHODS:
        with pytest.raises(ValueError, match="x must not be NaN"):
            getattr(noise, m)(np.nan)
        with pytest.raises(ValueError, match="x must not be NaN"):
            getattr(noise, m)([1.0, np.nan])
        with pytest.raises(TypeError, match="x must be"):
            getattr(noise, m)("1.5")
        with pytest.raises(TypeError, match="x must be"):
            getattr(noise, m)(np.array([1 + 1j]))
    for q in (-1e-300, 1.0000000000000002, 2.0, -np.inf, np.inf):
        with pytest.raises(ValueError, match=r"q must lie in \[0, 1\]"):
            noise.ppf(q)
    with pytest.raises(ValueError, match="q must not be NaN"):
        noise.ppf(np.nan)
    with pytest.raises(TypeError, match="q must be"):
        noise.ppf("0.5")


def test_truncated_bad_input():
    with pytest.raises(ValueError, match="bound must be > 0"):
        Truncated(Laplace(), 0.0)
    with pytest.raises(ValueError, match="bound must be > 0"):
        Truncated(Laplace(), -1.0)
    with pytest.raises(ValueError, match="bound must not be NaN"):
        Truncated(Laplace(), np.nan)
    with pytest.raises(ValueError, match="bound must be finite"):
        Truncated(Laplace(), np.inf)
    with pytest.raises(TypeError, match="base must be"):
        Truncated("laplace", 1.0)
    with pytest.raises(TypeError, match="base must be"):
        Truncated(Truncated(Laplace(), 2.0), 1.0)


@pytest.mark.parametrize("base", [Gaussian(), Laplace(), Logistic(), Subbotin(3)], ids=repr)
@pytest.mark.parametrize("bound", [1e-300, 1e-8, 0.3, 1.0, 2.5, 40.0, 1e4, 1e300])
def test_truncated_variance_against_mpmath(base, bound):
    # Var(X | |X| < b) = int_{-b}^{b} x^2 f / int_{-b}^{b} f, at 50 digits from the reference density.
    key = R.family_key(base)
    f = lambda x: mp.exp(R.family(key).logpdf(x))  # noqa: E731
    b = R.X(bound)
    if b < 1:  # in the scaled variable u = x / b, which neither underflows nor loses the kink at 0
        exact = b * b * mp.quad(lambda u: u * u * f(b * u), [0, 1]) / mp.quad(lambda u: f(b * u), [0, 1])
    else:
        top = min(b, mp.mpf(60))  # beyond 60 the densities are below 1e-780: no contribution at 50 digits
        exact = mp.quad(lambda x: x * x * f(x), [0, 1, top]) / mp.quad(f, [0, 1, top])
    got = Truncated(base, bound).variance
    assert math.isfinite(got)
    assert abs(got - float(exact)) <= 1e-9 * float(exact) + 1e-300
