"""The Rust crates over the C ABI (bindings/rust: pydp-core-sys and the safe pydp-core), built with
cargo against the static library: the same key gives the Python API's words, noise, release and PLD
bounds bit for bit, and errors carry the library's message."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from support import downstream as ds

import pydp_core as dp
from pydp_core import _core, release
from pydp_core.accounting.pld import PLD
from pydp_core.random import Random

CARGO = shutil.which("cargo")
pytestmark = pytest.mark.skipif(CARGO is None, reason="cargo is not installed (Debian: apt-get install cargo)")


@pytest.fixture(scope="module")
def lines(tmp_path_factory) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("rust")
    build = tmp / "build"
    ds.run([ds.tool("cmake"), "-S", ds.ROOT, "-B", build, *ds.generator_args(), "-DCMAKE_BUILD_TYPE=Release",
            "-DPYDP_BUILD_PYTHON=OFF"])
    ds.run([ds.tool("cmake"), "--build", build, "--target", "pydp_capi"])
    env = dict(os.environ, PYDP_CAPI_LIB_DIR=str(build), CARGO_TARGET_DIR=str(tmp / "target"))
    res = ds.run([CARGO, "run", "--offline", "-q", "--example", "demo",
                  "--manifest-path", ds.ROOT / "bindings" / "rust" / "Cargo.toml"], env=env)
    return {name: values for name, *values in (line.split(" ") for line in res.stdout.splitlines())}


def test_rust_matches_python(lines):
    assert lines["version"] == [dp.__version__]
    assert float(lines["scale"][0]) == dp.minimal_scale(dp.Gaussian(), epsilon=1.0, delta=1e-6)
    rng = Random._wrap(_core.random.Generator(ds.KEY, 0), 1, True)
    assert [int(w) for w in lines["words"]] == rng.random_raw(4).tolist()
    assert [float(v) for v in lines["normal"]] == rng.normal(0.0, 1.0, size=5).tolist()
    plan = release.calibrate_laplace_release(epsilon=1.0)
    assert (plan.parameter, plan.grid_exponent) == (65536, -16)  # the parameters demo.rs states
    want = plan.release(np.array([0.0, 1.5, -2.25]), rng=rng, simulation=True)
    assert [float(v) for v in lines["release_laplace"]] == want.tolist()
    pld = PLD.from_noise(dp.Gaussian(), scale=1.0, sampling_rate=0.02).with_discretization(value_step=1e-3).self_compose(100)
    assert [float(v) for v in lines["pld_delta"]] == list(pld.delta(1.0))


def test_rust_errors_carry_the_message(lines):
    assert lines["error"][0] == "2"  # PYDP_ERR_INVALID
    assert " ".join(lines["error"][1:]) == "epsilon must be finite and >= 0, got nan"
