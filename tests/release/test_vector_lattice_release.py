"""Vector lattice releases: the corner shift is the worst, the product certificate brackets a direct
computation, the calibration is minimal against it, and the release takes one vector or k of them."""
from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

import pydp_core as pc
from pydp_core import _core, release
from pydp_core.accounting.pld import PLD
from pydp_core.calibration import calibrate_box
from pydp_core.noise import Gaussian, Laplace, Logistic, Subbotin
from pydp_core.release import vector

_D = _core.release


def _pmf(table) -> tuple[np.ndarray, int]:
    """The table law on -K..K as float probabilities, and K."""
    w = [int(v) for v in table.weights()]
    full = np.array(w[:0:-1] + w, dtype=np.float64)
    return full / float(sum(w[:0:-1] + w)), len(w) - 1


def _shifted(p: np.ndarray, j: int, pad: int) -> np.ndarray:
    """p on the support padded by ``pad`` on each side, translated by j (the law of Y + j)."""
    out = np.zeros(p.size + 2 * pad)
    out[pad + j:pad + j + p.size] = p
    return out


def _direct_delta(p: np.ndarray, shifts, eps: float) -> float:
    """sum over the product support of max(0, P(y) - e^eps P(y - j)), by enumeration (m <= 3)."""
    pad = max(abs(j) for j in shifts) if shifts else 0
    base = _shifted(p, 0, pad)
    a = base.copy()
    b = _shifted(p, shifts[0], pad)
    for j in shifts[1:]:
        a = np.multiply.outer(a, base)
        b = np.multiply.outer(b, _shifted(p, j, pad))
    return float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0)))


@pytest.mark.parametrize("kind, r, s, m, k", [(0, 1.5, 2.0, 2, 3), (0, 3.0, 2.0, 3, 2), (1, 1.0, 1.5, 2, 3),
                                              (0, 1.0, 2.0, 3, 2), (0, 8.0, 3.0, 2, 3)])
def test_corner_is_the_worst_lattice_shift(kind, r, s, m, k):
    # Every integer shift vector of the box [-k, k]^m (which holds the l1 and l2 balls of radius k):
    # none has a larger delta than the corner (k, ..., k), and delta grows with each |j_i|.
    p, _ = _pmf(_D.LatticeTable(kind, r, s, 20, 1 << 24))
    for eps in (0.0, 0.3, 1.5):
        d = {j: _direct_delta(p, list(j), eps) for j in itertools.product(range(-k, k + 1), repeat=m)
             if any(j)}
        corner = d[(k,) * m]
        assert max(d.values()) <= corner * (1 + 1e-12)
        for j, v in d.items():
            assert d[tuple(abs(x) for x in j)] == pytest.approx(v, rel=1e-12)  # signs do not matter
            for i in range(m):
                if 0 <= j[i] < k:  # moving one coordinate outwards never lowers delta
                    up = list(j)
                    up[i] += 1
                    assert d[tuple(up)] >= v * (1 - 1e-12)


def test_integer_weights_pld_against_mpmath():
    t = _D.LatticeTable(0, 1.5, 3.0, 30, 1 << 24)
    w = [int(v) for v in t.weights()]
    full = w[:0:-1] + w
    total = sum(full)
    for shift in (1, 4):
        pld = PLD.from_integer_weights(t.weights(), shift=shift)
        for eps in (1e-3, 0.5, 2.0, 6.0):
            with mpmath.workdps(50):
                e = mpmath.exp(mpmath.mpf(eps))
                n = len(full)
                exact = sum(max(mpmath.mpf(0), (full[i] if i < n else 0) - e * (full[i - shift] if i >= shift else 0))
                            for i in range(n + shift)) / total
            iv = pld.delta(eps)
            assert iv.lower <= float(exact) * (1 + 1e-12) and float(exact) <= iv.upper * (1 + 1e-15)
        # Two-fold product against the enumeration.
        p, _ = _pmf(t)
        iv2 = pld.self_compose(2).with_discretization(value_step=1e-4).delta(0.5)
        direct = _direct_delta(p, [shift, shift], 0.5)
        assert iv2.lower <= direct * (1 + 1e-9) and direct <= iv2.upper * (1 + 1e-9)


@pytest.mark.parametrize("mechanism, r", [("subbotin", 1.5), ("subbotin", 3.0), ("logistic", 1.0)])
@pytest.mark.parametrize("m", [2, 3])
def test_calibration_against_a_direct_computation(mechanism, r, m):
    # The calibration core on a coarse grid (shift 2, small tables): the plan's certificate brackets the
    # enumerated delta of the m-fold product, the plan meets delta, and one step less does not.
    eps, dl, shift = 1.0, 1e-3, 2
    plan = vector._search(mechanism, r, eps, dl, 1.0, 0, ((shift, m),), "linf", 1, False, 4, 1e-3)
    s = int(plan.parameter)
    p, _ = _pmf(plan.table)
    direct = _direct_delta(p, [shift] * m, eps)
    assert plan.delta_lower <= direct * (1 + 1e-9) and direct <= plan.delta_achieved * (1 + 1e-9)
    assert direct <= dl
    below, _ = release.lattice._build_table(mechanism, r, s - 1)
    assert _direct_delta(_pmf(below)[0], [shift] * m, eps) > dl


@pytest.mark.parametrize("noise, m, k, eps", [(Subbotin(1.5), 5, 2, 1.0), (Subbotin(1.75), 20, 1, 1.0),
                                              (Laplace(), 2, 1, 1.0), (Gaussian(), 10, 10, 4.0),
                                              (Logistic(), 3, 1, 1.0)])
def test_vector_plan_is_within_a_percent_of_the_continuous_calibration(noise, m, k, eps):
    plan = release.calibrate_vector_release(noise, epsilon=eps, delta=1e-6, sensitivity=1 / 500, dimension=m,
                                            releases=k)
    cont = calibrate_box(noise, epsilon=eps, delta=1e-6, sensitivity=1 / 500, dimension=m, releases=k)
    assert plan.delta_achieved <= 1e-6 and plan.delta_lower <= plan.delta_achieved
    assert plan.steps == m * k and plan.shift >= plan.sensitivity / plan.grid
    assert abs(plan.noise_std / cont.rmse - 1.0) < 0.01
    # The certificate is reproducible from the plan's fields.
    assert plan.pld().delta(eps).upper == pytest.approx(plan.delta_achieved, rel=1e-12)


def test_release_takes_one_vector_or_k_of_them():
    plan = release.calibrate_vector_release(Subbotin(1.5), epsilon=1.0, delta=1e-6, sensitivity=0.01,
                                            dimension=3, releases=2)
    x = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    y = plan.release(x, rng=pc.Random(3), simulation=True)
    assert y.shape == (2, 3)
    assert np.all(y / plan.grid == np.round(y / plan.grid))
    assert np.array_equal(y, plan.release(x, rng=pc.Random(3), simulation=True))
    assert plan.release(x[0], rng=pc.Random(3), simulation=True).shape == (3,)
    with pytest.raises(ValueError, match="one vector of 3 or 6 values"):
        plan.release(np.zeros(4), rng=pc.Random(3), simulation=True)
    with pytest.raises(ValueError, match="seed|simulation"):
        plan.release(x, rng=pc.Random(3))
    z = release.release_vector(x, Subbotin(1.5), epsilon=1.0, delta=1e-6, sensitivity=0.01, rng=pc.Random(3),
                               simulation=True)
    assert np.array_equal(z, y)


@pytest.mark.parametrize("kwargs, exc, name", [
    (dict(noise=Subbotin(1.5), delta=0.0), ValueError, "delta"),
    (dict(noise=Subbotin(1.5), norm="l3"), ValueError, "norm"),
    (dict(noise="laplace"), TypeError, "noise"),
    (dict(noise=Subbotin(1.5), dimension=0), ValueError, "dimension"),
    (dict(noise=Subbotin(1.5), releases=1.5), TypeError, "releases"),
    (dict(noise=Subbotin(1.5), epsilon=float("nan")), ValueError, "epsilon"),
])
def test_bad_input_names_the_argument(kwargs, exc, name):
    args = dict(epsilon=1.0, delta=1e-6, sensitivity=1.0, dimension=2)
    args.update(kwargs)
    noise = args.pop("noise")
    with pytest.raises(exc, match=name):
        release.calibrate_vector_release(noise, **args)


def test_select_subbotin_release_picks_the_lattice_best():
    c = release.select_subbotin_release(epsilon=1.0, delta=1e-6, dimension=5, linf_sensitivity=1 / 500, releases=2,
                                        orders=[1.0, 1.5, 2.0, 4.0])
    assert c.order == min(c.lattice_rmse, key=c.lattice_rmse.get)
    assert c.plan.r == c.order and c.plan.steps == 10
    assert min(c.continuous_rmse, key=c.continuous_rmse.get) == c.order  # as in docs/study-subbotin.md
    assert 4.0 not in c.lattice_rmse  # far from the best in the continuous model: not calibrated
    with pytest.raises(ValueError, match="orders"):
        release.select_subbotin_release(epsilon=1.0, delta=1e-6, dimension=5, linf_sensitivity=0.01, orders=[])


@pytest.mark.parametrize("make", [
    lambda: release.calibrate_vector_release(Subbotin(1.5), epsilon=1.0, delta=1e-6, sensitivity=1.0, dimension=2,
                                             releases=200_000),
    lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6, timing_stable=True),
    lambda: release.calibrate_subbotin_release(r=2.0, epsilon=1.0, delta=1e-6, timing_stable=True),
])
def test_lsb_distinguisher_finds_nothing(make):
    # Mironov's least-significant-bit distinguisher (tests/support/lsb.py) on 400,000 outputs per
    # input: no event violates the guarantee at the confidence limits (every coordinate of a vector
    # release is a post-processing of it, so the total guarantee bounds each coordinate).
    from support.lsb import N, worst_violation

    plan = make()
    x0, x1 = 0.0, plan.sensitivity - plan.grid
    r = pc.Random(414)
    shape = (N // 2, 2) if plan.dimension == 2 else (N,)
    out0 = plan.release(np.full(shape, x0), rng=r, simulation=True).reshape(-1)
    out1 = plan.release(np.full(shape, x1), rng=r, simulation=True).reshape(-1)
    certain, point = worst_violation(out0, out1, plan.epsilon, plan.delta)
    assert certain <= 0.0, (certain, point)
    assert point < 0.01
