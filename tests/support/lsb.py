"""Mironov's least-significant-bit distinguisher (Mironov 2012), shared by the release tests.

The distinguisher looks only at the binary representation of an output y: v(y) = the exponent of its lowest
set bit (y = odd * 2^v(y)), and the events S_j = {v(y) < j} and S'_j = {v(y) >= j} for every j. A mechanism
is (eps, delta)-DP only if P(S | x0) <= e^eps P(S | x1) + delta for every event S (and with x0, x1 swapped);
both probabilities are bounded with Clopper-Pearson intervals at a total false-alarm rate of ALPHA
(Bonferroni over all events).
"""
import math

import numpy as np
from scipy import stats

from .stats import ALPHA

N = 400_000
JS = list(range(-1080, 1025))


def lowest_bit_exponent(y: np.ndarray) -> np.ndarray:
    """v with y = odd * 2^v for y != 0 (exact, from the float's bits); a large value for y == 0."""
    m, e = np.frexp(y)  # y = m 2^e, 0.5 <= |m| < 1, m has at most 53 significant bits
    mant = np.abs(np.ldexp(m, 53)).astype(np.int64)  # integer mantissa, exact
    low = mant & -mant  # lowest set bit as a power of two
    v = e.astype(np.int64) - 53 + np.log2(np.maximum(low, 1)).astype(np.int64)
    return np.where(y == 0, 10**6, v)


def cp_bounds(count: np.ndarray, n: int, alpha: float):
    lo = np.where(count > 0, stats.beta.ppf(alpha / 2, count, n - count + 1), 0.0)
    hi = np.where(count < n, stats.beta.isf(alpha / 2, count + 1, n - count), 1.0)
    return lo, hi


def event_counts(v: np.ndarray) -> np.ndarray:
    """Counts of S_j = {v < j} for j in JS, then of the complements."""
    below = np.searchsorted(np.sort(v), JS, side="left")
    return np.concatenate([below, v.size - below])


def worst_violation(out0: np.ndarray, out1: np.ndarray, eps: float, delta: float) -> tuple[float, float]:
    """(largest certain violation, largest point-estimate advantage) over all events and both directions.

    certain violation = lower(P(S|a)) - e^eps upper(P(S|b)) - delta (> 0 means the guarantee is broken
    with confidence 1 - 1e-6)."""
    c0, c1 = event_counts(lowest_bit_exponent(out0)), event_counts(lowest_bit_exponent(out1))
    alpha = ALPHA / (2 * 2 * len(c0))  # Bonferroni: events x directions x two intervals each
    lo0, hi0 = cp_bounds(c0, out0.size, alpha)
    lo1, hi1 = cp_bounds(c1, out1.size, alpha)
    e = math.exp(eps)
    certain = max(np.max(lo0 - e * hi1 - delta), np.max(lo1 - e * hi0 - delta))
    point = max(np.max(c0 / out0.size - e * c1 / out1.size), np.max(c1 / out1.size - e * c0 / out0.size))
    return float(certain), float(point)
