"""Radial laws of the Riemannian Gaussian and Laplace distributions on model spaces.

The distance t = d(footpoint, Y) has density proportional to exp(-t^2 / (2 sigma^2)) (or exp(-t / sigma))
times S(t)^(d-1), with S = sin (sphere), sinh (hyperbolic space) or t (Euclidean space).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .spaces import Manifold

# On the circle t is a folded normal on [0, pi] (S = 1).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(32)
# Gauss-Legendre in theta after t = lo + (hi - lo)(1 - cos theta)/2: clusters nodes at both ends so that
# square-root kinks at the piece boundaries do not slow the convergence.
_TH = (_GL_X + 1.0) * (math.pi / 2.0)
_U = (1.0 - np.cos(_TH)) / 2.0
_WU = _GL_W * (math.pi / 2.0) * np.sin(_TH) / 2.0
_LOG_WU = np.log(_WU)


def quadrature_nodes(bps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights on the pieces between sorted breakpoints (last axis)."""
    lo = bps[..., :-1, None]
    width = (bps[..., 1:] - bps[..., :-1])[..., None]
    t = lo + width * _U
    w = width * _WU
    shape = t.shape[:-2] + (t.shape[-2] * t.shape[-1],)
    return t.reshape(shape), w.reshape(shape)


def log_radial_factor(kind: int, t: np.ndarray) -> np.ndarray:
    """log S(t): S = sin (kind 0), sinh (1, without overflow), t (2), 1 (3, the circle)."""
    with np.errstate(divide="ignore"):
        if kind == 0:
            result: np.ndarray = np.log(np.sin(t))
            return result
        if kind == 1:
            # log sinh t without overflow
            return t + np.log(-np.expm1(-2.0 * t)) - math.log(2.0)
        if kind == 2:
            log_t: np.ndarray = np.log(t)
            return log_t
    return np.zeros_like(t)


def radial_factor(kind: int, t: np.ndarray) -> np.ndarray:
    """S(t): sin (kind 0), sinh (1), t (otherwise)."""
    return np.sin(t) if kind == 0 else np.sinh(t) if kind == 1 else t


class RadialLaw:
    """The law of t = d(footpoint, Y): log density, normaliser, mode, scale, CDF."""

    def __init__(self, manifold: Manifold, sigma: float, laplace: bool) -> None:
        self.manifold = manifold
        self.sigma = sigma
        self.laplace = laplace
        self.kind = int(manifold._radial_kind)  # 0 sin, 1 sinh, 2 t, 3 none: the codes of _core.manifolds.RadialKind
        self.k = manifold.dim - 1
        if self.laplace and self.kind == 1 and self.k > 0 and not (1.0 / sigma > self.k):
            raise ValueError(
                f"the Riemannian Laplace on {manifold!r} needs sigma < 1/(d-1) = {1.0 / self.k} to be normalisable"
            )
        self.mode = self._find_mode()
        if self.kind == 1 and self.mode > 300.0:
            raise ValueError(
                f"sigma = {sigma} is too large for {manifold!r}: the radial law sits near t = {self.mode:.3g}, "
                "beyond the double range of sinh used here (sigma^2 (d - 1) must stay below about 300)"
            )
        curv = -self._dlogf2(self.mode) if self.mode > 0 else 0.0
        self.scale = 1.0 / math.sqrt(curv) if curv > 0 else (sigma if not laplace else sigma)
        self.lmax = float(self.logf(np.array(self.mode)))
        if self.kind in (0, 3):
            self.tmax = math.pi
        else:
            self.tmax = self.mode + 60.0 * self.scale + (40.0 * sigma if laplace else 0.0) + 1.0
        t, w = self._grid()
        self._log_norm_t = float(self.lmax + np.log(np.sum(np.exp(self.logf(t) - self.lmax) * w)))

    def logf(self, t: ArrayLike) -> np.ndarray:
        """log of the unnormalised radial density."""
        t = np.asarray(t, dtype=float)
        base = -t / self.sigma if self.laplace else -t * t / (2.0 * self.sigma**2)
        if self.k == 0:
            return base
        result: np.ndarray = base + self.k * log_radial_factor(self.kind, t)
        return result

    def _dlogf(self, t: float) -> float:
        base = -1.0 / self.sigma if self.laplace else -t / self.sigma**2
        if self.k == 0:
            return base
        if self.kind == 0:
            return base + self.k / math.tan(t)
        if self.kind == 1:
            return base + self.k / math.tanh(t)
        return base + self.k / t

    def _dlogf2(self, t: float) -> float:
        base = 0.0 if self.laplace else -1.0 / self.sigma**2
        if self.k == 0:
            return base
        if self.kind == 0:
            return base - self.k / math.sin(t) ** 2
        if self.kind == 1:
            return base - (self.k / math.sinh(t) ** 2 if t < 300 else 0.0)
        return base - self.k / t**2

    def _find_mode(self) -> float:
        if self.k == 0:
            return 0.0
        hi = math.pi if self.kind == 0 else 1.0
        if self.kind != 0:
            while self._dlogf(hi) > 0:
                hi *= 2.0
        lo = 0.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if self._dlogf(mid) > 0:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def _breakpoints(self) -> list[float]:
        pts = [0.0, self.tmax, self.mode]
        for j in (0.5, 1, 2, 3, 5, 8, 13, 21, 34):
            pts += [self.mode - j * self.scale, self.mode + j * self.scale]
        return pts

    def _grid(self) -> tuple[np.ndarray, np.ndarray]:
        b = np.unique(np.clip(np.array(self._breakpoints()), 0.0, self.tmax))
        return quadrature_nodes(b)

    @property
    def log_normalizer(self) -> float:
        """log of the integral of the unnormalised density exp(-d^2/2 sigma^2) over the manifold."""
        d = self.manifold.dim
        log_area = math.log(2.0) if self.kind == 3 else math.log(2.0) + d / 2.0 * math.log(math.pi) - math.lgamma(d / 2.0)
        return log_area + self._log_norm_t

    def cdf(self, t: ArrayLike) -> np.ndarray:
        """P(d(footpoint, Y) <= t), by quadrature on [0, t] split at the same breakpoints."""
        points = np.clip(np.asarray(t, dtype=float), 0.0, self.tmax)
        flat = points.reshape(-1)
        b = np.unique(np.clip(np.array(self._breakpoints()), 0.0, self.tmax))
        # mass of every piece, then the partial piece up to t
        tt, ww = quadrature_nodes(b)
        dens = np.exp(self.logf(tt) - self.lmax) * ww
        piece = dens.reshape(len(b) - 1, -1).sum(axis=1)
        cum = np.concatenate([[0.0], np.cumsum(piece)])
        total = cum[-1]
        idx = np.clip(np.searchsorted(b, flat, side="right") - 1, 0, len(b) - 2)
        lo = b[idx]
        pb = np.stack([lo, flat], axis=-1)
        tp, wp = quadrature_nodes(pb)
        part = np.sum(np.exp(self.logf(tp) - self.lmax) * wp, axis=-1)
        result: np.ndarray = (np.minimum((cum[idx] + part) / total, 1.0)).reshape(points.shape)
        return result

