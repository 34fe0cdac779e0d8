"""Exact (epsilon, delta) analysis and calibration of additive symmetric log-concave noise.

Vinterbo (AISTATS 2022), Lemma 1: q(d) + scale * X, with X from a standard symmetric log-concave
family f = exp(-psi) and sensitivity D, is (epsilon, delta)-DP if and only if

    delta >= S((t - D) / scale) - e^epsilon S(t / scale),
    t = sup{z : psi(z / scale) - psi((z - D) / scale) <= epsilon},

with S the survival function. Lemma 2: the minimal scale is linear in D and decreasing in epsilon and
delta, so calibration is a monotone one-dimensional root find. The C++ core evaluates the condition in a
cancellation-free log form (see ``csrc/include/pydp/calibration/profile.hpp``), valid for delta down to
1e-300 and epsilon up to the overflow range, and every calibration verifies its own result.

Vector queries (Theorem 9, with a correction). The paper states that iid Subbotin_r noise in every
coordinate is (epsilon, delta)-DP for a query with l_r sensitivity D exactly when the scalar mechanism
with sensitivity D is. That holds for r = 2 (the Gaussian is rotation invariant, so the l_2 pairing is
exact) and, in our numerical checks, for r = 1 (Laplace with l_1). It does NOT hold for other r: in
two dimensions, with r = 3, epsilon = 1 and the scale calibrated for delta = 0.01, the diagonal shift
(2^(-1/3), 2^(-1/3)) of l_3 norm 1 has delta = 0.01129 (r = 1.5: 0.01034); see
tests/test_paper_002.py::test_theorem9_counterexample. So for r not in {1, 2} the scalar calibration
is exact per coordinate (a change confined to one coordinate), and :func:`select_subbotin` reproduces
equation (5) of the paper as printed, which is an optimisation of the paper's criterion, not a vector
privacy guarantee. :func:`linear_query_sensitivity` gives the l_p sensitivity of linear queries
(Theorem 10).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import _core
from ._validation import broadcast, check_delta, check_epsilon, check_positive, scalar_or_array
from .noise import Laplace, LogConcaveFamily, NoiseFamily, Subbotin, Truncated

__all__ = [
    "privacy_profile",
    "log_privacy_profile",
    "epsilon_for_delta",
    "minimal_scale",
    "linear_query_sensitivity",
    "select_subbotin",
    "SubbotinChoice",
    "variance_ratio",
    "laplace_logistic_scale_ratio",
    "geng_truncated_laplace",
    "CalibrationError",
]

_cal = _core.calibration


class CalibrationError(ArithmeticError):
    """A calibration could not be completed and verified: no scale is returned (fail closed)."""


def _check_noise(noise: Any) -> NoiseFamily:
    if not isinstance(noise, NoiseFamily):
        raise TypeError(
            "noise must be a noise family such as pydp_core.Gaussian(), Laplace(), Logistic(), "
            f"Subbotin(r), Truncated(...) or LogConcaveFamily(...); got {type(noise).__name__}"
        )
    return noise


# ------------------------------------------------------------------------------------------------------
# The privacy profile
# ------------------------------------------------------------------------------------------------------
def log_privacy_profile(noise: NoiseFamily, epsilon, scale, sensitivity=1.0):
    """log of :func:`privacy_profile`; stays finite when delta is below the double range."""
    noise = _check_noise(noise)
    eps = check_epsilon(epsilon, allow_inf=True)
    s = check_positive(scale, "scale")
    d = check_positive(sensitivity, "sensitivity")
    e_b, s_b, d_b = broadcast(epsilon=eps, scale=s, sensitivity=d)
    if isinstance(noise, LogConcaveFamily):
        out = np.vectorize(lambda e, ss, dd: _custom_log_delta(noise, e, dd / ss), otypes=[float])(e_b, s_b, d_b)
    else:
        fin = np.isfinite(e_b)
        out = np.full(e_b.shape, -np.inf)
        if fin.all():
            out = _cal.log_privacy_profile(noise._family, e_b, s_b, d_b)
        elif fin.any():
            out[fin] = _cal.log_privacy_profile(noise._family, e_b[fin], s_b[fin], d_b[fin])
    return scalar_or_array(out, epsilon, scale, sensitivity)


def privacy_profile(noise: NoiseFamily, epsilon, scale, sensitivity=1.0):
    """The exact smallest delta for which ``q(d) + scale * X`` is (epsilon, delta)-DP.

    Parameters broadcast against each other; a scalar call returns a float. ``noise`` is a standard
    family from :mod:`pydp_core.noise`; ``scale`` multiplies it; ``sensitivity`` is the global
    sensitivity D (for vector queries with iid Subbotin_r noise, the l_r sensitivity).

    >>> round(privacy_profile(Gaussian(), 1.0, 1.0), 6)
    0.126936
    """
    out = np.exp(np.asarray(log_privacy_profile(noise, epsilon, scale, sensitivity)))
    return scalar_or_array(out, epsilon, scale, sensitivity)


def epsilon_for_delta(noise: NoiseFamily, delta, scale, sensitivity=1.0):
    """The smallest epsilon with ``privacy_profile(noise, epsilon, scale, sensitivity) <= delta``.

    Rounded up (conservative). Returns ``inf`` where no finite epsilon reaches delta (delta = 0 with an
    MLR-unbounded family such as the Gaussian, or bounded support with mass beyond the bound), and, for
    Subbotin_r with r not in {1, 2} (whose threshold is solved numerically), where the answer would
    exceed epsilon = 1e6: double arithmetic cannot resolve the threshold equation there, so no finite
    value is claimed. Likewise privacy_profile and minimal_scale evaluate such families at
    min(epsilon, 1e6), which overstates delta (conservative).
    """
    noise = _check_noise(noise)
    dl = check_delta(delta)
    s = check_positive(scale, "scale")
    d = check_positive(sensitivity, "sensitivity")
    dl_b, s_b, d_b = broadcast(delta=dl, scale=s, sensitivity=d)
    if isinstance(noise, LogConcaveFamily):
        out = np.vectorize(lambda x, ss, dd: _custom_epsilon(noise, x, dd / ss), otypes=[float])(dl_b, s_b, d_b)
    else:
        out = _cal.epsilon_for_delta(noise._family, dl_b, s_b, d_b)
    return scalar_or_array(out, delta, scale, sensitivity)


_STATUS = {
    1: "no finite scale exists",
    2: "the computed scale failed its own verification",
    3: "the root finder did not converge",
    4: "the minimal scale overflows the double range",
}


def minimal_scale(noise: NoiseFamily, epsilon, delta, sensitivity=1.0):
    """The smallest scale s such that ``q(d) + s * X`` is (epsilon, delta)-DP (Lemma 1 and 2).

    The result is verified: the privacy condition holds at the returned scale in a log-space evaluation,
    with a relative margin of 1e-12 on delta (on 1 - delta as delta -> 1) plus a bound on the rounding of
    that evaluation, so the scale is never below the exact minimum and exceeds it by about 1e-12 relative
    at most. A minimal scale beyond the double range raises :class:`CalibrationError`. If that cannot be achieved the call raises
    :class:`CalibrationError` rather than return an unverified scale.

    Closed forms serve as fast paths: Laplace (Theorem 3), s = D / (eps - 2 log(1 - delta)); Logistic
    (Theorem 4). The Gaussian (Balle and Wang's analytic mechanism) has its own Halley iteration on the
    exact condition (about two evaluations per solve); Subbotin_r uses the general solver. ``delta = 0`` has a finite answer only for MLR-bounded families (Laplace, Logistic: D/eps);
    for the Gaussian and Subbotin_r (r > 1) no finite scale exists (Theorem 6) and the call raises
    ``ValueError``.
    """
    noise = _check_noise(noise)
    eps = check_epsilon(epsilon)
    dl = check_delta(delta)
    d = check_positive(sensitivity, "sensitivity")
    e_b, dl_b, d_b = broadcast(epsilon=eps, delta=dl, sensitivity=d)
    zero = dl_b == 0
    if zero.any():
        if not noise.mlr_bounded or noise.support_bound < math.inf:
            raise ValueError(
                f"delta = 0 is not reachable with {noise!r} noise at any finite scale: the family is "
                "MLR-unbounded or has bounded support (Vinterbo 2022, Theorem 6); use delta > 0 or "
                "an MLR-bounded family such as Laplace() or Logistic()"
            )
        if (e_b[zero] == 0).any():
            raise ValueError("epsilon = 0 with delta = 0 requires an infinite scale: use epsilon > 0 or delta > 0")
    if isinstance(noise, LogConcaveFamily):
        out = np.vectorize(lambda e, x, dd: _custom_minimal_scale(noise, e, x, dd), otypes=[float])(e_b, dl_b, d_b)
    else:
        out = _cal.minimal_scale(noise._family, e_b, dl_b, d_b)
        bad = ~(out > 0)
        if bad.any():
            idx = np.argwhere(bad)[0]
            flat = int(np.ravel_multi_index(tuple(idx), out.shape)) if out.ndim else 0
            code = int(-np.asarray(out).reshape(-1)[flat])
            raise CalibrationError(
                f"minimal_scale({noise!r}): {_STATUS.get(code, 'failure')} at epsilon="
                f"{e_b.reshape(-1)[flat]!r}, delta={dl_b.reshape(-1)[flat]!r}, "
                f"sensitivity={d_b.reshape(-1)[flat]!r}"
            )
    return scalar_or_array(out, epsilon, delta, sensitivity)


# ------------------------------------------------------------------------------------------------------
# User-defined families: the same condition evaluated with scipy (slow path)
# ------------------------------------------------------------------------------------------------------
def _custom_threshold(f: LogConcaveFamily, d: float, eps: float) -> float:
    from scipy import optimize

    lo = d / 2.0
    if eps <= 0.0:
        return lo
    hi = max(d, 1.0)
    while f.psi_diff(hi, d) < eps:
        if hi >= f.bound or float(f.logsf(hi)) < -745.0 * 1.5:
            return math.inf  # the ratio never exceeds e^eps where the noise has mass
        hi *= 2.0
    return optimize.brentq(lambda u: f.psi_diff(u, d) - eps, lo, hi, xtol=1e-300, rtol=1e-15)


def _custom_log_delta(f: LogConcaveFamily, eps: float, d: float) -> float:
    if not math.isfinite(eps):
        return -math.inf
    u = _custom_threshold(f, d, eps)
    if u >= f.bound:
        return float(f.logsf(f.bound - d))
    if math.isinf(u):
        return -math.inf
    la = float(f.logsf(u - d))
    lb = float(f.logsf(u))
    x = eps + lb - la
    if not x < 0:
        return -math.inf
    return la + math.log(-math.expm1(x))


def _custom_epsilon(f: LogConcaveFamily, delta: float, d: float) -> float:
    from scipy import optimize

    target = math.log(delta) if delta > 0 else -math.inf

    def g(e: float) -> float:
        return _custom_log_delta(f, e, d) - target

    if g(0.0) <= 0:
        return 0.0
    hi = max(d, 1e-3)
    while g(hi) > 0:
        hi *= 2
        if hi > 1e6:
            return math.inf
    e = optimize.brentq(g, 0.0, hi, xtol=1e-15, rtol=1e-14)
    while g(e) > 0:
        e = math.nextafter(e, math.inf) * (1 + 1e-14)
    return e


def _custom_minimal_scale(f: LogConcaveFamily, eps: float, delta: float, sens: float) -> float:
    from scipy import optimize

    if delta == 0 and not f.mlr_bounded:
        raise ValueError("delta = 0 is not reachable with an MLR-unbounded family")
    target = math.log(delta) - 1e-12 if delta > 0 else -math.inf

    def g(v: float) -> float:  # increasing in v = log d
        ld = _custom_log_delta(f, eps, math.exp(v))
        if delta == 0:  # the boundary where delta(d) stops being exactly 0
            return -1.0 if ld == -math.inf else 1.0
        return ld - target

    lo, hi = -1.0, 1.0
    while g(lo) > 0:
        lo -= 2.0
        if lo < -700:
            raise CalibrationError("custom family: no scale found")
    while g(hi) <= 0:
        hi += 2.0
        if hi > 700:
            raise CalibrationError("custom family: the condition holds at every scale; check the family")
    v = optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15)
    while g(v) > 0:
        v -= 1e-14 * max(1.0, abs(v))
    s = sens / math.exp(v)
    for _ in range(64):
        if _custom_log_delta(f, eps, sens / s) <= (math.log(delta) if delta > 0 else -math.inf):
            return s
        s = math.nextafter(s, math.inf)
    raise CalibrationError("custom family: the scale failed its own verification")


# ------------------------------------------------------------------------------------------------------
# Vector mechanisms and the choice of the Subbotin order (Theorems 9, 10; equation 5)
# ------------------------------------------------------------------------------------------------------
def linear_query_sensitivity(p: float, dimension: int, linf_diameter: float, weight: float = 1.0) -> float:
    """l_p sensitivity of a linear query q(d) = weight * sum_i f(d_i) (Theorem 10).

    Delta_p = dimension^(1/p) * |weight| * ||f(R)||_inf, an upper bound that is attained when f(R) is an
    l_inf ball. For the mean of n records in a box of width w: ``weight = 1/n``, ``linf_diameter = w``.
    Pair an l_p sensitivity with iid Subbotin_p noise (Theorem 9).
    """
    pp = float(check_positive(p, "p", allow_inf=True))
    if pp < 1:
        raise ValueError("p must be >= 1")
    m = _check_dimension(dimension)
    w = float(check_positive(linf_diameter, "linf_diameter"))
    nu = abs(float(np.asarray(weight, dtype=float)))
    if not math.isfinite(nu) or nu == 0:
        raise ValueError("weight must be finite and non-zero")
    return (m ** (1.0 / pp) if math.isfinite(pp) else 1.0) * nu * w


def _check_dimension(dimension: Any) -> int:
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)):
        raise TypeError("dimension must be an integer")
    if dimension < 1:
        raise ValueError("dimension must be >= 1")
    return int(dimension)


@dataclass(frozen=True)
class SubbotinChoice:
    """The Subbotin order minimising the per-coordinate MSE (equation 5) and its calibration."""

    order: float
    scale: float
    mse: float
    sensitivity: float
    epsilon: float
    delta: float
    dimension: int

    @property
    def noise(self) -> Subbotin:
        return Subbotin(self.order)


def _mse(r: float, eps: float, delta: float, m: int, linf: float) -> tuple[float, float, float]:
    fam = Subbotin(r)
    sens = m ** (1.0 / r) * linf
    s = float(minimal_scale(fam, eps, delta, sens))
    return s * s * fam.variance, s, sens


def select_subbotin(
    epsilon: float,
    delta: float,
    dimension: int,
    linf_sensitivity: float,
    orders: Sequence[float] | None = None,
) -> SubbotinChoice:
    """Choose the Subbotin order r minimising the per-coordinate MSE s_r^2 Var(X_r) (equation 5).

    Caution: the scales use the paper's Theorem 9 pairing of the l_r sensitivity with iid Subbotin_r
    noise, which is exact for r = 1 and r = 2 only (see the module docstring for the counterexample);
    the result reproduces the paper's Section 4.1 and is a guarantee only when ``order`` is 1 or 2.

    The query is assumed to have l_inf sensitivity ``linf_sensitivity`` in each of ``dimension``
    coordinates on an l_inf ball, so its l_r sensitivity is ``dimension^(1/r) * linf_sensitivity``
    (Theorem 10). With ``orders`` a grid of r >= 1 the best grid point is returned (ties to the smaller
    r); with ``orders=None`` r is optimised continuously on [1, 64] (a grid scan, then a bounded scalar
    minimisation around the best point).
    """
    eps = float(check_epsilon(epsilon))
    if eps == 0:
        raise ValueError("epsilon must be > 0")
    dl = float(check_delta(delta, allow_zero=False))
    m = _check_dimension(dimension)
    linf = float(check_positive(linf_sensitivity, "linf_sensitivity"))
    if orders is not None:
        grid = np.asarray(orders, dtype=float).reshape(-1)
        if grid.size == 0:
            raise ValueError("orders must not be empty")
        if np.isnan(grid).any() or (grid < 1).any() or np.isinf(grid).any():
            raise ValueError("orders must be finite and >= 1")
        results = [_mse(float(r), eps, dl, m, linf) for r in grid]
        best = int(np.argmin([res[0] for res in results]))
        mse, s, sens = results[best]
        return SubbotinChoice(float(grid[best]), s, mse, sens, eps, dl, m)
    from scipy import optimize

    grid = np.concatenate([np.arange(1.0, 16.0, 0.5), np.arange(16.0, 65.0, 4.0)])
    vals = [_mse(float(r), eps, dl, m, linf)[0] for r in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda r: math.log(_mse(float(r), eps, dl, m, linf)[0]), bounds=(lo, hi), method="bounded",
            options={"xatol": 1e-6},
        )
        r_best = float(res.x) if res.fun <= math.log(vals[i]) else float(grid[i])
    else:
        r_best = float(grid[i])
    mse, s, sens = _mse(r_best, eps, dl, m, linf)
    return SubbotinChoice(r_best, s, mse, sens, eps, dl, m)


# ------------------------------------------------------------------------------------------------------
# Variance comparisons (Section 3.4) and the truncated Laplace (Remark 2)
# ------------------------------------------------------------------------------------------------------
def variance_ratio(noise_a: NoiseFamily, noise_b: NoiseFamily, epsilon, delta):
    """v_{a,b} = Var(s_a X_a) / Var(s_b X_b) at the minimal scales for (epsilon, delta) (equation 4).

    Independent of the sensitivity (Lemma 2). Below 1 means mechanism a adds less noise.
    """
    sa = np.asarray(minimal_scale(noise_a, epsilon, delta))
    sb = np.asarray(minimal_scale(noise_b, epsilon, delta))
    out = (sa / sb) ** 2 * (noise_a.variance / noise_b.variance)
    return scalar_or_array(out, epsilon, delta)


def laplace_logistic_scale_ratio(epsilon, delta):
    """rho_{1,log}(eps, delta) = s_Laplace / s_Logistic in closed form (Theorem 7); 1 <= rho < 2."""
    eps = check_epsilon(epsilon)
    dl = check_delta(delta)
    e, d = broadcast(epsilon=eps, delta=dl)
    with np.errstate(divide="ignore", invalid="ignore"):
        num = e + 2 * np.log1p(np.sqrt(d * (d * np.exp(-e) - np.expm1(-e)))) - 2 * np.log1p(-d)
        den = e - 2 * np.log1p(-d)
        out = num / den
    if np.isnan(out).any():
        raise ValueError("epsilon and delta must not both be 0")
    return scalar_or_array(out, epsilon, delta)


def geng_truncated_laplace(epsilon: float, delta: float, sensitivity: float = 1.0) -> tuple[Truncated, float]:
    """Geng et al.'s truncated Laplacian mechanism (Remark 2): Laplace of scale D/eps on (-A, A),
    A = (D/eps) log(1 + (e^eps - 1) / (2 delta)). Returns ``(Truncated(Laplace(), A / scale), scale)``;
    the pair meets the condition of Lemma 1 with equality.
    """
    eps = float(check_epsilon(epsilon))
    if eps == 0:
        raise ValueError("epsilon must be > 0")
    dl = float(check_delta(delta, allow_zero=False))
    sens = float(check_positive(sensitivity, "sensitivity"))
    scale = sens / eps
    bound_std = math.log1p(math.expm1(eps) / (2.0 * dl))
    return Truncated(Laplace(), bound_std), scale

