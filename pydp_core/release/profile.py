"""Exact privacy profiles of the discrete Laplace and discrete Gaussian mechanisms for an integer shift.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _core
from .._validation import check_epsilon_scalar
from .samplers import check_shift, rational_parameter

_D = _core.discrete



# ------------------------------------------------------------------------------------------------------
# Exact privacy profiles (shift = sensitivity in grid steps)
# ------------------------------------------------------------------------------------------------------
def discrete_laplace_log_delta(*, epsilon, t, shift=1) -> float:
    """log delta(epsilon) of the discrete Laplace mechanism with parameter ``t`` and integer ``shift``.

    Closed form (docs/release.md): with q = exp(-1/t) and m = ceil((k - epsilon t)/2) - 1,
    ``delta = [-expm1(eps - (k - m)/t) - q expm1(-m/t)] / (1 + q)`` for epsilon < k/t, else 0 (-inf here).
    """
    eps = check_epsilon_scalar(epsilon)
    tt = rational_parameter(t, "t")
    k = check_shift(shift)
    if Fraction(k) / tt <= Fraction(eps):  # exact pure-DP check
        return -math.inf
    return float(_D.dlaplace_log_delta(eps, float(1 / tt), float(k)))


def discrete_laplace_delta(*, epsilon, t, shift=1) -> float:
    """delta(epsilon) of the discrete Laplace mechanism (see :func:`discrete_laplace_log_delta`)."""
    return math.exp(discrete_laplace_log_delta(epsilon=epsilon, t=t, shift=shift))


def discrete_gaussian_log_delta(*, epsilon, sigma2, shift=1) -> float:
    """log delta(epsilon) of the discrete Gaussian mechanism with variance parameter ``sigma2``, shift k.

    ``delta = sum_{y <= m} P(y) (1 - exp(eps - L(y)))``, L(y) = (k^2 - 2 k y) / (2 sigma2), over the y
    with L(y) > eps; every term is non-negative and the sum is formed in log-scaled arithmetic.
    """
    eps = check_epsilon_scalar(epsilon)
    s2 = rational_parameter(sigma2, "sigma2")
    k = check_shift(shift)
    return float(_D.dgauss_log_delta(eps, float(s2), float(k)))


def discrete_gaussian_delta(*, epsilon, sigma2, shift=1) -> float:
    """delta(epsilon) of the discrete Gaussian mechanism (see :func:`discrete_gaussian_log_delta`)."""
    return math.exp(discrete_gaussian_log_delta(epsilon=epsilon, sigma2=sigma2, shift=shift))


def discrete_laplace_log_cdf(m: int, t) -> float:
    """log P(Y <= m) for the discrete Laplace law with parameter ``t``."""
    return float(_D.dlaplace_log_cdf(float(_integer(m, "m")), float(1 / rational_parameter(t, "t"))))


def discrete_gaussian_log_cdf(m: int, sigma2) -> float:
    """log P(Y <= m) for the discrete Gaussian law with variance parameter ``sigma2``."""
    return float(_D.dgauss_log_cdf(float(_integer(m, "m")), float(rational_parameter(sigma2, "sigma2"))))


def _integer(m: Any, name: str) -> int:
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an int")
    m = int(m)
    if abs(m) > 2**52:
        raise ValueError(f"|{name}| must be at most 2**52")
    return m


