"""Argument checks shared by the public API. Every error names the argument it is about.

Rules: inputs must be real numbers (bool, complex, strings and objects are a TypeError); NaN is always
an error; each check states its allowed range in the message. A silently rounded privacy parameter is a
privacy bug, so integer inputs are converted only when the conversion to float64 is exact.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "as_float_array",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_probability",
    "check_threads",
    "broadcast",
    "scalar_or_array",
]


def as_float_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, or a TypeError naming ``name`` if it is not real-valued."""
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of real numbers, not {type(value).__name__}")
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, numbers.Real):
        arr = np.asarray(value)
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be a real number or an array of real numbers ({exc})") from None
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real-valued (got dtype {arr.dtype})")
    if arr.dtype.kind in "iu":
        out = arr.astype(np.float64)
        if out.size and not np.array_equal(out.astype(arr.dtype), arr):
            raise ValueError(f"{name} has integers too large to convert to float64 exactly")
        return out
    if arr.dtype.itemsize > 8:
        out = arr.astype(np.float64)
        finite = np.isfinite(arr)
        if np.any(out[finite] != arr[finite]):
            raise ValueError(f"{name} cannot be represented in float64 without rounding")
        return out
    return arr.astype(np.float64, copy=False)


#: The largest ``threads=`` accepted: more is never useful, and the C++ pool would only try to start them.
MAX_THREADS = 4096


def check_threads(threads: Any, *, zero_means_all: bool = False) -> int:
    """``threads`` for the bindings (0 = all cores): None, or an int in [1, MAX_THREADS] ([0, ...] with
    ``zero_means_all``); bool and non-integers are a TypeError, anything else a ValueError naming it."""
    if threads is None:
        return 0
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be None or a positive int, not {type(threads).__name__}")
    t = int(threads)
    low = 0 if zero_means_all else 1
    if not low <= t <= MAX_THREADS:
        hint = "0 or None for all cores" if zero_means_all else "or None for all cores"
        raise ValueError(f"threads must lie in [{low}, {MAX_THREADS}] ({hint}), got {t}")
    return t


def _no_nan(arr: np.ndarray, name: str) -> None:
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> np.ndarray:
    arr = as_float_array(value, name)
    _no_nan(arr, name)
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    return arr


def check_delta(value: Any, name: str = "delta", *, allow_zero: bool = True, allow_one: bool = False) -> np.ndarray:
    arr = as_float_array(value, name)
    _no_nan(arr, name)
    low_ok = arr >= 0 if allow_zero else arr > 0
    high_ok = arr <= 1 if allow_one else arr < 1
    if not (low_ok & high_ok).all():
        lo = "[0" if allow_zero else "(0"
        hi = "1]" if allow_one else "1)"
        raise ValueError(f"{name} must lie in {lo}, {hi}")
    return arr


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> np.ndarray:
    arr = as_float_array(value, name)
    _no_nan(arr, name)
    if (arr <= 0).any():
        raise ValueError(f"{name} must be > 0")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    return arr


def check_probability(value: Any, name: str = "q") -> np.ndarray:
    arr = as_float_array(value, name)
    _no_nan(arr, name)
    if ((arr < 0) | (arr > 1)).any():
        raise ValueError(f"{name} must lie in [0, 1]")
    return arr


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays to one shape (C-contiguous copies), naming them if they do not fit."""
    try:
        out = np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"arguments cannot be broadcast together: {shapes}") from None
    return [np.ascontiguousarray(a, dtype=np.float64) for a in out]


def scalar_or_array(result: np.ndarray, *inputs: Any):
    """A Python float when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(np.asarray(result).reshape(()))
    return result
