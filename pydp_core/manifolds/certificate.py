"""The certified upper bound of mu: a proof that delta(eps) <= delta_mu(eps) for every eps >= 0.

Given the search's estimate of mu (:func:`pydp_core.manifolds.mu._mu_exact`), :func:`_certify_mu` finds the
smallest inflation best (1 + 8 ulp 2^k) for which the inequality is proven interval by interval on a grid of
eps, refined where it fails, from upper bounds of delta and lower bounds of 1 - delta at the grid points
(:func:`_log_delta_bounds`, the profile's error bounds included). Each interval is closed by one of:
monotonicity of both sides, the chord conditions (delta is convex in e^eps and lies below its chords;
the minimum of delta_mu minus the chord is found in closed form, :func:`_chord_certified`), or on S^1
the comparison with the Gaussian mechanism (:func:`_circle_gauss_margin`). Every condition is monotone in
mu, so the smallest k is found by bisection (:func:`_smallest_certified_k`). docs/manifolds.md, Section 1.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special as sps

from .._logspace import log1mexp, log_ndtr, log_ndtr_diff
from ._gdp import _log_cdelta_mu, _log_delta_mu
from .loss import _largest_loss_parts, largest_loss
from .profile import _QUADRATURE_LOG_ERROR, _SPHERE_TOP, _log_profile
from .profile_circle import _circle_log_error, _circle_log_pieces
from .profile_quadrature import _loss_log_complement
from .radial import RadialLaw
from .spaces import Circle, Euclidean, Hyperbolic, Manifold, Sphere


def _finite_ratio(num: float, den: float, what: str) -> float:
    """num / den rounded up (the smallest double >= the exact quotient), refused with a ValueError naming
    ``what`` when it overflows the double range."""
    r = num / den
    if not math.isfinite(r):
        raise ValueError(f"{what} overflows the double range ({num:g} / {den:g}): no finite answer")
    if Fraction(r) < Fraction(num) / Fraction(den):
        r = math.nextafter(r, math.inf)
    return r


def _log_delta_bounds(manifold: Manifold, eps: np.ndarray, sigma: float, D: float, law: RadialLaw,
                      ld: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log of an upper bound of delta(eps), log of a lower bound of 1 - delta(eps)) from ``ld``, the
    :func:`_log_profile` at ``eps`` (NaN where unreliable, which stays NaN in the first), with the error
    bounds of :func:`privacy_profile`.

    On S^d (d >= 2) the profile beyond ``_SPHERE_TOP`` of the largest loss is replaced by its value there,
    an upper bound since delta decreases. The lower bound of 1 - delta is the larger of 1 minus the upper
    bound and, on S^1, :func:`_circle_log_pieces`, elsewhere (where delta > 0.999)
    :func:`_loss_log_complement`, less the error bound.
    """
    eps, ld = np.asarray(eps, float), np.array(ld, float)
    err = _circle_log_error(sigma) if manifold.dim == 1 else _QUADRATURE_LOG_ERROR
    if isinstance(manifold, Sphere) and manifold.dim > 1:
        top = _SPHERE_TOP * largest_loss(sigma, D)
        far = (eps > top) & (eps < largest_loss(sigma, D))
        if far.any():
            val, ok = _log_profile(manifold, np.array([top]), sigma, D, law)
            ld[far] = val[0] if ok[0] else np.nan
    lu = np.minimum(ld + err, 0.0)
    with np.errstate(invalid="ignore"):
        lc = np.where(lu < 0.0, log1mexp(np.minimum(lu, 0.0)), -np.inf)
    if manifold.dim == 1:
        lc = np.maximum(lc, _circle_log_pieces(eps, sigma, D)[2] - err)
    elif not (isinstance(manifold, Euclidean) or isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        near = lu > -1e-3  # delta within 1e-3 of 1: the direct quadrature of 1 - delta
        if near.any():
            lc[near] = np.maximum(lc[near], _loss_log_complement(law, D, eps[near]) - err)
    return lu, lc


def _chord_certified(e0: np.ndarray, e1: np.ndarray, l0: np.ndarray, l1: np.ndarray, mu: np.ndarray,
                     complement: bool) -> np.ndarray:
    """Per interval [e0, e1]: does the chord (in t = e^eps) through exp(l0), exp(l1) at its ends stay below
    delta_mu (``complement=False``, l an upper bound of delta, convex in t) or above 1 - delta_mu
    (``complement=True``, l a lower bound of 1 - delta, concave in t)? ``mu`` is one per interval.

    In both cases k = +-(target - chord) is convex in t with k' = -Phi(b) +- slope of the chord,
    b = -eps/mu - mu/2 (d delta_mu / dt = -Phi(b)); its minimiser x solves Phi(b) = |slope|, found in closed
    form by the inverse of Phi. Convexity gives min k >= k(x) - |k'(x)| (distance from x to the far end),
    which is what is checked, so an inexact x costs only second-order slack. Values are scaled by the
    larger end value and t by e^(e_i), so that nothing under- or overflows.
    """
    s = -1.0 if complement else 1.0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        m = np.maximum(l0, l1)
        v0, v1 = np.exp(l0 - m), np.exp(l1 - m)
        t1 = np.expm1(e1 - e0)  # tau = t / t_i - 1 runs over [0, t1]
        lo_, hi_ = np.minimum(l0, l1), m
        log_gap = hi_ + log1mexp(np.minimum(lo_ - hi_, 0.0))  # log |v1 - v0| + m
        right_sign = (l0 >= l1) if not complement else (l1 >= l0)
        log_p = log_gap - e0 - np.log(t1)  # log of |slope| in t
        b_star = np.where(right_sign & (log_p < 0.0), sps.ndtri_exp(np.minimum(log_p, 0.0)), np.inf)
        b_star = np.where(right_sign & (log_p >= 0.0), -np.inf, b_star)
        x = np.clip(-mu * (b_star + mu / 2.0), e0, e1)
        x = np.where(np.isnan(x), e1, x)
        tx = np.expm1(x - e0)
        chord = v0 + (v1 - v0) * (tx / t1)
        chord = np.where(t1 > 0, chord, v0)
        if complement:
            lt = _log_cdelta_mu(x, mu)
            lt = lt + 1e-12 * np.maximum(1.0, np.abs(lt))  # an upper bound of 1 - delta_mu
        else:
            lt = _log_delta_mu(x, mu)
            lt = lt - 1e-12 * np.maximum(1.0, np.abs(lt))  # a lower bound of delta_mu
        k = s * (np.exp(lt - m) - chord)
        dk = -np.exp(log_ndtr(-x / mu - mu / 2.0) + e0 - m) - s * (v1 - v0) / t1  # dk / dtau at x
        dk = np.where(t1 > 0, dk, 0.0)
        kmin = k - np.where(dk >= 0, dk * tx, -dk * (t1 - tx))
        result: np.ndarray = (kmin >= 1e-15 * (1.0 + np.abs(chord))) & np.isfinite(m)
        return result


def _circle_gauss_margin(sigma: float, D: float) -> tuple[float, float, float]:
    """(mu_G, log tau, log t) with mu_G >= D / sigma and, for every eps,

        delta(eps) <= delta_(D/sigma)(eps) + tau   and   1 - delta(eps) >= 1 - delta_(D/sigma)(eps) - (1 + e^eps) t

    on S^1: on [D - pi, pi] the two densities are the Gaussian ones N(0, sigma^2), N(D, sigma^2) divided by
    the same C = Phi(pi/sigma) - Phi(-pi/sigma) <= 1, and the rest carries little mass. So
    delta <= delta_G / C + P1([-pi, D - pi]) <= delta_G + (2 Phi(-pi/sigma) + Phi((D - pi)/sigma)) / C, and
    1 - delta = int min(p, e^eps q) >= int over [D - pi, pi] of min(phi, e^eps phi(. - D)) >= 1 - delta_G
    minus the Gaussian masses outside, Phi(-pi/sigma) + e^eps Phi(-pi/sigma) = (1 + e^eps) t.
    """
    t = float(log_ndtr(np.array([-math.pi / sigma]))[0])
    far = float(log_ndtr(np.array([(D - math.pi) / sigma]))[0])
    log_c = float(log_ndtr_diff(np.array(math.pi / sigma), np.array(-math.pi / sigma)))
    tau = float(np.logaddexp(math.log(2.0) + t, far)) - log_c
    return _finite_ratio(D, sigma, "mu = sensitivity / sigma"), tau + 1e-12 * max(1.0, abs(tau)), t + 1e-12 * max(1.0, abs(t))


def _gauss_certified(e0: np.ndarray, e1: np.ndarray, mu: np.ndarray, gauss: tuple[float, float, float]) -> np.ndarray:
    """Per interval: is delta <= delta_mu proven by the comparison with the Gaussian mechanism of
    :func:`_circle_gauss_margin`? delta_mu - delta_(mu_G) = int from mu_G to mu of phi(-eps/m + m/2) dm is at
    least (mu - mu_G) times the smallest phi over the box [e_i, e_(i+1)] x [mu_G, mu], taken at a corner
    (a is monotone in eps and in m); it must exceed tau (then delta <= delta_mu) or (1 + e^eps) t (then
    1 - delta >= 1 - delta_mu)."""
    mu_g, log_tau, log_t = gauss
    above = mu > mu_g
    with np.errstate(over="ignore"):
        amax = np.max([np.abs(-x / m + m / 2.0) for x in (e0, e1) for m in (mu_g, mu)], axis=0)
        lhs = np.log(np.where(above, mu - mu_g, 1.0)) - 0.5 * amax * amax - 0.9189385332046727 - 1e-12 * (1.0 + amax * amax)
        rhs = np.minimum(log_tau, np.logaddexp(0.0, e1) + log_t)
    result: np.ndarray = above & (lhs >= rhs)
    return result


def _intervals_certified(e0: np.ndarray, e1: np.ndarray, u0: np.ndarray, u1: np.ndarray, c0: np.ndarray,
                         c1: np.ndarray, mu: ArrayLike, gauss: tuple[float, float, float] | None = None) -> np.ndarray:
    """Per interval [e0, e1]: is delta <= delta_mu proven there, given upper bounds exp(u) of delta and
    lower bounds exp(c) of 1 - delta at its ends? ``mu`` is one value, or one per interval.

    Any of four sufficient conditions: monotonicity (delta and delta_mu decrease in eps, so
    delta(e0) <= delta_mu(e1) suffices; likewise 1 - delta(e0) >= 1 - delta_mu(e1), which resolves delta
    near 1), or the chord conditions of :func:`_chord_certified` on delta and on 1 - delta, or on S^1
    (``gauss`` given) the comparison with the Gaussian mechanism (:func:`_gauss_certified`). The error of
    delta_mu and of its complement (1e-12 relative in the logarithm) is allowed for. Each condition is
    monotone in mu: an interval proven at mu is proven at every larger mu.
    """
    mu = np.broadcast_to(np.asarray(mu, float), e0.shape)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ldm = _log_delta_mu(e1, mu)
        ldm = ldm - 1e-12 * np.maximum(1.0, np.abs(ldm))
        lcm = _log_cdelta_mu(e1, mu)
        lcm = lcm + 1e-12 * np.maximum(1.0, np.abs(lcm))
        ok = (u0 <= ldm) | (c0 >= lcm)
    if gauss is not None:
        ok |= _gauss_certified(e0, e1, mu, gauss)
    i = np.flatnonzero(~ok)
    if i.size:
        ok[i] = (_chord_certified(e0[i], e1[i], u0[i], u1[i], mu[i], False)
                 | _chord_certified(e0[i], e1[i], c0[i], c1[i], mu[i], True))
    result: np.ndarray = ok
    return result


def _smallest_certified_k(e0: np.ndarray, e1: np.ndarray, u0: np.ndarray, u1: np.ndarray, c0: np.ndarray,
                          c1: np.ndarray, base: float, r0: float, kmax: int,
                          gauss: tuple[float, float, float] | None) -> np.ndarray:
    """Per interval of :func:`_intervals_certified`: the smallest k in 0..kmax with the interval proven at
    mu = base (1 + r0 2^k), kmax + 1 where none is. One bisection in k for all intervals at once (the
    conditions are monotone in mu); for few intervals, every k in one evaluation."""
    if e0.size * (kmax + 1) <= 65536:
        k = np.arange(kmax + 1)
        r = [np.repeat(x, kmax + 1) for x in (e0, e1, u0, u1, c0, c1)]
        ok = _intervals_certified(r[0], r[1], r[2], r[3], r[4], r[5],
                                  base * (1.0 + r0 * np.exp2(np.tile(k, e0.size))), gauss)
        ok = ok.reshape(e0.size, kmax + 1)
        return np.where(ok.any(axis=1), np.argmax(ok, axis=1), kmax + 1)
    lo = np.zeros(e0.shape, int)
    hi = np.full(e0.shape, kmax + 1)
    while True:
        i = np.flatnonzero(lo < hi)
        if i.size == 0:
            return lo
        mid = (lo[i] + hi[i]) // 2
        ok = _intervals_certified(e0[i], e1[i], u0[i], u1[i], c0[i], c1[i], base * (1.0 + r0 * np.exp2(mid)), gauss)
        hi[i] = np.where(ok, mid, hi[i])
        lo[i] = np.where(ok, lo[i], mid + 1)



#: The certificate of mu: at most this many new points of eps, of which this many by the quadrature profile
#: (0.1 to 5 ms each), and the largest inflation of the search's estimate it tries. Where mu_eps is flat
#: over a long range of eps (sigma <= 0.03 on S^d and H^d) the chord tests need a grid spacing of about
#: sqrt(r) for an inflation r, so the flat curves certify only at r of 1e-5 to 2e-3 within the budget.
#: Any certified value is an upper bound of mu, whatever the estimate: the cap bounds the looseness only.
_CERT_POINTS = 20000
_CERT_QUADRATURE_POINTS = 4000
_CERT_MAX_INFLATION = 1e-2
#: The inflation at which refinement stops (the profile's own error bound may stop it earlier or later).
_CERT_GOOD_ENOUGH = 8e-11


def _certify_mu(manifold: Manifold, sigma: float, D: float, law: RadialLaw, best: float, cond: float,
                e: np.ndarray, ld: np.ndarray) -> float:
    """The smallest mu_up = best (1 + r_k), r_k = r_0 2^k, that the interval certificate
    (:func:`_intervals_certified`) proves on a grid of eps, refined where it fails; then
    delta <= delta_(mu_up) for every eps >= 0 at which the profile's error bound holds, so mu <= mu_up.

    r_0 = 2 err / cond, the profile's error bound err in log delta over the conditioning
    d log delta_mu / d log mu at the search's best eps (nothing finer can be certified), and at least 8 ulps.
    The grid starts from the search's points; on S^1 and S^d it ends at the first double at or above the
    largest loss (delta = 0 from there on, so the last interval closes with delta = 0 by convexity); on
    H^d at the search range, four times Jiang et al.'s Monte Carlo range (docs/manifolds.md, Section 1).
    Each round finds the smallest k certified on the current grid (bisection in k; the conditions are
    monotone in mu), then halves the intervals that fail at k - 2, until k = 0, no interval can be
    split, or the point budget is spent. On S^1 new points use the closed form of
    :func:`_circle_log_pieces` where its subtraction P1(L > eps) - e^eps P1(L < -eps) loses at most a
    factor 2, else the quadrature profile.
    """
    compact = isinstance(manifold, (Circle, Sphere))
    circle = manifold.dim == 1
    err = _circle_log_error(sigma) if circle else _QUADRATURE_LOG_ERROR
    gauss = _circle_gauss_margin(sigma, D) if circle else None
    hi = _largest_loss_parts(sigma, D)[0] if compact else math.inf
    budget = {"all": _CERT_POINTS, "quad": _CERT_QUADRATURE_POINTS}

    def bounds(x: np.ndarray, ldx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(log upper bound of delta, log lower bound of 1 - delta) at x; the quadrature only where needed."""
        lu = np.full(x.shape, np.nan)
        lc = np.full(x.shape, -np.inf)
        need = np.ones(x.shape, bool)
        if circle:
            la, lb, comp = _circle_log_pieces(x, sigma, D)
            with np.errstate(invalid="ignore"):
                fast = ~(lb - la > math.log(0.5) + 2 * err) | ~(la > -np.inf)
                lu = np.where(fast, np.minimum(la + err + log1mexp(np.minimum(lb - la - 2 * err, 0.0)), 0.0), np.nan)
            lc = np.where(fast, np.maximum(comp - err, log1mexp(np.minimum(lu, 0.0))), -np.inf)
            need = ~fast
        if ldx is None and need.any():
            budget["quad"] -= int(need.sum())
            vals, ok = _log_profile(manifold, x[need], sigma, D, law)
            ldx = np.full(x.shape, np.nan)
            ldx[need] = np.where(ok, vals, np.nan)
        if need.any() and ldx is not None:
            qu, qc = _log_delta_bounds(manifold, x[need], sigma, D, law, np.asarray(ldx)[need])
            lu[need], lc[need] = qu, qc
        return lu, lc

    e, lu, lc = _starting_grid(e, ld, hi, compact, circle, bounds)
    last = math.nextafter(hi, math.inf)  # >= the exact largest loss on S^1 and S^d

    def grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points (kept sorted by the ladder) and bounds; an unreliable upper bound replaced by the one to
        its left (delta decreases), and on S^1 and S^d the point past the largest loss, where delta = 0."""
        ee, uu, cc = e, lu, lc
        idx = np.where(np.isnan(uu), 0, np.arange(len(uu)))
        np.maximum.accumulate(idx, out=idx)
        uu = np.where(np.isnan(uu[idx]), 0.0, uu[idx])
        if compact:
            ee, uu, cc = np.append(ee, last), np.append(uu, -np.inf), np.append(cc, 0.0)
        return ee, uu, cc

    r0 = 8.0 * 2.0**-52
    kmax = max(0, math.ceil(math.log2(_CERT_MAX_INFLATION / r0)))

    def ladder(base: float, k_floor: int) -> float | None:
        """The smallest certified base (1 + r0 2^k) after refining the grid, or None. An interval keeps its
        smallest k while its ends and bounds are unchanged; a proof on any grid holds, so k_ok is the
        smallest over the rounds."""
        nonlocal e, lu, lc
        known: dict[tuple[float, ...], int] = {}
        k_ok: int | None = None
        k_good = max(k_floor + 1, math.floor(math.log2(_CERT_GOOD_ENOUGH / r0)))
        for _ in range(60):
            srt = np.argsort(e, kind="stable")
            e, lu, lc = e[srt], lu[srt], lc[srt]
            ee, uu, cc = grid()
            ends = (ee[:-1], ee[1:], uu[:-1], uu[1:], cc[:-1], cc[1:])
            keys = list(zip(*(x.tolist() for x in ends)))
            kk = np.array([known.get(key, -1) for key in keys], int)
            new = np.flatnonzero(kk < 0)
            if new.size:
                sub = [x[new] for x in ends]
                kk[new] = _smallest_certified_k(sub[0], sub[1], sub[2], sub[3], sub[4], sub[5], base, r0, kmax, gauss)
                known.update(zip((keys[j] for j in new), kk[new].tolist()))
            if kk.max() <= kmax:
                k_ok = int(kk.max()) if k_ok is None else min(k_ok, int(kk.max()))
            if k_ok is not None and k_ok <= k_good:
                break
            target = kmax if k_ok is None else max(k_ok - 2, k_floor)
            bad = np.flatnonzero(kk > target)
            bad = bad[bad < len(e) - 1]  # [largest loss - 1 ulp, last] cannot be split
            left, right = e[bad], e[bad + 1]
            split = right - left > 8.0 * np.spacing(np.maximum(right, 1e-300))
            left, right = left[split], right[split]
            if left.size == 0 or left.size > budget["all"] or budget["quad"] <= 0:
                break
            mid = left + 0.5 * (right - left)
            budget["all"] -= mid.size
            mu_, mc_ = bounds(mid)
            e, lu, lc = np.concatenate([e, mid]), np.concatenate([lu, mu_]), np.concatenate([lc, mc_])
        return None if k_ok is None else base * (1.0 + r0 * 2.0**k_ok)

    # below 2 err / cond at the search's best eps the profile's error bound alone forbids a certificate
    # there: refining further is wasted
    mu_up = ladder(best, min(kmax, max(0, math.floor(math.log2(2.0 * err / max(cond, 1e-300) / r0)))))
    if gauss is not None:
        mu_up = _from_gauss_mu(gauss[0], best, mu_up, r0, ladder)
    if mu_up is None:
        raise ArithmeticError(
            f"gdp_mu could not certify an upper bound of mu within {_CERT_MAX_INFLATION:g} relative of the "
            f"estimate {best!r} on {manifold!r} at sigma = {sigma}, sensitivity = {D}"
        )
    return mu_up


def _starting_grid(e: np.ndarray, ld: np.ndarray, hi: float, compact: bool, circle: bool,
                   bounds: Callable[..., tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first grid of :func:`_certify_mu`: the search's points ``e`` (log delta ``ld``) sorted, without
    repeats and below the largest loss ``hi``, with their ``bounds``; on S^1 and S^d also the last double
    below ``hi`` and, on S^d, the start of the part held constant."""
    order = np.argsort(e, kind="stable")
    e, ld = e[order], ld[order]
    keep = np.concatenate([[True], np.diff(e) > 0]) & (e <= hi)
    e, ld = e[keep], ld[keep]
    lu, lc = bounds(e, ld)
    if compact:
        extra = np.setdiff1d(np.array([math.nextafter(hi, 0.0)] + ([_SPHERE_TOP * hi] if not circle else [])), e)
        if extra.size:
            xu, xc = bounds(extra)
            e, lu, lc = np.concatenate([e, extra]), np.concatenate([lu, xu]), np.concatenate([lc, xc])
    return e, lu, lc


def _from_gauss_mu(mu_gauss: float, best: float, mu_up: float | None, r0: float,
                   ladder: Callable[[float, int], float | None]) -> float | None:
    """On S^1, the certificate tried again from mu_G = D / sigma (``mu_gauss``) when the search's ``best``
    is a little below it; the smaller of the two certified values (None if neither)."""
    mu_g = mu_gauss * (1.0 + 4.0 * 2.0**-52)
    if best <= mu_g <= best * (1.0 + _CERT_MAX_INFLATION) and (mu_up is None or mu_g * (1.0 + r0) < mu_up):
        alt = ladder(mu_g, 0)
        mu_up = alt if mu_up is None or (alt is not None and alt < mu_up) else mu_up
    return mu_up
