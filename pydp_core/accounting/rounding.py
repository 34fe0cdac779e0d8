"""Upward-rounded arithmetic on privacy parameters.

A composed or derived privacy parameter that is not a double is reported as the next double above it, so
that no budget is ever understated by rounding: :func:`sum_up` (sums of epsilons, deltas, rhos), :func:`norm_up`
(the root sum of squares of GDP and Rao parameters), :func:`ratio_up` (a sensitivity over a scale) and
:func:`up` (any rational) are exact: each finds the correctly rounded result and checks it against the exact
value in rational arithmetic (every double is a rational), stepping up by one ulp where it fell below.
:func:`inflate_up` raises a value computed through a few transcendental functions past their rounding. Infinite or NaN inputs are
passed through as the float operations give them (the budget types refuse them).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

__all__ = ["up", "sum_up", "norm_up", "ratio_up", "inflate_up"]


def up(value: Fraction) -> float:
    """The smallest double >= the rational ``value`` (inf beyond the largest double).

    Examples
    --------
    >>> up(Fraction(1, 3)) > 1 / 3
    True
    """
    try:
        result = float(value)
    except OverflowError:
        return math.inf
    if Fraction(result) < value:
        result = math.nextafter(result, math.inf)
    return result


def sum_up(values: Iterable[float]) -> float:
    """The smallest double >= the exact sum of ``values``.

    Examples
    --------
    >>> sum_up([0.1, 0.2]) >= 0.3
    True
    """
    terms = [float(v) for v in values]
    if not all(math.isfinite(t) for t in terms):
        return math.fsum(terms)
    return up(sum(map(Fraction, terms), Fraction(0)))


def inflate_up(value: float, operations: int) -> float:
    """``value`` raised past the rounding of ``operations`` floating-point operations, each within one ulp
    (relative 2^-52) of its exact result: a result computed that way is then never below the exact one.

    Examples
    --------
    >>> inflate_up(1.0, 4) > 1.0
    True
    """
    if not math.isfinite(value) or value <= 0.0:
        return value
    return math.nextafter(value * (1.0 + 2.0 ** -52 * (operations + 1)), math.inf)


def norm_up(values: Iterable[float]) -> float:
    """The smallest double >= sqrt(sum of squares of ``values``).

    Examples
    --------
    >>> norm_up([3.0, 4.0])
    5.0
    """
    terms = [float(v) for v in values]
    root = math.hypot(*terms)
    if math.isfinite(root):
        square = sum((Fraction(t) ** 2 for t in terms), Fraction(0))
        while Fraction(root) ** 2 < square:
            root = math.nextafter(root, math.inf)
        while root > 0.0 and Fraction(math.nextafter(root, 0.0)) ** 2 >= square:
            root = math.nextafter(root, 0.0)
    return root


def ratio_up(num: float, den: float) -> float:
    """The smallest double >= num / den for finite num >= 0 and den > 0 (a quotient that underflows is the
    smallest positive double, not 0, when num > 0).

    Examples
    --------
    >>> ratio_up(1.0, 3.0) >= 1 / 3
    True
    """
    q = num / den
    if math.isfinite(q) and Fraction(q) * Fraction(den) < Fraction(num):
        q = math.nextafter(q, math.inf)
    return q
