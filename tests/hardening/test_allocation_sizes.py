"""Kernels re-check the sizes they allocate from.

``chacha20_block(..., nblocks >= 2**60)`` wrapped ``nblocks * 16`` and wrote through a null pointer; every
binding that allocates from a caller's count now computes the size without overflow and refuses more
than 1 TiB before allocating. Each call runs in a subprocess with a time limit (a crash or an attempted
huge allocation fails the test rather than the suite).
"""

import pytest
from support.isolated import error_of  # noqa: E402

CALLS = {
    "chacha20_block 2**60": "_core.random.chacha20_block(b'k' * 32, 0, 0, 2**60)",
    "chacha20_block 2**64-1": "_core.random.chacha20_block(b'k' * 32, 0, 0, 2**64 - 1)",
    "chacha20_block 1e12": "_core.random.chacha20_block(b'k' * 32, 0, 0, 10**12)",
    "Generator.random_raw 1e12": "_core.random.Generator(b'k' * 32).random_raw(10**12)",
    "Generator.direction 1e12": "_core.random.Generator(b'k' * 32).direction(10**12)",
    "Random.random_raw 1e12": "dp.Random(1).random_raw(10**12)",
    "discrete_laplace 1e12": "_core.release.discrete_laplace(_core.random.Generator(b'k' * 32), 1, 1, 10**12)",
    "discrete_gaussian 2**62": "_core.release.discrete_gaussian(_core.random.Generator(b'k' * 32), 1, 1, 2**62)",
    "sample_discrete_laplace 1e12": "dp.release.sample_discrete_laplace(3, size=10**12, rng=dp.Random(1))",
    "manifold sample 1e12 x 3": (
        "_core.manifolds.sample(_core.manifolds.Geometry.hyperbolic, _core.manifolds.RadialKind.sin, 1.0, 1.0, False, 3.0, 1.0, 1.0, np.array([0.0, 0.0, 1.0]), "
        "np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), 10**12 // 3 + 1, _core.random.Generator(b'k' * 32), 1)"),
}

@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_huge_counts_raise_before_allocating(call):
    assert error_of(call, catch=(ValueError, MemoryError), timeout=120).startswith("ValueError")


def test_ordinary_counts_still_work():
    from pydp_core import _core

    assert len(_core.random.chacha20_block(b"k" * 32, 0, 0, 3)) == 3 * 64
    assert _core.random.Generator(b"k" * 32).random_raw(5).shape == (5,)
