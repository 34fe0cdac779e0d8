"""The exact-mode lattice sampler's guide-table search maps every uniform to the same value as the
fixed-step binary search (the inversion of docs/release.md, section 4): exhaustively for small tables,
and at every entry boundary and on random uniforms for calibrated ones."""
from __future__ import annotations

import numpy as np
import pytest

from pydp_core import _core, release

_D = _core.release


def _boundaries(table) -> np.ndarray:
    """Every uniform next to an entry boundary of the inversion: W(0) - 1, W(0), and C(i) - 1, C(i),
    C(i) + 1 on both sides (C the cumulative weights of y >= 1), clipped to [0, T)."""
    w = table.weights().astype(object)
    w0, total = int(w[0]), int(table.total)
    cum = np.cumsum(w[1:]).astype(object)
    s = int(cum[-1]) if len(cum) else 0
    points = {w0 - 1, w0, 0, total - 1}
    for c in cum:
        for side in (w0, w0 + s):
            for d in (-1, 0, 1):
                points.add(side + int(c) + d)
    return np.array(sorted(p for p in points if 0 <= p < total), dtype=np.uint64)


@pytest.mark.parametrize("kind, r, s, bits", [(0, 1.5, 3.0, 8), (1, 1.0, 2.5, 7), (0, 8.0, 6.0, 9),
                                              (0, 1.0, 0.3, 6), (0, 2.0, 40.0, 12)])
def test_guided_search_equals_the_fixed_step_search_everywhere(kind, r, s, bits):
    t = _D.LatticeTable(kind, r, s, bits, 1 << 24)
    u = np.arange(t.total, dtype=np.uint64)  # every uniform (small totals)
    assert t.total <= 1 << 22
    assert np.array_equal(t._from_uniform(u, True), t._from_uniform(u, False))


@pytest.mark.parametrize("make", [
    lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6),
    lambda: release.calibrate_logistic_release(epsilon=1.0, delta=1e-9),
    lambda: release.calibrate_subbotin_release(r=8.0, epsilon=0.5, delta=1e-9),
])
def test_guided_search_equals_the_fixed_step_search_on_calibrated_tables(make):
    t = make().table
    edges = _boundaries(t)
    assert np.array_equal(t._from_uniform(edges, True), t._from_uniform(edges, False))
    u = np.random.default_rng(3).integers(0, t.total, 200_000, dtype=np.uint64)
    assert np.array_equal(t._from_uniform(u, True), t._from_uniform(u, False))


def test_release_uses_the_same_values_as_the_word_by_word_draw():
    # The batch sampler (guide table) and the one-at-a-time test hook (fixed-step search) turn the same
    # words into the same values.
    t = release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6).table
    words = np.random.default_rng(4).integers(0, 2**63, 4000, dtype=np.uint64) * np.uint64(2)
    one_by_one, used, _ = t._draw_words(words, 1000, False)
    u = []
    i = 0
    for n in used:
        u.append(int(words[i + n - 1]) * int(t.total) >> 64)  # the accepted word's high product
        i += n
    assert np.array_equal(t._from_uniform(np.array(u, dtype=np.uint64), True), one_by_one)


def test_bad_uniform_is_refused():
    t = _D.LatticeTable(0, 1.5, 3.0, 8, 1 << 24)
    with pytest.raises(ValueError, match="uniform"):
        t._from_uniform(np.array([t.total], dtype=np.uint64), True)


def _random_boundaries(table, count: int, seed: int) -> np.ndarray:
    """Uniforms at C(i) - 1, C(i), C(i) + 1 on both sides for ``count`` random entries i (large tables)."""
    w = table.weights()
    w0 = int(w[0])
    cum = np.cumsum(w[1:].astype(np.uint64))  # C(K - 1) = S < 2**62: no overflow
    s = int(cum[-1])
    pick = cum[np.random.default_rng(seed).integers(0, len(cum), count)]
    points = [pick + np.uint64(side + d) for side in (w0, w0 + s) for d in (-1, 0, 1)]
    u = np.concatenate(points)
    return u[u < np.uint64(table.total)]


@pytest.mark.parametrize("make", [
    lambda: _D.LatticeTable(0, 1.5, 259889.0, 42, 1 << 24),  # the table of the benchmark's vector plan
    lambda: release.calibrate_logistic_release(epsilon=0.1, delta=1e-12).table,
])
def test_guided_search_equals_the_fixed_step_search_on_large_tables(make):
    # Tables of millions of entries (beyond the L2 cache): the passes with prefetches over 256 values, the
    # branchless step for buckets of at most two boundaries and the binary search for wider ones.
    t = make()
    assert t.half_size > 2_000_000
    edges = _random_boundaries(t, 100_000, 5)
    assert np.array_equal(t._from_uniform(edges, True), t._from_uniform(edges, False))
    u = np.random.default_rng(6).integers(0, t.total, 300_001, dtype=np.uint64)
    assert np.array_equal(t._from_uniform(u, True), t._from_uniform(u, False))


@pytest.mark.parametrize("n", [1, 15, 16, 17, 255, 256, 257, 1000])
def test_guided_search_on_partial_spans(n):
    # Spans of every length class: shorter than a block, between blocks, and across the 256-value span.
    t = _D.LatticeTable(1, 1.0, 2000.0, 40, 1 << 24)
    edges = _boundaries(t)
    u = np.random.default_rng(n).choice(edges, n)
    assert np.array_equal(t._from_uniform(u, True), t._from_uniform(u, False))
