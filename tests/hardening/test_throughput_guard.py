"""The throughput guard of bench/conftest.py: under --throughput-guard a ratio fails below 60% of its
goal and passes above it; without the guard the full goal is asserted; with timings off nothing is."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("bench_conftest", Path(__file__).resolve().parents[2] / "bench" / "conftest.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


class _Benchmark:
    def __init__(self, disabled: bool) -> None:
        self.disabled = disabled
        self.extra_info: dict = {}


def test_guard_fails_a_regression_below_the_fraction():
    speed = bench.Speed(_Benchmark(False), guard=True)
    assert bench.GUARD_FRACTION == 0.6
    speed.ratio("ok", ours=1.0, baseline=1.9, goal=3.0)  # 1.9x >= 0.6 * 3 = 1.8x
    with pytest.raises(AssertionError, match="below 1.8x"):
        speed.ratio("slow", ours=1.0, baseline=1.7, goal=3.0)
    assert speed.benchmark.extra_info["ok"] == 1.9 and speed.benchmark.extra_info["ok goal"] == 3.0


def test_without_the_guard_the_full_goal_holds():
    speed = bench.Speed(_Benchmark(False))
    with pytest.raises(AssertionError):
        speed.ratio("short", ours=1.0, baseline=2.9, goal=3.0)


def test_timings_off_assert_nothing():
    bench.Speed(_Benchmark(True), guard=True).ratio("any", ours=1.0, baseline=0.1, goal=3.0)
