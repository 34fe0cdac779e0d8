"""The exact output law of a noisy binary search (mpmath, from the definition) and a chi-square test of samples
against a law given as a mapping."""
from __future__ import annotations

from collections.abc import Sequence

import mpmath
import numpy as np
from scipy import stats


def search_law(stat: Sequence[int], t: mpmath.mpf) -> dict[int, mpmath.mpf]:
    """P(the search ends at index i) for the statistic ``stat[0..W]``: halvings of ``[0, W]``, going left at
    ``mid`` when ``stat[mid] + Y >= 0``, ``Y`` discrete Laplace with ``P(y) ~ exp(-|y| / t)``."""
    a = mpmath.exp(-1 / mpmath.mpf(t))

    def p_at_least(k: int) -> mpmath.mpf:  # P(Y >= k)
        return a ** k / (1 + a) if k >= 1 else 1 - a ** (1 - k) / (1 + a)

    law: dict[int, mpmath.mpf] = {}

    def walk(low: int, high: int, p: mpmath.mpf) -> None:
        if low == high:
            law[low] = law.get(low, 0) + p
            return
        mid = (low + high) // 2
        left = p_at_least(-int(stat[mid]))
        walk(low, mid, p * left)
        walk(mid + 1, high, p * (1 - left))

    walk(0, len(stat) - 1, mpmath.mpf(1))
    return law


def chi_square_p(indices: np.ndarray, law: dict[int, mpmath.mpf]) -> float:
    """p-value of the chi-square test of ``indices`` against ``law``, thin bins merged into one."""
    n = indices.size
    keys = sorted(law)
    probs = np.array([float(law[k]) for k in keys])
    thick = probs * n >= 20
    counts = {k: 0 for k in keys}
    for v, c in zip(*np.unique(indices, return_counts=True)):
        counts[int(v)] = int(c)
    obs = [counts[k] for k, t in zip(keys, thick) if t]
    exp = [p * n for p, t in zip(probs, thick) if t]
    rest_obs, rest_exp = n - sum(obs), n - sum(exp)
    if rest_exp >= 5:
        obs.append(rest_obs)
        exp.append(rest_exp)
    stat = sum((o - e) ** 2 / e for o, e in zip(obs, exp))
    return float(stats.chi2.sf(stat, len(obs) - 1))
