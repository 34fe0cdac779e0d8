"""Kernels check their own preconditions.

The manifold sampler looped forever (and wrote out of bounds) for a tangent basis of 0 columns; unknown
geometry or radial-kind codes were cast to enums unchecked (the bindings now take the enums themselves,
``_core.manifolds.Geometry`` and ``RadialKind``, so a raw integer is a TypeError). The public API never passes such arguments,
but the kernels must answer with an exception (ValueError through the binding), never undefined
behaviour. The same class was swept in the other bindings (the incomplete gamma's ``which`` code). Each call runs in a subprocess with a time limit, so the old endless loop fails the test.
"""

import pytest
from support.isolated import error_of  # noqa: E402

_GEN = "_core.random.Generator(b'k' * 32)"
_P3 = "np.array([0.0, 0.0, 1.0])"
_G = "_core.manifolds.Geometry"
_K = "_core.manifolds.RadialKind"
CALLS = {
    "basis with 0 columns": f"_core.manifolds.sample({_G}.sphere, {_K}.sin, 1.0, 0.5, False, np.pi, 0.5, 0.5, {_P3}, np.zeros((3, 0)), 10, {_GEN}, 1)",
    "basis wider than the footpoint": f"_core.manifolds.sample({_G}.euclidean, {_K}.linear, 3.0, 0.5, False, np.inf, 1.0, 0.5, {_P3}, np.zeros((3, 4)), 10, {_GEN}, 1)",
    "circle with 3 coordinates": f"_core.manifolds.sample({_G}.circle, {_K}.none, 0.0, 0.5, False, np.pi, 0.0, 0.5, {_P3}, np.zeros((3, 1)), 10, {_GEN}, 1)",
    "unknown geometry code": f"_core.manifolds.sample(7, {_K}.sin, 1.0, 0.5, False, np.pi, 0.5, 0.5, {_P3}, np.eye(3)[:, :2], 10, {_GEN}, 1)",
    "unknown radial kind": f"_core.manifolds.sample({_G}.sphere, 9, 1.0, 0.5, False, np.pi, 0.5, 0.5, {_P3}, np.eye(3)[:, :2], 10, {_GEN}, 1)",
    "negative k": f"_core.manifolds.sample({_G}.sphere, {_K}.sin, -1.0, 0.5, False, np.pi, 0.5, 0.5, {_P3}, np.eye(3)[:, :2], 10, {_GEN}, 1)",
    "dist geometry code": f"_core.manifolds.dist({_G}.euclidean, np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, 0.0, 0.0]]), 1e-9, 1)",
    "exp_log which": f"_core.manifolds.exp_log({_G}.sphere, 3, np.array([{_P3}]), np.array([{_P3}]), 1e-9, 1)",
    "incgamma which": "_core.special.incgamma(0.5, np.array([1.0]), 7, 1)",
}

@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_kernel_preconditions_raise(call):
    assert error_of(call, catch=(ValueError, TypeError), timeout=60).startswith(("ValueError", "TypeError"))


def test_valid_sample_still_works():
    import numpy as np

    from pydp_core import _core

    G, K = _core.manifolds.Geometry, _core.manifolds.RadialKind
    out = _core.manifolds.sample(G.sphere, K.sin, 1.0, 0.5, False, np.pi, 0.5, 0.5, np.array([0.0, 0.0, 1.0]), np.eye(3)[:, :2], 10,
                                 _core.random.Generator(b"k" * 32), 1)
    assert out.shape == (10, 3) and np.allclose(np.sum(out * out, axis=1), 1.0)
