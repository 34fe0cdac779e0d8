"""Lattice (integer weight table) releases for Subbotin_r and Logistic noise (docs/release.md, section 5)."""
from __future__ import annotations

import math
import pickle
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

import pydp_core as pc
from pydp_core import _core, release
from pydp_core.release import lattice

_D = _core.release
from support.stats import ALPHA  # noqa: E402


def _log_delta(table, eps: float, k: int, timing_stable: bool) -> float:
    """The plan's log delta(eps) at the shift k, with the timing-stable charge (1 + e^eps) 2**-129 added:
    the check of lattice_plan.hpp's lattice_log_delta, recomputed here."""
    ld = float(table.log_delta(eps, k))
    if not timing_stable:
        return ld
    extra = math.log1p(math.exp(eps)) + math.log(lattice.STABLE_TV_BOUND) if eps < 700 else math.inf
    return extra if ld == -math.inf else max(ld, extra) + math.log1p(math.exp(-abs(ld - extra)))


def _table(kind: int, r: float, s: float, bits: int):
    return _D.LatticeTable(kind, r, s, bits, 1 << 24)


def _law(t) -> tuple[np.ndarray, list[int], int]:
    """(support -K..K, integer weights, T) of a table."""
    w = [int(v) for v in t.weights()]
    full = w[:0:-1] + w
    k = len(w) - 1
    return np.arange(-k, k + 1), full, sum(full)


def _exact_delta(full: list[int], eps: float, k: int) -> mpmath.mpf:
    """sum_y max(0, W(y) - e^eps W(y - k)) / T in 60-digit arithmetic, every y (independent of the kernel)."""
    with mpmath.workdps(60):
        e = mpmath.exp(mpmath.mpf(eps))
        n = len(full)
        total = mpmath.mpf(0)
        for i in range(n + k):  # index i is y = i - K; y - k has index i - k
            wy = full[i] if i < n else 0
            wz = full[i - k] if 0 <= i - k < n else 0
            d = wy - e * wz
            if d > 0:
                total += d
        return total / sum(full)


# ------------------------------------------------------------------------------------------------------
# The table and its sampler
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, r, s", [(0, 1.5, 3.0), (0, 8.0, 6.0), (1, 1.0, 2.5), (0, 1.01, 2.0)])
@pytest.mark.parametrize("stable", [False, True])
def test_sampler_law_is_the_table_law(kind, r, s, stable):
    t = _table(kind, r, s, 40)
    ys, full, total = _law(t)
    n = 10_000_000
    draws = t.sample(pc.Random(11).kernel, n, stable, 1)
    assert draws.min() >= ys[0] and draws.max() <= ys[-1]
    counts = np.bincount(draws - ys[0], minlength=len(ys)).astype(float)
    expected = np.array([n * w / total for w in full])
    keep = expected >= 5  # pool the rare tail cells on each side into one cell
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
        exp *= obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > ALPHA


def test_table_is_symmetric_nonincreasing_and_floor_of_the_density():
    for kind, r, s in [(0, 1.01, 40.0), (0, 2.0, 30.0), (0, 8.0, 25.0), (1, 1.0, 30.0)]:
        t = _table(kind, r, s, 50)
        w = [int(v) for v in t.weights()]
        assert w[0] == 2**50 and all(a >= b >= 1 for a, b in zip(w, w[1:]))
        with mpmath.workdps(40):
            for y in range(1, len(w)):
                x = mpmath.mpf(y) / s
                dens = mpmath.exp(-x**r / r) if kind == 0 else 4 * mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2
                assert abs(w[y] - mpmath.floor(dens * 2**50)) <= 1 + 1e-12 * w[y]
            x = mpmath.mpf(len(w)) / s
            dens = mpmath.exp(-x**r / r) if kind == 0 else 4 * mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2
            assert dens * 2**50 < 1.001  # the table stops where the weight reaches 0


# ------------------------------------------------------------------------------------------------------
# The profile
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, r, s, k", [
    (0, 1.01, 12.0, 3), (0, 1.5, 20.0, 7), (0, 2.0, 9.0, 2), (0, 8.0, 15.0, 4), (1, 1.0, 10.0, 5), (0, 2.0, 4.0, 1),
])
def test_profile_against_an_independent_computation(kind, r, s, k):
    t = _table(kind, r, s, 48)
    _, full, _ = _law(t)
    seen_tiny = False
    for eps in [0.0, 0.05, 0.3, 1.0, 2.5, 6.0, 20.0, 50.0]:
        exact = _exact_delta(full, eps, k)
        got = t.log_delta(eps, k)
        if exact == 0:
            assert got == -math.inf
            continue
        le = float(mpmath.log(exact))
        seen_tiny |= le < math.log(1e-12)
        assert le <= got <= le + 1e-9, (eps, le, got)  # an upper bound, and tight
    if kind == 1 or r == 1.01:
        assert seen_tiny  # delta down to the truncation charge, about 1e-15 here


def test_tiny_delta_profile():
    t = _table(0, 2.0, 6.0, 56)
    _, full, _ = _law(t)
    eps = 1.5
    exact = _exact_delta(full, eps, 1)
    assert exact < 1e-12
    le = float(mpmath.log(exact))
    assert le <= t.log_delta(eps, 1) <= le + 1e-9


def test_shift_k_is_the_worst_shift():
    for kind, r, s in [(0, 1.01, 8.0), (0, 3.0, 6.0), (1, 1.0, 5.0)]:
        t = _table(kind, r, s, 30)
        _, full, _ = _law(t)
        for eps in [0.0, 0.4, 1.5]:
            for k in (3, 6):
                worst = _exact_delta(full, eps, k)
                assert all(_exact_delta(full, eps, j) <= worst for j in range(1, k))


# ------------------------------------------------------------------------------------------------------
# Calibration
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: release.calibrate_subbotin_release(r=1.01, epsilon=1.0, delta=1e-6, grid_bits=5),
    lambda: release.calibrate_subbotin_release(r=8.0, epsilon=0.5, delta=1e-12, grid_bits=5),
    lambda: release.calibrate_subbotin_release(r=2.5, epsilon=2.0, delta=1e-9, sensitivity=3.0, grid_bits=6),
    lambda: release.calibrate_logistic_release(epsilon=1.0, delta=1e-10, grid_bits=5),
    lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6, grid_bits=5, timing_stable=True),
    lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6),
])
def test_calibration_meets_the_target_and_is_minimal(make):
    plan = make()
    assert isinstance(plan, release.GridRelease) and plan.dimension == 1
    s = int(plan.parameter)
    r = plan.r or 1.0
    t, bits = lattice._build_table(plan.mechanism, r, s)
    assert bits == plan.weight_bits
    ld = _log_delta(t, plan.epsilon, plan.shift, plan.timing_stable)
    assert ld <= math.log(plan.delta) and plan.delta_achieved <= plan.delta
    t1, _ = lattice._build_table(plan.mechanism, r, s - 1)
    assert _log_delta(t1, plan.epsilon, plan.shift, plan.timing_stable) > math.log(plan.delta) + math.log1p(-1e-12)
    assert plan.shift == release.plans._grid_shift(plan.sensitivity, plan.grid_exponent)


def test_lattice_scale_is_close_to_the_continuous_one():
    """The RMSE of the lattice release against the continuous mechanism's (a few per cent at most)."""
    ratios = {}
    for name, plan, mech in [
        ("subbotin 1.5", release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6),
         pc.SubbotinMechanism(1.5, epsilon=1.0, delta=1e-6)),
        ("subbotin 3", release.calibrate_subbotin_release(r=3.0, epsilon=0.5, delta=1e-9),
         pc.SubbotinMechanism(3.0, epsilon=0.5, delta=1e-9)),
        ("logistic", release.calibrate_logistic_release(epsilon=1.0, delta=1e-9),
         pc.LogisticMechanism(epsilon=1.0)),
    ]:
        w = plan.table.weights().astype(object)
        y = np.arange(len(w), dtype=object)
        var = Fraction(2 * int(np.sum(w[1:] * y[1:] ** 2)), plan.table.total)
        rmse = math.sqrt(var + Fraction(1, 12)) * plan.grid  # noise plus the rounding of the data to the grid
        ratios[name] = rmse / mech.std
    print("lattice / continuous RMSE:", {k: round(v, 5) for k, v in ratios.items()})
    assert all(0.97 < v < 1.03 for v in ratios.values()), ratios


def test_automatic_grid_when_the_table_range_binds():
    """eps = 10, delta = 1e-12: on the 16-bit grid the truncation forces a scale about 95% above the
    continuous one; the automatic grid falls back to a coarser grid and gets within 2%."""
    plan = release.calibrate_subbotin_release(r=2.0, epsilon=10.0, delta=1e-12)
    cont = pc.SubbotinMechanism(2.0, epsilon=10.0, delta=1e-12).scale
    assert plan.scale / cont < 1.02
    assert plan.grid_exponent > math.frexp(cont)[1] - 1 - 16  # a coarser grid than 16 bits
    t, _ = lattice._build_table("subbotin", 2.0, int(plan.parameter))
    assert t.log_delta(10.0, plan.shift) <= math.log(1e-12)


# ------------------------------------------------------------------------------------------------------
# Releases: grid, determinism, threads, timing-stable counts
# ------------------------------------------------------------------------------------------------------
def test_release_outputs_lie_on_the_grid_and_are_deterministic():
    x = np.linspace(-5, 5, 20001)
    plan = release.calibrate_subbotin_release(r=1.7, epsilon=1.0, delta=1e-6)
    a = pc.release_subbotin(x, r=1.7, epsilon=1.0, delta=1e-6, rng=pc.Random(3, threads=1), simulation=True)
    b = pc.release_subbotin(x, r=1.7, epsilon=1.0, delta=1e-6, rng=pc.Random(3, threads=4), simulation=True)
    assert np.array_equal(a, b)
    steps = a / plan.grid
    assert np.array_equal(steps, np.round(steps))
    c = plan.release(x, rng=pc.Random(3), simulation=True)
    assert np.array_equal(a, c)
    assert not np.array_equal(a, plan.release(x, rng=pc.Random(4), simulation=True))
    copy = pickle.loads(pickle.dumps(plan))  # the table is rebuilt, the same integers
    assert copy == plan and np.array_equal(copy.release(x, rng=pc.Random(3), simulation=True), a)
    noise = steps - np.rint(x / plan.grid)
    assert abs(noise.std() * plan.grid / pc.SubbotinMechanism(1.7, epsilon=1.0, delta=1e-6).std - 1) < 0.05
    y = pc.release_logistic(x, epsilon=1.0, delta=1e-9, rng=pc.Random(3, threads=3), simulation=True,
                            timing_stable=True)
    z = pc.release_logistic(x, epsilon=1.0, delta=1e-9, rng=pc.Random(3, threads=1), simulation=True,
                            timing_stable=True)
    assert np.array_equal(y, z)
    assert isinstance(pc.release_logistic(1.0, epsilon=1.0, delta=1e-9, rng=pc.Random(1), simulation=True), float)


def test_timing_stable_mode_uses_fixed_words_and_steps():
    plan = release.calibrate_subbotin_release(r=1.3, epsilon=1.0, delta=1e-6, timing_stable=True)
    t = plan.table
    words = np.frombuffer(np.random.default_rng(5).bytes(8 * 3 * 5000), dtype=np.uint64).copy()
    words[:30] = [0, 2**64 - 1, 1] * 10  # extremes too
    vals, used, steps = t._draw_words(words, 5000, True)
    assert np.all(used == 3) and np.all(steps == t.search_steps) and t.search_steps >= 10
    # The automatic grid keeps the timing-stable table within the first-level cache budget.
    assert t.half_size + 1 <= lattice.STABLE_TABLE_ENTRIES
    assert len(set(np.abs(vals).tolist())) > 100  # many different values, at the same cost
    # exact mode: the words are random in number (independent of the value), the steps fixed
    vals2, used2, steps2 = t._draw_words(words, 4000, False)
    assert np.all(used2 >= 1) and np.all(steps2 == t.search_steps)
    # the same uniform gives the same value in both modes' inversion: 3 words -> floor(X T / 2^192)
    assert plan.delta_achieved <= 1e-6


def test_release_noise_and_mechanisms_release():
    out = release.release_noise(pc.Subbotin(3.0), np.zeros(5), epsilon=1.0, delta=1e-6, rng=pc.Random(2),
                                simulation=True)
    assert out.shape == (5,)
    exp = pc.release_subbotin(np.zeros(5), r=3.0, epsilon=1.0, delta=1e-6, rng=pc.Random(2), simulation=True)
    assert np.array_equal(out, exp)
    m = pc.SubbotinMechanism(3.0, epsilon=1.0, delta=1e-6)
    assert m.privatize(0.0, rng=pc.Random(2), simulation=True) == exp[0]  # a scalar: the first value
    # An array is one vector query with l_inf sensitivity: the product-law calibration of release_vector.
    vec = m.privatize(np.zeros((2, 3)), rng=pc.Random(2), simulation=True)
    assert vec.shape == (2, 3)
    assert np.array_equal(vec.reshape(-1), release.release_vector(np.zeros(6), pc.Subbotin(3.0), epsilon=1.0,
                                                                  delta=1e-6, rng=pc.Random(2), simulation=True))
    lm = pc.LogisticMechanism(epsilon=1.0, delta=1e-9)
    v = lm.privatize(0.0, rng=pc.Random(2), simulation=True)
    assert v == pc.release_logistic(np.zeros(3), epsilon=1.0, delta=1e-9, rng=pc.Random(2), simulation=True)[0]
    with pytest.raises(release.ReleaseNotSupportedError, match="delta > 0"):
        release.release_noise(pc.Subbotin(3.0), 1.0, epsilon=1.0, delta=0.0)
    lv = release.release_noise(pc.Logistic(), np.zeros(3), epsilon=1.0, delta=1e-6, vector=True, rng=pc.Random(2),
                               simulation=True)
    assert np.array_equal(lv, release.release_vector(np.zeros(3), pc.Logistic(), epsilon=1.0, delta=1e-6,
                                                     rng=pc.Random(2), simulation=True))
    with pytest.raises(release.ReleaseNotSupportedError, match="delta > 0"):
        release.release_noise(pc.Subbotin(3.0), np.zeros(3), epsilon=1.0, delta=0.0, vector=True)
    with pytest.raises(ValueError, match="seed"):
        pc.release_subbotin(1.0, r=3.0, epsilon=1.0, delta=1e-6, rng=pc.Random(2))


@pytest.mark.parametrize("call, exc, name", [
    (lambda: pc.release_subbotin(1.0, r=0.5, epsilon=1.0, delta=1e-6), ValueError, "r"),
    (lambda: pc.release_subbotin(1.0, r=float("nan"), epsilon=1.0, delta=1e-6), ValueError, "r"),
    (lambda: pc.release_subbotin(1.0, r=2.5, epsilon=float("nan"), delta=1e-6), ValueError, "epsilon"),
    (lambda: pc.release_subbotin(1.0, r=2.5, epsilon=1.0, delta=0.0), ValueError, "delta"),
    (lambda: pc.release_subbotin(1.0, r=2.5, epsilon=1.0, delta=1.5), ValueError, "delta"),
    (lambda: pc.release_subbotin(1.0, r=2.5, epsilon=1.0, delta=-1e-3), ValueError, "delta"),
    (lambda: pc.release_logistic(1.0, epsilon=0.0), ValueError, "epsilon"),
    (lambda: pc.release_logistic(1.0, epsilon=1.0, delta=-1e-3), ValueError, "delta"),
    (lambda: pc.release_logistic(1.0, epsilon=1.0, delta=1e-6, sensitivity=-1.0), ValueError, "sensitivity"),
    (lambda: pc.release_subbotin(float("nan"), r=2.5, epsilon=1.0, delta=1e-6, rng=pc.Random(1), simulation=True),
     ValueError, "finite"),
    (lambda: release.calibrate_subbotin_release(r="2", epsilon=1.0, delta=1e-6), TypeError, "r"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, delta=1e-6, timing_stable=1), TypeError, "timing_stable"),
])
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_speed_against_numpy_normal():
    """CPU time of a 10^6-value release (one thread, plan cached) against ``x + rng.normal(0, s, n)``."""
    n = 10**6
    x = np.zeros(n)
    plan = release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6)
    gen = pc.Random(9, threads=1)
    plan.release(x[:10], rng=gen, simulation=True)
    t0 = time.process_time()
    plan.release(x, rng=gen, simulation=True)
    t1 = time.process_time()
    rng = np.random.default_rng(1)
    t2 = time.process_time()
    _ = x + rng.normal(0.0, plan.scale, n)
    t3 = time.process_time()
    print(f"release_subbotin 1e6: {t1 - t0:.4f} s CPU, numpy normal: {t3 - t2:.4f} s, ratio {(t1 - t0) / (t3 - t2):.1f}")
    assert t1 - t0 < 5.0
