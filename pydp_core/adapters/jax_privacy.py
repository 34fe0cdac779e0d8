"""jax_privacy's batch-selection strategies accounted with pydp_core's certified PLDs.

:func:`strategy_pld` maps a ``jax_privacy.batch_selection`` strategy and the noise multiplier of DP-SGD
(Gaussian noise of standard deviation ``noise_multiplier`` times the clipping norm, independent across
steps) to the :class:`~pydp_core.accounting.pld.PLD` of the whole run; :func:`epsilon` reports its
certified epsilon interval. The strategies are recognised by their class name and read through their
public fields, so jax_privacy itself is not imported (and not needed):

- ``CyclicPoissonSampling(sampling_prob, iterations, cycle_length=1, truncated_batch_size=None)``: a
  record is eligible in the steps i with i mod cycle_length fixed, ceil(iterations / cycle_length) of
  them at most, each a Poisson-sampled Gaussian at rate ``sampling_prob``. With the ``INDEPENDENT``
  partition (or ``cycle_length`` = 1) the neighbours are add/remove; the ``EQUAL_SPLIT`` partition
  depends on the dataset's size, so it is accounted under replace-one neighbours (substitution).
  Truncated batches are refused by name (no analysis here).
- ``RandomAllocationSampling(total_participations, iterations)``:
  :meth:`PLD.random_allocation <pydp_core.accounting.pld.PLD.random_allocation>` with k of t steps.
- ``BallsInBinsSampling(iterations, cycle_length)``: the record's bin is uniform over ``cycle_length``
  and it is used in every step of its bin. The E steps of one bin release E Gaussians of the same sum,
  equivalent (the mean of the E outputs is sufficient) to one Gaussian of scale sigma / sqrt(E), so E full
  cycles are one pass of random allocation over ``cycle_length`` steps at scale sigma / sqrt(E). With a
  partial last cycle, E = ceil(iterations / cycle_length) for the upper end (every bin given the longer
  run: a refinement) and floor(...) for the lower end (a post-processing; nothing when it is 0).
- ``FixedBatchSampling``, ``BMinSepSampling`` and ``UserSelectionStrategy``: refused by name (no
  certified PLD is implemented for them here).

References
----------
Feldman and Shenfeld 2025 (random allocation); Choquette-Choo, Ganesh, McKenna, McMahan, Rush,
Thakurta and Xu 2023 (cyclic Poisson sampling); Chua et al. 2025 (balls-in-bins).
"""
from __future__ import annotations

from typing import Any

from .._validation import check_delta, check_nonneg_scalar
from ..accounting.pld import PLD, Interval
from ..noise import Gaussian
from ._refine import epsilon_of

__all__ = ["strategy_pld", "epsilon", "STRATEGIES"]

#: The jax_privacy strategy classes :func:`strategy_pld` accounts, by name.
STRATEGIES = ("CyclicPoissonSampling", "RandomAllocationSampling", "BallsInBinsSampling")
_REFUSED = ("FixedBatchSampling", "BMinSepSampling", "UserSelectionStrategy")


def _field(strategy: Any, name: str) -> Any:
    if not hasattr(strategy, name):
        raise TypeError(f"strategy ({type(strategy).__name__}) has no field {name!r}")
    return getattr(strategy, name)


def _count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
        raise TypeError(f"strategy.{name} must be an integer, got {type(value).__name__}")
    n = int(value)
    if n < minimum:
        raise ValueError(f"strategy.{name} must be >= {minimum}, got {n}")
    return n


def _pair(strategy: Any, sigma: float) -> tuple[PLD, PLD]:
    """(dominating PLD, dominated PLD) of the run; the same object where the PLD is two-sided already."""
    name = type(strategy).__name__
    if name == "CyclicPoissonSampling":
        if _field(strategy, "truncated_batch_size") is not None:
            raise ValueError("CyclicPoissonSampling with truncated_batch_size is not accounted here "
                             "(truncated Poisson sampling); set truncated_batch_size=None")
        steps = _count(_field(strategy, "iterations"), "iterations", 0)
        cycle = _count(_field(strategy, "cycle_length"), "cycle_length", 1)
        partition = getattr(_field(strategy, "partition_type"), "name", None)
        if partition not in ("EQUAL_SPLIT", "INDEPENDENT"):
            raise ValueError(f"strategy.partition_type must be EQUAL_SPLIT or INDEPENDENT, got {partition!r}")
        neighbours = "substitution" if cycle > 1 and partition == "EQUAL_SPLIT" else "add_remove"
        uses = -(-steps // cycle)
        if uses == 0:
            return PLD.identity(), PLD.identity()
        one = PLD.from_noise(Gaussian(), scale=sigma, sampling_rate=_field(strategy, "sampling_prob"),
                             neighbours=neighbours)
        pld = one.self_compose(uses)
        return pld, pld
    if name == "RandomAllocationSampling":
        k = _count(_field(strategy, "total_participations"), "total_participations", 0)
        t = _count(_field(strategy, "iterations"), "iterations", 0)
        if k == 0:
            return PLD.identity(), PLD.identity()
        pld = PLD.random_allocation(Gaussian(), scale=sigma, steps=t, participations=k)
        return pld, pld
    if name == "BallsInBinsSampling":
        t = _count(_field(strategy, "iterations"), "iterations", 0)
        cycle = _count(_field(strategy, "cycle_length"), "cycle_length", 1)
        most, least = -(-t // cycle), t // cycle
        if most == 0:
            return PLD.identity(), PLD.identity()
        upper = PLD.balls_in_bins(Gaussian(), scale=sigma, bins=cycle, epochs=most)
        if least == most:
            return upper, upper
        lower = PLD.identity() if least == 0 else PLD.balls_in_bins(Gaussian(), scale=sigma, bins=cycle, epochs=least)
        return upper, lower
    if name in _REFUSED:
        raise ValueError(f"{name} has no certified PLD in pydp_core's jax_privacy adapter; accountable "
                         f"strategies: {', '.join(STRATEGIES)}")
    raise TypeError(f"strategy must be a jax_privacy batch-selection strategy ({', '.join(STRATEGIES)}), "
                    f"got {name}")


def strategy_pld(strategy: Any, *, noise_multiplier: Any) -> PLD:
    """The certified PLD of DP-SGD run with a jax_privacy batch-selection ``strategy``.

    Parameters
    ----------
    strategy : jax_privacy.batch_selection strategy
        ``CyclicPoissonSampling``, ``RandomAllocationSampling`` or ``BallsInBinsSampling`` (or any object
        with that class name and the same fields).
    noise_multiplier : float
        The noise standard deviation in units of the clipping norm (> 0).

    Returns
    -------
    PLD
        Two-sided: its lower ends come from a dominated pair and its upper ends from a dominating one.
        For ``BallsInBinsSampling`` with a partial last cycle the two ends come from two PLDs; use
        :func:`epsilon`, which combines them.

    Raises
    ------
    TypeError
        If ``strategy`` is not one of the classes above, or a field has the wrong type.
    ValueError
        If the strategy is one that has no certified PLD here (``FixedBatchSampling``,
        ``BMinSepSampling``, ``UserSelectionStrategy``, truncated Poisson), or a field is out of range.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class BallsInBinsSampling:  # the fields of jax_privacy's class
    ...     iterations: int
    ...     cycle_length: int
    >>> pld = strategy_pld(BallsInBinsSampling(iterations=40, cycle_length=10), noise_multiplier=2.0)
    >>> iv = pld.epsilon(1e-5)  # one pass over 10 bins at scale 2 / sqrt(4)
    >>> bool(0.0 < iv.lower <= iv.upper)
    True
    """
    sigma = _sigma(noise_multiplier)
    upper, lower = _pair(strategy, sigma)
    if upper is not lower:
        raise ValueError("this BallsInBinsSampling run ends in a partial cycle: its two ends come from two "
                         "PLDs; use epsilon(strategy, ...)")
    return upper


def _sigma(noise_multiplier: Any) -> float:
    sigma = float(check_nonneg_scalar(noise_multiplier, "noise_multiplier"))
    if not sigma > 0.0:
        raise ValueError("noise_multiplier must be > 0 (without noise the run is not private)")
    return sigma


def epsilon(strategy: Any, *, noise_multiplier: Any, delta: Any, tolerance: float | None = None) -> Interval:
    """Certified bounds on the epsilon of DP-SGD with a jax_privacy ``strategy`` at ``delta``.

    Parameters
    ----------
    strategy, noise_multiplier
        As in :func:`strategy_pld`.
    delta : float
        delta in (0, 1].
    tolerance : float, optional
        The interval is refined to at most this width (default 1e-5) where the grid allows.

    Returns
    -------
    Interval
        ``lower <= epsilon <= upper``.

    Raises
    ------
    TypeError, ValueError
        As in :func:`strategy_pld`, and for ``delta`` outside [0, 1].

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class RandomAllocationSampling:  # the fields of jax_privacy's class
    ...     total_participations: int
    ...     iterations: int
    >>> iv = epsilon(RandomAllocationSampling(1, 100), noise_multiplier=1.0, delta=1e-5)
    >>> bool(0.0 < iv.lower <= iv.upper)
    True
    """
    dl = float(check_delta(delta, "delta"))
    upper, lower = _pair(strategy, _sigma(noise_multiplier))
    hi = epsilon_of(upper, dl, tolerance)
    if lower is upper:
        return hi
    return Interval(float(epsilon_of(lower, dl, tolerance).lower), float(hi.upper))
