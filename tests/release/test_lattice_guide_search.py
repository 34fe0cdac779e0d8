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
