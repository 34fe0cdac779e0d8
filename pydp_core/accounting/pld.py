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
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, Sequence

import numpy as np

from .. import _core
from .._validation import check_choice, check_delta, check_epsilon, check_int, check_positive, check_probability
from ..noise import Gaussian, Laplace, LogConcaveFamily, Logistic, Subbotin, Truncated

if TYPE_CHECKING:
    from .budgets import GDP, ApproxDP

__all__ = ["PLD", "Interval", "ScaleCalibration"]

_acc = _core.accounting

# Default truncation: mass beyond the composed window (Chernoff-bounded) and per-mechanism tails.
_TAIL_MASS = 1e-15

# Queries first bound both neighbour orders on a grid this many times coarser (a fraction of the cost),
# and compute on the requested grid only the orders that can attain the maximum there (PLD._combine).
_SCREEN = 8
# No screening once the screening grid would be coarser than this (the fine grid is cheap there anyway).
_SCREEN_MAX_STEP = 2e-3


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


def _below_atom(h: float, terms: Sequence[tuple]) -> float:
    """The largest step <= h with a grid point a relative 2^-46 below the Laplace's largest loss, or h.

    Under add/remove neighbours the Laplace's remove order has its largest loss l = log(1 - q + q e^d)
    (d the shift) as an atom: the P-mass of the outputs beyond the shift. A grid point just below l puts
    the atom alone in the cell above it (docs/pld.md, "Atoms on the grid"). Computed as the engine
    computes l; only one value of l in a composition can be aligned, so with several none is.
    """
    tops = set()
    for mech, _ in terms:
        if isinstance(mech, _Noise) and mech.relation == "add_remove" and \
                mech.family._family.kind == _core.noise.Kind.Laplace:
            d, q = mech.shift, mech.q
            if q == 1.0:
                tops.add(d)
            elif d > 30.0:
                tops.add(d + math.log(q) + math.log1p((1.0 - q) / q * math.exp(-d)))
            else:
                tops.add(math.log1p(q * math.expm1(d)))
    if len(tops) != 1:
        return h
    target = tops.pop() * (1.0 - 2.0**-46)
    if not (math.isfinite(target) and target > 0.0 and target / h < 2.0**40):
        return h
    return target / math.ceil(target / h)


class PLD:
    """A privacy-loss distribution with certified two-sided bounds.

    Build one with :meth:`from_noise`, :meth:`from_density` (truncated and user-defined families),
    :meth:`from_discrete_laplace`, :meth:`from_discrete_gaussian`, :meth:`from_gdp`,
    :meth:`from_approx_dp`, :meth:`from_randomized_response` or :meth:`from_spec`; combine with
    :meth:`compose` and :meth:`self_compose`; query with :meth:`delta`, :meth:`epsilon`, :meth:`tradeoff`,
    :meth:`roc` and :meth:`mu`, which return an :class:`Interval` containing the truth; convert with
    :meth:`to_approx_dp`, :meth:`approx_dp_profile` and :meth:`to_gdp`.

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

    __slots__ = ("_terms", "_value_step", "_tail_mass", "_bounds", "_auto_step", "_fine", "_screen")

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
        self._bounds: list | None = None
        self._auto_step: float | None = None
        self._fine: dict = {}  # neighbour order (remove: bool) -> bounds on the grid value_step
        self._screen: list | None = None  # bounds of every order on the screening grid

    # ----- constructors ---------------------------------------------------------------------------------
    @classmethod
    def from_noise(cls, noise: Any, *, scale: Any, sensitivity: Any = 1.0, sampling_rate: Any = 1.0,
                   sampling: str = "poisson", neighbours: str = "add_remove") -> "PLD":
        """The PLD of additive noise ``scale * X``, X ~ ``noise``, on a query of l1/l2 ``sensitivity``.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, Truncated or LogConcaveFamily
            The unit-scale noise family (:mod:`pydp_core.noise`). Truncated and user-defined families
            take the slower density path (:meth:`from_density`; Poisson sampling, add/remove only).
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
            If ``noise`` is not a noise family of :mod:`pydp_core.noise`, or ``sampling`` /
            ``neighbours`` is not a string.
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
        if isinstance(noise, (Truncated, LogConcaveFamily)):
            if _relation(sampling, neighbours) != "add_remove":
                raise ValueError("truncated and user-defined families support sampling='poisson' with "
                                 "neighbours='add_remove' only")
            return cls.from_density(noise, scale=scale, sensitivity=sensitivity, sampling_rate=sampling_rate)
        if not isinstance(noise, (Gaussian, Laplace, Logistic, Subbotin)):
            raise TypeError("noise must be Gaussian(), Laplace(), Logistic(), Subbotin(r), Truncated(...) or "
                            "a LogConcaveFamily")
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
        lo = hi * math.exp(-e)  # (1 - delta) / (1 + e^eps), without overflow for a huge eps
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
    def from_discrete_gaussian(cls, *, sigma2: Any = None, scale: Any = None, sensitivity: int = 1,
                               sampling_rate: Any = 1.0) -> "PLD":
        """The PLD of the discrete Gaussian mechanism of the release path on the integers, from its exact pmf.

        The noise has pmf N(y) = exp(-y^2 / (2 sigma2)) / Z on the integers (Canonne, Kamath and Steinke
        2020), as sampled by :func:`pydp_core.release.sample_discrete_gaussian`; the query is an integer
        with integer ``sensitivity`` D. Each integer output y is an atom with loss
        L(y) = D (2 y - D) / (2 sigma2) (the normaliser cancels). The masses need Z: with error bounds for
        Z and the rounding, the pessimistic side over-states and the optimistic side under-states every
        mass, and the P-mass beyond the summed range (bounded by a geometric series) goes to +inf on the
        pessimistic side only.
        With Poisson sampling at ``sampling_rate`` q both add/remove orders are kept.

        Parameters
        ----------
        sigma2 : int, Fraction or float, optional
            The variance parameter sigma^2 of the release path (grid steps squared); give this or ``scale``.
        scale : float, optional
            sigma itself (sigma2 = scale**2).
        sensitivity : int, optional
            The integer sensitivity D in [1, 1e6].
        sampling_rate : float, optional
            Poisson sampling rate q in [0, 1].

        Returns
        -------
        PLD
            Add/remove neighbours; the worse order is reported.

        Raises
        ------
        TypeError
            If neither or both of ``sigma2`` and ``scale`` are given, or ``sensitivity`` is not an integer.
        ValueError
            If a parameter is out of range, or sigma2 is so large that the support would span more than
            2^28 integers (about sigma > 3e6).

        Examples
        --------
        >>> from pydp_core import release
        >>> iv = PLD.from_discrete_gaussian(sigma2=4).delta(1.0)
        >>> iv.lower <= release.discrete_gaussian_delta(epsilon=1.0, sigma2=4) <= iv.upper
        True
        """
        from ..release.samplers import rational_parameter
        from . import _pld_sided

        if (sigma2 is None) == (scale is None):
            raise TypeError("give exactly one of sigma2 and scale")
        if sigma2 is not None:
            s2 = float(rational_parameter(sigma2, "sigma2"))
        else:
            s2 = _scalar(scale, "scale", check_positive) ** 2
            if not (math.isfinite(s2) and s2 > 0.0):
                raise ValueError("scale**2 must be finite and > 0")
        D = check_int(sensitivity, "sensitivity", 1, 10**6)
        q = _scalar(sampling_rate, "sampling_rate", check_probability)
        if q == 0.0:
            return cls.identity()
        return cls([(_pld_sided.discrete_gaussian(s2, D, q), 1)])

    @classmethod
    def from_density(cls, noise: Any, *, scale: Any, sensitivity: Any = 1.0, sampling_rate: Any = 1.0) -> "PLD":
        """The PLD of additive noise of any symmetric log-concave family, from its density and tails.

        The slower path for :class:`~pydp_core.noise.Truncated` and
        :class:`~pydp_core.noise.LogConcaveFamily` (it accepts the built-in families too). The loss
        L(x) = log f(x - d) - log f(x) (d = sensitivity / scale, with Poisson sampling
        log(1 - q + q e^{L})) is monotone in the output x, so the output axis is cut where L crosses the
        loss grid points (bisection). A piece whose loss stays inside one grid cell enters with its exact
        P- and Q-masses (differences of the family's log-space tails); a piece that straddles a grid
        point is rounded up (pessimistic side) or down (optimistic side). For a bounded support the
        P-mass where Q has none is carried at +inf on both sides.

        Parameters
        ----------
        noise : NoiseFamily
            A unit-scale symmetric log-concave family with ``logpdf``, ``logcdf``, ``logsf`` and
            ``support_bound`` (:mod:`pydp_core.noise`).
        scale : float
            Noise scale (> 0).
        sensitivity : float, optional
            Sensitivity of the query (> 0).
        sampling_rate : float, optional
            Poisson sampling rate q in [0, 1]; add/remove neighbours, the worse order is reported.

        Returns
        -------
        PLD

        Raises
        ------
        TypeError
            If ``noise`` is not a noise family.
        ValueError
            If ``scale`` or ``sensitivity`` is not finite and > 0, or ``sampling_rate`` is outside [0, 1].

        Examples
        --------
        The truncated Laplace has loss at most 1 where both outputs are possible; beyond the bound only
        the shifted law lives, so delta(1) is that mass, (e^-4 - e^-5) / (2 (1 - e^-5)):

        >>> import math
        >>> from pydp_core.noise import Laplace, Truncated
        >>> iv = PLD.from_density(Truncated(Laplace(), 5.0), scale=1.0).delta(1.0)
        >>> iv.lower <= (math.exp(-4) - math.exp(-5)) / (2 * (1 - math.exp(-5))) <= iv.upper
        True
        """
        from ..noise import NoiseFamily
        from . import _pld_sided

        if not isinstance(noise, NoiseFamily):
            raise TypeError(f"noise must be a noise family from pydp_core.noise, not {type(noise).__name__}")
        s = _scalar(scale, "scale", check_positive)
        d = _scalar(sensitivity, "sensitivity", check_positive)
        q = _scalar(sampling_rate, "sampling_rate", check_probability)
        shift = d / s
        if not (math.isfinite(shift) and shift > 0.0):
            raise ValueError("sensitivity / scale must be finite and > 0")
        if q == 0.0:
            return cls.identity()
        return cls([(_pld_sided.density(noise, shift, q), 1)])

    @classmethod
    def from_spec(cls, spec: Any) -> "PLD":
        """A PLD from a JSON-style description (the schema of ``pydp-core compose`` and the accountant).

        ``spec`` is a dict with an optional ``"count"`` (k-fold self-composition) and one of:

        - ``"noise"``: ``"gaussian"``, ``"laplace"``, ``"logistic"`` or ``"subbotin"`` (with ``"r"``), and
          ``"scale"``, optional ``"sensitivity"`` (1), ``"sampling_rate"`` (1) and ``"bound"`` (the
          support half-width of a :class:`~pydp_core.noise.Truncated` family, through :meth:`from_density`);
        - ``"gdp"``: mu; ``"approx_dp"``: ``{"epsilon", "delta"}``; ``"randomized_response"``:
          ``{"epsilon"}``;
        - ``"discrete_laplace"``: ``{"scale", "sensitivity", "sampling_rate"}``; ``"discrete_gaussian"``:
          ``{"sigma2" or "scale", "sensitivity", "sampling_rate"}``.

        Parameters
        ----------
        spec : dict
            The description.

        Returns
        -------
        PLD

        Raises
        ------
        ValueError
            If the description is malformed (unknown fields, no mechanism, a bad value).
        TypeError
            If a value has the wrong type.

        Examples
        --------
        >>> p = PLD.from_spec({"noise": "gaussian", "scale": 2.0, "count": 4})
        >>> iv, g = p.epsilon(1e-5), PLD.from_gdp(1.0).epsilon(1e-5)
        >>> abs(iv.upper - g.upper) < 1e-3
        True
        """
        from .. import noise as _noise

        if not isinstance(spec, dict):
            raise ValueError(f"spec must be a JSON object (dict), not {type(spec).__name__}")
        kinds = ("noise", "gdp", "approx_dp", "randomized_response", "discrete_laplace", "discrete_gaussian")
        known = {*kinds, "scale", "sensitivity", "sampling_rate", "r", "bound", "count"}
        extra = set(spec) - known
        if extra:
            raise ValueError(f"spec has unknown fields {sorted(extra)}")
        named = [k for k in kinds if k in spec]
        if len(named) != 1:
            raise ValueError(f"spec must name exactly one mechanism ({', '.join(kinds)}), got {named}")
        kind = named[0]
        if kind != "noise" and set(spec) & {"scale", "sensitivity", "sampling_rate", "r", "bound"}:
            raise ValueError(f"the fields scale, sensitivity, sampling_rate, r and bound belong to noise entries, not {kind}")

        def fields(value: Any) -> dict:
            if not isinstance(value, dict):
                raise ValueError(f"spec[{kind!r}] must be a JSON object of keyword arguments")
            return dict(value)

        pld: PLD
        if kind == "noise":
            families = ("gaussian", "laplace", "logistic", "subbotin")
            name = spec["noise"]
            if name not in families:
                raise ValueError(f"noise must be one of {families}, got {name!r}")
            if "scale" not in spec:
                raise ValueError("a noise entry needs a scale")
            if ("r" in spec) != (name == "subbotin"):
                raise ValueError("r is required for subbotin noise and allowed only there")
            fam = _noise.Subbotin(spec["r"]) if name == "subbotin" else getattr(_noise, name.capitalize())()
            args = dict(scale=spec["scale"], sensitivity=spec.get("sensitivity", 1.0),
                        sampling_rate=spec.get("sampling_rate", 1.0))
            if "bound" in spec:
                pld = cls.from_density(_noise.Truncated(fam, spec["bound"]), **args)
            else:
                pld = cls.from_noise(fam, **args)
        elif kind == "gdp":
            pld = cls.from_gdp(spec["gdp"])
        elif kind == "approx_dp":
            pld = cls.from_approx_dp(**fields(spec["approx_dp"]))
        elif kind == "randomized_response":
            pld = cls.from_randomized_response(**fields(spec["randomized_response"]))
        elif kind == "discrete_laplace":
            pld = cls.from_discrete_laplace(**fields(spec["discrete_laplace"]))
        else:
            pld = cls.from_discrete_gaussian(**fields(spec["discrete_gaussian"]))
        count = spec.get("count", 1)
        return pld if count == 1 else pld.self_compose(count)

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
                  sampling_rate: Any = 1.0, sampling: str = "poisson", neighbours: str = "add_remove",
                  rtol: float = 1e-3, certificate: bool = False) -> Any:
        """The smallest noise scale whose composed upper bound meets (epsilon, delta), to relative ``rtol``.

        The returned scale s passes: the certified upper bound of delta(epsilon) of
        ``from_noise(noise, scale=s, ...).self_compose(steps)`` is <= ``delta`` (on the loss grid the
        search used, which may be finer than the automatic one). The search also finds a scale that fails
        for certain (its certified lower delta(epsilon) exceeds ``delta``), so the exact minimal scale
        lies between the two. It brackets by doubling, finds both boundaries by safeguarded regula falsi
        on log(-log delta) against log scale, and refines the loss grid (up to 256 times) while the
        bracket is wider than ``rtol`` and each refinement narrows the delta interval (docs/pld.md,
        "Calibration"). A composition whose loss is narrow against the automatic grid (small
        sensitivity / scale, small epsilon) is thus still calibrated to ``rtol``; composed deltas below
        ~1e-12, which the FFT's rounding limits, give a wider bracket.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, Truncated or LogConcaveFamily
            The unit-scale noise family (as in :meth:`from_noise`).
        epsilon : float
            Target epsilon > 0.
        delta : float
            Target delta in (0, 1).
        sensitivity : float, optional
            Sensitivity of the query (> 0).
        steps : int, optional
            Number of compositions (each with Poisson sampling at ``sampling_rate``).
        sampling_rate : float, optional
            Sampling rate q in (0, 1].
        sampling, neighbours : str, optional
            The sampling scheme and neighbouring relation, as in :meth:`from_noise`.
        rtol : float, optional
            Relative width of the certified bracket on the exact minimal scale, in (0, 0.5) (reached
            unless the loss grid cannot be refined further; the bracket says how close the answer is).
        certificate : bool, optional
            Return a :class:`ScaleCalibration` (the scale, the certified bracket on the exact minimal
            scale, the loss grid step and delta(epsilon) there) instead of the scale alone.

        Returns
        -------
        float or ScaleCalibration
            The scale; never one whose certified delta(epsilon) exceeds the target.

        Raises
        ------
        ValueError
            On out-of-range arguments, or if no scale below 1e12 * sensitivity meets the target.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> from pydp_core import minimal_scale
        >>> c = PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, steps=16, certificate=True)
        >>> exact = float(minimal_scale(Gaussian(), epsilon=1.0, delta=1e-5, sensitivity=4.0))
        >>> bool(c.scale_bounds.lower <= exact <= c.scale <= exact * 1.001)
        True
        """
        e = _scalar(epsilon, "epsilon", check_positive)
        dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False, allow_one=False))
        k = _count(steps, "steps")
        sens = _scalar(sensitivity, "sensitivity", check_positive)
        q = _scalar(sampling_rate, "sampling_rate", check_probability)
        if not (0.0 < rtol < 0.5):
            raise ValueError(f"rtol must lie in (0, 0.5), got {rtol}")
        if q == 0.0:
            raise ValueError("sampling_rate must be > 0: a mechanism that is never applied needs no noise")
        _relation(sampling, neighbours)

        def build(s: float, h: float | None) -> PLD:
            return cls.from_noise(noise, scale=s, sensitivity=sens, sampling_rate=q, sampling=sampling,
                                  neighbours=neighbours).self_compose(k) \
                .with_discretization(value_step=h)

        found = _calibrate_scale(build, epsilon=e, delta=dl, start=_calibration_start(sens, k, q, e),
                                 rtol=rtol / 4.0, width=rtol)
        return found if certificate else found.scale

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
        0.006 steps^-0.45, at most 0.005, finer for a narrow composed loss (see :attr:`value_step`, which
        also says when a given step is lowered slightly to put a Laplace's largest loss on the grid).
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
        compositions (standard deviation of the composed loss about 1) within ~1e-4 in epsilon; scaled
        by 2 sigma where the composed loss has a standard deviation sigma < 1/2 (a small sensitivity /
        scale ratio, as in calibrations to a small epsilon, is then resolved as finely, relative to
        its spread, as a DP-SGD composition); refined to give at least 2^8 points across a narrow
        composed loss window, and widened where the window would need more than 2^21 points (a wide
        composed loss needs no finer absolute step).

        With Laplace noise under add/remove neighbours (one shift and rate in the composition), the
        step (automatic or given) is lowered by less than a factor n / (n + 1), n the number of steps up
        to the largest loss, so that a grid point lies a relative 2^-46 below that loss: its atom then
        fills a cell alone, and the optimistic side keeps it (instead of merging it down by up to a step).
        """
        if self._auto_step is None:
            step = self._value_step if self._value_step is not None else self._automatic_step()
            self._auto_step = _below_atom(step, self._terms)
        return self._auto_step

    def _automatic_step(self) -> float:
        h = min(5e-3, 6e-3 * self.steps ** -0.45)
        coarse = 1e-2
        tail = self._tail_mass / self.steps
        parts = [m.discretise(True, coarse, tail) for m, _ in self._terms]
        lo, hi = _acc.pld_window(parts, [c for _, c in self._terms], coarse, self._tail_mass)
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):  # no finite loss mass (all at +inf)
            return h
        var = sum(c * _loss_std(m, part, coarse, tail) ** 2 for (m, c), part in zip(self._terms, parts))
        if var > 0.0:  # the count-based step assumes a composed loss of spread >= 1/2; scale it below that
            h *= min(1.0, 2.0 * math.sqrt(var))
        # At least 2^8 points across the window, at most 2^21.
        return max(min(h, (hi - lo) / 2**8), (hi - lo) / 2**21)

    # ----- evaluation -----------------------------------------------------------------------------------
    def _orders(self) -> tuple:
        """The neighbour orders to bound: remove (True) and add (False), or one if they coincide."""
        return (True,) if all(m.symmetric for m, _ in self._terms) else (True, False)

    def _order_bounds(self, orders: Sequence[bool], h: float) -> list:
        counts = [c for _, c in self._terms]
        per_mech_tail = self._tail_mass / max(1, self.steps)
        directions = [[m.discretise(remove, h, per_mech_tail, self.steps > 1) for m, _ in self._terms]
                      for remove in orders]
        return list(_acc.pld_compose(directions, counts, h, self._tail_mass))

    def _fine_bounds(self, orders: Sequence[bool]) -> list:
        missing = [r for r in orders if r not in self._fine]
        if missing:
            self._fine.update(zip(missing, self._order_bounds(missing, self.value_step)))
        return [self._fine[r] for r in orders]

    def _compute(self) -> list:
        if self._bounds is None:
            self._bounds = self._fine_bounds(self._orders())
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

    def roc(self, fpr: Any) -> Interval:
        """Certified bounds on the ROC curve of the most powerful membership test: power = 1 - beta(fpr).

        The true-positive rate a test between neighbouring outputs can reach at false-positive rate
        ``fpr`` (the complement of :meth:`tradeoff`; for mu-GDP it is Phi(mu + Phi^-1(fpr)), as in
        :func:`pydp_core.accounting.gaussian.roc`).

        Parameters
        ----------
        fpr : float or array_like
            False-positive rates in [0, 1].

        Returns
        -------
        Interval
            ``lower <= power(fpr) <= upper`` (floats for a scalar input, arrays otherwise).

        Raises
        ------
        ValueError
            If ``fpr`` is outside [0, 1] or NaN.

        Examples
        --------
        >>> from pydp_core.accounting import gaussian
        >>> iv = PLD.from_gdp(1.0).roc(0.05)
        >>> iv.lower <= gaussian.roc(0.05, 1.0) <= iv.upper
        True
        """
        check_probability(fpr, "fpr")
        b = self.tradeoff(fpr)
        return Interval(1.0 - b.upper, 1.0 - b.lower)

    def mu(self, *, delta_floor: Any = 1e-10) -> Interval:
        """A certified bracket of the smallest mu such that the mechanism is mu-GDP above ``delta_floor``.

        The quantity bracketed is mu* = inf{mu : delta(eps) <= max(delta_mu(eps), delta_floor) for every
        eps >= 0}, delta_mu the mu-GDP privacy profile (Dong, Roth and Su 2022) and delta the worse
        neighbour order of this PLD. (Every discretised PLD keeps a tiny mass at +inf, its truncated
        tails, which no GDP profile covers as eps grows; the floor states where the comparison stops. For
        a Gaussian mechanism of parameter mu, mu* = mu for every floor.) On a grid
        0 = e_0 < ... < e_n, with upper delta(e_n) <= delta_floor:

        - upper: the smallest mu with upper delta(e_j) <= max(delta_mu(e_{j+1}), delta_floor) for all j
          (both profiles decrease, so this covers each [e_j, e_{j+1}]; beyond e_n delta <= delta_floor),
          or, second order in the step, the upper profile's chord in x = e^eps below the tangent of
          delta_mu at e_{j+1} (both profiles are convex in x);
        - lower: the largest mu for which some e_j has lower delta(e_j) > max(delta_mu(e_j), delta_floor)
          (a witness that mu fails).

        Parameters
        ----------
        delta_floor : float, optional
            delta below which the GDP profile is not required to dominate, in (0, 0.01).

        Returns
        -------
        Interval
            ``lower <= mu* <= upper``; ``upper`` is inf if the pessimistic profile never falls to
            ``delta_floor``.

        Raises
        ------
        ValueError
            If ``delta_floor`` is outside (0, 0.01).

        Examples
        --------
        >>> iv = PLD.from_gdp(1.5).self_compose(4).mu()
        >>> iv.lower <= 3.0 <= iv.upper and iv.upper - iv.lower < 1e-2
        True
        """
        from scipy import special as _special

        from . import gaussian as _gaussian

        floor = _scalar(delta_floor, "delta_floor", lambda v, n: check_delta(v, n, allow_zero=False))
        if not floor < 0.01:
            raise ValueError(f"delta_floor must lie in (0, 0.01), got {floor}")
        top = self.epsilon(floor)
        finite = math.isfinite(top.upper)
        # A little beyond epsilon(floor).upper, so that the upper profile is below the floor at the end.
        if finite:
            end = top.upper * (1.0 + 1e-9) + 1e-12
        else:  # no upper bound; the grid only looks for witnesses
            end = max(4.0 * top.lower, 1.0) if math.isfinite(top.lower) else 100.0
        grid = np.linspace(0.0, end, 8193)
        prof = self.delta(grid)
        up, lo = np.asarray(prof.upper), np.asarray(prof.lower)

        def gdp(m: float) -> np.ndarray:
            return np.asarray(_gaussian.delta(m, epsilon=grid), dtype=float)

        x = np.exp(np.minimum(grid, 700.0))  # x = e^eps: both profiles are convex in x

        def dominated(m: float) -> bool:
            g = gdp(m) * (1.0 - 1e-12)
            if not up[-1] <= floor:
                return False
            # On [e_j, e_{j+1}] any of these suffices: (a) upper delta(e_j) <= max(delta_mu(e_{j+1}), floor)
            # (both decrease); (b) the chord of the upper profile in x lies below the tangent of delta_mu at
            # x_{j+1}, checked at both ends (the profile is below its chord, delta_mu above its tangent;
            # d delta_mu / dx = -Phi(-eps / mu - mu / 2)), which is second order in the grid step.
            first = up[:-1] <= np.maximum(g[1:], floor)
            if m > 0.0:
                slope = _special.ndtr(-grid[1:] / m - m / 2.0) * (1.0 - 1e-12)
                with np.errstate(invalid="ignore", over="ignore"):
                    tangent = g[1:] + slope * (x[1:] - x[:-1])
                # The profile's rounding allowance (64 ulps of its suffix sums, <= 5e-14 in all) steps
                # down between grid cells and so may lift it above its chord by that much.
                second = (up[:-1] + 5e-14 <= tangent) & (up[1:] + 5e-14 <= g[1:]) & (grid[1:] < 700.0)
                first = first | second
            return bool(np.all(first))

        def witnessed(m: float) -> bool:
            g = gdp(m)
            return bool(np.any(lo > np.maximum(g * (1.0 + 1e-12), floor)))

        def boundary(holds, a: float, b: float) -> float:  # holds(a) != holds(b): bisect to ~1e-10
            while b - a > 1e-10 * b + 1e-300:
                mid = 0.5 * (a + b)
                if holds(mid) == holds(a):
                    a = mid
                else:
                    b = mid
            return b if holds(b) else a

        upper = math.inf
        if finite:
            b = 1.0
            while not dominated(b) and b < 1e6:
                b *= 2.0
            if dominated(b):
                upper = boundary(dominated, 0.0, b) if not dominated(0.0) else 0.0
        lower = 0.0
        if witnessed(0.0):
            b = upper if math.isfinite(upper) else 1.0
            while witnessed(b) and b < 1e6:
                b *= 2.0
            lower = boundary(witnessed, 0.0, b) if not witnessed(b) else b
        return Interval(lower, max(upper, lower))

    # ----- conversions to budgets ---------------------------------------------------------------------------
    def to_approx_dp(self, delta: Any) -> "ApproxDP":
        """The certified (epsilon, delta)-DP guarantee: epsilon the upper end of :meth:`epsilon`.

        Parameters
        ----------
        delta : float
            delta in (0, 1).

        Returns
        -------
        ApproxDP
            ``ApproxDP(epsilon(delta).upper, delta)``.

        Raises
        ------
        ValueError
            If ``delta`` is outside (0, 1), or no finite epsilon is certified at it (delta below the
            truncated mass of the discretisation).

        Examples
        --------
        >>> PLD.from_gdp(1.0).to_approx_dp(1e-5)
        ApproxDP(epsilon=4.377..., delta=1e-05)
        """
        from .budgets import ApproxDP

        dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False))
        eps = self.epsilon(dl).upper
        if not math.isfinite(eps):
            raise ValueError(f"no finite epsilon is certified at delta = {dl:g}: delta is below the discretisation's "
                             "truncated mass")
        return ApproxDP(eps, dl)

    def approx_dp_profile(self, delta: Any) -> list:
        """The certified (epsilon, delta)-DP guarantees at several deltas (a privacy profile as budgets).

        Parameters
        ----------
        delta : array_like
            deltas in (0, 1).

        Returns
        -------
        list of ApproxDP
            One :meth:`to_approx_dp` per delta, in order; deltas with no finite certified epsilon are
            left out.

        Raises
        ------
        ValueError
            If a delta is outside (0, 1).

        Examples
        --------
        >>> [round(b.epsilon, 2) for b in PLD.from_gdp(1.0).approx_dp_profile([1e-3, 1e-6])]
        [3.14, 4.89]
        """
        from .budgets import ApproxDP

        dl = np.asarray(check_delta(delta, "delta", allow_zero=False), dtype=float).reshape(-1)
        eps = np.asarray(self.epsilon(dl).upper).reshape(-1)
        return [ApproxDP(float(e), float(d)) for e, d in zip(eps, dl) if math.isfinite(e)]

    def to_gdp(self, *, delta_floor: Any = 1e-10) -> "GDP":
        """The certified GDP guarantee: mu the upper end of :meth:`mu` (see there for ``delta_floor``).

        Parameters
        ----------
        delta_floor : float, optional
            delta below which GDP(mu) is not required to dominate, in (0, 0.01).

        Returns
        -------
        GDP
            ``GDP(mu(delta_floor=...).upper)``: the mechanism's privacy profile lies below that of GDP(mu)
            wherever the latter is at least ``delta_floor``.

        Raises
        ------
        ValueError
            If no finite mu is certified.

        Examples
        --------
        >>> round(PLD.from_gdp(0.5).self_compose(4).to_gdp().mu, 2)
        1.0
        """
        from .budgets import GDP

        m = self.mu(delta_floor=delta_floor).upper
        if not math.isfinite(m):
            raise ValueError("no finite GDP mu is certified: the pessimistic profile stays above delta_floor")
        return GDP(m)

    def _combine(self, query) -> tuple:
        """Bounds on the maximum over the neighbour orders of ``query``: (lower, upper) arrays.

        The maximum of the truths lies between the maximum of any lower bounds and the maximum of any
        upper bounds, one per order. With two orders, both are first bounded on the screening grid
        (``_SCREEN`` times coarser); an order whose coarse upper bound nowhere exceeds the largest coarse
        lower bound cannot attain the maximum beyond that bound, and keeps its coarse bounds. The others
        are bounded on the grid ``value_step`` too, and each keeps the intersection of its two intervals
        (both hold). So every end is at least as tight as with all orders on ``value_step``, and the
        result depends on the query alone (not on which orders earlier queries refined).
        """
        orders = self._orders()
        if len(orders) == 1 or self.value_step * _SCREEN > _SCREEN_MAX_STEP:
            return self._merge([query(b) for b in self._compute()])
        if self._screen is None:
            self._screen = self._order_bounds(orders, self.value_step * _SCREEN)
        coarse = [query(b) for b in self._screen]
        best_lower = np.maximum.reduce([lo for lo, _ in coarse])
        need = [bool(np.any(up > best_lower)) for _, up in coarse]
        fine = iter(self._fine_bounds([r for r, n in zip(orders, need) if n]))
        parts = []
        for (lo, up), n in zip(coarse, need):
            if n:
                lo_f, up_f = query(next(fine))
                lo, up = np.maximum(lo, lo_f), np.minimum(up, up_f)
            parts.append((lo, up))
        return self._merge(parts)

    @staticmethod
    def _merge(parts: list) -> tuple:
        return np.maximum.reduce([lo for lo, _ in parts]), np.maximum.reduce([up for _, up in parts])

    @staticmethod
    def _shape(lo: np.ndarray, up: np.ndarray, arr: np.ndarray, original: Any) -> Interval:
        if np.ndim(original) == 0:
            return Interval(float(lo[0]), float(up[0]))
        return Interval(lo.reshape(arr.shape), up.reshape(arr.shape))

    def __repr__(self) -> str:
        return f"PLD(mechanisms={len(self._terms)}, steps={self.steps})"


class ScaleCalibration(NamedTuple):
    """A calibrated noise scale with its certificate (the result of ``PLD.calibrate(..., certificate=True)``).

    Parameters
    ----------
    scale : float
        The calibrated scale: the certified upper bound of delta(epsilon) is <= the target there.
    scale_bounds : Interval
        Certified bounds on the exact minimal scale: ``upper`` is ``scale``; at ``lower`` the certified
        lower bound of delta(epsilon) exceeds the target, so no smaller scale meets it (``lower`` is 0 if
        no scale could be shown to fail).
    value_step : float
        The loss grid step on which ``scale`` passed, and on which ``scale_bounds.lower`` fails for
        certain unless only another grid showed that (rebuild the certificate with
        ``with_discretization(value_step=...)``).
    delta_bounds : Interval
        The certified interval of delta(epsilon) at ``scale`` on that grid.

    Examples
    --------
    >>> from pydp_core.noise import Logistic
    >>> c = PLD.calibrate(Logistic(), epsilon=1.0, delta=1e-6, steps=10, certificate=True)
    >>> pld = PLD.from_noise(Logistic(), scale=c.scale).self_compose(10).with_discretization(value_step=c.value_step)
    >>> bool(pld.delta(1.0).upper <= 1e-6 and c.scale_bounds.upper <= 1.001 * c.scale_bounds.lower)
    True
    """

    scale: float
    scale_bounds: Interval
    value_step: float
    delta_bounds: Interval


def _loss_std(mech: Any, part: Any, grid: float, tail: float) -> float:
    """The standard deviation of one mechanism's finite loss under P (remove order), from its discretisation.

    Only the choice of the grid uses it. A grid coarser than the loss inflates the variance (mass inside a
    cell is split between its ends), so the loss is discretised again on a grid of 1/16 of the
    estimate until the grid is below 1/8 of it.
    """
    sd = 0.0
    for _ in range(6):
        p = np.asarray(part.pess_pmf, dtype=float)
        total = float(p.sum())
        if not total > 0.0:
            return 0.0
        loss = (part.pess_offset + np.arange(p.size)) * grid
        mean = float(p @ loss) / total
        sd = math.sqrt(max(float(p @ (loss - mean) ** 2) / total, 0.0))
        if not 0.0 < sd < 8.0 * grid:
            break
        grid = sd / 16.0
        part = mech.discretise(True, grid, tail)
    return sd


def _calibration_start(sensitivity: float, steps: int, sampling_rate: float, epsilon: float) -> float:
    """Where a calibration's doubling starts: the Gaussian order of magnitude sens q sqrt(k) / epsilon."""
    return sensitivity * max(sampling_rate * math.sqrt(steps), 1.0) / min(epsilon, 1.0)


# A calibration refines the loss grid at most _REFINE times, each time 2 to 4 times finer.
_REFINE = 4


def _calibrate_scale(build, *, epsilon: float, delta: float, start: float, rtol: float,
                     width: float) -> ScaleCalibration:
    """The smallest noise scale whose certified upper delta(epsilon) is <= ``delta``, with a certified bracket.

    ``build(scale, value_step)`` is the composed PLD at ``scale`` (``value_step`` None: automatic); its
    exact delta(epsilon) decreases in the scale. A scale becomes the answer only once it passes (certified
    upper delta <= target on the grid it is evaluated on) and the lower end only once it fails for
    certain (certified lower delta > target), so [lower, scale] contains the exact minimal scale
    whatever the grids. The steps:

    1. bracket by doubling from ``start`` on the automatic grid of each scale;
    2. on one fixed grid (first the automatic one of the passing end) find the boundary of the upper
       criterion and that of the lower one, each to relative ``rtol`` (regula falsi with the Illinois
       safeguard on log(-log delta) against log scale, which is smooth and nearly linear);
    3. while the bracket between them is wider than ``width`` (relative), the discretisation is what keeps
       it open: refine the grid (the delta interval shrinks with the square of the step, so by the
       square root of the excess, 2 to 4 times) and repeat 2 inside the bracket, as long as each
       refinement narrows the delta interval at the answer by 20% or more (below ~1e-12 the FFT's
       rounding, not the grid, limits composed deltas). A scale that passes is certified on any grid, so the grid only decides how
       close to the exact minimum the answer is.
    """
    memo: dict = {}  # (scale, grid step) -> delta interval

    def bound(s: float, h: float | None) -> Interval:
        if (s, h) not in memo:
            pld = build(s, h)
            key = (s, pld.value_step)
            if key not in memo:
                memo[key] = pld.delta(epsilon)
            memo[s, h] = memo[key]
        return memo[s, h]

    # log(-log delta) is nearly linear in log scale (for Gaussian-like tails -log delta grows like a
    # power of the scale), so regula falsi on it converges in a few steps.
    level = math.log(-math.log(delta))

    def excess(s: float, h: float, side: int) -> float:  # > 0 iff the bound exceeds the target (exactly)
        value = bound(s, h)[side]
        f = level - math.log(-math.log(min(max(value, 1e-300), 1.0 - 2.0**-52)))
        return max(f, 1e-300) if value > delta else min(f, 0.0)

    def boundary(side: int, h: float, a: float, b: float, done) -> tuple:
        # excess > 0 at a, <= 0 at b; shrink [a, b] until b / a <= 1 + rtol or done(a, b).
        fa, fb = excess(a, h, side), min(excess(b, h, side), 0.0)
        last, span = 0, math.log(b / a)
        for it in range(100):
            if b / a <= 1.0 + rtol or done(a, b):
                break
            la, lb = math.log(a), math.log(b)
            t = fa / (fa - fb) if fa > fb else 0.5
            if it > 0 and it % 3 == 0:  # the bracket must halve every three steps, else bisect
                t, span = (0.5 if lb - la > 0.5 * span else t), lb - la
            mid = math.exp(la + min(max(t, 0.01), 0.99) * (lb - la))
            if not a < mid < b:
                break
            f = excess(mid, h, side)
            if f > 0.0:
                a, fa = mid, f
                fb, last = (0.5 * fb if last == 1 else fb), 1
            else:
                b, fb = mid, f
                fa, last = (0.5 * fa if last == -1 else fa), -1
        return a, b

    def failing(h: float | None = None) -> float:  # the largest scale that fails for certain (on grid h or any), or 0
        return max((s for (s, g), iv in memo.items() if iv.lower > delta and h in (None, g)), default=0.0)

    # 1. Bracket on the automatic grid.
    lo = hi = start
    if bound(hi, None).upper <= delta:
        while bound(lo, None).upper <= delta and lo > 1e-12 * start:
            hi, lo = lo, lo / 2.0
    else:
        while not bound(hi, None).upper <= delta:
            lo, hi = hi, hi * 2.0
            if hi > 1e12 * start:
                raise ValueError("no noise scale below 1e12 * sensitivity meets the target (epsilon, delta)")
    step = build(hi, None).value_step
    best, best_step = hi, step  # the answer and the grid it passed on
    last_spread = math.inf  # the width of the delta interval at the answer on the last grid
    for refinement in range(_REFINE + 1):
        # 2. The upper boundary on this grid, between a failing scale a and a passing one b.
        a, b = max(lo, failing()), best
        while bound(a, step).upper <= delta and a > 1e-12 * start:  # the grid lets smaller scales pass
            b, a = a, a / 2.0
        if bound(a, step).upper > delta:
            a, b = boundary(1, step, a, b, lambda x, y: y / max(failing(), 1e-300) <= 1.0 + width)
        if b < best:
            best, best_step = b, step
        # The lower boundary below it, from the largest scale known to fail for certain (or, moving down
        # from a by growing factors, the first one found) to the smallest known not to.
        factor, c = 1.0 + width, failing(step)
        if c == 0.0:
            c = a
            while not bound(c, step).lower > delta and c > 1e-12 * start:
                c, factor = c / factor, factor * factor
        if bound(c, step).lower > delta:
            d = min((s for (s, h), iv in memo.items() if h == step and s > c and not iv.lower > delta), default=best)
            boundary(0, step, c, d, lambda x, y: best / x <= 1.0 + width)
        below = failing()
        # 3. Refine the grid while the bracket is wider than ``width``.
        gap = best / below - 1.0 if below > 0.0 else math.inf
        spread = bound(best, step).upper - bound(best, step).lower
        if gap <= width or refinement == _REFINE or not spread < 0.8 * last_spread:
            break  # narrow enough, or the grid no longer limits the delta interval (the FFT's rounding does)
        last_spread = spread
        finer = step / min(4.0, max(2.0, math.sqrt(gap / width)))
        lo = below if below > 0.0 else c
        try:
            bound(best, finer), bound(lo, finer)
        except ValueError:  # the grid would exceed the transform's size: keep this bracket
            break
        step = finer
    if bound(best, step).upper <= delta:  # report the finest grid the answer passes on
        best_step = step
    # One grid certifies both ends where it can (the bracket can then be checked on value_step alone).
    below = failing(best_step) or failing()
    return ScaleCalibration(best, Interval(below, best), best_step, bound(best, best_step))
