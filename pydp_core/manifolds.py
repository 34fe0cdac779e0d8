"""Gaussian differential privacy on Riemannian manifolds (Jiang et al., NeurIPS 2023).

Model spaces of constant curvature, their Riemannian Gaussian (and Laplace) distributions, the exact
privacy parameter mu of the Riemannian Gaussian mechanism, the paper's Monte Carlo Algorithm 2 with a
confidence interval, and the private Frechet mean of Section 5.

Manifolds (all methods batched over leading array dimensions, hot loops in C++):

- :class:`Euclidean` ``(d)``: points of shape ``(..., d)``;
- :class:`Circle` ``()``: points are angles (shape ``(...)``), read modulo 2 pi, returned in [-pi, pi];
- :class:`Sphere` ``(d)``: unit vectors of shape ``(..., d + 1)``; distance 2 atan2(|x - y|, |x + y|);
- :class:`Hyperbolic` ``(d)``: the hyperboloid model, shape ``(..., d + 1)`` with the time coordinate
  first; distances from a cancellation-free form (see ``csrc/include/pydp/manifolds/geometry.hpp``).

The privacy parameter (SPEC-NOTES, section 001): the mechanism is mu-GDP iff delta(eps) <= delta_mu(eps)
for all eps >= 0, delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). On the circle delta(eps)
is the corrected closed form of Corollary 3.2.1; on S^d and H^d (d >= 2) the integrals of Theorem 4.1
reduce by symmetry to one-dimensional integrals of a regularised incomplete beta function, evaluated
here by Gauss-Legendre quadrature between the kinks. mu is the supremum over eps of the mu solving
delta_mu(eps) = delta(eps): a grid over eps, then a bounded Brent refinement of the maximiser.

Randomness: ``rng=None`` draws from a fresh :class:`pydp_core.Random` (ChaCha20 keyed from the operating
system's entropy: the choice for releases); a seeded ``pydp_core.Random(seed)`` or a
``numpy.random.Generator`` (which keys a ChaCha20 stream, :func:`pydp_core.as_random`) gives reproducible
simulations, not for releases. Samplers run in C++ in fixed chunks: the output for a seed does not depend
on the number of threads.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from scipy import optimize, special as sps

from . import _core
from ._validation import as_float_array, check_positive

__all__ = [
    "Manifold",
    "Euclidean",
    "Circle",
    "Sphere",
    "Hyperbolic",
    "RiemannianGaussian",
    "RiemannianLaplace",
    "gdp_mu",
    "gdp_sigma",
    "privacy_profile",
    "MonteCarloMu",
    "frechet_mean",
    "frechet_mean_sensitivity",
    "private_frechet_mean",
    "PrivateFrechetMean",
    "epsilon_to_mu",
    "mu_to_epsilon",
]

_mf = _core.manifolds
_SPHERE, _HYPERBOLIC = 0, 1
_ATOL = 1e-8


def _real_array(x: Any, name: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}")
    return int(value)


def _check_scalar_positive(value: Any, name: str) -> float:
    arr = check_positive(value, name)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar")
    return float(arr)


# ======================================================================================================
# Manifolds
# ======================================================================================================
class Manifold:
    """A complete Riemannian manifold of constant curvature (the model spaces)."""

    dim: int
    curvature: float
    injectivity_radius: float
    atol: float = _ATOL

    #: number of coordinates of one point (0 for the circle's angles)
    point_size: int

    # -- shape handling ----------------------------------------------------------------------------
    def _pair(self, a: Any, b: Any, na: str, nb: str) -> tuple[np.ndarray, np.ndarray, tuple]:
        # embedded points are checked row by row in C++ (NaN and inf fail the manifold test there)
        conv = as_float_array if isinstance(self, _Embedded) else _real_array
        a = conv(a, na)
        b = conv(b, nb)
        k = self.point_size
        if k:
            for arr, name in ((a, na), (b, nb)):
                if arr.ndim == 0 or arr.shape[-1] != k:
                    raise ValueError(f"{name} must have shape (..., {k}) for {self!r}, got {arr.shape}")
        try:
            batch = np.broadcast_shapes(a.shape[:-1] if k else a.shape, b.shape[:-1] if k else b.shape)
        except ValueError:
            raise ValueError(f"{na} and {nb} cannot be broadcast together: {a.shape} and {b.shape}") from None
        full = batch + ((k,) if k else ())
        a = np.ascontiguousarray(np.broadcast_to(a, full))
        b = np.ascontiguousarray(np.broadcast_to(b, full))
        return a, b, batch

    def check_point(self, x: Any, name: str = "x") -> np.ndarray:
        """``x`` as a float array of points, or ValueError if it is not on the manifold (within ``atol``)."""
        x = _real_array(x, name)
        self.dist(x, x)  # validates shape and manifold membership
        return x

    def dist(self, x, y):
        """Geodesic distance, batched over leading dimensions (numpy broadcasting)."""
        raise NotImplementedError

    def exp(self, p, v):
        """Exponential map exp_p(v), batched."""
        raise NotImplementedError

    def log(self, p, q):
        """Logarithm map log_p(q), batched (the inverse of exp inside the injectivity radius)."""
        raise NotImplementedError

    # -- internals used by the distributions --------------------------------------------------------
    _geo: int = -1  # kernel code for the samplers: 0 sphere, 1 hyperbolic, 2 euclidean, 3 circle
    _radial_kind: int = 0  # 0: sin, 1: sinh, 2: t (Euclidean), 3: none (circle)
    _radial_max: float = math.inf

    def _tangent_basis(self, p: np.ndarray) -> np.ndarray:
        """An orthonormal basis of T_p M as the columns of a (point_size, dim) array."""
        raise NotImplementedError

    def _reference_pair(self, sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
        """Two points at distance ``sensitivity`` (the paper's eta, eta')."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.dim == self.dim  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dim))


def _scalar_out(arr: np.ndarray, batch: tuple):
    out = arr.reshape(batch)
    return float(out) if batch == () else out


class Euclidean(Manifold):
    """R^d with the Euclidean metric (curvature 0, infinite injectivity radius)."""

    curvature = 0.0
    injectivity_radius = math.inf
    _geo = 2
    _radial_kind = 2

    def __init__(self, d: int = 1) -> None:
        self.dim = _check_int(d, "d", 1)
        self.point_size = self.dim

    def __repr__(self) -> str:
        return f"Euclidean({self.dim})"

    def dist(self, x, y):
        x, y, batch = self._pair(x, y, "x", "y")
        return _scalar_out(np.sqrt(np.sum((x - y) ** 2, axis=-1)), batch)

    def exp(self, p, v):
        p, v, batch = self._pair(p, v, "p", "v")
        return p + v

    def log(self, p, q):
        p, q, batch = self._pair(p, q, "p", "q")
        return q - p

    def _tangent_basis(self, p):
        return np.eye(self.dim)

    def _reference_pair(self, sensitivity):
        a = np.zeros(self.dim)
        b = a.copy()
        b[0] = sensitivity
        return a, b


class Circle(Manifold):
    """The unit circle S^1, points given as angles (radians, any real, read modulo 2 pi)."""

    dim = 1
    curvature = 0.0  # a one-dimensional manifold is flat
    injectivity_radius = math.pi
    point_size = 0
    _geo = 3
    _radial_kind = 3
    _radial_max = math.pi

    def __repr__(self) -> str:
        return "Circle()"

    def dist(self, x, y):
        """Arc length in [0, pi]; the difference is reduced modulo 2 pi without losing digits."""
        x, y, batch = self._pair(x, y, "x", "y")
        return _scalar_out(_mf.circle_dist(x.reshape(-1), y.reshape(-1)), batch)

    def exp(self, p, v):
        p, v, batch = self._pair(p, v, "p", "v")
        return _scalar_out(_mf.wrap_angle((p + v).reshape(-1)), batch)

    def log(self, p, q):
        """The signed arc from p to q in [-pi, pi]."""
        p, q, batch = self._pair(p, q, "p", "q")
        return _scalar_out(_mf.wrap_angle((q - p).reshape(-1)), batch)

    def _tangent_basis(self, p):
        return np.ones((1, 1))

    def _reference_pair(self, sensitivity):
        return np.array(0.0), np.array(float(sensitivity))


class _Embedded(Manifold):
    _kernel: int

    def __init__(self, d: int = 2, atol: float = _ATOL) -> None:
        self.dim = _check_int(d, "d", 1)
        self.point_size = self.dim + 1
        self.atol = _check_scalar_positive(atol, "atol")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dim})"

    def dist(self, x, y):
        x, y, batch = self._pair(x, y, "x", "y")
        k = self.point_size
        return _scalar_out(_mf.dist(self._kernel, x.reshape(-1, k), y.reshape(-1, k), self.atol), batch)

    def _explog(self, which: int, p, v, names):
        p, v, batch = self._pair(p, v, *names)
        k = self.point_size
        out = _mf.exp_log(self._kernel, which, p.reshape(-1, k), v.reshape(-1, k), self.atol)
        return out.reshape(batch + (k,))

    def _reference_pair(self, sensitivity):
        # the first basis point and the point at distance `sensitivity` along the first axis
        a = np.zeros(self.point_size)
        a[0] = 1.0
        b = np.zeros(self.point_size)
        b[0], b[1] = self._trig[0](sensitivity), self._trig[1](sensitivity)
        return a, b

    def exp(self, p, v):
        return self._explog(0, p, v, ("p", "v"))

    def log(self, p, q):
        return self._explog(1, p, q, ("p", "q"))


class Sphere(_Embedded):
    """The unit sphere S^d in R^(d+1) (curvature 1, injectivity radius pi)."""

    curvature = 1.0
    injectivity_radius = math.pi
    _kernel = _SPHERE
    _geo = 0
    _radial_kind = 0
    _radial_max = math.pi
    _trig = (math.cos, math.sin)

    def _tangent_basis(self, p):
        # complete p to an orthonormal basis: QR of [p, I]
        q, _ = np.linalg.qr(np.column_stack([p, np.eye(self.point_size)]))
        basis = q[:, 1 : self.point_size]
        return np.ascontiguousarray(basis - np.outer(p, p @ basis))


class Hyperbolic(_Embedded):
    """Hyperbolic space H^d, hyperboloid model in R^(d+1) (time coordinate first, curvature -1)."""

    curvature = -1.0
    injectivity_radius = math.inf
    _kernel = _HYPERBOLIC
    _geo = 1
    _radial_kind = 1
    _trig = (math.cosh, math.sinh)

    def _tangent_basis(self, p):
        # Lorentz boost taking the origin (1, 0, ..., 0) to p; its spatial columns are orthonormal at p.
        p0, ps = p[0], p[1:]
        basis = np.empty((self.point_size, self.dim))
        basis[0] = ps
        basis[1:] = np.eye(self.dim) + np.outer(ps, ps) / (1.0 + p0)
        return basis

    def origin(self) -> np.ndarray:
        """The point (1, 0, ..., 0)."""
        o = np.zeros(self.point_size)
        o[0] = 1.0
        return o


def _check_manifold(manifold: Any) -> Manifold:
    if not isinstance(manifold, Manifold):
        raise TypeError(
            "manifold must be Euclidean(d), Circle(), Sphere(d) or Hyperbolic(d), "
            f"got {type(manifold).__name__}"
        )
    return manifold


# ======================================================================================================
# Radial laws: the distance t = d(footpoint, Y) of a Riemannian Gaussian or Laplace on a model space
# has density proportional to exp(-t^2 / (2 sigma^2)) (or exp(-t / sigma)) times S(t)^(d-1), with
# S = sin (sphere, t <= pi), sinh (hyperbolic), t (Euclidean); on the circle t is a folded normal on [0, pi].
# ======================================================================================================
_GL_X, _GL_W = np.polynomial.legendre.leggauss(32)
# Gauss-Legendre in theta after t = lo + (hi - lo)(1 - cos theta)/2: clusters nodes at both ends so that
# square-root kinks at the piece boundaries do not slow the convergence.
_TH = (_GL_X + 1.0) * (math.pi / 2.0)
_U = (1.0 - np.cos(_TH)) / 2.0
_WU = _GL_W * (math.pi / 2.0) * np.sin(_TH) / 2.0


def _nodes(bps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights on the pieces between sorted breakpoints (last axis)."""
    lo = bps[..., :-1, None]
    width = (bps[..., 1:] - bps[..., :-1])[..., None]
    t = lo + width * _U
    w = width * _WU
    shape = t.shape[:-2] + (t.shape[-2] * t.shape[-1],)
    return t.reshape(shape), w.reshape(shape)


def _log_S(kind: int, t: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        if kind == 0:
            return np.log(np.sin(t))
        if kind == 1:
            # log sinh t without overflow
            return t + np.log(-np.expm1(-2.0 * t)) - math.log(2.0)
        if kind == 2:
            return np.log(t)
    return np.zeros_like(t)


def _S(kind: int, t):
    return np.sin(t) if kind == 0 else np.sinh(t) if kind == 1 else t


class _RadialLaw:
    """The law of t = d(footpoint, Y): log density, normaliser, mode, scale, CDF."""

    def __init__(self, manifold: Manifold, sigma: float, laplace: bool) -> None:
        self.manifold = manifold
        self.sigma = sigma
        self.laplace = laplace
        self.kind = manifold._radial_kind
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

    # log of the unnormalised radial density
    def logf(self, t):
        t = np.asarray(t, dtype=float)
        base = -t / self.sigma if self.laplace else -t * t / (2.0 * self.sigma**2)
        if self.k == 0:
            return base
        return base + self.k * _log_S(self.kind, t)

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
        return _nodes(b)

    @property
    def log_normalizer(self) -> float:
        """log of the integral of the unnormalised density exp(-d^2/2 sigma^2) over the manifold."""
        d = self.manifold.dim
        if self.kind == 3:
            log_area = math.log(2.0)
        else:
            log_area = math.log(2.0) + (d / 2.0) * math.log(math.pi) - math.lgamma(d / 2.0)
        return log_area + self._log_norm_t

    def cdf(self, t) -> np.ndarray:
        """P(d(footpoint, Y) <= t), by quadrature on [0, t] split at the same breakpoints."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.tmax)
        flat = t.reshape(-1)
        b = np.unique(np.clip(np.array(self._breakpoints()), 0.0, self.tmax))
        # mass of every piece, then the partial piece up to t
        tt, ww = _nodes(b)
        dens = np.exp(self.logf(tt) - self.lmax) * ww
        piece = dens.reshape(len(b) - 1, -1).sum(axis=1)
        cum = np.concatenate([[0.0], np.cumsum(piece)])
        total = cum[-1]
        idx = np.clip(np.searchsorted(b, flat, side="right") - 1, 0, len(b) - 2)
        lo = b[idx]
        pb = np.stack([lo, flat], axis=-1)
        tp, wp = _nodes(pb)
        part = np.sum(np.exp(self.logf(tp) - self.lmax) * wp, axis=-1)
        return (np.minimum((cum[idx] + part) / total, 1.0)).reshape(t.shape)


# ======================================================================================================
# Privacy profiles and mu
# ======================================================================================================
def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0 (-inf at 0)."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x > -math.log(2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[small] = np.log(-np.expm1(x[small]))
        out[~small] = np.log1p(-np.exp(x[~small]))
    return out


def _log_ndtr(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=float)
    return _core.special.log_ndtr(x)


def _log_ndtr_diff(u: np.ndarray, l: np.ndarray) -> np.ndarray:
    """log(Phi(u) - Phi(l)) for u >= l, without cancellation in either tail (-inf when u <= l)."""
    u, l = np.broadcast_arrays(np.asarray(u, float), np.asarray(l, float))
    out = np.full(u.shape, -np.inf)
    ok = u > l
    upper = ok & (l >= 0)  # Phi(-l) - Phi(-u)
    lower = ok & (u <= 0)
    mid = ok & ~upper & ~lower
    if upper.any():
        a, b = _log_ndtr(-l[upper]), _log_ndtr(-u[upper])
        out[upper] = a + _log1mexp(b - a)
    if lower.any():
        a, b = _log_ndtr(u[lower]), _log_ndtr(l[lower])
        out[lower] = a + _log1mexp(b - a)
    if mid.any():
        out[mid] = np.log1p(-(np.exp(_log_ndtr(l[mid])) + np.exp(_log_ndtr(-u[mid]))))
    return out


def _log_delta_mu(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """log delta_mu(eps) = log[Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)]."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, float), np.asarray(mu, float))
    a = _log_ndtr(-eps / mu + mu / 2.0)
    b = _log_ndtr(-eps / mu - mu / 2.0)
    return a + _log1mexp(np.minimum(eps + b - a, 0.0))


def _mu_for_log_delta(eps: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
    """The mu with delta_mu(eps) = delta: safeguarded Newton in log mu (delta_mu increases with mu and
    d delta_mu / d mu = phi(-eps/mu + mu/2), since e^eps phi(-eps/mu - mu/2) = phi(-eps/mu + mu/2))."""
    eps = np.atleast_1d(np.asarray(eps, float)).copy()
    log_delta = np.broadcast_to(np.asarray(log_delta, float), eps.shape).copy()
    dead = ~(log_delta > -np.inf)
    ld = np.where(dead, -1.0, np.minimum(log_delta, -1e-300))
    lo = np.full(eps.shape, math.log(1e-12))
    hi = np.full(eps.shape, math.log(500.0))
    x = np.zeros(eps.shape)
    for it in range(100):
        mu = np.exp(x)
        a = -eps / mu + mu / 2.0
        f = _log_delta_mu(eps, mu) - ld
        lo = np.where(f < 0, x, lo)
        hi = np.where(f < 0, hi, x)
        slope = np.exp(x - 0.5 * a * a - 0.9189385332046727 - (f + ld))
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(slope > 0, -f / slope, np.nan)
        nx = x + step
        bad = ~((nx > lo) & (nx < hi))
        nx = np.where(bad, 0.5 * (lo + hi), nx)
        done = (np.abs(nx - x) < 1e-15 * np.maximum(1.0, np.abs(x))) | (hi - lo < 1e-15)
        x = nx
        if done.all():
            break
    return np.where(dead, 0.0, np.exp(x))


def _circle_log_profile(eps: np.ndarray, sigma: float, D: float) -> np.ndarray:
    """log delta(eps) on S^1, Corollary 3.2.1 as corrected in SPEC-NOTES (-inf beyond eps_max)."""
    pi = math.pi
    eps = np.asarray(eps, float)
    eps_max = D * (2 * pi - D) / (2 * sigma**2)
    live = eps < eps_max
    e = np.where(live, eps, 0.0)
    a = sigma**2 * e / (2 * pi - D) - pi + D / 2
    b = D / 2 - sigma**2 * e / D
    log_c = _log_ndtr_diff(np.array(pi / sigma), np.array(-pi / sigma))
    log_p1 = _log_ndtr_diff(b / sigma, a / sigma) - log_c
    t1 = _log_ndtr_diff((D - np.maximum(a, D - pi)) / sigma, (D - b) / sigma)
    t2 = np.where(a < D - pi, _log_ndtr_diff(np.full(a.shape, pi / sigma), (2 * pi + a - D) / sigma), -np.inf)
    log_p2 = np.logaddexp(t1, t2) - log_c
    with np.errstate(invalid="ignore"):
        out = log_p1 + _log1mexp(np.minimum(e + log_p2 - log_p1, 0.0))
    return np.where(live, out, -np.inf)


def _xfrac(kind: int, t, r, D):
    """x = (1 + c)/2 and 1 - x, c the cosine of the angle at which d(eta2, y) = r (stable product forms;
    on H^d in log space, so that sinh of large distances does not overflow)."""
    A, B, C2, E = (t + D + r) / 2, (t + D - r) / 2, (r + t - D) / 2, (r - t + D) / 2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if kind == 1:
            def ls(u):
                au = np.abs(u)
                return np.sign(u), _log_S(1, au)
            den = _log_S(1, np.asarray(t, float)) + float(_log_S(1, np.array(D)))
            sa, la = ls(A)
            sb, lb = ls(B)
            sc, lc = ls(C2)
            se, le = ls(E)
            return sa * sb * np.exp(la + lb - den), sc * se * np.exp(lc + le - den)
        S = lambda u: _S(kind, u)  # noqa: E731
        den = S(t) * S(D)
        return S(A) * S(B) / den, S(C2) * S(E) / den


def _beta_cdf(a: float, x: np.ndarray, xc: np.ndarray) -> np.ndarray:
    """I_x(a, a) with x + xc = 1, clipped to [0, 1]; uses the smaller argument for accuracy."""
    with np.errstate(invalid="ignore"):
        low = np.where(x <= 0.5, sps.betainc(a, a, np.clip(x, 0.0, 1.0)), 1.0 - sps.betainc(a, a, np.clip(xc, 0.0, 1.0)))
    return np.where(x <= 0, 0.0, np.where(xc <= 0, 1.0, low))


def _loss_tails(law: _RadialLaw, D: float, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P1(L > s) and log P1(L < -s) for the privacy loss L = (d2^2 - d1^2)/(2 sigma^2) under eta1.

    t = d(eta1, y) follows the radial law and the angle phi at eta1 between y and eta2 is independent with
    (1 + cos phi)/2 ~ Beta(a, a), a = (d-1)/2; d(eta2, y) > r iff cos phi < c(t, r), so each tail is a
    one-dimensional integral over t of an incomplete beta function. Kinks of the integrand (where
    c = +-1) are quadrature breakpoints.
    """
    kind, sig = law.kind, law.sigma
    a = law.k / 2.0
    s = np.atleast_1d(np.asarray(s, float))
    T = law.tmax
    base = np.unique(np.clip(np.array(law._breakpoints()), 0.0, T))  # zero-width pieces dropped
    q = sig * sig * s[:, None]
    kinks = [D / 2 - q / D, q / D - D / 2, D / 2 + q / D, np.sqrt(2 * q)]
    if kind == 0:
        E = 2 * math.pi - D
        kinks += [E / 2 - q / E, E / 2 + q / E]
    bps = np.concatenate([np.broadcast_to(base, (len(s), len(base)))] + list(kinks), axis=1)
    bps = np.sort(np.clip(bps, 0.0, T), axis=1)
    t, w = _nodes(bps)
    with np.errstate(divide="ignore"):
        lw = law.logf(t) + np.log(w)
    r_up = np.sqrt(t * t + 2 * q)
    x, xc = _xfrac(kind, t, r_up, D)
    p_up = _beta_cdf(a, x, xc)
    r2 = t * t - 2 * q
    r_lo = np.sqrt(np.maximum(r2, 0.0))
    x2, xc2 = _xfrac(kind, t, r_lo, D)
    p_lo = np.where(r2 <= 0, 0.0, _beta_cdf(a, xc2, x2))

    def lse(p):
        with np.errstate(divide="ignore"):
            v = lw + np.log(p)
        m = np.max(v, axis=1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(v - m), axis=1)) + m[:, 0] - law._log_norm_t

    return lse(p_up), lse(p_lo)


def _log_profile(manifold: Manifold, eps: np.ndarray, sigma: float, D: float,
                 law: Optional[_RadialLaw] = None) -> tuple[np.ndarray, np.ndarray]:
    """(log delta(eps), reliable) for the Riemannian Gaussian mechanism on a model space."""
    eps = np.asarray(eps, float)
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return _log_delta_mu(eps, np.full(eps.shape, D / sigma)), np.ones(eps.shape, bool)
    if isinstance(manifold, Circle) or (isinstance(manifold, Sphere) and manifold.dim == 1):
        return _circle_log_profile(eps, sigma, D), np.ones(eps.shape, bool)
    law = law or _RadialLaw(manifold, sigma, laplace=False)
    flat = eps.reshape(-1)
    lu, ll = _loss_tails(law, D, flat)
    with np.errstate(invalid="ignore"):
        ratio = np.where(np.isfinite(lu), flat + ll - lu, -np.inf)  # log e^eps P(L < -eps) / P(L > eps)
        out = np.where(np.isfinite(lu), lu + _log1mexp(np.minimum(ratio, 0.0)), -np.inf)
    # the subtraction keeps about 15 + log10(1 - ratio) digits: flag where fewer than 9 remain
    reliable = ~(ratio > math.log1p(-1e-6)) & np.isfinite(lu)
    if isinstance(manifold, Sphere):
        eps_max = D * (2 * math.pi - D) / (2 * sigma**2)
        out = np.where(flat >= eps_max, -np.inf, out)
        reliable |= flat >= eps_max
    return out.reshape(eps.shape), reliable.reshape(eps.shape)


def _check_sensitivity(manifold: Manifold, sensitivity: Any) -> float:
    D = _check_scalar_positive(sensitivity, "sensitivity")
    if isinstance(manifold, (Circle, Sphere)) and D > math.pi:
        raise ValueError(f"sensitivity must be <= pi on {manifold!r} (no two points are further apart)")
    return D


def privacy_profile(manifold: Manifold, epsilon, sigma, sensitivity=1.0):
    """delta(eps) of the Riemannian Gaussian mechanism N_M(f(D), sigma^2) with the given sensitivity.

    The mechanism is (eps, delta(eps))-DP for each eps and no smaller delta works (Theorem 3.2 / 4.1).
    Exact on R^d (the Gaussian mechanism), closed form on S^1, one-dimensional quadrature on S^d, H^d.
    """
    manifold = _check_manifold(manifold)
    sigma = _check_scalar_positive(sigma, "sigma")
    D = _check_sensitivity(manifold, sensitivity)
    eps = as_float_array(epsilon, "epsilon")
    if np.isnan(eps).any() or (eps < 0).any() or np.isinf(eps).any():
        raise ValueError("epsilon must be finite and >= 0")
    out = np.exp(_log_profile(manifold, eps, sigma, D)[0])
    return float(out) if np.ndim(epsilon) == 0 else out


def _eps_range(manifold: Manifold, sigma: float, D: float) -> float:
    if isinstance(manifold, (Circle, Sphere)):
        return D * (2 * math.pi - D) / (2 * sigma**2)
    return 4.0 * max(10.0, 5.0 * D / sigma + D * D / (2 * sigma**2))


def _mu_exact(manifold: Manifold, sigma: float, D: float) -> float:
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return D / sigma
    law = None if isinstance(manifold, (Circle, Euclidean)) or manifold.dim == 1 else _RadialLaw(manifold, sigma, False)
    emax = _eps_range(manifold, sigma, D)

    def mu_at(e: np.ndarray) -> np.ndarray:
        ld, ok = _log_profile(manifold, e, sigma, D, law)
        mu = _mu_for_log_delta(e, ld)
        # conditioning of mu in log delta: d log delta_mu / d log mu = mu phi(a) / delta_mu. Where it is
        # tiny (delta within rounding of 1) an error of 1e-16 in log delta moves mu visibly: skip those eps.
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            a = -e / mu + mu / 2
            cond = np.exp(np.log(mu) - 0.5 * a * a - 0.9189385332046727 - ld)
        return np.where(ok & (ld > -700.0) & (cond > 1e-6), mu, 0.0)

    # sup over eps: a grid, then zoom on the best point (seven rounds, each keeps 1/3 of the bracket);
    # mu_eps is flat at an interior maximum, so the bracket width enters mu only quadratically.
    grid = np.concatenate([[0.0], emax * np.linspace(0.0, 1.0, 33)[1:-1] ** 2])
    vals = mu_at(grid)
    i = int(np.argmax(vals))
    best = float(vals[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(7):
        pts = np.linspace(lo, hi, 7)
        v = mu_at(pts)
        j = int(np.argmax(v))
        best = max(best, float(v[j]))
        lo, hi = pts[max(j - 1, 0)], pts[min(j + 1, 6)]
    if not (math.isfinite(best) and best > 0.0):
        raise ArithmeticError(f"gdp_mu could not evaluate the privacy profile on {manifold!r} at sigma = {sigma}")
    return best


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
# Distributions
# ======================================================================================================
def _generator(rng: Any):
    from .random import as_random

    return as_random(rng)


def _size_shape(size: Any) -> tuple:
    """numpy-style size: None (one draw), an int or a tuple of ints."""
    if size is None:
        return ()
    if isinstance(size, tuple):
        return tuple(_check_int(k, "size", 0) for k in size)
    return (_check_int(size, "size", 0),)


class _RiemannianRadial:
    _laplace = False

    def __init__(self, manifold: Manifold, footpoint: Any, sigma: Any) -> None:
        self.manifold = _check_manifold(manifold)
        self.sigma = _check_scalar_positive(sigma, "sigma")
        fp = _real_array(footpoint, "footpoint")
        if manifold.point_size == 0:
            if fp.ndim != 0:
                raise ValueError("footpoint must be a single angle on the circle")
            fp = np.array(float(_mf.wrap_angle(fp.reshape(1))[0]))
        else:
            if fp.shape != (manifold.point_size,):
                raise ValueError(f"footpoint must have shape ({manifold.point_size},) for {manifold!r}")
            manifold.dist(fp, fp)  # on the manifold (ValueError otherwise)
            if isinstance(manifold, Sphere):
                fp = fp / np.linalg.norm(fp)
            elif isinstance(manifold, Hyperbolic):
                fp = fp.copy()
                fp[0] = math.sqrt(1.0 + float(fp[1:] @ fp[1:]))
        self.footpoint = fp
        self._law = _RadialLaw(manifold, self.sigma, self._laplace)
        self._basis = np.ascontiguousarray(manifold._tangent_basis(fp), dtype=float)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.manifold!r}, footpoint={self.footpoint.tolist()}, sigma={self.sigma})"

    @property
    def log_normalizer(self) -> float:
        """log Z(sigma) = log of the integral over M of the unnormalised density (footpoint-free)."""
        return self._law.log_normalizer

    def logpdf(self, y):
        """log density with respect to the Riemannian volume."""
        t = np.asarray(self.manifold.dist(self.footpoint, y), float)
        core = -t / self.sigma if self._laplace else -t * t / (2 * self.sigma**2)
        out = core - self.log_normalizer
        return float(out) if out.ndim == 0 else out

    def radial_cdf(self, t):
        """P(d(footpoint, Y) <= t): the exact law of the distance (used by the tests)."""
        return self._law.cdf(t)

    def sample(self, size: Any = None, rng: Any = None):
        """Exact draws: the distance from its radial law (rejection from a tangent-line envelope), a
        uniform tangent direction, then the exponential map. ``size``: None (one point), an int or a
        tuple (numpy convention); points are stacked along the leading axes."""
        shape = _size_shape(size)
        n = int(np.prod(shape)) if shape else 1
        r = _generator(rng)
        law, m = self._law, self.manifold
        out = _mf.sample(m._geo, m._radial_kind, float(law.k), self.sigma, self._laplace, float(law.tmax),
                         float(law.mode), float(law.scale), np.atleast_1d(self.footpoint).astype(float),
                         self._basis, n, r._gen, r._threads or 0)
        return out[0] if size is None else out.reshape(shape + out.shape[1:])

    def sample_mh(self, size: Any = None, rng: Any = None, *, steps: int = 300, proposal_scale: Optional[float] = None):
        """Metropolis-Hastings with an exponential-wrapped Gaussian proposal (Section 4.1; Pennec et al.).

        ``size`` independent chains start at the footpoint and run ``steps`` steps each; a proposal
        v ~ N(0, tau^2 I) on the tangent space at the current state is rejected outright beyond the
        injectivity radius, else y = exp_x(v) is accepted with probability min(1, p(y)/p(x)) (the wrapped
        proposal is symmetric inside the injectivity radius). The general fallback: approximate for
        finite ``steps``, unlike :meth:`sample`.
        """
        n = 1 if size is None else _check_int(size, "size", 0)
        steps = _check_int(steps, "steps", 1)
        tau = self.sigma if proposal_scale is None else _check_scalar_positive(proposal_scale, "proposal_scale")
        m = self.manifold
        if isinstance(m, (Sphere, Circle)):
            tau = min(tau, 1.0)
        r = _generator(rng)
        fp = self.footpoint
        x = np.broadcast_to(fp, (n,) + fp.shape).copy()
        cur = np.zeros(n)

        def logp(dist):
            return -dist / self.sigma if self._laplace else -dist * dist / (2 * self.sigma**2)

        lp = logp(cur)
        for _ in range(steps):
            z = r.normal(size=(n, m.dim)) * tau
            norm = np.sqrt(np.sum(z * z, axis=1))
            if m.point_size == 0:
                v = z[:, 0]
            else:
                v = self._tangent_at(x, z)
            ok = norm < m.injectivity_radius
            y = m.exp(x, v)
            dy = np.asarray(m.dist(fp, y), float)
            ly = logp(dy)
            u = r.uniform(size=n)
            acc = ok & (np.log(np.maximum(u, 1e-300)) < ly - lp)
            x = np.where(acc[:, None], y, x) if m.point_size else np.where(acc, y, x)
            lp = np.where(acc, ly, lp)
        return x[0] if size is None else x

    def _tangent_at(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        """z (n, dim) expressed in an orthonormal basis of T_x M for each row of x."""
        m = self.manifold
        if isinstance(m, Euclidean):
            return z
        if isinstance(m, Sphere):
            # project ambient Gaussian coordinates: draw in R^(d+1) then remove the normal part is not
            # isotropic in d dims with d coordinates, so build the basis by Householder reflection.
            e0 = np.zeros(m.point_size)
            e0[0] = 1.0
            w = x - e0
            wn = np.sum(w * w, axis=1, keepdims=True)
            zf = np.concatenate([np.zeros((len(x), 1)), z], axis=1)  # tangent at e0
            safe = wn[:, 0] > 1e-30
            coef = np.where(safe[:, None], 2.0 * np.sum(w * zf, axis=1, keepdims=True) / np.where(safe[:, None], wn, 1.0), 0.0)
            return zf - coef * w  # the reflection maps e0 to x and T_e0 to T_x isometrically
        # hyperbolic: Lorentz boost from the origin to x applied to (0, z)
        x0, xs = x[:, :1], x[:, 1:]
        dot = np.sum(xs * z, axis=1, keepdims=True)
        vs = z + xs * dot / (1.0 + x0)
        return np.concatenate([dot, vs], axis=1)


class RiemannianGaussian(_RiemannianRadial):
    """N_M(footpoint, sigma^2): density exp(-d(footpoint, y)^2 / (2 sigma^2)) / Z(sigma) (Definition 3.3)."""

    _laplace = False


class RiemannianLaplace(_RiemannianRadial):
    """Riemannian Laplace (Reimherr et al. 2021): density exp(-d(footpoint, y) / sigma) / Z(sigma).

    eps-DP with sigma = sensitivity / eps on any manifold where it is normalisable (on H^d: sigma < 1/(d-1)).
    """

    _laplace = True


# ======================================================================================================
# mu: exact and Monte Carlo (Algorithm 2)
# ======================================================================================================
def _mc_mu(manifold: Manifold, sigma: float, D: float, n: int, m: int, n_eps: int, eps_max: Optional[float],
           rng: Any, confidence: float, progress: Optional[bool], threads: Optional[int]) -> MonteCarloMu:
    if eps_max is None:
        if isinstance(manifold, (Circle, Sphere)):
            eps_max = D * (2 * math.pi - D) / (2 * sigma**2)  # the largest privacy loss: delta = 0 beyond
        else:
            eps_max = max(10.0, 5.0 * D / sigma + D * D / (2 * sigma**2))  # the paper's choice on R
    else:
        eps_max = _check_scalar_positive(eps_max, "eps_max")
    r = _generator(rng)
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
        return _mu_for_log_delta(eps, ld)

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


def gdp_mu(manifold: Manifold, sigma, sensitivity=1.0, method: str = "exact", *, n: int = 1000, m: int = 100,
           n_eps: int = 1000, eps_max=None, rng: Any = None, confidence: float = 0.95,
           progress: Optional[bool] = None, threads: Optional[int] = None):
    """The privacy parameter mu of the Riemannian Gaussian mechanism N_M(f(D), sigma^2).

    ``method="exact"`` (a float): sensitivity/sigma on R^d; the corrected Corollary 3.2.1 on S^1; the
    one-dimensional quadrature reduction on S^d and H^d (d >= 2), relative accuracy about 1e-10; in every
    case the supremum over eps of the mu solving delta_mu(eps) = delta(eps), found on a grid and refined.

    ``method="monte_carlo"``: Algorithm 2 with the paper's parameters (n samples per batch, m batches,
    n_eps values of eps up to eps_max; eps = 0 is added to the grid). Returns :class:`MonteCarloMu` with the
    paper's estimate, a delta-method standard error and a simultaneous confidence interval: a band over
    eps from the m batch means (Gaussian multiplier bootstrap), its lower side widened where needed by
    exact Clopper-Pearson bounds on the pooled counts (Bonferroni over the eps grid), then mapped through
    mu_eps and maximised over eps. Like the estimate, the interval is about the maximum over the sampled
    eps grid. A tqdm progress bar is shown for long runs
    (``progress=None``: when n * m >= 5e6) if tqdm is installed.
    """
    manifold = _check_manifold(manifold)
    sigma = _check_scalar_positive(sigma, "sigma")
    D = _check_sensitivity(manifold, sensitivity)
    if method == "exact":
        return _mu_exact(manifold, sigma, D)
    if method == "monte_carlo":
        n = _check_int(n, "n", 2)
        m = _check_int(m, "m", 2)
        n_eps = _check_int(n_eps, "n_eps", 1)
        c = float(confidence)
        if not 0.0 < c < 1.0:
            raise ValueError("confidence must lie in (0, 1)")
        return _mc_mu(manifold, sigma, D, n, m, n_eps, eps_max, rng, c, progress, threads)
    raise ValueError(f"method must be 'exact' or 'monte_carlo', not {method!r}")


def gdp_sigma(manifold: Manifold, mu, sensitivity=1.0) -> float:
    """The smallest rate sigma whose Riemannian Gaussian mechanism is mu-GDP (exact mu; verified).

    On H^d (d >= 2) mu does not fall to 0 as sigma grows (the mass escapes to where the two footpoints
    stay distinguishable); an unreachable target raises ValueError.
    """
    manifold = _check_manifold(manifold)
    mu = _check_scalar_positive(mu, "mu")
    D = _check_sensitivity(manifold, sensitivity)
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return D / mu
    f = lambda ls: _mu_exact(manifold, math.exp(ls), D) - mu  # noqa: E731
    # on H^d mu levels off as sigma grows; the quadrature covers sigma^2 (d - 1) <= 250
    cap = math.log(math.sqrt(250.0 / (manifold.dim - 1))) if isinstance(manifold, Hyperbolic) else math.inf
    lo = hi = min(math.log(D / mu), cap)
    flo = f(lo)
    while flo < 0:  # decrease sigma until mu is above the target
        hi, lo = lo, lo - 1.0
        flo = f(lo)
        if lo < math.log(D / mu) - 40:
            raise ValueError("no sigma found (mu is above the target for every sigma tried)")
    fhi = f(hi)
    tries = 0
    while fhi > 0:
        if hi >= cap or tries > 40:
            raise ValueError(f"mu = {mu} is not reachable on {manifold!r}: mu stays above it as sigma grows")
        lo, hi = hi, min(hi + 1.0, cap)
        fhi = f(hi)
        tries += 1
    ls = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13)
    sigma = math.exp(ls)
    for _ in range(100):  # the returned sigma meets the target exactly (round up through the noise)
        if _mu_exact(manifold, sigma, D) <= mu:
            return sigma
        sigma *= 1 + 1e-11
    raise ArithmeticError("gdp_sigma could not verify its result")


# ======================================================================================================
# eps-DP <-> mu-GDP (Liu et al. 2022, as used in Section 5)
# ======================================================================================================
def epsilon_to_mu(epsilon) -> float:
    """mu-GDP implied by eps-DP: mu = -2 Phi^-1(1 / (1 + e^eps))."""
    e = float(check_positive(epsilon, "epsilon"))
    # 1/(1+e^eps) = expit(-eps); ndtri of a log-space probability keeps large eps accurate
    from .special import ndtri

    return float(-2.0 * ndtri(float(sps.expit(-e))))


def mu_to_epsilon(mu) -> float:
    """The eps with epsilon_to_mu(eps) = mu: eps = log((1 - Phi(-mu/2)) / Phi(-mu/2))."""
    m = float(check_positive(mu, "mu"))
    lp = float(_log_ndtr(np.array([-m / 2]))[0])
    lq = float(_log_ndtr(np.array([m / 2]))[0])
    return lq - lp


# ======================================================================================================
# Frechet means (Section 5)
# ======================================================================================================
def _points(manifold: Manifold, points: Any) -> np.ndarray:
    x = _real_array(points, "points")
    k = manifold.point_size
    if (k and (x.ndim != 2 or x.shape[1] != k)) or (not k and x.ndim != 1):
        raise ValueError(f"points must have shape (n, {k})" if k else "points must be a 1-D array of angles")
    if len(x) == 0:
        raise ValueError("points must not be empty")
    manifold.dist(x, x)  # membership
    return x


def frechet_mean(manifold: Manifold, points: Any, *, tol: float = 1e-12, max_iter: int = 1000):
    """argmin_x sum_i d(x, x_i)^2 by Riemannian gradient descent x <- exp_x(mean_i log_x(x_i)).

    Converges when the Riemannian gradient norm is below ``tol`` (relative to the data spread); raises
    ArithmeticError if it does not within ``max_iter`` steps (data not in a convex ball, Assumption 1).
    """
    manifold = _check_manifold(manifold)
    x = _points(manifold, points)
    if isinstance(manifold, Circle):
        cur = np.array(math.atan2(np.mean(np.sin(x)), np.mean(np.cos(x))))
    elif isinstance(manifold, Sphere):
        s = x.mean(axis=0)
        cur = s / np.linalg.norm(s) if np.linalg.norm(s) > 1e-8 else x[0].copy()
    elif isinstance(manifold, Hyperbolic):
        cur = np.concatenate([[0.0], x[:, 1:].mean(axis=0)])
        cur[0] = math.sqrt(1 + cur[1:] @ cur[1:])
    else:
        return x.mean(axis=0)
    spread = max(float(np.max(np.asarray(manifold.dist(x[0], x), float))), 1e-300)
    for _ in range(max_iter):
        g = np.asarray(manifold.log(cur, x), float).mean(axis=0)
        gn = float(np.sqrt(np.sum(g * g))) if isinstance(manifold, (Sphere, Circle)) else float(
            math.sqrt(max(-g[0] ** 2 + g[1:] @ g[1:], 0.0)) if isinstance(manifold, Hyperbolic) else np.linalg.norm(g))
        cur = np.asarray(manifold.exp(cur, g), float)
        if gn <= tol * spread or gn == 0.0:
            return float(cur) if cur.ndim == 0 else cur
    raise ArithmeticError(f"frechet_mean did not converge in {max_iter} iterations (gradient norm {gn:.3g})")


def frechet_mean_sensitivity(radius, n, kappa=1.0) -> float:
    """Sensitivity of the Frechet mean of n points in a ball of radius r (Reimherr et al. 2021):
    2 r (2 - h) / (n h), h = 2 r sqrt(kappa) cot(2 r sqrt(kappa)) for kappa > 0, h = 1 for kappa <= 0.
    ``kappa`` bounds the sectional curvature; for kappa > 0, r < pi / (4 sqrt(kappa)) (Assumption 1)."""
    r = _check_scalar_positive(radius, "radius")
    n = _check_int(n, "n", 1)
    k = float(as_float_array(kappa, "kappa"))
    if not math.isfinite(k):
        raise ValueError("kappa must be finite")
    if k > 0:
        if not r < math.pi / (4 * math.sqrt(k)):
            raise ValueError("radius must be < pi / (4 sqrt(kappa)) (Assumption 1)")
        a = 2 * r * math.sqrt(k)
        h = a / math.tan(a)
    else:
        h = 1.0
    return 2 * r * (2 - h) / (n * h)


@dataclass(frozen=True)
class PrivateFrechetMean:
    """A private release of the Frechet mean and the parameters it was made with."""

    release: Any
    mechanism: str
    sigma: float
    mu: float
    epsilon: Optional[float]
    sensitivity: float


def private_frechet_mean(manifold: Manifold, points: Any, radius, mu=None, *, sigma=None,
                         mechanism: str = "gaussian", rng: Any = None) -> PrivateFrechetMean:
    """Release the Frechet mean of ``points`` (assumed in a ball of the given radius) with mu-GDP.

    ``mechanism="gaussian"``: the Riemannian Gaussian N_M(mean, sigma^2) with sigma = gdp_sigma(mu) (or the
    given ``sigma``, and then mu = gdp_mu(sigma)). ``mechanism="laplace"``: the comparison of Section 5,
    the Riemannian Laplace with rate sensitivity / eps and eps = mu_to_epsilon(mu), which is eps-DP and hence
    mu-GDP (Liu et al. 2022).
    """
    manifold = _check_manifold(manifold)
    x = _points(manifold, points)
    kappa = manifold.curvature
    D = frechet_mean_sensitivity(radius, len(x), kappa if kappa > 0 else 0.0)
    mean = frechet_mean(manifold, x)
    if float(np.max(np.asarray(manifold.dist(mean, x), float))) > 2 * float(radius) * (1 + 1e-12):
        raise ValueError("points do not fit in a ball of the given radius")
    if (mu is None) == (sigma is None):
        raise ValueError("give exactly one of mu and sigma")
    if mechanism == "gaussian":
        if sigma is None:
            s = gdp_sigma(manifold, mu, D)
            mu_v = float(mu)
        else:
            s = _check_scalar_positive(sigma, "sigma")
            mu_v = gdp_mu(manifold, s, D)
        rel = RiemannianGaussian(manifold, mean, s).sample(rng=rng)
        return PrivateFrechetMean(rel, "gaussian", s, mu_v, None, D)
    if mechanism == "laplace":
        mu_v = float(mu) if mu is not None else gdp_mu(manifold, sigma, D)
        eps = mu_to_epsilon(mu_v)
        s = D / eps
        rel = RiemannianLaplace(manifold, mean, s).sample(rng=rng)
        return PrivateFrechetMean(rel, "laplace", s, mu_v, eps, D)
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', not {mechanism!r}")
