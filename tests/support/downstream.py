"""Build and check tests/downstream (a CMake project using an installed pydp_core) for
tests/packaging/test_cpp_package.py and tests/packaging/test_wheel.py."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import pydp_core as dp
from pydp_core import _core
from pydp_core.random import Random

SOURCE = Path(__file__).resolve().parent.parent / "downstream"
ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))
CAPI_SHARED = "libpydp_capi.so.1"  # the shared C ABI library's file name and soname


def tool(name: str) -> str:
    """An executable, looked up first next to this Python (where the test extra installs cmake and ninja)."""
    path = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    assert path, f"{name} is not on PATH: install the test extra (pip install '.[test]') and a C/C++ compiler"
    return path


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900, **kw)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{res.stdout}\n{res.stderr}"
    return res


def generator_args() -> list[str]:
    try:
        return ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}"]
    except AssertionError:
        return []


def build(dest: Path, *defines: str) -> dict[str, list[str]]:
    """Configure and build tests/downstream with the given -D definitions; run its programs (c_demo_shared:
    c_demo.c linked against the shared C ABI library, which it must list as needed)."""
    build_dir = dest / "downstream-build"
    run([tool("cmake"), "-S", SOURCE, "-B", build_dir, *generator_args(), "-DCMAKE_BUILD_TYPE=Release", *defines])
    run([tool("cmake"), "--build", build_dir])
    assert CAPI_SHARED in needed_libraries(build_dir / "c_demo_shared")
    return {exe: run([build_dir / exe]).stdout.splitlines() for exe in ("cpp_demo", "c_demo", "c_demo_shared")}


def needed_libraries(binary: Path) -> set[str]:
    """The DT_NEEDED entries of an ELF file."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    with open(binary, "rb") as f:
        dynamic = ELFFile(f).get_section_by_name(".dynamic")
        assert isinstance(dynamic, DynamicSection), binary
        return {t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"}


def link_c_demo(dest: Path, include_dir: str, library_dir: str) -> list[str]:
    """c_demo.c compiled and linked by hand against the shared library in `library_dir` (as docs/cpp.md
    shows, no CMake), run; its output lines."""
    exe = dest / "c_demo_by_hand"
    run([tool("gcc"), "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", SOURCE / "c_demo.c", f"-I{include_dir}",
         f"-L{library_dir}", f"-l:{CAPI_SHARED}", f"-Wl,-rpath,{library_dir}", "-o", exe])
    assert CAPI_SHARED in needed_libraries(exe)
    return run([exe]).stdout.splitlines()


def parse(lines: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in lines:
        name, *values = line.split()
        out.setdefault(name, []).extend(values) if name != "calibration" else out.setdefault(name, []).append(values)
    return out


def check_cpp(lines: list[str]) -> None:
    """The header-only kernels give the Python API's values."""
    out = parse(lines)
    assert out["version"] == [dp.__version__, str(_version_number())]
    assert float(out["gaussian_scale"][0]) == dp.minimal_scale(dp.Gaussian(), epsilon=1.0, delta=1e-5)
    assert float(out["gaussian_log_delta"][0]) == dp.log_privacy_profile(dp.Gaussian(), epsilon=1.0, scale=float(out["gaussian_scale"][0]))
    assert float(out["gaussian_log_delta"][0]) <= np.log(1e-5)
    assert float(out["subbotin3_scale"][0]) == dp.minimal_scale(dp.Subbotin(3), epsilon=0.5, delta=1e-8, sensitivity=2.0)
    assert float(out["gaussian_epsilon"][0]) == dp.epsilon_for_delta(dp.Gaussian(), delta=1e-6, scale=2.0)
    assert [int(w) for w in out["word"]] == _core.random.Generator(KEY, 0).random_raw(3).tolist()


def _version_number() -> int:
    major, minor, patch = (int(p) for p in dp.__version__.split(".")[:3])
    return major * 10000 + minor * 100 + patch


def check_c(lines: list[str]) -> None:
    """The C ABI gives the Python API's values, and every error check in c_demo.c passed."""
    out = parse(lines)
    assert out["failures"] == ["0"], "\n".join(lines)
    assert out["version"] == [dp.__version__]
    families = {0: dp.Laplace(), 1: dp.Gaussian(), 2: dp.Logistic()}
    assert len(out["calibration"]) == 5
    for kind, r, s, d, ld, e in out["calibration"]:
        fam = families[int(kind)] if int(kind) != 3 else dp.Subbotin(float(r))
        assert float(s) == dp.minimal_scale(fam, epsilon=1.0, delta=1e-6, sensitivity=2.0)
        assert float(d) == dp.privacy_profile(fam, epsilon=0.5, scale=3.0)
        assert float(ld) == dp.log_privacy_profile(fam, epsilon=0.5, scale=3.0)
        assert float(e) == dp.epsilon_for_delta(fam, delta=1e-7, scale=3.0)
    rng = Random._wrap(_core.random.Generator(KEY, 0), 1, True)
    assert [int(w) for w in out["words"]] == rng.random_raw(8).tolist()
    expected = {
        "normal": rng.normal(1.0, 2.0, size=5),
        "laplace": rng.laplace(0.0, 1.5, size=5),
        "logistic": rng.logistic(-1.0, 0.5, size=5),
        "subbotin": rng.subbotin(1.5, 0.0, 2.0, size=5),
        "exponential": rng.exponential(3.0, size=5),
        "uniform": rng.uniform(-2.0, 5.0, size=5),
        "gamma": rng.gamma(0.7, 2.0, size=5),
    }
    for name, values in expected.items():
        assert [float(v) for v in out[name]] == values.tolist(), name
    assert [int(w) for w in out["child_words"]] == rng.stream(3).random_raw(4).tolist()
    _check_c_releases(out)


def _check_c_releases(out: dict[str, list[str]]) -> None:
    """c_demo's releases and PLD against the Python plans and PLD (the parameters c_demo.c states)."""
    from pydp_core import release
    from pydp_core.accounting.pld import PLD

    lap = release.calibrate_laplace_release(epsilon=1.0)
    sub = release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6)
    assert (lap.parameter, lap.grid_exponent) == (65536, -16)
    assert (sub.parameter, sub.weight_bits, sub.grid_exponent) == (78425, 44, -15)
    rng = Random._wrap(_core.random.Generator(KEY, 1), 1, True)
    x = np.array([0.0, 1.5, -2.25, 100.0, 3.0])
    assert [float(v) for v in out["release_laplace"]] == lap.release(x, rng=rng, simulation=True).tolist()
    want = sub.release(x, rng=rng, bounds=(-1.0, 50.0), simulation=True)
    assert [float(v) for v in out["release_lattice"]] == want.tolist()
    pld = PLD.from_noise(dp.Gaussian(), scale=1.0, sampling_rate=0.02).with_discretization(value_step=1e-3).self_compose(100)
    assert [float(v) for v in out["pld"]] == [*pld.delta(1.0), *pld.epsilon(1e-5)]
    for name, plan in (("plan_laplace", release.calibrate_laplace_release(epsilon=1.0)),
                       ("plan_gaussian", release.calibrate_gaussian_release(epsilon=0.5, delta=1e-8, sensitivity=3.0, grid_bits=12))):
        num, den, e, k, achieved = out[name]
        assert (int(num), int(den), int(e), int(k)) == (plan.parameter.numerator, plan.parameter.denominator, plan.grid_exponent,
                                                       plan.shift), name
        assert float(achieved) == plan.delta_achieved, name
    vector_plans = out["plan_laplace_vector"]
    for norm, fields in zip(("l1", "linf"), (vector_plans[:6], vector_plans[6:]), strict=True):
        plan = release.calibrate_laplace_release(epsilon=0.8, sensitivity=1.5, dimension=3, norm=norm)
        assert fields == [str(int(norm == "linf")), str(plan.parameter.numerator), str(plan.parameter.denominator),
                          str(plan.grid_exponent), str(plan.shift), repr(plan.delta_achieved) if plan.delta_achieved else "0"], norm
    rows = np.array([[0.0, 1.5, -2.25], [100.0, 3.0, -7.5]])
    vrng = Random._wrap(_core.random.Generator(KEY, 2), 1, True)
    want_rows = [plan.release(row, rng=vrng, simulation=True) for row in rows]  # the l_inf plan, the last printed
    assert [float(v) for v in out["release_vector"]] == np.concatenate(want_rows).tolist()
    gv = release.calibrate_gaussian_release(epsilon=0.5, delta=1e-8, sensitivity=3.0, dimension=50, grid_bits=12)
    num, den, e, k, achieved = out["plan_gaussian_vector"]
    assert (int(num), int(den), int(e), int(k), float(achieved)) == (gv.parameter.numerator, gv.parameter.denominator,
                                                                     gv.grid_exponent, gv.shift, gv.delta_achieved)
    from pydp_core.accounting.conversions import zcdp_log_delta

    assert [float(v) for v in out["zcdp"]] == list(zcdp_log_delta(rho=0.5, epsilon=3.0))
    s, bits, e, k, achieved = out["plan_lattice"]
    assert (int(s), int(bits), int(e), int(k), float(achieved)) == (sub.parameter, sub.weight_bits, sub.grid_exponent, sub.shift,
                                                                    sub.delta_achieved)
    pure = release.calibrate_logistic_release(epsilon=1.0, delta=0.0)
    s, bits, e, k, achieved = out["plan_pure_logistic"]
    assert (int(s), int(bits), int(e), int(k), float(achieved)) == (pure.parameter, pure.weight_bits, pure.grid_exponent,
                                                                    pure.shift, pure.epsilon_achieved)
    prng = Random._wrap(_core.random.Generator(KEY, 3), 1, True)
    want = pure.release(x, rng=prng, bounds=(-1.0, 50.0), simulation=True)
    assert [float(v) for v in out["release_pure_logistic"]] == want.tolist()


def build_cython_demo(dest: Path, package_dir: str, include_dir: str, library_dir: str) -> Path:
    """tests/embedding/cython_demo.pyx compiled against a pydp_core package: the .pxd files in
    `package_dir`, the headers of its get_include() and the static C ABI library of its get_library_dir();
    the extension's path. Cython and the compiler are this interpreter's (the package's Python version)."""
    import sysconfig

    c_file = dest / "cython_demo.c"
    run([sys.executable, "-m", "cython", "-3", "-I", Path(package_dir).parent, ROOT / "tests" / "embedding" / "cython_demo.pyx",
         "-o", c_file])
    so = dest / f"cython_demo{sysconfig.get_config_var('EXT_SUFFIX')}"
    run([tool("gcc"), "-shared", "-fPIC", "-O2", f"-I{sysconfig.get_paths()['include']}", f"-I{include_dir}",
         c_file, Path(library_dir) / "libpydp_capi.a", "-lstdc++", "-lm", "-lpthread", "-o", so])
    return so


def check_binding_demo(lines: dict[str, list[str]]) -> None:
    """The demo of a language binding (bindings/rust/pydp-core/examples/demo.rs, bindings/go/cmd/demo),
    as `name -> values`: the Python API's words, noise, release, Gaussian release plan and PLD bounds bit for
    bit for one key, and the library's error code and message."""
    from pydp_core import release
    from pydp_core.accounting.pld import PLD

    assert lines["version"] == [dp.__version__]
    assert float(lines["scale"][0]) == dp.minimal_scale(dp.Gaussian(), epsilon=1.0, delta=1e-6)
    rng = Random._wrap(_core.random.Generator(KEY, 0), 1, True)
    assert [int(w) for w in lines["words"]] == rng.random_raw(4).tolist()
    assert [float(v) for v in lines["normal"]] == rng.normal(0.0, 1.0, size=5).tolist()
    plan = release.calibrate_laplace_release(epsilon=1.0)
    assert (plan.parameter, plan.grid_exponent) == (65536, -16)  # the parameters the demos state
    want = plan.release(np.array([0.0, 1.5, -2.25]), rng=rng, simulation=True)
    assert [float(v) for v in lines["release_laplace"]] == want.tolist()
    pld = PLD.from_noise(dp.Gaussian(), scale=1.0, sampling_rate=0.02).with_discretization(value_step=1e-3).self_compose(100)
    assert [float(v) for v in lines["pld_delta"]] == list(pld.delta(1.0))
    plan = release.calibrate_gaussian_release(epsilon=0.5, delta=1e-8, sensitivity=3.0, grid_bits=12)
    num, den, e, k, achieved = lines["plan_gaussian"]
    assert (int(num), int(den), int(e), int(k), float(achieved)) == (plan.parameter.numerator, plan.parameter.denominator,
                                                                    plan.grid_exponent, plan.shift, plan.delta_achieved)
    assert lines["error"][0] == "2"  # PYDP_ERR_INVALID
    assert " ".join(lines["error"][1:]) == "epsilon must be finite and >= 0, got nan"
