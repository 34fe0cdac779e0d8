"""The privacy profile delta(eps) of the Riemannian Gaussian mechanism, with its error bounds.

The mechanism is mu-GDP iff delta(eps) <= delta_mu(eps) for all eps >= 0 (Dong, Roth and Su 2022), with
delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). :func:`privacy_profile` is the public
delta(eps), rounded up by the error bound of each method; :func:`_log_profile` chooses the method: the
Gaussian profile on R^d and H^1, the closed form (Jiang et al. 2023, Corollary 3.2.1, corrected) or a gap
quadrature on S^1 (:mod:`.profile_circle`), and on S^d and H^d the one-dimensional reductions of their
Theorem 4.1 (:mod:`.profile_quadrature`; docs/manifolds.md). The validated regime (sigma in [1e-3, 1e3],
D / sigma >= 1e-12) is checked up front (:func:`_check_regime`).
"""
from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike

from .._logspace import log1mexp
from .._validation import check_epsilon, check_positive_scalar
from ._gdp import _log_delta_mu
from .loss import _largest_loss_parts, largest_loss
from .profile_circle import _circle_log_error, _circle_log_profile
from .profile_quadrature import _antipode_log_profile, _direct_log_profile, _loss_tails
from .radial import RadialLaw
from .spaces import Circle, Euclidean, Hyperbolic, Manifold, Sphere, check_manifold


def _log_profile(manifold: Manifold, eps: np.ndarray, sigma: float, D: float,
                 law: RadialLaw | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(log delta(eps), reliable) for the Riemannian Gaussian mechanism on a model space.

    delta = P(L > eps) - e^eps P(L < -eps) from the two tails (closed form on S^1, one-dimensional
    quadrature on S^d and H^d) where the subtraction keeps all but two digits; elsewhere (small shifts,
    eps near the largest loss) the cancellation-free :func:`_direct_log_profile`.
    """
    eps = np.asarray(eps, float)
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return _log_delta_mu(eps, np.full(eps.shape, D / sigma)), np.ones(eps.shape, bool)
    flat = eps.reshape(-1)
    if manifold.dim == 1:
        return _circle_log_profile(flat, sigma, D).reshape(eps.shape), np.ones(eps.shape, bool)
    law = law or RadialLaw(manifold, sigma, laplace=False)
    lu, ll = _loss_tails(law, D, flat)
    lv = flat + ll
    with np.errstate(invalid="ignore"):
        ratio = np.where(np.isfinite(lu), lv - lu, -np.inf)  # log e^eps P(L < -eps) / P(L > eps)
        out = np.where(np.isfinite(lu), lu + log1mexp(np.minimum(ratio, 0.0)), -np.inf)
    if isinstance(manifold, (Circle, Sphere)):
        live = flat < largest_loss(sigma, D)  # delta = 0 from the largest loss on
        out = np.where(live, out, -np.inf)
    else:
        live = np.ones(flat.shape, bool)
    near = live & ~(ratio <= math.log(0.99))  # delta < P(L > eps) / 100, or the tails failed
    if near.any():
        law = law or RadialLaw(manifold, sigma, laplace=False)
        out[near] = _direct_log_profile(law, D, flat[near])
    reliable = ~np.isnan(out)
    return out.reshape(eps.shape), reliable.reshape(eps.shape)


def _check_regime(manifold: Manifold, sigma: float, D: float) -> None:
    """Refuse, up front, the (sigma, D) where the profile on S^1, S^d and H^d is not validated against
    50-digit references: sigma outside [1e-3, 1e3], or D / sigma below 1e-12 (docs/manifolds.md)."""
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return
    if not _SIGMA_RANGE[0] <= sigma <= _SIGMA_RANGE[1]:
        raise ValueError(
            f"sigma = {sigma} is outside the validated range [1e-3, 1e3] on {manifold!r}: not computed "
            "(the quadrature is checked against 50-digit references there only; docs/manifolds.md, "
            "Section 3); use gdp_mu(..., method='monte_carlo') outside it"
        )
    if 1e-12 * sigma > D:
        raise ValueError(f"sensitivity / sigma = {D / sigma:.3g} is below the validated range (>= 1e-12) on {manifold!r}")


#: The sigma validated for the exact profile and mu on S^1, S^d and H^d.
_SIGMA_RANGE = (1e-3, 1e3)


def _check_sensitivity(manifold: Manifold, sensitivity: Any) -> float:
    D = check_positive_scalar(sensitivity, "sensitivity")
    if isinstance(manifold, (Circle, Sphere)) and math.pi < D:
        raise ValueError(f"sensitivity must be <= pi on {manifold!r} (no two points are further apart)")
    return D


@overload
def privacy_profile(manifold: Manifold, *, epsilon: float, sensitivity: float = ..., sigma: float) -> float: ...
@overload
def privacy_profile(manifold: Manifold, *, epsilon: ArrayLike, sensitivity: float = ..., sigma: float) -> Any: ...
def privacy_profile(manifold: Manifold, *, epsilon: ArrayLike, sensitivity: float = 1.0, sigma: float) -> Any:
    """delta(epsilon) of the Riemannian Gaussian mechanism N_M(f(D), sigma^2).

    The mechanism is (epsilon, delta(epsilon))-DP for each epsilon and no smaller delta works (Jiang et
    al. 2023, Theorems 3.2 and 4.1): exact on R^d (the Gaussian mechanism), the corrected closed form of
    Corollary 3.2.1 on S^1, a one-dimensional quadrature on S^d and H^d for d >= 2 (docs/manifolds.md).

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    epsilon : float or array_like
        Values of epsilon, finite and >= 0.
    sensitivity : float, optional
        The geodesic sensitivity D of the query (> 0, at most pi on the circle and spheres; default 1).
    sigma : float
        The rate of the Riemannian Gaussian (> 0).

    Returns
    -------
    float or numpy.ndarray
        delta(epsilon), a float for a scalar ``epsilon``, else an array of its shape; rounded up (by the
        error bound of each method, docs/manifolds.md) and at most 1. On S^d (d >= 2) within 1e-3 of the
        largest loss, computed about the antipode of the second footpoint for D >= 1e-3, else the value
        at 1e-3 short of it (an upper bound).

    Raises
    ------
    TypeError
        If ``manifold`` is not one of the model spaces or an argument is not real.
    ValueError
        If ``epsilon`` is negative, NaN or infinite, ``sigma`` is not positive and finite, or the
        sensitivity is not positive (or exceeds pi on the circle and spheres).

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> M.privacy_profile(M.Circle(), epsilon=0.5, sigma=1.0)
    0.2310237...
    >>> M.privacy_profile(M.Euclidean(1), epsilon=[0.0, 1.0], sigma=1.0)
    array([0.3829249..., 0.1269367...])
    """
    manifold = check_manifold(manifold)
    sig = check_positive_scalar(sigma, "sigma")
    D = _check_sensitivity(manifold, sensitivity)
    eps = check_epsilon(epsilon)
    _check_regime(manifold, sig, D)
    if isinstance(manifold, Circle) or (isinstance(manifold, Sphere) and manifold.dim == 1):
        ld = _log_profile(manifold, eps, sig, D)[0]
        out = np.minimum(_round_up(ld, _circle_log_error(sig)), 1.0)  # delta <= TV <= 1
    elif isinstance(manifold, Sphere):
        out = np.minimum(_round_up(_sphere_log_profile(manifold, eps, sig, D), _QUADRATURE_LOG_ERROR), 1.0)
    elif isinstance(manifold, Hyperbolic) and manifold.dim > 1:
        out = np.minimum(_round_up(_log_profile(manifold, eps, sig, D)[0], _QUADRATURE_LOG_ERROR), 1.0)
    else:  # R^d and H^1: delta_mu, accurate to 1e-12 relative in log delta (tests/manifolds/test_manifolds_small_shift.py)
        ld = _log_profile(manifold, eps, sig, D)[0]
        out = np.minimum(_round_up(ld, 1e-12 * np.maximum(1.0, np.abs(ld))), 1.0)
    return float(out) if np.ndim(epsilon) == 0 else out


def _sphere_log_profile(manifold: Sphere, eps: np.ndarray, sigma: float, D: float) -> np.ndarray:
    """log delta on S^d (d >= 2): the quadrature of :func:`_log_profile` below ``_SPHERE_TOP`` times the
    largest loss; above it (where that quadrature loses its digits) the coordinates about the antipode
    of eta' (:func:`_antipode_log_profile`) for D at least ``_ANTIPODE_MIN``, elsewhere the value
    at ``_SPHERE_TOP`` times the largest loss (an upper bound, since delta decreases)."""
    eps = np.asarray(eps, float)
    flat = eps.reshape(-1)
    hi, lo = _largest_loss_parts(sigma, D)
    g = (hi - flat) + lo
    top_eps = _SPHERE_TOP * hi
    top = (flat >= top_eps) & (g > 0)
    covered = D >= _ANTIPODE_MIN
    law = RadialLaw(manifold, sigma, laplace=False)
    base = np.where(top & ~covered, top_eps, flat)
    out = _log_profile(manifold, base, sigma, D, law)[0]
    if covered and top.any():
        out[top] = _antipode_log_profile(law, D, g[top])
    out[g <= 0] = -np.inf  # beyond the exact largest loss
    return out.reshape(eps.shape)


#: D from which the antipodal coordinates answer near the largest loss (validated against 50-digit
#: references from D = 1e-3 to pi, sigma 0.003 to 1; at D = 1e-6 they were 2.5e-7 off, the splits in psi
#: not yet resolving the cap there).
_ANTIPODE_MIN = 1e-3


#: The error bound in log delta by which the S^d and H^d (d >= 2) profiles are rounded up: ten times the
#: largest error seen against 50-digit references (about 1e-10 relative; validated, not proven).
_QUADRATURE_LOG_ERROR = 1e-9


# the part of [0, largest loss] on S^d (d >= 2) where the quadrature profile is accurate to 1e-10
_SPHERE_TOP = 1.0 - 1e-3


def _round_up(log_value: np.ndarray, log_error: float) -> np.ndarray:
    """exp(log_value + log_error), at least the smallest positive double where log_value > -inf: an upper
    bound of the exact value whenever log_value is within log_error of its logarithm."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.exp(np.asarray(log_value, float) + log_error)
    return np.where(np.asarray(log_value) > -np.inf, np.maximum(out, np.nextafter(0.0, 1.0)), 0.0)
