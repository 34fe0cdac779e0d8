"""The exact (epsilon, delta) profile of additive symmetric log-concave noise, its inverse and the minimal scale.

Vinterbo (2022), Lemma 1 and 2: ``q(d) + s X`` is (epsilon, delta)-DP iff
delta >= S((t - D)/s) - e^epsilon S(t/s) at the threshold t where the privacy loss crosses epsilon. The
kernels (``csrc/include/pydp/calibration/profile.hpp``) work in log space down to delta = 1e-300; the
proof is in ``docs/calibration.md``.
"""
from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike

from .._core import calibration as _cal
from .._validation import (
    broadcast,
    check_delta,
    check_epsilon,
    check_positive,
    scalar_or_array,
)
from ..noise import NoiseFamily


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
@overload
def log_privacy_profile(noise: NoiseFamily, *, epsilon: float, sensitivity: float = 1.0, scale: float) -> float: ...
@overload
def log_privacy_profile(noise: NoiseFamily, *, epsilon: ArrayLike, sensitivity: ArrayLike = 1.0, scale: ArrayLike) -> Any: ...
def log_privacy_profile(noise: NoiseFamily, *, epsilon: ArrayLike, sensitivity: ArrayLike = 1.0, scale: ArrayLike) -> Any:
    """log of :func:`privacy_profile`; stays finite when delta is below the double range.

    Evaluated in the cancellation-free form log delta = log A + log(-expm1(eps + log B - log A)),
    A = S((t - D)/s), B = S(t/s), with the log survival functions of the family (``docs/calibration.md``).

    Parameters
    ----------
    noise : NoiseFamily
        The standard family (built-in or :class:`~pydp_core.noise.LogConcaveFamily`).
    epsilon : float or array_like
        >= 0 (``inf`` gives log delta = -inf).
    sensitivity : float or array_like, optional
        The sensitivity D, > 0 and finite (default 1).
    scale : float or array_like
        The noise scale s, > 0 and finite.

    Returns
    -------
    float or ndarray
        log delta(epsilon); -inf where delta = 0.

    Raises
    ------
    TypeError
        If ``noise`` is not a noise family or an argument is not real-valued.
    ValueError
        If an argument is out of range or NaN, or the arguments do not broadcast.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian
    >>> log_privacy_profile(Gaussian(), epsilon=40.0, scale=1.0)
    -788.42341277...
    >>> log_privacy_profile(Gaussian(), epsilon=[0.5, 1.0], scale=1.0)
    array([-1.43371429, -2.06406645])
    """
    noise = _check_noise(noise)
    eps = check_epsilon(epsilon, allow_inf=True)
    s = check_positive(scale, "scale")
    d = check_positive(sensitivity, "sensitivity")
    e_b, s_b, d_b = broadcast(epsilon=eps, scale=s, sensitivity=d)
    if noise.kernel is None:  # a family evaluated in Python
        custom = noise
        out = np.vectorize(lambda e, ss, dd: _custom_log_delta(custom, e, dd / ss), otypes=[float])(e_b, s_b, d_b)
    else:
        fin = np.isfinite(e_b)
        out = np.full(e_b.shape, -np.inf)
        if fin.all():
            out = _cal.log_privacy_profile(noise.kernel, e_b, s_b, d_b)
        elif fin.any():
            out[fin] = _cal.log_privacy_profile(noise.kernel, e_b[fin], s_b[fin], d_b[fin])
    return scalar_or_array(out, epsilon, scale, sensitivity)


@overload
def privacy_profile(noise: NoiseFamily, *, epsilon: float, sensitivity: float = 1.0, scale: float) -> float: ...
@overload
def privacy_profile(noise: NoiseFamily, *, epsilon: ArrayLike, sensitivity: ArrayLike = 1.0, scale: ArrayLike) -> Any: ...
def privacy_profile(noise: NoiseFamily, *, epsilon: ArrayLike, sensitivity: ArrayLike = 1.0, scale: ArrayLike) -> Any:
    """The exact smallest delta for which ``q(d) + scale * X`` is (epsilon, delta)-DP (Vinterbo 2022, Lemma 1).

    Parameters broadcast against each other; a scalar call returns a float.

    Parameters
    ----------
    noise : NoiseFamily
        A standard family from :mod:`pydp_core.noise`.
    epsilon : float or array_like
        >= 0 (``inf`` allowed).
    sensitivity : float or array_like, optional
        The global sensitivity D (> 0, default 1); for vector queries see ``docs/calibration.md``.
    scale : float or array_like
        The noise scale s (> 0), multiplying the standard family.

    Returns
    -------
    float or ndarray
        delta(epsilon) = exp(:func:`log_privacy_profile`).

    Raises
    ------
    TypeError
        If ``noise`` is not a noise family or an argument is not real-valued.
    ValueError
        If an argument is out of range or NaN, or the arguments do not broadcast.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian, Laplace
    >>> privacy_profile(Gaussian(), epsilon=1.0, scale=1.0)
    0.12693673750...
    >>> privacy_profile(Laplace(), epsilon=1.0, scale=1.0)
    0.0
    """
    out = np.exp(np.asarray(log_privacy_profile(noise, epsilon=epsilon, sensitivity=sensitivity, scale=scale)))
    return scalar_or_array(out, epsilon, scale, sensitivity)


@overload
def epsilon_for_delta(noise: NoiseFamily, *, delta: float, sensitivity: float = 1.0, scale: float) -> float: ...
@overload
def epsilon_for_delta(noise: NoiseFamily, *, delta: ArrayLike, sensitivity: ArrayLike = 1.0, scale: ArrayLike) -> Any: ...
def epsilon_for_delta(noise: NoiseFamily, *, delta: ArrayLike, sensitivity: ArrayLike = 1.0, scale: ArrayLike) -> Any:
    """The smallest epsilon with ``privacy_profile(noise, epsilon=epsilon, ...) <= delta``.

    Rounded up (conservative). Returns ``inf`` where no finite epsilon reaches delta (delta = 0 with an
    MLR-unbounded family such as the Gaussian, or bounded support with mass beyond the bound), and, for
    Subbotin_r with r not in {1, 2} (whose threshold is solved numerically), where the answer would
    exceed epsilon = 1e6: double arithmetic cannot resolve the threshold equation there, so no finite
    value is claimed. Likewise privacy_profile and minimal_scale evaluate such families at
    min(epsilon, 1e6), which overstates delta (conservative).

    Parameters
    ----------
    noise : NoiseFamily
        A standard family from :mod:`pydp_core.noise`.
    delta : float or array_like
        In [0, 1).
    sensitivity : float or array_like, optional
        The sensitivity D (> 0, default 1).
    scale : float or array_like
        The noise scale s (> 0).

    Returns
    -------
    float or ndarray
        The smallest epsilon, rounded up; ``inf`` where none is finite.

    Raises
    ------
    TypeError
        If ``noise`` is not a noise family or an argument is not real-valued.
    ValueError
        If an argument is out of range or NaN, or the arguments do not broadcast.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian, Laplace
    >>> epsilon_for_delta(Gaussian(), delta=1e-6, scale=1.0)
    4.88655411746...
    >>> epsilon_for_delta(Laplace(), delta=0.0, scale=2.0)
    0.5
    >>> epsilon_for_delta(Gaussian(), delta=0.0, scale=2.0)
    inf
    """
    noise = _check_noise(noise)
    dl = check_delta(delta)
    s = check_positive(scale, "scale")
    d = check_positive(sensitivity, "sensitivity")
    dl_b, s_b, d_b = broadcast(delta=dl, scale=s, sensitivity=d)
    if noise.kernel is None:  # a family evaluated in Python
        out = np.vectorize(lambda x, ss, dd: _custom_epsilon(noise, x, dd / ss), otypes=[float])(dl_b, s_b, d_b)
    else:
        out = _cal.epsilon_for_delta(noise.kernel, dl_b, s_b, d_b)
    return scalar_or_array(out, delta, scale, sensitivity)


_STATUS = {
    _cal.Status.no_finite_scale: "no finite scale exists",
    _cal.Status.verify_failed: "the computed scale failed its own verification",
    _cal.Status.no_convergence: "the root finder did not converge",
    _cal.Status.scale_overflow: "the minimal scale overflows the double range",
}


@overload
def minimal_scale(noise: NoiseFamily, *, epsilon: float, delta: float, sensitivity: float = 1.0) -> float: ...
@overload
def minimal_scale(noise: NoiseFamily, *, epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> Any: ...
def minimal_scale(noise: NoiseFamily, *, epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> Any:
    """The smallest scale s such that ``q(d) + s * X`` is (epsilon, delta)-DP (Vinterbo 2022, Lemmas 1 and 2).

    The result is verified: the privacy condition holds at the returned scale in a log-space evaluation,
    with a relative margin of 1e-12 on delta (on 1 - delta as delta -> 1) plus a bound on the rounding of
    that evaluation, so the scale is never below the exact minimum and exceeds it by about 1e-12 relative
    at most. A minimal scale beyond the double range, or one that cannot be verified, raises
    :class:`CalibrationError` rather than return an unverified scale.

    Closed forms serve as fast paths: Laplace (Theorem 3), s = D / (eps - 2 log(1 - delta)); Logistic
    (Theorem 4). The Gaussian (the analytic mechanism of Balle and Wang 2018) has its own Halley
    iteration on the exact condition (about two evaluations per solve); Subbotin_r uses the general
    solver. ``delta = 0`` has a finite answer only for MLR-bounded families (Laplace, Logistic: D/eps);
    for the Gaussian and Subbotin_r (r > 1) no finite scale exists (Theorem 6) and the call raises
    ``ValueError``. The proof of the certification is in ``docs/calibration.md``.

    Parameters
    ----------
    noise : NoiseFamily
        A standard family from :mod:`pydp_core.noise`.
    epsilon : float or array_like
        >= 0 and finite.
    delta : float or array_like
        In [0, 1).
    sensitivity : float or array_like, optional
        The sensitivity D (> 0, default 1); the scale is linear in it (Lemma 2).

    Returns
    -------
    float or ndarray
        The certified minimal scale.

    Raises
    ------
    TypeError
        If ``noise`` is not a noise family or an argument is not real-valued.
    ValueError
        If an argument is out of range or NaN, or delta = 0 is unreachable for the family.
    CalibrationError
        If no scale could be found and verified.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian, Laplace
    >>> minimal_scale(Gaussian(), epsilon=1.0, delta=1e-6)
    4.22467888932...
    >>> minimal_scale(Laplace(), epsilon=1.0, delta=0.0, sensitivity=2.0)
    2.0
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
    if noise.kernel is None:  # a family evaluated in Python
        out = np.vectorize(lambda e, x, dd: _custom_minimal_scale(noise, e, x, dd), otypes=[float])(e_b, dl_b, d_b)
    else:
        out, status = _cal.minimal_scale(noise.kernel, e_b, dl_b, d_b)
        failed = np.flatnonzero(np.asarray(status).reshape(-1) != int(_cal.Status.ok))
        if failed.size:
            flat = int(failed[0])
            code = _cal.Status(int(np.asarray(status).reshape(-1)[flat]))
            raise CalibrationError(
                f"minimal_scale({noise!r}): {_STATUS.get(code, 'failure')} at epsilon="
                f"{e_b.reshape(-1)[flat]!r}, delta={dl_b.reshape(-1)[flat]!r}, "
                f"sensitivity={d_b.reshape(-1)[flat]!r}"
            )
    return scalar_or_array(out, epsilon, delta, sensitivity)


# ------------------------------------------------------------------------------------------------------
# User-defined families: the same condition evaluated with scipy (slow path)
# ------------------------------------------------------------------------------------------------------
def _custom_threshold(f: NoiseFamily, d: float, eps: float) -> float:
    from scipy import optimize

    lo = d / 2.0
    if eps <= 0.0:
        return lo
    hi = max(d, 1.0)
    while f.psi_diff(hi, d) < eps:
        if hi >= f.support_bound or float(f.logsf(hi)) < -745.0 * 1.5:
            return math.inf  # the ratio never exceeds e^eps where the noise has mass
        hi *= 2.0
    return float(optimize.brentq(lambda u: f.psi_diff(u, d) - eps, lo, hi, xtol=1e-300, rtol=1e-15))


def _custom_log_delta(f: NoiseFamily, eps: float, d: float) -> float:
    if not math.isfinite(eps):
        return -math.inf
    u = _custom_threshold(f, d, eps)
    if u >= f.support_bound:
        return float(f.logsf(f.support_bound - d))
    if math.isinf(u):
        return -math.inf
    la = float(f.logsf(u - d))
    lb = float(f.logsf(u))
    x = eps + lb - la
    if not x < 0:
        return -math.inf
    return la + math.log(-math.expm1(x))


def _custom_epsilon(f: NoiseFamily, delta: float, d: float) -> float:
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
    e = float(optimize.brentq(g, 0.0, hi, xtol=1e-15, rtol=1e-14))
    while g(e) > 0:
        e = math.nextafter(e, math.inf) * (1 + 1e-14)
    return e


def _custom_minimal_scale(f: NoiseFamily, eps: float, delta: float, sens: float) -> float:
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


