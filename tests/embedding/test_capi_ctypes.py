"""The C ABI's shared library (libpydp_capi.so.<ABI> in pydp_core.get_library_dir()) from Python
through ctypes, as an FFI client would use it: releases, the PLD and the generator give the Python API's values bit for bit for one key,
and every entry point answers NULLs, zero and huge sizes and NaN with an error code and a message."""
from __future__ import annotations

import ctypes as C
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support import downstream as ds

import pydp_core as dp
from pydp_core import _core, release
from pydp_core.accounting.pld import PLD
from pydp_core.random import Random

LAPLACE, GAUSSIAN, LOGISTIC, SUBBOTIN = 0, 1, 2, 3
OK, ERR_NULL, ERR_INVALID = 0, 1, 2
D, U64, I, P = C.c_double, C.c_uint64, C.c_int, C.c_void_p
DP = C.POINTER(C.c_double)
PP = C.POINTER(C.c_void_p)
HUGE = 1 << 40  # above PYDP_MAX_ELEMENTS: refused before any memory is touched
ERR_NO_FINITE_SCALE = 3


class GridPlan(C.Structure):
    """pydp_grid_plan of capi.h."""

    _fields_ = [("num", U64), ("den", U64), ("grid_exponent", C.c_int), ("shift", U64), ("delta_achieved", C.c_double)]


PLAN = C.POINTER(GridPlan)


class LatticePlan(C.Structure):
    """pydp_lattice_plan of capi.h."""

    _fields_ = [("s", U64), ("weight_bits", C.c_int), ("grid_exponent", C.c_int), ("shift", U64),
                ("delta_achieved", C.c_double), ("table_half", U64)]

class VectorPlan(C.Structure):
    """pydp_vector_plan of capi.h."""

    _fields_ = [("mechanism", C.c_int), ("norm", C.c_int), ("dimension", U64), ("num", U64), ("den", U64),
                ("grid_exponent", C.c_int), ("shift", U64), ("delta_achieved", C.c_double)]


VPLAN = C.POINTER(VectorPlan)
NORM_L1, NORM_LINF, NORM_L2 = 0, 1, 2
NORMS = {NORM_L1: "l1", NORM_LINF: "linf"}

SIGNATURES = {
    "pydp_rng_new": [C.c_char_p, U64, PP],
    "pydp_rng_fill_u64": [P, C.POINTER(U64), C.c_size_t],
    "pydp_rng_normal": [P, D, D, DP, C.c_size_t, C.c_uint],
    "pydp_release_laplace": [P, U64, U64, I, D, D, DP, DP, C.c_size_t, C.c_uint],
    "pydp_release_gaussian": [P, U64, U64, I, D, D, DP, DP, C.c_size_t, C.c_uint],
    "pydp_release_lattice": [P, I, D, U64, I, I, I, D, D, DP, DP, C.c_size_t, C.c_uint],
    "pydp_keyed_release_laplace": [P, C.POINTER(U64), U64, U64, I, DP, DP, C.c_size_t, C.c_uint],
    "pydp_keyed_release_gaussian": [P, C.POINTER(U64), U64, U64, I, DP, DP, C.c_size_t, C.c_uint],
    "pydp_pld_from_noise": [I, D, D, D, D, I, D, PP],
    "pydp_pld_compose": [P, P, PP],
    "pydp_pld_self_compose": [P, U64, PP],
    "pydp_pld_delta": [P, D, DP, DP],
    "pydp_pld_epsilon": [P, D, DP, DP],
    "pydp_pld_steps": [P, C.POINTER(U64)],
    "pydp_pld_calibrate": [I, D, D, D, D, U64, D, I, D, DP],
    "pydp_minimal_scale": [I, D, D, D, D, DP],
    "pydp_calibrate_laplace_release": [D, D, D, I, PLAN],
    "pydp_calibrate_gaussian_release": [D, D, D, I, PLAN],
    "pydp_calibrate_lattice_release": [I, D, D, D, D, I, I, C.POINTER(LatticePlan)],
    "pydp_release_pure_logistic": [P, U64, I, I, D, D, DP, DP, C.c_size_t, C.c_uint],
    "pydp_pure_logistic_epsilon": [U64, I, U64, DP],
    "pydp_release_calibrate_laplace_vector": [D, D, D, I, U64, I, VPLAN],
    "pydp_release_vector": [P, VPLAN, D, D, DP, DP, C.c_size_t, C.c_uint],
    "pydp_release_calibrate_gaussian_vector": [D, D, D, U64, I, VPLAN],
    "pydp_zcdp_log_delta": [D, D, DP, DP],
}


@pytest.fixture(scope="module")
def lib() -> C.CDLL:
    """The imported package's shared library (in CI the installed package's copy)."""
    so = Path(dp.get_library_dir()) / ds.CAPI_SHARED  # the soname carries PYDP_ABI_VERSION
    lib = C.CDLL(str(so))
    for name, args in SIGNATURES.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = C.c_int
    lib.pydp_last_error.restype = C.c_char_p
    lib.pydp_version.restype = C.c_char_p
    lib.pydp_pld_free.argtypes = [P]
    lib.pydp_rng_free.argtypes = [P]
    return lib


def _dp(a: np.ndarray):
    return a.ctypes.data_as(DP)


def _rng(lib) -> C.c_void_p:
    h = C.c_void_p()
    assert lib.pydp_rng_new(ds.KEY, 0, C.byref(h)) == OK
    return h


def _py_rng() -> Random:
    return Random._wrap(_core.random.Generator(ds.KEY, 0), 1, True)


def test_versions(lib):
    assert lib.pydp_version().decode() == dp.__version__
    header = (Path(dp.get_include()) / "pydp" / "capi.h").read_text()
    assert f"#define PYDP_ABI_VERSION {lib.pydp_abi_version()}\n" in header


@pytest.mark.parametrize("threads", [1, 3])
def test_releases_match_the_python_plans(lib, threads):
    x = np.linspace(-50.0, 80.0, 3000)
    plans = {
        "laplace": release.calibrate_laplace_release(epsilon=1.0, sensitivity=2.0),
        "gaussian": release.calibrate_gaussian_release(epsilon=0.5, delta=1e-6),
        "subbotin": release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6),
        "logistic": release.calibrate_logistic_release(epsilon=1.0, delta=1e-6, timing_stable=True),
    }
    rng, py = _rng(lib), _py_rng()
    try:
        for name, plan in plans.items():
            want = plan.release(x, rng=py, bounds=(-40.0, 70.0), simulation=True)
            got = np.empty_like(x)
            e, p = plan.grid_exponent, plan.parameter
            if name in ("laplace", "gaussian"):
                fn = lib.pydp_release_laplace if name == "laplace" else lib.pydp_release_gaussian
                rc = fn(rng, p.numerator, p.denominator, e, -40.0, 70.0, _dp(x), _dp(got), x.size, threads)
            else:
                fam, r = (SUBBOTIN, plan.r) if name == "subbotin" else (LOGISTIC, 0.0)
                rc = lib.pydp_release_lattice(rng, fam, r, int(p), plan.weight_bits, int(plan.timing_stable), e,
                                              -40.0, 70.0, _dp(x), _dp(got), x.size, threads)
            assert rc == OK, lib.pydp_last_error()
            assert lib.pydp_last_error() == b""
            np.testing.assert_array_equal(got, want, err_msg=name)
    finally:
        lib.pydp_rng_free(rng)


def _u64(a: np.ndarray):
    return a.ctypes.data_as(C.POINTER(U64))


def test_keyed_releases_match_one_value_releases_of_the_streams(lib):
    plans = {"laplace": release.calibrate_laplace_release(epsilon=1.0),
             "gaussian": release.calibrate_gaussian_release(epsilon=1.0, delta=1e-6)}
    streams = np.array([7, 0, 123456789, 2**63, 7, 42] * 100, dtype=np.uint64)
    x = np.linspace(-3.0, 9.0, streams.size)
    rng = _rng(lib)
    try:
        for name, plan in plans.items():
            fn = lib.pydp_keyed_release_laplace if name == "laplace" else lib.pydp_keyed_release_gaussian
            p, got = plan.parameter, np.empty_like(x)
            rc = fn(rng, _u64(streams), p.numerator, p.denominator, plan.grid_exponent, _dp(x), _dp(got), x.size, 2)
            assert rc == OK, lib.pydp_last_error()
            base = _py_rng()
            for j in (0, 1, 2, 3, 4, 599):  # group j: a one-value release from Random(key).stream(streams[j])
                want = plan.release(x[j:j + 1], rng=base.stream(int(streams[j])), simulation=True)
                assert got[j] == want[0], (name, j)
            # The same noise for the same stream id (groups 0 and 4 share stream 7), any thread count.
            again = np.empty_like(x)
            fn(rng, _u64(streams), p.numerator, p.denominator, plan.grid_exponent, _dp(x), _dp(again), x.size, 1)
            np.testing.assert_array_equal(again, got)
    finally:
        lib.pydp_rng_free(rng)


def _c_pld(lib, family, r, scale, q, neighbours, h, k):
    one, many = C.c_void_p(), C.c_void_p()
    assert lib.pydp_pld_from_noise(family, r, scale, 1.0, q, neighbours, h, C.byref(one)) == OK, lib.pydp_last_error()
    assert lib.pydp_pld_self_compose(one, k, C.byref(many)) == OK
    lib.pydp_pld_free(one)
    return many


def _interval(lib, fn, pld, x):
    lo, up = D(), D()
    assert fn(pld, x, C.byref(lo), C.byref(up)) == OK, lib.pydp_last_error()
    return lo.value, up.value


def test_pld_matches_the_python_pld(lib):
    h = 1e-3
    gauss = PLD.from_noise(dp.Gaussian(), scale=1.0, sampling_rate=0.01).with_discretization(value_step=h)
    lap = PLD.from_noise(dp.Laplace(), scale=2.0, sampling_rate=0.1).with_discretization(value_step=h)
    sub = PLD.from_noise(dp.Subbotin(1.5), scale=3.0, neighbours="substitution").with_discretization(value_step=h)
    cases = [
        (gauss.self_compose(200), _c_pld(lib, GAUSSIAN, 0.0, 1.0, 0.01, 0, h, 200)),
        # The Python PLD lowers a Laplace's step slightly (PLD.value_step); C takes that step as given.
        (lap.self_compose(5), _c_pld(lib, LAPLACE, 0.0, 2.0, 0.1, 0, lap.self_compose(5).value_step, 5)),
        (sub.self_compose(3), _c_pld(lib, SUBBOTIN, 1.5, 3.0, 1.0, 1, h, 3)),
    ]
    both = C.c_void_p()
    assert lib.pydp_pld_compose(cases[0][1], cases[2][1], C.byref(both)) == OK
    cases.append((gauss.self_compose(200).compose(sub.self_compose(3)), both))
    try:
        for py, c in cases:
            steps = U64()
            assert lib.pydp_pld_steps(c, C.byref(steps)) == OK and steps.value == py.steps
            for eps in (0.0, 0.5, 2.0, 30.0):
                assert _interval(lib, lib.pydp_pld_delta, c, eps) == tuple(py.delta(eps)), (py, eps)
            for delta in (0.0, 1e-9, 1e-5, 0.3):
                assert _interval(lib, lib.pydp_pld_epsilon, c, delta) == tuple(py.epsilon(delta)), (py, delta)
    finally:
        for _, c in cases:
            lib.pydp_pld_free(c)


def test_pld_calibrate_is_certified_and_near_minimal(lib):
    scale = D()
    rc = lib.pydp_pld_calibrate(GAUSSIAN, 0.0, 1.0, 1e-5, 1.0, 50, 0.05, 0, 2e-3, C.byref(scale))
    assert rc == OK, lib.pydp_last_error()
    pld = PLD.from_noise(dp.Gaussian(), scale=scale.value, sampling_rate=0.05).with_discretization(value_step=2e-3)
    assert pld.self_compose(50).delta(1.0).upper <= 1e-5
    smaller = PLD.from_noise(dp.Gaussian(), scale=scale.value * (1 - 2e-6), sampling_rate=0.05)
    assert smaller.with_discretization(value_step=2e-3).self_compose(50).delta(1.0).upper > 1e-5


# (epsilon, delta, sensitivity, grid_bits): pure and approximate DP, coarse and fine grids, epsilon = 0.
LAPLACE_CASES = [(1.0, 0.0, 1.0, 16), (0.5, 1e-6, 3.0, 16), (2.0, 1e-9, 0.7, 10), (0.0, 1e-3, 1.0, 16),
                 (1e-3, 0.0, 1.0, 16), (5.0, 0.2, 1e-3, 0), (0.3, 0.0, 1e5, 30)]
GAUSSIAN_CASES = [(1.0, 1e-6, 1.0, 16), (0.5, 1e-10, 2.5, 16), (3.0, 1e-5, 0.1, 8), (0.0, 1e-3, 1.0, 16),
                  (10.0, 1e-300, 1.0, 16), (0.05, 0.3, 7.0, 0)]


def _c_plan(lib, mechanism: str, eps: float, delta: float, sens: float, bits: int) -> GridPlan:
    plan = GridPlan()
    fn = lib.pydp_calibrate_laplace_release if mechanism == "laplace" else lib.pydp_calibrate_gaussian_release
    assert fn(eps, delta, sens, bits, C.byref(plan)) == OK, lib.pydp_last_error()
    assert lib.pydp_last_error() == b""
    return plan


@pytest.mark.parametrize("mechanism, case", [("laplace", c) for c in LAPLACE_CASES] + [("gaussian", c) for c in GAUSSIAN_CASES])
def test_release_calibration_is_the_python_plan(lib, mechanism, case):
    """pydp_calibrate_*_release gives calibrate_*_release's plan bit for bit, and the plan is certified:
    the exact profile at num meets delta within the margin (pure: k / t <= epsilon exactly), num - 1 fails."""
    eps, delta, sens, bits = case
    got = _c_plan(lib, mechanism, eps, delta, sens, bits)
    calibrate = release.calibrate_laplace_release if mechanism == "laplace" else release.calibrate_gaussian_release
    want = calibrate(epsilon=eps, delta=delta, sensitivity=sens, grid_bits=bits)
    assert (got.num, got.den) == (want.parameter.numerator, want.parameter.denominator)
    assert (got.grid_exponent, got.shift, got.delta_achieved) == (want.grid_exponent, want.shift, want.delta_achieved)
    log_target = math.log(delta) + math.log1p(-1e-12) if delta > 0 else -math.inf
    k = float(got.shift)

    def passes(n: int) -> bool:
        if mechanism == "gaussian":
            return _core.release.dgauss_log_delta(eps, float(n), k) <= log_target
        return Fraction(got.shift, n) <= Fraction(eps) or _core.release.dlaplace_log_delta(eps, 1.0 / n, k) <= log_target

    assert passes(got.num) and (got.num == 1 or not passes(got.num - 1))
    assert got.delta_achieved <= delta


def test_plan_from_c_releases_what_the_python_plan_releases(lib):
    x = np.linspace(-20.0, 20.0, 2000)
    rng, py = _rng(lib), _py_rng()
    try:
        for mechanism, fn in (("laplace", lib.pydp_release_laplace), ("gaussian", lib.pydp_release_gaussian)):
            plan = _c_plan(lib, mechanism, 0.7, 1e-7, 2.0, 16)
            got = np.empty_like(x)
            assert fn(rng, plan.num, plan.den, plan.grid_exponent, -math.inf, math.inf, _dp(x), _dp(got), x.size, 2) == OK
            calibrate = release.calibrate_laplace_release if mechanism == "laplace" else release.calibrate_gaussian_release
            want = calibrate(epsilon=0.7, delta=1e-7, sensitivity=2.0).release(x, rng=py, simulation=True)
            np.testing.assert_array_equal(got, want, err_msg=mechanism)
    finally:
        lib.pydp_rng_free(rng)


# (family, r, epsilon, delta, sensitivity, grid_bits or None: automatic, timing_stable): the automatic
# grid, a chosen grid, small epsilon (a refined grid), the timing-stable automatic grid.
LATTICE_CASES = [(SUBBOTIN, 1.5, 1.0, 1e-6, 1.0, None, False), (SUBBOTIN, 3.0, 0.5, 1e-9, 2.0, 10, False),
                 (LOGISTIC, 0.0, 1.0, 1e-9, 1.0, None, False), (LOGISTIC, 0.0, 1.0, 1e-6, 1.0, None, True),
                 (SUBBOTIN, 2.5, 0.1, 1e-5, 1.0, None, False), (SUBBOTIN, 1.0, 2.0, 1e-3, 3.0, 4, True)]


@pytest.mark.parametrize("case", LATTICE_CASES)
def test_lattice_calibration_is_the_python_plan(lib, case):
    family, r, eps, delta, sens, bits, stable = case
    got = LatticePlan()
    rc = lib.pydp_calibrate_lattice_release(family, r, eps, delta, sens, -1 if bits is None else bits, int(stable), C.byref(got))
    assert rc == OK, lib.pydp_last_error()
    if family == SUBBOTIN:
        want = release.calibrate_subbotin_release(r=r, epsilon=eps, delta=delta, sensitivity=sens, grid_bits=bits, timing_stable=stable)
    else:
        want = release.calibrate_logistic_release(epsilon=eps, delta=delta, sensitivity=sens, grid_bits=bits, timing_stable=stable)
    assert (got.s, got.weight_bits, got.grid_exponent, got.shift) == (want.parameter, want.weight_bits, want.grid_exponent, want.shift)
    assert (got.delta_achieved, got.table_half) == (want.delta_achieved, want.table.half_size)
    assert got.delta_achieved <= delta


# (epsilon, sensitivity, grid_bits or None: automatic) of pure-DP (delta = 0) Logistic plans: the default,
# small and large epsilon (a refined grid for the small one), a chosen coarse grid, a non-unit sensitivity.
PURE_LOGISTIC_CASES = [(1.0, 1.0, None), (0.1, 1.0, None), (3.0, 2.5, None), (0.5, 1.0, 6), (1.7, 0.3, 12)]


def _pure_plan(lib, eps: float, sens: float, bits: int | None) -> LatticePlan:
    got = LatticePlan()
    rc = lib.pydp_calibrate_lattice_release(LOGISTIC, 0.0, eps, 0.0, sens, -1 if bits is None else bits, 0, C.byref(got))
    assert rc == OK, lib.pydp_last_error()
    assert lib.pydp_last_error() == b""
    return got


@pytest.mark.parametrize("case", PURE_LOGISTIC_CASES)
def test_pure_logistic_calibration_is_the_python_plan(lib, case):
    eps, sens, bits = case
    got = _pure_plan(lib, eps, sens, bits)
    want = release.calibrate_logistic_release(epsilon=eps, delta=0.0, sensitivity=sens, grid_bits=bits)
    assert isinstance(want, release.PureLogisticRelease)
    assert (got.s, got.weight_bits, got.grid_exponent, got.shift) == (want.parameter, want.weight_bits, want.grid_exponent, want.shift)
    assert (got.delta_achieved, got.table_half) == (0.0, want.table.half_size)
    achieved = D()
    assert lib.pydp_pure_logistic_epsilon(got.s, got.weight_bits, got.shift, C.byref(achieved)) == OK
    assert achieved.value == want.epsilon_achieved <= eps
    # s is the smallest passing scale: one grid step less fails.
    if got.s > 1:
        assert lib.pydp_pure_logistic_epsilon(got.s - 1, got.weight_bits, got.shift, C.byref(achieved)) == OK
        assert achieved.value > eps


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("key", [ds.KEY, bytes(range(32))])
def test_pure_logistic_release_is_the_python_release(lib, key, threads):
    x = np.linspace(-30.0, 30.0, 2500)
    h = C.c_void_p()
    assert lib.pydp_rng_new(key, 0, C.byref(h)) == OK
    py = Random._wrap(_core.random.Generator(key, 0), 1, True)
    try:
        for eps, sens, bits in PURE_LOGISTIC_CASES[:4]:
            plan = _pure_plan(lib, eps, sens, bits)
            want = release.calibrate_logistic_release(epsilon=eps, delta=0.0, sensitivity=sens, grid_bits=bits).release(
                x, rng=py, bounds=(-25.0, 25.0), simulation=True)
            got = np.empty_like(x)
            rc = lib.pydp_release_pure_logistic(h, plan.s, plan.weight_bits, plan.grid_exponent, -25.0, 25.0, _dp(x),
                                                _dp(got), x.size, threads)
            assert rc == OK, lib.pydp_last_error()
            np.testing.assert_array_equal(got, want, err_msg=str((eps, sens, bits)))
        # The tail is reached: some noise exceeds the table's half size (the law is not the truncated table's).
        plan = _pure_plan(lib, 1.0, 1.0, 0)
        zeros, got = np.zeros(20000), np.empty(20000)
        assert lib.pydp_release_pure_logistic(h, plan.s, plan.weight_bits, 0, -math.inf, math.inf, _dp(zeros), _dp(got),
                                              zeros.size, 1) == OK
        assert np.abs(got).max() > plan.table_half
    finally:
        lib.pydp_rng_free(h)


def test_pure_logistic_bad_input_is_an_error(lib):
    nan, inf = math.nan, math.inf
    plan = LatticePlan(7, 7, 7, 7, 7.0, 7)
    for what, args, code in (
            ("zero epsilon", (LOGISTIC, 0.0, 0.0, 0.0, 1.0, -1, 0, C.byref(plan)), ERR_INVALID),
            ("negative epsilon", (LOGISTIC, 0.0, -1.0, 0.0, 1.0, -1, 0, C.byref(plan)), ERR_INVALID),
            ("NaN epsilon", (LOGISTIC, 0.0, nan, 0.0, 1.0, -1, 0, C.byref(plan)), ERR_INVALID),
            ("inf epsilon", (LOGISTIC, 0.0, inf, 0.0, 1.0, -1, 0, C.byref(plan)), ERR_INVALID),
            ("NaN sensitivity", (LOGISTIC, 0.0, 1.0, 0.0, nan, -1, 0, C.byref(plan)), ERR_INVALID),
            ("timing-stable", (LOGISTIC, 0.0, 1.0, 0.0, 1.0, -1, 1, C.byref(plan)), ERR_INVALID),
            ("grid_bits 31", (LOGISTIC, 0.0, 1.0, 0.0, 1.0, 31, 0, C.byref(plan)), ERR_INVALID),
            ("NULL plan", (LOGISTIC, 0.0, 1.0, 0.0, 1.0, -1, 0, None), ERR_NULL),
            ("huge scale", (LOGISTIC, 0.0, 1e-9, 0.0, 1.0, 30, 0, C.byref(plan)), None)):
        rc = lib.pydp_calibrate_lattice_release(*args)
        assert rc != OK and (code is None or rc == code), (what, rc)
        assert lib.pydp_last_error(), what
        assert (plan.s, plan.weight_bits, plan.delta_achieved) == (7, 7, 7.0), what  # untouched
    with pytest.raises(ValueError):
        release.calibrate_logistic_release(epsilon=1.0, delta=0.0, timing_stable=True)
    rng, buf, out, v = _rng(lib), np.zeros(4), np.zeros(4), D()
    try:
        for what, call, code in (
                ("NULL rng", lambda: lib.pydp_release_pure_logistic(None, 10, 40, -10, -inf, inf, _dp(buf), _dp(out), 4, 1), ERR_NULL),
                ("NULL x", lambda: lib.pydp_release_pure_logistic(rng, 10, 40, -10, -inf, inf, None, _dp(out), 4, 1), ERR_NULL),
                ("s = 0", lambda: lib.pydp_release_pure_logistic(rng, 0, 40, -10, -inf, inf, _dp(buf), _dp(out), 4, 1), ERR_INVALID),
                ("s = 2^41", lambda: lib.pydp_release_pure_logistic(rng, 1 << 41, 40, -10, -inf, inf, _dp(buf), _dp(out), 4, 1), ERR_INVALID),
                ("bits 12", lambda: lib.pydp_release_pure_logistic(rng, 10, 12, -10, -inf, inf, _dp(buf), _dp(out), 4, 1), ERR_INVALID),
                ("bits too heavy", lambda: lib.pydp_release_pure_logistic(rng, 10, 62, -10, -inf, inf, _dp(buf), _dp(out), 4, 1), ERR_INVALID),
                ("huge n", lambda: lib.pydp_release_pure_logistic(rng, 10, 40, -10, -inf, inf, _dp(buf), _dp(out), HUGE, 1), ERR_INVALID),
                ("NaN low", lambda: lib.pydp_release_pure_logistic(rng, 10, 40, -10, nan, inf, _dp(buf), _dp(out), 4, 1), ERR_INVALID),
                ("epsilon NULL", lambda: lib.pydp_pure_logistic_epsilon(10, 40, 1, None), ERR_NULL),
                ("epsilon shift 0", lambda: lib.pydp_pure_logistic_epsilon(10, 40, 0, C.byref(v)), ERR_INVALID),
                ("epsilon s = 0", lambda: lib.pydp_pure_logistic_epsilon(0, 40, 1, C.byref(v)), ERR_INVALID)):
            assert call() == code, what
            assert lib.pydp_last_error(), what
    finally:
        lib.pydp_rng_free(rng)


def test_release_calibration_without_a_finite_scale_is_an_error(lib):
    plan = GridPlan(7, 7, 7, 7, 7.0)
    assert lib.pydp_calibrate_gaussian_release(1.0, 0.0, 1.0, 16, C.byref(plan)) == ERR_NO_FINITE_SCALE
    assert "delta > 0" in lib.pydp_last_error().decode()
    assert lib.pydp_calibrate_laplace_release(0.0, 0.0, 1.0, 16, C.byref(plan)) == ERR_NO_FINITE_SCALE
    assert "infinite scale" in lib.pydp_last_error().decode()
    assert (plan.num, plan.den, plan.grid_exponent, plan.shift, plan.delta_achieved) == (7, 7, 7, 7, 7.0)  # untouched
    assert lib.pydp_calibrate_lattice_release(SUBBOTIN, 2.0, 1.0, 0.0, 1.0, -1, 0, C.byref(LatticePlan())) == ERR_NO_FINITE_SCALE
    assert "delta must be > 0" in lib.pydp_last_error().decode()
    with pytest.raises(ValueError):
        release.calibrate_gaussian_release(epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError):
        release.calibrate_laplace_release(epsilon=0.0, delta=0.0)


def _calls(lib, rng, pld, buf, out):
    """(name, thunk) pairs: each call is invalid (a NULL, a zero or huge count, a NaN, a bad code)."""
    nan, inf = math.nan, math.inf
    lo, up, v = D(), D(), D()
    h = C.c_void_p()
    steps = U64()
    words = (U64 * 4)()
    plan, lattice = GridPlan(), LatticePlan()
    vplan = VectorPlan()
    assert lib.pydp_release_calibrate_laplace_vector(1.0, 0.0, 1.0, NORM_L1, 2, 16, C.byref(vplan)) == OK
    bad_plans = {"dimension 0": VectorPlan(0, 0, 0, 1, 1, -10, 1, 0.0), "dimension 2^41": VectorPlan(0, 0, 1 << 41, 1, 1, -10, 1, 0.0),
                 "mechanism 7": VectorPlan(7, 0, 2, 1, 1, -10, 1, 0.0), "t = 0": VectorPlan(0, 0, 2, 0, 1, -10, 1, 0.0),
                 "grid 2000": VectorPlan(0, 0, 2, 1, 1, 2000, 1, 0.0), "sigma2 = 0": VectorPlan(1, 2, 2, 0, 1, -10, 1, 0.0)}
    vcalls = [(f"vector plan {what}", lambda p=p: lib.pydp_release_vector(rng, C.byref(p), -inf, inf, _dp(buf), _dp(out), 2, 1))
              for what, p in bad_plans.items()]
    return [
        *vcalls,
        ("vector NULL rng", lambda: lib.pydp_release_vector(None, C.byref(vplan), -inf, inf, _dp(buf), _dp(out), 2, 1)),
        ("vector NULL plan", lambda: lib.pydp_release_vector(rng, None, -inf, inf, _dp(buf), _dp(out), 2, 1)),
        ("vector NULL x", lambda: lib.pydp_release_vector(rng, C.byref(vplan), -inf, inf, None, _dp(out), 2, 1)),
        ("vector NULL out", lambda: lib.pydp_release_vector(rng, C.byref(vplan), -inf, inf, _dp(buf), None, 2, 1)),
        ("vector huge", lambda: lib.pydp_release_vector(rng, C.byref(vplan), -inf, inf, _dp(buf), _dp(out), HUGE, 1)),
        ("vector 2^64 - 1 rows", lambda: lib.pydp_release_vector(rng, C.byref(vplan), -inf, inf, _dp(buf), _dp(out), 2**64 - 1, 1)),
        ("vector NaN low", lambda: lib.pydp_release_vector(rng, C.byref(vplan), nan, inf, _dp(buf), _dp(out), 2, 1)),
        ("vector NaN value", lambda: lib.pydp_release_vector(rng, C.byref(vplan), -inf, inf, _dp(np.full(4, nan)), _dp(out), 2, 1)),
        *[(f"calibrate_laplace_vector {what}", lambda a=args: lib.pydp_release_calibrate_laplace_vector(*a)) for what, args in (
            ("NaN epsilon", (nan, 0.0, 1.0, NORM_L1, 3, 16, C.byref(vplan))),
            ("inf epsilon", (inf, 0.0, 1.0, NORM_L1, 3, 16, C.byref(vplan))),
            ("NaN delta", (1.0, nan, 1.0, NORM_L1, 3, 16, C.byref(vplan))),
            ("NaN sensitivity", (1.0, 0.0, nan, NORM_L1, 3, 16, C.byref(vplan))),
            ("zero sensitivity", (1.0, 0.0, 0.0, NORM_LINF, 3, 16, C.byref(vplan))),
            ("norm l2", (1.0, 0.0, 1.0, NORM_L2, 3, 16, C.byref(vplan))),
            ("norm 9", (1.0, 0.0, 1.0, 9, 3, 16, C.byref(vplan))),
            ("dimension 0", (1.0, 0.0, 1.0, NORM_L1, 0, 16, C.byref(vplan))),
            ("dimension 2^40 + 1", (1.0, 0.0, 1.0, NORM_L1, (1 << 40) + 1, 16, C.byref(vplan))),
            ("dimension 2^64 - 1", (1.0, 0.0, 1.0, NORM_L1, 2**64 - 1, 16, C.byref(vplan))),
            ("grid_bits 31", (1.0, 0.0, 1.0, NORM_L1, 3, 31, C.byref(vplan))),
            ("NULL plan", (1.0, 0.0, 1.0, NORM_L1, 3, 16, None)))],
        *[(f"calibrate_gaussian_vector {what}", lambda a=args: lib.pydp_release_calibrate_gaussian_vector(*a)) for what, args in (
            ("NaN epsilon", (nan, 1e-6, 1.0, 3, 16, C.byref(vplan))),
            ("inf epsilon", (inf, 1e-6, 1.0, 3, 16, C.byref(vplan))),
            ("NaN delta", (1.0, nan, 1.0, 3, 16, C.byref(vplan))),
            ("delta 1", (1.0, 1.0, 1.0, 3, 16, C.byref(vplan))),
            ("NaN sensitivity", (1.0, 1e-6, nan, 3, 16, C.byref(vplan))),
            ("dimension 0", (1.0, 1e-6, 1.0, 0, 16, C.byref(vplan))),
            ("dimension 2^64 - 1", (1.0, 1e-6, 1.0, 2**64 - 1, 16, C.byref(vplan))),
            ("grid_bits 31", (1.0, 1e-6, 1.0, 3, 31, C.byref(vplan))),
            ("NULL plan", (1.0, 1e-6, 1.0, 3, 16, None)))],
        *[(f"zcdp_log_delta {what}", lambda a=args: lib.pydp_zcdp_log_delta(*a)) for what, args in (
            ("NaN rho", (nan, 1.0, C.byref(v), None)), ("zero rho", (0.0, 1.0, C.byref(v), None)),
            ("inf rho", (inf, 1.0, C.byref(v), None)), ("NaN epsilon", (1.0, nan, C.byref(v), None)),
            ("negative epsilon", (1.0, -1.0, C.byref(v), None)), ("NULL log_delta", (1.0, 1.0, None, None)))],
        ("rng_new NULL key", lambda: lib.pydp_rng_new(None, 0, C.byref(h))),
        ("rng_new NULL out", lambda: lib.pydp_rng_new(ds.KEY, 0, None)),
        ("fill_u64 NULL rng", lambda: lib.pydp_rng_fill_u64(None, words, 4)),
        ("fill_u64 NULL out", lambda: lib.pydp_rng_fill_u64(rng, None, 4)),
        ("fill_u64 huge", lambda: lib.pydp_rng_fill_u64(rng, words, HUGE)),
        ("normal NaN scale", lambda: lib.pydp_rng_normal(rng, 0.0, nan, _dp(out), 4, 1)),
        ("normal huge", lambda: lib.pydp_rng_normal(rng, 0.0, 1.0, _dp(out), HUGE, 1)),
        ("normal NULL out", lambda: lib.pydp_rng_normal(rng, 0.0, 1.0, None, 4, 1)),
        ("laplace NULL rng", lambda: lib.pydp_release_laplace(None, 1, 1, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("laplace NULL x", lambda: lib.pydp_release_laplace(rng, 1, 1, -10, -inf, inf, None, _dp(out), 4, 1)),
        ("laplace NULL out", lambda: lib.pydp_release_laplace(rng, 1, 1, -10, -inf, inf, _dp(buf), None, 4, 1)),
        ("laplace huge", lambda: lib.pydp_release_laplace(rng, 1, 1, -10, -inf, inf, _dp(buf), _dp(out), HUGE, 1)),
        ("laplace t = 0", lambda: lib.pydp_release_laplace(rng, 0, 1, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("laplace zero denominator", lambda: lib.pydp_release_laplace(rng, 1, 0, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("laplace NaN low", lambda: lib.pydp_release_laplace(rng, 1, 1, -10, nan, inf, _dp(buf), _dp(out), 4, 1)),
        ("laplace grid", lambda: lib.pydp_release_laplace(rng, 1, 1, 2000, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("laplace NaN value", lambda: lib.pydp_release_laplace(rng, 1, 1, -10, -inf, inf, _dp(np.full(4, nan)), _dp(out), 4, 1)),
        ("gaussian zero sigma2", lambda: lib.pydp_release_gaussian(rng, 0, 1, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("gaussian huge", lambda: lib.pydp_release_gaussian(rng, 1, 1, -10, -inf, inf, _dp(buf), _dp(out), HUGE, 1)),
        ("lattice family", lambda: lib.pydp_release_lattice(rng, GAUSSIAN, 0.0, 10, 20, 0, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("lattice NaN r", lambda: lib.pydp_release_lattice(rng, SUBBOTIN, nan, 10, 20, 0, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("lattice s = 0", lambda: lib.pydp_release_lattice(rng, LOGISTIC, 0.0, 0, 20, 0, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("lattice bits", lambda: lib.pydp_release_lattice(rng, LOGISTIC, 0.0, 10, 0, 0, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("lattice huge", lambda: lib.pydp_release_lattice(rng, LOGISTIC, 0.0, 10, 20, 0, -10, -inf, inf, _dp(buf), _dp(out), HUGE, 1)),
        ("lattice NULL rng", lambda: lib.pydp_release_lattice(None, LOGISTIC, 0.0, 10, 20, 0, -10, -inf, inf, _dp(buf), _dp(out), 4, 1)),
        ("keyed NULL streams", lambda: lib.pydp_keyed_release_laplace(rng, None, 1, 1, -10, _dp(buf), _dp(out), 4, 1)),
        ("keyed reserved stream", lambda: lib.pydp_keyed_release_laplace(rng, _u64(np.full(4, 2**64 - 1, dtype=np.uint64)),
                                                                        1, 1, -10, _dp(buf), _dp(out), 4, 1)),
        ("keyed NaN value", lambda: lib.pydp_keyed_release_gaussian(rng, _u64(np.arange(4, dtype=np.uint64)), 1, 1, -10,
                                                                   _dp(np.full(4, nan)), _dp(out), 4, 1)),
        ("keyed huge", lambda: lib.pydp_keyed_release_gaussian(rng, _u64(np.arange(4, dtype=np.uint64)), 1, 1, -10,
                                                              _dp(buf), _dp(out), HUGE, 1)),
        ("keyed NULL rng", lambda: lib.pydp_keyed_release_laplace(None, _u64(np.arange(4, dtype=np.uint64)), 1, 1, -10,
                                                                 _dp(buf), _dp(out), 4, 1)),
        ("pld NaN scale", lambda: lib.pydp_pld_from_noise(GAUSSIAN, 0.0, nan, 1.0, 0.1, 0, 1e-3, C.byref(h))),
        ("pld zero rate", lambda: lib.pydp_pld_from_noise(GAUSSIAN, 0.0, 1.0, 1.0, 0.0, 0, 1e-3, C.byref(h))),
        ("pld NaN step", lambda: lib.pydp_pld_from_noise(GAUSSIAN, 0.0, 1.0, 1.0, 0.1, 0, nan, C.byref(h))),
        ("pld neighbours", lambda: lib.pydp_pld_from_noise(GAUSSIAN, 0.0, 1.0, 1.0, 0.1, 7, 1e-3, C.byref(h))),
        ("pld NULL out", lambda: lib.pydp_pld_from_noise(GAUSSIAN, 0.0, 1.0, 1.0, 0.1, 0, 1e-3, None)),
        ("compose NULL", lambda: lib.pydp_pld_compose(pld, None, C.byref(h))),
        ("self_compose zero", lambda: lib.pydp_pld_self_compose(pld, 0, C.byref(h))),
        ("self_compose huge", lambda: lib.pydp_pld_self_compose(pld, 1 << 62, C.byref(h))),
        ("self_compose NULL", lambda: lib.pydp_pld_self_compose(None, 2, C.byref(h))),
        ("delta NaN", lambda: lib.pydp_pld_delta(pld, nan, C.byref(lo), C.byref(up))),
        ("delta inf", lambda: lib.pydp_pld_delta(pld, inf, C.byref(lo), C.byref(up))),
        ("delta NULL", lambda: lib.pydp_pld_delta(pld, 1.0, None, C.byref(up))),
        ("epsilon NaN", lambda: lib.pydp_pld_epsilon(pld, nan, C.byref(lo), C.byref(up))),
        ("epsilon NULL pld", lambda: lib.pydp_pld_epsilon(None, 1e-5, C.byref(lo), C.byref(up))),
        ("steps NULL", lambda: lib.pydp_pld_steps(pld, None)),
        ("steps NULL pld", lambda: lib.pydp_pld_steps(None, C.byref(steps))),
        ("calibrate NaN epsilon", lambda: lib.pydp_pld_calibrate(GAUSSIAN, 0.0, nan, 1e-5, 1.0, 1, 1.0, 0, 1e-3, C.byref(v))),
        ("calibrate zero delta", lambda: lib.pydp_pld_calibrate(GAUSSIAN, 0.0, 1.0, 0.0, 1.0, 1, 1.0, 0, 1e-3, C.byref(v))),
        ("calibrate zero steps", lambda: lib.pydp_pld_calibrate(GAUSSIAN, 0.0, 1.0, 1e-5, 1.0, 0, 1.0, 0, 1e-3, C.byref(v))),
        ("calibrate NULL", lambda: lib.pydp_pld_calibrate(GAUSSIAN, 0.0, 1.0, 1e-5, 1.0, 1, 1.0, 0, 1e-3, None)),
        ("minimal_scale NaN", lambda: lib.pydp_minimal_scale(GAUSSIAN, 0.0, 1.0, nan, 1.0, C.byref(v))),
        ("minimal_scale NULL", lambda: lib.pydp_minimal_scale(GAUSSIAN, 0.0, 1.0, 1e-5, 1.0, None)),
        *[(f"calibrate_{m} {what}", lambda fn=getattr(lib, f"pydp_calibrate_{m}_release"), a=args: fn(*a))  # noqa: B008 (bound per case)
          for m in ("laplace", "gaussian") for what, args in (
              ("NaN epsilon", (nan, 1e-6, 1.0, 16, C.byref(plan))), ("inf epsilon", (inf, 1e-6, 1.0, 16, C.byref(plan))),
              ("negative epsilon", (-1.0, 1e-6, 1.0, 16, C.byref(plan))), ("NaN delta", (1.0, nan, 1.0, 16, C.byref(plan))),
              ("delta 1", (1.0, 1.0, 1.0, 16, C.byref(plan))), ("zero sensitivity", (1.0, 1e-6, 0.0, 16, C.byref(plan))),
              ("inf sensitivity", (1.0, 1e-6, inf, 16, C.byref(plan))), ("grid_bits 31", (1.0, 1e-6, 1.0, 31, C.byref(plan))),
              ("grid_bits -1", (1.0, 1e-6, 1.0, -1, C.byref(plan))), ("NULL plan", (1.0, 1e-6, 1.0, 16, None)))],
        *[(f"calibrate_lattice {what}", lambda a=args: lib.pydp_calibrate_lattice_release(*a)) for what, args in (
            ("family", (GAUSSIAN, 0.0, 1.0, 1e-6, 1.0, -1, 0, C.byref(lattice))),
            ("NaN r", (SUBBOTIN, nan, 1.0, 1e-6, 1.0, -1, 0, C.byref(lattice))),
            ("r below 1", (SUBBOTIN, 0.5, 1.0, 1e-6, 1.0, -1, 0, C.byref(lattice))),
            ("NaN epsilon", (LOGISTIC, 0.0, nan, 1e-6, 1.0, -1, 0, C.byref(lattice))),
            ("NaN delta", (LOGISTIC, 0.0, 1.0, nan, 1.0, -1, 0, C.byref(lattice))),
            ("inf sensitivity", (LOGISTIC, 0.0, 1.0, 1e-6, inf, -1, 0, C.byref(lattice))),
            ("grid_bits -2", (LOGISTIC, 0.0, 1.0, 1e-6, 1.0, -2, 0, C.byref(lattice))),
            ("timing_stable 2", (LOGISTIC, 0.0, 1.0, 1e-6, 1.0, -1, 2, C.byref(lattice))),
            ("NULL plan", (LOGISTIC, 0.0, 1.0, 1e-6, 1.0, -1, 0, None)))],
    ]


def test_every_entry_point_refuses_bad_input_with_a_message(lib):
    rng = _rng(lib)
    pld = _c_pld(lib, GAUSSIAN, 0.0, 1.0, 0.1, 0, 1e-3, 2)
    buf, out = np.zeros(4), np.zeros(4)
    try:
        for name, call in _calls(lib, rng, pld, buf, out):
            rc = call()
            assert rc in (ERR_NULL, ERR_INVALID), (name, rc)
            msg = lib.pydp_last_error().decode()
            assert msg, name
            if rc == ERR_NULL:
                assert "must not be NULL" in msg, (name, msg)
            # The next successful call clears the message.
            assert lib.pydp_rng_fill_u64(rng, None, 0) == OK and lib.pydp_last_error() == b""
    finally:
        lib.pydp_pld_free(pld)
        lib.pydp_rng_free(rng)


def test_zero_sizes_succeed_and_write_nothing(lib):
    rng = _rng(lib)
    try:
        for rc in (lib.pydp_rng_normal(rng, 0.0, 1.0, None, 0, 1),
                   lib.pydp_release_laplace(rng, 1, 1, -10, -math.inf, math.inf, None, None, 0, 1),
                   lib.pydp_release_lattice(rng, LOGISTIC, 0.0, 10, 20, 0, -10, -math.inf, math.inf, None, None, 0, 1)):
            assert rc == OK
        # A zero-sized call takes no words: the stream goes on where it was.
        words = (U64 * 3)()
        assert lib.pydp_rng_fill_u64(rng, words, 3) == OK
        assert list(words) == _py_rng().random_raw(3).tolist()
    finally:
        lib.pydp_rng_free(rng)


# (epsilon, delta, sensitivity, dimension, grid_bits) of the vector plans: small and large m, a coarse and
# a fine grid, sensitivities on and off powers of two, and m = 1 (the scalar plan).
LAPLACE_VECTOR_CASES = [(1.0, 0.0, 1.0, 3, 16), (0.3, 1e-6, 0.7, 2, 8), (2.5, 0.0, 1e-3, 17, 0), (0.05, 0.0, 4.0, 1000, 16),
                        (7.0, 0.0, 1.0, 64, 30), (1.0, 1e-9, 2.0, 1, 16), (1e-3, 0.0, 5.0, 5, 12)]


@pytest.mark.parametrize("norm", [NORM_L1, NORM_LINF])
@pytest.mark.parametrize("case", LAPLACE_VECTOR_CASES)
def test_laplace_vector_calibration_is_the_python_plan(lib, norm, case):
    eps, delta, sens, m, bits = case
    got = VectorPlan()
    assert lib.pydp_release_calibrate_laplace_vector(eps, delta, sens, norm, m, bits, C.byref(got)) == OK, lib.pydp_last_error()
    assert lib.pydp_last_error() == b""
    want = release.calibrate_laplace_release(epsilon=eps, delta=delta, sensitivity=sens, dimension=m, grid_bits=bits,
                                             norm=NORMS[norm])
    assert (got.mechanism, got.norm, got.dimension) == (0, norm, m)
    assert (got.num, got.den, got.grid_exponent, got.shift) == (want.parameter.numerator, want.parameter.denominator,
                                                                want.grid_exponent, want.shift)
    assert got.delta_achieved == want.delta_achieved


@pytest.mark.parametrize("key_byte", [0, 1, 200])
@pytest.mark.parametrize("norm, m, vectors", [(NORM_L1, 3, 5), (NORM_LINF, 2, 1), (NORM_L1, 1000, 3), (NORM_LINF, 9000, 2),
                                              (NORM_L1, 1, 4)])
def test_vector_release_is_the_python_release_row_by_row(lib, key_byte, norm, m, vectors):
    key = bytes((key_byte + i) % 256 for i in range(32))
    plan = VectorPlan()
    assert lib.pydp_release_calibrate_laplace_vector(0.8, 0.0, 1.5, norm, m, 16, C.byref(plan)) == OK
    x = np.random.default_rng(key_byte).uniform(-30.0, 30.0, (vectors, m))
    got = np.full_like(x, np.nan)
    h = C.c_void_p()
    assert lib.pydp_rng_new(key, 0, C.byref(h)) == OK
    try:
        assert lib.pydp_release_vector(h, C.byref(plan), -25.0, 25.0, _dp(x), _dp(got), vectors, 3) == OK, lib.pydp_last_error()
        tail = (U64 * 2)()
        assert lib.pydp_rng_fill_u64(h, tail, 2) == OK
    finally:
        lib.pydp_rng_free(h)
    py = Random._wrap(_core.random.Generator(key, 0), 1, True)
    py_plan = release.calibrate_laplace_release(epsilon=0.8, sensitivity=1.5, dimension=m, norm=NORMS[norm])
    want = np.stack([py_plan.release(row, rng=py, bounds=(-25.0, 25.0), simulation=True) for row in x])
    np.testing.assert_array_equal(got, want)
    assert list(tail) == py.random_raw(2).tolist()  # the stream goes on where the Python one does


def test_vector_release_of_zero_vectors_takes_nothing(lib):
    plan = VectorPlan()
    assert lib.pydp_release_calibrate_laplace_vector(1.0, 0.0, 1.0, NORM_L1, 4, 16, C.byref(plan)) == OK
    rng = _rng(lib)
    try:
        assert lib.pydp_release_vector(rng, C.byref(plan), -math.inf, math.inf, None, None, 0, 1) == OK
        words = (U64 * 3)()
        assert lib.pydp_rng_fill_u64(rng, words, 3) == OK
        assert list(words) == _py_rng().random_raw(3).tolist()
    finally:
        lib.pydp_rng_free(rng)


def test_vector_calibration_failures_leave_the_plan_untouched(lib):
    plan = VectorPlan(5, 5, 5, 5, 5, 5, 5, 5.0)
    assert lib.pydp_release_calibrate_laplace_vector(0.0, 0.0, 1.0, NORM_L1, 3, 16, C.byref(plan)) == ERR_NO_FINITE_SCALE
    assert "infinite scale" in lib.pydp_last_error().decode()
    assert lib.pydp_release_calibrate_laplace_vector(1e-3, 0.0, 1.0, NORM_L1, 1 << 30, 16, C.byref(plan)) == 10  # t above 2^40
    assert "2^40" in lib.pydp_last_error().decode()
    assert (plan.num, plan.shift, plan.delta_achieved) == (5, 5, 5.0)
    with pytest.raises(dp.CalibrationError, match="2\\^40"):
        release.calibrate_laplace_release(epsilon=1e-3, dimension=1 << 30)


# (epsilon, delta, sensitivity, dimension, grid_bits) of the Gaussian vector plans (l2 sensitivity).
GAUSSIAN_VECTOR_CASES = [(1.0, 1e-6, 1.0, 50, 16), (0.3, 1e-9, 0.7, 2, 8), (2.5, 1e-3, 1e-3, 17, 0), (0.05, 1e-5, 4.0, 1000, 16),
                         (7.0, 1e-12, 1.0, 64, 30), (1.0, 1e-7, 2.0, 1, 16), (0.0, 0.1, 1.0, 3, 12)]


@pytest.mark.parametrize("case", GAUSSIAN_VECTOR_CASES)
def test_gaussian_vector_calibration_is_the_python_plan(lib, case):
    eps, delta, sens, m, bits = case
    got = VectorPlan()
    assert lib.pydp_release_calibrate_gaussian_vector(eps, delta, sens, m, bits, C.byref(got)) == OK, lib.pydp_last_error()
    want = release.calibrate_gaussian_release(epsilon=eps, delta=delta, sensitivity=sens, dimension=m, grid_bits=bits)
    assert (got.mechanism, got.norm, got.dimension) == (1, NORM_L2, m)
    assert (got.num, got.den, got.grid_exponent, got.shift) == (want.parameter.numerator, want.parameter.denominator,
                                                                want.grid_exponent, want.shift)
    assert got.delta_achieved == want.delta_achieved <= delta
    if m > 1:  # the zCDP check passes at sigma2 and fails at sigma2 - 1 (through the C entry point)
        ld, target = D(), math.log(delta) + math.log1p(-1e-12)
        assert lib.pydp_zcdp_log_delta(got.shift**2 / (2.0 * got.num), eps, C.byref(ld), None) == OK and ld.value <= target
        assert lib.pydp_zcdp_log_delta(got.shift**2 / (2.0 * (got.num - 1)), eps, C.byref(ld), None) == OK and ld.value > target


@pytest.mark.parametrize("key_byte", [3, 77])
@pytest.mark.parametrize("m, vectors", [(2, 3), (50, 2), (5000, 1)])
def test_gaussian_vector_release_is_the_python_release_row_by_row(lib, key_byte, m, vectors):
    key = bytes((key_byte * 7 + i) % 256 for i in range(32))
    plan = VectorPlan()
    assert lib.pydp_release_calibrate_gaussian_vector(0.9, 1e-7, 2.0, m, 16, C.byref(plan)) == OK
    x = np.random.default_rng(key_byte).normal(0.0, 10.0, (vectors, m))
    got = np.empty_like(x)
    h = C.c_void_p()
    assert lib.pydp_rng_new(key, 5, C.byref(h)) == OK
    try:
        assert lib.pydp_release_vector(h, C.byref(plan), -math.inf, math.inf, _dp(x), _dp(got), vectors, 2) == OK
    finally:
        lib.pydp_rng_free(h)
    py = Random._wrap(_core.random.Generator(key, 5), 1, True)
    py_plan = release.calibrate_gaussian_release(epsilon=0.9, delta=1e-7, sensitivity=2.0, dimension=m)
    np.testing.assert_array_equal(got, np.stack([py_plan.release(row, rng=py, simulation=True) for row in x]))


@pytest.mark.parametrize("rho, eps", [(0.01, 0.1), (0.5, 3.0), (50.0, 100.0), (1e-6, 10.0), (1e3, 0.0), (1e-300, 1e300)])
def test_zcdp_log_delta_is_the_python_value(lib, rho, eps):
    from pydp_core.accounting.conversions import zcdp_log_delta

    ld, alpha = D(), D()
    assert lib.pydp_zcdp_log_delta(rho, eps, C.byref(ld), C.byref(alpha)) == OK
    assert (ld.value, alpha.value) == zcdp_log_delta(rho=rho, epsilon=eps)
    assert ld.value <= 0.0
