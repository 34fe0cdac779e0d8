"""The documentation site builds with warnings as errors and has an API page for every public module."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_MODULES = [
    "pydp_core", "pydp_core.noise", "pydp_core.calibration", "pydp_core.random", "pydp_core.mechanisms",
    "pydp_core.release", "pydp_core.accounting", "pydp_core.accounting.gaussian", "pydp_core.accounting.rao",
    "pydp_core.accounting.guarantees", "pydp_core.accounting.conversions", "pydp_core.manifolds", "pydp_core.io",
    "pydp_core.io.spark", "pydp_core.io.dask", "pydp_core.special", "pydp_core.cli", "pydp_core.aggregate",
    "pydp_core.adapters", "pydp_core.adapters.dp_accounting", "pydp_core.adapters.opacus",
]


def test_sphinx_build_is_clean_and_complete(tmp_path):
    out = tmp_path / "html"
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"), str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert res.returncode == 0, res.stderr[-6000:]
    for mod in PUBLIC_MODULES:
        page = out / "api" / f"{mod}.html"
        assert page.is_file(), f"no API page for {mod}"
        assert f"{mod}" in page.read_text(encoding="utf-8")
    for name in ("etl", "library-authors", "researchers"):
        assert (out / "tutorials" / f"{name}.html").is_file()
