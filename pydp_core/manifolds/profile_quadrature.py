"""The privacy profile on S^d and H^d (d >= 2) by one-dimensional quadrature.

By symmetry the integrals of Jiang et al. 2023, Theorem 4.1 reduce to integrals over the distance t from
the first footpoint of an incomplete beta function in the angle at it (docs/manifolds.md, Section 3):

- :func:`_loss_tails`: log P1(L > s) and log P1(L < -s), Gauss-Legendre between the radial law's
  breakpoints and the kinks of the integrand (:func:`_t_pieces`), pieces that cannot add to the log-sum-exp
  skipped (:func:`_tail_sums`); :func:`_loss_log_complement`: log(1 - delta), a sum, for delta near 1;
- :func:`_direct_log_profile`: delta = E[(1 - e^(eps - L))_+], an integral of a non-negative function
  (nested quadrature in the angle), where the two tails would cancel (small shifts, eps near the
  largest loss);
- :func:`_antipode_log_profile`: on S^d, polar coordinates about the antipode of the second footpoint,
  for eps within 1e-3 of the largest loss.

The stable forms of the loss and of the angle fractions (:func:`_xfrac`, :func:`_loss_at`,
:func:`_antipode_terms`) keep their relative accuracy as D -> 0. Validated against 50-digit references
(``tests/manifolds/test_manifolds_mu.py``, ``tests/manifolds/test_manifolds_small_shift.py``).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special as sps

from .._logspace import lse_groups, lse_rows
from .loss import _PI_FRACTION
from .radial import _LOG_WU, _U, _WU, RadialLaw, log_radial_factor, radial_factor


def _xfrac_den(kind: int, t: np.ndarray, D: float) -> np.ndarray:
    """The denominator S(t) S(D) of :func:`_xfrac` (its logarithm on H^d), shared by both tails."""
    with np.errstate(divide="ignore"):
        if kind == 1:
            return log_radial_factor(1, t) + float(log_radial_factor(1, np.array(D)))
        result: np.ndarray = radial_factor(kind, t) * radial_factor(kind, np.array(D, float))
        return result


def _sine_product(kind: int, u: np.ndarray, v: np.ndarray, den: np.ndarray) -> np.ndarray:
    """S(u) S(v) / den for den = :func:`_xfrac_den` (on H^d in log space); u and v are overwritten."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if kind == 1:
            su, sv = np.sign(u), np.sign(v)
            result: np.ndarray = su * sv * np.exp(log_radial_factor(1, np.abs(u)) + log_radial_factor(1, np.abs(v)) - den)
            return result
        if kind == 0:
            np.sin(u, out=u)
            np.sin(v, out=v)
        u *= v
        u /= den
        return u


def _xfrac(kind: int, t: np.ndarray, r: np.ndarray, D: float, dr: np.ndarray, den: np.ndarray,
           accurate: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """x = (1 + c)/2 and xc = 1 - x, c the cosine of the angle at which d(eta2, y) = r, given dr = r - t
    computed without cancellation and den = :func:`_xfrac_den`, by the stable product forms
    x = S((t + D + r)/2) S((D - dr)/2) / den and xc = S((r + t - D)/2) S((dr + D)/2) / den (arrays of the
    shape of t). With ``accurate`` "x" (or "xc") only that fraction is formed everywhere, the other only
    where the first exceeds 1/2 and elsewhere as 1 minus the first: all that :func:`_beta_cdf` uses."""

    def frac(which: str, at: Any) -> np.ndarray:
        tt, rr, dd = t[at], r[at], dr[at]
        if which == "x":
            u, v = tt + D, D - dd  # the sums in the order (t + D + r)/2
            u += rr
        else:
            u, v = tt + rr, dd + D  # (r + t - D)/2
            u -= D
        u *= 0.5
        v *= 0.5
        return _sine_product(kind, u, v, den[at])

    if accurate is None:
        return frac("x", ...), frac("xc", ...)
    other = "xc" if accurate == "x" else "x"
    first = frac(accurate, ...)
    second = 1.0 - first
    big = ~(first <= 0.5)
    if big.any():
        second[big] = frac(other, big)
    return (first, second) if accurate == "x" else (second, first)


def _beta_cdf(a: float, x: np.ndarray, xc: np.ndarray) -> np.ndarray:
    """I_x(a, a) with x + xc = 1, clipped to [0, 1]; from the smaller of x and xc (I_x = 1 - I_xc by
    symmetry), which keeps the relative accuracy in both tails. Closed forms for a = 1/2
    ((2/pi) arcsin sqrt(x), S^2 and H^2), a = 1 (x, S^3 and H^3) and a = 2 (x^2 (3 - 2x), S^5 and H^5)."""
    x, xc = np.asarray(x, float), np.asarray(xc, float)
    lower = x <= 0.5
    u = np.clip(np.where(lower, x, xc), 0.0, 1.0)
    if a == 0.5:
        v = np.arcsin(np.sqrt(u)) * (2.0 / math.pi)
    elif a == 1.0:
        v = u
    elif a == 2.0:
        v = u * u * (3.0 - 2.0 * u)
    else:
        v = sps.betainc(a, a, u)
    out = np.where(lower, v, 1.0 - v)
    out[xc <= 0] = 1.0
    out[x <= 0] = 0.0
    result: np.ndarray = out
    return result


def _t_pieces(law: RadialLaw, D: float, s: np.ndarray, reach: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The quadrature pieces in t of positive width between the radial law's breakpoints and the kinks of
    the integrands (where c = +-1 at r^2 = t^2 +- 2 sigma^2 s): (row, lo, hi), ``row`` the index in s of
    each piece (sorted; every s has pieces).

    The pieces end at the radial law's range ``tmax``; on H^d with ``reach`` they go on to the last kink,
    D/2 + sigma^2 s / D, plus the law's width: there 1 - delta can have its mass only beyond D/2 (large
    D / sigma), e^-1800 below the law's own and yet the whole of it.
    """
    q = law.sigma * law.sigma * s[:, None]
    T = np.full(q.shape, law.tmax)
    if reach and law.kind == 1:
        T = np.maximum(T, D / 2 + q / D + (law.tmax - law.mode))
    base = np.unique(np.clip(np.array(law._breakpoints()), 0.0, law.tmax))
    kinks = [D / 2 - q / D, q / D - D / 2, D / 2 + q / D, np.sqrt(2 * q)]
    if law.kind in (0, 3):
        E = 2 * math.pi - D
        kinks += [E / 2 - q / E, E / 2 + q / E, np.full(q.shape, math.pi - D)]
    # beyond the radial law's breakpoints (34 scales from its mode) a kink can start the integrand in the
    # far tail (large eps at small sigma), where it falls on the Gaussian's scale sigma^2 / t <= sigma:
    # geometric steps from there (or from the kink, if further out) up to T
    covered = law.mode + 34.0 * law.scale
    after = []
    if covered < T.max():
        steps = law.sigma * 2.0 ** np.arange(-3, max(1, math.ceil(math.log2(T.max() / law.sigma))) + 1)
        after = [np.broadcast_to(covered + steps, (len(s), len(steps)))]
        after += [np.maximum(k, covered)[..., None] + steps for k in kinks if np.any(k > covered)]
        after = [np.reshape(a, (len(s), -1)) for a in after]
    bps = np.concatenate([np.broadcast_to(base, (len(s), len(base))), T] + list(kinks) + after, axis=1)
    # the breakpoints clipped onto 0 or T, or coinciding, leave pieces of zero width: dropped
    return _pieces(np.clip(bps, 0.0, T))


def _piece_nodes(law: RadialLaw, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes t on the pieces [lo, hi] (one row each) and lw, the log of weight x
    unnormalised radial density."""
    width = (hi - lo)[:, None]
    t = lo[:, None] + width * _U
    with np.errstate(divide="ignore"):
        return t, law.logf(t) + np.log(width * _WU)


#: exp(-750) is 0 in double precision (the smallest subnormal is e^-744.4): a term more than this below the
#: largest of a log-sum-exp adds exactly nothing to it
_LOG_NEGLIGIBLE = 750.0


#: eps values per block of the tail quadratures (bounded memory, node arrays that stay in cache)
_TAIL_BLOCK = 64


def _tail_terms(law: RadialLaw, D: float, q: np.ndarray, t: np.ndarray, lw: np.ndarray,
                tail: str) -> np.ndarray:
    """The log terms (log weight x density x conditional probability) at nodes t with log weights lw, q =
    sigma^2 s against t, of one tail of :func:`_loss_tails`: P1(L > s) ("upper"), P1(L <= s) ("inside")
    or P1(L < -s) ("lower"); -inf at nodes of zero weight."""
    a = law.k / 2.0
    den = _xfrac_den(law.kind, t, D)
    if tail == "lower":
        r, dr = _stable_dr(t, q, -1.0)
        x, xc = _xfrac(law.kind, t, r, D, dr, den, "xc")
        p = _beta_cdf(a, xc, x)
        p[t * t <= 2 * q] = 0.0
    else:
        r, dr = _stable_dr(t, q, 1.0)
        if tail == "inside":
            x, xc = _xfrac(law.kind, t, r, D, dr, den, "xc")
            p = _beta_cdf(a, xc, x)
        else:
            x, xc = _xfrac(law.kind, t, r, D, dr, den, "x")
            p = _beta_cdf(a, x, xc)
    with np.errstate(divide="ignore"):
        # nodes of zero weight drop out, whatever their integrand (0/0 in the fractions at t = 0)
        return np.where(lw > -np.inf, lw + np.log(p), -np.inf)


def _tail_sums(law: RadialLaw, D: float, s: np.ndarray, tails: tuple[str, ...]) -> list[np.ndarray]:
    """log of the quadrature sums of the :func:`_tail_terms` of ``tails`` (unnormalised), one per s.

    Pieces all of whose terms lie more than ``_LOG_NEGLIGIBLE`` below the largest term of their row add
    nothing to its log-sum-exp (their exponentials underflow to 0, with 4.8 to spare for rounding). The
    terms at the middle node of every piece give a lower bound of that largest term, and a term is at
    most its log weight (the probabilities are at most 1), which is at most the log density's largest
    value on the piece (the density is log-concave: at the end nearer the mode, or the mode) plus the
    largest log weight. Each tail skips the pieces where that is below the bound less
    ``_LOG_NEGLIGIBLE``, the lower tail also those with t^2 <= 2 sigma^2 s at all nodes (r imaginary,
    probability 0): the same sums, without most of the far tail at small sigma."""
    row, lo, hi = _t_pieces(law, D, s, reach="inside" in tails)
    q = law.sigma * law.sigma * s[row][:, None]
    start, t_mid, lw_mid, lw_top = _piece_bounds(law, row, lo, hi)
    keeps = []
    for tail in tails:
        keep = _kept_pieces(row, start, lw_top, _tail_terms(law, D, q, t_mid, lw_mid, tail)[:, 0])
        if tail == "lower":  # t increases along a piece: its last node decides
            last = lo + (hi - lo) * _U[-1]
            keep &= ~(last * last <= 2 * q[:, 0])
            keep[start] = True
        keeps.append(keep)
    need = np.flatnonzero(np.logical_or.reduce(keeps))
    row, q = row[need], q[need]
    t, lw = _piece_nodes(law, lo[need], hi[need])
    sums = []
    for tail, keep in zip(tails, keeps):
        k = keep[need]
        sums.append(lse_groups(_tail_terms(law, D, q[k], t[k], lw[k], tail), row[k]))
    return sums


def _piece_bounds(law: RadialLaw, row: np.ndarray, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, t_mid, lw_mid, lw_top) for the pieces of :func:`_t_pieces`: where each row's pieces start,
    the middle node of each piece with its log weight (one column), and an upper bound of the log weight of
    every node of the piece: the log density's largest value on it (log-concave: at the end nearer the
    mode, or the mode) plus the largest log weight."""
    start = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    width = hi - lo
    with np.errstate(divide="ignore"):
        top = np.where(hi <= law.mode, law.logf(hi), np.where(lo >= law.mode, law.logf(lo), law.lmax))
        lw_top = top + np.log(width * np.max(_WU))
        mid = lo + width * _U[16]
        return start, mid[:, None], (law.logf(mid) + np.log(width * _WU[16]))[:, None], lw_top


def _kept_pieces(row: np.ndarray, start: np.ndarray, lw_top: np.ndarray, mid_terms: np.ndarray) -> np.ndarray:
    """The pieces that can add to their row's log-sum-exp: those whose bound ``lw_top`` on every term is
    within ``_LOG_NEGLIGIBLE`` of the row's largest middle-node term (a lower bound of its largest term);
    the rest underflow to 0 in it. A NaN term keeps every piece of its row; every row keeps its first piece,
    so that the groups stay numbered without gaps."""
    bound = np.maximum.reduceat(mid_terms, start)
    bound = np.where(np.isnan(bound), -np.inf, bound)
    keep = lw_top >= bound[row] - _LOG_NEGLIGIBLE
    keep[start] = True
    result: np.ndarray = keep
    return result


def _loss_tails(law: RadialLaw, D: float, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P1(L > s) and log P1(L < -s) for the privacy loss L = (d2^2 - d1^2)/(2 sigma^2) under eta1.

    t = d(eta1, y) follows the radial law and the angle phi at eta1 between y and eta2 is independent with
    (1 + cos phi)/2 ~ Beta(a, a), a = (d-1)/2; d(eta2, y) > r iff cos phi < c(t, r), so each tail is a
    one-dimensional integral over t of an incomplete beta function. Kinks of the integrand (where
    c = +-1) are quadrature breakpoints.
    """
    s = np.atleast_1d(np.asarray(s, float))
    if s.size > _TAIL_BLOCK:
        parts = [_loss_tails(law, D, s[i:i + _TAIL_BLOCK]) for i in range(0, s.size, _TAIL_BLOCK)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    up, low = _tail_sums(law, D, s, ("upper", "lower"))
    return up - law._log_norm_t, low - law._log_norm_t


def _loss_log_complement(law: RadialLaw, D: float, eps: np.ndarray) -> np.ndarray:
    """log(1 - delta(eps)) on S^d and H^d (d >= 2): 1 - delta = P1(L <= eps) + e^eps P1(L < -eps), a sum,
    so it keeps its relative accuracy however close delta is to 1. P1(L <= eps) is the quadrature of
    :func:`_loss_tails` with the complementary incomplete beta function, P(cos phi >= c) = I_(1-x)(a, a)."""
    eps = np.atleast_1d(np.asarray(eps, float))
    if eps.size > _TAIL_BLOCK:
        return np.concatenate([_loss_log_complement(law, D, eps[i:i + _TAIL_BLOCK])
                               for i in range(0, eps.size, _TAIL_BLOCK)])
    inside, below = _tail_sums(law, D, eps, ("inside", "lower"))
    result: np.ndarray = np.minimum(np.logaddexp(inside - law._log_norm_t, eps + below - law._log_norm_t), 0.0)
    return result


def _stable_dr(t: np.ndarray, q: np.ndarray, sign: float) -> tuple[np.ndarray, np.ndarray]:
    """r = sqrt(t^2 + 2 sign q) and r - t = 2 sign q / (t + r), without cancellation at small q."""
    r2 = t * t + 2.0 * sign * q
    r = np.sqrt(np.maximum(r2, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        dr = np.where(t + r > 0, 2.0 * sign * q / (t + r), 0.0)
    return r, dr


def _loss_at(kind: int, t: np.ndarray, s2: np.ndarray, c2: np.ndarray, D: float, sigma: float) -> np.ndarray:
    """The privacy loss L = (d'^2 - t^2) / (2 sigma^2) at distance t from eta and angle phi at eta between
    y and eta' (s2 = sin^2(phi/2), c2 = cos^2(phi/2)), with d' = d(eta', y).

    Haversine forms: sin^2(d'/2) = sin^2((t - D)/2) + sin t sin D s2 (sinh on H^d), and
    sin((d' - t)/2) sin((d' + t)/2) = sin(D/2) [2 cos(D/2) sin t s2 - sin(t - D/2)] give d' - t with
    relative accuracy however small D is, so L keeps its digits as D -> 0. On H^d the hyperbolic
    functions are scaled by e^-t, so that nothing overflows.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if kind == 1:
            st = -np.expm1(-2.0 * t) / 2.0  # sinh t e^-t
            h = (np.exp(-D / 2) * np.expm1(D - t) / 2.0) ** 2 + st * math.sinh(D) * s2  # sinh^2(d'/2) e^-t
            lr = 0.5 * np.log(h) + t / 2.0  # log sinh(d'/2)
            dp = 2.0 * np.where(lr > 20.0, math.log(2.0) + lr, np.arcsinh(np.exp(np.minimum(lr, 20.0))))
            x = math.sinh(D / 2) * (2.0 * math.cosh(D / 2) * st * s2 - (math.exp(-D / 2) - np.exp(D / 2 - 2 * t)) / 2.0)
            den = np.exp((dp - t) / 2.0) * (-np.expm1(-(dp + t))) / 2.0  # sinh((d' + t)/2) e^-t
            delta = 2.0 * np.arcsinh(x / den)
        else:
            sst = np.sin(t) * math.sin(D)
            h = np.sin((t - D) / 2) ** 2 + sst * s2
            hc = np.cos((t + D) / 2) ** 2 + sst * c2
            dp = 2.0 * np.arctan2(np.sqrt(h), np.sqrt(hc))
            x = math.sin(D / 2) * (2.0 * math.cos(D / 2) * np.sin(t) * s2 - np.sin(t - D / 2))
            delta = 2.0 * np.arcsin(np.clip(x / np.sin((dp + t) / 2), -1.0, 1.0))
        result: np.ndarray = (delta / sigma) * ((delta + 2.0 * t) / sigma) / 2.0
        return result


def _direct_log_profile(law: RadialLaw, D: float, eps: np.ndarray) -> np.ndarray:
    """log delta(eps) as the integral of a non-negative function: delta(eps) = E_P[(1 - e^(eps - L))_+].

    No subtraction of two tails, so no digits are lost when delta is far below P(L > eps) (small shifts
    D / sigma, eps near the largest loss). In polar coordinates about eta the expectation is over t (the
    radial law) and the angle phi at eta (density sin^(d-2) phi on [0, pi]; on S^1 the two directions);
    {L > eps} is phi > phi_c(t), with sin^2(phi_c / 2) the fraction 1 - x of :func:`_xfrac`. Gauss-Legendre
    in phi on [phi_c, pi], nested in the quadrature in t of :func:`_loss_tails` (same breakpoints).
    """
    eps = np.atleast_1d(np.asarray(eps, float))
    if eps.size > 16:  # the node arrays are eps.size x nodes x 32: bounded memory
        return np.concatenate([_direct_log_profile(law, D, eps[i:i + 16]) for i in range(0, eps.size, 16)])
    row, lo, hi = _t_pieces(law, D, eps)
    # pieces whose terms all underflow in the log-sum-exp are skipped as in :func:`_tail_sums`; a term is
    # at most its t weight plus the largest angular log weight (1 - e^(eps - L) <= 1)
    start, t_mid, lw_mid, lw_top = _piece_bounds(law, row, lo, hi)
    mid_terms = _direct_terms(law, D, eps[row], t_mid, lw_mid).reshape(len(row), -1).max(axis=1)
    keep = np.flatnonzero(_kept_pieces(row, start, lw_top + _direct_angle_log_weight_max(law.k + 1), mid_terms))
    t, lw = _piece_nodes(law, lo[keep], hi[keep])
    v = _direct_terms(law, D, eps[row[keep]], t, lw)
    return lse_groups(v.reshape(len(keep), -1), row[keep]) - law._log_norm_t


def _direct_angle_log_weight_max(dim: int) -> float:
    """An upper bound of the angular log weights of :func:`_direct_terms`: the width (at most pi) times the
    largest Gauss-Legendre weight times the largest angular density 1 / B(1/2, (d-1)/2) (d >= 2); log 1/2
    on the circle."""
    if dim == 1:
        return math.log(0.5)
    return math.log(math.pi * float(np.max(_WU))) - math.log(sps.beta(0.5, (dim - 1) / 2.0))


def _direct_terms(law: RadialLaw, D: float, eps: np.ndarray, t: np.ndarray, lw: np.ndarray) -> np.ndarray:
    """The log terms of :func:`_direct_log_profile` at t nodes (rows of t, lw; ``eps`` one per row) and the
    angle nodes on [phi_c, pi]: log weight in t + log weight in phi + log(1 - e^(eps - L))_+, shape
    (rows, t nodes, angle nodes); -inf where a weight is 0."""
    kind, sig, dim = law.kind, law.sigma, law.k + 1
    q = sig * sig * eps[:, None] * np.ones_like(t)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if dim == 1:  # the circle: phi = 0 (towards eta') or pi, each with probability 1/2
            phi = np.broadcast_to(np.array([0.0, math.pi]), t.shape + (2,))
            lwphi = np.broadcast_to(np.full(2, math.log(0.5)), phi.shape)
        else:
            r, dr = _stable_dr(t, q, 1.0)
            x, xc = _xfrac(kind, t, r, D, dr, _xfrac_den(kind, t, D))
            pc = 2.0 * np.arctan2(np.sqrt(np.clip(xc, 0.0, 1.0)), np.sqrt(np.clip(x, 0.0, 1.0)))
            width = (math.pi - pc)[..., None]
            phi = pc[..., None] + width * _U
            lwphi = np.log(width * _WU) - math.log(sps.beta(0.5, (dim - 1) / 2.0))
            if dim > 2:
                lwphi = lwphi + (dim - 2) * np.log(np.sin(phi))
        loss = _loss_at(kind, t[..., None], np.sin(phi / 2) ** 2, np.cos(phi / 2) ** 2, D, sig)
        g = -np.expm1(eps[:, None, None] - loss)
        v = lw[..., None] + lwphi + np.log(np.maximum(g, 0.0))
        return np.where((lw[..., None] > -np.inf) & (lwphi > -np.inf), v, -np.inf)  # zero weight drops out


def _pieces(bps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of positive width between the breakpoints of each row (clipped and sorted here):
    (row, lo, hi), grouped by row."""
    bps = np.sort(bps, axis=1)
    row, col = np.nonzero(bps[:, 1:] > bps[:, :-1])
    return row, bps[row, col], bps[row, col + 1]


_GEO = 2.0 ** np.arange(-3, 35)  # geometric steps from a piece end, in units of the local scale


def _antipode_terms(D: float, rho: np.ndarray, s2: np.ndarray, c2: np.ndarray,
                    sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """On S^d, at distance rho from the antipode A of eta' and angle psi at A from the direction of eta
    (s2 = sin^2(psi/2), c2 = cos^2(psi/2)): the change dt = t - t0 of the distance t to eta
    (t0 = d(eta, A) = pi - D), and the drop eps_max - L = [dt (t + t0) + rho (2 pi - rho)] / (2 sigma^2) of
    the privacy loss (d(eta', y) = pi - rho).

    For D >= pi/2 from eta's side, with haversine forms (as in :func:`_loss_at`):
    sin^2(t/2) = sin^2((t0 - rho)/2) + sin t0 sin rho s2 and
    sin(dt/2) sin((t + t0)/2) = sin(rho/2) [2 cos(rho/2) sin t0 s2 - sin(t0 - rho/2)].
    For D < pi/2 from the side of -eta (at distance D from A, in the direction psi = pi), with
    tau = d(-eta, y) = pi - t: sin^2(tau/2) = sin^2((D - rho)/2) + sin D sin rho c2, the triangle defect
    e = D + rho - tau >= 0 from sin(e/2) sin((D + rho + tau)/2) = sin D sin rho s2, dt = e - rho and
    2 sigma^2 (eps_max - L) = e (2 pi - D - tau) + rho (D + tau - rho), a sum of non-negative terms. Each
    form divides by the sine of an angle that stays away from pi on its side, so dt and the drop keep
    their relative accuracy as rho -> 0.
    """
    if math.pi / 2 <= D:
        t0, st0 = math.pi - D, math.sin(D)
        sst = st0 * np.sin(rho)
        h = np.sin((t0 - rho) / 2) ** 2 + sst * s2
        hc = np.cos((t0 + rho) / 2) ** 2 + sst * c2
        t = 2.0 * np.arctan2(np.sqrt(h), np.sqrt(hc))
        x = np.sin(rho / 2) * (2.0 * np.cos(rho / 2) * st0 * s2 - np.sin(t0 - rho / 2))
        dt = 2.0 * np.arcsin(np.clip(x / np.sin((t + t0) / 2), -1.0, 1.0))
        return dt, (dt * (t + t0) + rho * (2.0 * math.pi - rho)) / (2.0 * sigma * sigma)
    ssd = math.sin(D) * np.sin(rho)
    h = np.sin((D - rho) / 2) ** 2 + ssd * c2
    hc = np.cos((D + rho) / 2) ** 2 + ssd * s2
    tau = 2.0 * np.arctan2(np.sqrt(h), np.sqrt(hc))
    e = 2.0 * np.arcsin(np.clip(ssd * s2 / np.sin((D + rho + tau) / 2), 0.0, 1.0))
    drop = (e * (2.0 * math.pi - D - tau) + rho * np.maximum(D + tau - rho, 0.0)) / (2.0 * sigma * sigma)
    return e - rho, drop


def _antipode_log_profile(law: RadialLaw, D: float, g: np.ndarray) -> np.ndarray:
    """log delta on S^d (d >= 2) at the gaps g = eps_max - eps > 0, in geodesic polar coordinates
    (rho, psi) about the antipode A of eta' (docs/manifolds.md, Section 3).

    Along every geodesic ray from A the loss decreases while it is positive (dL/drho <= (t - (pi - rho))
    / sigma^2 < 0 where L > 0), so {L > eps} is star-shaped about A: rho < rho_c(psi), with rho_c the root
    of eps_max - L = g (bisection). Then

        delta = int_0^pi [sin^(d-2) psi / B(1/2, (d-1)/2)] int_0^rho_c sin^(d-1) rho e^(-t^2/(2 sigma^2))
                (1 - e^-(g - (eps_max - L))) drho dpsi / Z_t,

    Z_t the radial normaliser. The gap g is exact (formed from the exact largest loss), the loss drop
    and t - t0 keep their relative accuracy, and nothing is subtracted, so delta keeps its digits however
    close eps comes to eps_max. The common factor e^(-t0^2/(2 sigma^2)) is taken out in exact arithmetic.
    Gauss-Legendre in rho = rho_c v on pieces split geometrically from both ends (at the scales of the
    factor, 1/g in v, and of the Gaussian), nested in Gauss-Legendre in psi split geometrically from
    psi = 0 (where the Gaussian varies fastest).
    """
    sig, dim = law.sigma, law.k + 1
    t0 = math.pi - D
    exact = (_PI_FRACTION - Fraction(D)) ** 2 / (2 * Fraction(sig) ** 2)
    c0_hi = float(exact)
    c0_lo = float(exact - Fraction(c0_hi))
    log_beta = math.log(sps.beta(0.5, (dim - 1) / 2.0))
    out = np.empty(len(g))
    for i, gi in enumerate(np.asarray(g, float)):
        # psi: the Gaussian factor varies like alpha (1 - cos psi), alpha = t0 rho_c(0) / sigma^2,
        alpha = t0 * gi / D
        psi_scale = min(1.0, 1.0 / math.sqrt(alpha)) if alpha > 0 else 1.0
        # and for small D the cap's extent sigma^2 g / (pi - t0 cos psi) peaks in psi < sqrt(2 D / pi)
        pb = np.concatenate([[0.0, math.pi], np.clip(psi_scale * _GEO[:20], 0.0, math.pi),
                             np.clip(math.sqrt(D) * _GEO[:24], 0.0, math.pi)])[None, :]
        _, plo, phi_ = _pieces(pb)
        psi = (plo[:, None] + (phi_ - plo)[:, None] * _U).reshape(-1)
        lw_psi = (np.log(phi_ - plo)[:, None] + _LOG_WU).reshape(-1) - log_beta
        if dim > 2:
            lw_psi = lw_psi + (dim - 2) * np.log(np.sin(psi))
        s2, c2 = np.sin(psi / 2) ** 2, np.cos(psi / 2) ** 2
        # rho_c(psi): bracket from the first-order root sigma^2 g / (pi - t0 cos psi), then bisection
        lo = np.zeros_like(psi)
        hi = np.minimum(2.0 * sig * sig * gi / (math.pi - t0 * np.cos(psi)), math.pi)
        with np.errstate(invalid="ignore", divide="ignore"):
            for _ in range(60):
                short = _antipode_terms(D, hi, s2, c2, sig)[1] < gi
                if not short.any() or np.all(hi[short] >= math.pi):
                    break
                hi = np.where(short, np.minimum(2.0 * hi, math.pi), hi)
            for _ in range(64):
                mid = 0.5 * (lo + hi)
                below = _antipode_terms(D, mid, s2, c2, sig)[1] < gi
                lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        rho_c = 0.5 * (lo + hi)
        # rho = rho_c v: scales in v of the Gaussian (sigma / rho_c near t = 0, sigma^2 / (t rho_c) on its
        # flank) and of the factor 1 - e^-(g - drop) near v = 1 (1/g)
        gs = np.minimum(1.0, sig * sig / (np.maximum(t0, sig) * rho_c))
        fs = np.minimum(gs, 1.0 / gi)
        vb = np.concatenate([np.zeros((len(psi), 1)), np.ones((len(psi), 1)),
                             gs[:, None] * _GEO, 1.0 - fs[:, None] * _GEO], axis=1)
        grp, vlo, vhi = _pieces(np.clip(vb, 0.0, 1.0))
        v = vlo[:, None] + (vhi - vlo)[:, None] * _U
        rho = rho_c[grp][:, None] * v
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            dt, drop = _antipode_terms(D, rho, s2[grp][:, None], c2[grp][:, None], sig)
            # e^(-t^2/(2 sigma^2)) = e^(-c0) e^(-dt (2 t0 + dt) / (2 sigma^2))
            val = (-dt * (2.0 * t0 + dt) / (2.0 * sig * sig) + (dim - 1) * np.log(np.sin(rho))
                   + np.log(-np.expm1(np.minimum(drop - gi, 0.0)))
                   + np.log((vhi - vlo) * rho_c[grp])[:, None] + _LOG_WU + lw_psi[grp][:, None])
        inner = lse_groups(val, grp)
        out[i] = lse_rows(inner) - c0_hi - c0_lo - law._log_norm_t
    return out
