"""Locate the compiled extension ``pydp_core._core``.

Running Python from a source checkout puts the checkout's ``pydp_core/`` folder (pure Python, no
compiled extension unless built in place) ahead of the installed package. Rather than failing later
with an obscure AttributeError, we look for the extension of an installed copy of the same version and
use it; if there is none, we raise an ImportError that says what to do.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from typing import Any

_HOW_TO = (
    "Install the package with `python -m pip install .` (then run from outside the source folder or "
    "through the `pydp-core` command), or build the extension in place with `tools/build-inplace`."
)


def load_core(package_dir: str, version: str) -> Any:
    try:
        from . import _core  # type: ignore[attr-defined]

        # Without a compiled module here, the folder of its type stubs (_core/*.pyi) would import as an
        # empty namespace package: that is not the extension.
        if getattr(_core, "__file__", None) is None:
            sys.modules.pop(__package__ + "._core", None)
            raise ImportError("only the type stubs of pydp_core._core are here")
    except ImportError as first_error:
        core = _load_installed(package_dir)
        if core is None:
            raise ImportError(
                f"pydp_core: the compiled extension pydp_core._core is not in {package_dir} and no "
                f"installed copy was found ({first_error}). {_HOW_TO}"
            ) from first_error
    else:
        core = _core
    core_version = getattr(core, "__version__", None)
    if core_version != version:
        raise ImportError(
            f"pydp_core: the compiled extension ({core.__file__}) is version {core_version}, the Python "
            f"sources ({package_dir}) are version {version}. Rebuild: {_HOW_TO}"
        )
    return core


def _load_installed(package_dir: str) -> Any:
    here = os.path.realpath(package_dir)
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), "pydp_core")
        if not os.path.isdir(candidate) or os.path.realpath(candidate) == here:
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(candidate, "_core" + suffix)
            if os.path.isfile(path):
                spec = importlib.util.spec_from_file_location("pydp_core._core", path)
                if spec is None or spec.loader is None:
                    continue
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                sys.modules["pydp_core._core"] = module
                return module
    return None
