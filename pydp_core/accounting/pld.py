"""Certified privacy-loss distributions (PLDs) and their composition.

A :class:`PLD` describes a mechanism (or a composition of mechanisms) through the distribution of its
privacy loss L = log(dP/dQ) under P, for both orders of each neighbouring pair. Every query returns an
:class:`Interval` that contains the true value: the lower end comes from an optimistic discretisation
(dominated by the true PLD), the upper end from a pessimistic one (dominating it), with the truncated
tails and the FFT's wrap-around accounted for on each side. The construction and the proofs are in
``docs/pld.md``: the pessimistic side is the connect-the-dots discretisation of Doroshenko et al. (2022);
the optimistic side contracts each loss cell to its conditional atom and merges neighbouring atoms onto
the grid. Both are second order in the grid step, so k-fold compositions stay tight for k up to 1e6.

A PLD is lazy: constructors and composition record the mechanisms and their multiplicities; the first
query chooses the grid for the whole composition, discretises each distinct mechanism once, and
composes them in the Fourier domain (one forward FFT per distinct mechanism, pointwise powers, one
inverse FFT). The kernels run in C++ (``csrc/include/pydp/accounting/pld.hpp``) with the GIL released.

Neighbouring relation: add/remove of one record. For each mechanism both orders are computed ("remove":
P is the output distribution with the record, Q without it; "add": the reverse), every mechanism of a
composition takes the same order, and the result is the worse of the two orders.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from .. import _core
from .._validation import check_choice, check_delta, check_epsilon, check_positive, check_probability
from ..noise import Gaussian, Laplace, Logistic, Subbotin

__all__ = ["PLD", "Interval"]

_acc = _core.accounting

# Default truncation: mass beyond the composed window (Chernoff-bounded) and per-mechanism tails.
_TAIL_MASS = 1e-15


class Interval(NamedTuple):
    """A certified interval: the true value lies in [lower, upper] (floats or arrays).

    Parameters
    ----------
    lower, upper : float or ndarray
        The two ends; ``lower <= truth <= upper`` element by element.

    Examples
    --------
    >>> iv = Interval(1.0, 1.5)
    >>> iv.lower, iv.upper, float(iv.width)
    (1.0, 1.5, 0.5)
    """

    lower: Any
    upper: Any

    @property
    def width(self) -> Any:
        """``upper - lower``."""
        return np.subtract(self.upper, self.lower)


def _scalar(value: Any, name: str, check) -> float:
    arr = check(value, name)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a scalar")
    return float(arr)


def _count(k: Any, name: str = "k") -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(k).__name__}")
    k = int(k)
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    return k


class _Noise:
    """Additive noise of one family at a scale, sampled at rate q.

    relation "add_remove": Poisson sampling, add/remove neighbours (two orders, "remove" and "add");
    relation "substitution": one record's contribution (norm <= the shift) replaced, the record sampled
    with probability q (Poisson or without replacement): the pair (1-q) f + q f(. - d) vs
    (1-q) f + q f(. + d), whose two orders have the same PLD (docs/pld.md, "Neighbouring relations").
    """

    symmetric = False

    def __init__(self, family: Any, shift: float, q: float, relation: str = "add_remove") -> None:
        self.family, self.shift, self.q, self.relation = family, shift, q, relation
        # Without sampling, f vs f(. - d) and f(. - d) vs f have the same PLD (f is symmetric).
        self.symmetric = q == 1.0 or relation == "substitution"

    def key(self) -> tuple:
        return ("noise", self.family._key(), self.shift, self.q, self.relation)

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True):
        # In a composition, loss blocks of P-mass <= 1e-9 stay one cell (far below the FFT's resolution);
        # a single mechanism keeps every cell, so its deep tail keeps relative precision.
        return _acc.pld_noise(self.family._family, self.shift, self.q, remove, h, tail, 1e-9 if composed else 0.0,
                              self.relation == "substitution")


def _discrete_laplace_substitution(scale: float, D: int, q: float) -> tuple:
    """Atoms (loss, P, Q, 0) of P = (1-q) p + q p(. - D) vs Q = (1-q) p + q p(. + D), p the discrete Laplace.

    Classes x <= -D, x = -D+1..D-1, x >= D; with Pr[Z >= m] = Pr[Z <= -m] = a^m / (1 + a) (m >= 0) and
    p(x) = (1 - a) / (1 + a) a^|x|, every mass is a closed form (log space).
    """
    la = -1.0 / scale  # log a
    log1pa = math.log1p(math.exp(la))
    lc = math.log(-math.expm1(la)) - log1pa
    x = np.arange(-D + 1, D, dtype=float)
    log_f0 = np.concatenate(([D * la - log1pa], lc + la * np.abs(x), [D * la - log1pa]))
    log_fp = np.concatenate(([2 * D * la - log1pa], lc + la * np.abs(x - D), [-log1pa]))  # Z + D
    log_fq = np.concatenate(([-log1pa], lc + la * np.abs(x + D), [2 * D * la - log1pa]))  # Z - D
    log_p = np.logaddexp(math.log1p(-q) + log_f0, math.log(q) + log_fp)
    log_q = np.logaddexp(math.log1p(-q) + log_f0, math.log(q) + log_fq)
    return (log_p - log_q, np.exp(log_p), np.exp(log_q), 0.0)


_SAMPLING = ("poisson", "without_replacement")
_NEIGHBOURS = ("add_remove", "substitution")


def _relation(sampling: Any, neighbours: Any) -> str:
    """The neighbouring relation of a sampled mechanism; ValueError for the combinations not supported."""
    sampling = check_choice(sampling, "sampling", _SAMPLING)
    neighbours = check_choice(neighbours, "neighbours", _NEIGHBOURS)
    if sampling == "without_replacement" and neighbours == "add_remove":
        raise ValueError("sampling='without_replacement' needs neighbours='substitution': a fixed-size batch "
                         "changes composition, not size, when a record is added or removed")
    return neighbours


class _Atoms:
    """A mechanism with finitely many outcomes: losses with their P- and Q-masses, per order."""

    def __init__(self, name: str, remove: tuple, add: tuple | None = None) -> None:
        self.name, self.remove, self.add = name, remove, add
        self.symmetric = add is None

    def key(self) -> tuple:
        def freeze(t):
            return tuple(np.asarray(a, dtype=float).tobytes() if isinstance(a, np.ndarray) else a for a in t)

        return ("atoms", self.name, freeze(self.remove), None if self.add is None else freeze(self.add))

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True):
        loss, p, q, inf_p = self.remove if (remove or self.add is None) else self.add
        return _acc.pld_atoms(loss, p, q, inf_p, h)


class PLD:
    """A privacy-loss distribution with certified two-sided bounds.

    Build one with :meth:`from_noise`, :meth:`from_gdp`, :meth:`from_approx_dp` or
    :meth:`from_randomized_response`; combine with :meth:`compose` and :meth:`self_compose`; query with
    :meth:`delta` and :meth:`epsilon`, which return an :class:`Interval` containing the truth.

    Parameters
    ----------
    terms : sequence of tuple
        Pairs (mechanism, count): the discretisable mechanisms and how often each is composed (use the
        constructors, not this).
    value_step : float, optional
        The grid step of the privacy loss (default: chosen from the number of steps).
    tail_mass : float, optional
        The probability mass the loss window may leave out on each side (accounted for in the bounds).

    Examples
    --------
    >>> from pydp_core.accounting.pld import PLD
    >>> from pydp_core.noise import Gaussian
    >>> step = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01)
    >>> iv = step.self_compose(10_000).epsilon(1e-5)
    >>> iv.lower <= 6.18771 <= iv.upper
    True
    """

    __slots__ = ("_terms", "_value_step", "_tail_mass", "_bounds")

    def __init__(self, terms: Sequence[tuple], *, value_step: float | None = None, tail_mass: float = _TAIL_MASS) -> None:
        # terms: ((mechanism, count), ...), merged by mechanism key.
        merged: dict = {}
        for mech, count in terms:
            key = mech.key()
            if key in merged:
                merged[key] = (merged[key][0], merged[key][1] + count)
            else:
                merged[key] = (mech, count)
        self._terms = tuple(merged.values())
        self._value_step = value_step
        self._tail_mass = tail_mass
        self._bounds = None

    # ----- constructors ---------------------------------------------------------------------------------
    @classmethod
    def from_noise(cls, noise: Any, *, scale: Any, sensitivity: Any = 1.0, sampling_rate: Any = 1.0,
                   sampling: str = "poisson", neighbours: str = "add_remove") -> "PLD":
        """The PLD of additive noise ``scale * X``, X ~ ``noise``, on a query of l1/l2 ``sensitivity``.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic or Subbotin
            The unit-scale noise family (:mod:`pydp_core.noise`).
        scale : float
            Noise scale (> 0); sigma for the Gaussian, b for the Laplace.
        sensitivity : float, optional
            Sensitivity of the query (> 0).
        sampling_rate : float, optional
            Sampling rate q in [0, 1]: the probability that a given record is in the sample.
        sampling : {"poisson", "without_replacement"}, optional
            ``"poisson"``: each record is included independently with probability q.
            ``"without_replacement"``: a batch of fixed size m is drawn from n records, q = m / n.
        neighbours : {"add_remove", "substitution"}, optional
            ``"add_remove"``: neighbouring datasets differ by one record, added or removed; each
            record's contribution to the query has norm <= ``sensitivity``.
            ``"substitution"``: one record is replaced by another, each of norm <= ``sensitivity``
            (so the query moves by up to 2 ``sensitivity``: without sampling this is the add/remove PLD
            at twice the sensitivity). This is dp-accounting's REPLACE_ONE convention.

        Returns
        -------
        PLD
            Supported relations: Poisson sampling with add/remove neighbours (remove: P = (1-q) f +
            q f(. - d) vs Q = f; add: the reverse; both orders are kept and the worse one is reported),
            and Poisson sampling or sampling without replacement with substitution neighbours
            (P = (1-q) f + q f(. - d) vs Q = (1-q) f + q f(. + d), one order suffices by symmetry), with
            d = sensitivity / scale (Balle, Barthe and Gaboardi 2018; Zhu, Dong and Wang 2022). The loss
            is monotone in the output (log-concavity), so its distribution follows from the family's
            log-space tails at the loss thresholds.

        Raises
        ------
        TypeError
            If ``noise`` is not one of the four families (truncated and user-defined families are not
            supported here), or ``sampling`` / ``neighbours`` is not a string.
        ValueError
            If ``scale`` or ``sensitivity`` is not finite and > 0, ``sampling_rate`` is outside [0, 1],
            ``sampling`` or ``neighbours`` is not one of the names above, or sampling without
            replacement is combined with add/remove neighbours (a fixed-size sample has no
            add/remove analysis here).

        References
        ----------
        Balle, Barthe and Gaboardi 2018; Zhu, Dong and Wang 2022.

        Examples
        --------
        >>> from pydp_core.accounting.pld import PLD
        >>> from pydp_core.noise import Gaussian
        >>> sub = PLD.from_noise(Gaussian(), scale=2.0, sampling_rate=0.01, neighbours="substitution")
        >>> add_remove = PLD.from_noise(Gaussian(), scale=2.0, sampling_rate=0.01)
        >>> bool(sub.epsilon(1e-5).lower > add_remove.epsilon(1e-5).upper)
        True
        """
        if not isinstance(noise, (Gaussian, Laplace, Logistic, Subbotin)):
            raise TypeError("noise must be Gaussian(), Laplace(), Logistic() or Subbotin(r)")
        s = _scalar(scale, "scale", check_positive)
        d = _scalar(sensitivity, "sensitivity", check_positive)
        q = _scalar(sampling_rate, "sampling_rate", check_probability)
        relation = _relation(sampling, neighbours)
        shift = d / s
        if not (math.isfinite(shift) and shift > 0.0):
            raise ValueError("sensitivity / scale must be finite and > 0")
        if q == 0.0:
            return cls.identity()
        if relation == "substitution" and q == 1.0:
            # f(. - d) vs f(. + d): the add/remove pair at shift 2d.
            shift *= 2.0
            if not math.isfinite(shift):
                raise ValueError("2 * sensitivity / scale must be finite")
            relation = "add_remove"
        return cls([(_Noise(noise, shift, q, relation), 1)])

    @classmethod
    def from_gdp(cls, mu: Any) -> "PLD":
        """The PLD of mu-GDP (Dong, Roth and Su 2022): the Gaussian mechanism with shift mu."""
        m = _scalar(mu, "mu", check_positive)
        return cls([(_Noise(Gaussian(), m, 1.0), 1)])

    @classmethod
    def from_approx_dp(cls, *, epsilon: Any, delta: Any = 0.0) -> "PLD":
        """The worst-case PLD of an (epsilon, delta)-DP mechanism.

        Every (epsilon, delta)-DP pair is a post-processing of the four-outcome pair
        P = (delta, (1 - delta) e^eps / (1 + e^eps), (1 - delta) / (1 + e^eps), 0) and Q its reverse
        (Kairouz, Oh and Viswanath 2015), so this PLD dominates every such mechanism under composition.
        """
        e = _scalar(epsilon, "epsilon", check_epsilon)
        dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_one=False))
        hi = (1.0 - dl) / (1.0 + math.exp(-e))
        lo = (1.0 - dl) / (1.0 + math.exp(e))
        atoms = (np.array([e, -e]), np.array([hi, lo]), np.array([lo, hi]), dl)
        return cls([(_Atoms("approx_dp", atoms), 1)])

    @classmethod
    def from_discrete_laplace(cls, *, scale: Any, sensitivity: int = 1, sampling_rate: Any = 1.0,
                              sampling: str = "poisson", neighbours: str = "add_remove") -> "PLD":
        """The PLD of the discrete Laplace (two-sided geometric) mechanism on the integers, exactly.

        The noise has pmf (1 - a) / (1 + a) a^|x|, a = e^{-1/scale}, on an integer query of integer
        ``sensitivity`` D. The likelihood ratio p(x - D) / p(x) takes D + 1 values (x <= 0, x = 1..D-1,
        x >= D), so the PLD has D + 1 atoms whose masses are closed-form geometric sums. With Poisson
        sampling at ``sampling_rate`` q both add/remove orders are kept. ``sampling`` and ``neighbours``
        are as in :meth:`from_noise`: under substitution the pair is (1-q) p + q p(. - D) vs
        (1-q) p + q p(. + D), whose likelihood ratio takes 2D + 1 values (x <= -D, |x| < D, x >= D);
        without sampling it is the add/remove PLD at sensitivity 2D.
        """
        t = _scalar(scale, "scale", check_positive)
        if isinstance(sensitivity, (bool, np.bool_)) or not isinstance(sensitivity, numbers.Integral):
            raise TypeError(f"sensitivity must be an integer, not {type(sensitivity).__name__}")
        D = int(sensitivity)
        if not 1 <= D <= 10**6:
            raise ValueError(f"sensitivity must lie in [1, 1e6], got {D}")
        q = _scalar(sampling_rate, "sampling_rate", check_probability)
        relation = _relation(sampling, neighbours)
        if q == 0.0:
            return cls.identity()
        if relation == "substitution":
            if q == 1.0:
                return cls.from_discrete_laplace(scale=t, sensitivity=2 * D)
            return cls([(_Atoms("discrete_laplace_substitution", _discrete_laplace_substitution(t, D, q)), 1)])
        la = -1.0 / t  # log a
        log1pa = math.log1p(math.exp(la))
        lc = math.log(-math.expm1(la)) - log1pa  # log((1 - a) / (1 + a))
        x = np.arange(1, D, dtype=float)
        # log masses of the classes x <= 0, x = 1..D-1, x >= D under Q = p and under the shifted P.
        log_q = np.concatenate(([-log1pa], lc + la * x, [D * la - log1pa]))
        log_p = np.concatenate(([D * la - log1pa], lc + la * (D - x), [-log1pa]))
        pq, pp = np.exp(log_q), np.exp(log_p)
        mix = (1.0 - q) * pq + q * pp
        remove = (np.log(mix) - log_q, mix, pq, 0.0)
        add = (log_q - np.log(mix), pq, mix, 0.0)
        return cls([(_Atoms("discrete_laplace", remove, None if q == 1.0 else add), 1)])

    @classmethod
    def from_randomized_response(cls, *, epsilon: Any) -> "PLD":
        """Binary randomized response with P(truth) = e^eps / (1 + e^eps): the PLD of pure eps-DP."""
        return cls.from_approx_dp(epsilon=epsilon, delta=0.0)

    @classmethod
    def identity(cls) -> "PLD":
        """The PLD of a mechanism that reveals nothing (L = 0): the neutral element of composition."""
        return cls([(_Atoms("identity", (np.array([0.0]), np.array([1.0]), np.array([1.0]), 0.0)), 1)])

    @classmethod
    def composition(cls, plds: Iterable["PLD"]) -> "PLD":
        """The composition of a non-empty collection of PLDs."""
        items = list(plds)
        if not items:
            raise ValueError("plds must not be empty: there is nothing to compose")
        out = items[0]
        for p in items[1:]:
            out = out.compose(p)
        if not isinstance(out, PLD):
            raise TypeError("plds must contain PLD objects")
        return out

    @classmethod
    def calibrate(cls, noise: Any, *, epsilon: Any, delta: Any, sensitivity: Any = 1.0, steps: Any = 1,
                  sampling_rate: Any = 1.0, rtol: float = 1e-3) -> float:
        """The smallest noise scale (to relative ``rtol``) whose composed upper bound meets (epsilon, delta).

        The search brackets the scale on a grid four times coarser than the automatic one (its upper
        bounds are valid, only looser), then bisects on the automatic grid. The returned scale is checked:
        ``from_noise(noise, scale=s, ...).self_compose(steps).epsilon(delta).upper <= epsilon``.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic or Subbotin
        epsilon : float
            Target epsilon > 0.
        delta : float
            Target delta in (0, 1).
        sensitivity : float, optional
        steps : int, optional
            Number of compositions (each with Poisson sampling at ``sampling_rate``).
        sampling_rate : float, optional
        rtol : float, optional
            Relative width of the final bracket; the result is its upper end.

        Returns
        -------
        float
            The scale; never one whose certified epsilon exceeds the target.

        Raises
        ------
        ValueError
            On out-of-range arguments, or if no scale below 1e12 * sensitivity meets the target.
        """
        e = _scalar(epsilon, "epsilon", check_positive)
        dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False))
        k = _count(steps, "steps")
        sens = _scalar(sensitivity, "sensitivity", check_positive)
        if not (0.0 < rtol < 0.5):
            raise ValueError(f"rtol must lie in (0, 0.5), got {rtol}")

        def build(s: float, h: float | None) -> PLD:
            return cls.from_noise(noise, scale=s, sensitivity=sens, sampling_rate=sampling_rate).self_compose(k) \
                .with_discretization(value_step=h)

        fine = build(sens, None).value_step

        def ok(s: float, h: float) -> bool:
            return build(s, h).epsilon(dl).upper <= e

        coarse = 4.0 * fine
        lo, hi = sens, sens
        if ok(hi, coarse):
            while ok(lo, coarse):
                hi, lo = lo, lo / 2.0
                if lo < 1e-12 * sens:
                    return hi
        else:
            while not ok(hi, coarse):
                lo, hi = hi, hi * 2.0
                if hi > 1e12 * sens:
                    raise ValueError("no noise scale below 1e12 * sensitivity meets the target (epsilon, delta)")
        while hi / lo > 1.0 + 4.0 * rtol:
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if ok(mid, coarse) else (mid, hi)
        # hi meets the target on the coarse grid; the fine grid's bound is tighter, so bisect below it.
        lo = hi / (1.0 + 4.0 * rtol)
        while hi / lo > 1.0 + rtol:
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if ok(mid, fine) else (mid, hi)
        return hi

    # ----- composition ----------------------------------------------------------------------------------
    def self_compose(self, k: Any) -> "PLD":
        """The k-fold composition of this PLD with itself (k an integer >= 1)."""
        k = _count(k)
        return PLD([(m, c * k) for m, c in self._terms], value_step=self._value_step, tail_mass=self._tail_mass)

    def compose(self, other: "PLD") -> "PLD":
        """The composition of this PLD with ``other`` (independent mechanisms, same neighbours)."""
        if not isinstance(other, PLD):
            raise TypeError(f"other must be a PLD, not {type(other).__name__}")
        step = self._value_step if self._value_step is not None else other._value_step
        return PLD(self._terms + other._terms, value_step=step, tail_mass=min(self._tail_mass, other._tail_mass))

    def with_discretization(self, *, value_step: Any = None, tail_mass: Any = _TAIL_MASS) -> "PLD":
        """A copy that uses grid step ``value_step`` (None: automatic) and truncation ``tail_mass``.

        Finer steps narrow the intervals (the error is second order in the step); the automatic step is
        0.006 steps^-0.45, at most 0.005 (see :attr:`value_step`).
        """
        step = None if value_step is None else _scalar(value_step, "value_step", check_positive)
        if step is not None and step > 1.0:
            raise ValueError(f"value_step must be <= 1 (a coarser grid cannot resolve the loss), got {step}")
        tail = _scalar(tail_mass, "tail_mass", check_positive)
        if not tail < 1e-3:
            raise ValueError(f"tail_mass must lie in (0, 1e-3), got {tail}")
        return PLD(self._terms, value_step=step, tail_mass=tail)

    @property
    def steps(self) -> int:
        """Number of composed mechanisms."""
        return sum(c for _, c in self._terms)

    @property
    def value_step(self) -> float:
        """Grid step of the loss discretisation used for this composition.

        Automatic: 0.006 steps^-0.45 (at most 0.005), which keeps the interval of DP-SGD-like
        compositions within ~1e-4 in epsilon; refined to give at least 2^8 points across a narrow
        composed loss range, and widened where the range would need more than 2^21 points (a wide
        composed loss needs no finer absolute step).
        """
        if self._value_step is not None:
            return self._value_step
        h = min(5e-3, 6e-3 * self.steps ** -0.45)
        coarse = 1e-2
        parts = [m.discretise(True, coarse, self._tail_mass / self.steps) for m, _ in self._terms]
        lo, hi = _acc.pld_window(parts, [c for _, c in self._terms], coarse, self._tail_mass)
        # At least 2^8 points across a narrow composed loss, at most 2^21 across a wide one.
        return max(min(h, (hi - lo) / 2**8), (hi - lo) / 2**21)

    # ----- evaluation -----------------------------------------------------------------------------------
    def _compute(self) -> list:
        if self._bounds is None:
            h = self.value_step
            tail = self._tail_mass
            symmetric = all(m.symmetric for m, _ in self._terms)
            counts = [c for _, c in self._terms]
            per_mech_tail = tail / max(1, self.steps)
            directions = [[m.discretise(remove, h, per_mech_tail, self.steps > 1) for m, _ in self._terms]
                          for remove in ((True,) if symmetric else (True, False))]
            self._bounds = _acc.pld_compose(directions, counts, h, tail)
        assert self._bounds is not None
        return self._bounds

    def _check_width(self, iv: Interval, tolerance: Any) -> Interval:
        if tolerance is None:
            return iv
        tol = _scalar(tolerance, "tolerance", check_positive)
        width = np.max(np.subtract(iv.upper, iv.lower))
        if not width <= tol:
            raise ValueError(f"value_step {self.value_step:.3g} is too coarse for tolerance {tol:g}: the interval "
                             f"is {width:.3g} wide; pass a smaller value_step to with_discretization()")
        return iv

    def delta(self, epsilon: Any, *, tolerance: Any = None) -> Interval:
        """Certified bounds on delta(epsilon) = sup over neighbours of E_P[(1 - e^{eps - L})_+] + P(L = inf).

        Parameters
        ----------
        epsilon : float or array_like
            epsilon >= 0.
        tolerance : float, optional
            Largest acceptable width of the interval.

        Returns
        -------
        Interval
            ``lower <= delta(epsilon) <= upper`` (floats for a scalar input, arrays otherwise).

        Raises
        ------
        ValueError
            If epsilon is negative or NaN, or if the interval is wider than ``tolerance`` (the
            discretisation is too coarse: the message names ``value_step``).
        """
        eps = check_epsilon(epsilon, "epsilon")
        flat = np.ascontiguousarray(eps, dtype=np.float64).reshape(-1)
        lo, up = self._combine(lambda b: b.delta(flat))
        return self._check_width(self._shape(lo, up, eps, epsilon), tolerance)

    def epsilon(self, delta: Any, *, tolerance: Any = None) -> Interval:
        """Certified bounds on the smallest epsilon >= 0 with delta(epsilon) <= ``delta``.

        Parameters
        ----------
        delta : float or array_like
            delta in [0, 1].
        tolerance : float, optional
            Largest acceptable width of the interval.

        Returns
        -------
        Interval
            ``lower <= epsilon(delta) <= upper``; ``upper`` is inf where the pessimistic bound cannot reach
            ``delta`` (delta below the truncated mass, or 0 for mechanisms without pure DP).

        Raises
        ------
        ValueError
            If delta is outside [0, 1] or NaN, or if the interval is wider than ``tolerance`` (the
            discretisation is too coarse: the message names ``value_step``).

        Examples
        --------
        >>> from pydp_core.accounting.pld import PLD
        >>> iv = PLD.from_gdp(1.0).self_compose(4).epsilon(1e-5)
        >>> round(iv.lower, 3), round(iv.upper, 3)
        (9.997, 9.997)
        """
        dl = check_delta(delta, "delta", allow_one=True)
        flat = np.ascontiguousarray(dl, dtype=np.float64).reshape(-1)
        lo, up = self._combine(lambda b: b.epsilon(flat))
        return self._check_width(self._shape(lo, up, dl, delta), tolerance)

    def tradeoff(self, alpha: Any) -> Interval:
        """Certified bounds on the trade-off function beta(alpha) (Dong, Roth and Su 2022).

        beta(alpha) is the smallest type II error of a test between neighbouring outputs at type I error
        ``alpha``, over both neighbour orders; the mechanism is f-DP with f = beta. Computed by
        Neyman-Pearson duality from the certified privacy profiles of both orders of the pair.

        Parameters
        ----------
        alpha : float or array_like
            Type I error in [0, 1].

        Returns
        -------
        Interval
            ``lower <= beta(alpha) <= upper``.
        """
        a = check_probability(alpha, "alpha")
        flat = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        b = self._compute()
        pq, qp = b[0], b[-1]
        lo1, up1 = _acc.pld_tradeoff(pq, qp, flat)
        lo2, up2 = _acc.pld_tradeoff(qp, pq, flat)
        return self._shape(np.minimum(lo1, lo2), np.minimum(up1, up2), a, alpha)

    def _combine(self, query) -> tuple:
        lo = up = None
        for b in self._compute():
            l, u = query(b)
            lo = l if lo is None else np.maximum(lo, l)
            up = u if up is None else np.maximum(up, u)
        return lo, up

    @staticmethod
    def _shape(lo: np.ndarray, up: np.ndarray, arr: np.ndarray, original: Any) -> Interval:
        if np.ndim(original) == 0:
            return Interval(float(lo[0]), float(up[0]))
        return Interval(lo.reshape(arr.shape), up.reshape(arr.shape))

    def __repr__(self) -> str:
        return f"PLD(mechanisms={len(self._terms)}, steps={self.steps})"
