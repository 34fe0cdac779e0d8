"""The numpy BitGenerator ChaCha20 (pydp_core/random/bitgen.py) against randomgen's ChaCha BitGenerator, both
driven by numpy's own Generator in the same run.

- normals: numpy.random.Generator(ChaCha20(seed)).standard_normal(n, out=...) vs
  numpy.random.Generator(randomgen.ChaCha(seed, rounds=20)).standard_normal(n, out=...), goal >= 3x per
  normal (both are ChaCha20; numpy's ziggurat draws one 64-bit word per normal for 99% of them);
- uniforms (next_double) and raw words (random_raw): reported;
- numpy's PCG64 and SFC64 (not CSPRNGs): reported, with our ratio to SFC64 for normals and uniforms. SFC64 is numpy's cheapest bit generator (a few adds and
  rotates per word), so its ratio to randomgen's ChaCha is about the ceiling that any BitGenerator can
  reach through numpy's own ziggurat on the machine at hand: the per-normal cost of numpy's sampling code
  is paid whatever the words cost.
Timed run: pytest bench/bench_bitgen.py -s; CI: --benchmark-disable (correctness only). Ratios use
process CPU time (single-threaded work on a shared machine). Seeded generators here are benchmarks.
"""
from __future__ import annotations

import numpy as np
import pytest
import randomgen

from pydp_core.random import ChaCha20

N = 2_000_000


@pytest.fixture(scope="module")
def out() -> np.ndarray:
    x = np.empty(N)
    x.fill(0.0)
    return x


def _gens():
    return {
        "pydp_core ChaCha20": np.random.Generator(ChaCha20(2024)),
        "randomgen ChaCha(rounds=20)": np.random.Generator(randomgen.ChaCha(2024, rounds=20)),
        "numpy PCG64": np.random.Generator(np.random.PCG64(2024)),
        "numpy SFC64": np.random.Generator(np.random.SFC64(2024)),
    }


@pytest.mark.guard
def test_normals_vs_randomgen_chacha(benchmark, speed, out):
    gens = _gens()
    times = {name: speed.cpu_time(lambda g=g: g.standard_normal(N, out=out)) for name, g in gens.items()}
    # correctness inside the benchmark: a standard normal sample (mean within 6 standard errors)
    x = gens["pydp_core ChaCha20"].standard_normal(N, out=out)
    assert abs(x.mean()) < 6 / np.sqrt(N) and abs(x.var() - 1) < 6 * np.sqrt(2 / N)
    for name, t in times.items():
        print(f"\n{name}: {t / N * 1e9:.2f} ns per normal")
    speed.ratio("normal vs numpy PCG64 (not a CSPRNG)", times["pydp_core ChaCha20"], times["numpy PCG64"])
    ceiling = speed.ratio("ceiling: numpy SFC64 (not a CSPRNG) vs randomgen ChaCha", times["numpy SFC64"],
                          times["randomgen ChaCha(rounds=20)"])
    ours = times["randomgen ChaCha(rounds=20)"] / times["pydp_core ChaCha20"]
    print(f"\nours reach {ours / ceiling:.0%} of that ceiling")
    # The goal is >= 0.95 (numpy's ceiling); reported, not yet asserted.
    speed.ratio("normal vs numpy SFC64 (the ceiling; not a CSPRNG)", times["pydp_core ChaCha20"], times["numpy SFC64"])
    speed.ratio("normal vs randomgen ChaCha", times["pydp_core ChaCha20"], times["randomgen ChaCha(rounds=20)"], goal=3.0)
    benchmark.pedantic(lambda: gens["pydp_core ChaCha20"].standard_normal(N, out=out), rounds=1, iterations=1)


def test_uniforms_and_raw_words(benchmark, speed, out):
    gens = _gens()
    times = {name: speed.cpu_time(lambda g=g: g.random(N, out=out)) for name, g in gens.items()}
    speed.ratio("uniform vs randomgen ChaCha", times["pydp_core ChaCha20"], times["randomgen ChaCha(rounds=20)"])
    speed.ratio("uniform vs numpy SFC64 (the ceiling; not a CSPRNG)", times["pydp_core ChaCha20"], times["numpy SFC64"])
    speed.ratio("uniform vs numpy PCG64 (not a CSPRNG)", times["pydp_core ChaCha20"], times["numpy PCG64"])
    ours, theirs = ChaCha20(1), randomgen.ChaCha(1, rounds=20)
    assert ours.random_raw(N).dtype == np.uint64
    speed.ratio("random_raw vs randomgen ChaCha", speed.cpu_time(lambda: ours.random_raw(N)),
                speed.cpu_time(lambda: theirs.random_raw(N)))
    benchmark.pedantic(lambda: gens["pydp_core ChaCha20"].random(N, out=out), rounds=1, iterations=1)
