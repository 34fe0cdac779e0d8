"""The Go module over the C ABI (bindings/go, cgo), built with Debian's golang-go against the package's
shared library (pydp_core.get_library_dir()/libpydp_capi.so.1): its own tests pass (errors carry the
library's message, output independent of the thread count), and its demo gives the Python API's words,
noise, release and PLD bounds bit for bit for one key. .ci/run installs golang-go, so CI never skips."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from support import downstream as ds

import pydp_core as dp
from pydp_core import _core, release
from pydp_core.random import Random

GO = shutil.which("go")
if GO is None and os.environ.get("CI"):
    pytest.fail("CI must run the Go binding's tests: .ci/run installs golang-go", pytrace=False)
pytestmark = pytest.mark.skipif(GO is None, reason="go is not installed (Debian: apt-get install golang-go)")

MODULE = ds.ROOT / "bindings" / "go"


@pytest.fixture(scope="module")
def go_env(tmp_path_factory) -> dict[str, str]:
    """cgo flags for the imported package's headers and shared library; no network (GOPROXY=off, no
    toolchain download) and caches in a temporary directory."""
    tmp = tmp_path_factory.mktemp("go")
    libdir = dp.get_library_dir()
    return dict(os.environ, CGO_ENABLED="1", CGO_CFLAGS=f"-I{dp.get_include()}", CGO_LDFLAGS=f"-L{libdir} -Wl,-rpath,{libdir}",
                GOPATH=str(tmp / "gopath"), GOCACHE=str(tmp / "gocache"), GOPROXY="off", GOFLAGS="-mod=mod", GOTOOLCHAIN="local")


def test_go_vet_and_go_test_pass(go_env):
    ds.run([GO, "vet", "./..."], cwd=MODULE, env=go_env)
    res = ds.run([GO, "test", "-count=1", "-v", "./..."], cwd=MODULE, env=go_env)
    assert "--- PASS: TestBadArgumentsReturnTheLibrarysError" in res.stdout, res.stdout
    assert "--- PASS: TestOutputDoesNotDependOnTheThreadCount" in res.stdout, res.stdout


def test_go_matches_python(go_env):
    res = ds.run([GO, "run", "./cmd/demo"], cwd=MODULE, env=go_env)
    lines = {name: values for name, *values in (line.split(" ") for line in res.stdout.splitlines())}
    assert lines["abi"] == ["1"]
    ds.check_binding_demo(lines)
    # The Gaussian plan calibrated in Go, released after the demo's other draws (stream 0: words, normals, release).
    plan = release.calibrate_gaussian_release(epsilon=0.5, delta=1e-8, sensitivity=3.0, grid_bits=12)
    rng = Random._wrap(_core.random.Generator(ds.KEY, 0), 1, True)
    rng.random_raw(4), rng.normal(0.0, 1.0, size=5)
    release.calibrate_laplace_release(epsilon=1.0).release(np.zeros(3), rng=rng, simulation=True)
    want = plan.release(np.array([0.0, 1.5, -2.25]), rng=rng, simulation=True)
    assert [float(v) for v in lines["release_gaussian"]] == want.tolist()
