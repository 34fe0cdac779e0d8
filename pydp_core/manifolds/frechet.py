"""Frechet means and the private Frechet mean (Jiang et al. 2023, Section 5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .._validation import as_float_array, check_finite, check_int, check_positive_scalar
from .privacy import gdp_mu, gdp_sigma, mu_to_epsilon
from .sampling import RiemannianGaussian, RiemannianLaplace
from .spaces import Circle, Hyperbolic, Manifold, Sphere, check_manifold


# ======================================================================================================
# Frechet means (Section 5)
# ======================================================================================================
def as_points(manifold: Manifold, points: Any) -> np.ndarray:
    x = check_finite(points, "points")
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
    r = check_positive_scalar(radius, "radius")
    n = check_int(n, "n", 1)
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


def private_frechet_mean(
    manifold: Manifold,
    points: Any,
    *,
    mu=None,
    radius,
    sigma=None,
    mechanism: str = "gaussian",
    rng: Any = None,
) -> PrivateFrechetMean:
    """Release the Frechet mean of ``points`` (assumed in a ball of the given radius) with mu-GDP.

    ``mechanism="gaussian"``: the Riemannian Gaussian N_M(mean, sigma^2) with sigma = gdp_sigma(mu) (or the
    given ``sigma``, and then mu = gdp_mu(sigma)). ``mechanism="laplace"``: the comparison of Section 5,
    the Riemannian Laplace with rate sensitivity / eps and eps = mu_to_epsilon(mu), which is eps-DP and hence
    mu-GDP (Liu et al. 2022).
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
        if sigma is None:
            s = gdp_sigma(manifold, mu=mu, sensitivity=D)
            mu_v = float(mu)
        else:
            s = check_positive_scalar(sigma, "sigma")
            mu_v = gdp_mu(manifold, sigma=s, sensitivity=D)
        rel = RiemannianGaussian(manifold, mean, s).sample(rng=rng)
        return PrivateFrechetMean(rel, "gaussian", s, mu_v, None, D)
    if mechanism == "laplace":
        mu_v = float(mu) if mu is not None else gdp_mu(manifold, sigma=sigma, sensitivity=D)
        eps = mu_to_epsilon(mu_v)
        s = D / eps
        rel = RiemannianLaplace(manifold, mean, s).sample(rng=rng)
        return PrivateFrechetMean(rel, "laplace", s, mu_v, eps, D)
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', not {mechanism!r}")
