"""Where the C++ headers, the C ABI libraries and the CMake package of pydp_core are (pybind11's convention).

An installed wheel holds them inside the package: ``pydp_core/include/pydp/...``,
``pydp_core/lib/libpydp_capi.a`` and ``pydp_core/lib/libpydp_capi.so.1`` (the C ABI, static and shared),
and ``pydp_core/share/cmake/pydp_core/pydp_coreConfig.cmake`` (targets ``pydp_core::headers``, the
header-only C++17 kernels, ``pydp_core::capi`` and ``pydp_core::capi_shared``, the C ABI). A source
checkout built with ``tools/build-inplace`` has the headers in ``csrc/include``, the libraries in
``pydp_core/lib`` and a build-tree package in ``pydp_core/share/cmake/pydp_core``. The C++ API and the
C ABI are described in docs/cpp.md.
"""
from __future__ import annotations

import os

__all__ = ["get_include", "get_cmake_dir", "get_library_dir"]

# The shared C ABI library's file name: its soname, libpydp_capi.so.<PYDP_ABI_VERSION of capi.h>.
CAPI_SHARED = "libpydp_capi.so.1"

_PKG = os.path.dirname(os.path.abspath(__file__))
# What to do when a source checkout lacks the built files.
_HOW_TO_BUILD = "install the package (pip install .) or, in a source checkout, build it with tools/build-inplace"


def _first_dir(candidates: tuple[str, ...], files: tuple[str, ...], missing: str) -> str:
    """The first of ``candidates`` that holds every one of ``files`` (paths relative to it), else a
    FileNotFoundError with the message ``missing``."""
    for candidate in candidates:
        if all(os.path.isfile(os.path.join(candidate, f)) for f in files):
            return candidate
    raise FileNotFoundError(missing)


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
    return _first_dir((os.path.join(_PKG, "include"), os.path.join(os.path.dirname(_PKG), "csrc", "include")),
                      (os.path.join("pydp", "version.hpp"),),
                      f"pydp_core's C++ headers are not installed next to {_PKG}; reinstall the package")


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
    return _first_dir((path,), ("pydp_coreConfig.cmake",), f"pydp_core's CMake package is not in {path}: {_HOW_TO_BUILD}")


def get_library_dir() -> str:
    """The directory holding the C ABI libraries: ``libpydp_capi.a`` and ``libpydp_capi.so.1``.

    ``libpydp_capi.so.1`` (its soname carries the ABI version, ``PYDP_ABI_VERSION`` of ``pydp/capi.h``)
    exports the ``pydp_*`` functions only, for ctypes, cffi, Rust, Go or any C FFI, and needs nothing
    beyond the C and C++ runtimes the extension needs. Link a C program with
    ``cc app.c -I<get_include()> -L<dir> -l:libpydp_capi.so.1 -Wl,-rpath,<dir>``, or statically with
    ``<dir>/libpydp_capi.a -lstdc++ -lm -lpthread``.

    Returns
    -------
    str
        An absolute path.

    Raises
    ------
    FileNotFoundError
        The libraries are not installed (a source checkout not yet built with ``tools/build-inplace``).

    Examples
    --------
    >>> import ctypes, os
    >>> lib = ctypes.CDLL(os.path.join(get_library_dir(), "libpydp_capi.so.1"))
    >>> lib.pydp_abi_version()
    1
    """
    path = os.path.join(_PKG, "lib")
    return _first_dir((path,), (CAPI_SHARED, "libpydp_capi.a"),
                      f"pydp_core's C ABI libraries are not in {path}: {_HOW_TO_BUILD}")
