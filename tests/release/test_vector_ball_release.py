"""l_1 and l_2 vector lattice releases: the rounded shifts stay under the sorted envelope, the envelope's
product certificate bounds every integer shift of the ball (enumerated for m = 2, 3 against float and
50-digit references), and the calibration on it is minimal against a direct computation."""
from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from pydp_core import _core, release
from pydp_core.noise import Gaussian, Subbotin
from pydp_core.release import vector

_D = _core.release


def _envelope(norm: str, d: float, m: int) -> list[int]:
    """The sorted envelope written out coordinate by coordinate (ball_shifts keeps the first 8 exact)."""
    return [j for j, c in vector.ball_shifts(norm, d, 0, m) for _ in range(c)]


def _in_ball(j, norm: str, d: float) -> bool:
    """The integer shifts the rounding may produce: (|j_i| - 1)_+ <= |q_i(x) - q_i(x')| (Lemma 1)."""
    excess = [max(abs(x) - 1, 0) for x in j]
    return sum(excess) <= d if norm == "l1" else sum(x * x for x in excess) <= d * d


def _pmf(table) -> np.ndarray:
    w = [int(v) for v in table.weights()]
    full = np.array(w[:0:-1] + w, dtype=np.float64)
    return full / full.sum()


def _direct_delta(p: np.ndarray, shifts, eps: float) -> float:
    """sum over the product support of max(0, P(y) - e^eps P(y - j)), by enumeration."""
    pad = max(abs(j) for j in shifts)
    base = np.zeros(p.size + 2 * pad)
    base[pad:pad + p.size] = p

    def moved(j):
        out = np.zeros_like(base)
        out[pad + j:pad + j + p.size] = p
        return out

    a, b = base.copy(), moved(shifts[0])
    for j in shifts[1:]:
        a = np.multiply.outer(a, base)
        b = np.multiply.outer(b, moved(j))
    return float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0)))


def _mp_delta(table, shifts, eps: float) -> mpmath.mpf:
    """The same sum in 50-digit arithmetic from the table's integers (m = 2)."""
    w = [int(v) for v in table.weights()]
    K = len(w) - 1

    def weight(y):
        return w[abs(y)] if abs(y) <= K else 0

    total = sum(weight(y) for y in range(-K, K + 1))
    j1, j2 = shifts
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps))
        acc = mpmath.mpf(0)
        for y1 in range(-K, K + 1):
            for y2 in range(-K, K + 1):
                v = weight(y1) * weight(y2) - e * weight(y1 - j1) * weight(y2 - j2)
                if v > 0:
                    acc += v
        return acc / total**2


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("d, m", [(3.5, 2), (4.0, 3), (2.25, 3), (7.75, 2)])
def test_rounding_stays_under_the_envelope(norm, d, m):
    # Input pairs with ||a - b||_p <= D, many on the sphere and at rounding ties: the sorted |j| of
    # rint(a) - rint(b) (ties to even, as the release rounds) never exceeds the envelope.
    rng = np.random.default_rng(5)
    env = _envelope(norm, d, m)
    worst = [0] * m
    for _ in range(20000):
        direction = rng.standard_normal(m) if rng.random() < 0.5 else rng.choice([-1.0, 0.0, 1.0], m)
        size = np.abs(direction).sum() if norm == "l1" else math.sqrt(float(np.sum(direction ** 2)))
        if size == 0:
            continue
        diff = direction / size * d * (1.0 if rng.random() < 0.5 else rng.random())
        a = rng.integers(-8, 8, m) + rng.choice([0.5, rng.random()], m)  # half-way points and others
        b = a - diff
        j = sorted(np.abs(np.rint(a) - np.rint(b)).astype(int), reverse=True)
        assert all(x <= e for x, e in zip(j, env)), (a, b, j, env)
        worst = [max(w, x) for w, x in zip(worst, j)]
    assert worst[0] == env[0]  # the leading bound is reached: the envelope is not loose there


@pytest.mark.parametrize("kind, r, s", [(0, 1.5, 2.0), (0, 1.0, 2.0), (0, 3.0, 2.5), (1, 1.0, 1.5)])
@pytest.mark.parametrize("norm, d, m", [("l1", 3.5, 2), ("l2", 3.5, 2), ("l1", 2.5, 3), ("l2", 2.5, 3)])
def test_envelope_bounds_every_shift_of_the_ball(kind, r, s, norm, d, m):
    table = _D.LatticeTable(kind, r, s, 20, 1 << 24)
    p = _pmf(table)
    shifts = vector.ball_shifts(norm, d, 0, m)
    k = shifts[0][0]
    ball = [j for j in itertools.product(range(-k, k + 1), repeat=m) if any(j) and _in_ball(j, norm, d)]
    pld = vector._product_pld(table, shifts, 1, 1e-4)
    for eps in (0.0, 0.3, 1.5):
        worst = max(_direct_delta(p, list(j), eps) for j in ball)
        iv = pld.delta(eps)
        assert worst <= iv.upper * (1 + 1e-9)
        # The l_inf corner is a valid but larger bound: the ball's certificate is tighter.
        assert iv.upper < _direct_delta(p, [k] * m, eps)
    if m == 2:  # the certificate against a 50-digit sum at the envelope itself
        env = _envelope(norm, d, m)
        exact = float(_mp_delta(table, env, 0.3))
        iv = pld.delta(0.3)
        assert iv.lower <= exact * (1 + 1e-12) and exact <= iv.upper * (1 + 1e-12)


@pytest.mark.parametrize("mechanism, r, norm", [("subbotin", 1.5, "l1"), ("subbotin", 3.0, "l2"),
                                                ("logistic", 1.0, "l1")])
def test_ball_calibration_against_a_direct_computation(mechanism, r, norm):
    # The calibration core on a coarse grid (D = 3.5 grid steps, small tables): the plan's certificate
    # brackets the enumerated delta at the envelope, meets delta, and one step less does not.
    eps, dl, d = 1.0, 1e-3, 3.5
    shifts = vector.ball_shifts(norm, d, 0, 2)
    plan = vector._search(mechanism, r, eps, dl, d, 0, shifts, norm, 1, False, 4, 1e-3)
    env = [j for j, c in shifts for _ in range(c)]
    s = int(plan.parameter)
    direct = _direct_delta(_pmf(plan.table), env, eps)
    assert plan.delta_lower <= direct * (1 + 1e-9) and direct <= plan.delta_achieved * (1 + 1e-9)
    assert direct <= dl
    below, _ = release.lattice._build_table(mechanism, r, s - 1)
    assert _direct_delta(_pmf(below), env, eps) > dl


@pytest.mark.parametrize("noise, norm", [(Gaussian(), "l2"), (Subbotin(1.5), "l1")])
def test_ball_plans_are_certified_and_below_the_box(noise, norm):
    args = dict(epsilon=1.0, delta=1e-6, sensitivity=0.05, dimension=4)
    plan = release.calibrate_vector_release(noise, norm=norm, **args)
    box = release.calibrate_vector_release(noise, **args)
    assert plan.norm == norm and plan.delta_achieved <= 1e-6 and plan.delta_lower <= plan.delta_achieved
    assert sum(c for _, c in plan.shifts) == 4 and plan.shift == plan.shifts[0][0]
    assert plan.shifts == vector.ball_shifts(norm, 0.05, plan.grid_exponent, 4)
    assert plan.pld().delta(1.0).upper == pytest.approx(plan.delta_achieved, rel=1e-12)
    assert plan.noise_std < 0.8 * box.noise_std  # the l_inf bound would over-charge
    assert box.shifts == ((box.shift, 4),)
