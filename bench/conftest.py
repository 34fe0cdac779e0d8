"""Shared helpers for the benchmarks: same-run ratio measurements and throughput guards.

Every benchmark measures our kernel and its baseline (numpy/scipy or a peer library) in the same run
and records the ratio in ``benchmark.extra_info``. Ratio goals are asserted only when timings are on
(``pytest bench``); under ``--benchmark-disable`` only correctness is checked, since wall-clock ratios
on a shared machine are not evidence.

The throughput guard (``.ci/run``): ``pytest bench -m guard --throughput-guard`` runs the benchmarks
marked ``guard`` (fast, single-threaded, each a same-run ratio of process CPU times, which machine load
does not move) with timings on, and fails a ratio below GUARD_FRACTION of its goal: a real regression
fails, noise does not. Their JSON (``--benchmark-json``) goes to bench/results/.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))

from support.ledgers import _own_key_ledgers  # noqa: E402,F401  (an autouse fixture)

#: Under --throughput-guard a ratio fails below this fraction of its goal.
GUARD_FRACTION = 0.6


def pytest_addoption(parser) -> None:
    parser.addoption("--throughput-guard", action="store_true", default=False,
                     help="assert each ratio goal at GUARD_FRACTION of its value (CI's throughput guard)")


def pytest_configure(config) -> None:
    if config.getoption("--throughput-guard") and config.getoption("benchmark_disable", False):
        raise pytest.UsageError("--throughput-guard needs timings: drop --benchmark-disable")


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
    def __init__(self, benchmark, guard: bool = False) -> None:
        self.benchmark = benchmark
        self.enabled = not benchmark.disabled
        self.floor = GUARD_FRACTION if guard else 1.0  # the fraction of each goal asserted

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
        """Record baseline/ours (a speed-up) and, with timings on, assert it meets ``goal`` (under the
        throughput guard: GUARD_FRACTION of it)."""
        r = baseline / ours
        self.benchmark.extra_info[name] = round(r, 3)
        print(f"\n{name}: {r:.2f}x (ours {ours * 1e6:.3f} us, baseline {baseline * 1e6:.3f} us)")
        if goal is not None and self.enabled:
            self.benchmark.extra_info[name + " goal"] = goal
            floor = goal * self.floor
            assert r >= floor, f"{name}: {r:.2f}x is below {floor:.3g}x ({self.floor:.0%} of the goal {goal}x)"
        return r


@pytest.fixture
def speed(benchmark, request) -> Speed:
    return Speed(benchmark, guard=request.config.getoption("--throughput-guard"))
