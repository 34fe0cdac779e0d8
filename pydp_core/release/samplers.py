"""Exact integer samplers of the discrete Laplace and discrete Gaussian distributions.

Drawn by integer arithmetic only from the ChaCha20 CSPRNG (Canonne, Kamath and Steinke 2020; exact
inversion for the discrete Laplace, ``docs/release.md``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Union, overload

import numpy as np

from .._core import release as _D
from .._validation import check_int, check_rational, check_size
from ..random import as_random

#: The largest numerator or denominator of a noise parameter (2**62).
MAX_PARAM = int(_D.MAX_PARAM)
#: The largest discrete Laplace parameter t (2**40).
MAX_LAPLACE_T = int(_D.MAX_LAPLACE_T)

#: An exact positive rational noise parameter: an int, a Fraction or a float (converted exactly).
Rational = Union[int, Fraction, float]
#: numpy-style output size: None (one value), an int or a tuple of ints.
Size = Union[int, tuple[int, ...], None]


# ------------------------------------------------------------------------------------------------------
# Argument helpers shared by the modules of this package
# ------------------------------------------------------------------------------------------------------
def rational_parameter(value: Any, name: str) -> Fraction:
    """A positive exact rational with numerator and denominator at most 2**62 (TypeError/ValueError)."""
    return check_rational(value, name, MAX_PARAM)


def check_shift(shift: Any) -> int:
    """The sensitivity in grid steps: an int in [1, 2**52]."""
    return check_int(shift, "shift", 1, 2**52)


def generator_and_threads(rng: Any) -> tuple[Any, int]:
    """(C++ generator, threads) behind an rng argument (None = a fresh secure pydp_core.Random)."""
    r = as_random(rng)
    return r.kernel, r.kernel_threads


def _shape(size: Size) -> tuple[tuple[int, ...], int]:
    shape = check_size(size)
    if shape is None:
        return (), 1
    return shape, int(np.prod(shape, dtype=np.int64)) if shape else 1


# ------------------------------------------------------------------------------------------------------
# Exact integer samplers
# ------------------------------------------------------------------------------------------------------
@overload
def sample_discrete_laplace(t: Rational, size: None = ..., rng: Any = ...) -> int: ...
@overload
def sample_discrete_laplace(t: Rational, size: int | tuple[int, ...], rng: Any = ...) -> np.ndarray: ...
def sample_discrete_laplace(t: Rational, size: Size = None, rng: Any = None) -> int | np.ndarray:
    """Integers from the discrete Laplace law ``P(y) ~ exp(-|y| / t)``, drawn exactly.

    Canonne, Kamath and Steinke 2020, Algorithm 2, with integer arithmetic only (docs/release.md).

    Parameters
    ----------
    t : int, Fraction or float
        The scale parameter, an exact positive rational below 2**40 (a float is converted exactly).
    size : None, int or tuple of int, optional
        Output shape (numpy convention); ``None`` draws one value.
    rng : None, Random or numpy.random.Generator, optional
        The random source: ``None`` a fresh secure :class:`pydp_core.Random` (for releases); a seeded
        ``Random`` or a numpy generator for tests only.

    Returns
    -------
    int or numpy.ndarray
        A Python int when ``size`` is None, else an int64 array of shape ``size``.

    Raises
    ------
    TypeError
        If ``t`` is not an int, Fraction or float, ``size`` is not a valid size, or ``rng`` is not a
        generator.
    ValueError
        If ``t`` is not positive and finite, not below 2**40, or not a ratio of integers up to 2**62.

    Examples
    --------
    >>> from fractions import Fraction
    >>> import pydp_core as dp
    >>> from pydp_core import release
    >>> y = release.sample_discrete_laplace(Fraction(1, 3), size=5, rng=dp.Random(7))
    >>> y.shape, y.dtype
    ((5,), dtype('int64'))
    >>> isinstance(release.sample_discrete_laplace(2, rng=dp.Random(7)), int)
    True
    """
    tt = rational_parameter(t, "t")
    if tt >= MAX_LAPLACE_T:
        raise ValueError("t must be below 2**40")
    shape, n = _shape(size)
    gen, threads = generator_and_threads(rng)
    out = _D.discrete_laplace(gen, tt.numerator, tt.denominator, n, threads)
    return int(out[0]) if size is None else out.reshape(shape)


@overload
def sample_discrete_gaussian(sigma2: Rational, size: None = ..., rng: Any = ...) -> int: ...
@overload
def sample_discrete_gaussian(sigma2: Rational, size: int | tuple[int, ...], rng: Any = ...) -> np.ndarray: ...
def sample_discrete_gaussian(sigma2: Rational, size: Size = None, rng: Any | None = None) -> int | np.ndarray:
    """Integers from the discrete Gaussian law ``P(y) ~ exp(-y**2 / (2 sigma2))``, drawn exactly.

    Canonne, Kamath and Steinke 2020, Algorithm 3, with integer arithmetic only (docs/release.md).

    Parameters
    ----------
    sigma2 : int, Fraction or float
        The variance parameter (not the variance), an exact positive rational with numerator and
        denominator up to 2**62.
    size : None, int or tuple of int, optional
        Output shape (numpy convention); ``None`` draws one value.
    rng : None, Random or numpy.random.Generator, optional
        As in :func:`sample_discrete_laplace`.

    Returns
    -------
    int or numpy.ndarray
        A Python int when ``size`` is None, else an int64 array of shape ``size``.

    Raises
    ------
    TypeError
        If ``sigma2`` is not an int, Fraction or float, ``size`` is not a valid size, or ``rng`` is not
        a generator.
    ValueError
        If ``sigma2`` is not positive and finite or not a ratio of integers up to 2**62.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import release
    >>> y = release.sample_discrete_gaussian(4, size=(2, 3), rng=dp.Random(7))
    >>> y.shape, y.dtype
    ((2, 3), dtype('int64'))
    """
    s2 = rational_parameter(sigma2, "sigma2")
    shape, n = _shape(size)
    gen, threads = generator_and_threads(rng)
    out = _D.discrete_gaussian(gen, s2.numerator, s2.denominator, n, threads)
    return int(out[0]) if size is None else out.reshape(shape)
