"""dp-accounting's ``DpEvent`` trees, accounted with pydp_core's certified privacy-loss distributions.

:func:`to_pld` converts a ``DpEvent`` tree into a :class:`~pydp_core.accounting.pld.PLD`;
:func:`epsilon` and :func:`delta` answer with an :class:`~pydp_core.accounting.pld.Interval` that contains
the true value (the upper end is the certified answer to report); :class:`PLDAccountant` is a
``dp_accounting.PrivacyAccountant`` that does the same behind dp-accounting's own interface
(``compose``, ``get_epsilon``, ``get_delta``).

Events and their meaning (as in dp-accounting: sensitivity 1, ``noise_multiplier`` the noise scale in
units of the sensitivity):

- ``GaussianDpEvent(noise_multiplier)``: Gaussian noise of standard deviation ``noise_multiplier``;
- ``LaplaceDpEvent(noise_multiplier)``: Laplace noise of scale ``noise_multiplier``;
- ``PoissonSampledDpEvent(q, event)``: ``event`` (Gaussian or Laplace) on a Poisson sample of rate q;
- ``SampledWithoutReplacementDpEvent(n, m, event)``: ``event`` (Gaussian or Laplace) on a uniformly
  random subset of m of the n records; amplification by sampling without replacement holds for the
  substitution relation, so it needs ``neighbours="substitution"``;
- ``SelfComposedDpEvent(event, count)``, ``ComposedDpEvent(events)``: composition;
- ``NoOpDpEvent``: nothing is revealed; ``NonPrivateDpEvent``: epsilon is infinite;
- ``RandomizedResponseDpEvent(p, k)``: with probability p a uniformly random one of k buckets, else the
  true bucket (the exact k-ary PLD).

- ``MixtureOfGaussiansDpEvent(standard_deviation, sensitivities, sampling_probs)``: the MMCC pair, both
  orders (:meth:`~pydp_core.accounting.pld.PLD.from_mixture_of_gaussians`; add/remove only);
- ``DiscreteLaplaceDpEvent(noise_parameter, sensitivity)``: the exact discrete Laplace PLD (scale
  1 / noise_parameter);
- ``SingleEpochTreeAggregationDpEvent(noise_multiplier, step_counts)``: the Gaussian mechanism of l2
  sensitivity sqrt(ceil(log2(max steps + 1))) (Kairouz et al. 2021, Appendix D; add/remove).

Every other event (``UnsupportedDpEvent``, ``ZCDpEvent``, ``RepeatAndSelectDpEvent``, ...) is a ValueError
naming it.

Neighbours: ``"add_remove"`` (the default, dp-accounting's ``ADD_OR_REMOVE_ONE``) or ``"substitution"``
(``REPLACE_ONE``); one relation holds for a whole tree.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .._validation import check_choice, check_delta, check_epsilon, require_extra
from ..accounting.pld import PLD, Interval
from ..accounting.pld.mechanisms import _Atoms
from ..noise import Gaussian, Laplace
from ._refine import delta_of, epsilon_of

__all__ = ["to_pld", "epsilon", "delta", "PLDAccountant", "NEIGHBOURS"]

#: The neighbouring relations, as pydp_core names them, with dp-accounting's names.
NEIGHBOURS = {"add_remove": "ADD_OR_REMOVE_ONE", "substitution": "REPLACE_ONE"}


dpa = require_extra("peers", "dp_accounting")[0]


def _check_neighbours(neighbours: Any) -> str:
    return check_choice(neighbours, "neighbours", tuple(NEIGHBOURS))


class _NonPrivate(Exception):
    """The tree holds a non-private event (epsilon is infinite)."""


def _noise(ev: Any, kind: Any, name: str) -> Any:
    """The noise family of a Gaussian or Laplace event and its multiplier (> 0), or None for 0 (non-private)."""
    nm = float(ev.noise_multiplier)
    if not (math.isfinite(nm) and nm >= 0.0):
        raise ValueError(f"{name}: noise_multiplier must be finite and >= 0, got {ev.noise_multiplier!r}")
    if nm == 0.0:
        raise _NonPrivate
    return kind, nm


def _base(ev: Any, E: Any, where: str) -> tuple[Any, float]:
    if isinstance(ev, E.GaussianDpEvent):
        result: tuple[Any, float] = _noise(ev, Gaussian(), "GaussianDpEvent")
        return result
    if isinstance(ev, E.LaplaceDpEvent):
        laplace: tuple[Any, float] = _noise(ev, Laplace(), "LaplaceDpEvent")
        return laplace
    raise ValueError(f"{where}: the sampled event must be a GaussianDpEvent or LaplaceDpEvent, not {type(ev).__name__}")


def _sampled(noise: Any, scale: float, rate: float, sampling: str, neighbours: str) -> PLD:
    """PLD.from_noise with the sampling scheme and neighbouring relation (default options are not passed)."""
    options: dict[str, Any] = {}
    if sampling != "poisson":
        options["sampling"] = sampling
    if neighbours != "add_remove":
        options["neighbours"] = neighbours
    try:
        return PLD.from_noise(noise, scale=scale, sensitivity=1.0, sampling_rate=rate, **options)
    except TypeError as exc:
        if options and "unexpected keyword" in str(exc):
            what = ("sampling without replacement" if sampling != "poisson" else
                    f"the {neighbours!r} neighbouring relation")
            raise ValueError(
                f"{what} needs PLD.from_noise(..., sampling=, neighbours=), which this version of pydp_core "
                "does not have"
            ) from None
        raise


def _rr(ev: Any, neighbours: str) -> PLD:
    p = float(ev.noise_parameter)
    k = int(ev.num_buckets)
    if not (0.0 <= p <= 1.0) or k < 1:
        raise ValueError(f"RandomizedResponseDpEvent: need 0 <= noise_parameter <= 1 and num_buckets >= 1, got {p}, {k}")
    if k == 1 or p == 1.0:
        return PLD.identity()
    if p == 0.0:
        raise _NonPrivate
    if neighbours != "substitution":
        raise ValueError("RandomizedResponseDpEvent is defined for neighbours='substitution' (as in dp-accounting)")
    # Changing the record moves the true bucket: the two affected outputs carry losses +-eps, the k - 2
    # others carry loss 0.
    hi, lo = 1.0 - p + p / k, p / k
    eps = math.log(hi) - math.log(lo)
    loss = np.array([eps, -eps, 0.0])
    mass_p = np.array([hi, lo, (k - 2) * lo])
    mass_q = np.array([lo, hi, (k - 2) * lo])
    return PLD([(_Atoms("randomized_response", (loss, mass_p, mass_q, 0.0)), 1)])


# ----- one conversion per event class -----------------------------------------------------------------------
def _no_op(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    return PLD.identity()


def _non_private(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    raise _NonPrivate


def _noise_event(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    noise, scale = _base(ev, E, type(ev).__name__)
    return PLD.from_noise(noise, scale=scale, sensitivity=1.0)


def _poisson(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    q = float(ev.sampling_probability)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"PoissonSampledDpEvent: sampling_probability must lie in [0, 1], got {q}")
    if q == 0.0:
        return PLD.identity()
    noise, scale = _base(ev.event, E, "PoissonSampledDpEvent")
    return _sampled(noise, scale, q, "poisson", neighbours)


def _without_replacement(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    n, m = int(ev.source_dataset_size), int(ev.sample_size)
    if not 0 <= m <= n or n < 1:
        raise ValueError(f"SampledWithoutReplacementDpEvent: need 0 <= sample_size <= source_dataset_size, got {m}, {n}")
    if neighbours != "substitution":
        raise ValueError("SampledWithoutReplacementDpEvent needs neighbours='substitution' (its amplification "
                         "holds for substitution; dp-accounting's REPLACE_ONE)")
    if m == 0:
        return PLD.identity()
    noise, scale = _base(ev.event, E, "SampledWithoutReplacementDpEvent")
    # dp-accounting's (RDP) analysis of this event bounds the replacement's displacement of the sum by
    # 1: a record norm of 1/2.
    return PLD.fixed_size(noise, scale=scale, batch_size=m, dataset_size=n, sensitivity=0.5,
                          neighbours="substitution")


def _self_composed(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    count = int(ev.count)
    if count < 0:
        raise ValueError(f"SelfComposedDpEvent: count must be >= 0, got {count}")
    inner = _convert(ev.event, neighbours, E, depth + 1)
    return PLD.identity() if count == 0 else inner.self_compose(count)


def _composed(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    parts = [_convert(e, neighbours, E, depth + 1) for e in ev.events]
    return PLD.composition(parts) if parts else PLD.identity()


def _randomized_response(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    return _rr(ev, neighbours)


def _mixture(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    if neighbours != "add_remove":
        raise ValueError("MixtureOfGaussiansDpEvent is defined for neighbours='add_remove' (its pair N(0, s^2) vs "
                         "sum_i p_i N(c_i, s^2) is an add/remove pair)")
    sd = float(ev.standard_deviation)
    sens = [float(c) for c in ev.sensitivities]
    if all(c == 0.0 for c in sens) and sens:
        return PLD.identity()
    if not (math.isfinite(sd) and sd >= 0.0):
        raise ValueError(f"MixtureOfGaussiansDpEvent: standard_deviation must be finite and >= 0, got {sd!r}")
    if sd == 0.0:
        raise _NonPrivate
    try:
        return PLD.from_mixture_of_gaussians(sigma=sd, sensitivities=sens,
                                             probabilities=[float(p) for p in ev.sampling_probs])
    except ValueError as exc:
        raise ValueError(f"MixtureOfGaussiansDpEvent: {exc}") from None


def _discrete_laplace(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    # pmf exp(-a |x|) tanh(a / 2): pydp_core's discrete Laplace of scale 1 / a.
    a = float(ev.noise_parameter)
    if not (math.isfinite(a) and a >= 0.0):
        raise ValueError(f"DiscreteLaplaceDpEvent: noise_parameter must be finite and >= 0, got {a!r}")
    if a == 0.0:
        raise _NonPrivate
    options = {} if neighbours == "add_remove" else {"neighbours": neighbours}
    return PLD.from_discrete_laplace(scale=1.0 / a, sensitivity=int(ev.sensitivity), **options)


def _tree_aggregation(ev: Any, neighbours: str, E: Any, depth: int) -> PLD:
    # Each record sits in at most one tree and touches one node per level: a Gaussian mechanism of l2
    # sensitivity sqrt(depth), depth = ceil(log2(max steps + 1)) (Kairouz et al. 2021, Appendix D).
    nm = float(ev.noise_multiplier)
    counts = [int(c) for c in (ev.step_counts if isinstance(ev.step_counts, (list, tuple)) else [ev.step_counts])]
    if not counts or any(c < 0 for c in counts):
        raise ValueError(f"SingleEpochTreeAggregationDpEvent: step_counts must be non-empty and >= 0, got {counts}")
    if not (math.isfinite(nm) and nm >= 0.0):
        raise ValueError(f"SingleEpochTreeAggregationDpEvent: noise_multiplier must be finite and >= 0, got {nm!r}")
    levels = math.ceil(math.log2(max(counts) + 1))
    if levels == 0:
        return PLD.identity()
    if nm == 0.0:
        raise _NonPrivate
    if neighbours != "add_remove":
        raise ValueError("SingleEpochTreeAggregationDpEvent is accounted for neighbours='add_remove'")
    return PLD.from_noise(Gaussian(), scale=nm, sensitivity=math.sqrt(levels))


# dp-accounting's event classes, in the order they are tried, and their conversions.
_CONVERSIONS: tuple[tuple[tuple[str, ...], Callable[[Any, str, Any, int], PLD]], ...] = (
    (("NoOpDpEvent",), _no_op),
    (("NonPrivateDpEvent",), _non_private),
    (("GaussianDpEvent", "LaplaceDpEvent"), _noise_event),
    (("PoissonSampledDpEvent",), _poisson),
    (("SampledWithoutReplacementDpEvent",), _without_replacement),
    (("SelfComposedDpEvent",), _self_composed),
    (("ComposedDpEvent",), _composed),
    (("RandomizedResponseDpEvent",), _randomized_response),
    (("MixtureOfGaussiansDpEvent",), _mixture),
    (("DiscreteLaplaceDpEvent",), _discrete_laplace),
    (("SingleEpochTreeAggregationDpEvent",), _tree_aggregation),
)


def _convert(ev: Any, neighbours: str, E: Any, depth: int = 0) -> PLD:
    if depth > 200:
        raise ValueError("the DpEvent tree is nested more than 200 levels deep")
    for names, convert in _CONVERSIONS:
        if isinstance(ev, tuple(getattr(E, n) for n in names)):
            return convert(ev, neighbours, E, depth)
    if isinstance(ev, E.DpEvent):
        raise ValueError(f"{type(ev).__name__} is not supported by pydp_core's accounting: no certified PLD of it is "
                         "known here")
    raise TypeError(f"event must be a dp_accounting DpEvent, not {type(ev).__name__}")


def _private_pld(event: Any, neighbours: str) -> PLD | None:
    """The PLD of ``event`` under ``neighbours``, or None if the tree contains a non-private event."""
    try:
        return _convert(event, neighbours, dpa.dp_event)
    except _NonPrivate:
        return None


def to_pld(event: Any, *, neighbours: str = "add_remove") -> PLD:
    """The certified privacy-loss distribution of a dp-accounting ``DpEvent`` tree.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The tree (module docstring lists the events).
    neighbours : {"add_remove", "substitution"}, optional
        The neighbouring relation of the whole tree.

    Returns
    -------
    PLD
        Composed lazily; query it with ``epsilon(delta)`` or ``delta(epsilon)``.

    Raises
    ------
    ValueError
        For an unsupported event, a non-private event (no PLD has infinite loss everywhere: use
        :func:`epsilon`, which reports inf), bad event parameters, or an event that needs the other relation.
    TypeError
        If ``event`` is not a ``DpEvent``.
    ImportError
        If dp-accounting is not installed (the ``peers`` extra).

    Examples
    --------
    >>> import dp_accounting as dpa
    >>> from pydp_core.adapters.dp_accounting import to_pld
    >>> step = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0))
    >>> to_pld(dpa.SelfComposedDpEvent(step, 1000))
    PLD(mechanisms=1, steps=1000)
    """
    pld = _private_pld(event, _check_neighbours(neighbours))
    if pld is None:
        raise ValueError("the event tree contains a non-private event (epsilon is infinite)")
    return pld


def epsilon(event: Any, *, delta: float, neighbours: str = "add_remove", tolerance: float | None = None) -> Interval:
    """Certified bounds on the epsilon of a ``DpEvent`` tree at ``delta``; report the upper end.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The tree.
    delta : float
        delta in [0, 1].
    neighbours : {"add_remove", "substitution"}, optional
        The neighbouring relation.
    tolerance : float, optional
        The loss grid is refined (halved, up to 4 times) until the interval is at most this wide
        (default 1e-5) or stops narrowing; every grid gives certified bounds and the result is their
        intersection.

    Returns
    -------
    Interval
        ``lower <= epsilon(delta) <= upper``; ``(inf, inf)`` for a tree with a non-private event.

    Raises
    ------
    ValueError, TypeError, ImportError
        As in :func:`to_pld`; ValueError for a ``delta`` outside [0, 1].

    Examples
    --------
    >>> import dp_accounting as dpa
    >>> from pydp_core.adapters.dp_accounting import epsilon
    >>> iv = epsilon(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 4), delta=1e-5)
    >>> round(iv.upper, 4), iv.upper - iv.lower <= 1e-5   # mu-GDP with mu = sqrt(4) / 2 = 1
    (4.3772, True)
    """
    dl = float(check_delta(delta, "delta", allow_one=True))
    pld = _private_pld(event, _check_neighbours(neighbours))
    if pld is None:
        return Interval(math.inf, math.inf)
    return epsilon_of(pld, dl, tolerance)


def delta(event: Any, *, epsilon: float, neighbours: str = "add_remove", rtol: float | None = None) -> Interval:
    """Certified bounds on the delta of a ``DpEvent`` tree at ``epsilon``; report the upper end.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The tree.
    epsilon : float
        epsilon >= 0.
    neighbours : {"add_remove", "substitution"}, optional
        The neighbouring relation.
    rtol : float, optional
        As ``tolerance`` in :func:`epsilon`, relative to the upper end (default 1e-3).

    Returns
    -------
    Interval
        ``lower <= delta(epsilon) <= upper``; ``(1, 1)`` for a tree with a non-private event.

    Raises
    ------
    ValueError, TypeError, ImportError
        As in :func:`to_pld`; ValueError for a negative ``epsilon``.

    Examples
    --------
    >>> import dp_accounting as dpa
    >>> from pydp_core.adapters.dp_accounting import delta
    >>> delta(dpa.LaplaceDpEvent(1.0), epsilon=1.0).upper < 1e-12
    True
    """
    eps = float(check_epsilon(epsilon, "epsilon", allow_inf=True))
    pld = _private_pld(event, _check_neighbours(neighbours))
    if pld is None:
        return Interval(1.0, 1.0)
    return delta_of(pld, eps, rtol)


class PLDAccountant(dpa.PrivacyAccountant):  # type: ignore[misc,name-defined]
    """A ``dp_accounting.PrivacyAccountant`` backed by pydp_core's certified PLDs.

    ``get_epsilon`` and ``get_delta`` return the upper ends of the certified intervals. By default they
    are the engine's own answers on its automatic grid (:meth:`~pydp_core.accounting.pld.PLD.epsilon`,
    at the cost of one query); with ``tolerance`` or ``rtol`` the grid is refined as in :func:`epsilon`
    and :func:`delta` (each halving of the step costs about twice the previous query).

    Parameters
    ----------
    neighboring_relation : dp_accounting.NeighboringRelation, optional
        ``ADD_OR_REMOVE_ONE`` (the default) or ``REPLACE_ONE``.
    tolerance : float, optional
        Width to refine the epsilon interval to, as in :func:`epsilon`; None: no refinement.
    rtol : float, optional
        Relative width to refine the delta interval to, as in :func:`delta`; None: no refinement.

    Raises
    ------
    ValueError
        For another relation.

    Examples
    --------
    >>> import dp_accounting as dpa
    >>> from pydp_core.adapters.dp_accounting import PLDAccountant
    >>> acc = PLDAccountant()
    >>> _ = acc.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 1000)
    >>> round(acc.get_epsilon(1e-5), 3)
    1.828
    """

    def __init__(self, neighboring_relation: Any = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, *,
                 tolerance: float | None = None, rtol: float | None = None) -> None:
        names = {v: k for k, v in NEIGHBOURS.items()}
        if getattr(neighboring_relation, "name", None) not in names:
            raise ValueError(f"neighboring_relation must be ADD_OR_REMOVE_ONE or REPLACE_ONE, not {neighboring_relation!r}")
        super().__init__(neighboring_relation)
        self._neighbours = names[neighboring_relation.name]
        self._tolerance, self._rtol = tolerance, rtol
        # None until the first event: composing with the identity would add a term to every query.
        self._pld: PLD | None = None
        self._non_private = False

    def _maybe_compose(self, event: Any, count: int, do_compose: bool) -> Any:
        try:
            pld = _private_pld(event, self._neighbours)
        except ValueError as exc:
            return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        if do_compose:
            if pld is None:
                self._non_private = True
            elif count > 0:
                pld = pld.self_compose(count)
                self._pld = pld if self._pld is None else self._pld.compose(pld)
        return None

    def _composed(self) -> PLD:
        return PLD.identity() if self._pld is None else self._pld

    def get_epsilon(self, target_delta: float) -> float:
        """The certified epsilon of the composed events at ``target_delta`` (an upper bound)."""
        if self._non_private:
            return math.inf
        dl = float(check_delta(target_delta, "target_delta", allow_one=True))
        if self._tolerance is None:
            return float(self._composed().epsilon(dl).upper)
        return float(epsilon_of(self._composed(), dl, self._tolerance).upper)

    def get_delta(self, target_epsilon: float) -> float:
        """The certified delta of the composed events at ``target_epsilon`` (an upper bound)."""
        if self._non_private:
            return 1.0
        eps = float(check_epsilon(target_epsilon, "target_epsilon", allow_inf=True))
        if self._rtol is None:
            return float(self._composed().delta(eps).upper)
        return float(delta_of(self._composed(), eps, self._rtol).upper)
