"""Exact integer samplers of the discrete Laplace and discrete Gaussian distributions.

Drawn by integer arithmetic only from the ChaCha20 CSPRNG (Canonne, Kamath and Steinke 2020; exact
inversion for the discrete Laplace, ``docs/release.md``).
"""
from __future__ import annotations

import math
import numbers
import operator
from fractions import Fraction
from typing import Any, Tuple

import numpy as np

from .. import _core
from ..random import as_random

_D = _core.discrete

#: The largest numerator or denominator of a noise parameter (2**62).
MAX_PARAM = int(_D.MAX_PARAM)
#: The largest discrete Laplace parameter t (2**40).
MAX_LAPLACE_T = int(_D.MAX_LAPLACE_T)



# ------------------------------------------------------------------------------------------------------
# Argument helpers
# ------------------------------------------------------------------------------------------------------
def rational_parameter(value: Any, name: str) -> Fraction:
    """A positive exact rational with numerator and denominator at most 2**62 (TypeError/ValueError)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Rational, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be an int, a fractions.Fraction or a float, not {type(value).__name__}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite")
        frac = Fraction(float(value))
    else:
        frac = Fraction(int(value)) if isinstance(value, (numbers.Integral, np.integer)) else Fraction(value)
    if frac <= 0:
        raise ValueError(f"{name} must be > 0")
    if frac.numerator > MAX_PARAM or frac.denominator > MAX_PARAM:
        raise ValueError(
            f"{name} = {frac} is not a ratio of integers up to 2**62; pass a fractions.Fraction with smaller terms"
        )
    return frac


def _size(size: Any) -> Tuple[Tuple[int, ...], int]:
    if size is None:
        return (), 1
    if isinstance(size, (numbers.Integral, np.integer)) and not isinstance(size, (bool, np.bool_)):
        shape: Tuple[int, ...] = (int(size),)
    else:
        try:
            shape = tuple(_index(s) for s in size)
        except TypeError:
            raise TypeError("size must be None, an int or a tuple of ints") from None
    if any(s < 0 for s in shape):
        raise ValueError("size must not be negative")
    return shape, int(np.prod(shape, dtype=np.int64)) if shape else 1


def _index(v: Any) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("bool")
    return operator.index(v)


def generator_and_threads(rng: Any):
    """(C++ generator, threads) behind an rng argument (None = a fresh secure pydp_core.Random)."""
    r = as_random(rng)
    return r._gen, int(r._threads)


def check_shift(shift: Any) -> int:
    if isinstance(shift, (bool, np.bool_)) or not isinstance(shift, (numbers.Integral, np.integer)):
        raise TypeError("shift must be an int (the sensitivity in grid steps)")
    k = int(shift)
    if k < 1 or k > 2**52:
        raise ValueError("shift must lie in [1, 2**52]")
    return k




# ------------------------------------------------------------------------------------------------------
# Exact integer samplers
# ------------------------------------------------------------------------------------------------------
def sample_discrete_laplace(t, size=None, rng=None):
    """Integers from the discrete Laplace law ``P(y) ~ exp(-|y| / t)``, drawn exactly (CKS Algorithm 2).

    ``t`` is an exact positive rational below 2**40 (int, ``Fraction`` or float, converted exactly).
    ``rng``: None (a fresh secure :class:`pydp_core.Random`), a :class:`pydp_core.Random` (seeded ones
    are for tests only) or a ``numpy.random.Generator``. Returns an int64 array of shape ``size``, or a
    Python int when ``size`` is None.
    """
    tt = rational_parameter(t, "t")
    if tt >= MAX_LAPLACE_T:
        raise ValueError("t must be below 2**40")
    shape, n = _size(size)
    gen, threads = generator_and_threads(rng)
    out = _D.discrete_laplace(gen, tt.numerator, tt.denominator, n, threads)
    return int(out[0]) if size is None else out.reshape(shape)


def sample_discrete_gaussian(sigma2, size=None, rng=None):
    """Integers from the discrete Gaussian law ``P(y) ~ exp(-y**2 / (2 sigma2))``, exactly (CKS Algorithm 3).

    ``sigma2`` (the variance parameter, not the variance) is an exact positive rational with numerator
    and denominator up to 2**62. Other arguments as in :func:`sample_discrete_laplace`.
    """
    s2 = rational_parameter(sigma2, "sigma2")
    shape, n = _size(size)
    gen, threads = generator_and_threads(rng)
    out = _D.discrete_gaussian(gen, s2.numerator, s2.denominator, n, threads)
    return int(out[0]) if size is None else out.reshape(shape)

