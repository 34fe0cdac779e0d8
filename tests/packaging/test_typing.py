"""Type checking as a user sees it: the compiled module's stubs match it (mypy stubtest), and mypy --strict
accepts every Python block of README.md against this package."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pydp_core

ROOT = Path(__file__).resolve().parents[2]
PKG_PARENT = str(Path(pydp_core.__file__).resolve().parents[1])


def _env() -> dict[str, str]:
    """Point mypy at the pydp_core under test: a source checkout through MYPYPATH; an installed copy is
    found in site-packages by itself (mypy refuses site-packages in MYPYPATH)."""
    env = dict(os.environ)
    installed = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    if not any(os.path.samefile(PKG_PARENT, p) for p in installed if os.path.isdir(p)):
        env["MYPYPATH"] = PKG_PARENT
        env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_stubs_of_the_compiled_module_match_it(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "pydp_core._core", "--allowlist", str(ROOT / "tools" / "stubtest-allowlist.txt"),
         "--mypy-config-file", str(tmp_path / "none.ini")],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=900,
    )
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]


def test_mypy_strict_accepts_the_readme(tmp_path):
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S | re.M)
    files = []
    for i, code in enumerate(blocks):
        path = tmp_path / f"readme_block{i}.py"
        path.write_text(code, encoding="utf-8")
        files.append(str(path))
    # pandas ships no annotations; the README's own lines are what is checked.
    (tmp_path / "mypy.ini").write_text("[mypy]\n[mypy-pandas.*]\nignore_missing_imports = True\n")
    res = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental", "--config-file",
         str(tmp_path / "mypy.ini"), *files],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=900,
    )
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
