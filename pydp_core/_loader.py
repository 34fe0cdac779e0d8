"""Locate the compiled extension ``pydp_core._core`` and check that it matches the Python sources.

Running Python from a source checkout puts the checkout's ``pydp_core/`` folder ahead of an installed
copy; without an in-place build it has no compiled extension. Rather than fail later with an obscure
AttributeError, the import fails at once with one line that says what to do.
"""
from __future__ import annotations

import sys
from typing import Any

_HOW_TO = (
    "Install the package with `python -m pip install .` (then run from outside the source folder or "
    "through the `pydp-core` command), or build the extension in place with `tools/build-inplace`."
)


def load_core(package_dir: str) -> Any:
    """Return the compiled extension beside ``package_dir``, or raise an ImportError saying what to do."""
    try:
        from . import _core

        # Without a compiled module here, the folder of its type stubs (_core/*.pyi) would import as an
        # empty namespace package: that is not the extension.
        if getattr(_core, "__file__", None) is None:
            sys.modules.pop(__package__ + "._core", None)
            raise ImportError("only the type stubs of pydp_core._core are here")
    except ImportError as error:
        raise ImportError(
            f"pydp_core: the compiled extension pydp_core._core is not in {package_dir} ({error}). {_HOW_TO}"
        ) from None
    try:
        from ._version import __version__ as version
    except FileNotFoundError as error:
        raise ImportError(f"pydp_core: {error}. {_HOW_TO}") from None
    core_version = getattr(_core, "__version__", None)
    if core_version != version:
        raise ImportError(
            f"pydp_core: the compiled extension ({_core.__file__}) is version {core_version}, the Python "
            f"sources ({package_dir}) are version {version}. Rebuild: {_HOW_TO}"
        )
    return _core
