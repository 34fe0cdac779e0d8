"""The Gaussian-DP tradeoff in the form the manifold computations use: delta_mu(eps), 1 - delta_mu(eps) and
their inverses in mu.

mu-GDP holds iff delta(eps) <= delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) for every
eps >= 0 (Dong, Roth and Su 2022). delta_mu itself is the C++ GDP profile (``pydp_core._core.accounting``,
shared with ``pydp_core.accounting``); the complement 1 - delta_mu (a sum, accurate where delta is near 1)
and the inverses in mu (the accounting layer inverts in eps) are here, the only places they are needed.
They belong beside the GDP profile of the accounting layer; they sit in manifolds until that module is
settled.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._core import accounting as _acc
from .._logspace import log_ndtr


def _log_delta_mu(eps: ArrayLike, mu: ArrayLike) -> np.ndarray:
    """log delta_mu(eps) = log[Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)], broadcast over eps and mu
    (eps >= 0, mu >= 0, neither NaN): the GDP profile of the C++ core (``pydp_core._core.accounting``,
    ``csrc/include/pydp/accounting/conversions.hpp``), formed without cancellation (to a few ulp of
    log delta against 80-digit references, tiny mu and deep tails included); -inf where delta = 0
    (mu = 0, eps = inf)."""
    e, m = np.broadcast_arrays(np.asarray(eps, float), np.asarray(mu, float))
    return _acc.gdp_log_delta(np.ascontiguousarray(m), np.ascontiguousarray(e), 1)


def _log_cdelta_mu(eps: np.ndarray, mu: float | np.ndarray) -> np.ndarray:
    """log(1 - delta_mu(eps)) = log(Phi(-a) + e^eps Phi(b)), a, b = -eps/mu +- mu/2: a sum, no cancellation."""
    a = -eps / mu + mu / 2.0
    result: np.ndarray = np.logaddexp(log_ndtr(-a), eps + log_ndtr(-eps / mu - mu / 2.0))
    return result


def mu_for_log_delta(eps: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
    """The mu with delta_mu(eps) = delta: safeguarded Newton in log mu (delta_mu increases with mu and
    d delta_mu / d mu = phi(-eps/mu + mu/2), since e^eps phi(-eps/mu - mu/2) = phi(-eps/mu + mu/2)).

    The bracket comes from the data: d delta_mu / d mu <= phi(0) gives delta <= mu / sqrt(2 pi), so
    mu >= sqrt(2 pi) delta; the upper end is max(500, 2 sqrt(2 eps) + 40): there eps / mu <= mu / 8, so
    a = -eps/mu + mu/2 >= 15 and e^eps Phi(b) <= phi(a) / |b| <= phi(15), and delta_mu(eps) rounds to 1,
    above every delta below 1 in double.
    """
    eps = np.atleast_1d(np.asarray(eps, float)).copy()
    log_delta = np.broadcast_to(np.asarray(log_delta, float), eps.shape).copy()
    dead = ~(log_delta > -np.inf)
    ld = np.where(dead, -1.0, np.minimum(log_delta, -1e-300))
    lo = ld + 0.5 * math.log(2 * math.pi) - 1e-9
    hi = np.log(np.maximum(500.0, 2.0 * np.sqrt(2.0 * np.maximum(eps, 0.0)) + 40.0))
    x = np.clip(0.0, lo, hi)
    for _it in range(200):
        mu = np.exp(x)
        with np.errstate(divide="ignore", over="ignore"):
            a = -eps / mu + mu / 2.0
        f = _log_delta_mu(eps, mu) - ld
        lo = np.where(f < 0, x, lo)
        hi = np.where(f < 0, hi, x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a step out of the bracket bisects
            slope = np.exp(x - 0.5 * a * a - 0.9189385332046727 - (f + ld))
            step = np.where(slope > 0, -f / slope, np.nan)
        nx = x + step
        bad = ~((nx > lo) & (nx < hi))
        nx = np.where(bad, 0.5 * (lo + hi), nx)
        done = (np.abs(nx - x) < 1e-15 * np.maximum(1.0, np.abs(x))) | (hi - lo < 1e-15 * np.maximum(1.0, np.abs(x)))
        x = nx
        if done.all():
            break
    return np.where(dead, 0.0, np.exp(x))


def _mu_for_log_cdelta(eps: np.ndarray, log_c: np.ndarray) -> np.ndarray:
    """The mu with 1 - delta_mu(eps) = exp(log_c), for delta near 1 where :func:`mu_for_log_delta` loses the
    digits: bisection in log mu (1 - delta_mu decreases in mu) on [1e-6, max(500, 2 sqrt(2 eps) + 40)],
    the upper end as in :func:`mu_for_log_delta`; NaN where the root is not inside."""
    eps = np.atleast_1d(np.asarray(eps, float))
    log_c = np.broadcast_to(np.asarray(log_c, float), eps.shape)
    lo = np.full(eps.shape, math.log(1e-6))
    hi = np.log(np.maximum(500.0, 2.0 * np.sqrt(2.0 * np.maximum(eps, 0.0)) + 40.0))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inside = (_log_cdelta_mu(eps, np.exp(lo)) >= log_c) & (_log_cdelta_mu(eps, np.exp(hi)) <= log_c)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            above = _log_cdelta_mu(eps, np.exp(mid)) > log_c  # mu too small
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(inside, np.exp(0.5 * (lo + hi)), np.nan)
