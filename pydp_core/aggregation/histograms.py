"""Histograms per group on public bins (``("histogram", edges)``, ``docs/aggregate.md``, section 12).

The bins of ``edges = [b_0, ..., b_m]`` (finite, strictly increasing) are ``[b_i, b_{i+1})``, the last one
closed; values are clamped to ``[b_0, b_m]`` first, so every kept row falls in exactly one bin, found by exact
comparisons with the public edges. One privacy unit changes at most ``Kp`` groups and ``Kc`` rows in each,
and a row moves one bin count by one: the counts of all bins of all groups change by at most ``Kp Kc`` in
l1 norm (``Kp Kc**2`` in squared l2 norm), the same as the row counts. Each bin count gets the noise of a
row count (discrete Laplace or discrete Gaussian, independent keyed draws per group and bin), so the whole
histogram spends one aggregate's share, whatever the number of bins.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

#: The most bins one histogram may have.
MAX_BINS = 1 << 12


def histogram_edges(item: Any, name: str) -> tuple[float, ...]:
    """The edges of ``("histogram", edges)`` as floats, checked (errors naming ``name``)."""
    if not (isinstance(item, (tuple, list)) and len(item) == 2 and item[0] == "histogram"):
        raise TypeError(f"{name}: a histogram is asked as ('histogram', [edges]), got {item!r}")
    edges = item[1]
    if not isinstance(edges, (list, tuple, np.ndarray)) or len(edges) < 2:
        raise TypeError(f"{name}: histogram bins are given by a list of at least two edges")
    out = []
    for e in edges:
        if isinstance(e, bool) or not isinstance(e, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}: histogram edges must be numbers, not {type(e).__name__}")
        f = float(e)
        if not math.isfinite(f) or (isinstance(e, (int, np.integer)) and int(f) != int(e)):
            raise ValueError(f"{name}: histogram edge {e!r} is not a finite float64")
        out.append(f)
    if any(b <= a for a, b in zip(out, out[1:])):
        raise ValueError(f"{name}: histogram bins must be strictly increasing, got {list(edges)!r}")
    if len(out) - 1 > MAX_BINS:
        raise ValueError(f"{name}: at most {MAX_BINS} histogram bins")
    return tuple(out)


def bin_counts(values: np.ndarray, groups: np.ndarray, edges: tuple[float, ...], n_groups: int) -> np.ndarray:
    """The int64 ``(n_groups, m)`` counts of kept rows per group and bin (values clamped to the edges)."""
    e = np.asarray(edges, dtype=np.float64)
    m = e.size - 1
    b = np.clip(np.searchsorted(e, np.asarray(values, dtype=np.float64), side="right") - 1, 0, m - 1)
    return np.bincount(groups * m + b, minlength=n_groups * m).astype(np.int64).reshape(n_groups, m)
