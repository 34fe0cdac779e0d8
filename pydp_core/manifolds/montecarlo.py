"""Monte Carlo estimation of mu with a confidence interval (Jiang et al. 2023, Algorithm 2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special as sps

from .._core import manifolds as _cman
from .._validation import check_positive_scalar
from ._gdp import mu_for_log_delta
from .loss import default_eps_max
from .sampling import RiemannianGaussian, as_generator
from .spaces import Manifold


@dataclass(frozen=True)
class MonteCarloMu:
    """The result of Algorithm 2 of Jiang et al. 2023: the estimate of mu and a confidence interval.

    Returned by ``gdp_mu(..., method="monte_carlo")`` (the interval is derived in docs/manifolds.md).

    Parameters
    ----------
    mu : float
        The paper's estimate: the maximum over the epsilon grid of mu_eps at the pooled estimate of delta.
    stderr : float
        Its delta-method standard error at the maximiser.
    ci_low, ci_high : float
        The simultaneous confidence interval for the maximum over the grid (contains ``mu``).
    confidence : float
        Its level.
    n, m, n_eps : int
        Samples per batch, batches and the size of the epsilon grid.
    eps_max : float
        The largest epsilon of the grid.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import manifolds as M
    >>> est = M.gdp_mu(M.Circle(), sigma=1.0, method="monte_carlo", n=200, m=20, n_eps=50, rng=dp.Random(1))
    >>> est.n, est.m, est.n_eps, est.confidence
    (200, 20, 50, 0.95)
    >>> lo, hi = est.confidence_interval
    >>> lo <= est.mu <= hi
    True
    """

    mu: float
    stderr: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int
    m: int
    n_eps: int
    eps_max: float

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)``."""
        return (self.ci_low, self.ci_high)


def monte_carlo_mu(manifold: Manifold, sigma: float, D: float, n: int, m: int, n_eps: int, eps_max: float | None,
                   rng: Any, confidence: float, progress: bool | None, threads: int | None) -> MonteCarloMu:
    """Algorithm 2 with a confidence interval; the arguments are checked by :func:`gdp_mu`."""
    eps_max = default_eps_max(manifold, sigma, D) if eps_max is None else check_positive_scalar(eps_max, "eps_max")
    r = as_generator(rng)
    if threads is not None:
        r = r.with_threads(threads)
    eta, eta2 = manifold._reference_pair(D)
    g1 = RiemannianGaussian(manifold, eta, sigma)
    g2 = RiemannianGaussian(manifold, eta2, sigma)
    # eps = 0 is added to Jiang et al.'s grid k * eps_max / n_eps, k = 1..n_eps (the circle's supremum is there)
    eps = np.arange(0, n_eps + 1) * (eps_max / n_eps)
    thresholds = np.ascontiguousarray(2.0 * sigma**2 * eps)
    F1 = np.empty((m, n_eps + 1))
    F2 = np.empty((m, n_eps + 1))
    group = max(1, min(m, 200_000 // max(n, 1)))
    bar = None
    if progress or (progress is None and n * m >= 5_000_000):
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=m, desc="Algorithm 2 batches", leave=False)
        except ImportError:  # optional dependency: no bar
            bar = None
    try:
        for j0 in range(0, m, group):
            j1 = min(m, j0 + group)
            k = (j1 - j0) * n
            for g, F in ((g1, F1), (g2, F2)):
                y = g.sample(k, rng=r)
                loss = np.asarray(manifold.dist(eta2, y)) ** 2 - np.asarray(manifold.dist(eta, y)) ** 2
                F[j0:j1] = _cman.mc_fractions(np.ascontiguousarray(loss.reshape(j1 - j0, n)), thresholds)
            if bar is not None:
                bar.update(j1 - j0)
    finally:
        if bar is not None:
            bar.close()
    w = np.exp(eps)
    L = F1 - w * F2  # l_eps^(j) of each batch
    lbar = L.mean(axis=0)
    N = n * m
    se_batch = L.std(axis=0, ddof=1) / math.sqrt(m) if m > 1 else np.zeros_like(lbar)
    # binomial floor (one pseudo-count in each term) so that rare events do not give a zero-width band
    p1, p2 = F1.mean(axis=0), F2.mean(axis=0)
    se_floor = np.sqrt((p1 * (1 - p1) + w * w * p2 * (1 - p2) + 1.0 / N) / N)
    se = np.maximum(se_batch, se_floor)

    def mu_curve(l: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            ld = np.where(l > 0, np.log(np.maximum(l, 1e-300)), -np.inf)
        return mu_for_log_delta(eps, ld)

    mus = mu_curve(lbar)
    i = int(np.argmax(mus))
    mu_hat = float(mus[i])
    # simultaneous band over eps: Gaussian multiplier bootstrap of the batch means
    B = 400
    mult = np.asarray(r.normal(size=(B, m)), float)
    dev = (L - lbar) / m
    tmax = np.max(np.abs(mult @ dev) / se, axis=1)
    z = float(np.quantile(tmax, confidence))
    z = max(z, float(sps.ndtri(0.5 + confidence / 2)))
    lo_l, hi_l = lbar - z * se, lbar + z * se
    # exact binomial (Clopper-Pearson) bounds on the pooled counts, Bonferroni over the eps grid: batch
    # means of rare events are skewed, so the normal band alone can be too narrow at large eps
    a = (1.0 - confidence) / (2.0 * len(eps))
    k1 = np.rint(p1 * N)
    k2 = np.rint(p2 * N)
    with np.errstate(divide="ignore", invalid="ignore"):
        p1_lo = np.where(k1 > 0, sps.betaincinv(k1, N - k1 + 1, a), 0.0)
        p1_hi = np.where(k1 < N, sps.betaincinv(k1 + 1, N - k1, 1 - a), 1.0)
        p2_hi = np.where(k2 < N, sps.betaincinv(k2 + 1, N - k2, 1 - a), 1.0)
    # lower end: widened by the exact bounds (the estimator's bias is upward, Figure 1); upper end: also
    # capped by the exact upper bound of P1(L >= eps), since delta(eps) <= P1(L >= eps)
    lo_l = np.minimum(lo_l, p1_lo - w * p2_hi)
    hi_l = np.minimum(hi_l, p1_hi)
    lo = float(np.max(mu_curve(lo_l)))
    hi = float(np.max(mu_curve(np.minimum(hi_l, 1.0 - 1e-16))))
    # stderr of the estimate by the delta method at the maximiser: d mu / d delta = 1 / phi(a)
    if mu_hat > 0:
        a = -eps[i] / mu_hat + mu_hat / 2
        stderr = float(se[i] / (math.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)))
    else:
        stderr = float("nan")
    return MonteCarloMu(mu=mu_hat, stderr=stderr, ci_low=min(lo, mu_hat), ci_high=max(hi, mu_hat),
                        confidence=confidence, n=n, m=m, n_eps=n_eps, eps_max=float(eps_max))
