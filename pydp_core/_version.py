"""The version of pydp_core, read from its one definition: ``PYDP_VERSION_STRING`` in the C++ header
``pydp/version.hpp`` (installed in the package, or in ``csrc/include`` of a source checkout), which the
build (CMake and the package metadata) reads too.
"""
from __future__ import annotations

import os
import re

from ._paths import get_include


def _read() -> str:
    with open(os.path.join(get_include(), "pydp", "version.hpp"), encoding="utf-8") as fh:
        found = re.search(r'^#define PYDP_VERSION_STRING "([^"]+)"', fh.read(), re.M)
    if found is None:
        raise ImportError("pydp_core: pydp/version.hpp does not define PYDP_VERSION_STRING; reinstall the package")
    return found.group(1)


__version__ = _read()
