"""Special functions of the C++ core, vectorised over numpy arrays.

Written for the calibration core and tested against 50-digit mpmath references, deep tails included
(``tests/special/test_special.py``; the methods are described in ``docs/noise.md``):

- :func:`ndtr`, :func:`log_ndtr`, :func:`ndtri`, :func:`erfcx`: the standard normal distribution with
  log-space tails (``log_ndtr(-447.0)`` = -99911.52..., exact to a few ulp);
- :func:`gammainc`, :func:`gammaincc`, :func:`log_gammainc`, :func:`log_gammaincc`: the regularised
  incomplete gamma functions P(a, x) and Q(a, x) for shape a in (0, 1] (the Subbotin family's 1/r);
- :func:`gammaincc_inv_log`: x with log Q(a, x) = log_q.

Every function takes a scalar or an array and returns a float or an array of the same shape.
"""
from __future__ import annotations

from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike

from ._core import special as _sp
from ._validation import as_float_array, as_scalar, check_probability, scalar_or_array

__all__ = [
    "ndtr",
    "log_ndtr",
    "ndtri",
    "erfcx",
    "lgamma1p",
    "gammainc",
    "gammaincc",
    "log_gammainc",
    "log_gammaincc",
    "gammaincc_inv_log",
]


def _real(x: ArrayLike, name: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    return np.ascontiguousarray(arr)


@overload
def ndtr(x: float) -> float: ...
@overload
def ndtr(x: ArrayLike) -> Any: ...
def ndtr(x: ArrayLike) -> Any:
    """Standard normal CDF Phi(x).

    Parameters
    ----------
    x : float or array_like
        Real points (not NaN; +-inf allowed).

    Returns
    -------
    float or ndarray
        Phi(x).

    Raises
    ------
    ValueError
        If ``x`` has a NaN.
    TypeError
        If ``x`` is not real-valued.

    Examples
    --------
    >>> ndtr(1.0)
    0.84134474606...
    """
    return scalar_or_array(_sp.ndtr(_real(x, "x")), x)


@overload
def log_ndtr(x: float) -> float: ...
@overload
def log_ndtr(x: ArrayLike) -> Any: ...
def log_ndtr(x: ArrayLike) -> Any:
    """log Phi(x), accurate deep into the lower tail.

    Parameters
    ----------
    x : float or array_like
        Real points (not NaN).

    Returns
    -------
    float or ndarray
        log Phi(x), finite wherever Phi(x) > 0 mathematically.

    Raises
    ------
    ValueError
        If ``x`` has a NaN.
    TypeError
        If ``x`` is not real-valued.

    Examples
    --------
    >>> log_ndtr(-447.0)
    -99911.5215021...
    """
    return scalar_or_array(_sp.log_ndtr(_real(x, "x")), x)


@overload
def ndtri(p: float) -> float: ...
@overload
def ndtri(p: ArrayLike) -> Any: ...
def ndtri(p: ArrayLike) -> Any:
    """Inverse of the standard normal CDF.

    Parameters
    ----------
    p : float or array_like
        Probabilities in [0, 1].

    Returns
    -------
    float or ndarray
        Phi^-1(p) (-inf at 0, inf at 1).

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1] or NaN.
    TypeError
        If ``p`` is not real-valued.

    Examples
    --------
    >>> ndtri(0.975)
    1.95996398454...
    """
    return scalar_or_array(_sp.ndtri(np.ascontiguousarray(check_probability(p, "p"))), p)


@overload
def erfcx(x: float) -> float: ...
@overload
def erfcx(x: ArrayLike) -> Any: ...
def erfcx(x: ArrayLike) -> Any:
    """Scaled complementary error function exp(x^2) erfc(x).

    Parameters
    ----------
    x : float or array_like
        Real points (not NaN).

    Returns
    -------
    float or ndarray
        exp(x^2) erfc(x), about 1 / (x sqrt(pi)) for large x.

    Raises
    ------
    ValueError
        If ``x`` has a NaN.
    TypeError
        If ``x`` is not real-valued.

    Examples
    --------
    >>> erfcx(30.0)
    0.01879588886...
    """
    return scalar_or_array(_sp.erfcx(_real(x, "x")), x)


@overload
def lgamma1p(a: float) -> float: ...
@overload
def lgamma1p(a: ArrayLike) -> Any: ...
def lgamma1p(a: ArrayLike) -> Any:
    """log Gamma(1 + a) for a in [-1/2, 3/2], accurate near 0 and 1.

    Parameters
    ----------
    a : float or array_like
        Points in [-0.5, 1.5].

    Returns
    -------
    float or ndarray
        log Gamma(1 + a).

    Raises
    ------
    ValueError
        If ``a`` is outside [-0.5, 1.5] or NaN.
    TypeError
        If ``a`` is not real-valued.

    Examples
    --------
    >>> lgamma1p(0.5)
    -0.12078223763...
    """
    arr = _real(a, "a")
    if ((arr < -0.5) | (arr > 1.5)).any():
        raise ValueError("a must lie in [-0.5, 1.5]")
    return scalar_or_array(_sp.lgamma1p(arr), a)


def _shape(a: float) -> float:
    """The incomplete gamma shape a, a scalar in (0, 1]."""
    v = as_scalar(as_float_array(a, "a"), "a")
    if not (0.0 < v <= 1.0):
        raise ValueError("a must lie in (0, 1]")
    return v


def _incgamma(a: float, x: ArrayLike, which: int) -> Any:
    shape = _shape(a)
    arr = _real(x, "x")
    if (arr < 0).any():
        raise ValueError("x must be >= 0")
    return scalar_or_array(_sp.incgamma(shape, arr, which), x)


_INCGAMMA_DOC = """

    Parameters
    ----------
    a : float
        The shape, a scalar in (0, 1].
    x : float or array_like
        Points >= 0.

    Returns
    -------
    float or ndarray
        {what}.

    Raises
    ------
    ValueError
        If ``a`` is outside (0, 1] or ``x`` is negative or NaN.
    TypeError
        If an argument is not real-valued, or ``a`` is not a scalar.

    Examples
    --------
    >>> {example}
    {value}
    """


@overload
def gammainc(a: float, x: float) -> float: ...
@overload
def gammainc(a: float, x: ArrayLike) -> Any: ...
def gammainc(a: float, x: ArrayLike) -> Any:
    return _incgamma(a, x, 0)


@overload
def gammaincc(a: float, x: float) -> float: ...
@overload
def gammaincc(a: float, x: ArrayLike) -> Any: ...
def gammaincc(a: float, x: ArrayLike) -> Any:
    return _incgamma(a, x, 1)


@overload
def log_gammainc(a: float, x: float) -> float: ...
@overload
def log_gammainc(a: float, x: ArrayLike) -> Any: ...
def log_gammainc(a: float, x: ArrayLike) -> Any:
    return _incgamma(a, x, 2)


@overload
def log_gammaincc(a: float, x: float) -> float: ...
@overload
def log_gammaincc(a: float, x: ArrayLike) -> Any: ...
def log_gammaincc(a: float, x: ArrayLike) -> Any:
    return _incgamma(a, x, 3)


gammainc.__doc__ = "Regularised lower incomplete gamma function P(a, x), a in (0, 1]." + _INCGAMMA_DOC.format(
    what="P(a, x)", example="gammainc(0.5, 2.0)", value="0.95449973610..."
)
gammaincc.__doc__ = "Regularised upper incomplete gamma function Q(a, x), a in (0, 1]." + _INCGAMMA_DOC.format(
    what="Q(a, x) = 1 - P(a, x), accurate where it is tiny", example="gammaincc(0.5, 2.0)", value="0.04550026389..."
)
log_gammainc.__doc__ = "log P(a, x), a in (0, 1]." + _INCGAMMA_DOC.format(
    what="log P(a, x)", example="log_gammainc(0.5, 2.0)", value="-0.04656791229..."
)
log_gammaincc.__doc__ = (
    "log Q(a, x), a in (0, 1]; finite far beyond the underflow of Q (log Q = -1e5 and below)."
    + _INCGAMMA_DOC.format(what="log Q(a, x)", example="log_gammaincc(0.5, 1e5)", value="-100006.328832...")
)


@overload
def gammaincc_inv_log(a: float, log_q: float) -> float: ...
@overload
def gammaincc_inv_log(a: float, log_q: ArrayLike) -> Any: ...
def gammaincc_inv_log(a: float, log_q: ArrayLike) -> Any:
    """The x >= 0 with log Q(a, x) = log_q (log_q <= 0), a in (0, 1].

    Parameters
    ----------
    a : float
        The shape, a scalar in (0, 1].
    log_q : float or array_like
        Values of log Q, <= 0 (``-inf`` gives ``inf``).

    Returns
    -------
    float or ndarray
        x with log Q(a, x) = log_q.

    Raises
    ------
    ValueError
        If ``a`` is outside (0, 1] or ``log_q`` is positive or NaN.
    TypeError
        If an argument is not real-valued, or ``a`` is not a scalar.

    Examples
    --------
    >>> gammaincc_inv_log(0.5, -100.0)
    97.1345038467...
    """
    shape = _shape(a)
    arr = _real(log_q, "log_q")
    if (arr > 0).any():
        raise ValueError("log_q must be <= 0")
    return scalar_or_array(_sp.incgamma_q_inv_log(shape, arr), log_q)
