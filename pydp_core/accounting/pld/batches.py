"""Training batches of fixed size, truncated Poisson batches, and balls-in-bins: their dominating pairs.

Every constructor here reduces a batch sampler to pairs the engine already discretises (``docs/pld.md``,
"Training batch samplers"); f is the unit noise density, d = sensitivity / scale, each record's
contribution has norm <= sensitivity.

- **Fixed-size batches without replacement** (b of n records): under add/remove and under substitution
  the worst pair is the Poisson pair at rate q = b / n with shift 2d, (1 - q) f + q f(. - 2d) vs f, and
  its reverse. Upper bound: when the differing record z is in the batch it displaces one other record y,
  so the batch sum moves by z - y (norm <= 2 sensitivity); writing both outputs as the same mixture
  over the rest of the batch and over y, joint convexity of the hockey-stick divergence leaves the
  Poisson pair at shift |z - y| / scale (Balle, Barthe and Gaboardi 2018; Zhu, Dong and Wang 2022).
  Attained: every other record at -z gives exactly that pair. So both ends are certified and tight.
- **Truncated Poisson** (rate q from n records, a batch larger than B cut to a uniform B-subset;
  Ganesh 2025): with K ~ Bin(n - 1, q) the number of other records sampled, revealing whether K >= B
  gives, with probability 1 - tau (tau = P(K >= B)), the Poisson pair (q, d), and with probability tau
  a fixed-size batch of B records that holds z with probability r = q E[B / (K + 1) | K >= B]
  (= B P(Bin(n, q) > B) / (n tau)): the pair (r, 2d) above. The disjoint mixture of the two pairs is the
  upper end. Lower end: every other record at 0 gives exactly the Poisson pair at rate
  q E[min(1, B / (K + 1))] and shift d. With B >= n the two coincide with Poisson sampling.
- **Balls-in-bins** (each record put in one of T bins uniformly, the bins used in turn, the same bin in
  every epoch; Chua et al. 2024): the record takes part in one step of each of the T-step cycles, always
  at the same position, so over E epochs the Gaussian release is random allocation with one
  participation in T steps at sensitivity sqrt(E) sensitivity (the E outputs of its bin are summed
  without loss: a sufficient statistic); with new bins every epoch it is E independent such passes at
  the plain sensitivity. Certified on both sides by :meth:`PLD.random_allocation`.
- **b-min-separation** (a record not used in the last b - 1 steps joins with probability p; Dong and
  Ganesh 2026), Gaussian noise: certified but not tight. Upper end: given the record's participation
  pattern (the sampler's randomness, the same law under both neighbours), at most ceil(T / b) steps
  hold it, so the pass is at most ceil(T / b) composed Gaussian mechanisms, GDP(sqrt(ceil(T / b)) d),
  and joint convexity over the patterns keeps that bound. Lower end: the dataset whose other records
  contribute 0 and whose record contributes a fixed unit vector, seen through the sum of the T outputs
  (a post-processing): N(M d, T) against N(0, T) with M the number of participations, the mixture of
  Gaussians with the exact law of M (a dynamic programme over the sampler's Markov chain).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core import accounting as _acc
from ..._validation import check_choice, check_int, check_positive, check_probability
from ...noise import Gaussian
from ._args import _count, _scalar
from .mechanisms import _Noise, identity_term, noise_term

__all__ = ["fixed_size_term", "truncated_poisson_term", "balls_in_bins_terms", "truncation_weights",
           "min_sep_terms", "min_sep_participations"]

_U = 2.0 ** -53
# Relative error allowed for the binomial tails (scipy's regularised incomplete beta is accurate to a few
# ulps; the weights are widened by this much on each side).
_WEIGHT_RTOL = 1e-9


def fixed_size_term(noise: Any, *, scale: Any, batch_size: Any, dataset_size: Any, sensitivity: Any,
                    neighbours: str, replacement: Any = False) -> Any:
    """A batch of ``batch_size`` records drawn from ``dataset_size``, without replacement or with it
    (``PLD.fixed_size``)."""
    neighbours = check_choice(neighbours, "neighbours", ("add_remove", "substitution"))
    n = check_int(dataset_size, "dataset_size", 1)
    b = check_int(batch_size, "batch_size", 1)
    if not isinstance(replacement, bool):
        raise TypeError(f"replacement must be a bool, not {type(replacement).__name__}")
    if replacement:
        if neighbours != "substitution":
            raise ValueError("replacement=True needs neighbours='substitution': with replacement the draws' "
                             "law changes with the dataset's size")
        if not isinstance(noise, Gaussian):
            raise TypeError("noise must be Gaussian() for batches drawn with replacement")
        s = _scalar(scale, "scale", check_positive)
        d = _scalar(sensitivity, "sensitivity", check_positive) / s
        if not (math.isfinite(d) and d > 0.0):
            raise ValueError("sensitivity / scale must be finite and > 0")
        return _WithReplacement(d, b, n)
    if b > n:
        raise ValueError(f"batch_size must be <= dataset_size, got batch_size={b} > dataset_size={n}")
    if neighbours == "add_remove" and b == n:
        raise ValueError("batch_size must be < dataset_size under add/remove neighbours: the neighbour without "
                         "the record has fewer than batch_size records")
    s = _scalar(scale, "scale", check_positive)
    sens = _scalar(sensitivity, "sensitivity", check_positive)
    # The displaced record moves the batch by up to twice a record's norm.
    return noise_term(noise, scale=s, sensitivity=2.0 * sens, sampling_rate=b / n, sampling="poisson",
                      neighbours="add_remove")


def truncation_weights(q: float, n: int, cap: int) -> tuple[Any, ...]:
    """(tau, r, q_eff) of truncated Poisson: tau = P(K >= cap), r the rate of the record in a truncated batch
    (0 if tau = 0) and q_eff = q E[min(1, cap / (K + 1))], K ~ Bin(n - 1, q)."""
    from scipy.stats import binom

    if cap >= n or q == 0.0:
        return 0.0, 0.0, q
    tau = float(binom.sf(cap - 1, n - 1, q))
    kept = cap / n * float(binom.sf(cap, n, q))  # q E[cap / (K + 1); K >= cap]
    r = min(kept / tau, 1.0) if tau > 0.0 else 0.0
    return tau, r, q * float(binom.cdf(cap - 1, n - 1, q)) + kept


class _TruncatedPoisson:
    """The disjoint mixture (1 - tau) [Poisson pair (q, d)] + tau [Poisson pair (r, 2d)] (pessimistic side)
    with the Poisson pair (q_eff, d) as the optimistic side."""

    symmetric = False

    def __init__(self, family: Any, shift: float, q: float, n: int, cap: int) -> None:
        tau, r, q_eff = truncation_weights(q, n, cap)
        self.family, self.shift, self.q, self.n, self.cap = family, shift, q, n, cap
        self.tau_lo, self.tau_hi = tau * (1.0 - _WEIGHT_RTOL), min(tau * (1.0 + _WEIGHT_RTOL), 1.0)
        # A larger rate gives a dominating Poisson pair, a smaller one a dominated pair.
        self.plain = _Noise(family, shift, q)
        self.truncated = _Noise(family, 2.0 * shift, min(r * (1.0 + _WEIGHT_RTOL), 1.0))
        self.lower = _Noise(family, shift, q_eff * (1.0 - _WEIGHT_RTOL))

    def key(self) -> tuple[Any, ...]:
        return ("truncated_poisson", self.family.identity, self.shift, self.q, self.n, self.cap)

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        a = self.plain.discretise(remove, h, tail, composed)
        b = self.truncated.discretise(remove, h, tail, composed)
        lo = self.lower.discretise(remove, h, tail, composed)
        pess = _mix_pessimistic([a, b], [1.0 - self.tau_hi, self.tau_lo], self.tau_hi - self.tau_lo, h)
        return _acc.pld_sides(pess, lo)


def _mix_pessimistic(parts: list[Any], weights: list[Any], spare: float, h: float) -> Any:
    """The pessimistic side sum_j weights[j] parts[j] (+ ``spare`` and the rounding at +inf) on step h.

    The parts' atoms sit on the grid points (offset + i) h; the mixture's are re-placed there by
    ``pld_atoms`` (each P-mass with Q-mass P e^{-loss}, so every atom keeps its loss). Mass that the
    floating-point sums may lose (at most 2 ulps per part of the total) and the uncertainty of the weights
    go to +inf: raising a loss only raises delta.
    """
    lo = min(x.pess_offset for x in parts)
    pmfs = [np.asarray(x.pess_pmf, dtype=float) for x in parts]
    p = np.zeros(max(x.pess_offset + pm.size for x, pm in zip(parts, pmfs)) - lo)
    inf = 0.0
    for x, pm, w in zip(parts, pmfs, weights):
        p[x.pess_offset - lo:x.pess_offset - lo + pm.size] += w * pm
        inf += w * x.pess_inf
    inf = min(inf + spare + 2.0 * (len(parts) + 1) * _U * (float(p.sum()) + inf) + 1e-300, 1.0)
    keep = p > 0.0
    loss = (lo + np.flatnonzero(keep)) * h
    pk = np.minimum(p[keep], 1.0)
    with np.errstate(over="ignore"):
        qk = np.minimum(pk * np.exp(-loss), 1.0)
    return _acc.pld_atoms(loss, pk, qk, inf, h)


class _WithReplacement:
    """Fixed-size batches drawn with replacement, substitution: pessimistic side the disjoint mixture over the
    record's draw count m of the Gaussian pairs at shift 2 m d; optimistic side the mixture of Gaussians
    sum_m w_m N(2 m d) vs N(0) that a dataset attains."""

    symmetric = True

    def __init__(self, d: float, b: int, n: int) -> None:
        from scipy.stats import binom

        from .mixture import mixture_term

        self.d, self.b, self.n = d, b, n
        m = np.arange(b + 1)
        w = binom.pmf(m, b, 1.0 / n)
        keep = (w > 1e-30) | (m == 0)
        self.counts, self.w = m[keep], w[keep]
        self.beyond = float(binom.sf(int(self.counts.max()), b, 1.0 / n))  # draw counts left out (at +inf)
        self.parts = [identity_term() if c == 0 else _Noise(Gaussian(), 2.0 * c * d, 1.0) for c in self.counts]
        lw = self.w * (1.0 - _WEIGHT_RTOL)
        self.lower = mixture_term(sigma=1.0, sensitivities=np.append(2.0 * self.counts * d, 0.0),
                                  probabilities=np.append(lw, max(1.0 - float(lw.sum()), 0.0)))

    def key(self) -> tuple[Any, ...]:
        return ("fixed_size_with_replacement", self.d, self.b, self.n)

    def discretise(self, remove: bool, h: float, tail: float, composed: bool = True) -> Any:
        parts = [x.discretise(True, h, tail, composed) for x in self.parts]
        pess = _mix_pessimistic(parts, list(self.w * (1.0 + _WEIGHT_RTOL)), self.beyond * (1.0 + _WEIGHT_RTOL), h)
        return _acc.pld_sides(pess, self.lower.discretise(True, h, tail, composed))


def truncated_poisson_term(noise: Any, *, scale: Any, sampling_rate: Any, dataset_size: Any, max_batch_size: Any,
                           sensitivity: Any) -> Any:
    """Poisson sampling at ``sampling_rate`` cut to ``max_batch_size`` records (``PLD.truncated_poisson``)."""
    n = check_int(dataset_size, "dataset_size", 1)
    cap = check_int(max_batch_size, "max_batch_size", 1)
    q = _scalar(sampling_rate, "sampling_rate", check_probability)
    base = noise_term(noise, scale=scale, sensitivity=sensitivity, sampling_rate=q, sampling="poisson",
                      neighbours="add_remove")
    if cap >= n or q == 0.0:
        return base
    if not isinstance(base, _Noise):
        raise TypeError("truncated Poisson batches take Gaussian(), Laplace(), Logistic() or Subbotin(r) noise")
    return _TruncatedPoisson(base.family, base.shift, q, n, cap)


def balls_in_bins_terms(noise: Any, *, scale: Any, bins: Any, epochs: Any, sensitivity: Any, reassign: Any) -> list[Any]:
    """Balls-in-bins batches over ``epochs`` cycles of ``bins`` steps (``PLD.balls_in_bins``)."""
    from .allocation import allocation_terms

    if not isinstance(noise, Gaussian):
        raise TypeError("noise must be Gaussian(): balls-in-bins reduces to random allocation for the Gaussian")
    t = _count(bins, "bins")
    e = _count(epochs, "epochs")
    sens = _scalar(sensitivity, "sensitivity", check_positive)
    if not isinstance(reassign, bool):
        raise TypeError(f"reassign must be a bool, not {type(reassign).__name__}")
    if reassign:  # new bins every epoch: independent passes
        return [(m, c * e) for m, c in allocation_terms(noise, scale=scale, steps=t, participations=1,
                                                         sensitivity=sens)]
    return allocation_terms(noise, scale=scale, steps=t, participations=1, sensitivity=sens * math.sqrt(e))


def min_sep_participations(steps: int, separation: int, p: float, warm_start: bool) -> np.ndarray:
    """The law of the number M of steps that hold a record under b-min-separation sampling over ``steps`` steps.

    The sampler's state is the number of steps the record still waits (0: eligible; after a participation
    it waits b - 1 steps). Pure start: eligible. Warm start: the chain's stationary law, P(wait j) =
    p P(eligible) for j = 1..b-1 (every step then has the same expected batch size).
    """
    b = separation
    state = np.zeros((b, steps + 1))  # state[j, m]: P(wait j, m participations so far)
    if warm_start and b > 1:
        e0 = 1.0 / (1.0 + (b - 1) * p)
        state[0, 0] = e0
        state[1:, 0] = p * e0
    else:
        state[0, 0] = 1.0
    for _ in range(steps):
        nxt = np.zeros_like(state)
        joined = p * state[0, :-1]
        nxt[0] += (1.0 - p) * state[0]
        if b > 1:
            nxt[b - 1, 1:] += joined
            nxt[:-1] += state[1:]
        else:
            nxt[0, 1:] += joined
        state = nxt
    out: np.ndarray = state.sum(axis=0)
    return out


def min_sep_terms(noise: Any, *, scale: Any, steps: Any, separation: Any, sampling_rate: Any, warm_start: Any,
                  sensitivity: Any) -> list[Any]:
    """One pass of b-min-separation sampling (``PLD.b_min_sep``): pessimistic GDP bound, optimistic sum statistic."""
    from .allocation import _OneSide
    from .mechanisms import gdp_term
    from .mixture import mixture_term

    if not isinstance(noise, Gaussian):
        raise TypeError("noise must be Gaussian(): b-min-separation is bounded for the Gaussian mechanism")
    s = _scalar(scale, "scale", check_positive)
    sens = _scalar(sensitivity, "sensitivity", check_positive)
    t = check_int(steps, "steps", 1, 10**5)
    b = check_int(separation, "separation", 1)
    p = _scalar(sampling_rate, "sampling_rate", check_probability)
    if not isinstance(warm_start, bool):
        raise TypeError(f"warm_start must be a bool, not {type(warm_start).__name__}")
    d = sens / s
    if not (math.isfinite(d) and d > 0.0):
        raise ValueError("sensitivity / scale must be finite and > 0")
    if p == 0.0:
        return [(identity_term(), 1)]
    law = min_sep_participations(t, b, p, warm_start)
    m = np.flatnonzero(law > 0.0)
    # The mixture's probabilities are the DP's (rounding ~1e-16 relative): lowered by 1e-12 and the rest put
    # on sensitivity 0, which can only lower the optimistic side.
    probs = law[m] * (1.0 - 1e-12)
    sens_m = m * d / math.sqrt(t)
    lower = mixture_term(sigma=1.0, sensitivities=np.append(sens_m, 0.0),
                         probabilities=np.append(probs, max(1.0 - float(probs.sum()), 0.0)))
    upper = gdp_term(math.sqrt(-(-t // b)) * d)
    return [(_OneSide(upper, True), 1), (_OneSide(lower, False), 1)]


#: The samplers :func:`calibrate_sampler` calibrates: the PLD constructors of one step or one pass.
SAMPLER_CONSTRUCTORS = ("fixed_size", "truncated_poisson", "balls_in_bins", "b_min_sep", "random_allocation")


def calibrate_sampler(cls: Any, sampler: Any, noise: Any, *, epsilon: Any, delta: Any, count: Any = 1,
                      rtol: float = 1e-3, certificate: bool = False, **parameters: Any) -> Any:
    """``PLD.calibrate_sampler`` (see there): the smallest scale of ``cls.<sampler>(noise, scale=s, **parameters)``
    composed ``count`` times whose certified upper delta(epsilon) meets ``delta``."""
    from ..._validation import check_delta
    from .calibration import _calibrate_scale, _calibration_start
    from .grid import _TAIL_MASS

    kind = check_choice(sampler, "sampler", SAMPLER_CONSTRUCTORS)
    if "scale" in parameters:
        raise TypeError("scale is what calibrate_sampler finds: do not pass it")
    e = _scalar(epsilon, "epsilon", check_positive)
    dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False, allow_one=False))
    k = _count(count, "count")
    if not 0.0 < rtol < 0.5:
        raise ValueError(f"rtol must lie in (0, 0.5), got {rtol}")
    make = getattr(cls, kind)
    make(noise, scale=1.0, **parameters)  # checks the sampler's arguments once, before the search
    tail = min(_TAIL_MASS, dl * 1e-3)

    def build(s: float, h: float | None) -> Any:
        return make(noise, scale=s, **parameters).self_compose(k).with_discretization(value_step=h, tail_mass=tail)

    sens = float(parameters.get("sensitivity", 1.0))
    found = _calibrate_scale(build, epsilon=e, delta=dl, start=_calibration_start(sens, k, 1.0, e), rtol=rtol / 4.0,
                             width=rtol)
    return found if certificate else found.scale
