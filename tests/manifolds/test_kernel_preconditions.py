"""Kernels check their own preconditions.

The manifold sampler looped forever (and wrote out of bounds) for a tangent basis of 0 columns; unknown
geometry or radial-kind codes were cast to enums unchecked (the bindings now take the enums themselves,
``_core.manifolds.Geometry`` and ``RadialKind``, so a raw integer is a TypeError). The public API never passes such arguments,
but the kernels must answer with an exception (ValueError through the binding), never undefined
behaviour. The same class was swept in the other bindings (the incomplete gamma's ``which`` code). Each call runs in a subprocess with a time limit, so the old endless loop fails the test.
"""
import subprocess
import sys
import textwrap

import pytest
from support.paths import subprocess_env  # noqa: E402

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

_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from pydp_core import _core
    try:
        eval(sys.argv[1])
    except (ValueError, TypeError) as exc:
        print(type(exc).__name__, exc)
    else:
        print("NO ERROR")
""")


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_kernel_preconditions_raise(call):
    try:
        res = subprocess.run([sys.executable, "-c", _SCRIPT, call], capture_output=True, text=True, timeout=60, env=subprocess_env())
    except subprocess.TimeoutExpired:
        pytest.fail("the kernel did not return within 60 s (endless loop)")
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert res.stdout.startswith(("ValueError", "TypeError")), res.stdout + res.stderr[-2000:]


def test_valid_sample_still_works():
    import numpy as np

    from pydp_core import _core

    G, K = _core.manifolds.Geometry, _core.manifolds.RadialKind
    out = _core.manifolds.sample(G.sphere, K.sin, 1.0, 0.5, False, np.pi, 0.5, 0.5, np.array([0.0, 0.0, 1.0]), np.eye(3)[:, :2], 10,
                                 _core.random.Generator(b"k" * 32), 1)
    assert out.shape == (10, 3) and np.allclose(np.sum(out * out, axis=1), 1.0)
