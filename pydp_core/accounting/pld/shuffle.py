"""Shuffled batches: a certified lower bound from the max-coordinate test and a certified upper bound.

Shuffled DP-SGD (each epoch a random permutation cut into T batches, every record used once per epoch)
has no known tight upper bound. What is proved:

- lower bound (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha and Zhang 2024): for a record whose clipped
  gradient differs by one unit from all others, the releases of one epoch, in units of the noise, are
  P = MoG(2) against Q = MoG(1), MoG(m) = (1/T) sum_t N(m e_t, sigma^2 I_T). Any event E gives
  delta(eps) >= P(E) - e^eps Q(E); the cube complements E_C = {max_t x_t > C} have the closed forms
  P(max_t x_t <= C) = Phi((C - m) / sigma) Phi(C / sigma)^(T - 1). With the same permutation in every
  epoch the E epochs are one epoch at sigma / sqrt(E). With a new permutation per epoch, the statistic
  max_t x_t of each epoch is a post-processing: its PLD (slices of C, exact masses) composed E times
  gives a lower bound through the optimistic side of :class:`~.core.PLD`.
- upper bound: given the permutation, the record enters one batch per epoch, so the release is a Gaussian
  mechanism of sensitivity 1 per epoch, mu = sqrt(E) / sigma over E epochs; the shuffled release is a
  mixture over permutations of such releases with the same weights under both neighbours, and the
  hockey-stick divergence is jointly convex, so it is at most mu-GDP. No amplification is claimed: this is
  the only certified upper bound for shuffling we know of, and it is loose (docs/pld.md, "Shuffling").
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._validation import check_delta, check_epsilon, check_int, check_positive
from ...noise import Gaussian
from ._args import _scalar
from .interval import Interval
from .mechanisms import _Atoms

__all__ = ["shuffle_delta", "shuffle_epsilon", "shuffle_pld_lower"]

_GAUSS = Gaussian()
_U = 2.0 ** -53
# The two means of the lower-bound pair: the differing record's gradient against the others'.
_MEAN_P, _MEAN_Q = 2.0, 1.0


def _log_in_cube(caps: np.ndarray, sigma: float, steps: int, mean: float) -> np.ndarray:
    """log P(max_t x_t <= C) under MoG(mean) with T = ``steps`` (the component's coordinate and T - 1 others)."""
    a = np.asarray(_GAUSS.logcdf((caps - mean) / sigma), dtype=float)
    b = np.asarray(_GAUSS.logcdf(caps / sigma), dtype=float)
    result: np.ndarray = a + (steps - 1) * b
    return result


def _cube_lower(caps: np.ndarray, sigma: float, steps: int, eps: float) -> np.ndarray:
    """P(E_C) - e^eps Q(E_C) minus a bound on its rounding error: a certified lower bound at each cap."""
    out = []
    for mean in (_MEAN_P, _MEAN_Q):
        lg = _log_in_cube(caps, sigma, steps, mean)
        # |error of lg| <= 8u (|log Phi((C - m)/s)| + T |log Phi(C/s)|): the log-tails' few-ulp relative
        # errors, the product by T - 1 and the sum (|lg| bounds the first term).
        lg_err = 8.0 * _U * (np.abs(lg) + steps * np.abs(np.asarray(_GAUSS.logcdf(caps / sigma), dtype=float)))
        mass_out = -np.expm1(lg)
        err = lg_err * np.exp(lg) * np.exp(lg_err) + 2.0 * _U * mass_out
        out.append((mass_out, err))
    (p, ep), (q, eq) = out
    e = math.exp(eps)
    result: np.ndarray = p - e * q - (ep + e * eq) * (1.0 + 1e-9) - 4.0 * _U * (p + e * q)
    return result


def _single_epoch_lower(sigma: float, steps: int, eps: float, caps: Any) -> float:
    if caps is not None:
        c = np.asarray(caps, dtype=float).reshape(-1)
        if c.size == 0 or not np.all(np.isfinite(c)):
            raise ValueError("caps must be a non-empty sequence of finite numbers")
        return max(float(np.max(_cube_lower(c, sigma, steps, eps))), 0.0)
    # The best cap: a scan of [0, 2 + 12 sigma sqrt(log T + 1)], then golden-section refinement around the
    # best scan point (any cap gives a valid bound, so refining can only tighten it).
    top = 2.0 + 12.0 * sigma * math.sqrt(math.log(steps) + 1.0)
    grid = np.linspace(-2.0 * sigma, top, 4001)
    vals = _cube_lower(grid, sigma, steps, eps)
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    best = float(vals[i])
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo + (1 - g) * (hi - lo), lo + g * (hi - lo)
    fa, fb = (float(_cube_lower(np.array([x]), sigma, steps, eps)[0]) for x in (a, b))
    for _ in range(80):
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = lo + (1 - g) * (hi - lo)
            fa = float(_cube_lower(np.array([a]), sigma, steps, eps)[0])
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = float(_cube_lower(np.array([b]), sigma, steps, eps)[0])
        best = max(best, fa, fb)
    return max(best, 0.0)


def _check(sigma: Any, steps: Any, epochs: Any) -> tuple[Any, ...]:
    s = _scalar(sigma, "sigma", check_positive)
    t = check_int(steps, "steps", 1, 10**9)
    e = check_int(epochs, "epochs", 1, 10**9)
    return s, t, e


def shuffle_pld_lower(*, sigma: Any, steps: Any, value_step: float = 1e-3) -> Any:
    """The PLD of the max-coordinate statistic of one shuffled epoch (a post-processing of the release).

    Slices C_j < max_t x_t <= C_{j+1} with C_{j+1} - C_j = ``value_step`` sigma^2 (the loss moves by about
    ``value_step`` per slice), from a cap with P-mass below 1e-20 under it to one with P-mass below 1e-20
    above it (those two ends are atoms too, so nothing is dropped). Every slice is an atom with its exact P-
    and Q-masses (P lowered, Q raised by their rounding bounds). Its delta lower-bounds the shuffled
    mechanism's; only the lower end of the returned PLD's intervals is a bound for shuffling.
    """
    s, t, _ = _check(sigma, steps, 1)
    step = _scalar(value_step, "value_step", check_positive)
    tail = 1e-20
    # P(max <= lo) <= Phi(lo / s)^T  and  P(max > hi) <= T Phi_bar((hi - 2) / s).
    lo = s * float(_GAUSS.ppf(math.exp(math.log(tail) / t)))
    hi = _MEAN_P + s * float(-_GAUSS.ppf(tail / t))
    n = int(math.ceil((hi - lo) / (step * s * s)))
    if n > 1 << 22:
        raise ValueError("value_step is too small for this sigma and number of steps")
    caps = lo + np.arange(n + 1) * ((hi - lo) / n)
    masses = []
    for mean, lowered in ((_MEAN_P, True), (_MEAN_Q, False)):
        lg = _log_in_cube(caps, s, t, mean)
        lb = np.abs(np.asarray(_GAUSS.logcdf(caps / s), dtype=float))
        inside = np.exp(lg)
        err = inside * (8.0 * _U * (np.abs(lg) + t * lb)) * (1.0 + 1e-9) + 2.0 * _U * inside
        outside = -np.expm1(lg[-1])
        cells = np.concatenate(([inside[0]], np.diff(inside), [outside]))
        cell_err = np.concatenate(([err[0]], err[1:] + err[:-1] + 2.0 * _U * inside[1:], [err[-1] + 2.0 * _U * outside]))
        # P-masses lowered and Q-masses raised by their rounding bounds: every atom's loss and P-mass can
        # only go down, so the list's delta stays below the statistic's.
        masses.append(np.maximum(cells - cell_err, 0.0) if lowered else np.minimum(cells + cell_err, 1.0))
    p, q = masses
    keep = (p > 0.0) & (q > 0.0)
    loss = np.log(p[keep]) - np.log(q[keep])
    return _Atoms("shuffle_max_statistic", (loss, p[keep], q[keep], 0.0))


def shuffle_delta(epsilon: Any, *, sigma: Any, steps: Any, epochs: Any = 1, reshuffle: bool = True,
                  caps: Any = None) -> Interval:
    """Certified bounds on delta(epsilon) of DP-SGD with shuffled batches (lower: a witness; upper: no amplification).

    Parameters
    ----------
    epsilon : float
        epsilon >= 0.
    sigma : float
        The noise multiplier (noise standard deviation over the clipping norm), > 0.
    steps : int
        Batches per epoch T >= 1.
    epochs : int, optional
        Epochs E >= 1.
    reshuffle : bool, optional
        A new permutation per epoch (True) or the same one in every epoch (False).
    caps : array_like, optional
        The caps C of the cube tests to maximise over (single epoch or ``reshuffle=False``); None: a scan
        refined by golden section. ``numpy.arange(0, 100, 0.01)`` reproduces Chua et al.'s grid.

    Returns
    -------
    Interval
        ``lower``: max over the caps of P(E_C) - e^eps Q(E_C), rounded down (or, reshuffled over several
        epochs, the optimistic PLD bound of the composed max statistic); ``upper``: the certified upper
        bound of the Gaussian mechanism with mu = sqrt(E) / sigma.

    References
    ----------
    Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha and Zhang 2024.

    Examples
    --------
    >>> iv = shuffle_delta(1.0, sigma=0.8, steps=100)
    >>> bool(0.0 < iv.lower < iv.upper)
    True
    """
    from .core import PLD

    eps = _scalar(epsilon, "epsilon", check_epsilon)
    s, t, e = _check(sigma, steps, epochs)
    if not isinstance(reshuffle, bool):
        raise TypeError(f"reshuffle must be a bool, not {type(reshuffle).__name__}")
    upper = PLD.from_gdp(math.sqrt(e) / s).delta(eps).upper
    if e == 1 or not reshuffle:
        lower = _single_epoch_lower(s / math.sqrt(e), t, eps, caps)
    else:
        lower = PLD([(shuffle_pld_lower(sigma=s, steps=t), e)]).delta(eps).lower
    return Interval(min(lower, upper), upper)


def shuffle_epsilon(delta: Any, *, sigma: Any, steps: Any, epochs: Any = 1, reshuffle: bool = True) -> Interval:
    """Certified bounds on the smallest epsilon with delta(epsilon) <= ``delta`` for shuffled batches.

    The lower end is the largest epsilon at which the lower delta of :func:`shuffle_delta` still exceeds
    ``delta`` (bisection, rounded down); the upper end is the Gaussian mechanism's at mu = sqrt(E) / sigma.
    """
    from .core import PLD

    dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False))
    s, t, e = _check(sigma, steps, epochs)
    upper = PLD.from_gdp(math.sqrt(e) / s).epsilon(dl).upper

    def above(x: float) -> bool:
        result: bool = shuffle_delta(x, sigma=s, steps=t, epochs=e, reshuffle=reshuffle).lower > dl
        return result

    if not above(0.0):
        return Interval(0.0, upper)
    lo, hi = 0.0, upper
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
        if hi - lo <= 1e-9 * max(1.0, hi):
            break
    return Interval(lo, upper)
