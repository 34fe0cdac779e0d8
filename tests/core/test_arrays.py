"""Arrays beyond numpy (pydp_core/_arrays.py): torch CPU tensors, jax arrays, pyarrow arrays, and objects that
offer only __array__ or only __dlpack__, through the samplers, the releases, the mechanisms and privatize."""
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest
import torch
from support.paths import subprocess_env  # noqa: E402

import pydp_core as dp
from pydp_core import release

KEY = bytes(range(32))


class OnlyArray:
    """An array object with __array__ only."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class OnlyDLPack:
    """An array object with __dlpack__ only (a view of a numpy array's memory)."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


# -- samplers -------------------------------------------------------------------------------------------
def test_sampler_returns_the_kind_of_its_array_parameter():
    loc = torch.arange(5, dtype=torch.float64)
    out = dp.Random(1).normal(loc, 2.0)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64 and out.shape == (5,)
    np.testing.assert_array_equal(out.numpy(), dp.Random(1).normal(np.arange(5.0), 2.0))
    a = dp.Random(1).uniform(pa.array([0.0, 1.0]), 2.0)
    assert isinstance(a, pa.Array) and a.to_pylist() == dp.Random(1).uniform(np.array([0.0, 1.0]), 2.0).tolist()
    # Only __array__ / only __dlpack__: read as numpy, returned as numpy (there is no general way back).
    for obj in (OnlyArray([1.0, 2.0]), OnlyDLPack([1.0, 2.0])):
        y = dp.Random(3).normal(obj, 1.0)
        assert type(y) is np.ndarray
        np.testing.assert_array_equal(y, dp.Random(3).normal(np.array([1.0, 2.0]), 1.0))


def test_sampler_dtype_accepts_torch_dtypes():
    out = dp.Random(1).normal(torch.zeros(4), 1.0, dtype=torch.float32)
    assert out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), dp.Random(1).normal(np.zeros(4), 1.0, dtype=np.float32))
    with pytest.raises(TypeError, match="dtype"):
        dp.Random(1).normal(size=3, dtype=torch.int32)


def test_sampler_fills_a_torch_out_in_place():
    out = torch.empty((2, 3), dtype=torch.float32)
    res = dp.Random(4).gamma(2.0, 1.5, dtype=np.float32, out=out)
    assert res is out
    np.testing.assert_array_equal(out.numpy(), dp.Random(4).gamma(2.0, 1.5, size=(2, 3), dtype=np.float32))
    sph = torch.empty((4, 3), dtype=torch.float64)
    assert dp.Random(4).sphere(3, size=4, out=sph) is sph
    np.testing.assert_allclose(np.linalg.norm(sph.numpy(), axis=1), 1.0, rtol=1e-12)


def test_sampler_refuses_outs_it_cannot_write():
    with pytest.raises(TypeError, match="out must be"):
        dp.Random(1).normal(out=OnlyArray(np.zeros(3)))  # __array__ may copy: the writes could be lost


def test_gpu_and_grad_tensors_get_clear_errors():
    with pytest.raises(ValueError, match="detach"):
        dp.Random(1).normal(torch.zeros(3, requires_grad=True))
    meta = torch.empty(3, device="meta")
    with pytest.raises(ValueError, match="CPU"):
        dp.Random(1).normal(meta)
    with pytest.raises(ValueError, match="nulls"):
        dp.Random(1).normal(pa.array([1.0, None]))


# -- releases and mechanisms ----------------------------------------------------------------------------
def test_release_returns_the_kind_and_keeps_float32():
    x64 = np.array([1.0, 2.5, -3.0])
    ref = release.release_laplace(x64, epsilon=1.0, rng=dp.Random(5), simulation=True)
    t = release.release_laplace(torch.tensor(x64), epsilon=1.0, rng=dp.Random(5), simulation=True)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
    np.testing.assert_array_equal(t.numpy(), ref)
    t32 = release.release_laplace(torch.tensor(x64, dtype=torch.float32), epsilon=1.0, rng=dp.Random(5), simulation=True)
    assert t32.dtype == torch.float32
    # The float64 release of the same (exactly converted) values, rounded to float32: here exact.
    np.testing.assert_array_equal(t32.numpy(), ref.astype(np.float32))
    assert np.array_equal(t32.numpy().astype(np.float64), ref)  # |value| < 2**24 grid steps: exact in float32
    n32 = release.release_gaussian(x64.astype(np.float32), epsilon=1.0, delta=1e-6, rng=dp.Random(5), simulation=True)
    assert type(n32) is np.ndarray and n32.dtype == np.float32


def test_float32_release_rounds_the_released_grid_value():
    # Values beyond 2**24 grid steps: the released float64 grid value is rounded to the nearest float32,
    # a function of the released value alone (post-processing).
    x = np.array([3.0e5, -7.0e6])
    ref = release.release_laplace(x, epsilon=1.0, rng=dp.Random(6), simulation=True)
    got = release.release_laplace(torch.tensor(x, dtype=torch.float32), epsilon=1.0, rng=dp.Random(6), simulation=True)
    np.testing.assert_array_equal(got.numpy(), ref.astype(np.float32))
    assert not np.array_equal(got.numpy().astype(np.float64), ref)  # not representable: rounded


def test_float32_release_refuses_overflow():
    # Noise of scale 1e40 on 20 values at float32's maximum: some released value leaves float32's range
    # (each stays inside with probability about 0.03).
    big = np.full(20, np.finfo(np.float32).max, dtype=np.float32)
    with pytest.raises(ValueError, match="float32"):
        release.release_laplace(big, epsilon=0.01, sensitivity=1e38, rng=dp.Random(1), simulation=True)
    assert np.isfinite(release.release_laplace(big.astype(np.float64), epsilon=0.01, sensitivity=1e38, rng=dp.Random(1),
                                               simulation=True)).all()


def test_mechanism_privatize_and_simulate_keep_the_kind():
    m = dp.LaplaceMechanism(epsilon=1.0)
    s = m.privatize(torch.tensor(3.0, dtype=torch.float64), rng=dp.Random(2), simulation=True)
    assert isinstance(s, torch.Tensor) and s.shape == () and float(s) == m.privatize(3.0, rng=dp.Random(2), simulation=True)
    v = m.simulate(torch.zeros(4, dtype=torch.float32), rng=dp.Random(2))
    assert isinstance(v, torch.Tensor) and v.dtype == torch.float32
    np.testing.assert_array_equal(v.numpy(), m.simulate(np.zeros(4), rng=dp.Random(2)).astype(np.float32))
    assert isinstance(m.privatize(OnlyDLPack([1.0, 2.0]), rng=dp.Random(2), simulation=True), np.ndarray)


def test_privatize_tensors():
    m = dp.LaplaceMechanism(epsilon=1.0, sensitivity=6.0)
    x = np.arange(6.0).reshape(2, 3)
    ref = dp.privatize(x, m, key=KEY, bounds=(0, 6))
    t = dp.privatize(torch.tensor(x), m, key=KEY, bounds=(0, 6))  # an exact repeat under the key's ledger
    assert isinstance(t, torch.Tensor) and t.shape == (2, 3)
    np.testing.assert_array_equal(t.numpy(), ref)
    o = dp.privatize(OnlyArray(x), m, key=KEY, bounds=(0, 6))
    assert type(o) is np.ndarray
    np.testing.assert_array_equal(o, ref)


# -- jax, in a process of its own (jax starts threads, and other tests fork) -------------------------------
JAX_CHECKS = """
import jax.numpy as jnp
import numpy as np
import pytest

import pydp_core as dp
from pydp_core import release

j = dp.Random(1).laplace(jnp.zeros(3), jnp.ones(3))
assert "jax" in type(j).__module__ and j.shape == (3,)
# jax without jax_enable_x64 holds float32 only: the float64 draws come back rounded, as jax rounds.
np.testing.assert_array_equal(np.asarray(j), dp.Random(1).laplace(np.zeros(3), np.ones(3)).astype(np.float32))
with pytest.raises(ValueError, match="writeable"):
    dp.Random(1).normal(out=jnp.zeros(3))  # jax arrays are immutable
x64 = np.array([1.0, 2.5, -3.0])
n32 = release.release_gaussian(x64.astype(np.float32), epsilon=1.0, delta=1e-6, rng=dp.Random(5), simulation=True)
j = release.release_noise(dp.Gaussian(), jnp.asarray(x64, dtype=jnp.float32), epsilon=1.0, delta=1e-6,
                          rng=dp.Random(5), simulation=True)
assert "jax" in type(j).__module__ and j.dtype == jnp.float32
np.testing.assert_array_equal(np.asarray(j), n32)
m = dp.LaplaceMechanism(epsilon=1.0, sensitivity=6.0)
x = np.arange(6.0).reshape(2, 3)
j = dp.privatize(jnp.asarray(x, dtype=jnp.float32), m, key=bytes(range(1, 33)), bounds=(0, 6))
assert "jax" in type(j).__module__ and j.dtype == jnp.float32
ref32 = dp.privatize(x.astype(np.float32), m, key=bytes(range(1, 33)), bounds=(0, 6))
np.testing.assert_array_equal(np.asarray(j), ref32)
print("ok")
"""


def test_jax_arrays_keep_their_kind():
    """Samplers, releases and privatize on jax arrays: jax arrays back, float32 kept, immutable outs refused."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(JAX_CHECKS)], capture_output=True, text=True, timeout=300, env=subprocess_env())
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
