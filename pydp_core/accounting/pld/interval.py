"""The certified interval every PLD query returns, and the helpers that assemble it from the kernels' bounds."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["Interval"]


class Interval(NamedTuple):
    """A certified interval: the true value lies in [lower, upper] (floats or arrays).

    Parameters
    ----------
    lower, upper : float or ndarray
        The two ends; ``lower <= truth <= upper`` element by element.

    Examples
    --------
    >>> iv = Interval(1.0, 1.5)
    >>> iv.lower, iv.upper, float(iv.width)
    (1.0, 1.5, 0.5)
    """

    lower: Any
    upper: Any

    @property
    def width(self) -> Any:
        """``upper - lower``."""
        return np.subtract(self.upper, self.lower)


def _merge(parts: list[Any]) -> tuple[Any, ...]:
    """Bounds on the maximum of several quantities from (lower, upper) bounds on each: the two maxima."""
    return np.maximum.reduce([lo for lo, _ in parts]), np.maximum.reduce([up for _, up in parts])


def _shape(lo: np.ndarray, up: np.ndarray, arr: np.ndarray, original: Any) -> Interval:
    """The flat bounds ``lo``, ``up`` as an Interval of floats (scalar ``original``) or of ``arr``'s shape."""
    if np.ndim(original) == 0:
        return Interval(float(lo[0]), float(up[0]))
    return Interval(lo.reshape(arr.shape), up.reshape(arr.shape))
