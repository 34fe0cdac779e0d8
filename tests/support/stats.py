"""Statistical tests at one fixed false-alarm rate, so that a correct sampler never fails a run."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from scipy import stats

#: The false-alarm rate of every statistical test of the suite.
ALPHA = 1e-6


def assert_ks(samples: Any, cdf: Callable[[np.ndarray], np.ndarray] | str) -> None:
    """Kolmogorov-Smirnov test of ``samples`` against ``cdf`` at ALPHA."""
    res = stats.kstest(np.asarray(samples, dtype=float), cdf)
    assert res.pvalue > ALPHA, f"KS rejects at alpha={ALPHA:g}: D={res.statistic:.3g} p={res.pvalue:.3g}"


def assert_binomial(count: int, n: int, p: float) -> None:
    """Two-sided exact binomial test at ALPHA of ``count`` successes in ``n`` trials of probability ``p``."""
    pv = stats.binomtest(int(count), int(n), p).pvalue
    assert pv > ALPHA, f"count {count} of {n}, expected p={p:.3g}: p-value {pv:.3g}"


def chi_square(samples: np.ndarray, edges: Sequence[int], probs: np.ndarray) -> tuple[float, float]:
    """(statistic, critical value at ALPHA) of integer ``samples`` binned as (-inf, e0], (e0, e1], ...,
    (e_last, inf) against the bin probabilities ``probs``."""
    idx = np.searchsorted(np.asarray(edges, dtype=np.int64), samples, side="left")
    counts = np.bincount(idx, minlength=len(edges) + 1)
    expected = probs * samples.size
    assert abs(probs.sum() - 1) < 1e-9
    assert expected.min() >= 5, "bins too thin for the chi-square approximation"
    stat = float(((counts - expected) ** 2 / expected).sum())
    return stat, float(stats.chi2.isf(ALPHA, len(probs) - 1))
