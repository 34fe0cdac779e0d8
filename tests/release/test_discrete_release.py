"""The release path: calibration on the grid, exhaustive small cases, end-to-end exactness, bad input.

Exhaustive cases use a tiny grid (grid_bits 0 to 2, so t and sigma are a few grid steps): every pair of
inputs on a fine lattice within the sensitivity is rounded as the kernel rounds it, the output
distributions are enumerated in 50-digit arithmetic, and the (epsilon, delta) condition is checked
directly, together with the minimality of the calibrated parameter.
"""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from support.stats import ALPHA

import pydp_core as pc
from pydp_core import _core
from pydp_core import release as dsc
from pydp_core.accounting.conversions import zcdp_log_delta


def noise_pmf(plan: dsc.GridRelease, width: int):
    """Exact pmf of the integer noise on [-width - 64, width + 64] (mpmath), and the mass outside [-width, width]."""
    p = plan.parameter
    pm = mpmath.mpf(p.numerator) / p.denominator
    ys = range(-width - 64, width + 65)
    if plan.mechanism == "laplace":
        q = mpmath.exp(-1 / pm)
        z = (1 + q) / (1 - q)
        pmf = {y: q ** abs(y) / z for y in ys}
        tail = 2 * q ** (width + 1) / (1 + q)
    else:
        z = mpmath.fsum(mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * pm)) for y in range(-8 * width, 8 * width + 1))
        pmf = {y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * pm)) / z for y in ys}
        tail = 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * pm)) for y in range(width + 1, 8 * width)) / z
    return pmf, tail, width


def law_width(plan: dsc.GridRelease) -> int:
    """A window of the integers outside which the noise has mass below 1e-25."""
    p = float(plan.parameter)
    return int(60 * p) + 50 if plan.mechanism == "laplace" else int(11 * math.sqrt(p)) + 50


def hockey_stick(law, shift: int, eps: float) -> mpmath.mpf:
    """sum over |y| <= width of max(0, P(y) - e^eps P(y - shift)): a lower bound on delta(eps) that is
    short of it by at most the mass outside [-width, width]."""
    pmf, _, width = law
    e = mpmath.exp(mpmath.mpf(eps))
    zero = mpmath.mpf(0)
    assert shift <= 64
    return mpmath.fsum(max(zero, pmf[y] - e * pmf[y - shift]) for y in range(-width, width + 1))


def lattice_shifts(plan: dsc.GridRelease) -> set:
    """|rint(x0/g) - rint(x1/g)| over all pairs of a fine lattice (step g/64) with |x0 - x1| <= D."""
    g = plan.grid
    xs = np.arange(-3 * 64, 6 * 64 + 1) * (g / 64) + 0.0
    xs = np.concatenate([xs, xs + plan.sensitivity, xs - plan.sensitivity])
    r = np.rint(xs / g)
    diffs = np.abs(xs[:, None] - xs[None, :]) <= plan.sensitivity
    return set(np.abs(r[:, None] - r[None, :])[diffs].astype(int).tolist())


TINY_PLANS = [
    ("laplace", 1.0, 0.0, 1.0, 0),
    ("laplace", 1.0, 0.0, 1.3, 1),
    ("laplace", 0.5, 0.01, 1.0, 2),
    ("laplace", 2.0, 0.05, 0.7, 1),
    ("gaussian", 1.0, 1e-3, 1.0, 0),
    ("gaussian", 1.0, 1e-3, 1.3, 1),
    ("gaussian", 0.5, 1e-2, 1.0, 2),
]


def make_plan(mech, eps, delta, sens, bits):
    if mech == "laplace":
        return dsc.calibrate_laplace_release(epsilon=eps, sensitivity=sens, delta=delta, grid_bits=bits)
    return dsc.calibrate_gaussian_release(epsilon=eps, delta=delta, sensitivity=sens, grid_bits=bits)


@pytest.mark.parametrize("mech, eps, delta, sens, bits", TINY_PLANS)
def test_exhaustive_small_cases(mech, eps, delta, sens, bits):
    plan = make_plan(mech, eps, delta, sens, bits)
    shifts = lattice_shifts(plan)
    assert max(shifts) == plan.shift  # the rounding charge is exactly the worst case, not more
    width = law_width(plan)
    law = noise_pmf(plan, width)
    tail = law[1]
    assert tail < mpmath.mpf(10) ** -25
    for k in sorted(shifts):
        d = hockey_stick(law, k, eps)
        assert d <= delta + tail + mpmath.mpf(10) ** -40, (k, d, delta)  # 1e-40: 50-digit rounding
    # the profile the calibration used is the enumerated one
    d_max = hockey_stick(law, plan.shift, eps)
    assert float(d_max) == pytest.approx(plan.delta_achieved, rel=1e-9, abs=1e-40)
    # minimality: one step less noise breaks the guarantee at the worst shift
    smaller = dsc.GridRelease(plan.mechanism, eps, delta, sens, plan.grid_exponent, plan.shift,
                              plan.parameter - 1, float("nan"))
    if smaller.parameter > 0:
        law2 = noise_pmf(smaller, width)
        assert hockey_stick(law2, plan.shift, eps) > delta


@pytest.mark.parametrize("mech, eps, delta, sens, bits", [TINY_PLANS[1], TINY_PLANS[5]])
def test_release_samples_the_exact_output_law(mech, eps, delta, sens, bits):
    plan = make_plan(mech, eps, delta, sens, bits)
    x0 = 0.37 * plan.sensitivity
    out = plan.release(np.full(10**6, x0), rng=pc.Random(123), simulation=True)
    idx = out / plan.grid
    assert np.array_equal(idx, np.round(idx))  # on the grid
    r0 = int(np.rint(x0 / plan.grid))
    noise = (idx - r0).astype(np.int64)
    pmf, tail, _ = noise_pmf(plan, law_width(plan))
    edges = [y for y in sorted(pmf) if pmf[y] * 10**6 >= 20]
    ys = sorted(pmf)
    c = [float(mpmath.fsum(pmf[y] for y in ys if y <= e)) for e in edges]
    probs = np.array([c[0]] + [c[i] - c[i - 1] for i in range(1, len(c))] + [1 - c[-1]])
    counts = np.bincount(np.searchsorted(np.array(edges), noise, side="left"), minlength=len(edges) + 1)
    expected = probs * noise.size
    stat = float(((counts - expected) ** 2 / expected).sum())
    assert stat < stats.chi2.isf(ALPHA, len(probs) - 1)


@pytest.mark.parametrize("eps, delta, sens", [(1.0, 1e-6, 1.0), (0.1, 1e-10, 3.0), (8.0, 1e-3, 0.25), (1e-3, 1e-5, 1.0)])
def test_gaussian_calibration_is_verified_minimal_and_close_to_continuous(eps, delta, sens):
    plan = dsc.calibrate_gaussian_release(epsilon=eps, delta=delta, sensitivity=sens)
    n = plan.parameter
    assert n.denominator == 1
    assert dsc.discrete_gaussian_delta(epsilon=eps, sigma2=n, shift=plan.shift) <= delta
    assert dsc.discrete_gaussian_delta(epsilon=eps, sigma2=n - 1, shift=plan.shift) > delta * (1 - 1e-12)
    cont = pc.minimal_scale(pc.Gaussian(), epsilon=eps, delta=delta, sensitivity=sens)
    assert cont <= plan.scale * (1 + 1e-6)  # the grid never buys privacy for free
    assert plan.scale <= cont * (1 + 2 ** -16 * max(1.0, cont / sens) + 1e-4)  # and costs at most the charge


@pytest.mark.parametrize("eps, delta, sens", [(1.0, 0.0, 1.0), (0.1, 0.0, 3.0), (2.0, 1e-3, 0.5), (1e-4, 0.0, 1.0)])
def test_laplace_calibration_is_verified_and_minimal(eps, delta, sens):
    plan = dsc.calibrate_laplace_release(epsilon=eps, sensitivity=sens, delta=delta)
    t = plan.parameter
    assert t.denominator == 1 and t < 2**40
    if delta == 0:
        assert Fraction(plan.shift) / t <= Fraction(eps) < Fraction(plan.shift) / (t - 1)
    else:
        assert dsc.discrete_laplace_delta(epsilon=eps, t=t, shift=plan.shift) <= delta
        assert dsc.discrete_laplace_delta(epsilon=eps, t=t - 1, shift=plan.shift) > delta * (1 - 1e-12)
    assert plan.scale >= pc.minimal_scale(pc.Laplace(), epsilon=eps, delta=delta, sensitivity=sens) * (1 - 1e-12)


def test_outputs_lie_on_the_grid_and_threads_do_not_matter():
    plan = dsc.calibrate_gaussian_release(epsilon=1.0, delta=1e-6, sensitivity=1.0)
    x = np.linspace(-1000, 1000, 20_001)
    a = plan.release(x, rng=pc.Random(8, threads=1), simulation=True)
    b = plan.release(x, rng=pc.Random(8, threads=2), simulation=True)
    assert np.array_equal(a, b)
    k = a / plan.grid
    assert np.array_equal(k, np.round(k))
    assert abs(np.std(a - x) / plan.scale - 1) < 0.03


def test_scalar_and_shape_handling():
    r = pc.Random(1)
    assert isinstance(pc.release_laplace(3.0, epsilon=1.0, rng=r, simulation=True), float)
    out = pc.release_gaussian(np.zeros((3, 4)), epsilon=1.0, delta=1e-6, rng=r, simulation=True)
    assert out.shape == (3, 4) and out.dtype == np.float64
    assert pc.release_laplace(np.array([], dtype=float), epsilon=1.0, rng=r, simulation=True).shape == (0,)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_rejected(bad):
    with pytest.raises(ValueError, match="finite"):
        pc.release_laplace([1.0, bad], epsilon=1.0)


def test_values_too_large_for_the_grid_are_rejected_not_clamped():
    plan = dsc.calibrate_laplace_release(epsilon=1.0, sensitivity=1.0)
    limit = plan.max_abs_value
    assert limit == math.ldexp(1.0, 52 + plan.grid_exponent)
    plan.release([limit, -limit], rng=pc.Random(2), simulation=True)  # the largest accepted values work
    with pytest.raises(ValueError, match="too large for the grid"):
        plan.release([0.0, np.nextafter(limit, np.inf)], rng=pc.Random(2), simulation=True)
    # clamping only on request
    out = plan.release([1e300, -1e300], rng=pc.Random(2), simulation=True, bounds=(-10.0, 10.0))
    assert np.all(np.abs(out) < 10 + 40 * plan.scale)


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: pc.release_laplace(["a"], epsilon=1.0), TypeError),
        (lambda: pc.release_laplace([True, False], epsilon=1.0), TypeError),
        (lambda: pc.release_laplace([1j], epsilon=1.0), TypeError),
        (lambda: pc.release_laplace([1.0], epsilon=-1.0), ValueError),
        (lambda: pc.release_laplace([1.0], epsilon=0.0), ValueError),
        (lambda: pc.release_laplace([1.0], epsilon=1.0, sensitivity=0.0), ValueError),
        (lambda: pc.release_laplace([1.0], epsilon=1.0, delta=1.0), ValueError),
        (lambda: pc.release_gaussian([1.0], epsilon=1.0, delta=0.0), ValueError),
        (lambda: pc.release_gaussian([1.0], epsilon=1.0, delta=float("nan")), ValueError),
        (lambda: pc.release_gaussian([1.0], epsilon=1.0, delta=1e-6, bounds=(2.0, 1.0)), ValueError),
        (lambda: pc.release_gaussian([1.0], epsilon=1.0, delta=1e-6, bounds=3.0), TypeError),
        (lambda: pc.release_gaussian([1.0], epsilon=1.0, delta=1e-6, rng=5), TypeError),
        (lambda: dsc.calibrate_laplace_release(epsilon=1.0, grid_bits=31), ValueError),
        (lambda: dsc.calibrate_laplace_release(epsilon=1.0, grid_bits=2.0), TypeError),
    ],
)
def test_bad_release_arguments(call, exc):
    with pytest.raises(exc):
        call()


@pytest.mark.parametrize("noise", [pc.Truncated(pc.Laplace(), 2.0), pc.Truncated(pc.Gaussian(), 3.0)])
def test_unsafe_families_are_refused_with_the_safe_ones_named(noise):
    with pytest.raises(dsc.ReleaseNotSupportedError, match="Laplace.*Gaussian.*Subbotin.*Logistic") as info:
        dsc.release_noise(noise, [1.0], epsilon=1.0, delta=1e-6)
    assert "release=False" in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("noise, delta", [(pc.Laplace(), 0.0), (pc.Subbotin(1), 0.0), (pc.Gaussian(), 1e-6), (pc.Subbotin(2), 1e-6),
                                          (pc.Subbotin(3.0), 1e-6), (pc.Logistic(), 1e-6)])
def test_safe_families_dispatch(noise, delta):
    out = dsc.release_noise(noise, np.zeros(10), epsilon=1.0, delta=delta, rng=pc.Random(4), simulation=True)
    assert out.shape == (10,)


# ------------------------------------------------------------------------------------------------------
# Vector queries (dimension > 1): l1 (Laplace) and l2 (Gaussian, via zCDP) with the rounding charged
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rho, eps", [(0.01, 0.1), (0.01, 5.0), (0.5, 1.0), (2.0, 0.1), (2.0, 5.0), (50.0, 100.0)])
def test_zcdp_conversion(rho, eps):
    ld, alpha = zcdp_log_delta(rho=rho, epsilon=eps)
    a = mpmath.mpf(alpha)
    ref = (a - 1) * (a * rho - eps) - mpmath.log(a - 1) + a * mpmath.log(1 - 1 / a)
    assert ld == pytest.approx(float(min(ref, 0)), rel=1e-12, abs=1e-12)  # evaluated correctly at alpha
    # near-optimal: no alpha on a dense grid does better
    grid = np.exp(np.linspace(-30, 8, 20001)) + 1
    dense = min((g - 1) * (g * rho - eps) - math.log(g - 1) + g * math.log1p(-1 / g) for g in grid)
    assert ld <= dense + 1e-9
    # valid: never below the exact profile of the continuous Gaussian, which is rho-zCDP
    exact = pc.log_privacy_profile(pc.Gaussian(), epsilon=eps, scale=1 / math.sqrt(2 * rho), sensitivity=1.0)
    assert ld >= exact - 1e-12


ZCDP_CASES = [(rho, eps) for rho in (1e-8, 1e-3, 0.05, 1.0, 30.0, 1e4) for eps in (0.0, 1e-3, 0.5, 2.0, 50.0, 1e3)]


@pytest.mark.parametrize("rho, eps", ZCDP_CASES)
def test_zcdp_log_delta_is_certified_and_optimal_against_mpmath(rho, eps):
    """The C++ routine's value is >= the exact g(alpha) at its alpha (50 digits), and within 1e-12 (relative,
    or absolute near 0) of the exact minimum over alpha, found by mpmath on the derivative."""
    ld, alpha, am1 = _core.accounting.zcdp_log_delta(rho, eps)
    assert (ld, alpha) == zcdp_log_delta(rho=rho, epsilon=eps)
    with mpmath.workdps(50):
        def g(b):  # g(alpha) at alpha - 1 = b (alpha itself can round to 1)
            return b * ((1 + b) * rho - eps) - mpmath.log(b) - (1 + b) * mpmath.log1p(1 / b)

        assert mpmath.mpf(ld) >= min(g(mpmath.mpf(am1)), 0)  # certified: rounded toward the safe side
        # the exact minimiser: g'(alpha) = (2 alpha - 1) rho - eps + log(1 - 1/alpha) = 0, in x = log(alpha - 1)
        def slope(x):
            return (1 + 2 * mpmath.exp(x)) * rho - eps - mpmath.log1p(mpmath.exp(-x))

        lo, hi = mpmath.mpf(-700), mpmath.mpf(700)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
        best = min(g(mpmath.exp(lo)), 0)
        assert mpmath.mpf(ld) >= best
        assert float(mpmath.mpf(ld) - best) <= 1e-12 * max(1.0, abs(float(best)))


def test_zcdp_log_delta_rejects_bad_arguments():
    for rho, eps in ((0.0, 1.0), (-1.0, 1.0), (math.nan, 1.0), (math.inf, 1.0), (1.0, -1.0), (1.0, math.nan), (1.0, math.inf)):
        with pytest.raises(ValueError):
            zcdp_log_delta(rho=rho, epsilon=eps)


def test_vector_laplace_l1_charge_and_pure_dp():
    plan = dsc.calibrate_laplace_release(epsilon=1.0, sensitivity=1.0, dimension=3, grid_bits=1)
    g, t = plan.grid, plan.parameter
    rng = np.random.default_rng(0)
    a = rng.uniform(-5, 5, (200_000, 3))
    step = rng.normal(size=(200_000, 3))
    b = a + step / np.abs(step).sum(axis=1, keepdims=True) * rng.uniform(0, 1, (200_000, 1)) * plan.sensitivity
    l1 = np.abs(np.rint(a / g) - np.rint(b / g)).sum(axis=1)
    assert l1.max() <= plan.shift
    assert Fraction(plan.shift) / t <= Fraction(1.0)  # the product law's largest loss is |k|_1 / t
    out = plan.release(np.zeros(3), rng=pc.Random(1), simulation=True)
    assert out.shape == (3,)
    with pytest.raises(ValueError, match="calibrated for one vector of 3"):
        plan.release(np.zeros(4), rng=pc.Random(1), simulation=True)


def _reference_laplace_vector(eps, sens, grid_bits, dim, norm):
    """(e, k, t) of the discrete Laplace vector plan in exact rational arithmetic (an independent copy of
    the rule the C++ routine implements)."""
    scale, ref = (sens / eps, sens / dim) if norm == "l1" else (dim * sens / eps, sens)
    gb = grid_bits
    e = max(math.frexp(min(scale, ref))[1] - 1 - gb, math.frexp(scale)[1] - 1 - max(gb, 38))
    d = Fraction(sens) / Fraction(2) ** e
    if norm == "l1":
        k = math.floor(d) + dim
    else:  # floor(D) + 1 per coordinate, D when D is an even integer
        k = dim * (int(d) if d.denominator == 1 and int(d) % 2 == 0 else math.floor(d) + 1)
    return e, k, math.ceil(Fraction(k) / Fraction(eps))


@pytest.mark.parametrize("norm", ["l1", "linf"])
@pytest.mark.parametrize("eps, sens, dim, grid_bits", [(1.0, 1.0, 3, 16), (0.1, 0.5, 2, 8), (3.7, 1e-3, 17, 0),
                                                       (0.25, 2.0, 1000, 16), (1e-3, 7.0, 5, 30), (50.0, 1.0, 64, 12)])
def test_vector_laplace_plan_is_the_exact_rule(norm, eps, sens, dim, grid_bits):
    plan = dsc.calibrate_laplace_release(epsilon=eps, sensitivity=sens, dimension=dim, grid_bits=grid_bits, norm=norm)
    e, k, t = _reference_laplace_vector(eps, sens, grid_bits, dim, norm)
    assert (plan.grid_exponent, plan.shift, plan.parameter, plan.delta_achieved) == (e, k, t, 0.0)
    assert Fraction(k, t) <= Fraction(eps) and (t == 1 or Fraction(k, t - 1) > Fraction(eps))


@settings(max_examples=300, deadline=None)
@given(eps=st.floats(1e-3, 1e3), sens=st.floats(1e-6, 1e6), dim=st.integers(2, 2**40), grid_bits=st.integers(0, 30),
       norm=st.sampled_from(["l1", "linf"]))
def test_vector_laplace_plan_is_the_exact_rule_everywhere(eps, sens, dim, grid_bits, norm):
    try:
        plan = dsc.calibrate_laplace_release(epsilon=eps, sensitivity=sens, dimension=dim, grid_bits=grid_bits, norm=norm)
    except pc.CalibrationError:  # t above 2**40: then the exact rule's t is too
        assert _reference_laplace_vector(eps, sens, grid_bits, dim, norm)[2] >= 2**40
        return
    e, k, t = _reference_laplace_vector(eps, sens, grid_bits, dim, norm)
    assert (plan.grid_exponent, plan.shift, plan.parameter) == (e, k, t)


def test_vector_laplace_linf_charge():
    plan = dsc.calibrate_laplace_release(epsilon=1.0, sensitivity=0.3, dimension=4, grid_bits=1, norm="linf")
    g = plan.grid
    rng = np.random.default_rng(4)
    a = rng.uniform(-5, 5, (200_000, 4))
    b = a + rng.uniform(-1, 1, (200_000, 4)) * plan.sensitivity
    assert np.abs(np.rint(a / g) - np.rint(b / g)).sum(axis=1).max() <= plan.shift
    with pytest.raises(ValueError, match="norm"):
        dsc.calibrate_laplace_release(epsilon=1.0, dimension=4, norm="l2")
    with pytest.raises(TypeError, match="norm"):
        dsc.calibrate_laplace_release(epsilon=1.0, dimension=4, norm=1)


def test_vector_gaussian_l2_charge_and_zcdp_guarantee():
    plan = dsc.calibrate_gaussian_release(epsilon=1.0, delta=1e-6, sensitivity=1.0, dimension=50)
    g, s2 = plan.grid, float(plan.parameter)
    rng = np.random.default_rng(1)
    a = rng.uniform(-5, 5, (20_000, 50))
    step = rng.normal(size=(20_000, 50))
    b = a + step / np.linalg.norm(step, axis=1, keepdims=True) * plan.sensitivity
    l2 = np.linalg.norm(np.rint(a / g) - np.rint(b / g), axis=1)
    assert l2.max() <= plan.shift
    ld, _ = zcdp_log_delta(rho=plan.shift**2 / (2 * s2), epsilon=1.0)
    assert math.exp(ld) <= 1e-6 * (1 + 1e-9)
    # conservative but not wasteful: within 15% of the exact scalar Gaussian scale
    cont = pc.minimal_scale(pc.Gaussian(), epsilon=1.0, delta=1e-6, sensitivity=1.0)
    assert cont <= plan.scale <= 1.15 * cont
    out = pc.release_gaussian(np.zeros(50), epsilon=1.0, delta=1e-6, vector=True, rng=pc.Random(2), simulation=True)
    assert out.shape == (50,)


def test_release_noise_vector_flag():
    out = dsc.release_noise(pc.Laplace(), np.zeros(4), epsilon=1.0, delta=0.0, vector=True, rng=pc.Random(3), simulation=True)
    assert out.shape == (4,)
    with pytest.raises(ValueError):
        dsc.calibrate_gaussian_release(epsilon=1.0, delta=1e-6, dimension=0)
    with pytest.raises(TypeError):
        dsc.calibrate_gaussian_release(epsilon=1.0, delta=1e-6, dimension=2.0)


# ------------------------------------------------------------------------------------------------------
# The mechanisms' release=True default goes through this path
# ------------------------------------------------------------------------------------------------------
def test_mechanisms_release_by_default_on_the_grid():
    m = pc.GaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=1.0)
    plan = dsc.calibrate_gaussian_release(epsilon=1.0, delta=1e-6, sensitivity=1.0)
    y = m.privatize(0.3, rng=pc.Random(5), simulation=True)
    assert y == plan.release(0.3, rng=pc.Random(5), simulation=True)  # the same plan and stream: the release path
    vec = pc.LaplaceMechanism(epsilon=1.0).privatize(np.zeros(8), rng=pc.Random(6), simulation=True)
    vplan = dsc.calibrate_laplace_release(epsilon=1.0, sensitivity=1.0, dimension=8)
    assert np.array_equal(vec, vplan.release(np.zeros(8), rng=pc.Random(6), simulation=True))  # arrays: one l1 vector query
    k = vec / vplan.grid
    assert np.array_equal(k, np.round(k))


@pytest.mark.parametrize("mech", [pc.LogisticMechanism(epsilon=1.0), pc.SubbotinMechanism(3.0, epsilon=1.0, delta=1e-6)])
def test_lattice_mechanisms_release_and_simulate_on_request(mech):
    # (the Logistic at delta = 0: the pure-DP table with its geometric tail)
    out = mech.privatize(0.0, rng=pc.Random(1), simulation=True)
    assert out * 2**16 == np.round(out * 2**16)
    vec = mech.privatize(np.zeros(3), rng=pc.Random(1), simulation=True)  # one l_inf vector query
    assert vec.shape == (3,) and np.array_equal(vec * 2**16, np.round(vec * 2**16))
    assert mech.privatize(np.zeros(3), rng=pc.Random(1), simulation=True, release=False).shape == (3,)
    assert mech.simulate(1.0, rng=pc.Random(1)) == mech.privatize(1.0, rng=pc.Random(1), release=False)


# ------------------------------------------------------------------------------------------------------
# Property-based: every calibration meets its target and is minimal on its grid
# ------------------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    eps=st.floats(1e-3, 20.0),
    log10_delta=st.floats(-12.0, -2.0),
    sens=st.floats(1e-3, 1e3),
)
def test_gaussian_calibration_property(eps, log10_delta, sens):
    delta = 10.0**log10_delta
    plan = dsc.calibrate_gaussian_release(epsilon=eps, delta=delta, sensitivity=sens)
    assert dsc.discrete_gaussian_delta(epsilon=eps, sigma2=plan.parameter, shift=plan.shift) <= delta
    assert dsc.discrete_gaussian_delta(epsilon=eps, sigma2=plan.parameter - 1, shift=plan.shift) > delta * (1 - 1e-12)
    assert plan.shift <= math.ldexp(sens, -plan.grid_exponent) + 1
    assert plan.scale >= pc.minimal_scale(pc.Gaussian(), epsilon=eps, delta=delta, sensitivity=sens) * (1 - 1e-9)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(1e-3, 20.0), delta=st.sampled_from([0.0, 1e-9, 1e-4, 0.05]), sens=st.floats(1e-3, 1e3))
def test_laplace_calibration_property(eps, delta, sens):
    plan = dsc.calibrate_laplace_release(epsilon=eps, sensitivity=sens, delta=delta)
    t = plan.parameter
    assert dsc.discrete_laplace_delta(epsilon=eps, t=t, shift=plan.shift) <= delta
    if t > 1 and delta == 0:
        # Pure DP needs t >= shift / eps exactly (in rationals): one step less must violate it, even where
        # the floating-point profile rounds shift / (t - 1) down onto eps and reports 0.
        assert Fraction(plan.shift) / Fraction(eps) > t - 1
    elif t > 1:
        assert dsc.discrete_laplace_delta(epsilon=eps, t=t - 1, shift=plan.shift) > delta * (1 - 1e-12)


def test_the_former_name_of_the_refusal_warns():
    with pytest.warns(DeprecationWarning, match="ReleaseNotSupportedError"):
        assert dsc.ReleaseNotSupported is dsc.ReleaseNotSupportedError
    assert issubclass(dsc.ReleaseNotSupportedError, ValueError)
