"""The one error convention of the C++ core (csrc/include/pydp/status.hpp): each kind of kernel exception
arrives in Python as the type pybind11's own translation gives (ValueError, OverflowError, ...) with the
kernel's message, through the C ABI as the pydp_status code of the same failure, and the calibration's
Status values are the C ABI's codes."""
from __future__ import annotations

import ctypes as C
import re
from pathlib import Path

import numpy as np
import pytest
from support import downstream as ds

import pydp_core as dp
from pydp_core import _core

_rel = _core.release
SUBBOTIN, LOGISTIC = 3, 2  # capi.h families
HEADER = Path(dp.get_include()) / "pydp" / "capi.h"


def _codes() -> dict[str, int]:
    """The pydp_status enumerators of capi.h."""
    body = re.search(r"typedef enum pydp_status \{(.*?)\} pydp_status;", HEADER.read_text(), re.S)
    assert body is not None
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"PYDP_(\w+) = (\d+)", body.group(1))}


@pytest.fixture(scope="module")
def lib() -> C.CDLL:
    lib = C.CDLL(str(Path(dp.get_library_dir()) / ds.CAPI_SHARED))
    lib.pydp_strerror.restype = C.c_char_p
    lib.pydp_strerror.argtypes = [C.c_int]
    lib.pydp_last_error.restype = C.c_char_p
    return lib


def test_calibration_status_values_are_the_c_codes():
    codes = _codes()
    assert {s.name: int(s) for s in _core.calibration.Status.__members__.values()} == {
        "ok": codes["OK"], "no_finite_scale": codes["ERR_NO_FINITE_SCALE"], "verify_failed": codes["ERR_VERIFY_FAILED"],
        "no_convergence": codes["ERR_NO_CONVERGENCE"], "scale_overflow": codes["ERR_SCALE_OVERFLOW"]}


def test_strerror_names_every_code(lib):
    texts = [lib.pydp_strerror(code).decode() for code in sorted(_codes().values())]
    assert texts[0] == "success" and "unknown error code" not in texts and len(set(texts)) == len(texts)
    assert lib.pydp_strerror(12) == lib.pydp_strerror(-1) == b"unknown error code"


def test_kernel_exceptions_keep_their_python_types_and_messages():
    # std::invalid_argument -> ValueError
    with pytest.raises(ValueError, match=r"^kind: 0 \(Subbotin\) or 1 \(Logistic\)$"):
        _rel.LatticeTable(5, 2.0, 4.0, 20, 1000)
    with pytest.raises(ValueError, match=r"^threads must be >= 0 \(0 = all cores\)$"):
        _core.special.ndtr(np.zeros(3), threads=-1)
    # std::length_error (a size limit) -> ValueError
    with pytest.raises(ValueError, match=r"^lattice table: the table would exceed its size limit$"):
        _rel.LatticeTable(0, 2.0, 1000.0, 20, 10)
    # std::overflow_error -> OverflowError
    with pytest.raises(OverflowError, match=r"^lattice table: total weight reached 2\^63$"):
        _rel.LatticeTable(0, 2.0, 1000.0, 62, 1 << 20)


def test_pybind11_exceptions_pass_through():
    with pytest.raises(IndexError, match=r"^the given words are exhausted$"):
        _rel._exp_ratio_words(np.zeros(16, dtype=np.uint64), 1, 2)
    with pytest.raises(TypeError):
        _rel.LatticeTable("subbotin", 2.0, 4.0, 20, 1000)


def test_c_abi_codes_of_the_same_failures(lib):
    codes = _codes()
    key = bytes(range(32))
    rng = C.c_void_p()
    assert lib.pydp_rng_new(key, C.c_uint64(0), C.byref(rng)) == codes["OK"]
    try:
        x = np.zeros(4)
        out = np.empty(4)
        ptr = C.POINTER(C.c_double)
        lib.pydp_release_lattice.argtypes = [C.c_void_p, C.c_int, C.c_double, C.c_uint64, C.c_int, C.c_int, C.c_int,
                                             C.c_double, C.c_double, ptr, ptr, C.c_size_t, C.c_uint]
        # a table too heavy for its weight bits: a bad argument here (not a noisy value out of range)
        rc = lib.pydp_release_lattice(rng, SUBBOTIN, 2.0, 1000, 62, 0, -10, -np.inf, np.inf,
                                      x.ctypes.data_as(ptr), out.ctypes.data_as(ptr), 4, 1)
        assert rc == codes["ERR_INVALID"]
        assert lib.pydp_last_error() == b"lattice table: total weight reached 2^63"
        # std::invalid_argument from a sampler's own check
        lib.pydp_rng_laplace.argtypes = [C.c_void_p, C.c_double, C.c_double, ptr, C.c_size_t, C.c_uint]
        assert lib.pydp_rng_laplace(rng, 0.0, -1.0, out.ctypes.data_as(ptr), 4, 1) == codes["ERR_INVALID"]
        assert lib.pydp_last_error() == b"scale must be finite and >= 0"
    finally:
        lib.pydp_rng_free.argtypes = [C.c_void_p]
        lib.pydp_rng_free(rng)
