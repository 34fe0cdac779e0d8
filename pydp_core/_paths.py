"""Where the C++ headers and the CMake package of pydp_core are (pybind11's convention).

An installed wheel holds them inside the package: ``pydp_core/include/pydp/...`` and
``pydp_core/share/cmake/pydp_core/pydp_coreConfig.cmake`` (targets ``pydp_core::headers``, the
header-only C++17 kernels, and ``pydp_core::capi``, the C ABI). A source checkout built with
``tools/build-inplace`` has the headers in ``csrc/include`` and a build-tree package in
``pydp_core/share/cmake/pydp_core``. The C++ API is described in docs/cpp.md.
"""
from __future__ import annotations

import os

__all__ = ["get_include", "get_cmake_dir"]

_PKG = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The directory to put on the include path: it holds ``pydp/...`` (e.g. ``pydp/capi.h``).

    Returns
    -------
    str
        An absolute path.

    Raises
    ------
    FileNotFoundError
        Neither an installed copy nor a source checkout holds the headers.

    Examples
    --------
    >>> import os
    >>> os.path.isfile(os.path.join(get_include(), "pydp", "version.hpp"))
    True
    """
    for candidate in (os.path.join(_PKG, "include"), os.path.join(os.path.dirname(_PKG), "csrc", "include")):
        if os.path.isfile(os.path.join(candidate, "pydp", "version.hpp")):
            return candidate
    raise FileNotFoundError(f"pydp_core's C++ headers are not installed next to {_PKG}; reinstall the package")


def get_cmake_dir() -> str:
    """The directory holding ``pydp_coreConfig.cmake``, for ``-Dpydp_core_DIR=...``.

    Returns
    -------
    str
        An absolute path; ``find_package(pydp_core CONFIG)`` with ``pydp_core_DIR`` set to it defines
        ``pydp_core::headers`` and ``pydp_core::capi``.

    Raises
    ------
    FileNotFoundError
        No package config is installed (a source checkout not yet built with ``tools/build-inplace``).

    Examples
    --------
    >>> import os
    >>> os.path.isfile(os.path.join(get_cmake_dir(), "pydp_coreConfig.cmake"))
    True
    """
    path = os.path.join(_PKG, "share", "cmake", "pydp_core")
    if os.path.isfile(os.path.join(path, "pydp_coreConfig.cmake")):
        return path
    raise FileNotFoundError(
        f"pydp_core's CMake package is not in {path}: install the package (pip install .) or, in a source "
        "checkout, build it with tools/build-inplace"
    )
