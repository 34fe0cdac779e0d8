"""Monte Carlo estimation of mu with a confidence interval (Jiang et al. 2023, Algorithm 2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy import special as sps

from .. import _core
from .._validation import check_positive_scalar
from .privacy import mu_for_log_delta
from .sampling import RiemannianGaussian, as_generator
from .spaces import Circle, Manifold, Sphere

_mf = _core.manifolds




@dataclass(frozen=True)
class MonteCarloMu:
    """Result of Algorithm 2: the paper's estimate and a confidence interval from the m batches."""

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
        return (self.ci_low, self.ci_high)





# ======================================================================================================
# mu: exact and Monte Carlo (Algorithm 2)
# ======================================================================================================
def monte_carlo_mu(manifold: Manifold, sigma: float, D: float, n: int, m: int, n_eps: int, eps_max: Optional[float],
           rng: Any, confidence: float, progress: Optional[bool], threads: Optional[int]) -> MonteCarloMu:
    if eps_max is None:
        if isinstance(manifold, (Circle, Sphere)):
            eps_max = D * (2 * math.pi - D) / (2 * sigma**2)  # the largest privacy loss: delta = 0 beyond
        else:
            eps_max = max(10.0, 5.0 * D / sigma + D * D / (2 * sigma**2))  # the paper's choice on R
    else:
        eps_max = check_positive_scalar(eps_max, "eps_max")
    r = as_generator(rng)
    if threads is not None:
        r = r.with_threads(threads)
    eta, eta2 = manifold._reference_pair(D)
    g1 = RiemannianGaussian(manifold, eta, sigma)
    g2 = RiemannianGaussian(manifold, eta2, sigma)
    # eps = 0 is added to the paper's grid k * eps_max / n_eps, k = 1..n_eps (the circle's supremum is there)
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
                F[j0:j1] = _mf.mc_fractions(np.ascontiguousarray(loss.reshape(j1 - j0, n)), thresholds)
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
