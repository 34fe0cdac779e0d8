"""The package itself: import guard, version, demo, CLI wiring."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pydp_core

PKG = Path(pydp_core.__file__).parent


def _copy_sources(dest: Path) -> Path:
    pkg = dest / "pydp_core"
    pkg.mkdir(parents=True)
    for f in PKG.rglob("*.py"):
        (pkg / f.relative_to(PKG)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, pkg / f.relative_to(PKG))
    return pkg


def _run(code: str, path: list[Path], cwd: Path, *, no_site: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
    flags = ["-S"] if no_site else []  # -S: no site-packages, so no installed copy can be found
    return subprocess.run([sys.executable, *flags, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_source_tree_without_extension_fails_even_beside_an_installed_copy(tmp_path):
    # A source checkout (no compiled extension) ahead of an installed copy that has one: the checkout's
    # Python never runs against another copy's extension; the error says what to do.
    src = tmp_path / "src"
    _copy_sources(src)
    site = tmp_path / "site"
    installed = _copy_sources(site)
    shutil.copy(pydp_core._core.__file__, installed / Path(pydp_core._core.__file__).name)
    res = _run("import pydp_core", [src, site], tmp_path)
    assert res.returncode != 0
    assert "compiled extension pydp_core._core is not in" in res.stderr
    assert "pip install" in res.stderr and "tools/build-inplace" in res.stderr


def test_source_tree_without_extension_fails_with_instructions(tmp_path):
    src = tmp_path / "src"
    _copy_sources(src)
    res = _run("import pydp_core", [src], tmp_path, no_site=True)
    assert res.returncode != 0
    assert "compiled extension pydp_core._core is not in" in res.stderr
    assert "pip install" in res.stderr and "tools/build-inplace" in res.stderr


def test_version_matches_extension():
    assert pydp_core._core.__version__ == pydp_core.__version__


def test_demo_runs_and_prints_verified_scales(capsys):
    from pydp_core.cli import main

    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Gaussian()" in out and "3.730631635" in out  # Balle-Wang sigma for (1, 1e-5)


def test_cli_usage_error_exit_code():
    from pydp_core.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2


def test_privacy_warning_is_one_class_re_exported():
    from pydp_core import _errors, accounting
    from pydp_core.accounting import budgets

    assert pydp_core.PrivacyWarning is accounting.PrivacyWarning is budgets.PrivacyWarning is _errors.PrivacyWarning


def test_all_is_the_export_maps():
    # __all__ is a literal for type checkers; it must name exactly the exports and the subpackages.
    expected = {"__version__", *pydp_core._EXPORTS, *pydp_core._MODULES} - {"cli"}
    assert len(pydp_core.__all__) == len(set(pydp_core.__all__))
    assert set(pydp_core.__all__) == expected
    assert not set(pydp_core.__all__) & set(pydp_core._DEPRECATED_MODULES)
