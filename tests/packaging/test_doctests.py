"""The Examples sections of the public docstrings run as written (doctest)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import pydp_core

# Modules that need an engine (Spark, Dask) or the command line are exercised by their own tests.
SKIP = {"pydp_core.io.spark", "pydp_core.io.dask", "pydp_core.__main__"}
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(pydp_core.__path__, "pydp_core.")
    if m.name not in SKIP and not m.name.startswith("pydp_core._core") and not m.name.startswith("pydp_core.cli")
)


@pytest.mark.parametrize("modname", MODULES)
def test_examples_run(modname):
    mod = importlib.import_module(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {"np": np, "dp": pydp_core}
    for test in finder.find(mod, modname, globs=dict(globs, **vars(mod))):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {modname}"
