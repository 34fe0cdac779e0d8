"""The lattice releases give, for a fixed key, the same output bits as the recorded ones: the noise is a
function of the key and the position only (the reproducibility contract of the chunked streams), so a
change of the search, the word order or the table layout that altered any value shows here. The digests
were recorded before the exact-mode search was restructured (passes over spans with prefetches) and
must stay as they are; a deliberate change of the law or of the words read needs new digests and a
note in CHANGELOG.md."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import pydp_core as pc
from pydp_core import release
from pydp_core.noise import Subbotin

_CASES = {
    "logistic": (lambda: release.calibrate_logistic_release(epsilon=1.0, delta=1e-9), 20_001,
                 "aac6ca6c5efda99cf9203569db0363148a5eb00a7d14e7fb3bffb6b66544ddda"),
    # 100_003 values reach the geometric tail a dozen times (|noise| > K steps)
    "logistic_pure": (lambda: release.calibrate_logistic_release(epsilon=1.0), 100_003,
                      "ed965e066c0aae2d18f99ef9793ffd6827574ad1a6073e8bc4f5f3177d784ffe"),
    "subbotin_1.5": (lambda: release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6), 20_001,
                     "d6484161fb91a87cde9904619d2792aa2d0296675c52803957da5ed60bea5be4"),
    "subbotin_2_stable": (lambda: release.calibrate_subbotin_release(r=2.0, epsilon=1.0, delta=1e-6,
                                                                     timing_stable=True), 20_001,
                          "985297eb5d1565efbb2dc387b0e3be341c883b45dbacdfa154e372eb8edfb3b1"),
    "vector_1.5": (lambda: release.calibrate_vector_release(Subbotin(1.5), epsilon=1.0, delta=1e-6,
                                                            sensitivity=1 / 500, dimension=5, releases=2), 10,
                   "ddce5b73b55c72bdcb3a885ec054712bf3138a295461f50371bf1eea3954674f"),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_release_bits_for_a_key_are_the_recorded_ones(name):
    make, n, digest = _CASES[name]
    x = np.linspace(-3.0, 3.0, n)
    y = np.asarray(make().release(x, rng=pc.Random(seed=20261203, threads=2), simulation=True), dtype=np.float64)
    assert hashlib.sha256(y.tobytes()).hexdigest() == digest
