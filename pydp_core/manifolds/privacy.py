"""The privacy profile and the exact GDP parameter mu of the Riemannian Gaussian mechanism.

The mechanism is mu-GDP iff delta(eps) <= delta_mu(eps) for all eps >= 0 (Dong, Roth and Su 2022), with
delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). On the circle delta(eps) has a closed
form (Jiang et al. 2023, Corollary 3.2.1, corrected); on S^d and H^d the integrals of their Theorem 4.1
reduce by symmetry to one-dimensional integrals (``docs/manifolds.md``).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, overload

import numpy as np
from numpy.typing import ArrayLike
from scipy import special as sps

from .. import _core
from .._validation import (
    check_allocation,
    check_epsilon,
    check_int,
    check_open_unit,
    check_positive_scalar,
)
from .radial import _U, _WU, RadialLaw, log_radial_factor, radial_factor
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


_GL16_X, _GL16_W = np.polynomial.legendre.leggauss(16)


def _log_ndtr_diff(u: np.ndarray, l: np.ndarray, width: Optional[np.ndarray] = None) -> np.ndarray:
    """log(Phi(u) - Phi(l)) for u >= l, without cancellation anywhere (-inf when u <= l); ``width``, if
    given, is u - l known more accurately than the difference of the rounded u and l.

    Narrow intervals ((u - l) max(1, |u|, |l|) < 1, where log phi varies by less than about 1 on [l, u])
    by 16-point Gauss-Legendre of phi, which keeps the relative accuracy however close u and l are;
    otherwise a difference of two tails on the same side of 0 (losing at most a digit at that width),
    or for l < 0 < u the complement of the two outer tails or, when those are not small, a sum of erfs.
    """
    u, l = np.broadcast_arrays(np.asarray(u, float), np.asarray(l, float))
    w = np.broadcast_to(u - l if width is None else np.asarray(width, float), u.shape)
    out = np.full(u.shape, -np.inf)
    ok = (u > l) & (w > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = ok & (w * np.maximum(1.0, np.maximum(np.abs(u), np.abs(l))) < 1.0)
    upper = ok & ~narrow & (l >= 0)  # Phi(-l) - Phi(-u)
    lower = ok & ~narrow & (u <= 0)
    mid = ok & ~narrow & ~upper & ~lower
    if narrow.any():
        half = w[narrow][:, None] / 2
        x = (u[narrow][:, None] + l[narrow][:, None]) / 2 + half * _GL16_X
        v = -0.5 * x * x - 0.9189385332046727 + np.log(half * _GL16_W)
        m = np.max(v, axis=1, keepdims=True)
        out[narrow] = np.log(np.sum(np.exp(v - m), axis=1)) + m[:, 0]
    if upper.any():
        a, b = _log_ndtr(-l[upper]), _log_ndtr(-u[upper])
        out[upper] = a + _log1mexp(b - a)
    if lower.any():
        a, b = _log_ndtr(u[lower]), _log_ndtr(l[lower])
        out[lower] = a + _log1mexp(b - a)
    if mid.any():
        tails = np.exp(_log_ndtr(l[mid])) + np.exp(_log_ndtr(-u[mid]))
        with np.errstate(divide="ignore"):
            erfs = np.log((sps.erf(u[mid] / math.sqrt(2.0)) + sps.erf(-l[mid] / math.sqrt(2.0))) / 2.0)
        out[mid] = np.where(tails < 0.5, np.log1p(-tails), erfs)
    return out


def _log_delta_mu(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """log delta_mu(eps) = log[(Phi(a) - Phi(b)) - (e^eps - 1) Phi(b)], a, b = -eps/mu +- mu/2.

    Grouped so that small mu loses no digits: Phi(a) - Phi(b) is formed without cancellation
    (:func:`_log_ndtr_diff`), and the remaining subtraction never cancels more than
    Phi(a) - e^eps Phi(b) does.
    """
    eps, mu = np.broadcast_arrays(np.asarray(eps, float), np.asarray(mu, float))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        a = -eps / mu + mu / 2.0
        b = -eps / mu - mu / 2.0
        head = _log_ndtr_diff(a, b, mu)
        log_em1 = eps + _log1mexp(-eps)  # log(e^eps - 1), -inf at eps = 0
        return head + _log1mexp(np.minimum(log_em1 + _log_ndtr(b) - head, 0.0))


def mu_for_log_delta(eps: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
    """The mu with delta_mu(eps) = delta: safeguarded Newton in log mu (delta_mu increases with mu and
    d delta_mu / d mu = phi(-eps/mu + mu/2), since e^eps phi(-eps/mu - mu/2) = phi(-eps/mu + mu/2)).

    The bracket comes from the data: d delta_mu / d mu <= phi(0) gives delta <= mu / sqrt(2 pi), so
    mu >= sqrt(2 pi) delta; the upper end is max(500, 2 sqrt(2 eps) + 40): there eps / mu <= mu / 8, so
    a = -eps/mu + mu/2 >= 15 and e^eps Phi(b) <= phi(a) / |b| <= phi(15), and delta_mu(eps) rounds to 1,
    above every delta below 1 in double.
    """
    eps = np.atleast_1d(np.asarray(eps, float)).copy()
    log_delta = np.broadcast_to(np.asarray(log_delta, float), eps.shape).copy()
    dead = ~(log_delta > -np.inf)
    ld = np.where(dead, -1.0, np.minimum(log_delta, -1e-300))
    lo = ld + 0.5 * math.log(2 * math.pi) - 1e-9
    hi = np.log(np.maximum(500.0, 2.0 * np.sqrt(2.0 * np.maximum(eps, 0.0)) + 40.0))
    x = np.clip(0.0, lo, hi)
    for it in range(200):
        mu = np.exp(x)
        with np.errstate(divide="ignore", over="ignore"):
            a = -eps / mu + mu / 2.0
        f = _log_delta_mu(eps, mu) - ld
        lo = np.where(f < 0, x, lo)
        hi = np.where(f < 0, hi, x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a step out of the bracket bisects
            slope = np.exp(x - 0.5 * a * a - 0.9189385332046727 - (f + ld))
            step = np.where(slope > 0, -f / slope, np.nan)
        nx = x + step
        bad = ~((nx > lo) & (nx < hi))
        nx = np.where(bad, 0.5 * (lo + hi), nx)
        done = (np.abs(nx - x) < 1e-15 * np.maximum(1.0, np.abs(x))) | (hi - lo < 1e-15 * np.maximum(1.0, np.abs(x)))
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


# pi to 50 digits as an exact fraction: the largest loss on the circle is formed from it in exact rational
# arithmetic, so that the gap to it keeps its digits however close epsilon comes.
_PI_FRACTION = Fraction("3.1415926535897932384626433832795028841971693993751")


def _largest_loss_parts(sigma: float, D: float) -> tuple[float, float]:
    """The largest loss D (2 pi - D) / (2 sigma^2) as hi + lo, hi the nearest double, lo the rest (the
    exact rational value from the double inputs and 50 digits of pi)."""
    exact = Fraction(D) * (2 * _PI_FRACTION - Fraction(D)) / (2 * Fraction(sigma) ** 2)
    hi = float(exact)
    return hi, float(exact - Fraction(hi))


def _circle_log_profile(eps: np.ndarray, sigma: float, D: float) -> np.ndarray:
    """log delta(eps) on S^1 as the integral of a non-negative function, with the gap g to the largest
    loss as the one small parameter (docs/manifolds.md, Section 2).

    With eta = 0, eta' = D and theta0 = D - pi the antipode of eta', {L > eps} = [theta0 - w_f, theta0 + w_n],
    w_n = sigma^2 g / D (where L = D (D/2 - theta) / sigma^2) and w_f = sigma^2 g / (2 pi - D) (where
    L = (2 pi - D)(theta + pi - D/2) / sigma^2). At distance s = u w inside either end, L - eps = g u, so

        delta = [int_0^1 e^(-theta^2 / (2 sigma^2)) (1 - e^(-g u)) w du over both pieces] / Z,

    theta = theta0 + w (1 - u) on the near piece, theta0 - w (1 - u) on the far one. g is formed from the
    exact largest loss (:func:`_largest_loss_parts`), so the width of the set and the factor 1 - e^(-g u)
    keep their relative accuracy as eps approaches the largest loss, and nothing is subtracted. The
    quadrature is split at geometric distances from both ends, at the scales of the factor (1/g in u)
    and of the Gaussian (sigma, and sigma^2 / |theta| where the set sits on its flank), and around the
    peak theta = 0. Where the subtraction P - e^eps P' costs little, the closed form
    (:func:`_circle_closed_form`) replaces the quadrature.
    """
    eps = np.asarray(eps, float).reshape(-1)
    hi, lo = _largest_loss_parts(sigma, D)
    g = (hi - eps) + lo  # hi - eps is exact for eps in [hi/2, 2 hi] (Sterbenz), else one rounding of g
    out = np.full(eps.shape, -np.inf)
    live = g > 0
    if not live.any():
        return out
    log_c = float(_log_ndtr_diff(np.array(math.pi / sigma), np.array(-math.pi / sigma)))
    log_z = math.log(sigma * math.sqrt(2 * math.pi)) + log_c
    ld = _circle_closed_form(eps[live], g[live], sigma, D)
    slow = np.isnan(ld)
    if slow.any():
        ld[slow] = _circle_gap_quadrature(g[live][slow], sigma, D)
    out[live] = ld - log_z
    return out


#: Relative rounding error of the two masses of :func:`_circle_closed_form` per unit of
#: 1 + (pi/sigma)^2 (the exponents (theta/sigma)^2/2 at rounded positions): ten times the largest seen
#: against the quadrature over sigma in [1e-3, 1e3], D in [1e-11 sigma, pi] (6.5e-16, where (1 + r) / (1 - r) is near 600).
_CIRCLE_CLOSED_ROUNDING = 5e-15
#: The closed form is used where its error bound stays below a fifth of the quadrature's 1e-11.
_CIRCLE_CLOSED_BUDGET = 2e-12


def _circle_log_arcs(g: np.ndarray, sigma: float, D: float) -> tuple[np.ndarray, np.ndarray]:
    """(log P([theta0 - w_f, theta0 + w_n]), log P'({L < -eps})) on S^1 at the gap g to the largest loss,
    unnormalised (the Gaussian masses of the arcs, before dividing by the circle's normaliser): the arcs
    of :func:`_circle_log_profile`, {L < -eps} being [pi - w_n, pi] with [-pi, -pi + w_f] by the
    reflection theta -> D - theta. Each mass is a Phi difference with its width passed exactly
    (:func:`_log_ndtr_diff`), so narrow arcs keep their relative accuracy."""
    theta0, s, p = D - math.pi, sigma, math.pi
    wn, wf = s * s * g / D, s * s * g / (2 * p - D)
    top, bottom = np.full(g.shape, p / s), np.full(g.shape, -p / s)
    log_p = _log_ndtr_diff((theta0 + wn) / s, (theta0 - wf) / s, (wn + wf) / s)
    log_q = np.logaddexp(_log_ndtr_diff(top, (p - wn) / s, wn / s), _log_ndtr_diff((wf - p) / s, bottom, wf / s))
    return log_p, log_q


def _circle_closed_form(eps: np.ndarray, g: np.ndarray, sigma: float, D: float) -> np.ndarray:
    """log(Z delta(eps)) on S^1 (Z the normaliser of :func:`_circle_log_profile`) as
    P([a, b]) - e^eps P'([a, b]), unnormalised; NaN where the subtraction would cost more than
    ``_CIRCLE_CLOSED_BUDGET`` in log delta (left to :func:`_circle_gap_quadrature`).

    {L > eps} = [theta0 - w_f, theta0 + w_n] (see :func:`_circle_log_profile`); measured from D it is
    [-pi, -pi + w_n] and [pi - w_f, pi] after wrapping. Each mass is a Phi difference with its width
    passed exactly, so that narrow sets keep their relative accuracy. With r = e^eps P' / P the errors of
    the two logs enter log delta amplified by at most (1 + r) / (1 - r).
    """
    s = sigma
    wn, wf = s * s * g / D, s * s * g / (2 * math.pi - D)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        log_p, log_q = _circle_log_arcs(g, sigma, D)
        ratio = eps + log_q - log_p  # NaN where P underflows
        r = np.exp(ratio)
        bound = _CIRCLE_CLOSED_ROUNDING * (1.0 + (math.pi / s) ** 2) * (1.0 + r) / (1.0 - r)
        ld = log_p + _log1mexp(np.minimum(ratio, 0.0)) + math.log(s * math.sqrt(2 * math.pi))
        # the rounded ends of the P' pieces must stay apart (their widths are passed exactly)
        ok = (bound <= _CIRCLE_CLOSED_BUDGET) & (np.minimum(wn, wf) > 1e-12) & (log_p > -np.inf) & (r < 1.0)
    return np.where(ok, ld, np.nan)


_LOG_WU = np.log(_WU)


def _circle_gap_quadrature(gl: np.ndarray, sigma: float, D: float) -> np.ndarray:
    """log(Z delta) on S^1 by Gauss-Legendre of the gap integral of :func:`_circle_log_profile`, one value
    per gap g > 0."""
    theta0 = D - math.pi
    geo = 2.0 ** np.arange(-2, 35)  # geometric steps from a piece end (scales >= 2^-34 of a piece occur)
    rows, los, his, widths = [], [], [], []
    for width, side in ((sigma * sigma * gl / D, 1.0), (sigma * sigma * gl / (2 * math.pi - D), -1.0)):
        # scales in u of the Gaussian at u = 0 (theta0 + side width, where L = eps) and at u = 1 (theta0),
        # and of the factor 1 - e^(-g u) at u = 0
        scale_0 = np.minimum(sigma, sigma * sigma / np.maximum(np.abs(theta0 + side * width), sigma)) / width
        scale_1 = min(sigma, sigma * sigma / max(abs(theta0), sigma)) / width
        peak = 1.0 + theta0 / (side * width)  # the u of theta = 0, if the piece holds it
        bps = np.concatenate([
            np.zeros((len(gl), 1)), np.ones((len(gl), 1)),
            np.minimum(scale_0, 1.0 / gl)[:, None] * geo, scale_0[:, None] * geo,
            1.0 - scale_1[:, None] * geo,
            peak[:, None] + (sigma / width)[:, None] * np.array([-8, -4, -2, -1, -0.5, 0, 0.5, 1, 2, 4, 8]),
        ], axis=1)
        bps = np.sort(np.clip(bps, 0.0, 1.0), axis=1)
        # most breakpoints clip onto 0 or 1 or coincide: only the pieces of positive width are integrated
        row, col = np.nonzero(bps[:, 1:] > bps[:, :-1])
        rows.append(row)
        los.append(bps[row, col])
        his.append(bps[row, col + 1])
        widths.append(side * width[row])
    # all pieces of both sides, grouped by eps (each eps has at least the piece [0, 1] on each side)
    order = np.argsort(np.concatenate(rows), kind="stable")
    row, lo_u, hi_u, sw = (np.concatenate(x)[order] for x in (rows, los, his, widths))
    u = lo_u[:, None] + (hi_u - lo_u)[:, None] * _U
    # 1 - u without cancellation near u = 1: (1 - hi) + (hi - lo)(1 - U) on each piece
    one_minus_u = (1.0 - hi_u)[:, None] + (hi_u - lo_u)[:, None] * (1.0 - _U)
    theta = theta0 + sw[:, None] * one_minus_u
    with np.errstate(divide="ignore"):
        v = (-0.5 * (theta / sigma) ** 2 + np.log(-np.expm1(-gl[row][:, None] * u))
             + np.log((hi_u - lo_u) * np.abs(sw))[:, None] + _LOG_WU)
    return _lse_groups(v, row)


def _lse_groups(v: np.ndarray, group: np.ndarray) -> np.ndarray:
    """log of the sum of exp(v) over the rows of v in each group (``group`` sorted, the groups numbered
    0, 1, ... without gaps), -inf for a group whose terms are all -inf."""
    start = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    m = np.maximum.reduceat(np.max(v, axis=1), start)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.add.reduceat(np.sum(np.exp(v - m[group][:, None]), axis=1), start)) + m


def _xfrac_den(kind: int, t: np.ndarray, D: float) -> np.ndarray:
    """The denominator S(t) S(D) of :func:`_xfrac` (its logarithm on H^d), shared by both tails."""
    with np.errstate(divide="ignore"):
        if kind == 1:
            return log_radial_factor(1, t) + float(log_radial_factor(1, np.array(D)))
        return radial_factor(kind, t) * radial_factor(kind, np.array(D, float))


def _sine_product(kind: int, u: np.ndarray, v: np.ndarray, den: np.ndarray) -> np.ndarray:
    """S(u) S(v) / den for den = :func:`_xfrac_den` (on H^d in log space); u and v are overwritten."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if kind == 1:
            su, sv = np.sign(u), np.sign(v)
            return su * sv * np.exp(log_radial_factor(1, np.abs(u)) + log_radial_factor(1, np.abs(v)) - den)
        if kind == 0:
            np.sin(u, out=u)
            np.sin(v, out=v)
        u *= v
        u /= den
        return u


def _xfrac(kind: int, t: np.ndarray, r: np.ndarray, D: float, dr: np.ndarray, den: np.ndarray,
           accurate: Optional[str] = None) -> tuple[np.ndarray, np.ndarray]:
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
    return out


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


def _lse_rows(v: np.ndarray) -> np.ndarray:
    """log of the sum of exp(v) along the last axis (-inf for an empty sum)."""
    m = np.max(v, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(v - m), axis=-1)) + m[..., 0]


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
        sums.append(_lse_groups(_tail_terms(law, D, q[k], t[k], lw[k], tail), row[k]))
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
    return keep


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
        return (delta / sigma) * ((delta + 2.0 * t) / sigma) / 2.0


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
    return _lse_groups(v.reshape(len(keep), -1), row[keep]) - law._log_norm_t


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
    if D >= math.pi / 2:
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
        inner = _lse_groups(val, grp)
        out[i] = _lse_rows(inner) - c0_hi - c0_lo - law._log_norm_t
    return out


def _log_profile(manifold: Manifold, eps: np.ndarray, sigma: float, D: float,
                 law: Optional[RadialLaw] = None) -> tuple[np.ndarray, np.ndarray]:
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
        out = np.where(np.isfinite(lu), lu + _log1mexp(np.minimum(ratio, 0.0)), -np.inf)
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
    if D < 1e-12 * sigma:
        raise ValueError(f"sensitivity / sigma = {D / sigma:.3g} is below the validated range (>= 1e-12) on {manifold!r}")


#: The sigma validated for the exact profile and mu on S^1, S^d and H^d.
_SIGMA_RANGE = (1e-3, 1e3)


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
    else:  # R^d and H^1: delta_mu, accurate to 1e-12 relative in log delta (tests/test_manifolds_small_shift.py)
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


def _circle_log_error(sigma: float) -> float:
    """A bound on |error| of :func:`_circle_log_profile` in log delta: 1e-11 for the quadrature (the
    largest error seen against 50-digit references over sigma in [1e-3, 1e3], D in [1e-12 sigma, pi] and
    eps up to one ulp below the largest loss is 8e-13) plus the rounding of the exponent theta^2 / (2 sigma^2),
    |theta| <= pi, which the double positions carry (2 units of 2^-53 relative)."""
    return 1e-11 + 2.3e-16 * (math.pi / sigma) ** 2


def _round_up(log_value: np.ndarray, log_error: float) -> np.ndarray:
    """exp(log_value + log_error), at least the smallest positive double where log_value > -inf: an upper
    bound of the exact value whenever log_value is within log_error of its logarithm."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.exp(np.asarray(log_value, float) + log_error)
    return np.where(np.asarray(log_value) > -np.inf, np.maximum(out, np.nextafter(0.0, 1.0)), 0.0)


def _eps_range(manifold: Manifold, sigma: float, D: float) -> float:
    """The range of epsilon searched for the supremum of mu_eps."""
    if isinstance(manifold, (Circle, Sphere)):
        return largest_loss(sigma, D)
    return 4.0 * default_eps_max(manifold, sigma, D)


def _finite_ratio(num: float, den: float, what: str) -> float:
    """num / den rounded up (the smallest double >= the exact quotient), refused with a ValueError naming
    ``what`` when it overflows the double range."""
    r = num / den
    if not math.isfinite(r):
        raise ValueError(f"{what} overflows the double range ({num:g} / {den:g}): no finite answer")
    if Fraction(r) < Fraction(num) / Fraction(den):
        r = math.nextafter(r, math.inf)
    return r


def _circle_log_pieces(eps: np.ndarray, sigma: float, D: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log P1(L > eps), log e^eps P1(L < -eps), log(1 - delta(eps))) on S^1, each a sum of differences
    of Phi formed without cancellation (:func:`_log_ndtr_diff`, from the exact widths of the arcs).

    With the notation of :func:`_circle_log_profile`, {L > eps} = [theta0 - w_f, theta0 + w_n]; the
    reflection theta -> D - theta swaps eta and eta' and changes the sign of L, so {L < -eps} is
    [pi - w_n, pi] with [-pi, -pi + w_f] (widths w_n, w_f); and
    1 - delta = int min(p, e^eps q) = P1(L <= eps) + e^eps P1(L < -eps), where {L <= eps} is
    [-pi, theta0 - w_f] (width D - w_f) with [theta0 + w_n, pi] (width 2 pi - D - w_n): a sum of
    positive terms, accurate however close delta is to 1. Where the largest loss is reached (g <= 0)
    the values are -inf, -inf and 0.
    """
    eps = np.asarray(eps, float).reshape(-1)
    hi, lo = _largest_loss_parts(sigma, D)
    g = np.maximum((hi - eps) + lo, 0.0)
    wn, wf = sigma * sigma * g / D, sigma * sigma * g / (2 * math.pi - D)
    theta0, s, p = D - math.pi, sigma, math.pi
    top, bottom = np.full(eps.shape, p / s), np.full(eps.shape, -p / s)
    log_c = float(_log_ndtr_diff(np.array(p / s), np.array(-p / s)))
    log_p, log_q = _circle_log_arcs(g, sigma, D)
    upper, lower = log_p - log_c, eps + log_q - log_c
    rest = np.logaddexp(_log_ndtr_diff((theta0 - wf) / s, bottom, (D - wf) / s),
                        _log_ndtr_diff(top, (theta0 + wn) / s, (2 * p - D - wn) / s)) - log_c
    live = g > 0
    with np.errstate(invalid="ignore"):
        comp = np.where(live, np.minimum(np.logaddexp(rest, lower), 0.0), 0.0)
    return np.where(live, upper, -np.inf), np.where(live, lower, -np.inf), comp


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
        lc = np.where(lu < 0.0, _log1mexp(np.minimum(lu, 0.0)), -np.inf)
    if manifold.dim == 1:
        lc = np.maximum(lc, _circle_log_pieces(eps, sigma, D)[2] - err)
    elif not (isinstance(manifold, Euclidean) or isinstance(manifold, Hyperbolic) and manifold.dim == 1):
        near = lu > -1e-3  # delta within 1e-3 of 1: the direct quadrature of 1 - delta
        if near.any():
            lc[near] = np.maximum(lc[near], _loss_log_complement(law, D, eps[near]) - err)
    return lu, lc


def _loss_log_complement(law: RadialLaw, D: float, eps: np.ndarray) -> np.ndarray:
    """log(1 - delta(eps)) on S^d and H^d (d >= 2): 1 - delta = P1(L <= eps) + e^eps P1(L < -eps), a sum,
    so it keeps its relative accuracy however close delta is to 1. P1(L <= eps) is the quadrature of
    :func:`_loss_tails` with the complementary incomplete beta function, P(cos phi >= c) = I_(1-x)(a, a)."""
    eps = np.atleast_1d(np.asarray(eps, float))
    if eps.size > _TAIL_BLOCK:
        return np.concatenate([_loss_log_complement(law, D, eps[i:i + _TAIL_BLOCK])
                               for i in range(0, eps.size, _TAIL_BLOCK)])
    inside, below = _tail_sums(law, D, eps, ("inside", "lower"))
    return np.minimum(np.logaddexp(inside - law._log_norm_t, eps + below - law._log_norm_t), 0.0)


def _log_cdelta_mu(eps: np.ndarray, mu: Union[float, np.ndarray]) -> np.ndarray:
    """log(1 - delta_mu(eps)) = log(Phi(-a) + e^eps Phi(b)), a, b = -eps/mu +- mu/2: a sum, no cancellation."""
    a = -eps / mu + mu / 2.0
    return np.logaddexp(_log_ndtr(-a), eps + _log_ndtr(-eps / mu - mu / 2.0))


def _mu_for_log_cdelta(eps: np.ndarray, log_c: np.ndarray) -> np.ndarray:
    """The mu with 1 - delta_mu(eps) = exp(log_c), for delta near 1 where :func:`mu_for_log_delta` loses the
    digits: bisection in log mu (1 - delta_mu decreases in mu) on [1e-6, max(500, 2 sqrt(2 eps) + 40)],
    the upper end as in :func:`mu_for_log_delta`; NaN where the root is not inside."""
    eps = np.atleast_1d(np.asarray(eps, float))
    log_c = np.broadcast_to(np.asarray(log_c, float), eps.shape)
    lo = np.full(eps.shape, math.log(1e-6))
    hi = np.log(np.maximum(500.0, 2.0 * np.sqrt(2.0 * np.maximum(eps, 0.0)) + 40.0))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inside = (_log_cdelta_mu(eps, np.exp(lo)) >= log_c) & (_log_cdelta_mu(eps, np.exp(hi)) <= log_c)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            above = _log_cdelta_mu(eps, np.exp(mid)) > log_c  # mu too small
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(inside, np.exp(0.5 * (lo + hi)), np.nan)


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
        log_gap = hi_ + _log1mexp(np.minimum(lo_ - hi_, 0.0))  # log |v1 - v0| + m
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
        dk = -np.exp(_log_ndtr(-x / mu - mu / 2.0) + e0 - m) - s * (v1 - v0) / t1  # dk / dtau at x
        dk = np.where(t1 > 0, dk, 0.0)
        kmin = k - np.where(dk >= 0, dk * tx, -dk * (t1 - tx))
        return (kmin >= 1e-15 * (1.0 + np.abs(chord))) & np.isfinite(m)


def _circle_gauss_margin(sigma: float, D: float) -> tuple[float, float, float]:
    """(mu_G, log tau, log t) with mu_G >= D / sigma and, for every eps,

        delta(eps) <= delta_(D/sigma)(eps) + tau   and   1 - delta(eps) >= 1 - delta_(D/sigma)(eps) - (1 + e^eps) t

    on S^1: on [D - pi, pi] the two densities are the Gaussian ones N(0, sigma^2), N(D, sigma^2) divided by
    the same C = Phi(pi/sigma) - Phi(-pi/sigma) <= 1, and the rest carries little mass. So
    delta <= delta_G / C + P1([-pi, D - pi]) <= delta_G + (2 Phi(-pi/sigma) + Phi((D - pi)/sigma)) / C, and
    1 - delta = int min(p, e^eps q) >= int over [D - pi, pi] of min(phi, e^eps phi(. - D)) >= 1 - delta_G
    minus the Gaussian masses outside, Phi(-pi/sigma) + e^eps Phi(-pi/sigma) = (1 + e^eps) t.
    """
    t = float(_log_ndtr(np.array([-math.pi / sigma]))[0])
    far = float(_log_ndtr(np.array([(D - math.pi) / sigma]))[0])
    log_c = float(_log_ndtr_diff(np.array(math.pi / sigma), np.array(-math.pi / sigma)))
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
    return above & (lhs >= rhs)


def _intervals_certified(e0: np.ndarray, e1: np.ndarray, u0: np.ndarray, u1: np.ndarray, c0: np.ndarray,
                         c1: np.ndarray, mu: ArrayLike, gauss: Optional[tuple[float, float, float]] = None) -> np.ndarray:
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
    return ok


def _smallest_certified_k(e0: np.ndarray, e1: np.ndarray, u0: np.ndarray, u1: np.ndarray, c0: np.ndarray,
                          c1: np.ndarray, base: float, r0: float, kmax: int,
                          gauss: Optional[tuple[float, float, float]]) -> np.ndarray:
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
            lcomp = _log1mexp(np.minimum(ld, 0.0))
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

    def bounds(x: np.ndarray, ldx: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
        """(log upper bound of delta, log lower bound of 1 - delta) at x; the quadrature only where needed."""
        lu = np.full(x.shape, np.nan)
        lc = np.full(x.shape, -np.inf)
        need = np.ones(x.shape, bool)
        if circle:
            la, lb, comp = _circle_log_pieces(x, sigma, D)
            with np.errstate(invalid="ignore"):
                fast = ~(lb - la > math.log(0.5) + 2 * err) | ~(la > -np.inf)
                lu = np.where(fast, np.minimum(la + err + _log1mexp(np.minimum(lb - la - 2 * err, 0.0)), 0.0), np.nan)
            lc = np.where(fast, np.maximum(comp - err, _log1mexp(np.minimum(lu, 0.0))), -np.inf)
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

    order = np.argsort(e, kind="stable")
    e, ld = e[order], ld[order]
    keep = np.concatenate([[True], np.diff(e) > 0]) & (e <= hi)
    e, ld = e[keep], ld[keep]
    lu, lc = bounds(e, ld)
    if compact:  # the last double below the largest loss, and on S^d the start of the part held constant
        extra = np.setdiff1d(np.array([math.nextafter(hi, 0.0)] + ([_SPHERE_TOP * hi] if not circle else [])), e)
        if extra.size:
            xu, xc = bounds(extra)
            e, lu, lc = np.concatenate([e, extra]), np.concatenate([lu, xu]), np.concatenate([lc, xc])
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

    def ladder(base: float, k_floor: int) -> Optional[float]:
        """The smallest certified base (1 + r0 2^k) after refining the grid, or None. An interval keeps its
        smallest k while its ends and bounds are unchanged; a proof on any grid holds, so k_ok is the
        smallest over the rounds."""
        nonlocal e, lu, lc
        known: dict[tuple[float, ...], int] = {}
        k_ok: Optional[int] = None
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
    if gauss is not None:  # on S^1, from mu_G = D / sigma when the search's best is a little below it
        mu_g = gauss[0] * (1.0 + 4.0 * 2.0**-52)
        if best <= mu_g <= best * (1.0 + _CERT_MAX_INFLATION) and (mu_up is None or mu_g * (1.0 + r0) < mu_up):
            alt = ladder(mu_g, 0)
            mu_up = alt if mu_up is None or (alt is not None and alt < mu_up) else mu_up
    if mu_up is None:
        raise ArithmeticError(
            f"gdp_mu could not certify an upper bound of mu within {_CERT_MAX_INFLATION:g} relative of the "
            f"estimate {best!r} on {manifold!r} at sigma = {sigma}, sensitivity = {D}"
        )
    return mu_up


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
        from .montecarlo import monte_carlo_mu  # montecarlo builds on this module

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
