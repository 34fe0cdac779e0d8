"""Argument checks shared by the public API. Every error names the argument it is about.

Rules: inputs must be real numbers (bool, complex, strings and objects are a TypeError); NaN is always
an error; each check states its allowed range in the message. A silently rounded privacy parameter is a
privacy bug, so integer inputs are converted only when the conversion to float64 is exact.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "as_float_array",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_probability",
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


def check_finite(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array of finite numbers (no NaN, no inf)."""
    arr = as_float_array(value, name)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_int(value: Any, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as a Python int within [minimum, maximum]; bool, float and other types are a TypeError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    v = int(value)
    if minimum is not None and maximum is not None and not minimum <= v <= maximum:
        raise ValueError(f"{name} must lie in [{minimum}, {maximum}], got {v}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def as_scalar(arr: np.ndarray, name: str) -> float:
    """The one value of a 0-d array; any other shape is a TypeError naming ``name``."""
    if np.ndim(arr) != 0:
        raise TypeError(f"{name} must be a scalar, got shape {np.shape(arr)}")
    return float(arr)


def check_positive_scalar(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A scalar > 0 (finite unless ``allow_inf``)."""
    return as_scalar(check_positive(value, name, allow_inf=allow_inf), name)


def check_epsilon_scalar(value: Any, name: str = "epsilon") -> float:
    """A scalar epsilon >= 0, finite."""
    return as_scalar(check_epsilon(value, name), name)


def require_extra(extra: str, *modules: str) -> list[Any]:
    """Import ``modules``, or raise an ImportError naming the pydp_core extra that provides them."""
    import importlib

    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as exc:
        raise ImportError(
            f"this needs {', '.join(modules)}, which the '{extra}' extra installs: "
            f"pip install 'pydp_core[{extra}]' ({exc})"
        ) from None


def real_scalar(value: Any, name: str) -> float:
    """A real scalar (not NaN) as a float; a fast path for Python floats and exact ints."""
    t = type(value)
    if t is float:  # fast path for the common case (optimisers call conversions in inner loops)
        if value != value:
            raise ValueError(f"{name} must not be NaN")
        return value
    if t is int and -(2**53) <= value <= 2**53:
        return float(value)
    arr = as_float_array(value, name)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a scalar real number, got an array of shape {arr.shape}")
    x = float(arr)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def check_nonneg_scalar(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A real scalar >= 0 (finite unless ``allow_inf``)."""
    x = real_scalar(value, name)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    if not allow_inf and math.isinf(x):
        raise ValueError(f"{name} must be finite")
    return x


def check_alpha(value: Any, name: str = "alpha", *, allow_inf: bool = False) -> float:
    """A Renyi order alpha > 1 (finite unless ``allow_inf``)."""
    x = real_scalar(value, name)
    if not x > 1:
        raise ValueError(f"{name} must be > 1, got {x!r}")
    if math.isinf(x) and not allow_inf:
        raise ValueError(f"{name} must be finite")
    return x


def check_open_delta(value: Any, name: str = "delta") -> float:
    """A delta for a conversion: it must lie in the open interval (0, 1)."""
    x = real_scalar(value, name)
    if not 0 < x < 1:
        raise ValueError(f"{name} must lie in (0, 1) for this conversion, got {x!r}")
    return x


# aggregate
def check_aggregate_names(value: Any, name: str, allowed: tuple[str, ...]) -> list[str]:
    """A list of distinct aggregate names from ``allowed`` (a single str is one name)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise TypeError(f"{name} must be an aggregate name or a non-empty list of them ({', '.join(allowed)})")
    out = []
    for v in items:
        if not isinstance(v, str):
            raise TypeError(f"{name}: aggregate names are strings, not {type(v).__name__}")
        if v not in allowed:
            raise ValueError(f"{name}: unknown aggregate {v!r} (allowed: {', '.join(allowed)})")
        if v in out:
            raise ValueError(f"{name}: aggregate {v!r} is listed twice")
        out.append(v)
    return out


def check_confidence(value: Any, name: str = "confidence") -> float:
    """A confidence level in the open interval (0, 1)."""
    level = as_scalar(check_probability(value, name), name)
    if level in (0.0, 1.0):
        raise ValueError(f"{name} must lie in (0, 1), got {level!r}")
    return level
