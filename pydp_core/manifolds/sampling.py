"""Exact samplers of the Riemannian Gaussian and Laplace distributions on model spaces.

The distance to the footpoint is drawn from its radial law by rejection from a tangent-line envelope of
its log-concave part, the direction uniformly, then mapped by the exponential map (docs/manifolds.md).
"""
from __future__ import annotations

import math
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike

from .._core import manifolds as _cman
from .._validation import check_finite, check_int, check_positive_scalar, check_size
from ..random import Random, as_random
from .radial import RadialLaw
from .spaces import Circle, Euclidean, Hyperbolic, Manifold, Sphere, check_manifold

#: The largest total number of Metropolis-Hastings steps (size * steps) one call accepts (minutes of work).
MAX_MH_STEPS = 10**9

#: numpy-style output size: None (one point), an int or a tuple of ints.
Size = Union[int, tuple[int, ...], None]


def as_generator(rng: Any) -> Random:
    """The :class:`pydp_core.Random` behind an ``rng`` argument (:func:`pydp_core.as_random`)."""
    return as_random(rng)


class _RiemannianRadial:
    _laplace = False

    def __init__(self, manifold: Manifold, footpoint: ArrayLike, sigma: float) -> None:
        self.manifold = check_manifold(manifold)
        self.sigma = check_positive_scalar(sigma, "sigma")
        fp = check_finite(footpoint, "footpoint")
        if manifold.point_size == 0:
            if fp.ndim != 0:
                raise ValueError("footpoint must be a single angle on the circle")
            fp = np.array(float(_cman.wrap_angle(fp.reshape(1))[0]))
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
        self._law = RadialLaw(manifold, self.sigma, self._laplace)
        self._basis = np.ascontiguousarray(manifold._tangent_basis(fp), dtype=float)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.manifold!r}, footpoint={self.footpoint.tolist()}, sigma={self.sigma})"

    @property
    def log_normalizer(self) -> float:
        """log Z(sigma) = log of the integral over M of the unnormalised density (footpoint-free)."""
        return self._law.log_normalizer

    def logpdf(self, y: ArrayLike) -> Any:
        """log density with respect to the Riemannian volume, batched over points ``y``."""
        t = np.asarray(self.manifold.dist(self.footpoint, y), float)
        core = -t / self.sigma if self._laplace else -t * t / (2 * self.sigma**2)
        out = core - self.log_normalizer
        return float(out) if out.ndim == 0 else out

    def radial_cdf(self, t: ArrayLike) -> np.ndarray:
        """P(d(footpoint, Y) <= t): the exact law of the distance (used by the tests)."""
        return self._law.cdf(t)

    def sample(self, size: Size = None, rng: Any = None) -> Any:
        """Exact draws: the distance from its radial law (rejection from a tangent-line envelope), a
        uniform tangent direction, then the exponential map. ``size``: None (one point), an int or a
        tuple (numpy convention); points are stacked along the leading axes."""
        shape = check_size(size) or ()
        n = int(np.prod(shape)) if shape else 1
        r = as_generator(rng)
        law, m = self._law, self.manifold
        out = _cman.sample(m._geo, m._radial_kind, float(law.k), self.sigma, self._laplace, float(law.tmax),
                         float(law.mode), float(law.scale), np.atleast_1d(self.footpoint).astype(float),
                         self._basis, n, r.kernel, r.kernel_threads)
        return out[0] if size is None else out.reshape(shape + out.shape[1:])

    def sample_mh(self, size: int | None = None, rng: Any = None, *, steps: int = 300,
                  proposal_scale: float | None = None) -> Any:
        """Metropolis-Hastings with an exponential-wrapped Gaussian proposal (Section 4.1; Pennec et al.).

        ``size`` independent chains start at the footpoint and run ``steps`` steps each; a proposal
        v ~ N(0, tau^2 I) on the tangent space at the current state is rejected outright beyond the
        injectivity radius, else y = exp_x(v) is accepted with probability min(1, p(y)/p(x)) (the wrapped
        proposal is symmetric inside the injectivity radius). The general fallback: approximate for
        finite ``steps``, unlike :meth:`sample`.
        """
        n = 1 if size is None else check_int(size, "size", 0)
        steps = check_int(steps, "steps", 1)
        if n * steps > MAX_MH_STEPS:
            raise ValueError(
                f"size * steps = {n * steps} exceeds {MAX_MH_STEPS:g} Metropolis-Hastings steps; use sample() (exact)"
            )
        tau = self.sigma if proposal_scale is None else check_positive_scalar(proposal_scale, "proposal_scale")
        m = self.manifold
        if isinstance(m, (Sphere, Circle)):
            tau = min(tau, 1.0)
        r = as_generator(rng)
        fp = self.footpoint
        x = np.broadcast_to(fp, (n,) + fp.shape).copy()
        cur = np.zeros(n)

        def logp(dist: np.ndarray) -> np.ndarray:
            return -dist / self.sigma if self._laplace else -dist * dist / (2 * self.sigma**2)

        lp = logp(cur)
        for _ in range(steps):
            z = r.normal(size=(n, m.dim)) * tau
            norm = np.sqrt(np.sum(z * z, axis=1))
            v = z[:, 0] if m.point_size == 0 else self._tangent_at(x, z)
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
            proj = 2.0 * np.sum(w * zf, axis=1, keepdims=True) / np.where(safe[:, None], wn, 1.0)
            coef = np.where(safe[:, None], proj, 0.0)
            return zf - coef * w  # the reflection maps e0 to x and T_e0 to T_x isometrically
        # hyperbolic: Lorentz boost from the origin to x applied to (0, z)
        x0, xs = x[:, :1], x[:, 1:]
        dot = np.sum(xs * z, axis=1, keepdims=True)
        vs = z + xs * dot / (1.0 + x0)
        return np.concatenate([dot, vs], axis=1)


class RiemannianGaussian(_RiemannianRadial):
    """N_M(footpoint, sigma^2): density exp(-d(footpoint, y)^2 / (2 sigma^2)) / Z(sigma).

    The Riemannian Gaussian of Jiang et al. 2023 (Definition 3.3), with exact samplers (docs/manifolds.md).

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    footpoint : float or array_like
        The centre: an angle on the circle, else a point of shape ``(manifold.point_size,)`` on the
        manifold (re-projected onto it).
    sigma : float
        The rate (> 0); on H^d, sigma^2 (d - 1) must stay below about 300.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import manifolds as M
    >>> g = M.RiemannianGaussian(M.Sphere(2), [0.0, 0.0, 1.0], 0.5)
    >>> g
    RiemannianGaussian(Sphere(2), footpoint=[0.0, 0.0, 1.0], sigma=0.5)
    >>> y = g.sample(4, rng=dp.Random(3))
    >>> y.shape, bool(np.allclose(np.linalg.norm(y, axis=1), 1.0))
    ((4, 3), True)
    >>> g.logpdf([0.0, 0.0, 1.0]) == -g.log_normalizer
    True
    """

    _laplace = False


class RiemannianLaplace(_RiemannianRadial):
    """Riemannian Laplace (Reimherr et al. 2021): density exp(-d(footpoint, y) / sigma) / Z(sigma).

    epsilon-DP with sigma = sensitivity / epsilon on any manifold where it is normalisable.

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    footpoint : float or array_like
        The centre, as for :class:`RiemannianGaussian`.
    sigma : float
        The rate (> 0; on H^d, sigma < 1 / (d - 1) for the density to be normalisable).

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import manifolds as M
    >>> lap = M.RiemannianLaplace(M.Circle(), 0.0, 0.5)
    >>> bool(abs(lap.sample(rng=dp.Random(3))) <= np.pi)
    True
    >>> float(lap.radial_cdf(np.pi))
    1.0
    """

    _laplace = True
