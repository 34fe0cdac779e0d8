"""The repository's text: every path it names exists, and no note of how the work was organised remains.

Comments, docstrings and pages cite papers by author and year (``docs/references.md``); they do not name
tracker issues, the numbers of the specification papers or the notes beside the checkout. Paths such as
``pydp_core/io/keys.py`` or ``tests/io/test_key_release.py`` named anywhere must exist, so that a reader
who follows one is not lost after a move.
"""
from __future__ import annotations

import re
from pathlib import Path

from support.paths import REPO_ROOT

_SKIP_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
              "_build", "node_modules", ".benchmarks", "results"}
_TEXT = {".py", ".pyi", ".pyx", ".pxd", ".md", ".toml", ".txt", ".cfg", ".cpp", ".hpp", ".h", ".c", ".cmake",
         ".yaml", ".yml", ".rst", ".sh", ".in"}
# Built from pieces, so that this file does not match itself.
_ORGANISATION = re.compile(r"\bissue[s]? #?\d+|\bpaper[s]? 00\d|" + "SPEC" + "-NOTES", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w/.-])((?:pydp_core|tests|docs|csrc|bench|tools|studies)/[\w/.*-]*\w\.(?:py|md|hpp|cpp|h|pxd|csv|toml|txt|json))\b")


def _text_files() -> list[Path]:
    out = []
    for path in REPO_ROOT.rglob("*"):
        rel = path.relative_to(REPO_ROOT)
        if any(part in _SKIP_DIRS for part in rel.parts[:-1]) or not path.is_file():
            continue
        if path.suffix in _TEXT or path.name in ("CMakeLists.txt", "run", "build-inplace", "build-wheel", "sanitize"):
            out.append(path)
    return out


def test_the_tree_has_text_files():
    names = {p.relative_to(REPO_ROOT).as_posix() for p in _text_files()}
    assert {"README.md", "pyproject.toml", "pydp_core/__init__.py", "tests/packaging/test_repository_text.py"} <= names


def test_no_tracker_issue_paper_number_or_notes_file_is_named():
    found = []
    for path in _text_files():
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if m := _ORGANISATION.search(line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{n}: {m.group(0)!r}")
    assert not found, "\n".join(found)


# Paths that exist only elsewhere: in the installed wheel, or as a run's output.
_ELSEWHERE = ("pydp_core/include/", "bench/out/", "studies/out/")


def test_every_repository_path_named_exists():
    missing = []
    for path in _text_files():
        if path.name == "CHANGELOG.md":  # a record of the past names the files of its time
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in _PATH.finditer(text):
            named = m.group(1)
            if named.startswith(_ELSEWHERE):
                continue
            hits = list(REPO_ROOT.glob(named)) if "*" in named else [REPO_ROOT / named]
            if not any(h.exists() for h in hits):
                missing.append(f"{path.relative_to(REPO_ROOT)}: {named}")
    assert not missing, "\n".join(sorted(set(missing)))


_LOAD_BY_PATH = "spec_from_" + "file_location"


def test_tests_share_helpers_only_through_support():
    # A test module imported (or loaded by path) by another runs twice and couples unrelated files; shared
    # code is in tests/support.
    found = []
    for path in sorted((REPO_ROOT / "tests").rglob("*.py")) + sorted((REPO_ROOT / "studies").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*(from|import) test_\w+", line) or (_LOAD_BY_PATH in line and "test_" in line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_a_module_over_600_lines_says_why_in_its_header():
    # One subject per module: a longer one states its reason in its docstring ("Over 600 lines because ...",
    # or "longer than the package's others ... because ...").
    import ast

    unexplained = []
    for path in sorted((REPO_ROOT / "pydp_core").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= 600:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not re.search(r"(Over 600 lines|longer than the package's others).*because", doc, re.S):
            unexplained.append(f"{path.relative_to(REPO_ROOT)} ({text.count(chr(10))} lines)")
    assert not unexplained, f"modules over 600 lines with no reason in their header: {unexplained}"
