"""Sphinx configuration of the pydp_core documentation (built by tests/test_docs_site.py with -W)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "pydp_core"
author = "the pydp_core developers"
copyright = "the pydp_core developers, Apache-2.0"
release = version = __import__("pydp_core").__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax", "myst_parser"]
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
html_theme = "alabaster"
html_title = f"pydp_core {release}"
suppress_warnings = ["myst.header"]


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings write absolute values and norms as |x| in plain text; outside ``literals`` reST would read
    them as substitution references, so the bars are escaped there."""
    for i, line in enumerate(lines):
        parts = line.split("``")
        lines[i] = "``".join(p.replace("|", "\\|") if k % 2 == 0 else p for k, p in enumerate(parts))


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars)
