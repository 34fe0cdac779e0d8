"""The C++ package and the C ABI, used as a downstream project would: installed by `cmake --install`
into a prefix, found with find_package(pydp_core CONFIG), and a C99 program built with gcc by hand."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support import downstream as ds

import pydp_core
from pydp_core import get_cmake_dir, get_include


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    """The C++ package built from this checkout and installed into a prefix, then moved elsewhere (the
    installed package must be relocatable and must not point back into the source tree)."""
    tmp = tmp_path_factory.mktemp("cpp_package")
    build = tmp / "build"
    ds.run([ds.tool("cmake"), "-S", ds.ROOT, "-B", build, *ds.generator_args(), "-DCMAKE_BUILD_TYPE=Release",
            "-DPYDP_BUILD_PYTHON=OFF", "-DPYDP_WERROR=ON"])
    ds.run([ds.tool("cmake"), "--build", build])
    ds.run([ds.tool("cmake"), "--install", build, "--prefix", tmp / "staging"])
    moved = tmp / "moved" / "prefix"
    shutil.move(str(tmp / "staging"), str(moved))
    shutil.rmtree(build)
    return moved


def test_installed_layout(prefix):
    assert (prefix / "include" / "pydp" / "capi.h").is_file()
    assert (prefix / "include" / "pydp" / "calibration" / "profile.hpp").is_file()
    assert list((prefix / "lib").glob("libpydp_capi.a"))
    assert (prefix / "lib" / ds.CAPI_SHARED).is_file()
    cmake_dir = prefix / "lib" / "cmake" / "pydp_core"
    assert (cmake_dir / "pydp_coreConfig.cmake").is_file() and (cmake_dir / "pydp_coreConfigVersion.cmake").is_file()
    for f in cmake_dir.iterdir():
        assert str(ds.ROOT) not in f.read_text(), f"{f.name} points into the source tree"


def test_downstream_cmake_project(prefix, tmp_path):
    outputs = ds.build(tmp_path, f"-DCMAKE_PREFIX_PATH={prefix}")
    ds.check_cpp(outputs["cpp_demo"])
    for exe in ("c_demo", "c_demo_shared"):
        ds.check_c(outputs[exe])


def test_version_requirement_is_enforced(prefix, tmp_path):
    # find_package(pydp_core 99.0) must fail: the package reports its real version.
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(v LANGUAGES CXX)\n"
                                        "find_package(pydp_core 99.0 CONFIG REQUIRED)\n")
    res = subprocess.run([ds.tool("cmake"), "-S", src, "-B", tmp_path / "b", f"-DCMAKE_PREFIX_PATH={prefix}"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode != 0 and "99.0" in res.stderr


def test_c99_program_built_by_hand_with_gcc(prefix, tmp_path):
    exe = tmp_path / "c_demo"
    ds.run([ds.tool("gcc"), "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", ds.SOURCE / "c_demo.c",
            f"-I{prefix / 'include'}", prefix / "lib" / "libpydp_capi.a", "-lstdc++", "-lm", "-lpthread", "-o", exe])
    ds.check_c(ds.run([exe]).stdout.splitlines())


def test_capi_header_compiles_alone_as_c_and_as_cpp(prefix):
    # The header alone compiles as C (no C++ leaks into it) and as C++ (extern "C").
    for compiler, flags in (("gcc", ["-x", "c", "-std=c99"]), ("g++", ["-x", "c++", "-std=c++17"])):
        ds.run([ds.tool(compiler), *flags, "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
                f"-I{prefix / 'include'}", prefix / "include" / "pydp" / "capi.h"])


def test_one_version_definition():
    """The header's string is the version everywhere: its numbers spell it, the package and its extension
    report it, pyproject.toml takes it from the header and writes no version of its own."""
    text = (Path(get_include()) / "pydp" / "version.hpp").read_text()
    macros = dict(re.findall(r"#define (PYDP_VERSION_\w+) (\S+)", text))
    version = macros["PYDP_VERSION_STRING"].strip('"')
    assert ".".join(macros[f"PYDP_VERSION_{p}"] for p in ("MAJOR", "MINOR", "PATCH")) == version
    assert pydp_core.__version__ == pydp_core._core.__version__ == version
    pyproject = (ds.ROOT / "pyproject.toml").read_text()
    assert not re.search(r"^version\s*=", pyproject, re.M) and 'dynamic = ["version"]' in pyproject
    assert 'input = "csrc/include/pydp/version.hpp"' in pyproject
    import importlib.metadata

    try:
        installed = importlib.metadata.version("pydp_core")
    except importlib.metadata.PackageNotFoundError:
        return
    if Path(pydp_core.__file__).resolve().parent != ds.ROOT / "pydp_core":  # the installed copy under test
        assert installed == version


def test_paths_in_a_checkout_built_in_place(tmp_path):
    # tools/build-inplace leaves a build-tree package in pydp_core/share/cmake/pydp_core.
    assert (Path(get_include()) / "pydp" / "capi.h").is_file()
    assert (Path(get_cmake_dir()) / "pydp_coreConfig.cmake").is_file()
    outputs = ds.build(tmp_path, f"-Dpydp_core_DIR={get_cmake_dir()}")
    ds.check_cpp(outputs["cpp_demo"])
    for exe in ("c_demo", "c_demo_shared"):
        ds.check_c(outputs[exe])
