"""Speed of the exact Gaussian epsilon(delta) and of RDP conversions, against dp-accounting and autodp.

All timings are taken in the same run. ``pytest bench/bench_accounting.py`` times each implementation
with pytest-benchmark (and checks its answers); ``python bench/bench_accounting.py`` prints the
per-call ratios (best of several repeats, to damp the noise of a shared machine). The ratio is
asserted (>= 300) only when the environment variable PYDP_BENCH_ASSERT_SPEED=1 is set, since CI runs
on shared, noisy machines.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

import pydp_core as pc
from pydp_core import gdp as G

N_VEC = 20000  # elements in one vectorised call
N_PEER = 40  # peer calls per timing (each is one scalar solve)
RNG = np.random.default_rng(20261121)
PSIS = RNG.uniform(0.05, 8.0, N_VEC)
DELTAS = 10.0 ** RNG.uniform(-12.0, -2.0, N_VEC)


def _ours():
    return G.gdp_epsilon(PSIS, delta=DELTAS)


def _dp_accounting():
    from dp_accounting import gaussian_mechanism

    return [gaussian_mechanism.get_epsilon_gaussian(1.0 / p, d, tol=1e-12) for p, d in zip(PSIS[:N_PEER], DELTAS[:N_PEER])]


def _autodp():
    from autodp import dp_bank

    return [dp_bank.get_eps_ana_gaussian(1.0 / p, d) for p, d in zip(PSIS[:N_PEER], DELTAS[:N_PEER])]


def test_ours_vectorised(benchmark):
    out = benchmark(_ours)
    # correctness: each epsilon meets its delta and is minimal (checked on a sample in double precision)
    idx = np.arange(0, N_VEC, 997)
    back = G.gdp_delta(PSIS[idx], epsilon=out[idx])
    assert np.all(back <= DELTAS[idx] * (1 + 1e-12))
    assert np.all(G.gdp_delta(PSIS[idx], epsilon=out[idx] * (1 - 1e-8)) > DELTAS[idx])


def test_dp_accounting_per_call(benchmark):
    pytest.importorskip("dp_accounting", reason="dp-accounting is not installed")
    theirs = benchmark(_dp_accounting)
    np.testing.assert_allclose(theirs, G.gdp_epsilon(PSIS[:N_PEER], delta=DELTAS[:N_PEER]), rtol=1e-7)


def test_autodp_per_call(benchmark):
    pytest.importorskip("autodp", reason="autodp is not installed")
    theirs = benchmark(_autodp)
    np.testing.assert_allclose(theirs, G.gdp_epsilon(PSIS[:N_PEER], delta=DELTAS[:N_PEER]), rtol=1e-6)


ORDERS = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11.0, 257.0)])


def test_rdp_best_order_ours(benchmark):
    curve = pc.RDPCurve(0.5 * ORDERS * 0.3**2, ORDERS)
    e, a = benchmark(curve.best_alpha, 1e-6, "balle2020")
    dpa = pytest.importorskip("dp_accounting", reason="dp-accounting is not installed")
    from dp_accounting.rdp import rdp_privacy_accountant as r

    theirs, order = r.compute_epsilon(ORDERS, 0.5 * ORDERS * 0.3**2, 1e-6)
    assert e == pytest.approx(theirs, rel=1e-12) and a == order
    del dpa


def _best(fn, repeat=5):
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def measure():
    t_ours = _best(_ours) / N_VEC
    out = {"ours_per_element_s": t_ours}
    try:
        t_dpa = _best(_dp_accounting, 3) / N_PEER
        out.update(dp_accounting_per_call_s=t_dpa, ratio_dp_accounting=t_dpa / t_ours)
    except ImportError:
        pass
    try:
        t_adp = _best(_autodp, 3) / N_PEER
        out.update(autodp_per_call_s=t_adp, ratio_autodp=t_adp / t_ours)
    except ImportError:
        pass
    t_scalar = _best(lambda: [pc.GDP(p).to_approx_dp(d) for p, d in zip(PSIS[:2000], DELTAS[:2000])]) / 2000
    out["ours_scalar_api_per_call_s"] = t_scalar
    return out


def test_speed_ratio():
    r = measure()
    print(r)
    if os.environ.get("PYDP_BENCH_ASSERT_SPEED") == "1":
        for k in ("ratio_dp_accounting", "ratio_autodp"):
            if k in r:
                assert r[k] >= 300, r


if __name__ == "__main__":
    for k, v in measure().items():
        print(f"{k}: {v:.3g}")
