"""Timing-stable releases: every family, the Laplace and Gaussian through the Subbotin(1) and Subbotin(2)
tables; each value costs three random words and the same search steps (counted, deterministic), the
table stays within the cache budget, and the truncation and total-variation charges are in the plan."""
from __future__ import annotations

import math

import numpy as np
import pytest

import pydp_core as pc
from pydp_core import release
from pydp_core.release import lattice


@pytest.mark.parametrize("noise, r", [(pc.Laplace(), 1.0), (pc.Gaussian(), 2.0), (pc.Subbotin(1.5), 1.5)])
def test_release_noise_timing_stable_is_the_table_release(noise, r):
    x = np.linspace(-1.0, 1.0, 300)
    got = release.release_noise(noise, x, epsilon=1.0, delta=1e-6, timing_stable=True, rng=pc.Random(4),
                                simulation=True)
    want = pc.release_subbotin(x, r=r, epsilon=1.0, delta=1e-6, timing_stable=True, rng=pc.Random(4), simulation=True)
    assert np.array_equal(got, want)
    plan = release.calibrate_subbotin_release(r=r, epsilon=1.0, delta=1e-6, timing_stable=True)
    assert plan.timing_stable and plan.delta_achieved <= 1e-6
    # The plan's delta is the table profile (truncation included) plus the charge (1 + e^eps) 2**-129.
    base = math.exp(float(plan.table.log_delta(1.0, plan.shift)))
    assert plan.delta_achieved >= base + (1 + math.e) * lattice.STABLE_TV_BOUND * (1 - 1e-12)
    assert plan.table.half_size + 1 <= lattice.STABLE_TABLE_ENTRIES
    # Fixed work per value, whatever the value: three words and search_steps steps (counted).
    words = np.frombuffer(np.random.default_rng(9).bytes(8 * 3 * 3000), dtype=np.uint64).copy()
    words[:12] = [0, 0, 0, 2**64 - 1, 2**64 - 1, 2**64 - 1, 0, 2**64 - 1, 0, 1, 2, 3]
    vals, used, steps = plan.table._draw_words(words, 3000, True)
    assert np.all(used == 3) and np.all(steps == plan.table.search_steps)
    assert len(set(np.abs(vals).tolist())) > 50  # the values differ, the work does not


def test_timing_stable_laplace_needs_delta():
    with pytest.raises(release.ReleaseNotSupportedError, match="delta > 0"):
        release.release_noise(pc.Laplace(), 1.0, epsilon=1.0, delta=0.0, timing_stable=True)
    with pytest.raises(TypeError, match="timing_stable"):
        release.release_noise(pc.Laplace(), 1.0, epsilon=1.0, delta=1e-6, timing_stable=1)


def test_timing_stable_cost_in_scale_is_small():
    # The small table's coarser grid costs scale through the rounding charge only: at a power-of-two
    # sensitivity none (k = D), otherwise at most about 1 / D.
    for r in (1.0, 2.0, 3.0):
        plan = release.calibrate_subbotin_release(r=r, epsilon=1.0, delta=1e-6, timing_stable=True)
        cont = float(pc.minimal_scale(pc.Subbotin(r), epsilon=1.0, delta=1e-6))
        assert 0.99 < plan.scale / cont < 1.01


def test_timing_stable_budget_refuses_a_scale_far_above_the_sensitivity():
    # No grid with D >= 1 keeps the table within the cache budget: a clear error naming grid_bits,
    # before any noise; an explicit grid is used as given.
    with pytest.raises(pc.CalibrationError, match="grid_bits"):
        release.calibrate_subbotin_release(r=1.0, epsilon=0.03, delta=1e-6, timing_stable=True)
    with pytest.raises(pc.CalibrationError, match="grid_bits"):
        release.calibrate_vector_release(pc.Laplace(), epsilon=1.0, delta=1e-10, sensitivity=0.37, dimension=7,
                                         releases=3, timing_stable=True)
    plan = release.calibrate_subbotin_release(r=1.0, epsilon=0.03, delta=1e-6, timing_stable=True, grid_bits=4)
    assert plan.timing_stable and plan.table.half_size + 1 > lattice.STABLE_TABLE_ENTRIES
