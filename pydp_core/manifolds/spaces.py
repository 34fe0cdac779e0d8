"""Model spaces of constant curvature: Euclidean, circle, spheres and hyperbolic spaces.

Every method is batched over leading array dimensions, with the hot loops in C++
(``csrc/include/pydp/manifolds/geometry.hpp``). Distances, exponential and logarithm maps stay accurate
for nearly equal and nearly antipodal points.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .._core import manifolds as _cman
from .._validation import (
    as_float_array,
    check_finite,
    check_int,
    check_positive_scalar,
)

_ATOL = 1e-8


class Manifold:
    """A complete Riemannian manifold of constant curvature: the base class of the model spaces.

    Subclasses give the geodesic distance and the exponential and logarithm maps, batched over leading
    array dimensions with numpy broadcasting. Points off the manifold (beyond ``atol``) raise ValueError.

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> [isinstance(m, M.Manifold) for m in (M.Euclidean(2), M.Circle(), M.Sphere(2), M.Hyperbolic(2))]
    [True, True, True, True]
    """

    dim: int
    curvature: float
    injectivity_radius: float
    atol: float = _ATOL

    #: number of coordinates of one point (0 for the circle's angles)
    point_size: int

    # -- shape handling ----------------------------------------------------------------------------
    def _pair(self, a: Any, b: Any, na: str, nb: str) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
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
        result: np.ndarray = x
        return result

    def dist(self, x: ArrayLike, y: ArrayLike) -> Any:
        """Geodesic distance, batched over leading dimensions (numpy broadcasting); a float for one pair."""
        raise NotImplementedError

    def exp(self, p: ArrayLike, v: ArrayLike) -> Any:
        """Exponential map exp_p(v), batched."""
        raise NotImplementedError

    def log(self, p: ArrayLike, q: ArrayLike) -> Any:
        """Logarithm map log_p(q), batched (the inverse of exp inside the injectivity radius)."""
        raise NotImplementedError

    # -- internals used by the distributions --------------------------------------------------------
    _geo: Any = None  # the model space, for the kernels (_core.manifolds.Geometry)
    _radial_kind: Any = _cman.RadialKind.sin  # the factor S(t) of the radial law
    _radial_max: float = math.inf

    def _tangent_basis(self, p: np.ndarray) -> np.ndarray:
        """An orthonormal basis of T_p M as the columns of a (point_size, dim) array."""
        raise NotImplementedError

    def _reference_pair(self, sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
        """Two points at distance ``sensitivity`` (eta and eta' of Jiang et al. 2023)."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dim))


def _scalar_out(arr: np.ndarray, batch: tuple[int, ...]) -> Any:
    out = arr.reshape(batch)
    return float(out) if batch == () else out


class Euclidean(Manifold):
    """R^d with the Euclidean metric (curvature 0, infinite injectivity radius).

    Parameters
    ----------
    d : int, optional
        The dimension (>= 1, default 1); points have shape ``(..., d)``.

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> E = M.Euclidean(2)
    >>> E.dist([0.0, 0.0], [3.0, 4.0])
    5.0
    >>> E.exp([1.0, 1.0], [1.0, 2.0])
    array([2., 3.])
    """

    curvature = 0.0
    injectivity_radius = math.inf
    _geo = _cman.Geometry.euclidean
    _radial_kind = _cman.RadialKind.linear

    def __init__(self, d: int = 1) -> None:
        self.dim = check_int(d, "d", 1)
        self.point_size = self.dim

    def __repr__(self) -> str:
        return f"Euclidean({self.dim})"

    def dist(self, x: ArrayLike, y: ArrayLike) -> Any:
        """The Euclidean distance |x - y|, batched."""
        a, b, batch = self._pair(x, y, "x", "y")
        return _scalar_out(np.sqrt(np.sum((a - b) ** 2, axis=-1)), batch)

    def exp(self, p: ArrayLike, v: ArrayLike) -> np.ndarray:
        """exp_p(v) = p + v, batched."""
        a, b, _ = self._pair(p, v, "p", "v")
        result: np.ndarray = a + b
        return result

    def log(self, p: ArrayLike, q: ArrayLike) -> np.ndarray:
        """log_p(q) = q - p, batched."""
        a, b, _ = self._pair(p, q, "p", "q")
        result: np.ndarray = b - a
        return result

    def _tangent_basis(self, p: np.ndarray) -> np.ndarray:
        return np.eye(self.dim)

    def _reference_pair(self, sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
        a = np.zeros(self.dim)
        b = a.copy()
        b[0] = sensitivity
        return a, b


class Circle(Manifold):
    """The unit circle S^1, points given as angles (radians, any real, read modulo 2 pi).

    Examples
    --------
    >>> import math
    >>> from pydp_core import manifolds as M
    >>> C = M.Circle()
    >>> round(C.dist(0.1, 2 * math.pi + 0.3), 12)
    0.2
    >>> C.log(3.0, -3.0)
    0.2831853...
    """

    dim = 1
    curvature = 0.0  # a one-dimensional manifold is flat
    injectivity_radius = math.pi
    point_size = 0
    _geo = _cman.Geometry.circle
    _radial_kind = _cman.RadialKind.none
    _radial_max = math.pi

    def __repr__(self) -> str:
        return "Circle()"

    def dist(self, x: ArrayLike, y: ArrayLike) -> Any:
        """Arc length in [0, pi]; the difference is reduced modulo 2 pi without losing digits."""
        a, b, batch = self._pair(x, y, "x", "y")
        return _scalar_out(_cman.circle_dist(a.reshape(-1), b.reshape(-1)), batch)

    def exp(self, p: ArrayLike, v: ArrayLike) -> Any:
        """The angle p + v wrapped to [-pi, pi]."""
        a, b, batch = self._pair(p, v, "p", "v")
        return _scalar_out(_cman.wrap_angle((a + b).reshape(-1)), batch)

    def log(self, p: ArrayLike, q: ArrayLike) -> Any:
        """The signed arc from p to q in [-pi, pi]."""
        a, b, batch = self._pair(p, q, "p", "q")
        return _scalar_out(_cman.wrap_angle((b - a).reshape(-1)), batch)

    def _tangent_basis(self, p: np.ndarray) -> np.ndarray:
        return np.ones((1, 1))

    def _reference_pair(self, sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
        return np.array(0.0), np.array(float(sensitivity))


class _Embedded(Manifold):
    _trig: tuple[Callable[[float], float], Callable[[float], float]]

    def __init__(self, d: int = 2, atol: float = _ATOL) -> None:
        self.dim = check_int(d, "d", 1)
        self.point_size = self.dim + 1
        self.atol = check_positive_scalar(atol, "atol")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dim})"

    def dist(self, x: ArrayLike, y: ArrayLike) -> Any:
        """Geodesic distance, batched; accurate for nearly equal and nearly antipodal points."""
        a, b, batch = self._pair(x, y, "x", "y")
        k = self.point_size
        return _scalar_out(_cman.dist(self._geo, a.reshape(-1, k), b.reshape(-1, k), self.atol), batch)

    def _explog(self, which: int, p: ArrayLike, v: ArrayLike, names: tuple[str, str]) -> np.ndarray:
        a, b, batch = self._pair(p, v, *names)
        k = self.point_size
        out = _cman.exp_log(self._geo, which, a.reshape(-1, k), b.reshape(-1, k), self.atol)
        return np.asarray(out).reshape(batch + (k,))

    def _reference_pair(self, sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
        # the first basis point and the point at distance `sensitivity` along the first axis
        a = np.zeros(self.point_size)
        a[0] = 1.0
        b = np.zeros(self.point_size)
        b[0], b[1] = self._trig[0](sensitivity), self._trig[1](sensitivity)
        return a, b

    def exp(self, p: ArrayLike, v: ArrayLike) -> np.ndarray:
        """Exponential map exp_p(v) for a tangent vector v at p, batched."""
        return self._explog(0, p, v, ("p", "v"))

    def log(self, p: ArrayLike, q: ArrayLike) -> np.ndarray:
        """Logarithm map log_p(q), batched (undefined at the antipode on the sphere)."""
        return self._explog(1, p, q, ("p", "q"))


class Sphere(_Embedded):
    """The unit sphere S^d in R^(d+1) (curvature 1, injectivity radius pi).

    Parameters
    ----------
    d : int, optional
        The dimension (>= 1, default 2); points are unit vectors of shape ``(..., d + 1)``.
    atol : float, optional
        Tolerance of the membership test ``|x| = 1`` (> 0, default 1e-8).

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> S = M.Sphere(2)
    >>> S.dist([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    1.5707963...
    >>> S.log([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    array([0.        , 1.57079633, 0.        ])
    """

    curvature = 1.0
    injectivity_radius = math.pi
    _geo = _cman.Geometry.sphere
    _radial_kind = _cman.RadialKind.sin
    _radial_max = math.pi
    _trig = (math.cos, math.sin)

    def _tangent_basis(self, p: np.ndarray) -> np.ndarray:
        # complete p to an orthonormal basis: QR of [p, I]
        q, _ = np.linalg.qr(np.column_stack([p, np.eye(self.point_size)]))
        basis = q[:, 1 : self.point_size]
        return np.ascontiguousarray(basis - np.outer(p, p @ basis))


class Hyperbolic(_Embedded):
    """Hyperbolic space H^d, hyperboloid model in R^(d+1) (time coordinate first, curvature -1).

    Parameters
    ----------
    d : int, optional
        The dimension (>= 1, default 2); points have shape ``(..., d + 1)`` with x_0^2 - |x_1..d|^2 = 1,
        x_0 > 0.
    atol : float, optional
        Tolerance of the membership test (> 0, default 1e-8).

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> H = M.Hyperbolic(2)
    >>> o = H.origin()
    >>> o
    array([1., 0., 0.])
    >>> H.dist(o, H.exp(o, [0.0, 1.5, 0.0]))
    1.5
    """

    curvature = -1.0
    injectivity_radius = math.inf
    _geo = _cman.Geometry.hyperbolic
    _radial_kind = _cman.RadialKind.sinh
    _trig = (math.cosh, math.sinh)

    def _tangent_basis(self, p: np.ndarray) -> np.ndarray:
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
    """``manifold`` itself if it is one of the model spaces, else a TypeError naming the argument."""
    if not isinstance(manifold, Manifold):
        raise TypeError(
            "manifold must be Euclidean(d), Circle(), Sphere(d) or Hyperbolic(d), "
            f"got {type(manifold).__name__}"
        )
    return manifold

