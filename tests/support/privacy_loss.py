"""A lower confidence bound on the privacy loss between two samples of a mechanism's output (neighbouring
inputs), over threshold events, in the spirit of Google's stochastic tester (Google DP team)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from .stats import ALPHA


def clopper_pearson(k: int, n: int, a: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds (lower, upper) at level 1 - a each."""
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.isf(a, k + 1, n - k) if k < n else 1.0
    return lo, hi


def estimated_epsilon(a: np.ndarray, b: np.ndarray, thresholds: Sequence[float], family: int) -> float:
    """max ln(P_lo(E) / Q_hi(E)) over the events {v <= c}, {v >= c} in both directions, each bound at level
    1 - ALPHA / (2 family) (Bonferroni over the ``family`` comparisons of the whole test)."""
    level = ALPHA / (2 * family)
    best = -np.inf
    for c in thresholds:
        for ev in (lambda v: v <= c, lambda v: v >= c):
            ka, kb = int(ev(a).sum()), int(ev(b).sum())
            for (k1, n1), (k2, n2) in (((ka, a.size), (kb, b.size)), ((kb, b.size), (ka, a.size))):
                p_lo, _ = clopper_pearson(k1, n1, level)
                _, q_hi = clopper_pearson(k2, n2, level)
                if p_lo > 0:
                    best = max(best, float(np.log(p_lo / q_hi)))
    return best
