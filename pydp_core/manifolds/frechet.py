"""Frechet means and the private Frechet mean (Jiang et al. 2023, Section 5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_scalar, check_finite, check_int, check_positive_scalar
from .mu import gdp_mu, gdp_sigma, mu_to_epsilon
from .sampling import RiemannianGaussian, RiemannianLaplace
from .spaces import Circle, Hyperbolic, Manifold, Sphere, check_manifold


def as_points(manifold: Manifold, points: Any) -> np.ndarray:
    """``points`` as a non-empty (n, point_size) array (1-D angles on the circle) on the manifold."""
    x = check_finite(points, "points")
    k = manifold.point_size
    if (k and (x.ndim != 2 or x.shape[1] != k)) or (not k and x.ndim != 1):
        raise ValueError(f"points must have shape (n, {k})" if k else "points must be a 1-D array of angles")
    if len(x) == 0:
        raise ValueError("points must not be empty")
    manifold.dist(x, x)  # membership
    return x


def frechet_mean(manifold: Manifold, points: ArrayLike, *, tol: float = 1e-12, max_iter: int = 1000) -> Any:
    """The Frechet mean argmin_x sum_i d(x, x_i)^2, by Riemannian gradient descent x <- exp_x(mean_i log_x(x_i)).

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    points : array_like
        n >= 1 points: shape ``(n, point_size)``, or ``(n,)`` angles on the circle.
    tol : float, optional
        Stop when the Riemannian gradient norm is below ``tol`` times the data spread (default 1e-12).
    max_iter : int, optional
        The largest number of steps (default 1000).

    Returns
    -------
    float or numpy.ndarray
        The mean: an angle on the circle, else a point.

    Raises
    ------
    TypeError
        If ``manifold`` is not a model space or ``points`` is not real.
    ValueError
        If ``points`` is empty, has the wrong shape or lies off the manifold.
    ArithmeticError
        If the descent does not converge within ``max_iter`` steps (data not in a convex ball,
        Assumption 1 of Jiang et al. 2023).

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> round(M.frechet_mean(M.Circle(), [0.1, 0.2, 0.3]), 12)
    0.2
    >>> M.frechet_mean(M.Euclidean(2), [[0.0, 0.0], [2.0, 4.0]])
    array([1., 2.])
    """
    manifold = check_manifold(manifold)
    x = as_points(manifold, points)
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
    max_iter = check_int(max_iter, "max_iter", 1)
    for _ in range(max_iter):
        g = np.asarray(manifold.log(cur, x), float).mean(axis=0)
        gn = float(np.sqrt(np.sum(g * g))) if isinstance(manifold, (Sphere, Circle)) else float(
            math.sqrt(max(-g[0] ** 2 + g[1:] @ g[1:], 0.0)) if isinstance(manifold, Hyperbolic) else np.linalg.norm(g))
        cur = np.asarray(manifold.exp(cur, g), float)
        if gn <= tol * spread or gn == 0.0:
            return float(cur) if cur.ndim == 0 else cur
    raise ArithmeticError(f"frechet_mean did not converge in {max_iter} iterations (gradient norm {gn:.3g})")


def frechet_mean_sensitivity(radius: float, n: int, kappa: float = 1.0) -> float:
    """The geodesic sensitivity of the Frechet mean of n points in a ball of radius r (Reimherr et al. 2021).

    2 r (2 - h) / (n h) with h = 2 r sqrt(kappa) cot(2 r sqrt(kappa)) for kappa > 0 and h = 1 for
    kappa <= 0 (docs/manifolds.md).

    Parameters
    ----------
    radius : float
        The radius r of a ball holding the data (> 0); for kappa > 0, r < pi / (4 sqrt(kappa))
        (Assumption 1 of Jiang et al. 2023).
    n : int
        The number of points (>= 1).
    kappa : float, optional
        An upper bound on the sectional curvature (finite, default 1).

    Returns
    -------
    float
        The sensitivity.

    Raises
    ------
    TypeError
        If an argument is not real (``n`` not an int).
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> M.frechet_mean_sensitivity(0.5, 100, kappa=0.0)
    0.01
    >>> M.frechet_mean_sensitivity(0.5, 100)
    0.02114815...
    """
    r = check_positive_scalar(radius, "radius")
    n = check_int(n, "n", 1)
    k = as_scalar(check_finite(kappa, "kappa"), "kappa")
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
    """A private release of the Frechet mean and the parameters it was made with.

    Returned by :func:`private_frechet_mean`.

    Parameters
    ----------
    release : float or numpy.ndarray
        The released point.
    mechanism : {"gaussian", "laplace"}
        The Riemannian mechanism used.
    sigma : float
        Its rate.
    mu : float
        The GDP parameter of the release.
    epsilon : float or None
        The pure-DP epsilon of the Laplace release (None for the Gaussian).
    sensitivity : float
        The sensitivity of the Frechet mean used in the calibration.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import manifolds as M
    >>> x = dp.Random(5).normal(0.0, 0.1, size=50)
    >>> r = M.private_frechet_mean(M.Circle(), x, mu=1.0, radius=0.5, rng=dp.Random(2))
    >>> r.mechanism, r.mu, r.sensitivity
    ('gaussian', 1.0, 0.02)
    """

    release: Any
    mechanism: str
    sigma: float
    mu: float
    epsilon: float | None
    sensitivity: float


def private_frechet_mean(
    manifold: Manifold,
    points: ArrayLike,
    *,
    mu: float | None = None,
    radius: float,
    sigma: float | None = None,
    mechanism: str = "gaussian",
    rng: Any = None,
) -> PrivateFrechetMean:
    """Release the Frechet mean of ``points`` (assumed in a ball of the given radius) with mu-GDP.

    Jiang et al. 2023, Section 5: the sensitivity is :func:`frechet_mean_sensitivity` with the curvature
    of the manifold.

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    points : array_like
        The data, as for :func:`frechet_mean`; they must fit in a ball of radius ``radius`` around their
        mean.
    mu : float, optional
        The target GDP parameter (give exactly one of ``mu`` and ``sigma``).
    radius : float
        The radius of a ball holding the data (> 0).
    sigma : float, optional
        A given rate (then mu is computed by :func:`gdp_mu`).
    mechanism : {"gaussian", "laplace"}, optional
        ``"gaussian"`` (the default): the Riemannian Gaussian N_M(mean, sigma^2) with
        sigma = :func:`gdp_sigma` (mu). ``"laplace"``: the comparison of Section 5, the Riemannian Laplace
        with rate sensitivity / epsilon and epsilon = :func:`mu_to_epsilon` (mu), which is epsilon-DP and
        hence mu-GDP (Liu et al. 2022).
    rng : None, Random or numpy.random.Generator, optional
        ``None`` (the default): a fresh secure generator, the choice for releases.

    Returns
    -------
    PrivateFrechetMean
        The release with its parameters.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If the points do not fit in the ball, both or neither of ``mu`` and ``sigma`` are given,
        ``mechanism`` is unknown, or a parameter is out of range.
    ArithmeticError
        If the Frechet mean does not converge.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import manifolds as M
    >>> x = dp.Random(5).normal(0.0, 0.1, size=50)
    >>> r = M.private_frechet_mean(M.Circle(), x, mu=1.0, radius=0.5, mechanism="laplace", rng=dp.Random(2))
    >>> r.epsilon == M.mu_to_epsilon(1.0), r.sigma == r.sensitivity / r.epsilon
    (True, True)
    """
    manifold = check_manifold(manifold)
    x = as_points(manifold, points)
    kappa = manifold.curvature
    D = frechet_mean_sensitivity(radius, len(x), kappa if kappa > 0 else 0.0)
    mean = frechet_mean(manifold, x)
    if float(np.max(np.asarray(manifold.dist(mean, x), float))) > 2 * float(radius) * (1 + 1e-12):
        raise ValueError("points do not fit in a ball of the given radius")
    if (mu is None) == (sigma is None):
        raise ValueError("give exactly one of mu and sigma")
    if mechanism == "gaussian":
        if mu is not None:
            s = gdp_sigma(manifold, mu=mu, sensitivity=D)
            mu_v = float(mu)
        else:
            s = check_positive_scalar(sigma, "sigma")
            mu_v = gdp_mu(manifold, sigma=s, sensitivity=D)
        rel = RiemannianGaussian(manifold, mean, s).sample(rng=rng)
        return PrivateFrechetMean(rel, "gaussian", s, mu_v, None, D)
    if mechanism == "laplace":
        mu_v = float(mu) if mu is not None else gdp_mu(manifold, sigma=check_positive_scalar(sigma, "sigma"), sensitivity=D)
        eps = mu_to_epsilon(mu_v)
        s = D / eps
        rel = RiemannianLaplace(manifold, mean, s).sample(rng=rng)
        return PrivateFrechetMean(rel, "laplace", s, mu_v, eps, D)
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', not {mechanism!r}")
