"""Argument helpers shared by the modules of the PLD package: a real scalar and a composition count."""
from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np


def _scalar(value: Any, name: str, check: Callable[[Any, str], Any]) -> float:
    """``check(value, name)`` (one of the checks of :mod:`pydp_core._validation`), required to be a scalar."""
    arr = check(value, name)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a scalar")
    return float(arr)


def _count(k: Any, name: str = "k") -> int:
    """A number of compositions: an integer (not a bool) >= 1."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(k).__name__}")
    count = int(k)
    if count < 1:
        raise ValueError(f"{name} must be >= 1, got {count}")
    return count
