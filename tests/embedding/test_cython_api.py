"""The Cython API: a small extension (cython_demo.pyx) cimports pydp_core.random, .calibration and
.release (the .pxd files shipped in the package), is compiled against pydp_core.get_include() and the
package's static C ABI library (pydp_core.get_library_dir()), runs with the GIL released on two
threads, and gives the Python API's output bit for bit for one key."""
from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np
import pytest
from support import downstream as ds

import pydp_core as dp
from pydp_core import _core, release
from pydp_core.random import ChaCha20, Random

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The extension built against the imported pydp_core (in CI the installed package: its .pxd files,
    headers and static library; tests/packaging/test_wheel.py does the same with the release wheel)."""
    pytest.importorskip("Cython", reason="Cython is in the test extra: pip install 'pydp_core[test]'")
    so = ds.build_cython_demo(tmp_path_factory.mktemp("cython_demo"), str(Path(dp.__file__).resolve().parent),
                              dp.get_include(), dp.get_library_dir())
    spec = importlib.util.spec_from_file_location("cython_demo", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _random(stream: int) -> Random:
    return Random._wrap(_core.random.Generator(ds.KEY, stream), 1, True)


def test_pxd_files_ship_beside_the_modules():
    pkg = Path(dp.__file__).resolve().parent
    for name in ("capi.pxd", "random/__init__.pxd", "calibration/__init__.pxd", "release/__init__.pxd"):
        assert (pkg / name).is_file(), name
    assert 'cdef extern from "pydp/capi.h" nogil' in (pkg / "capi.pxd").read_text()


def test_two_threads_without_the_gil_match_the_python_api(demo):
    n = 1 << 18
    outs = [np.empty(n), np.empty(n)]
    threads = [threading.Thread(target=demo.normals, args=(ds.KEY, s, outs[s])) for s in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in (0, 1):
        np.testing.assert_array_equal(outs[s], _random(s).normal(0.0, 1.0, size=n))
    assert not np.array_equal(outs[0], outs[1])


def test_release_matches_the_plan(demo):
    plan = release.calibrate_laplace_release(epsilon=0.5, sensitivity=3.0)
    x = np.linspace(-10.0, 10.0, 5000)
    got = np.empty_like(x)
    p = plan.parameter
    demo.release_laplace(ds.KEY, 2, p.numerator, p.denominator, plan.grid_exponent, x, got)
    np.testing.assert_array_equal(got, plan.release(x, rng=_random(2), simulation=True))


def test_calibration_matches(demo):
    s, d = demo.gaussian_scale_and_delta(1.0, 1e-6)
    assert s == dp.minimal_scale(dp.Gaussian(), epsilon=1.0, delta=1e-6)
    assert d == dp.privacy_profile(dp.Gaussian(), epsilon=1.0, scale=s)


def test_bitgenerator_capsule(demo):
    words = np.empty(1000, dtype=np.uint64)
    demo.bitgen_words(ChaCha20(key=ds.KEY), words)
    np.testing.assert_array_equal(words, ChaCha20(key=ds.KEY).random_raw(1000))


def test_errors_carry_the_message(demo):
    with pytest.raises(ValueError, match="epsilon must be finite and >= 0, got nan"):
        demo.bad_call()


def test_release_calibration_matches_the_plan(demo):
    plan = release.calibrate_gaussian_release(epsilon=0.8, delta=1e-9, sensitivity=2.0)
    want = (plan.parameter.numerator, plan.parameter.denominator, plan.grid_exponent, plan.shift, plan.delta_achieved)
    assert demo.gaussian_plan(0.8, 1e-9, 2.0, 16) == want
