"""Release speed in the same run: each safe release of 10^6 values against numpy's unsafe
``x + rng.normal(0, s, n)`` (CPU time, one thread; goal: our time-rate >= 0.5x numpy's), two threads
against one (wall clock; goal 1.7x), and single-value latency (goal: <= 20 us with a calibrated plan,
<= 50 us from the function form, plans cached by their parameters).

Timed run: ``pytest bench/bench_release_speed.py -s``; CI: ``--benchmark-disable`` (one call each).
On a machine shared with other work the wall-clock figures (threads, latency) measure the scheduler
too; measure idle.
"""
from __future__ import annotations

import time

import numpy as np

import pydp_core as pc
from pydp_core import release
from pydp_core.noise import Subbotin

N = 1_000_000
PLANS = {
    "laplace": lambda: release.calibrate_laplace_release(epsilon=1.0),
    "gaussian": lambda: release.calibrate_gaussian_release(epsilon=1.0, delta=1e-6),
    "subbotin r=1.5": lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6),
    "subbotin r=3": lambda: release.calibrate_subbotin_release(r=3.0, epsilon=1.0, delta=1e-6),
    "logistic": lambda: release.calibrate_logistic_release(epsilon=1.0, delta=1e-9),
    "logistic pure (delta=0)": lambda: release.calibrate_logistic_release(epsilon=1.0),
    "subbotin r=2 timing-stable": lambda: release.calibrate_subbotin_release(r=2.0, epsilon=1.0, delta=1e-6,
                                                                             timing_stable=True),
    "vector r=1.5, m=1000": lambda: release.calibrate_vector_release(Subbotin(1.5), epsilon=1.0, delta=1e-6,
                                                                     sensitivity=1 / 500, dimension=1000,
                                                                     releases=1000),
}


def test_bulk_against_numpy(benchmark, speed):
    n = N if speed.enabled else 1000
    x = np.zeros(n)
    g = np.random.default_rng()
    one, two = pc.Random(threads=1), pc.Random(threads=2)
    base = speed.cpu_time(lambda: x + g.normal(0.0, 1.0, n), repeat=3)
    benchmark.pedantic(lambda: PLANS["laplace"]().release(x, rng=one), rounds=1, iterations=1)
    print()
    for name, make in PLANS.items():
        plan = make()
        xs = np.zeros((n // plan.dimension, plan.dimension)) if plan.dimension > 1 else x
        cpu = speed.cpu_time(lambda: plan.release(xs, rng=one), repeat=3)
        w1 = speed.time(lambda: plan.release(xs, rng=one), repeat=3, min_time=0.0)
        w2 = speed.time(lambda: plan.release(xs, rng=two), repeat=3, min_time=0.0)
        speed.benchmark.extra_info[name + " rate vs numpy"] = round(base / cpu, 3)
        print(f"{name:28s} {cpu / n * 1e9:6.1f} ns/value CPU (numpy normal {base / n * 1e9:.1f}): "
              f"rate x{base / cpu:.2f} of numpy; 2 threads x{w1 / w2:.2f} (wall)")


def test_single_value_latency(benchmark, speed):
    k = 2000 if speed.enabled else 2
    plan = release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6)
    calls = {
        "plan.release (subbotin r=1.5)": lambda: plan.release(0.0),
        "release_subbotin(r=1.5)": lambda: pc.release_subbotin(0.0, r=1.5, epsilon=1.0, delta=1e-6),
        "release_logistic": lambda: pc.release_logistic(0.0, epsilon=1.0, delta=1e-9),
        "release_laplace": lambda: pc.release_laplace(0.0, epsilon=1.0),
        "release_gaussian": lambda: pc.release_gaussian(0.0, epsilon=1.0, delta=1e-6),
    }
    benchmark.pedantic(calls["plan.release (subbotin r=1.5)"], rounds=1, iterations=1)
    print()
    for name, fn in calls.items():
        fn()  # the first call calibrates (and caches) the plan
        t = time.perf_counter()
        for _ in range(k):
            fn()
        us = (time.perf_counter() - t) / k * 1e6
        speed.benchmark.extra_info[name + " us"] = round(us, 1)
        print(f"{name:32s} {us:6.1f} us per single-value release")
