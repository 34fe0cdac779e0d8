"""Exact privacy profiles of the discrete Laplace and discrete Gaussian mechanisms for an integer shift.

The shift k is the sensitivity in grid steps (with the rounding charged, docs/release.md).
"""
from __future__ import annotations

import math
from fractions import Fraction

from .._core import release as _D
from .._validation import check_epsilon_scalar, check_int
from .samplers import Rational, check_shift, rational_parameter


def discrete_laplace_log_delta(*, epsilon: float, t: Rational, shift: int = 1) -> float:
    """log delta(epsilon) of the discrete Laplace mechanism with parameter ``t`` and integer ``shift``.

    Closed form (docs/release.md): with q = exp(-1/t) and m = ceil((k - epsilon t)/2) - 1,
    ``delta = [-expm1(eps - (k - m)/t) - q expm1(-m/t)] / (1 + q)`` for epsilon < k/t, else 0.

    Parameters
    ----------
    epsilon : float
        epsilon >= 0, finite.
    t : int, Fraction or float
        The noise parameter (grid steps), an exact positive rational.
    shift : int, optional
        The sensitivity k in grid steps, in [1, 2**52] (default 1).

    Returns
    -------
    float
        log delta; ``-inf`` when ``k / t <= epsilon`` (pure epsilon-DP, decided in exact arithmetic).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.discrete_laplace_log_delta(epsilon=0.5, t=2, shift=2)
    -1.40682911...
    >>> release.discrete_laplace_log_delta(epsilon=1.0, t=1, shift=1)
    -inf
    """
    eps = check_epsilon_scalar(epsilon)
    tt = rational_parameter(t, "t")
    k = check_shift(shift)
    if Fraction(k) / tt <= Fraction(eps):  # exact pure-DP check
        return -math.inf
    return float(_D.dlaplace_log_delta(eps, float(1 / tt), float(k)))


def discrete_laplace_delta(*, epsilon: float, t: Rational, shift: int = 1) -> float:
    """delta(epsilon) of the discrete Laplace mechanism: exp of :func:`discrete_laplace_log_delta`.

    Parameters
    ----------
    epsilon, t, shift :
        As in :func:`discrete_laplace_log_delta`.

    Returns
    -------
    float
        delta in [0, 1].

    Raises
    ------
    TypeError, ValueError
        As in :func:`discrete_laplace_log_delta`.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.discrete_laplace_delta(epsilon=0.5, t=2, shift=2)
    0.24491866...
    """
    return math.exp(discrete_laplace_log_delta(epsilon=epsilon, t=t, shift=shift))


def discrete_gaussian_log_delta(*, epsilon: float, sigma2: Rational, shift: int = 1) -> float:
    """log delta(epsilon) of the discrete Gaussian mechanism with variance parameter ``sigma2``, shift k.

    ``delta = sum_{y <= m} P(y) (1 - exp(eps - L(y)))``, L(y) = (k^2 - 2 k y) / (2 sigma2), over the y
    with L(y) > eps; every term is non-negative and the sum is formed in log-scaled arithmetic
    (docs/release.md).

    Parameters
    ----------
    epsilon : float
        epsilon >= 0, finite.
    sigma2 : int, Fraction or float
        The variance parameter (grid steps squared), an exact positive rational.
    shift : int, optional
        The sensitivity k in grid steps, in [1, 2**52] (default 1).

    Returns
    -------
    float
        log delta.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.discrete_gaussian_log_delta(epsilon=1.0, sigma2=4, shift=1)
    -4.9269225...
    """
    eps = check_epsilon_scalar(epsilon)
    s2 = rational_parameter(sigma2, "sigma2")
    k = check_shift(shift)
    return float(_D.dgauss_log_delta(eps, float(s2), float(k)))


def discrete_gaussian_delta(*, epsilon: float, sigma2: Rational, shift: int = 1) -> float:
    """delta(epsilon) of the discrete Gaussian mechanism: exp of :func:`discrete_gaussian_log_delta`.

    Parameters
    ----------
    epsilon, sigma2, shift :
        As in :func:`discrete_gaussian_log_delta`.

    Returns
    -------
    float
        delta in [0, 1].

    Raises
    ------
    TypeError, ValueError
        As in :func:`discrete_gaussian_log_delta`.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.discrete_gaussian_delta(epsilon=1.0, sigma2=4, shift=1)
    0.00724877...
    """
    return math.exp(discrete_gaussian_log_delta(epsilon=epsilon, sigma2=sigma2, shift=shift))


def discrete_laplace_log_cdf(m: int, t: Rational) -> float:
    """log P(Y <= m) for the discrete Laplace law with parameter ``t``.

    Parameters
    ----------
    m : int
        The point, |m| <= 2**52.
    t : int, Fraction or float
        The noise parameter, an exact positive rational.

    Returns
    -------
    float
        log P(Y <= m).

    Raises
    ------
    TypeError
        If ``m`` is not an int or ``t`` not a rational.
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.discrete_laplace_log_cdf(0, 2)
    -0.474076984...
    """
    return float(_D.dlaplace_log_cdf(float(_point(m)), float(1 / rational_parameter(t, "t"))))


def discrete_gaussian_log_cdf(m: int, sigma2: Rational) -> float:
    """log P(Y <= m) for the discrete Gaussian law with variance parameter ``sigma2``.

    Parameters
    ----------
    m : int
        The point, |m| <= 2**52.
    sigma2 : int, Fraction or float
        The variance parameter, an exact positive rational.

    Returns
    -------
    float
        log P(Y <= m), finite deep into the lower tail.

    Raises
    ------
    TypeError
        If ``m`` is not an int or ``sigma2`` not a rational.
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.discrete_gaussian_log_cdf(0, 4)
    -0.511266437...
    >>> release.discrete_gaussian_log_cdf(-1000, 4)
    -125001.612...
    """
    return float(_D.dgauss_log_cdf(float(_point(m)), float(rational_parameter(sigma2, "sigma2"))))


def _point(m: int) -> int:
    return check_int(m, "m", -(2**52), 2**52)
