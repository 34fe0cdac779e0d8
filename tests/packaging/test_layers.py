"""The layers of pydp_core hold in its imports. The sources are read with ``ast``; nothing is imported.

Layers, from the bottom (a module belongs to the layer of the first part of its name after ``pydp_core``):

    0  _errors, _validation, _arrays, _safety, _files, _paths    shared rules and helpers
    1  special, noise, random
    2  calibration
    3  accounting
    4  release
    5  mechanisms, manifolds
    6  io
    7  aggregation
    8  adapters, cli, session, spark, dask (the engines' front ends: privatize and aggregate)

``pydp_core/__init__.py`` and ``pydp_core/__main__.py`` are exempt: they only re-export. Every import
counts, also one inside a function or under ``if TYPE_CHECKING:``. The rules:

(a) No import through the package root. A module imports a compiled area directly
    (``from .._core import noise as _cnoise``, ``from .._core.noise import Kind``) and any other module of
    the package by its own name (``from ..noise import Gaussian``, ``from . import rao``). Refused:
    ``from .. import X`` / ``from pydp_core import X`` / ``import pydp_core[.x]`` without ``as`` (they
    go through the root's lazy namespace, which sits above every layer), and ``from .. import _core`` /
    ``import pydp_core._core`` (the whole extension instead of the area the module needs).
(b) No import cycles between modules: the strongly connected components of the module graph are single
    modules. Imports inside functions count: a cycle closed by a lazy import still ties the modules
    together (neither can be understood or tested without the other), and the cycle that this test was
    written against was made of lazy imports only. Imports under ``if TYPE_CHECKING:`` are left out
    (they never run and exist for annotations). Importing ``a.b.c`` also runs ``a/__init__.py`` and
    ``a/b/__init__.py``; those implicit edges are left out too: a package's ``__init__`` re-exports its
    own modules, so counting them would make every package one cycle with each of its modules.
(c) A module imports only from its own layer or below.
(d) No module imports a deprecated alias module (it is there for users; the library uses the new name).

Every violation is reported as ``file:line``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "pydp_core"

LAYERS: list[set[str]] = [
    {"_errors", "_validation", "_arrays", "_safety", "_files", "_paths", "_chain", "_logspace", "_version", "_loader"},
    {"special", "noise", "random"},
    {"calibration"},
    {"accounting"},
    {"release"},
    {"mechanisms", "manifolds"},
    {"io"},
    {"aggregation"},
    {"adapters", "cli", "session", "spark", "dask"},
]
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}
EXEMPT = {"pydp_core", "pydp_core.__main__"}
CORE = "pydp_core._core"
DEPRECATED = {"pydp_core.accounting.gaussian"}  # alias modules kept for users only

# (module, imported) pairs allowed to break the rules, each with its reason.
_KNOWN_ELSEWHERE: set[tuple[str, str]] = {
    # The box calibration moved to accounting.pld.box; pydp_core.calibration re-exports its three public
    # names lazily (PEP 562, on first access only) so that user code importing them from there keeps working.
    ("pydp_core.calibration", "pydp_core.accounting.pld.box"),
    # The loader finds the whole extension (in this folder, or an installed copy of the same version).
    ("pydp_core._loader", "pydp_core._core"),
}


@dataclass(frozen=True)
class Edge:
    """One imported module: ``source`` imports ``target`` at ``where`` (file:line)."""

    source: str
    target: str
    where: str
    lazy: bool  # inside a function
    typing_only: bool  # under ``if TYPE_CHECKING:``


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Yield (node, lazy, typing_only) for every import statement of ``tree``."""

    def walk(node: ast.AST, lazy: bool, typing_only: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, lazy, typing_only
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), lazy, True)
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), lazy, typing_only)
            else:
                inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                yield from walk(child, inner, typing_only)

    yield from walk(tree, False, False)


def _base(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module that ``node`` imports from."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def _targets(module: str, node: ast.AST, where: str, violations: list[tuple[str, str, str]]) -> list[str]:
    """The pydp_core modules one import statement names, noting imports of the whole extension or through
    the package root in ``violations``."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name != "pydp_core" and not alias.name.startswith("pydp_core."):
                continue
            if alias.name == CORE:
                violations.append((module, CORE, f"{where}: imports the whole extension {CORE}; import its area"))
            elif alias.asname is None:
                violations.append((module, "pydp_core", f"{where}: `import {alias.name}` goes through the package root"))
            targets.append(alias.name)
        return targets
    base = _base(module, node)
    if base != "pydp_core" and not base.startswith("pydp_core."):
        return targets
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if base == "pydp_core" and alias.name == "_core":
            violations.append((module, CORE, f"{where}: imports the whole extension {CORE}; import its area"))
        elif base == "pydp_core":
            violations.append((module, "pydp_core", f"{where}: `{alias.name}` is imported through the package root"))
        targets.append(sub if sub in MODULES else base)
    return targets


def _scan():
    """All edges between pydp_core modules, and the violations of rules (a) and (d)."""
    edges: list[Edge] = []
    violations: list[tuple[str, str, str]] = []  # (module, imported, message with file:line)
    for module, path in MODULES.items():
        if module in EXEMPT:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        rel = path.relative_to(ROOT)
        for node, lazy, typing_only in _imports(tree):
            where = f"{rel}:{node.lineno}"
            for target in _targets(module, node, where, violations):
                if target in DEPRECATED:
                    violations.append((module, target, f"{where}: imports the deprecated alias {target}"))
                if target in MODULES and target not in EXEMPT:
                    edges.append(Edge(module, target, where, lazy, typing_only))
    return list(dict.fromkeys(edges)), violations


EDGES, ROOT_VIOLATIONS = _scan()


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYER_OF.get(parts[1]) if len(parts) > 1 else None


def _layer_violations() -> list[tuple[str, str, str]]:
    out = []
    for e in EDGES:
        if e.source in EXEMPT:
            continue
        src, dst = _layer(e.source), _layer(e.target)
        if src is not None and dst is not None and dst > src:
            out.append((e.source, e.target, f"{e.where}: layer {src} ({e.source}) imports layer {dst} ({e.target})"))
    return out


def _cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _cycle_edges() -> list[Edge]:
    return [
        e for e in EDGES
        if not e.typing_only and e.source != e.target and e.source not in EXEMPT and (e.source, e.target) not in _KNOWN_ELSEWHERE
    ]


def _by_place(message: str) -> tuple[str, int]:
    file, line = message.split(":")[:2]
    return file, int(line)


def _fail_on(violations: list[tuple[str, str, str]], what: str) -> None:
    if violations:
        pytest.fail(f"{what}:\n" + "\n".join(sorted({msg for _, _, msg in violations}, key=_by_place)), pytrace=False)


def _not_known(violations: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [v for v in violations if (v[0], v[1]) not in _KNOWN_ELSEWHERE]


def test_every_module_is_in_a_layer():
    missing = sorted(m for m in MODULES if m not in EXEMPT and _layer(m) is None and m != CORE)
    assert not missing, f"modules in no layer (add them to LAYERS): {missing}"


def test_the_scan_sees_the_imports():
    # A guard against a scan that silently finds nothing (a wrong root, a broken resolution).
    pairs = {(e.source, e.target) for e in EDGES}
    assert ("pydp_core.accounting.budgets", "pydp_core._validation") in pairs
    assert ("pydp_core.accounting.budgets", "pydp_core.calibration.profile") in pairs  # inside a function
    assert ("pydp_core.accounting", "pydp_core.accounting.gdp") in pairs  # `from . import gdp` in a package


def test_no_import_through_the_package_root():
    bad = [v for v in ROOT_VIOLATIONS if v[1] in ("pydp_core", CORE)]
    _fail_on(_not_known(bad), "imports through the package root")


def test_no_deprecated_alias_is_imported():
    bad = [v for v in ROOT_VIOLATIONS if v[1] in DEPRECATED]
    _fail_on(_not_known(bad), "imports of deprecated aliases")


def test_each_module_imports_only_its_own_layer_or_below():
    _fail_on(_not_known(_layer_violations()), "imports from a higher layer")


def test_no_import_cycles():
    edges = _cycle_edges()
    cycles = _cycles(edges)
    lines = []
    for comp in cycles:
        members = set(comp)
        lines.append(" <-> ".join(comp))
        inside = [e for e in edges if e.source in members and e.target in members]
        lines += [f"    {e.where}: {e.source} -> {e.target}" for e in sorted(inside, key=lambda e: _by_place(e.where))]
    if cycles:
        pytest.fail("import cycles:\n" + "\n".join(lines), pytrace=False)


def test_the_known_violations_elsewhere_are_still_there():
    # An entry that no longer matches a violation is stale: remove it.
    seen = {(m, t) for m, t, _ in ROOT_VIOLATIONS + _layer_violations()}
    everything = [e for e in EDGES if not e.typing_only and e.source != e.target and e.source not in EXEMPT]
    for comp in _cycles(everything):  # a cycle edge is known as a plain edge inside its cycle
        seen |= {(e.source, e.target) for e in everything if e.source in comp and e.target in comp}
    stale = sorted(_KNOWN_ELSEWHERE - seen)
    assert not stale, f"stale entries of _KNOWN_ELSEWHERE: {stale}"
