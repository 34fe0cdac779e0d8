"""The Rust crates over the C ABI (bindings/rust: pydp-core-sys and the safe pydp-core), built with
cargo against the package's static library (pydp_core.get_library_dir()): the same key gives the
Python API's words, noise, release and PLD bounds bit for bit, and errors carry the library's message."""
from __future__ import annotations

import os
import shutil

import pytest
from support import downstream as ds

import pydp_core as dp

CARGO = shutil.which("cargo")
pytestmark = pytest.mark.skipif(CARGO is None, reason="cargo is not installed (Debian: apt-get install cargo)")


@pytest.fixture(scope="module")
def lines(tmp_path_factory) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("rust")
    env = dict(os.environ, PYDP_CAPI_LIB_DIR=dp.get_library_dir(), CARGO_TARGET_DIR=str(tmp / "target"))
    res = ds.run([CARGO, "run", "--offline", "-q", "--example", "demo",
                  "--manifest-path", ds.ROOT / "bindings" / "rust" / "Cargo.toml"], env=env)
    return {name: values for name, *values in (line.split(" ") for line in res.stdout.splitlines())}


def test_rust_matches_python(lines):
    ds.check_binding_demo(lines)
