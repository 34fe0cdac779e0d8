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
    """Configure and build tests/downstream with the given -D definitions; run both programs."""
    build_dir = dest / "downstream-build"
    run([tool("cmake"), "-S", SOURCE, "-B", build_dir, *generator_args(), "-DCMAKE_BUILD_TYPE=Release", *defines])
    run([tool("cmake"), "--build", build_dir])
    return {exe: run([build_dir / exe]).stdout.splitlines() for exe in ("cpp_demo", "c_demo")}


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
