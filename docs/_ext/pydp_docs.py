"""Two Sphinx directives of the pydp_core site.

``run-python``
    Runs its Python code when the site is built and shows the code followed by what it printed (and the
    value of a final expression, as an interactive session would). The blocks of one page share one
    namespace and run in order, in a temporary working folder; an exception fails the build, so every
    output shown is the output of the code shown. ``:figure: FILE`` shows the PNG or SVG image that the
    code wrote to FILE (embedded in the page).

``cli-reference``
    The reference of every ``pydp-core`` command, generated from its argparse parser
    (:func:`pydp_core.cli.build_parser`): the command's description, usage, each argument with its help,
    and the parser's epilog.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import os
import tempfile
import traceback
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

# The namespace of each page being read (kept out of the environment, which is pickled).
_NAMESPACES: dict[str, dict] = {}


class RunPython(SphinxDirective):
    """The code, run at build time, and its output."""

    has_content = True
    option_spec = {"hide-output": directives.flag, "figure": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        ns = _NAMESPACES.setdefault(self.env.docname, {"__name__": "__main__"})
        folder = ns.setdefault("__run_folder__", tempfile.mkdtemp(prefix="pydp-docs-"))
        out = io.StringIO()
        tree = ast.parse(code, filename=f"<{self.env.docname}>")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        here = os.getcwd()
        try:
            os.chdir(folder)
            with contextlib.redirect_stdout(out):
                exec(compile(tree, f"<{self.env.docname}>", "exec"), ns)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), f"<{self.env.docname}>", "eval"), ns)
                    if value is not None:
                        print(repr(value))
        except Exception:
            raise self.error(f"run-python block failed:\n{traceback.format_exc(limit=-3)}") from None
        finally:
            os.chdir(here)
        shown = nodes.literal_block(code, code, language="python")
        result: list[nodes.Node] = [shown]
        text = out.getvalue().rstrip("\n")
        if text and "hide-output" not in self.options:
            block = nodes.literal_block(text, text, language="text", classes=["run-output"])
            result.append(nodes.container("", block, classes=["run-output-box"]))
        if "figure" in self.options:
            result.append(self._figure(os.path.join(folder, self.options["figure"])))
        return result

    def _figure(self, path: str) -> nodes.Node:
        import base64

        kinds = {".svg": "image/svg+xml", ".png": "image/png"}
        kind = kinds.get(os.path.splitext(path)[1].lower())
        if kind is None or not os.path.isfile(path):
            raise self.error(f"run-python: no PNG or SVG figure {self.options['figure']!r} was written")
        with open(path, "rb") as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        html = f'<img class="run-figure" alt="{os.path.basename(path)}" src="data:{kind};base64,{data}">'
        return nodes.raw("", html, format="html")


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return str(action.metavar or action.dest)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = action.metavar or action.dest.upper()
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    elif action.nargs in ("+", "*"):
        metavar = f"{metavar} [{metavar} ...]"
    return ", ".join(f"{o} {metavar}" for o in action.option_strings)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = action.help or ""
    if "%(" in text:
        text = parser._get_formatter()._expand_help(action)
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        text += (" " if text else "") + "(one of " + ", ".join(map(str, action.choices)) + ")"
    return text


class CliReference(SphinxDirective):
    """One section per ``pydp-core`` command."""

    def run(self) -> list[nodes.Node]:
        from pydp_core.cli import build_parser

        parser = build_parser()
        (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        out: list[nodes.Node] = []
        for name, cmd in sub.choices.items():
            section = nodes.section(ids=[f"command-{name}"], names=[f"pydp-core {name}"])
            section += nodes.title("", f"pydp-core {name}")
            if cmd.description:
                section += nodes.paragraph("", cmd.description)
            usage = cmd.format_usage().removeprefix("usage: ").strip()
            section += nodes.literal_block(usage, usage, language="text")
            items = nodes.definition_list()
            for group in cmd._action_groups:
                for action in group._group_actions:
                    if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                        continue
                    term = nodes.term("", "")
                    term += nodes.literal("", _invocation(action))
                    body = nodes.definition("", nodes.paragraph("", _help(cmd, action)))
                    items += nodes.definition_list_item("", term, body)
            section += items
            if cmd.epilog:
                section += nodes.literal_block(cmd.epilog, cmd.epilog.strip("\n"), language="text")
            out.append(section)
        return out


def _forget(app: Any, env: Any, docname: str) -> None:
    _NAMESPACES.pop(docname, None)


def setup(app: Any) -> dict:
    app.add_directive("run-python", RunPython)
    app.add_directive("cli-reference", CliReference)
    app.connect("env-purge-doc", _forget)
    return {"parallel_read_safe": False, "env_version": 1}
