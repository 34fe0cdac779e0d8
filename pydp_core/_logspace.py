"""Log-space arithmetic on numpy arrays, for the quadratures and certificates built on the normal law.

Private helpers with no argument checks (their callers check): log(1 - e^x) (:func:`log1mexp`),
log Phi(x) by the C++ core (:func:`log_ndtr`, the unchecked array form of :func:`pydp_core.special.log_ndtr`),
log(Phi(u) - Phi(l)) without cancellation however close u and l are (:func:`log_ndtr_diff`), and
log-sum-exp along rows (:func:`lse_rows`) and over groups of rows (:func:`lse_groups`). Tested through the
manifold profiles against 50-digit mpmath references (``tests/manifolds/``).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special as sps

from ._core import special as _csp

__all__ = ["log1mexp", "log_ndtr", "log_ndtr_diff", "lse_rows", "lse_groups"]


def log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0 (-inf at 0)."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x > -math.log(2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[small] = np.log(-np.expm1(x[small]))
        out[~small] = np.log1p(-np.exp(x[~small]))
    return out


def log_ndtr(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=float)
    return _csp.log_ndtr(x)


_GL16_X, _GL16_W = np.polynomial.legendre.leggauss(16)


def log_ndtr_diff(u: np.ndarray, l: np.ndarray, width: np.ndarray | None = None) -> np.ndarray:
    """log(Phi(u) - Phi(l)) for u >= l, without cancellation anywhere (-inf when u <= l); ``width``, if
    given, is u - l known more accurately than the difference of the rounded u and l.

    Narrow intervals ((u - l) max(1, |u|, |l|) < 1, where log phi varies by less than about 1 on [l, u])
    by 16-point Gauss-Legendre of phi, which keeps the relative accuracy however close u and l are;
    otherwise a difference of two tails on the same side of 0 (losing at most a digit at that width),
    or for l < 0 < u the complement of the two outer tails or, when those are not small, a sum of erfs.
    """
    u, l = np.broadcast_arrays(np.asarray(u, float), np.asarray(l, float))
    w = np.broadcast_to(u - l if width is None else np.asarray(width, float), u.shape)
    out = np.full(u.shape, -np.inf)
    ok = (u > l) & (w > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = ok & (w * np.maximum(1.0, np.maximum(np.abs(u), np.abs(l))) < 1.0)
    upper = ok & ~narrow & (l >= 0)  # Phi(-l) - Phi(-u)
    lower = ok & ~narrow & (u <= 0)
    mid = ok & ~narrow & ~upper & ~lower
    if narrow.any():
        half = w[narrow][:, None] / 2
        x = (u[narrow][:, None] + l[narrow][:, None]) / 2 + half * _GL16_X
        v = -0.5 * x * x - 0.9189385332046727 + np.log(half * _GL16_W)
        m = np.max(v, axis=1, keepdims=True)
        out[narrow] = np.log(np.sum(np.exp(v - m), axis=1)) + m[:, 0]
    if upper.any():
        a, b = log_ndtr(-l[upper]), log_ndtr(-u[upper])
        out[upper] = a + log1mexp(b - a)
    if lower.any():
        a, b = log_ndtr(u[lower]), log_ndtr(l[lower])
        out[lower] = a + log1mexp(b - a)
    if mid.any():
        tails = np.exp(log_ndtr(l[mid])) + np.exp(log_ndtr(-u[mid]))
        with np.errstate(divide="ignore"):
            erfs = np.log((sps.erf(u[mid] / math.sqrt(2.0)) + sps.erf(-l[mid] / math.sqrt(2.0))) / 2.0)
        out[mid] = np.where(tails < 0.5, np.log1p(-tails), erfs)
    return out


def lse_rows(v: np.ndarray) -> np.ndarray:
    """log of the sum of exp(v) along the last axis (-inf for an empty sum)."""
    m = np.max(v, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.log(np.sum(np.exp(v - m), axis=-1)) + m[..., 0]
    return out


def lse_groups(v: np.ndarray, group: np.ndarray) -> np.ndarray:
    """log of the sum of exp(v) over the rows of v in each group (``group`` sorted, the groups numbered
    0, 1, ... without gaps), -inf for a group whose terms are all -inf."""
    start = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    m = np.maximum.reduceat(np.max(v, axis=1), start)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.add.reduceat(np.sum(np.exp(v - m[group][:, None]), axis=1), start)) + m
