"""The C++ kernel tests (csrc/tests/test_kernels.cpp), compiled from the headers alone and run."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_kernel_executable(tmp_path):
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    assert cxx, "a C++17 compiler is needed to build csrc/tests (set CXX)"
    exe = tmp_path / "test_kernels"
    # -Wno-uninitialized: GCC 12's own avx512fintrin.h self-initialises a register (`__Y = __Y`) and warns.
    build = subprocess.run(
        [cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-uninitialized", "-ffp-contract=off", "-pthread",
         "-I", str(ROOT / "csrc" / "include"), str(ROOT / "csrc" / "tests" / "test_kernels.cpp"), "-o", str(exe)],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-4000:]
    assert run.stdout.strip().endswith("0 failed")
