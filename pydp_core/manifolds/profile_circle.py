"""The privacy profile delta(eps) of the Riemannian Gaussian mechanism on the circle S^1.

The corrected closed form of Jiang et al. 2023, Corollary 3.2.1 (:func:`_circle_closed_form`, from Phi
differences over the arcs where the loss exceeds eps, each with its width passed exactly), where the
subtraction P - e^eps P' costs little; elsewhere the gap integral of a non-negative function
(:func:`_circle_gap_quadrature`), with the gap to the exact largest loss as the one small parameter
(docs/manifolds.md, Section 2). :func:`_circle_log_pieces` gives the two tails and 1 - delta (a sum) for
the certificate; :func:`_circle_log_error` the error bound, validated against 50-digit references.
"""
from __future__ import annotations

import math

import numpy as np

from .._logspace import log1mexp, log_ndtr_diff, lse_groups
from .loss import _largest_loss_parts
from .radial import _LOG_WU, _U


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
    log_c = float(log_ndtr_diff(np.array(math.pi / sigma), np.array(-math.pi / sigma)))
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
    (:func:`log_ndtr_diff`), so narrow arcs keep their relative accuracy."""
    theta0, s, p = D - math.pi, sigma, math.pi
    wn, wf = s * s * g / D, s * s * g / (2 * p - D)
    top, bottom = np.full(g.shape, p / s), np.full(g.shape, -p / s)
    log_p = log_ndtr_diff((theta0 + wn) / s, (theta0 - wf) / s, (wn + wf) / s)
    log_q = np.logaddexp(log_ndtr_diff(top, (p - wn) / s, wn / s), log_ndtr_diff((wf - p) / s, bottom, wf / s))
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
        ld = log_p + log1mexp(np.minimum(ratio, 0.0)) + math.log(s * math.sqrt(2 * math.pi))
        # the rounded ends of the P' pieces must stay apart (their widths are passed exactly)
        ok = (bound <= _CIRCLE_CLOSED_BUDGET) & (np.minimum(wn, wf) > 1e-12) & (log_p > -np.inf) & (r < 1.0)
    return np.where(ok, ld, np.nan)


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
    return lse_groups(v, row)


def _circle_log_pieces(eps: np.ndarray, sigma: float, D: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log P1(L > eps), log e^eps P1(L < -eps), log(1 - delta(eps))) on S^1, each a sum of differences
    of Phi formed without cancellation (:func:`log_ndtr_diff`, from the exact widths of the arcs).

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
    log_c = float(log_ndtr_diff(np.array(p / s), np.array(-p / s)))
    log_p, log_q = _circle_log_arcs(g, sigma, D)
    upper, lower = log_p - log_c, eps + log_q - log_c
    rest = np.logaddexp(log_ndtr_diff((theta0 - wf) / s, bottom, (D - wf) / s),
                        log_ndtr_diff(top, (theta0 + wn) / s, (2 * p - D - wn) / s)) - log_c
    live = g > 0
    with np.errstate(invalid="ignore"):
        comp = np.where(live, np.minimum(np.logaddexp(rest, lower), 0.0), 0.0)
    return np.where(live, upper, -np.inf), np.where(live, lower, -np.inf), comp


def _circle_log_error(sigma: float) -> float:
    """A bound on |error| of :func:`_circle_log_profile` in log delta: 1e-11 for the quadrature (the
    largest error seen against 50-digit references over sigma in [1e-3, 1e3], D in [1e-12 sigma, pi] and
    eps up to one ulp below the largest loss is 8e-13) plus the rounding of the exponent theta^2 / (2 sigma^2),
    |theta| <= pi, which the double positions carry (2 units of 2^-53 relative)."""
    return 1e-11 + 2.3e-16 * (math.pi / sigma) ** 2
