"""The privacy profile and the exact GDP parameter mu of the Riemannian Gaussian mechanism.

The mechanism is mu-GDP iff delta(eps) <= delta_mu(eps) for all eps >= 0 (Dong, Roth and Su 2022), with
delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). On the circle delta(eps) has a closed
form (Jiang et al. 2023, Corollary 3.2.1, corrected); on S^d and H^d the integrals of their Theorem 4.1
reduce by symmetry to one-dimensional integrals (``docs/manifolds.md``).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, overload

import numpy as np
from numpy.typing import ArrayLike
from scipy import special as sps

from .. import _core
from .._validation import (
    check_epsilon,
    check_int,
    check_open_unit,
    check_positive_scalar,
)
from .radial import RadialLaw, log_radial_factor, quadrature_nodes, radial_factor
from .spaces import Circle, Euclidean, Hyperbolic, Manifold, Sphere, check_manifold

if TYPE_CHECKING:
    from .montecarlo import MonteCarloMu


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


def mu_for_log_delta(eps: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
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
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a step out of the bracket bisects
            step = np.where(slope > 0, -f / slope, np.nan)
        nx = x + step
        bad = ~((nx > lo) & (nx < hi))
        nx = np.where(bad, 0.5 * (lo + hi), nx)
        done = (np.abs(nx - x) < 1e-15 * np.maximum(1.0, np.abs(x))) | (hi - lo < 1e-15)
        x = nx
        if done.all():
            break
    return np.where(dead, 0.0, np.exp(x))


def largest_loss(sigma: float, D: float) -> float:
    """The largest privacy loss on S^1 and S^d, D (2 pi - D) / (2 sigma^2): delta(eps) = 0 from there on.

    The loss (d(eta', y)^2 - d(eta, y)^2) / (2 sigma^2) is largest at the antipode of eta'.
    """
    return D * (2 * math.pi - D) / (2 * sigma**2)


def default_eps_max(manifold: Manifold, sigma: float, D: float) -> float:
    """The largest epsilon of the Monte Carlo grid: :func:`largest_loss` on S^1 and S^d, else the choice
    of Jiang et al. 2023 on R, max(10, 5 D / sigma + D^2 / (2 sigma^2))."""
    if isinstance(manifold, (Circle, Sphere)):
        return largest_loss(sigma, D)
    return max(10.0, 5.0 * D / sigma + D * D / (2 * sigma**2))


def _circle_log_profile(eps: np.ndarray, sigma: float, D: float) -> np.ndarray:
    """log delta(eps) on S^1: Corollary 3.2.1 of Jiang et al. 2023 as corrected in docs/manifolds.md
    (-inf from the largest loss on)."""
    pi = math.pi
    eps = np.asarray(eps, float)
    eps_max = largest_loss(sigma, D)
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
                return np.sign(u), log_radial_factor(1, au)
            den = log_radial_factor(1, np.asarray(t, float)) + float(log_radial_factor(1, np.array(D)))
            sa, la = ls(A)
            sb, lb = ls(B)
            sc, lc = ls(C2)
            se, le = ls(E)
            return sa * sb * np.exp(la + lb - den), sc * se * np.exp(lc + le - den)
        S = lambda u: radial_factor(kind, u)  # noqa: E731
        den = S(t) * S(D)
        return S(A) * S(B) / den, S(C2) * S(E) / den


def _beta_cdf(a: float, x: np.ndarray, xc: np.ndarray) -> np.ndarray:
    """I_x(a, a) with x + xc = 1, clipped to [0, 1]; uses the smaller argument for accuracy."""
    with np.errstate(invalid="ignore"):
        low = np.where(x <= 0.5, sps.betainc(a, a, np.clip(x, 0.0, 1.0)), 1.0 - sps.betainc(a, a, np.clip(xc, 0.0, 1.0)))
    return np.where(x <= 0, 0.0, np.where(xc <= 0, 1.0, low))


def _loss_tails(law: RadialLaw, D: float, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    t, w = quadrature_nodes(bps)
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
                 law: Optional[RadialLaw] = None) -> tuple[np.ndarray, np.ndarray]:
    """(log delta(eps), reliable) for the Riemannian Gaussian mechanism on a model space."""
    eps = np.asarray(eps, float)
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return _log_delta_mu(eps, np.full(eps.shape, D / sigma)), np.ones(eps.shape, bool)
    if isinstance(manifold, Circle) or (isinstance(manifold, Sphere) and manifold.dim == 1):
        return _circle_log_profile(eps, sigma, D), np.ones(eps.shape, bool)
    law = law or RadialLaw(manifold, sigma, laplace=False)
    flat = eps.reshape(-1)
    lu, ll = _loss_tails(law, D, flat)
    with np.errstate(invalid="ignore"):
        ratio = np.where(np.isfinite(lu), flat + ll - lu, -np.inf)  # log e^eps P(L < -eps) / P(L > eps)
        out = np.where(np.isfinite(lu), lu + _log1mexp(np.minimum(ratio, 0.0)), -np.inf)
    # the subtraction keeps about 15 + log10(1 - ratio) digits: flag where fewer than 9 remain
    reliable = ~(ratio > math.log1p(-1e-6)) & np.isfinite(lu)
    if isinstance(manifold, Sphere):
        eps_max = largest_loss(sigma, D)
        out = np.where(flat >= eps_max, -np.inf, out)
        reliable |= flat >= eps_max
    return out.reshape(eps.shape), reliable.reshape(eps.shape)


def _check_sensitivity(manifold: Manifold, sensitivity: Any) -> float:
    D = check_positive_scalar(sensitivity, "sensitivity")
    if isinstance(manifold, (Circle, Sphere)) and D > math.pi:
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
        delta(epsilon), a float for a scalar ``epsilon``, else an array of its shape.

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
    out = np.exp(_log_profile(manifold, eps, sig, D)[0])
    return float(out) if np.ndim(epsilon) == 0 else out


def _eps_range(manifold: Manifold, sigma: float, D: float) -> float:
    """The range of epsilon searched for the supremum of mu_eps."""
    if isinstance(manifold, (Circle, Sphere)):
        return largest_loss(sigma, D)
    return 4.0 * default_eps_max(manifold, sigma, D)


def _mu_exact(manifold: Manifold, sigma: float, D: float) -> float:
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return D / sigma
    law = None if isinstance(manifold, (Circle, Euclidean)) or manifold.dim == 1 else RadialLaw(manifold, sigma, False)
    emax = _eps_range(manifold, sigma, D)

    def mu_at(e: np.ndarray) -> np.ndarray:
        ld, ok = _log_profile(manifold, e, sigma, D, law)
        mu = mu_for_log_delta(e, ld)
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


@overload
def gdp_mu(manifold: Manifold, *, sensitivity: float = ..., sigma: float, method: Literal["exact"] = ...) -> float: ...
@overload
def gdp_mu(
    manifold: Manifold,
    *,
    sensitivity: float = ...,
    sigma: float,
    method: Literal["monte_carlo"],
    n: int = ...,
    m: int = ...,
    n_eps: int = ...,
    eps_max: Optional[float] = ...,
    rng: Any = ...,
    confidence: float = ...,
    progress: Optional[bool] = ...,
    threads: Optional[int] = ...,
) -> "MonteCarloMu": ...
def gdp_mu(
    manifold: Manifold,
    *,
    sensitivity: float = 1.0,
    sigma: float,
    method: str = "exact",
    n: int = 1000,
    m: int = 100,
    n_eps: int = 1000,
    eps_max: Optional[float] = None,
    rng: Any = None,
    confidence: float = 0.95,
    progress: Optional[bool] = None,
    threads: Optional[int] = None,
) -> Union[float, "MonteCarloMu"]:
    """The privacy parameter mu of the Riemannian Gaussian mechanism N_M(f(D), sigma^2).

    The mechanism is mu-GDP iff delta(epsilon) <= delta_mu(epsilon) for every epsilon >= 0 (Dong, Roth and
    Su 2022), so mu is the supremum over epsilon of the mu_eps solving delta_mu(eps) = delta(eps)
    (Jiang et al. 2023; the reduction and the search are derived in docs/manifolds.md).

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    sensitivity : float, optional
        The geodesic sensitivity D (> 0, at most pi on the circle and spheres; default 1).
    sigma : float
        The rate of the Riemannian Gaussian (> 0).
    method : {"exact", "monte_carlo"}, optional
        ``"exact"`` (the default): D / sigma on R^d; the corrected Corollary 3.2.1 on S^1; the
        one-dimensional quadrature on S^d and H^d (d >= 2), relative accuracy about 1e-10. The supremum
        over epsilon is found on a grid and refined around the best point.
        ``"monte_carlo"``: Algorithm 2 of Jiang et al. 2023 with a confidence interval.
    n, m, n_eps : int, optional
        Monte Carlo only: samples per batch (>= 2), batches (>= 2) and values of epsilon on the grid
        ``k * eps_max / n_eps``, ``k = 0..n_eps`` (epsilon = 0 is added to the paper's grid).
    eps_max : float, optional
        Monte Carlo only: the largest epsilon of the grid (default: the largest privacy loss on the
        circle and spheres, else the paper's ``max(10, 5 D / sigma + D^2 / (2 sigma^2))``).
    rng : None, Random or numpy.random.Generator, optional
        Monte Carlo only: the random source (``None``: a fresh secure :class:`pydp_core.Random`).
    confidence : float, optional
        Monte Carlo only: the level of the simultaneous confidence interval, in (0, 1).
    progress : bool, optional
        Monte Carlo only: show a tqdm bar (``None``: when ``n * m >= 5e6`` and tqdm is installed).
    threads : int, optional
        Monte Carlo only: sampler threads (``None``: those of ``rng``); the output does not depend on it.

    Returns
    -------
    float or MonteCarloMu
        mu for ``method="exact"``; for ``"monte_carlo"`` the estimate with a delta-method standard error
        and a simultaneous confidence interval (a Gaussian multiplier-bootstrap band over epsilon from the
        m batch means, widened where needed by exact Clopper-Pearson bounds on the pooled counts,
        Bonferroni over the grid, mapped through mu_eps and maximised over the grid).

    Raises
    ------
    TypeError
        If ``manifold`` is not a model space or an argument has the wrong type.
    ValueError
        If ``sigma`` or the sensitivity is out of range, ``method`` is unknown, or a Monte Carlo
        parameter is out of range.
    ArithmeticError
        If the privacy profile cannot be evaluated at this ``sigma``.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import manifolds as M
    >>> M.gdp_mu(M.Euclidean(3), sigma=2.0)
    0.5
    >>> M.gdp_mu(M.Circle(), sigma=1.0)
    0.983169...
    >>> M.gdp_mu(M.Sphere(2), sigma=1.0)
    0.822482...
    >>> est = M.gdp_mu(M.Sphere(2), sigma=1.0, method="monte_carlo", n=200, m=20, n_eps=50, rng=dp.Random(1))
    >>> est.ci_low <= est.mu <= est.ci_high
    True
    """
    manifold = check_manifold(manifold)
    sig = check_positive_scalar(sigma, "sigma")
    D = _check_sensitivity(manifold, sensitivity)
    if method == "exact":
        return _mu_exact(manifold, sig, D)
    if method == "monte_carlo":
        n = check_int(n, "n", 2)
        m = check_int(m, "m", 2)
        n_eps = check_int(n_eps, "n_eps", 1)
        c = check_open_unit(confidence, "confidence")
        from .montecarlo import monte_carlo_mu  # montecarlo builds on this module

        return monte_carlo_mu(manifold, sig, D, n, m, n_eps, eps_max, rng, c, progress, threads)
    raise ValueError(f"method must be 'exact' or 'monte_carlo', not {method!r}")


def gdp_sigma(manifold: Manifold, *, mu: float, sensitivity: float = 1.0) -> float:
    """The smallest rate sigma whose Riemannian Gaussian mechanism is mu-GDP (exact mu, verified).

    The root of ``gdp_mu(sigma) = mu`` is bracketed in log sigma and found by Brent's method; the result is
    then raised by steps of 1e-11 until ``gdp_mu`` confirms it, so the returned sigma meets the target.

    Parameters
    ----------
    manifold : Manifold
        ``Euclidean(d)``, ``Circle()``, ``Sphere(d)`` or ``Hyperbolic(d)``.
    mu : float
        The target GDP parameter (> 0).
    sensitivity : float, optional
        The geodesic sensitivity D (> 0, at most pi on the circle and spheres; default 1).

    Returns
    -------
    float
        sigma with ``gdp_mu(manifold, sigma=sigma, sensitivity=sensitivity) <= mu``.

    Raises
    ------
    TypeError
        If ``manifold`` is not a model space.
    ValueError
        If ``mu`` or the sensitivity is out of range, or ``mu`` cannot be reached: on H^d (d >= 2) mu
        does not fall to 0 as sigma grows (the mass escapes to where the two footpoints stay
        distinguishable).
    ArithmeticError
        If the result cannot be verified.

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> M.gdp_sigma(M.Euclidean(2), mu=0.5)
    2.0
    >>> s = M.gdp_sigma(M.Sphere(2), mu=1.0, sensitivity=0.5)
    >>> s
    0.480529...
    >>> M.gdp_mu(M.Sphere(2), sigma=s, sensitivity=0.5) <= 1.0
    True
    """
    from scipy import optimize

    manifold = check_manifold(manifold)
    target = check_positive_scalar(mu, "mu")
    D = _check_sensitivity(manifold, sensitivity)
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return D / target

    def f(ls: float) -> float:
        return _mu_exact(manifold, math.exp(ls), D) - target

    # on H^d mu levels off as sigma grows; the quadrature covers sigma^2 (d - 1) <= 250
    cap = math.log(math.sqrt(250.0 / (manifold.dim - 1))) if isinstance(manifold, Hyperbolic) else math.inf
    lo = hi = min(math.log(D / target), cap)
    flo = f(lo)
    while flo < 0:  # decrease sigma until mu is above the target
        hi, lo = lo, lo - 1.0
        flo = f(lo)
        if lo < math.log(D / target) - 40:
            raise ValueError("no sigma found (mu is above the target for every sigma tried)")
    fhi = f(hi)
    tries = 0
    while fhi > 0:
        if hi >= cap or tries > 40:
            raise ValueError(f"mu = {target} is not reachable on {manifold!r}: mu stays above it as sigma grows")
        lo, hi = hi, min(hi + 1.0, cap)
        fhi = f(hi)
        tries += 1
    ls = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13)
    sigma = math.exp(ls)
    for _ in range(100):  # the returned sigma meets the target exactly (round up through the noise)
        if _mu_exact(manifold, sigma, D) <= target:
            return sigma
        sigma *= 1 + 1e-11
    raise ArithmeticError("gdp_sigma could not verify its result")


# ======================================================================================================
# eps-DP <-> mu-GDP (Liu et al. 2022, as used in Section 5 of Jiang et al. 2023)
# ======================================================================================================
def epsilon_to_mu(epsilon: float) -> float:
    """The mu-GDP implied by epsilon-DP: mu = -2 Phi^-1(1 / (1 + e^epsilon)) (Liu et al. 2022).

    The one formula of the library, :meth:`pydp_core.PureDP.to_gdp`, evaluated in log space (finite up
    to the largest double epsilon).

    Parameters
    ----------
    epsilon : float
        epsilon > 0, finite.

    Returns
    -------
    float
        The smallest mu such that every epsilon-DP mechanism is mu-GDP.

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real scalar.
    ValueError
        If ``epsilon`` is not positive and finite.

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> M.epsilon_to_mu(1.0)
    1.2320353853...
    >>> M.epsilon_to_mu(746.0)
    77.015817...
    """
    from ..accounting.budgets import PureDP

    return PureDP(check_positive_scalar(epsilon, "epsilon")).to_gdp().mu


def mu_to_epsilon(mu: float) -> float:
    """The epsilon with ``epsilon_to_mu(epsilon) = mu``: the inverse of :func:`epsilon_to_mu`.

    ``1 / (1 + e^eps) = Phi(-mu/2)`` gives ``eps = log(Phi(mu/2) / Phi(-mu/2))``; with
    ``Phi(mu/2) = Phi(-mu/2) + erf(mu / (2 sqrt 2))`` this is
    ``log1p(erf(mu / (2 sqrt 2)) / Phi(-mu/2))``, evaluated in log space: accurate for small mu (no
    cancellation) and for large mu (no underflow of Phi(-mu/2)).

    Parameters
    ----------
    mu : float
        mu > 0, finite.

    Returns
    -------
    float
        epsilon > 0.

    Raises
    ------
    TypeError
        If ``mu`` is not a real scalar.
    ValueError
        If ``mu`` is not positive and finite.

    Examples
    --------
    >>> from pydp_core import manifolds as M
    >>> M.mu_to_epsilon(1.0)
    0.806965346...
    >>> M.mu_to_epsilon(M.epsilon_to_mu(746.0))
    746.0000...
    """
    m = check_positive_scalar(mu, "mu")
    log_tail = float(_log_ndtr(np.array([-m / 2.0]))[0])  # log Phi(-mu/2)
    log_erf = math.log(math.erf(m / (2.0 * math.sqrt(2.0))))
    return float(np.logaddexp(0.0, log_erf - log_tail))
