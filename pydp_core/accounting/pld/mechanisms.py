"""The mechanisms a PLD composes, and their construction from noise families and discrete laws.

A PLD is a list of (mechanism, count) terms. A mechanism here knows its key (equal keys are merged
into one term), whether its two neighbour orders have the same PLD (``symmetric``), and how to
discretise one order on a loss grid (``discretise(remove, h, tail, composed)``, a kernel object of
``pydp_core._core.accounting``):

- :class:`_Noise`: additive noise of a built-in family (Gaussian, Laplace, Logistic, Subbotin), with
  Poisson sampling or sampling without replacement, discretised in C++ from the family's log-space tails;
- :class:`_Atoms`: finitely many outcomes with their P- and Q-masses (approx DP, randomized response, the
  discrete Laplace, the identity);
- the atom-list mechanisms of :mod:`.sided` (the discrete Gaussian, any log-concave density).

The ``*_term`` functions check the arguments of the ``PLD.from_*`` constructors (which document them)
and return the mechanism; a zero sampling rate gives :func:`identity_term`.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..._core import accounting as _acc
from ..._core import release as _discrete
from ..._validation import check_choice, check_delta, check_epsilon, check_int, check_positive, check_probability, check_rational
from ...noise import Gaussian, NoiseFamily
from . import sided as _sided
from ._args import _scalar


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

    def key(self) -> tuple[Any, ...]:
        return ("noise", self.family.identity, self.shift, self.q, self.relation)

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        # In a composition, loss blocks of P-mass <= 1e-9 stay one cell (far below the FFT's resolution);
        # a single mechanism keeps every cell, so its deep tail keeps relative precision.
        return _acc.pld_noise(self.family.kernel, self.shift, self.q, remove, h, tail, 1e-9 if composed else 0.0,
                              self.relation == "substitution")


class _Atoms:
    """A mechanism with finitely many outcomes: losses with their P- and Q-masses, per order."""

    def __init__(self, name: str, remove: tuple[Any, ...], add: tuple[Any, ...] | None = None) -> None:
        self.name, self.remove, self.add = name, remove, add
        self.symmetric = add is None

    def key(self) -> tuple[Any, ...]:
        def freeze(t: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(np.asarray(a, dtype=float).tobytes() if isinstance(a, np.ndarray) else a for a in t)

        return ("atoms", self.name, freeze(self.remove), None if self.add is None else freeze(self.add))

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        loss, p, q, inf_p = self.remove if (remove or self.add is None) else self.add
        # Outcomes of no P-mass (underflowed: e^{-1/t} of a discrete Laplace of tiny scale t) carry no loss
        # mass, and would only stretch the grid over their losses.
        keep = np.asarray(p) > 0.0
        if not keep.all():
            loss, p, q = (np.asarray(a)[keep] for a in (loss, p, q))
        return _acc.pld_atoms(loss, p, q, inf_p, h)


_SAMPLING = ("poisson", "without_replacement")
_NEIGHBOURS = ("add_remove", "substitution")


def _relation(sampling: Any, neighbours: Any) -> str:
    """The neighbouring relation of a sampled mechanism; ValueError for the combinations not supported."""
    sampling = check_choice(sampling, "sampling", _SAMPLING)
    neighbours = check_choice(neighbours, "neighbours", _NEIGHBOURS)
    if sampling == "without_replacement" and neighbours == "add_remove":
        raise ValueError("sampling='without_replacement' needs neighbours='substitution': a fixed-size batch "
                         "changes composition, not size, when a record is added or removed")
    result: str = neighbours
    return result


def _noise_args(scale: Any, sensitivity: Any, sampling_rate: Any = 1.0) -> tuple[float, float]:
    """(shift, q) of additive noise: the shift sensitivity / scale (both finite and > 0, and so the
    ratio) and the sampling rate q in [0, 1]."""
    s = _scalar(scale, "scale", check_positive)
    d = _scalar(sensitivity, "sensitivity", check_positive)
    q = _scalar(sampling_rate, "sampling_rate", check_probability)
    shift = d / s
    if not (math.isfinite(shift) and shift > 0.0):
        raise ValueError("sensitivity / scale must be finite and > 0")
    return shift, q


def identity_term() -> _Atoms:
    """The mechanism that reveals nothing (L = 0)."""
    return _Atoms("identity", (np.array([0.0]), np.array([1.0]), np.array([1.0]), 0.0))


def noise_term(noise: Any, *, scale: Any, sensitivity: Any, sampling_rate: Any, sampling: str,
               neighbours: str) -> Any:
    """Additive noise ``scale * X`` on a query of ``sensitivity``, sampled (``PLD.from_noise``)."""
    if isinstance(noise, NoiseFamily) and noise.spec_name is None:
        if _relation(sampling, neighbours) != "add_remove":
            raise ValueError("truncated and user-defined families support sampling='poisson' with "
                             "neighbours='add_remove' only")
        return density_term(noise, scale=scale, sensitivity=sensitivity, sampling_rate=sampling_rate)
    if not isinstance(noise, NoiseFamily):
        raise TypeError("noise must be Gaussian(), Laplace(), Logistic(), Subbotin(r), Truncated(...) or "
                        "a LogConcaveFamily")
    shift, q = _noise_args(scale, sensitivity, sampling_rate)
    relation = _relation(sampling, neighbours)
    if q == 0.0:
        return identity_term()
    if sampling == "without_replacement" or (relation == "substitution" and q == 1.0):
        # Without replacement the replaced record displaces another in the batch: the Poisson pair at
        # twice the shift (batches.py states the proof; without sampling, f(. - d) vs f(. + d)).
        # f(. - d) vs f(. + d): the add/remove pair at shift 2d.
        shift *= 2.0
        if not math.isfinite(shift):
            raise ValueError("2 * sensitivity / scale must be finite")
        relation = "add_remove"
    return _Noise(noise, shift, q, relation)


def gdp_term(mu: Any) -> _Noise:
    """mu-GDP: the Gaussian mechanism with shift mu (``PLD.from_gdp``)."""
    m = _scalar(mu, "mu", check_positive)
    return _Noise(Gaussian(), m, 1.0)


def approx_dp_term(*, epsilon: Any, delta: Any) -> _Atoms:
    """The four-outcome worst case of (epsilon, delta)-DP (``PLD.from_approx_dp``)."""
    e = _scalar(epsilon, "epsilon", check_epsilon)
    dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_one=False))
    hi = (1.0 - dl) / (1.0 + math.exp(-e))
    lo = hi * math.exp(-e)  # (1 - delta) / (1 + e^eps), without overflow for a huge eps
    atoms = (np.array([e, -e]), np.array([hi, lo]), np.array([lo, hi]), dl)
    return _Atoms("approx_dp", atoms)


def _log_mix(q: float, a: Any, b: Any) -> Any:
    """log(q e^a + (1 - q) e^b) elementwise, for a weight q in (0, 1], without cancellation.

    With hi >= lo the larger and smaller exponent and w the weight of hi, the sum is
    e^lo (1 + w expm1(hi - lo)), a sum of nonnegative terms; past hi - lo = 30 it is taken as
    e^hi w (1 + (1 - w) / w e^-(hi - lo)) so that nothing overflows. A loss log(P / Q) of two such
    mixtures stays exact to a few ulps of itself when the exponents are exact, even where both masses
    agree to 1e-300 (a discrete Laplace of a huge scale), which log(P) - log(Q) would round to 0.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    if q == 1.0:
        return a.copy()
    a_hi = a >= b
    hi, lo = np.where(a_hi, a, b), np.where(a_hi, b, a)
    w = np.where(a_hi, q, 1.0 - q)
    r = hi - lo
    near = lo + np.log1p(w * np.expm1(np.minimum(r, 30.0)))
    with np.errstate(divide="ignore"):
        far = hi + np.log(w) + np.log1p((1.0 - w) / w * np.exp(-r))
    out: Any = np.where(r <= 30.0, near, far)
    return out


def _discrete_laplace_substitution(scale: float, D: int, q: float) -> tuple[Any, ...]:
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
    # The losses from the exact log ratios of the shifted laws to f0 (multiples of log a), not as
    # log_p - log_q, which loses everything below 1e-16 of the masses' logs.
    ax = np.abs(x)
    r_p = la * np.concatenate(([D], np.abs(x - D) - ax, [-D]))  # log(f(. - D) / f0) per class
    r_q = la * np.concatenate(([-D], np.abs(x + D) - ax, [D]))  # log(f(. + D) / f0)
    loss = _log_mix(q, r_p, 0.0) - _log_mix(q, r_q, 0.0)
    return (loss, np.exp(log_p), np.exp(log_q), 0.0)


def discrete_laplace_term(*, scale: Any, sensitivity: int = 1, sampling_rate: Any = 1.0, sampling: str = "poisson",
                          neighbours: str = "add_remove") -> _Atoms:
    """The discrete Laplace on the integers, exactly: D + 1 (or 2D + 1) atoms (``PLD.from_discrete_laplace``)."""
    t = _scalar(scale, "scale", check_positive)
    if isinstance(sensitivity, (bool, np.bool_)) or not isinstance(sensitivity, numbers.Integral):
        raise TypeError(f"sensitivity must be an integer, not {type(sensitivity).__name__}")
    D = int(sensitivity)
    if not 1 <= D <= 10**6:
        raise ValueError(f"sensitivity must lie in [1, 1e6], got {D}")
    q = _scalar(sampling_rate, "sampling_rate", check_probability)
    relation = _relation(sampling, neighbours)
    if q == 0.0:
        return identity_term()
    if relation == "substitution":
        if q == 1.0 or sampling == "without_replacement":
            return discrete_laplace_term(scale=t, sensitivity=2 * D, sampling_rate=q)
        return _Atoms("discrete_laplace_substitution", _discrete_laplace_substitution(t, D, q))
    la = -1.0 / t  # log a
    log1pa = math.log1p(math.exp(la))
    lc = math.log(-math.expm1(la)) - log1pa  # log((1 - a) / (1 + a))
    x = np.arange(1, D, dtype=float)
    # log masses of the classes x <= 0, x = 1..D-1, x >= D under Q = p and under the shifted P.
    log_q = np.concatenate(([-log1pa], lc + la * x, [D * la - log1pa]))
    log_p = np.concatenate(([D * la - log1pa], lc + la * (D - x), [-log1pa]))
    pq = np.exp(log_q)
    # The mixture's log masses in log space: at a small scale e^{-D / t} underflows, its log does not.
    with np.errstate(divide="ignore"):  # log(1 - q) = -inf at q = 1 adds nothing
        log_mix = np.logaddexp(math.log(q) + log_p, np.log1p(-q) + log_q)
    mix = np.exp(log_mix)
    # The losses log(mix / p) = log(q e^r + 1 - q) from the exact log ratios r = log(p(. - D) / p), which
    # are multiples of log a (log_mix - log_q would round every loss below ~1e-16 to 0 or its sign away).
    loss = _log_mix(q, la * np.concatenate(([D], D - 2.0 * x, [-D])), 0.0)
    remove = (loss, mix, pq, 0.0)
    add = (-loss, pq, mix, 0.0)
    return _Atoms("discrete_laplace", remove, None if q == 1.0 else add)


# The largest numerator or denominator of an exact discrete-noise parameter (that of the release path).
_MAX_PARAM = int(_discrete.MAX_PARAM)


def discrete_gaussian_term(*, sigma2: Any = None, scale: Any = None, sensitivity: int = 1,
                           sampling_rate: Any = 1.0) -> Any:
    """The discrete Gaussian of the release path on the integers (``PLD.from_discrete_gaussian``)."""
    if (sigma2 is None) == (scale is None):
        raise TypeError("give exactly one of sigma2 and scale")
    if sigma2 is not None:
        # The release path's exact rational parameter (release.samplers.rational_parameter checks the same).
        s2 = float(check_rational(sigma2, "sigma2", _MAX_PARAM))
    else:
        t = _scalar(scale, "scale", check_positive)
        s2 = t * t  # inf, not OverflowError, past 1.3e154
        if not (math.isfinite(s2) and s2 > 0.0):
            raise ValueError(f"scale**2 must be finite and > 0, got scale = {t:g}")
    D = check_int(sensitivity, "sensitivity", 1, 10**6)
    q = _scalar(sampling_rate, "sampling_rate", check_probability)
    if q == 0.0:
        return identity_term()
    try:
        return _sided.discrete_gaussian(s2, D, q)
    except ValueError as exc:
        if scale is None or "2^28" not in str(exc):
            raise
        raise ValueError(f"scale = {t:g} is too large for the exact discrete Gaussian PLD: its support would span "
                         "more than 2^28 integers") from exc


def integer_weights_term(weights: Any, *, shift: Any) -> Any:
    """The symmetric integer-weight law of a lattice release (``PLD.from_integer_weights``)."""
    w = np.asarray(weights)
    if w.ndim != 1 or w.size == 0 or w.dtype.kind not in "ui":
        raise TypeError("weights must be a non-empty 1-d array of integers")
    if w.dtype.kind == "i" and bool(np.any(w < 0)):
        raise ValueError("weights must be >= 0")
    if not int(w[0]) > 0:
        raise ValueError("weights[0] must be > 0")
    return _sided.integer_weights(w.astype(np.uint64), check_int(shift, "shift", 1, 2**52))


def density_term(noise: Any, *, scale: Any, sensitivity: Any = 1.0, sampling_rate: Any = 1.0) -> Any:
    """Any symmetric log-concave family from its density and tails (``PLD.from_density``)."""
    if not isinstance(noise, NoiseFamily):
        raise TypeError(f"noise must be a noise family from pydp_core.noise, not {type(noise).__name__}")
    shift, q = _noise_args(scale, sensitivity, sampling_rate)
    if q == 0.0:
        return identity_term()
    return _sided.density(noise, shift, q)
