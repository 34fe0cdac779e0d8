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
                     "pydp_core/share/cmake/pydp_core/pydp_coreConfig.cmake", "pydp_core/lib/libpydp_capi.a"):
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


def test_wheel_policy_is_manylinux2014(wheel):
    """auditwheel finds glibc 2.17 enough for the binary, the tag says so, and no symbol needs more."""
    platforms = {tag.platform for tag in parse_wheel_filename(wheel.name)[3]}
    assert platforms == {POLICY, "manylinux2014_x86_64"}, wheel.name
    shown = ds.run([sys.executable, "-m", "auditwheel", "show", wheel], env=_env()).stdout
    assert f'constrains the platform tag to "{POLICY}"' in " ".join(shown.split()), shown
    versions = set()
    for section in _extension(wheel).iter_sections():
        if section.name == ".gnu.version_r":
            versions |= {aux.name for _, auxes in section.iter_versions() for aux in auxes}
    glibc = [tuple(int(p) for p in m.group(1).split(".")) for m in map(re.compile(r"GLIBC_([0-9.]+)$").match, versions) if m]
    assert glibc and max(glibc) <= (2, 17), sorted(versions)
    assert not [v for v in versions if v.startswith(("GLIBCXX_", "CXXABI_"))], "libstdc++ must be linked statically"


def test_extension_exports_only_its_init_function(wheel):
    """The statically linked libstdc++ and every template instantiation stay private to the extension."""
    elf = _extension(wheel)
    dynsym = elf.get_section_by_name(".dynsym")
    assert isinstance(dynsym, SymbolTableSection)
    exported = {s.name for s in dynsym.iter_symbols()
                if s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK") and s.name}
    assert exported == {"PyInit__core"}, sorted(exported)[:20]
    dynamic = elf.get_section_by_name(".dynamic")
    assert isinstance(dynamic, DynamicSection)
    needed = {t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"}
    assert needed <= ALLOWED_NEEDED and "libpthread.so.0" in needed, needed


def test_sdist_holds_what_a_source_build_needs(dist):
    if os.environ.get("PYDP_WHEEL"):
        pytest.fail("PYDP_WHEEL is set: run this test without it to check the sdist built by tools/build-wheel")
    (sdist,) = dist.glob("pydp_core-*.tar.gz")
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
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
    ds.check_c(outputs["c_demo"])


def test_extras_install_without_rebuilding_the_core(venv, tmp_path):
    res = ds.run([venv / "bin" / "pip", "install", "pydp_core[progress]"], cwd=tmp_path, env=_env(CC="false", CXX="false"))
    assert "Requirement already satisfied: pydp_core" in res.stdout
    assert "Building wheel for pydp_core" not in res.stdout + res.stderr
    ds.run([venv / "bin" / "python", "-c", "import tqdm, pydp_core"], cwd=tmp_path, env=_env())
