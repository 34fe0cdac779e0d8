"""The pure epsilon-DP Logistic lattice release: the table with its exact geometric tail (docs/release.md,
section 6).

The law of a tailed table: P(y) = W(|y|) / T for |y| <= K, W_t (1 - q) q^(|y| - K - 1) / T beyond, with
q = exp(-1/s). The references below are computed from the table's integers in 50-digit mpmath, independently
of the kernel's bound.
"""
from __future__ import annotations

import math
import pickle
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from support.lsb import N as LSB_N
from support.lsb import worst_violation
from support.stats import assert_binomial, chi_square

import pydp_core as pc
from pydp_core import _core, release
from pydp_core.release import lattice

_D = _core.release
_TAIL = 12  # the pure-DP table's tail bits (kLatticeTailBits of lattice_plan.hpp)


def _tailed(s: int, bits: int, tail_bits: int = _TAIL):
    return _D.LatticeTable(1, 1.0, float(s), bits, 1 << 24, tail_bits)


def _log_masses(t, s: int, top: int) -> list:
    """log A(a) for a = 0 .. top, A(a) = T P(a) (the exact law up to the common factor 1/T), 50 digits."""
    w = [int(v) for v in t.weights()]
    k = len(w) - 1
    with mpmath.workdps(50):
        l1q = mpmath.log(-mpmath.expm1(-mpmath.mpf(1) / s))
        lwt = mpmath.log(int(t.tail_weight))
        return [mpmath.log(w[a]) if a <= k else lwt + l1q - mpmath.mpf(a - k - 1) / s for a in range(top + 1)]


def _exact_max_log_ratio(la: list, k_table: int, shift: int):
    """max over every integer y of log(P(y) / P(y + shift)); the y with |y|, |y + shift| both beyond the
    table give (|y| - |y + shift|) / s, whose largest value, shift / s, is attained at y = K + 1 (in la)."""
    best = None
    for y in range(-k_table - shift - 2, k_table + 3):
        v = la[abs(y)] - la[abs(y + shift)]
        best = v if best is None or v > best else best
    return best


# ------------------------------------------------------------------------------------------------------
# The law and its bound
# ------------------------------------------------------------------------------------------------------
def test_earlier_hand_check_of_the_table_end():
    t = _tailed(50, 40)
    assert t.has_tail and t.half_size == 485
    w = t.weights()
    assert int(w[-1]) >= 2 ** (40 - _TAIL) and int(t.tail_weight) <= 50 * int(w[-1])  # non-increasing junction
    assert t.total == int(w[0]) + 2 * int(w[1:].sum()) + 2 * int(t.tail_weight)
    assert t.log_ratio_bound(50) == 1.0  # the deep tail, exactly 50/50


@pytest.mark.parametrize("s, bits, tail_bits, charged", [
    (1, 50, _TAIL, 3), (3, 46, _TAIL, 3), (7, 46, _TAIL, 9), (50, 40, _TAIL, 50), (120, 44, _TAIL, 60),
    (20, 40, 2, 20), (5, 30, 1, 7),
    # coarse tables (weights from 16 to 1024): their floors put the maximum inside the table or at the junction
    (5, 10, 6, 10), (9, 10, 6, 18), (17, 10, 6, 20), (3, 10, 6, 6),
])
def test_log_ratio_bound_against_mpmath_at_every_shift(s, bits, tail_bits, charged):
    t = _tailed(s, bits, tail_bits)
    k_table = t.half_size
    la = _log_masses(t, s, k_table + charged + 3)
    prev = None
    table_wins = False
    for shift in range(1, charged + 1):
        exact = _exact_max_log_ratio(la, k_table, shift)
        got = t.log_ratio_bound(shift)
        assert mpmath.mpf(got) >= exact, (shift, got, exact)
        assert mpmath.mpf(got) <= exact * (1 + mpmath.mpf("1e-9")), (shift, got, exact)
        table_wins |= exact > mpmath.mpf(shift) / s + mpmath.mpf("1e-3")
        if prev is not None:  # the charged shift dominates the smaller ones (symmetric, non-increasing law)
            assert exact >= prev
        prev = exact
    assert table_wins == (bits == 10)  # the enumeration decides the coarse cases, the deep tail the others


def test_log_ratio_bound_of_a_calibrated_table():
    """The eps = 1 plan's table (K about 6.4e5): a long-double scan picks the candidates, 50 digits decide."""
    plan = release.calibrate_logistic_release(epsilon=1.0)
    t, s, k = plan.table, int(plan.parameter), plan.shift
    w = t.weights().astype(np.longdouble)
    kt = t.half_size
    q1 = -np.expm1(np.longdouble(-1) / s)
    ys = np.arange(-kt - k - 1, kt + 1)

    def log_a(a):
        out = np.empty(a.size, dtype=np.longdouble)
        inside = a <= kt
        out[inside] = np.log(w[a[inside]])
        out[~inside] = np.log(np.longdouble(int(t.tail_weight)) * q1) - (a[~inside] - kt - 1) / np.longdouble(s)
        return out

    v = log_a(np.abs(ys)) - log_a(np.abs(ys + k))
    cand = ys[np.argsort(v)[-20:]]
    with mpmath.workdps(50):
        l1q = mpmath.log(-mpmath.expm1(-mpmath.mpf(1) / s))

        def la(a):
            a = abs(int(a))
            return mpmath.log(int(w[a])) if a <= kt else mpmath.log(int(t.tail_weight)) + l1q - mpmath.mpf(a - kt - 1) / s

        exact = max([mpmath.mpf(k) / s] + [la(y) - la(y + k) for y in cand])
    got = t.log_ratio_bound(k)
    assert mpmath.mpf(got) >= exact and mpmath.mpf(got) <= exact * (1 + mpmath.mpf("1e-9"))
    assert got == plan.epsilon_achieved <= 1.0


# ------------------------------------------------------------------------------------------------------
# The sampler
# ------------------------------------------------------------------------------------------------------
def _bins(t, s: int, n: int, min_expected: float = 20.0):
    """Edges and probabilities of bins of the exact law for the chi-square helper, (-inf, e0], (e0, e1], ...:
    the y from -M to M (M = K + 40 s) grouped from the left until each bin expects min_expected of n draws,
    the tails beyond M (mass W_t q^(M - K) / T a side) pooled into the end bins."""
    w = [int(v) for v in t.weights()]
    kt, total, wt = len(w) - 1, int(t.total), int(t.tail_weight)
    with mpmath.workdps(30):
        q = mpmath.exp(-mpmath.mpf(1) / s)
        big_m = kt + 40 * s

        def p(y):
            a = abs(y)
            return mpmath.mpf(w[a]) / total if a <= kt else wt * (1 - q) * q ** (a - kt - 1) / total

        beyond = float(wt * q ** (big_m - kt) / total)
        pm = [float(p(y)) for y in range(-big_m, big_m + 1)]
    pm[0] += beyond
    pm[-1] += beyond
    edges, probs, acc = [], [], 0.0
    for i, m in enumerate(pm):
        acc += m
        if acc * n >= min_expected:
            edges.append(i - big_m)
            probs.append(acc)
            acc = 0.0
    probs[-1] += acc  # the last bin runs to +inf
    edges.pop()
    return edges, np.array(probs)


@pytest.mark.parametrize("s, bits, tail_bits, n, seed", [
    (50, 40, _TAIL, 10_000_000, 101),  # the release's tail share (about 2^-13)
    (20, 40, 2, 10_000_000, 102),      # a heavy tail (about 1/8 of the mass): the geometric shape itself
    (3, 50, _TAIL, 10_000_000, 103),
])
def test_chi_square_against_the_exact_law(s, bits, tail_bits, n, seed):
    t = _tailed(s, bits, tail_bits)
    draws = t.sample(pc.Random(seed).kernel, n, False, 1)
    edges, probs = _bins(t, s, n)
    stat, crit = chi_square(draws, edges, probs)
    assert stat < crit, (stat, crit, len(probs))
    beyond = int(np.count_nonzero(np.abs(draws) > t.half_size))
    assert_binomial(beyond, n, 2 * int(t.tail_weight) / int(t.total))


def test_release_noise_moments_and_tail_mass():
    """Noise of the eps = 1 release (release of zeros, divided by the grid) against the exact law."""
    plan = release.calibrate_logistic_release(epsilon=1.0)
    t, s = plan.table, int(plan.parameter)
    n = 1_000_000
    y = plan.release(np.zeros(n), rng=pc.Random(2026), simulation=True) / plan.grid
    assert np.array_equal(y, np.round(y))
    w = [int(v) for v in t.weights()]
    kt, total, wt = len(w) - 1, int(t.total), int(t.tail_weight)
    with mpmath.workdps(50):
        q = mpmath.exp(-mpmath.mpf(1) / s)
        eg = q / (1 - q)
        eg2 = q * (1 + q) / (1 - q) ** 2
        c = kt + 1

        def moment(p):  # E[Y^p] for p = 2, 4 (odd moments vanish)
            table = mpmath.mpf(sum(a**p * w[a] for a in range(1, kt + 1)))  # exact in integers
            if p == 2:
                tail = c**2 + 2 * c * eg + eg2
            else:  # E[(c + G)^4] from the raw moments of G: m_j = sum g^j (1 - q) q^g (polylogs)
                m = [(1 - q) * mpmath.polylog(-j, q) for j in range(1, 5)]
                tail = c**4 + 4 * c**3 * m[0] + 6 * c**2 * m[1] + 4 * c * m[2] + m[3]
            return 2 * (table + wt * tail) / total

        var, m4 = moment(2), moment(4)
    var, m4 = float(var), float(m4)
    z = 5.3  # two-sided 1e-6
    assert abs(y.mean()) < z * math.sqrt(var / n)
    assert abs((y**2).mean() - var) < z * math.sqrt((m4 - var**2) / n)
    assert_binomial(int(np.count_nonzero(np.abs(y) > kt)), n, 2 * wt / total)
    # the law's variance is the continuous Logistic's (pi^2 s^2 / 3) up to the truncation of the table
    assert var == pytest.approx(math.pi**2 * s**2 / 3, rel=1e-3)


# ------------------------------------------------------------------------------------------------------
# Calibration
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps, sens, grid_bits", [(1.0, 1.0, None), (0.5, 3.0, None), (2.0, 0.1, 8), (1.0, 1.0, 4)])
def test_calibrated_scale_is_minimal(eps, sens, grid_bits):
    plan = release.calibrate_logistic_release(epsilon=eps, sensitivity=sens, grid_bits=grid_bits)
    s, k = int(plan.parameter), plan.shift
    assert plan.geometric_tail and plan.delta_achieved == 0.0 and plan.delta == 0.0
    assert plan.epsilon_achieved == plan.table.log_ratio_bound(k) <= eps
    assert plan.table.has_tail and plan.table.total < 2**63
    assert Fraction(k, s) <= Fraction(eps)  # the deep tail alone
    if s > 1:
        smaller, _ = lattice._build_table("logistic", 1.0, s - 1, tail=True)
        assert smaller.log_ratio_bound(k) > eps
    assert plan.scale == s * plan.grid
    # against the continuous Logistic (scale D / eps): the rounding charge k g / D only
    cont = sens / eps
    assert cont <= plan.scale <= cont * (k * plan.grid / sens) * (1 + 1e-9) + plan.grid


def test_plan_fields_pickle_and_release():
    plan = release.calibrate_logistic_release(epsilon=1.0)
    assert plan.mechanism == "logistic" and plan.grid == 2.0**-16 and plan.shift == 65536
    assert plan.parameter == 65536 and plan.scale == 1.0
    again = pickle.loads(pickle.dumps(plan))
    assert again == plan and again.table.has_tail and again.table.total == plan.table.total
    x = np.linspace(-2.0, 2.0, 10_001)
    out = plan.release(x, rng=pc.Random(5), simulation=True)
    assert np.array_equal(out, again.release(x, rng=pc.Random(5), simulation=True))  # deterministic for a key
    many = np.zeros(50_000)  # 13 chunks, about 6 values in the tail: the same noise on 1 and 2 threads
    assert np.array_equal(plan.release(many, rng=pc.Random(6, threads=1), simulation=True),
                          plan.release(many, rng=pc.Random(6, threads=2), simulation=True))
    assert np.array_equal(out / plan.grid, np.round(out / plan.grid))
    assert np.array_equal(out, pc.release_logistic(x, epsilon=1.0, rng=pc.Random(5), simulation=True))
    with pytest.raises(ValueError, match="seed"):
        plan.release(x, rng=pc.Random(5))


def test_mechanism_and_release_noise_at_delta_zero():
    m = pc.LogisticMechanism(epsilon=1.0)
    v = m.privatize(0.5, rng=pc.Random(3), simulation=True)
    assert v == pc.release_logistic(np.full(2, 0.5), epsilon=1.0, rng=pc.Random(3), simulation=True)[0]
    out = release.release_noise(pc.Logistic(), np.zeros(4), epsilon=1.0, delta=0.0, rng=pc.Random(3), simulation=True)
    assert np.array_equal(out, pc.release_logistic(np.zeros(4), epsilon=1.0, rng=pc.Random(3), simulation=True))
    # an array is one vector query with l_inf sensitivity: epsilon / m per coordinate (losses add)
    vec = m.privatize(np.zeros((2, 2)), rng=pc.Random(3), simulation=True)
    assert vec.shape == (2, 2)
    assert np.array_equal(vec.reshape(-1), pc.release_logistic(np.zeros(4), epsilon=0.25, rng=pc.Random(3),
                                                               simulation=True))
    per = release.calibrate_logistic_release(epsilon=0.25)
    assert 4 * per.epsilon_achieved <= 1.0
    with pytest.raises(ValueError, match="timing_stable"):
        release.release_noise(pc.Logistic(), 1.0, epsilon=1.0, delta=0.0, timing_stable=True)
    with pytest.raises(release.ReleaseNotSupportedError, match="delta > 0"):
        release.release_noise(pc.Subbotin(3.0), 1.0, epsilon=1.0, delta=0.0)


def test_lsb_distinguisher_finds_nothing():
    """Mironov's attack (tests/release/test_discrete_attack.py) against release_logistic at delta = 0."""
    eps, sens = 1.0, 1.0
    plan = release.calibrate_logistic_release(epsilon=eps, sensitivity=sens)
    x0, x1 = 0.0, sens - plan.grid
    assert round(x1 / plan.grid) % 2 == 1
    r = pc.Random(1414)
    out0 = pc.release_logistic(np.full(LSB_N, x0), epsilon=eps, sensitivity=sens, rng=r, simulation=True)
    out1 = pc.release_logistic(np.full(LSB_N, x1), epsilon=eps, sensitivity=sens, rng=r, simulation=True)
    certain, point = worst_violation(out0, out1, eps, 0.0)
    assert certain <= 0.0, (certain, point)
    assert point < 0.01


# ------------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, exc, name", [
    (lambda: release.calibrate_logistic_release(epsilon=float("nan")), ValueError, "epsilon"),
    (lambda: release.calibrate_logistic_release(epsilon=-1.0), ValueError, "epsilon"),
    (lambda: release.calibrate_logistic_release(epsilon=0.0), ValueError, "epsilon"),
    (lambda: release.calibrate_logistic_release(epsilon=math.inf), ValueError, "epsilon"),
    (lambda: release.calibrate_logistic_release(epsilon="1"), TypeError, "epsilon"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, delta=-0.1), ValueError, "delta"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, sensitivity=0.0), ValueError, "sensitivity"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, sensitivity=math.nan), ValueError, "sensitivity"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, timing_stable=True), ValueError, "timing_stable"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, timing_stable=1), TypeError, "timing_stable"),
    (lambda: release.calibrate_logistic_release(epsilon=1.0, grid_bits=31), ValueError, "grid_bits"),
    (lambda: pc.release_logistic(math.nan, epsilon=1.0, rng=pc.Random(1), simulation=True), ValueError, "finite"),
    (lambda: pc.release_logistic(1.0, epsilon=1.0, rng=pc.Random(1)), ValueError, "seed"),
    (lambda: pc.release_logistic(1.0, epsilon=1.0, timing_stable=True), ValueError, "timing_stable"),
    (lambda: _D.LatticeTable(0, 1.5, 3.0, 40, 1 << 24, 12), ValueError, "Logistic only"),
    (lambda: _D.LatticeTable(1, 1.0, 2.5, 40, 1 << 24, 12), ValueError, "integer scale"),
    (lambda: _D.LatticeTable(1, 1.0, 3.0, 12, 1 << 24, 12), ValueError, "tail bits"),
    (lambda: _tailed(3, 40).log_delta(1.0, 1), ValueError, "log_ratio_bound"),
    (lambda: _tailed(3, 40).log_ratio_bound(0), ValueError, "shift"),
    (lambda: _D.LatticeTable(1, 1.0, 3.0, 40, 1 << 24).log_ratio_bound(1), ValueError, "no geometric tail"),
    (lambda: _tailed(3, 40).sample(pc.Random(1).kernel, 10, True, 1), ValueError, "timing-stable"),
    (lambda: _tailed(3, 40)._from_uniform(np.zeros(2, dtype=np.uint64), True), ValueError, "geometric tail"),
])
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_speed_against_numpy_normal():
    """CPU time of release_logistic(delta=0) on 10^6 values (one thread, plan cached) against
    ``x + rng.normal(0, s, n)`` in the same run."""
    n = 10**6
    x = np.zeros(n)
    gen = pc.Random(9, threads=1)
    pc.release_logistic(x[:10], epsilon=1.0, rng=gen, simulation=True)  # calibrate (cached)
    t0 = time.process_time()
    pc.release_logistic(x, epsilon=1.0, rng=gen, simulation=True)
    t1 = time.process_time()
    rng = np.random.default_rng(1)
    t2 = time.process_time()
    _ = x + rng.normal(0.0, 1.0, n)
    t3 = time.process_time()
    print(f"release_logistic(delta=0) 1e6: {t1 - t0:.4f} s CPU, numpy normal: {t3 - t2:.4f} s, "
          f"ratio {(t1 - t0) / max(t3 - t2, 1e-9):.1f}")
    assert t1 - t0 < 5.0
