"""The C++ kernel tests (csrc/tests/test_*.cpp), one pytest case per file: configured with CMake
(PYDP_BUILD_TESTS=ON, no Python extension), built from the headers alone with warnings as errors, and run
by ctest. So the Python test suite, and with it CI, runs them."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.downstream import generator_args, run, tool

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(p.stem for p in (ROOT / "csrc" / "tests").glob("test_*.cpp"))


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("cpp_tests")
    run([tool("cmake"), "-S", ROOT, "-B", build, *generator_args(), "-DCMAKE_BUILD_TYPE=Release",
         "-DPYDP_BUILD_PYTHON=OFF", "-DPYDP_BUILD_TESTS=ON", "-DPYDP_WERROR=ON"])
    run([tool("cmake"), "--build", build, "--target", "pydp_cpp_tests"])
    return build


def test_every_test_file_is_registered(build_dir):
    listed = run([tool("ctest"), "-N"], cwd=build_dir).stdout
    assert NAMES and all(f": {name}\n" in listed for name in NAMES), listed


@pytest.mark.parametrize("name", NAMES)
def test_kernel_executable(build_dir, name):
    res = subprocess.run([tool("ctest"), "--output-on-failure", "-R", f"^{name}$"], cwd=build_dir,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "100% tests passed" in res.stdout and "out of 1\n" in res.stdout, res.stdout[-4000:]  # one test ran
