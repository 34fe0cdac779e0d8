"""Model spaces of constant curvature: Euclidean, circle, spheres and hyperbolic spaces.

Every method is batched over leading array dimensions, with the hot loops in C++
(``csrc/include/pydp/manifolds/geometry.hpp``). Distances, exponential and logarithm maps stay accurate
for nearly equal and nearly antipodal points.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _core
from .._validation import (
    as_float_array,
    check_finite,
    check_int,
    check_positive_scalar,
)

_mf = _core.manifolds
_SPHERE, _HYPERBOLIC = 0, 1
_ATOL = 1e-8








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
        conv = as_float_array if isinstance(self, _Embedded) else check_finite
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
        x = check_finite(x, name)
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
        self.dim = check_int(d, "d", 1)
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
        self.dim = check_int(d, "d", 1)
        self.point_size = self.dim + 1
        self.atol = check_positive_scalar(atol, "atol")

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


def check_manifold(manifold: Any) -> Manifold:
    if not isinstance(manifold, Manifold):
        raise TypeError(
            "manifold must be Euclidean(d), Circle(), Sphere(d) or Hyperbolic(d), "
            f"got {type(manifold).__name__}"
        )
    return manifold

