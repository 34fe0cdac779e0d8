"""Variance comparisons between families (Vinterbo 2022, Section 3.4) and the truncated Laplace (Remark 2)."""
from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike

from .._validation import (
    as_scalar,
    broadcast,
    check_delta,
    check_epsilon,
    check_positive_scalar,
    scalar_or_array,
)
from ..noise import Laplace, NoiseFamily, Truncated
from .profile import minimal_scale


@overload
def variance_ratio(noise_a: NoiseFamily, noise_b: NoiseFamily, *, epsilon: float, delta: float) -> float: ...
@overload
def variance_ratio(noise_a: NoiseFamily, noise_b: NoiseFamily, *, epsilon: ArrayLike, delta: ArrayLike) -> Any: ...
def variance_ratio(noise_a: NoiseFamily, noise_b: NoiseFamily, *, epsilon: ArrayLike, delta: ArrayLike) -> Any:
    """v_{a,b} = Var(s_a X_a) / Var(s_b X_b) at the minimal scales for (epsilon, delta) (equation 4).

    Independent of the sensitivity (Lemma 2). Below 1 means mechanism a adds less noise.

    Parameters
    ----------
    noise_a, noise_b : NoiseFamily
        The two standard families.
    epsilon : float or array_like
        >= 0 and finite.
    delta : float or array_like
        In [0, 1).

    Returns
    -------
    float or ndarray
        The variance ratio at the certified minimal scales (:func:`minimal_scale`).

    Raises
    ------
    ValueError
        As :func:`minimal_scale`.
    CalibrationError
        As :func:`minimal_scale`.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian, Laplace
    >>> variance_ratio(Laplace(), Gaussian(), epsilon=1.0, delta=1e-6)
    0.11205747941...
    """
    sa = np.asarray(minimal_scale(noise_a, epsilon=epsilon, delta=delta))
    sb = np.asarray(minimal_scale(noise_b, epsilon=epsilon, delta=delta))
    out = (sa / sb) ** 2 * (noise_a.variance / noise_b.variance)
    return scalar_or_array(out, epsilon, delta)


@overload
def laplace_logistic_scale_ratio(*, epsilon: float, delta: float) -> float: ...
@overload
def laplace_logistic_scale_ratio(*, epsilon: ArrayLike, delta: ArrayLike) -> Any: ...
def laplace_logistic_scale_ratio(*, epsilon: ArrayLike, delta: ArrayLike) -> Any:
    """rho_{1,log}(eps, delta) = s_Laplace / s_Logistic in closed form (Vinterbo 2022, Theorem 7); 1 <= rho < 2.

    rho = (eps + 2 log(1 + sqrt(delta (delta e^-eps - expm1(-eps)))) - 2 log(1 - delta)) /
    (eps - 2 log(1 - delta)), evaluated with log1p and expm1.

    Parameters
    ----------
    epsilon : float or array_like
        >= 0 and finite.
    delta : float or array_like
        In [0, 1); not both 0.

    Returns
    -------
    float or ndarray
        The ratio of the two minimal scales.

    Raises
    ------
    ValueError
        If an argument is out of range or NaN, or epsilon and delta are both 0.

    Examples
    --------
    >>> laplace_logistic_scale_ratio(epsilon=1.0, delta=1e-3)
    1.04957736122...
    """
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


def geng_truncated_laplace(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> tuple[Truncated, float]:
    """Geng et al.'s (2020) truncated Laplacian mechanism (Vinterbo 2022, Remark 2).

    Laplace noise of scale D/eps on (-A, A), A = (D/eps) log(1 + (e^eps - 1) / (2 delta)); the pair meets
    the condition of Lemma 1 with equality.

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    sensitivity : float, optional
        The sensitivity D (> 0, default 1).

    Returns
    -------
    tuple of (Truncated, float)
        ``(Truncated(Laplace(), A / scale), scale)``.

    Raises
    ------
    ValueError
        If epsilon is 0, delta is 0 or an argument is out of range.

    Examples
    --------
    >>> geng_truncated_laplace(epsilon=1.0, delta=1e-6)
    (Truncated(Laplace(), bound=13.6637), 1.0)
    """
    eps = check_positive_scalar(epsilon, "epsilon")
    dl = as_scalar(check_delta(delta, allow_zero=False), "delta")
    sens = check_positive_scalar(sensitivity, "sensitivity")
    scale = sens / eps
    bound_std = math.log1p(math.expm1(eps) / (2.0 * dl))
    return Truncated(Laplace(), bound_std), scale
