"""Every Python block of README.md and of the tutorials (docs/tutorials/*.md) runs as written, in a fresh
namespace, from a scratch directory."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs" / "tutorials").glob("*.md"))]


def _blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


BLOCKS = _blocks(README)
ALL = [(f"{p.stem}-block{i}", p, code) for p in PAGES for i, code in enumerate(_blocks(p))]


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("path, code", [(p, c) for _, p, c in ALL], ids=[i for i, _, _ in ALL])
def test_block_runs(path, code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(path), "exec"), {"__name__": "__docs__"})
