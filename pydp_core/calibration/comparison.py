"""Variance comparisons between families (Vinterbo 2022, Section 3.4) and the truncated Laplace (Remark 2).
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import (
    broadcast,
    check_delta,
    check_epsilon,
    check_positive,
    scalar_or_array,
)
from ..noise import Laplace, NoiseFamily, Truncated
from .profile import minimal_scale


# ------------------------------------------------------------------------------------------------------
# Variance comparisons (Section 3.4) and the truncated Laplace (Remark 2)
# ------------------------------------------------------------------------------------------------------
def variance_ratio(noise_a: NoiseFamily, noise_b: NoiseFamily, *, epsilon, delta):
    """v_{a,b} = Var(s_a X_a) / Var(s_b X_b) at the minimal scales for (epsilon, delta) (equation 4).

    Independent of the sensitivity (Lemma 2). Below 1 means mechanism a adds less noise.
    """
    sa = np.asarray(minimal_scale(noise_a, epsilon=epsilon, delta=delta))
    sb = np.asarray(minimal_scale(noise_b, epsilon=epsilon, delta=delta))
    out = (sa / sb) ** 2 * (noise_a.variance / noise_b.variance)
    return scalar_or_array(out, epsilon, delta)


def laplace_logistic_scale_ratio(*, epsilon, delta):
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


def geng_truncated_laplace(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> tuple[Truncated, float]:
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

