"""The release artefacts: tools/build-wheel makes an sdist and a manylinux2014 wheel (glibc >= 2.17,
although it is built on a new glibc: csrc/portable/); the wheel installs into a fresh virtual environment
without a compiler, runs the demo, computes what the in-repo build computes bit for bit, ships the C++
package, and optional extras install afterwards without rebuilding the core.

Set PYDP_WHEEL=<path to a repaired wheel> to test that wheel instead of building one (about a minute
of compiling with one job)."""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from packaging.utils import parse_wheel_filename
from support import downstream as ds

import pydp_core as dp
from pydp_core._core import random as core_random

pytestmark = pytest.mark.slow

VENV_BIN = str(Path(sys.executable).parent)
# manylinux2014: what tools/build-wheel asks auditwheel for.
POLICY = "manylinux_2_17_x86_64"
# The shared libraries a manylinux2014 extension may need (PEP 599), of which the portable build uses these.
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join([VENV_BIN, env.get("PATH", "")])
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    given = os.environ.get("PYDP_WHEEL")
    if given:
        assert Path(given).is_file(), f"PYDP_WHEEL={given} is not a file"
        return Path(given).parent
    out = tmp_path_factory.mktemp("dist")
    ds.run([ds.ROOT / "tools" / "build-wheel"], cwd=ds.ROOT, env=_env(PYTHON=sys.executable, OUT=str(out)))
    return out


@pytest.fixture(scope="module")
def wheel(dist) -> Path:
    given = os.environ.get("PYDP_WHEEL")
    wheels = [Path(given)] if given else sorted(dist.glob("pydp_core-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh environment with the wheel installed; no compiler can run (CC, CXX point to `false`) and
    pip may only take binary distributions."""
    root = tmp_path_factory.mktemp("venv") / "v"
    ds.run([sys.executable, "-m", "venv", root])
    ds.run([root / "bin" / "pip", "install", "--only-binary=:all:", wheel], env=_env(CC="false", CXX="false"))
    return root


def test_wheel_is_manylinux_and_complete(wheel):
    assert "manylinux" in wheel.name, wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    for required in ("pydp_core/py.typed", "pydp_core/include/pydp/capi.h", "pydp_core/include/pydp/version.hpp",
                     "pydp_core/share/cmake/pydp_core/pydp_coreConfig.cmake", "pydp_core/lib/libpydp_capi.a",
                     f"pydp_core/lib/{ds.CAPI_SHARED}",
                     "pydp_core/capi.pxd", "pydp_core/random/__init__.pxd", "pydp_core/calibration/__init__.pxd",
                     "pydp_core/release/__init__.pxd"):
        assert required in names, required
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    for classifier in ("Typing :: Typed", "License :: OSI Approved :: Apache Software License",
                       "Operating System :: POSIX :: Linux", "Programming Language :: Python :: 3.11"):
        assert f"Classifier: {classifier}" in text


def _extension(wheel: Path) -> ELFFile:
    names = [n for n in zipfile.ZipFile(wheel).namelist() if re.fullmatch(r"pydp_core/_core\..*\.so", n)]
    assert len(names) == 1, names
    return ELFFile(io.BytesIO(zipfile.ZipFile(wheel).read(names[0])))


def _capi_shared(wheel: Path) -> ELFFile:
    return ELFFile(io.BytesIO(zipfile.ZipFile(wheel).read(f"pydp_core/lib/{ds.CAPI_SHARED}")))


def _symbol_versions(elf: ELFFile) -> set[str]:
    return {aux.name for section in elf.iter_sections() if section.name == ".gnu.version_r"
            for _, auxes in section.iter_versions() for aux in auxes}


def _exported(elf: ELFFile) -> set[str]:
    dynsym = elf.get_section_by_name(".dynsym")
    assert isinstance(dynsym, SymbolTableSection)
    return {s.name for s in dynsym.iter_symbols()
            if s["st_shndx"] not in ("SHN_UNDEF", "SHN_ABS") and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK") and s.name}


def _needed(elf: ELFFile) -> set[str]:
    dynamic = elf.get_section_by_name(".dynamic")
    assert isinstance(dynamic, DynamicSection)
    return {t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"}


def _max_glibc(versions: set[str]) -> tuple[int, ...]:
    glibc = [tuple(int(p) for p in m.group(1).split(".")) for m in map(re.compile(r"GLIBC_([0-9.]+)$").match, versions) if m]
    assert glibc, sorted(versions)
    return max(glibc)


def test_wheel_policy_is_manylinux2014(wheel):
    """auditwheel finds glibc 2.17 enough for the binary, the tag says so, and no symbol needs more."""
    platforms = {tag.platform for tag in parse_wheel_filename(wheel.name)[3]}
    assert platforms == {POLICY, "manylinux2014_x86_64"}, wheel.name
    shown = ds.run([sys.executable, "-m", "auditwheel", "show", wheel], env=_env()).stdout
    assert f'constrains the platform tag to "{POLICY}"' in " ".join(shown.split()), shown
    for elf in (_extension(wheel), _capi_shared(wheel)):
        versions = _symbol_versions(elf)
        assert _max_glibc(versions) <= (2, 17), sorted(versions)
        assert not [v for v in versions if v.startswith(("GLIBCXX_", "CXXABI_"))], "libstdc++ must be linked statically"


def test_extension_exports_only_its_init_function(wheel):
    """The statically linked libstdc++ and every template instantiation stay private to the extension."""
    elf = _extension(wheel)
    exported = _exported(elf)
    assert exported == {"PyInit__core"}, sorted(exported)[:20]
    needed = _needed(elf)
    assert needed <= ALLOWED_NEEDED and "libpthread.so.0" in needed, needed


def test_shared_capi_exports_only_the_capi_functions(wheel):
    """libpydp_capi.so.1: its soname is its file name, it exports exactly the functions capi.h declares,
    and it needs only what the extension may need."""
    elf = _capi_shared(wheel)
    dynamic = elf.get_section_by_name(".dynamic")
    assert [t.soname for t in dynamic.iter_tags() if t.entry.d_tag == "DT_SONAME"] == [ds.CAPI_SHARED]
    declared = set(re.findall(r"\b(pydp_\w+)\(", (ds.ROOT / "csrc" / "include" / "pydp" / "capi.h").read_text()))
    assert _exported(elf) == declared, sorted(_exported(elf) ^ declared)[:20]
    needed = _needed(elf)
    assert needed <= ALLOWED_NEEDED and "libpthread.so.0" in needed, needed


def test_sdist_holds_what_a_source_build_needs(dist):
    if os.environ.get("PYDP_WHEEL"):
        pytest.fail("PYDP_WHEEL is set: run this test without it to check the sdist built by tools/build-wheel")
    (sdist,) = dist.glob("pydp_core-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for required in ("LICENSE", "CHANGELOG.md", "SECURITY.md", "README.md", "CMakeLists.txt", "pyproject.toml",
                     "cmake/pydp_coreConfig.cmake.in", "csrc/capi.cpp", "csrc/include/pydp/capi.h"):
        assert required in names, required


def test_demo_runs_from_the_installed_wheel(venv, tmp_path):
    res = ds.run([venv / "bin" / "pydp-core", "demo"], cwd=tmp_path, env=_env())
    assert "Minimal noise scales" in res.stdout and "Gaussian" in res.stdout


# Run in the fresh environment; prints what test_installed_wheel_computes_what_the_source_build_computes
# compares with this process's pydp_core (the in-repo build of the same sources).
_PROBE = """
import hashlib, json, pydp_core as dp
import pydp_core.accounting, pydp_core.aggregation, pydp_core.calibration, pydp_core.io, pydp_core.manifolds
import pydp_core.noise, pydp_core.release
from pydp_core._core import random as core_random
from pydp_core.random import Random
out = {"file": dp.__file__, "version": dp.__version__,
       "impls": core_random.chacha_impls(), "best": core_random.chacha_best_impl(),
       "blocks": {i: core_random.chacha20_block(bytes(range(32)), 1, 9, 4, impl=i).hex()
                  for i in core_random.chacha_impls()},
       "scales": [dp.minimal_scale(f, epsilon=1.0, delta=1e-5) for f in (dp.Laplace(), dp.Gaussian(), dp.Subbotin(3))],
       "tiny": dp.minimal_scale(dp.Gaussian(), epsilon=0.5, delta=1e-300)}
for threads in (1, 2):
    rng = Random(seed=2024, threads=threads)
    out[f"draws{threads}"] = [hashlib.sha256(a.tobytes()).hexdigest() for a in (
        rng.normal(1.0, 2.0, size=100_000), rng.laplace(0.0, 1.5, size=100_000), rng.gamma(0.7, 2.0, size=100_000),
        rng.subbotin(1.5, 0.0, 2.0, size=100_000), rng.normal(size=10, dtype="float32"))]
print(json.dumps(out))
"""


def test_installed_wheel_computes_what_the_source_build_computes(venv, tmp_path):
    """Bit for bit the in-repo build's numbers (calibration, seeded draws with one and two threads), and the
    run-time instruction-set dispatch finds the same cipher implementations, all of them agreeing."""
    got = json.loads(ds.run([venv / "bin" / "python", "-c", _PROBE], cwd=tmp_path, env=_env()).stdout)
    assert got["file"].startswith(str(venv)) and got["version"] == dp.__version__
    assert got["impls"] == core_random.chacha_impls() and got["best"] == core_random.chacha_best_impl()
    assert len(set(got["blocks"].values())) == 1 and "scalar" in got["blocks"]
    assert got["blocks"]["scalar"] == core_random.chacha20_block(bytes(range(32)), 1, 9, 4, impl="scalar").hex()
    assert got["scales"] == [dp.minimal_scale(f, epsilon=1.0, delta=1e-5) for f in (dp.Laplace(), dp.Gaussian(), dp.Subbotin(3))]
    assert got["tiny"] == dp.minimal_scale(dp.Gaussian(), epsilon=0.5, delta=1e-300)
    for threads in (1, 2):
        rng = dp.Random(seed=2024, threads=threads)
        expected = [hashlib.sha256(a.tobytes()).hexdigest() for a in (
            rng.normal(1.0, 2.0, size=100_000), rng.laplace(0.0, 1.5, size=100_000), rng.gamma(0.7, 2.0, size=100_000),
            rng.subbotin(1.5, 0.0, 2.0, size=100_000), rng.normal(size=10, dtype="float32"))]
        assert got[f"draws{threads}"] == expected, threads
    assert got["draws1"] == got["draws2"]


def test_installed_cpp_package_serves_a_downstream_project(venv, tmp_path):
    code = "from pydp_core import get_cmake_dir, get_include; print(get_include()); print(get_cmake_dir())"
    include, cmake_dir = ds.run([venv / "bin" / "python", "-c", code], cwd=tmp_path, env=_env()).stdout.split()
    assert include.startswith(str(venv)) and cmake_dir.startswith(str(venv))
    outputs = ds.build(tmp_path, f"-Dpydp_core_DIR={cmake_dir}")
    ds.check_cpp(outputs["cpp_demo"])
    for exe in ("c_demo", "c_demo_shared"):
        ds.check_c(outputs[exe])


def _venv_paths(venv: Path, tmp_path: Path) -> tuple[str, str, str]:
    """(package directory, get_include(), get_library_dir()) of the wheel installed in `venv`."""
    code = "import os, pydp_core as p; print(os.path.dirname(p.__file__)); print(p.get_include()); print(p.get_library_dir())"
    paths = ds.run([venv / "bin" / "python", "-c", code], cwd=tmp_path, env=_env()).stdout.split()
    assert all(p.startswith(str(venv)) for p in paths), paths
    return paths[0], paths[1], paths[2]


def test_c_program_links_the_wheels_shared_library(venv, tmp_path):
    """c_demo.c, compiled and linked by hand against the wheel's libpydp_capi.so.1, gives the Python API's
    values; ctypes in the installed environment loads the same file."""
    _, include, libdir = _venv_paths(venv, tmp_path)
    ds.check_c(ds.link_c_demo(tmp_path, include, libdir))
    code = ("import ctypes, os, pydp_core as p; lib = ctypes.CDLL(os.path.join(p.get_library_dir(), 'libpydp_capi.so.1')); "
            "lib.pydp_version.restype = ctypes.c_char_p; print(lib.pydp_version().decode(), lib.pydp_abi_version())")
    assert ds.run([venv / "bin" / "python", "-c", code], cwd=tmp_path, env=_env()).stdout.split() == [dp.__version__, "1"]


# Run in the fresh environment with the Cython extension built against the wheel: prints its outputs
# for test_cython_extension_builds_against_the_wheel to compare with this process's Python API.
_CYTHON_PROBE = """
import importlib.util, json, sys, threading
import numpy as np
from pydp_core.random import ChaCha20
spec = importlib.util.spec_from_file_location("cython_demo", sys.argv[1])
demo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo)
key = bytes(range(32))
outs = [np.empty(1 << 16), np.empty(1 << 16)]
threads = [threading.Thread(target=demo.normals, args=(key, s, outs[s])) for s in (0, 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()
x = np.linspace(-10.0, 10.0, 500)
released = np.empty_like(x)
demo.release_laplace(key, 2, 65536, 1, -16, x, released)
words = np.empty(100, dtype=np.uint64)
demo.bitgen_words(ChaCha20(key=key), words)
try:
    demo.bad_call()
    message = None
except ValueError as e:
    message = str(e)
print(json.dumps({"normals": [o.tolist() for o in outs], "release": released.tolist(), "words": words.tolist(),
                  "scale_delta": list(demo.gaussian_scale_and_delta(1.0, 1e-6)), "error": message}))
"""


def test_cython_extension_builds_against_the_wheel(venv, tmp_path):
    """cython_demo.pyx compiled against the wheel's .pxd files, headers and static library, run in the
    installed environment (two threads without the GIL): the Python API's output bit for bit."""
    pytest.importorskip("Cython", reason="Cython is in the test extra: pip install 'pydp_core[test]'")
    from pydp_core import _core, release
    from pydp_core.random import ChaCha20, Random

    so = ds.build_cython_demo(tmp_path, *_venv_paths(venv, tmp_path))
    got = json.loads(ds.run([venv / "bin" / "python", "-c", _CYTHON_PROBE, so], cwd=tmp_path, env=_env()).stdout)

    def rng(stream: int) -> Random:
        return Random._wrap(_core.random.Generator(ds.KEY, stream), 1, True)

    for s in (0, 1):
        assert got["normals"][s] == rng(s).normal(0.0, 1.0, size=1 << 16).tolist()
    plan = release.calibrate_laplace_release(epsilon=1.0)
    assert (plan.parameter, plan.grid_exponent) == (65536, -16)  # the parameters the probe states
    x = np.linspace(-10.0, 10.0, 500)
    assert got["release"] == plan.release(x, rng=rng(2), simulation=True).tolist()
    assert got["words"] == ChaCha20(key=ds.KEY).random_raw(100).tolist()
    s = dp.minimal_scale(dp.Gaussian(), epsilon=1.0, delta=1e-6)
    assert got["scale_delta"] == [s, dp.privacy_profile(dp.Gaussian(), epsilon=1.0, scale=s)]
    assert got["error"] == "epsilon must be finite and >= 0, got nan"


def test_extras_install_without_rebuilding_the_core(venv, tmp_path):
    res = ds.run([venv / "bin" / "pip", "install", "pydp_core[progress]"], cwd=tmp_path, env=_env(CC="false", CXX="false"))
    assert "Requirement already satisfied: pydp_core" in res.stdout
    assert "Building wheel for pydp_core" not in res.stdout + res.stderr
    ds.run([venv / "bin" / "python", "-c", "import tqdm, pydp_core"], cwd=tmp_path, env=_env())
