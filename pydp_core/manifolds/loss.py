"""The range of the privacy loss of the Riemannian Gaussian mechanism.

The privacy loss L = (d(eta', y)^2 - d(eta, y)^2) / (2 sigma^2) is largest at the antipode of eta' on S^1
and S^d, D (2 pi - D) / (2 sigma^2), where delta(eps) reaches 0 (:func:`largest_loss`; exactly, as a
double pair from 50 digits of pi, in :func:`_largest_loss_parts`, so that the gap to it keeps its digits
however close eps comes). :func:`default_eps_max` is the eps range of the Monte Carlo grid.
"""
from __future__ import annotations

import math
from fractions import Fraction

from .spaces import Circle, Manifold, Sphere


def largest_loss(sigma: float, D: float) -> float:
    """The largest privacy loss on S^1 and S^d, D (2 pi - D) / (2 sigma^2): delta(eps) = 0 from there on.

    The loss (d(eta', y)^2 - d(eta, y)^2) / (2 sigma^2) is largest at the antipode of eta'.
    """
    return D * (2 * math.pi - D) / (2 * sigma**2)


def default_eps_max(manifold: Manifold, sigma: float, D: float) -> float:
    """The largest epsilon of the Monte Carlo grid: :func:`largest_loss` on S^1 and S^d, else the choice
    of Jiang et al. 2023 on R, max(10, 5 D / sigma + D^2 / (2 sigma^2))."""
    if isinstance(manifold, (Circle, Sphere)):
        return largest_loss(sigma, D)
    return max(10.0, 5.0 * D / sigma + D * D / (2 * sigma**2))


# pi to 50 digits as an exact fraction: the largest loss on the circle is formed from it in exact rational
# arithmetic, so that the gap to it keeps its digits however close epsilon comes.
_PI_FRACTION = Fraction("3.1415926535897932384626433832795028841971693993751")


def _largest_loss_parts(sigma: float, D: float) -> tuple[float, float]:
    """The largest loss D (2 pi - D) / (2 sigma^2) as hi + lo, hi the nearest double, lo the rest (the
    exact rational value from the double inputs and 50 digits of pi)."""
    exact = Fraction(D) * (2 * _PI_FRACTION - Fraction(D)) / (2 * Fraction(sigma) ** 2)
    hi = float(exact)
    return hi, float(exact - Fraction(hi))
