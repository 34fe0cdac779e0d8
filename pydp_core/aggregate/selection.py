"""Differentially private partition selection by Laplace thresholding (``docs/aggregate.md``, section 4).

A group is released when its number of privacy units plus discrete Laplace noise ``Y``
(``P(y) ~ exp(-|y| / t)``) reaches an integer threshold ``tau`` (Korolova et al. 2009; Wilson et al.
2020). With ``Kp`` groups per unit and ``t >= Kp / epsilon``, the selection is (epsilon, delta)-DP with

    delta = 1 - (1 - p)^Kp,   p = P(1 + Y >= tau) = q^(tau - 1) / (1 + q),   q = exp(-1 / t),

the probability that one of the (at most Kp) groups a unit alone creates is released. The threshold is
the smallest integer ``tau >= 2`` with ``delta <= delta_target`` (checked in log space with a relative
margin of 1e-12 toward the safe side).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .aggregations import IntegerNoise, integer_noise

_MARGIN = 1e-12


def _log_tail(m, t: Fraction):
    """log P(Y >= m) for Y ~ discrete Laplace(t), m an integer (array)."""
    m = np.asarray(m, dtype=np.float64)
    log_q = -1.0 / float(t)
    log_norm = math.log1p(math.exp(log_q))
    upper = m * log_q - log_norm  # m >= 1
    # m <= 0: P(Y >= m) = 1 - P(Y >= 1 - m) (evaluated at min(m, 0), where 1 - m >= 1)
    lower = np.log(-np.expm1((1.0 - np.minimum(m, 0.0)) * log_q - log_norm))
    return np.where(m >= 1, upper, lower)


def selection_delta(*, threshold: int, t: Fraction, max_partitions: int) -> float:
    """The delta of Laplace thresholding (Korolova et al. 2009; Wilson et al. 2020).

    Parameters
    ----------
    threshold : int
        The release threshold tau (>= 2) on the noisy number of privacy units.
    t : Fraction
        The discrete Laplace parameter, ``P(y) ~ exp(-|y| / t)``.
    max_partitions : int
        The most groups one privacy unit contributes to.

    Returns
    -------
    float
        ``1 - (1 - p)^max_partitions`` with ``p = P(1 + Y >= threshold) = q^(threshold - 1) / (1 + q)``,
        ``q = exp(-1/t)``, computed in log space.

    Raises
    ------
    ValueError
        Never for valid arguments; the arguments are not re-checked (see :func:`calibrate_selection`).

    Examples
    --------
    >>> from fractions import Fraction
    >>> round(selection_delta(threshold=15, t=Fraction(1), max_partitions=1), 12)
    6.07896e-07
    """
    log_p = float(_log_tail(threshold - 1, t))
    return -math.expm1(max_partitions * math.log1p(-math.exp(log_p)))


def selection_probability(units, *, threshold: int, t: Fraction) -> np.ndarray:
    """The probability that a group with ``units`` privacy units is released.

    Parameters
    ----------
    units : int or array of int
        The number of privacy units in the group (after contribution bounding).
    threshold : int
        The release threshold tau.
    t : Fraction
        The discrete Laplace parameter of the selection noise.

    Returns
    -------
    numpy.ndarray
        ``P(units + Y >= threshold)`` for ``Y`` discrete Laplace(t), exact up to rounding.

    Raises
    ------
    ValueError
        Never for valid arguments; the arguments are not re-checked.

    Examples
    --------
    >>> from fractions import Fraction
    >>> float(selection_probability(15, threshold=15, t=Fraction(1)))  # P(Y >= 0) = 1 / (1 + e^-1)
    0.7310585786300049
    """
    return np.exp(_log_tail(threshold - np.asarray(units, dtype=np.float64), t))


@dataclass(frozen=True)
class ThresholdSelection:
    """Laplace thresholding calibrated to (epsilon, delta) for ``max_partitions`` groups per unit."""

    epsilon: float
    delta: float
    max_partitions: int
    noise: IntegerNoise
    threshold: int
    delta_achieved: float

    def select(self, units: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """The boolean mask of released groups (keyed noise per group, as every aggregate)."""
        return self.noise.draw(units, stream_ids, key) >= self.threshold

    def describe(self) -> dict:
        return {
            "method": "laplace_threshold", "epsilon": self.epsilon, "delta": self.delta,
            "delta_achieved": self.delta_achieved, "threshold": self.threshold,
            "t": str(self.noise.t), "scale": float(self.noise.t), "max_partitions": self.max_partitions,
        }


def calibrate_selection(*, epsilon: float, delta: float, max_partitions: int) -> ThresholdSelection:
    """Laplace thresholding calibrated to (epsilon, delta): the smallest threshold that meets delta.

    Parameters
    ----------
    epsilon : float
        The selection's epsilon (> 0); the noise parameter is the smallest multiple t of 2**-20 with
        ``max_partitions / t <= epsilon`` (exact rational check).
    delta : float
        The selection's delta, in (0, 1).
    max_partitions : int
        The most groups one privacy unit contributes to.

    Returns
    -------
    ThresholdSelection
        The noise, the threshold (the smallest integer >= 2 whose :func:`selection_delta` is at most
        ``delta (1 - 1e-12)``) and the achieved delta.

    Raises
    ------
    ValueError
        If delta is not in (0, 1) or epsilon is too small for a finite t below 2**40.

    Examples
    --------
    >>> sel = calibrate_selection(epsilon=1.0, delta=1e-6, max_partitions=1)
    >>> sel.threshold, sel.delta_achieved <= 1e-6
    (15, True)
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(
            "delta must lie in (0, 1) for partition selection (give public_partitions to release known groups "
            "with delta = 0)"
        )
    noise = integer_noise(epsilon, 1, max_partitions)
    target = delta * (1.0 - _MARGIN)
    log_q = -1.0 / float(noise.t)
    # p <= 1 - (1 - target)^(1/Kp) =: p_max, then tau - 1 >= (log p_max + log(1 + q)) / log q
    p_max = -math.expm1(math.log1p(-target) / max_partitions)
    tau = max(2, math.ceil((math.log(p_max) + math.log1p(math.exp(log_q))) / log_q) + 1)
    while selection_delta(threshold=tau, t=noise.t, max_partitions=max_partitions) > target:
        tau += 1
    while tau > 2 and selection_delta(threshold=tau - 1, t=noise.t, max_partitions=max_partitions) <= target:
        tau -= 1
    achieved = selection_delta(threshold=tau, t=noise.t, max_partitions=max_partitions)
    return ThresholdSelection(epsilon, delta, max_partitions, noise, tau, achieved)
