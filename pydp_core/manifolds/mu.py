"""The exact GDP parameter mu of the Riemannian Gaussian mechanism, the rate sigma for a target mu, and
the eps-DP <-> mu-GDP conversions.

mu is the supremum over eps of the mu_eps solving delta_mu(eps) = delta(eps) (Jiang et al. 2023; derived
in docs/manifolds.md, Section 1): :func:`_mu_exact` searches a grid over eps and zooms on its maximiser,
then rounds the estimate up to a proven upper bound (:mod:`.certificate`). :func:`gdp_mu` also runs
Algorithm 2 of Jiang et al. (Monte Carlo, :mod:`.montecarlo`); :func:`gdp_sigma` inverts mu(sigma);
:func:`epsilon_to_mu` and :func:`mu_to_epsilon` are the conversions of Liu et al. 2022 used in Section 5
of Jiang et al.
"""
from __future__ import annotations

import math
from typing import Any, Literal, overload

import numpy as np

from .._logspace import log1mexp, log_ndtr
from .._validation import check_allocation, check_int, check_open_unit, check_positive_scalar
from ._gdp import _mu_for_log_cdelta, mu_for_log_delta
from .certificate import _certify_mu, _finite_ratio
from .loss import default_eps_max, largest_loss
from .montecarlo import MonteCarloMu, monte_carlo_mu
from .profile import _check_regime, _check_sensitivity, _log_profile
from .profile_quadrature import _loss_log_complement
from .radial import RadialLaw
from .spaces import Circle, Euclidean, Hyperbolic, Manifold, Sphere, check_manifold


def _eps_range(manifold: Manifold, sigma: float, D: float) -> float:
    """The range of epsilon searched for the supremum of mu_eps."""
    if isinstance(manifold, (Circle, Sphere)):
        return largest_loss(sigma, D)
    return 4.0 * default_eps_max(manifold, sigma, D)


def _mu_exact(manifold: Manifold, sigma: float, D: float, certify: bool = True) -> float:
    """mu = sup over eps of mu_eps, rounded up: the search's estimate, then the smallest inflation of it
    that :func:`_certify_mu` proves (docs/manifolds.md, Section 1); ``certify=False``: the estimate."""
    if isinstance(manifold, Euclidean) or (isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        return _finite_ratio(D, sigma, "mu = sensitivity / sigma")
    law = RadialLaw(manifold, sigma, False)
    emax = _eps_range(manifold, sigma, D)
    seen_e: list[np.ndarray] = []
    seen_ld: list[np.ndarray] = []

    def mu_at(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mu_eps where well conditioned, else 0; the conditioning of mu_eps in delta or 1 - delta)."""
        ld, ok = _log_profile(manifold, e, sigma, D, law)
        seen_e.append(e)
        seen_ld.append(np.where(ok, ld, np.nan))
        mu = mu_for_log_delta(e, ld)
        # conditioning of mu in log delta: d log delta_mu / d log mu = mu phi(a) / delta_mu. Where it is
        # tiny (delta within rounding of 1) an error of 1e-16 in log delta moves mu visibly: skip those eps.
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            a = -e / mu + mu / 2
            cond = np.exp(np.log(mu) - 0.5 * a * a - 0.9189385332046727 - ld)
            # the same for 1 - delta, which resolves delta near 1 (the certificate uses the better of the two)
            lcomp = log1mexp(np.minimum(ld, 0.0))
        good = ok & (ld > -700.0) & (cond > 1e-6)
        # delta within 1e-3 of 1 (on S^d and H^d): mu_eps from the direct quadrature of 1 - delta, which keeps
        # its relative accuracy there (at small sigma the sup is often at such eps, e.g. the TV at eps = 0)
        near = ok & ~good & (ld > -1e-3) & (manifold.dim > 1)
        if near.any():
            lcomp = lcomp.copy()
            lcomp[near] = _loss_log_complement(law, D, e[near])
            mu_c = _mu_for_log_cdelta(e[near], lcomp[near])
            mu = mu.copy()
            mu[near] = mu_c
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            a = -e / mu + mu / 2
            cond_c = np.exp(np.log(mu) - 0.5 * a * a - 0.9189385332046727 - lcomp)
        good |= near & (lcomp > -700.0) & (cond_c > 1e-6) & np.isfinite(mu)
        return np.where(good, mu, 0.0), np.maximum(cond, cond_c)

    # sup over eps: a grid, then zoom on the best point (seven rounds, each keeps 1/3 of the bracket);
    # mu_eps is flat at an interior maximum, so the bracket width enters mu only quadratically.
    # plus points around mu_G^2 / 2, where delta_(mu_G), mu_G = D / sigma, is moderate: at small sigma the
    # mechanism is nearly Gaussian and only that window resolves mu (elsewhere delta rounds to 0 or 1)
    mu_g = D / sigma
    window = mu_g * mu_g / 2.0 + mu_g * np.linspace(-8.0, 8.0, 17)
    grid = np.concatenate([[0.0], emax * np.linspace(0.0, 1.0, 33)[1:-1] ** 2, window[(window > 0) & (window < emax)]])
    vals, conds = mu_at(grid)
    i = int(np.argmax(vals))
    best, best_cond = float(vals[i]), float(conds[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(7):
        pts = np.linspace(lo, hi, 7)
        v, c = mu_at(pts)
        j = int(np.argmax(v))
        if v[j] > best:
            best, best_cond = float(v[j]), float(c[j])
        lo, hi = pts[max(j - 1, 0)], pts[min(j + 1, 6)]
    if not (math.isfinite(best) and best > 0.0):
        raise ArithmeticError(f"gdp_mu could not evaluate the privacy profile on {manifold!r} at sigma = {sigma}")
    if not certify:
        return best
    return _certify_mu(manifold, sigma, D, law, best, best_cond, np.concatenate(seen_e), np.concatenate(seen_ld))


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
    eps_max: float | None = ...,
    rng: Any = ...,
    confidence: float = ...,
    progress: bool | None = ...,
    threads: int | None = ...,
) -> MonteCarloMu: ...
def gdp_mu(
    manifold: Manifold,
    *,
    sensitivity: float = 1.0,
    sigma: float,
    method: str = "exact",
    n: int = 1000,
    m: int = 100,
    n_eps: int = 1000,
    eps_max: float | None = None,
    rng: Any = None,
    confidence: float = 0.95,
    progress: bool | None = None,
    threads: int | None = None,
) -> float | MonteCarloMu:
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
        one-dimensional quadrature on S^d and H^d (d >= 2). The supremum over epsilon is found on a grid
        and refined around the best point, then rounded up to a proven upper bound (Notes).
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
        If the privacy profile cannot be evaluated at this ``sigma``, or no upper bound within 1e-2
        relative of the estimate can be proven (no such case is known in the validated range).

    Notes
    -----
    The exact mu is never below the true mu (given the error bounds of the profile, as for
    :func:`privacy_profile`): it is the smallest ``best (1 + 8 ulp 2^k)`` for which
    ``delta(eps) <= delta_mu(eps)`` is proven for every eps, interval by interval on a grid, from upper
    bounds of delta and lower bounds of 1 - delta at the grid points, by monotonicity of both sides, by
    convexity of delta in ``e^eps`` (it lies below its chords; the minimum of delta_mu minus the chord is
    found in closed form), and on S^1 by comparison with the Gaussian mechanism. On H^d the proof covers
    eps up to four times Jiang et al.'s Monte Carlo range. The excess over the true mu is at most about
    1e-10 relative on S^1 and 1e-8 on S^d and H^d at the tested points for sigma >= 0.1; where mu_eps is
    flat over a long range of eps (nearly Gaussian: sigma <= 0.03 on S^d and H^d) the proof closes only at
    an excess of 1e-5 to 2e-3 (docs/manifolds.md, Section 1).

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
        _check_regime(manifold, sig, D)
        return _mu_exact(manifold, sig, D)
    if method == "monte_carlo":
        n = check_int(n, "n", 2)
        m = check_int(m, "m", 2)
        n_eps = check_int(n_eps, "n_eps", 1)
        check_allocation(m * (n_eps + 1) + 2 * n * m, 8, "n_eps")  # the loss samples and the per-eps counts
        c = check_open_unit(confidence, "confidence")
        return monte_carlo_mu(manifold, sig, D, n, m, n_eps, eps_max, rng, c, progress, threads)
    raise ValueError(f"method must be 'exact' or 'monte_carlo', not {method!r}")


def gdp_sigma(manifold: Manifold, *, mu: float, sensitivity: float = 1.0) -> float:
    """The smallest rate sigma whose Riemannian Gaussian mechanism is mu-GDP (exact mu, verified).

    The root of ``mu(sigma) = mu`` (the search's estimate of mu, before its certificate) is bracketed in
    log sigma and found by Brent's method; sigma is then raised until the certified upper bound
    ``gdp_mu`` confirms it (each step multiplies sigma by the ratio of the certified mu to the target,
    mu falling about as 1/sigma), so the returned sigma meets the target.

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
        return _finite_ratio(D, target, "sigma = sensitivity / mu")

    def f(ls: float) -> float:
        return _mu_exact(manifold, math.exp(ls), D, certify=False) - target

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
    for _ in range(100):  # the certified mu of the returned sigma meets the target
        m = _mu_exact(manifold, sigma, D)
        if m <= target:
            return sigma
        sigma *= max(m / target, 1.0 + 1e-15)
    raise ArithmeticError("gdp_sigma could not verify its result")


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
    log_tail = float(log_ndtr(np.array([-m / 2.0]))[0])  # log Phi(-mu/2)
    log_erf = math.log(math.erf(m / (2.0 * math.sqrt(2.0))))
    return float(np.logaddexp(0.0, log_erf - log_tail))
