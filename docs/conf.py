"""Sphinx configuration of the pydp_core documentation (built by tests/packaging/test_docs_site.py with -W)."""
from __future__ import annotations

import glob
import os
import sys

# Document the checkout when it holds an in-place build; otherwise the installed package.
if glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pydp_core", "_core*.so")):
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

project = "pydp_core"
author = "the pydp_core developers"
copyright = "the pydp_core developers, Apache-2.0"
release = version = __import__("pydp_core").__version__

# pydp_docs: the run-python directive (tutorial code run at build time, its output shown) and the CLI
# reference generated from the argparse parsers (docs/_ext/pydp_docs.py).
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax", "myst_parser", "pydp_docs"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes" sections as fields: the properties document themselves
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
# Names that the signatures mention but that have no page of their own.
nitpicky = False
myst_heading_anchors = 3
# $...$ and $$...$$ in the Markdown pages are mathematics (rendered by MathJax), as are ```{math} blocks.
myst_enable_extensions = ["dollarmath", "amsmath"]
html_theme = "furo"
html_title = f"pydp_core {release}"
# docs/_static/custom.css holds the layout fixes found with tools/screenshot-docs.
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# Dashes in the text stay as typed: the CLI reference shows options such as --out.
smartquotes = False
# MathJax 3 from the django-static-mathjax package of the docs extra (the files of MathJax itself, no
# Django), copied into _static when the site is built: the site loads nothing from other hosts. tex-svg
# renders to SVG and needs no font files.
mathjax_path = "tex-svg.js"
# Signatures name numpy's ArrayLike instead of spelling out its union (the modules use postponed
# annotations, so autodoc sees the alias name).
autodoc_type_aliases = {"ArrayLike": "numpy.typing.ArrayLike", "NDArray": "numpy.typing.NDArray",
                        "DTypeLike": "numpy.typing.DTypeLike"}
suppress_warnings = ["myst.header"]


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings write absolute values and norms as |x| in plain text; outside ``literals`` reST would read
    them as substitution references, so the bars are escaped there."""
    for i, line in enumerate(lines):
        parts = line.split("``")
        lines[i] = "``".join(p.replace("|", "\\|") if k % 2 == 0 else p for k, p in enumerate(parts))


def _top_level_names(app, docname, source):
    """The page of the top-level package lists every name it re-exports, linked to the subpackage page
    that documents it (the names load lazily, so autodoc sees no members), and documents the two names
    that live only here."""
    if docname != "api/pydp_core":
        return
    import pydp_core

    by_module: dict[str, list[str]] = {}
    for name in pydp_core.__all__:
        module = pydp_core._EXPORTS.get(name)
        if module is not None and module != "pydp_core._paths":
            by_module.setdefault(module, []).append(name)
    lines = ["", "Names importable from ``pydp_core``", "-----------------------------------", "",
             ".. list-table::", "   :header-rows: 1", "   :widths: 25 75", "", "   * - documented in",
             "     - names"]
    for module, names in by_module.items():
        lines += [f"   * - :py:mod:`{module}`", "     - " + ", ".join(f":py:obj:`~{module}.{n}`" for n in names)]
    lines += ["", "The C++ package", "---------------", "", ".. autofunction:: pydp_core.get_include", "",
              ".. autofunction:: pydp_core.get_cmake_dir", "", ".. autofunction:: pydp_core.get_library_dir", ""]
    source[0] += "\n".join(lines)


def _mathjax_file() -> str:
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    path = os.path.join(os.path.dirname(spec.origin or ""), "static", "mathjax", "es5", "tex-svg.js") if spec else ""
    if not os.path.isfile(path):
        raise RuntimeError("MathJax is missing: install the docs extra (pip install '.[docs]')")
    return path


def _copy_mathjax(app, exc):
    import shutil

    if exc is None and app.builder.format == "html":
        shutil.copyfile(_mathjax_file(), os.path.join(app.outdir, "_static", "tex-svg.js"))


def setup(app):
    _mathjax_file()
    app.connect("build-finished", _copy_mathjax)
    app.connect("autodoc-process-docstring", _escape_bars)
    app.connect("source-read", _top_level_names)
