"""Differentially private partition selection (``docs/aggregate.md``, section 4).

Two methods: Laplace thresholding (the default) and the optimal mechanism of Desfontaines et al. (2022)
(:func:`calibrate_optimal_selection`, :func:`optimal_probability`).

Laplace thresholding: a group is released when its number of privacy units plus discrete Laplace noise ``Y``
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
from functools import lru_cache
from typing import Any

import numpy as np

from .._core import aggregation as _cagg
from .aggregations import IntegerNoise, _base_generator, integer_noise

_MARGIN = 1e-12
#: The partition-selection methods of :func:`pydp_cagg.aggregate`.
SELECTION_METHODS = ("threshold", "optimal")
_GRID_EXTRA_BITS = 96  # grid resolution below delta: pi(1) = delta to ~2**-96 relative
_MAX_STEPS = 1_000_000  # table entries (~60 MB of Python ints, a few seconds)


def _log_tail(m: Any, t: Fraction) -> Any:
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


def selection_probability(units: Any, *, threshold: int, t: Fraction) -> np.ndarray:
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
    result: np.ndarray = np.exp(_log_tail(threshold - np.asarray(units, dtype=np.float64), t))
    return result


@dataclass(frozen=True)
class ThresholdSelection:
    """Laplace thresholding calibrated to (epsilon, delta) for ``max_partitions`` groups per unit."""

    epsilon: float
    delta: float
    max_partitions: int
    noise: IntegerNoise
    threshold: int
    delta_achieved: float

    @property
    def zcdp_rho(self) -> float:
        """The noisy unit counts are pure epsilon-DP, hence ``epsilon^2 / 2``-zCDP (rounded up); the selection
        is ``delta_achieved``-approximately that (``docs/aggregate.md``, section 5)."""
        return _round_up(Fraction(self.epsilon) ** 2 / 2)

    def select(self, units: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """The boolean mask of released groups (keyed noise per group, as every aggregate)."""
        return self.noise.draw(units, stream_ids, key) >= self.threshold

    def describe(self) -> dict[Any, Any]:
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


@lru_cache(maxsize=32)
def _optimal_table(epsilon: float, delta: float) -> tuple[int, tuple[int, ...]]:
    """``(b, T)`` with ``T[n] = 2**b pi(n)`` for n = 0, 1, ..., N and ``T[N] = 2**b`` (exact integers).

    The recursion of :func:`optimal_probability`, evaluated in exact rational arithmetic with ``e^eps``
    rounded down and ``e^-eps`` rounded up (both stricter than the true constraints) and every ``pi(n)``
    rounded down to the grid 2**-b (b a multiple of 64 with 2**-b <= delta 2**-96), each step from the
    previous rounded value: the table meets both DP constraints exactly and is the largest on the grid that
    does, up to the rounding of ``e^eps``.
    """
    e_lo = Fraction(math.nextafter(math.exp(epsilon), 0.0))
    f_hi = Fraction(math.nextafter(math.exp(-epsilon), math.inf))
    d = Fraction(delta)
    bits = 64 * math.ceil((_GRID_EXTRA_BITS - math.frexp(delta)[1] + 1) / 64)
    one = 1 << bits
    # common denominators: integer arithmetic only in the loop
    # the geometric phase takes ln(1 + (e^eps - 1) / (2 delta)) / eps steps to reach 1/2, the mirrored one as
    # many to reach 1: refuse before the loop when that is beyond the cap
    if 2.0 * math.log1p(math.expm1(epsilon) / (2.0 * delta)) / epsilon > _MAX_STEPS:
        raise ValueError(
            f"epsilon={epsilon!r}, delta={delta!r} per partition: the optimal selection's table would exceed "
            f"{_MAX_STEPS} entries; use partition_selection='threshold' or a larger epsilon share"
        )
    en, ed, fn, fd, dn, dd = e_lo.numerator, e_lo.denominator, f_hi.numerator, f_hi.denominator, d.numerator, d.denominator
    table = [0]
    t = 0
    while t < one:
        if len(table) > _MAX_STEPS:
            raise ValueError(
                f"epsilon={epsilon!r}, delta={delta!r} per partition: the optimal selection's table would exceed "
                f"{_MAX_STEPS} entries; use partition_selection='threshold' or a larger epsilon share"
            )
        grow = (en * t * dd + dn * one * ed) // (ed * dd)  # floor(2^128 (e^eps pi + delta))
        rest = fn * ((one - t) * dd - dn * one)  # 2^128 e^-eps (1 - pi - delta), times fd dd
        close = one - (-(-rest // (fd * dd)))  # floor(2^128 (1 - e^-eps (1 - pi - delta)))
        t = min(grow, close, one)
        table.append(t)
    return bits, tuple(table)


def optimal_probability(units: Any, *, epsilon: float, delta: float, max_partitions: int = 1) -> np.ndarray:
    """The release probability ``pi(n)`` of the optimal partition selection (Desfontaines et al. 2022).

    ``pi(0) = 0`` and ``pi(n) = min(e^e pi(n-1) + d, 1 - e^-e (1 - pi(n-1) - d), 1)`` with
    ``(e, d) = (epsilon / Kp, delta / Kp)`` (each rounded down): the largest release probabilities of a
    group with ``n`` privacy units that are (e, d)-DP when one unit changes ``n`` by one.

    Parameters
    ----------
    units : int or array of int
        The number of privacy units in the group (after contribution bounding), >= 0.
    epsilon : float
        The selection's epsilon (> 0).
    delta : float
        The selection's delta, in (0, 1).
    max_partitions : int, optional
        The most groups one privacy unit contributes to (default 1).

    Returns
    -------
    numpy.ndarray
        ``pi(units)`` as float64 (the exact release probability is a multiple of 2**-b rounded here).

    Raises
    ------
    ValueError
        If epsilon or delta are out of range, or epsilon is so small that the table exceeds 10**6 entries.

    Examples
    --------
    >>> float(optimal_probability(1, epsilon=1.0, delta=1e-6))  # pi(1) = delta
    1e-06
    >>> float(optimal_probability(0, epsilon=1.0, delta=1e-6)), float(optimal_probability(40, epsilon=1.0, delta=1e-6))
    (0.0, 1.0)
    """
    sel = calibrate_optimal_selection(epsilon=epsilon, delta=delta, max_partitions=max_partitions)
    table = np.array([float(Fraction(t, 1 << sel.bits)) for t in sel.table])
    n = np.asarray(units, dtype=np.int64)
    return table[np.minimum(n, table.size - 1)]


@dataclass(frozen=True)
class OptimalSelection:
    """The optimal partition selection at (epsilon / Kp, delta / Kp) per group (Desfontaines et al. 2022)."""

    epsilon: float
    delta: float
    max_partitions: int
    epsilon_group: float
    delta_group: float
    bits: int  # the grid: release probabilities are multiples of 2**-bits
    table: tuple[Any, ...]  # 2**bits pi(n), n = 0..N, last entry 2**bits
    rho: float | None = None  # calibrated from a zCDP share: Kp epsilon_group^2 / 2 (rounded up), else None

    @property
    def delta_achieved(self) -> float:
        return float(self.max_partitions * Fraction(self.delta_group))

    @property
    def zcdp_rho(self) -> float:
        """The selection is ``delta_achieved``-approximately ``zcdp_rho``-zCDP: ``Kp e^2 / 2`` (rounded up)."""
        return _round_up(self.max_partitions * Fraction(self.epsilon_group) ** 2 / 2)

    def select(self, units: np.ndarray, stream_ids: np.ndarray, key: bytes) -> np.ndarray:
        """The boolean mask of released groups: ``bits`` keyed random bits per group below ``2**bits pi(n)``.

        Group j reads the first ``bits / 64`` words of ``Random(key).stream(stream_ids[j])`` as one
        big-endian integer ``U`` and is released when ``U < 2**bits pi(n_j)`` (compared word by word, all
        groups at once); groups with ``pi(n) = 0`` or ``1`` draw nothing.
        """
        last = len(self.table) - 1  # table[last] = 2**bits, the only entry that large; table[0] = 0
        n = np.minimum(np.asarray(units, dtype=np.int64), last)
        out: np.ndarray = n == last
        draw = np.flatnonzero((n > 0) & (n < last))
        if draw.size == 0:
            return out
        words = self.bits // 64
        ids = np.ascontiguousarray(np.asarray(stream_ids, dtype=np.uint64)[draw])
        u = _cagg.keyed_words(_base_generator(key), ids, words, 0)
        counts, which = np.unique(n[draw], return_inverse=True)
        mask = (1 << 64) - 1
        limbs = np.array([[(self.table[c] >> (64 * (words - 1 - w))) & mask for w in range(words)]
                          for c in counts.tolist()], dtype=np.uint64)[which.reshape(-1)]
        less, more = u < limbs, u > limbs
        first = np.argmax(less | more, axis=1)  # the most significant word where U and the threshold differ
        rows = np.arange(draw.size)
        out[draw] = less[rows, first]  # equal everywhere: U == threshold, not released (less is all False)
        return out

    def describe(self) -> dict[Any, Any]:
        return {
            "method": "optimal", "epsilon": self.epsilon, "delta": self.delta, "delta_achieved": self.delta_achieved,
            "epsilon_per_partition": self.epsilon_group, "delta_per_partition": self.delta_group,
            "max_partitions": self.max_partitions, "always_released_from": len(self.table) - 1,
            **({} if self.rho is None else {"rho": self.rho}),
        }


def _round_up(x: Fraction) -> float:
    """The smallest float >= x."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _share(total: float, k: int) -> float:
    """``total / k`` rounded down so that k times it is at most ``total`` exactly."""
    x = total / k
    while k * Fraction(x) > Fraction(total):
        x = math.nextafter(x, 0.0)
    return x


def calibrate_optimal_selection(*, epsilon: float, delta: float, max_partitions: int) -> OptimalSelection:
    """The optimal partition selection (Desfontaines et al. 2022) for ``max_partitions`` groups per unit.

    Parameters
    ----------
    epsilon : float
        The selection's epsilon (> 0); each group's decision gets ``epsilon / max_partitions``.
    delta : float
        The selection's delta, in (0, 1); each group's decision gets ``delta / max_partitions``.
    max_partitions : int
        The most groups one privacy unit contributes to.

    Returns
    -------
    OptimalSelection
        The table of release probabilities and the per-group budget; the selection is (epsilon, delta)-DP
        by basic composition over the at most ``max_partitions`` groups a unit changes.

    Raises
    ------
    ValueError
        If epsilon <= 0, delta is not in (0, 1), or epsilon is too small for a table of 10**6 entries.

    Examples
    --------
    >>> sel = calibrate_optimal_selection(epsilon=1.0, delta=1e-6, max_partitions=1)
    >>> sel.describe()["always_released_from"]  # the thresholding of the same budget needs tau = 15
    28
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(
            "delta must lie in (0, 1) for partition selection (give public_partitions to release known groups "
            "with delta = 0)"
        )
    if not (math.isfinite(epsilon) and epsilon > 0.0):
        raise ValueError(f"epsilon must be finite and > 0 for partition selection, got {epsilon!r}")
    eps_k, delta_k = _share(epsilon, max_partitions), _share(delta, max_partitions)
    if eps_k <= 0.0 or delta_k <= 0.0:
        raise ValueError("the selection's epsilon or delta per partition rounds to 0")
    return OptimalSelection(epsilon, delta, max_partitions, eps_k, delta_k, *_optimal_table(eps_k, delta_k))


def optimal_selection_for_rho(*, rho: float, delta: float, max_partitions: int) -> OptimalSelection:
    """The optimal selection for a zCDP share ``rho`` (with ``delta``): ``delta``-approximately ``rho``-zCDP.

    Each group's decision is (e, d)-DP with ``d = delta / Kp`` and the largest float ``e`` with
    ``Kp e^2 / 2 <= rho`` (exact rational check). For one neighbouring pair, an (e, d)-DP decision is the
    mixture ``(1 - d) P + d E`` of an e-indistinguishable part ``P`` and a rest (Kairouz, Oh and Viswanath
    2015), and e-indistinguishable laws are ``e^2 / 2``-zCDP (Bun and Steinke 2016); the at most Kp
    independent decisions one unit changes compose to ``Kp d``-approximate ``Kp e^2 / 2``-zCDP
    (``docs/aggregate.md``, section 5).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(
            "delta must lie in (0, 1) for partition selection (give public_partitions to release known groups "
            "with delta = 0)"
        )
    r = Fraction(rho)
    if not (math.isfinite(rho) and rho > 0.0):
        raise ValueError(f"rho must be finite and > 0 for partition selection, got {rho!r}")
    eps_k = math.sqrt(2.0 * rho / max_partitions)
    while eps_k > 0.0 and max_partitions * Fraction(eps_k) ** 2 / 2 > r:
        eps_k = math.nextafter(eps_k, 0.0)
    delta_k = _share(delta, max_partitions)
    if eps_k <= 0.0 or delta_k <= 0.0:
        raise ValueError("the selection's epsilon or delta per partition rounds to 0")
    eps_total = _round_up(max_partitions * Fraction(eps_k))  # basic composition, reported
    rho_spent = _round_up(max_partitions * Fraction(eps_k) ** 2 / 2)
    return OptimalSelection(eps_total, delta, max_partitions, eps_k, delta_k, *_optimal_table(eps_k, delta_k),
                            rho=rho_spent)


def calibrate(method: str, *, epsilon: float, delta: float, max_partitions: int) -> ThresholdSelection | OptimalSelection:
    """The selection of ``method`` (one of :data:`SELECTION_METHODS`) calibrated to (epsilon, delta)."""
    if method == "optimal":
        return calibrate_optimal_selection(epsilon=epsilon, delta=delta, max_partitions=max_partitions)
    return calibrate_selection(epsilon=epsilon, delta=delta, max_partitions=max_partitions)
