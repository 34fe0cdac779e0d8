// The version of pydp_core: its one definition. The package metadata (pyproject.toml), CMake and the
// Python sources (pydp_core/_version.py) read PYDP_VERSION_STRING from here; the three numbers below
// must spell it (tests/packaging/test_cpp_package.py checks that they do).
#pragma once

#define PYDP_VERSION_MAJOR 0
#define PYDP_VERSION_MINOR 1
#define PYDP_VERSION_PATCH 0
#define PYDP_VERSION_STRING "0.1.0"
// One integer that grows with the version: MAJOR * 10000 + MINOR * 100 + PATCH.
#define PYDP_VERSION_NUMBER (PYDP_VERSION_MAJOR * 10000 + PYDP_VERSION_MINOR * 100 + PYDP_VERSION_PATCH)
