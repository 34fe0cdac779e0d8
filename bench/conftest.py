"""Shared helpers for the benchmarks: same-run ratio measurements and throughput guards.

Every benchmark measures our kernel and its baseline (numpy/scipy or a peer library) in the same run
and records the ratio in ``benchmark.extra_info``. Ratio goals are asserted only when timings are on
(``pytest bench``); under ``--benchmark-disable`` (CI) only correctness is checked, since wall-clock
ratios on a shared CI machine are not evidence.
"""
from __future__ import annotations

import time
from typing import Callable

import pytest


def best_time(fn: Callable[[], object], repeat: int = 5, min_time: float = 0.05) -> float:
    """Best wall time of one call of ``fn`` over ``repeat`` rounds (each round loops to >= min_time)."""
    best = float("inf")
    for _ in range(repeat):
        n, start = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        best = min(best, elapsed / n)
    return best


class Speed:
    def __init__(self, benchmark) -> None:
        self.benchmark = benchmark
        self.enabled = not benchmark.disabled

    def time(self, fn: Callable[[], object], repeat: int = 5, min_time: float = 0.05) -> float:
        if not self.enabled:  # CI: one call for correctness, no timing loop
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start
        return best_time(fn, repeat, min_time)

    def cpu_time(self, fn: Callable[[], object], repeat: int = 5) -> float:
        """Best CPU time of this process for one call: on a shared machine, the time single-threaded
        work really took (other processes' load does not count). One untimed call when timings are off."""
        if not self.enabled:
            return self.time(fn)
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        return best

    def ratio(self, name: str, ours: float, baseline: float, goal: float | None = None) -> float:
        """Record baseline/ours (a speed-up) and, with timings on, assert it meets ``goal``."""
        r = baseline / ours
        self.benchmark.extra_info[name] = round(r, 3)
        print(f"\n{name}: {r:.2f}x (ours {ours * 1e6:.3f} us, baseline {baseline * 1e6:.3f} us)")
        if goal is not None and self.enabled:
            assert r >= goal, f"{name}: {r:.2f}x is below the goal of {goal}x"
        return r


@pytest.fixture
def speed(benchmark) -> Speed:
    return Speed(benchmark)
