"""pydp_core.special against independent 50-digit mpmath references (tests/support/mpref.py).

Tolerance: relative error <= 1e-13 on every log value and on every value in the normal double range.
The one allowance is the inherent conditioning of an inverse function in its input (ndtri near 1/2,
gammaincc_inv_log near log_q = 0): there the bound is 1e-13 + 4 * cond * 2^-53 with cond the relative
condition number of the exact answer in the (exact, double) input, computed in mpmath and stated in the
failure message. Values below the normal range may underflow (2 subnormal ulps absolute).
"""
import math

import mpmath as mp
import numpy as np
import pytest
from support import mpref as R

import pydp_core
from pydp_core import special

RTOL = 1e-13

# Orders r in [1, 50] (a = 1/r in [0.02, 1]): the ends, the Laplace/Gaussian points and awkward ones.
ORDERS = [1.0, 1.001, 1.01, 1.3, 1.5, 2.0, 2.5, 3.0, 4.7, 7.5, 14.0, 20.0, 33.3, 50.0]
# x from 1e-10 to 1e6, plus the series/continued-fraction switch at 1.5 (and its neighbours).
GAMMA_X = sorted(set(np.logspace(-10, 6, 33).tolist() + [0.3, 0.9, 1.4999999, 1.5, math.nextafter(1.5, 2.0), 1.6, 2.5,
                                                          30.0, 700.0, 745.0, 1000.0]))
# Log values only: the far ends (x down to the subnormals, log Q down to -1e300).
GAMMA_X_LOG_EXTRA = [5e-324, 1e-300, 1e-100, 1e-20, 1e10, 1e15, 1e100, 1e300]


def _collect(values, refs, rtol=RTOL, conds=None, label=""):
    bad = []
    for i, (g, r) in enumerate(zip(np.ravel(values), refs)):
        msg = R.mismatch(float(g), r, rtol, 0.0 if conds is None else conds[i])
        if msg:
            bad.append(f"{label}[{i}]: {msg}")
    return bad


# ------------------------------------------------------------------------------------------------------
# Normal distribution
# ------------------------------------------------------------------------------------------------------
NORMAL_X = sorted(set((-np.logspace(-3, 5, 49)).tolist() + np.logspace(-3, np.log10(38.5), 25).tolist()
                      + [-1e5, -447.0, -40.0, -38.5, -37.5, -26.0, -1.0, -0.0, 0.0, 1.0, 5.0, 8.3, 9.0, 22.0, 37.0]))


def test_log_ndtr_deep_tails():
    x = np.array(NORMAL_X)
    got = special.log_ndtr(x)
    bad = _collect(got, [R.log_ndtr(v) for v in x], label="log_ndtr")
    assert not bad, "\n".join(f"x={x[int(b.split('[')[1].split(']')[0])]!r}: {b}" for b in bad)


def test_log_ndtr_golden_values():
    # log Phi(-447) = -99911.52...: the tail reaches log values of -1e5; log Phi(-1e5) ~ -5e9.
    assert special.log_ndtr(-447.0) == pytest.approx(float(R.log_ndtr(-447.0)), rel=RTOL)
    assert -99912 < special.log_ndtr(-447.0) < -99911
    assert special.log_ndtr(-1e5) == pytest.approx(float(R.log_ndtr(-1e5)), rel=RTOL)
    assert special.log_ndtr(-1e5) < -5e9
    assert special.log_ndtr(np.inf) == 0.0
    assert special.log_ndtr(-np.inf) == -np.inf


def test_ndtr_values():
    x = np.array(NORMAL_X)
    got = special.ndtr(x)
    bad = _collect(got, [R.ndtr(v) for v in x], label="ndtr")
    assert not bad, "\n".join(bad)
    assert special.ndtr(-np.inf) == 0.0 and special.ndtr(np.inf) == 1.0


def test_erfcx():
    x = np.array(sorted(set(np.linspace(-26.0, 5.0, 32).tolist() + np.logspace(-3, 300, 40).tolist()
                            + [-0.5, 0.0, 19.999, 20.0, 20.001, 1e5])))
    got = special.erfcx(x)
    bad = _collect(got, [R.erfcx(v) for v in x], label="erfcx")
    assert not bad, "\n".join(f"x={x[int(b.split('[')[1].split(']')[0])]!r}: {b}" for b in bad)


NDTRI_P = sorted(set(np.logspace(-300, -1, 40).tolist() + (1 - np.logspace(-16, -1, 16)).tolist()
                     + [5e-324, 1e-310, 2.2250738585072014e-308, 0.25, 0.3, 0.45, 0.5 - 1e-9, 0.5 - 2**-30,
                        0.5 + 2**-30, 0.55, 0.7, 0.9, 1 - 2**-53]))


def _ndtri_cond(p, x):
    """Relative condition number of Phi^{-1} at p, taken in the tail mass q = min(p, 1 - p) (which the
    implementation forms exactly): q / (|x| phi(x))."""
    with mp.workdps(30):
        q = min(R.X(p), 1 - R.X(p))
        return float(q / (abs(x) * mp.npdf(x))) if x != 0 else 0.0


def test_ndtri():
    p = np.array(NDTRI_P)
    got = special.ndtri(p)
    refs = [R.ndtri(v) for v in p]
    conds = [_ndtri_cond(v, r) for v, r in zip(p, refs)]
    bad = _collect(got, refs, conds=conds, label="ndtri")
    assert not bad, "\n".join(f"p={p[int(b.split('[')[1].split(']')[0])]!r}: {b}" for b in bad)
    assert special.ndtri(0.0) == -np.inf and special.ndtri(1.0) == np.inf and special.ndtri(0.5) == 0.0


def test_ndtri_log_round_trip():
    # log Phi(ndtri(p)) = log p: log Phi is well conditioned in x (cond ~ 2 in the tail).
    p = np.array([v for v in NDTRI_P if v < 0.5])
    back = special.log_ndtr(special.ndtri(p))
    assert np.allclose(back, np.log(p), rtol=1e-13, atol=0)


# ------------------------------------------------------------------------------------------------------
# Incomplete gamma, a = 1/r
# ------------------------------------------------------------------------------------------------------
_GAMMA_FUNCS = {
    "gammainc": (special.gammainc, R.gammainc),
    "gammaincc": (special.gammaincc, R.gammaincc),
    "log_gammainc": (special.log_gammainc, R.log_gammainc),
    "log_gammaincc": (special.log_gammaincc, R.log_gammaincc),
}


@pytest.mark.parametrize("r", ORDERS)
@pytest.mark.parametrize("name", list(_GAMMA_FUNCS))
def test_incomplete_gamma(name, r):
    a = 1.0 / r
    fn, ref = _GAMMA_FUNCS[name]
    xs = GAMMA_X + (GAMMA_X_LOG_EXTRA if name.startswith("log") else [])
    x = np.array(xs)
    got = fn(a, x)
    bad = [f"a=1/{r} x={xv!r}: {m}" for xv, g in zip(xs, got) if (m := R.mismatch(float(g), ref(a, xv), RTOL))]
    assert not bad, "\n".join(bad)


def test_incomplete_gamma_reference_closed_forms():
    # Guards the reference itself: Q(1, x) = e^-x and Q(1/2, x) = erfc(sqrt(x)).
    for x in [1e-10, 0.5, 1.5, 30.0, 1e4]:
        assert mp.almosteq(R.gammaincc(1.0, x), mp.exp(-R.X(x)), rel_eps=mp.mpf(10) ** -45)
        assert mp.almosteq(R.gammaincc(0.5, x), mp.erfc(mp.sqrt(R.X(x))), rel_eps=mp.mpf(10) ** -45)
    # ... and the implementation on the same closed forms, deep in the tail (log Q = -x exactly at a = 1).
    x = np.array([1e-8, 0.7, 1.5, 3.0, 1e3, 1e5, 1e6])
    assert np.allclose(special.log_gammaincc(1.0, x), -x, rtol=RTOL, atol=0)
    assert np.allclose(special.gammaincc(0.5, x[:5]), [float(mp.erfc(mp.sqrt(R.X(v)))) for v in x[:5]], rtol=RTOL, atol=0)


def test_incomplete_gamma_edges():
    for a in [0.02, 0.5, 1.0]:
        assert special.gammainc(a, 0.0) == 0.0 and special.gammaincc(a, 0.0) == 1.0
        assert special.log_gammaincc(a, 0.0) == 0.0 and special.log_gammainc(a, 0.0) == -np.inf
        assert special.gammaincc(a, np.inf) == 0.0 and special.log_gammaincc(a, np.inf) == -np.inf
    # P + Q = 1 where both are representable.
    x = np.logspace(-5, 1.5, 50)
    for r in ORDERS:
        s = special.gammainc(1 / r, x) + special.gammaincc(1 / r, x)
        assert np.allclose(s, 1.0, rtol=1e-15, atol=0)


@pytest.mark.parametrize("r", [1.0, 1.001, 1.5, 2.0, 3.0, 7.5, 20.0, 50.0])
def test_gammaincc_inv_log(r):
    """x = gammaincc_inv_log(a, lq) against the 70-digit root of log Q(a, x) = lq.

    Forward bound: 1e-13 + 4 cond 2^-53, cond = |lq / (d log Q / d log x)| the condition number of x in
    lq (at most about 1/a = r near lq = 0, about 1 in the tail). Backward: log Q at the returned double
    x matches lq to 1e-13 plus 4 times its own condition number in x.
    """
    a = 1.0 / r
    lqs = [-v for v in np.logspace(-15, 5.5, 14)] + [-1e-300, -1e-100, -0.6931471805599453, -745.0]
    got = special.gammaincc_inv_log(a, np.array(lqs))
    bad = []
    for lq, x in zip(lqs, got):
        # The exact inverse: root of log Q(a, x) = lq in 70 digits (bracketed Newton in log x).
        with mp.workdps(70):
            t = R.X(lq)
            aa = R.X(a)

            def g(v):  # increasing in v = log x; log1p(-P) where Q is close to 1
                if t > -1:
                    return t - mp.log1p(-mp.gammainc(aa, 0, mp.exp(v), regularized=True))
                return t - mp.log(mp.gammainc(aa, mp.exp(v), mp.inf, regularized=True))

            def dg(v):
                xx = mp.exp(v)
                q = mp.gammainc(aa, xx, mp.inf, regularized=True)
                return mp.exp(aa * v - xx - mp.loggamma(aa)) / q

            if x == 0.0:  # underflow is right only if the exact root lies below the smallest subnormal
                if not g(mp.log(R.X(5e-324))) > 0:
                    bad.append(f"a=1/{r} log_q={lq!r}: returned 0 but the root is >= 5e-324")
                continue
            lo, hi = mpf_log(x) - 1, mpf_log(x) + 1
            while g(lo) > 0:
                lo -= 10
            while g(hi) < 0:
                hi += 10
            xref = mp.exp(R._newton_increasing(g, dg, lo, hi, x0=(lo + hi) / 2))
            cond_f = abs(t / R.dlogq_dlogx(a, xref))
        m = R.mismatch(float(x), xref, RTOL, cond_f)
        if m:
            bad.append(f"a=1/{r} log_q={lq!r}: forward {m}")
        lq_back = R.log_gammaincc(a, float(x))
        m = R.mismatch(lq, lq_back, RTOL, abs(R.dlogq_dlogx(a, float(x)) / lq_back))
        if m:
            bad.append(f"a=1/{r} log_q={lq!r}: backward (log Q at the returned x) {m}")
    assert not bad, "\n".join(bad)
    assert special.gammaincc_inv_log(a, 0.0) == 0.0
    assert special.gammaincc_inv_log(a, -np.inf) == np.inf


def mpf_log(x):
    return mp.log(R.X(x))


def test_lgamma1p():
    a = np.array([-0.5, -0.25, -1e-5, -1e-300, 0.0, 1e-300, 1e-10, 1e-5, 0.25, 0.5, 0.5000001, 0.9, 1 - 1e-12,
                  1.0, 1 + 1e-12, 1.2, 1.5])
    got = special.lgamma1p(a)
    with mp.workdps(400):  # 1 + 1e-300 must not round to 1
        refs = [+mp.loggamma(1 + R.X(v)) for v in a]
    bad = [f"a={v!r}: {m}" for v, g, ref in zip(a, got, refs) if (m := R.mismatch(float(g), ref, RTOL))]
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------------------------------------
# Shapes, scalars, threads, bad input
# ------------------------------------------------------------------------------------------------------
def test_scalars_and_shapes():
    assert isinstance(special.log_ndtr(-3.0), float)
    assert isinstance(special.gammaincc(0.5, 2.0), float)
    x = np.linspace(-5, 5, 12).reshape(3, 4)
    for fn in (special.ndtr, special.log_ndtr, special.erfcx):
        out = fn(x)
        assert out.shape == (3, 4)
        assert np.array_equal(out.ravel(), fn(x.ravel()))
    assert special.gammaincc(0.3, np.abs(x)).shape == (3, 4)
    assert special.ndtri(np.full((2, 2, 2), 0.3)).shape == (2, 2, 2)
    assert special.log_ndtr([-1.0, 2.0]).shape == (2,)
    assert special.log_ndtr(np.array(-3)) == special.log_ndtr(-3.0)  # integer input converted exactly


def test_threaded_equals_serial():
    core = pydp_core._core.special
    x = np.linspace(-60.0, 10.0, 50_001)
    for fn in (core.log_ndtr, core.ndtr, core.erfcx):
        assert np.array_equal(fn(x, threads=1), fn(x, threads=2))
        assert np.array_equal(fn(x, threads=1), fn(x, threads=7))
    xp = np.abs(x)
    assert np.array_equal(core.incgamma(0.3, xp, 3, threads=1), core.incgamma(0.3, xp, 3, threads=3))


@pytest.mark.parametrize("fn", [special.ndtr, special.log_ndtr, special.erfcx])
def test_bad_input_real_functions(fn):
    with pytest.raises(ValueError, match="x must not be NaN"):
        fn(np.nan)
    with pytest.raises(ValueError, match="x must not be NaN"):
        fn([0.0, np.nan])
    with pytest.raises(TypeError, match="x must be"):
        fn("1.0")
    with pytest.raises(TypeError, match="x must be"):
        fn(1 + 2j)
    with pytest.raises(TypeError, match="x must be"):
        fn(True)


def test_bad_input_ndtri():
    for p in (-0.1, 1.1, np.inf, [0.5, 2.0]):
        with pytest.raises(ValueError, match="p must lie in"):
            special.ndtri(p)
    with pytest.raises(ValueError, match="p must not be NaN"):
        special.ndtri(np.nan)
    with pytest.raises(TypeError, match="p must be"):
        special.ndtri("0.5")


@pytest.mark.parametrize("fn", [special.gammainc, special.gammaincc, special.log_gammainc, special.log_gammaincc])
def test_bad_input_incomplete_gamma(fn):
    for a in (0.0, -0.5, 1.5, np.inf, np.nan):
        with pytest.raises(ValueError, match="a must"):
            fn(a, 1.0)
    with pytest.raises(TypeError, match="a must be"):
        fn("0.5", 1.0)
    with pytest.raises(ValueError, match="x must be >= 0"):
        fn(0.5, -1.0)
    with pytest.raises(ValueError, match="x must not be NaN"):
        fn(0.5, [1.0, np.nan])
    with pytest.raises(TypeError, match="x must be"):
        fn(0.5, "2")


def test_bad_input_inverse_and_lgamma1p():
    with pytest.raises(ValueError, match="log_q must be <= 0"):
        special.gammaincc_inv_log(0.5, 0.1)
    with pytest.raises(ValueError, match="log_q must not be NaN"):
        special.gammaincc_inv_log(0.5, np.nan)
    with pytest.raises(ValueError, match="a must"):
        special.gammaincc_inv_log(2.0, -1.0)
    with pytest.raises(ValueError, match="a must lie in"):
        special.lgamma1p(2.0)
