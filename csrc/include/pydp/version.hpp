// The version of the pydp_core C++ headers and C ABI (the same as the Python package's).
// Kept equal to pyproject.toml's version: CMake stops at configure time if they differ, and
// tests/packaging/test_cpp_package.py checks it too.
#pragma once

#define PYDP_VERSION_MAJOR 0
#define PYDP_VERSION_MINOR 1
#define PYDP_VERSION_PATCH 0
#define PYDP_VERSION_STRING "0.1.0"
// One integer that grows with the version: MAJOR * 10000 + MINOR * 100 + PATCH.
#define PYDP_VERSION_NUMBER (PYDP_VERSION_MAJOR * 10000 + PYDP_VERSION_MINOR * 100 + PYDP_VERSION_PATCH)
