"""Every public function and class documents itself in numpydoc form, and its examples run.

Public means: listed in ``__all__`` of ``pydp_core`` or of one of its subpackages. Functions need the
sections Parameters, Returns, Raises and Examples; classes need Parameters and Examples; public methods
and properties need at least a summary line. The Examples run as doctests (tests/packaging/test_doctests.py).
"""
from __future__ import annotations

import importlib
import inspect

import pytest

SUBPACKAGES = [
    "pydp_core",
    "pydp_core.noise",
    "pydp_core.calibration",
    "pydp_core.random",
    "pydp_core.mechanisms",
    "pydp_core.release",
    "pydp_core.accounting",
    "pydp_core.accounting.gdp",
    "pydp_core.accounting.rao",
    "pydp_core.accounting.guarantees",
    "pydp_core.accounting.conversions",
    "pydp_core.manifolds",
    "pydp_core.io",
    "pydp_core.io.spark",
    "pydp_core.io.dask",
    "pydp_core.spark",
    "pydp_core.dask",
    "pydp_core.special",
    "pydp_core.aggregation",
    "pydp_core.aggregation.engines",
    "pydp_core.session",
    "pydp_core.adapters.dp_accounting",
    "pydp_core.adapters.jax_privacy",
    "pydp_core.adapters.opacus",
]


def _public():
    seen = {}
    for modname in SUBPACKAGES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not getattr(obj, "__module__", "").startswith("pydp_core"):
                continue
            seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(seen.items())


PUBLIC = _public()


def _sections(doc: str) -> set[str]:
    lines = inspect.cleandoc(doc).splitlines()
    return {lines[i].strip() for i in range(len(lines) - 1) if set(lines[i + 1].strip()) == {"-"} and lines[i].strip()}


def test_the_public_api_is_not_empty():
    assert len(PUBLIC) > 80


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_numpydoc_sections(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return
        want = {"Parameters", "Examples"}
        params = [p for p in inspect.signature(obj).parameters if p not in ("self", "args", "kwargs")]
        if not params:
            want = {"Examples"}
    else:
        want = {"Parameters", "Returns", "Raises", "Examples"}
        if not [p for p in inspect.signature(obj).parameters]:
            want -= {"Parameters"}
    missing = want - _sections(doc)
    assert not missing, f"{name}: missing numpydoc sections {sorted(missing)}"


@pytest.mark.parametrize("name, obj", [(n, o) for n, o in PUBLIC if inspect.isclass(o)], ids=[n for n, o in PUBLIC if inspect.isclass(o)])
def test_public_methods_have_a_summary(name, obj):
    missing = []
    for attr, member in vars(obj).items():
        if attr.startswith("_"):
            continue
        if isinstance(member, property):  # an override of a documented property inherits its docstring
            if not (inspect.getdoc(member) or "").strip():
                missing.append(attr)
            continue
        target = getattr(member, "__func__", member)
        if callable(target) and not (inspect.getdoc(target) or "").strip():
            missing.append(attr)
    assert not missing, f"{name}: public members without a docstring: {missing}"


def test_docstrings_cite_papers_by_author_and_year():
    import pathlib
    import re

    root = pathlib.Path(importlib.import_module("pydp_core").__file__).parent
    bad = []
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"paper 00\d|SPEC" "-NOTES|papers? [0-9]{3}\b", text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{path.relative_to(root)}:{line}: {m.group(0)}")
    assert not bad, "cite papers by author and year (docs/references.md):\n" + "\n".join(bad)
