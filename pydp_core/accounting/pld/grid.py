"""The discretisation policy of a PLD: the loss grid step, the truncated mass and the screening grid.

The automatic step is 0.006 steps^-0.45 (at most 0.005), scaled down for a composed loss narrower than
a DP-SGD-like one, with 2^8 to 2^21 points across the composed loss window (``PLD.value_step`` states
the rule in full); a Laplace's largest loss is put just above a grid point so that its atom fills a cell
alone (docs/pld.md, "Atoms on the grid"). Queries first bound the neighbour orders on a grid ``_SCREEN``
times coarser (``PLD._combine``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._core import accounting as _acc
from ..._core import noise as _noise_core
from .mechanisms import _Noise

# Default truncation: mass beyond the composed window (Chernoff-bounded) and per-mechanism tails.
_TAIL_MASS = 1e-15

# Queries first bound both neighbour orders on a grid this many times coarser (a fraction of the cost),
# and compute on the requested grid only the orders that can attain the maximum there (PLD._combine).
_SCREEN = 8
# No screening once the screening grid would be coarser than this (the fine grid is cheap there anyway).
_SCREEN_MAX_STEP = 2e-3

# The grids the automatic step uses to look at the losses: at least this many times coarser than the
# kernels' limit of 2^25 points per discretisation, so that each fits with room to spare.
_PROBE_POINTS = 2**21


def _below_atom(h: float, terms: Sequence[tuple[Any, ...]], *, given: bool = False) -> float:
    """The largest step <= h with a grid point a relative 2^-46 below the Laplace's largest loss, or h.

    Under add/remove neighbours the Laplace's remove order has its largest loss l = log(1 - q + q e^d)
    (d the shift) as an atom: the P-mass of the outputs beyond the shift. A grid point just below l puts
    the atom alone in the cell above it (docs/pld.md, "Atoms on the grid"). Computed as the engine
    computes l; only one value of l in a composition can be aligned, so with several none is. A step
    the user gave (``given``) is only lowered when l >= h, by less than a factor n / (n + 1) with
    n >= 1 grid steps below l; for l < h aligning would replace it by l itself, so it is kept.
    """
    tops = set()
    for mech, _ in terms:
        if isinstance(mech, _Noise) and mech.relation == "add_remove" and \
                mech.family.kernel.kind == _noise_core.Kind.Laplace:
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
    if given and target < h:
        return h
    if not (math.isfinite(target) and target > 0.0 and target / h < 2.0**40):
        return h
    return target / math.ceil(target / h)


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
        # A point mass (all but rounding-level mass in one cell, as for the identity) has nothing to refine.
        if not 0.0 < sd < 8.0 * grid or float(p.max()) >= total * (1.0 - 1e-9):
            break
        # A loss concentrated far inside a wide range (an atom of mass e^-30 at the other end) keeps the
        # refined grid within _PROBE_POINTS points across that range; its spread is then an upper bound.
        finer = max(sd / 16.0, p.size * grid / _PROBE_POINTS)
        if not finer < grid:
            break
        grid = finer
        part = mech.discretise(True, grid, tail)
    return sd


def _probe(terms: Sequence[tuple[Any, ...]], tail: float) -> tuple[Any, ...]:
    """The terms discretised on the first grid of 1e-2 * 16^j (j >= 0) that the kernels accept, and its step.

    A loss range wider than 1e-2 * 2^25 (sensitivity / scale of about 10^3 for a Gaussian) needs a coarser
    look; a range that no double-precision grid covers is reported as the mechanism's parameters.
    """
    coarse = 1e-2
    while True:
        try:
            return [m.discretise(True, coarse, tail) for m, _ in terms], coarse
        except ValueError as exc:
            too_fine = "value_step is too small" in str(exc)
            if not (too_fine or "max_size" in str(exc)):
                raise
            if not too_fine or coarse > 1e290:
                raise ValueError("the privacy losses of this mechanism span a range that no loss grid covers "
                                 "(sensitivity / scale is too large): use a larger noise scale") from exc
            coarse *= 16.0


def _automatic_step(terms: Sequence[tuple[Any, ...]], tail_mass: float) -> float:
    """The automatic grid step of the composition ``terms`` ((mechanism, count) pairs), before
    :func:`_below_atom`."""
    steps: int = sum(c for _, c in terms)
    h = min(5e-3, 6e-3 * steps ** -0.45)
    tail = tail_mass / steps
    parts, coarse = _probe(terms, tail)
    lo, hi = _acc.pld_window(parts, [c for _, c in terms], coarse, tail_mass)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):  # no finite loss mass (all at +inf)
        return float(h)
    var = sum(c * _loss_std(m, part, coarse, tail) ** 2 for (m, c), part in zip(terms, parts))
    if var > 0.0:  # the count-based step assumes a composed loss of spread >= 1/2; scale it below that
        h *= min(1.0, 2.0 * math.sqrt(var))
    # At least 2^8 points across the window, at most 2^21.
    result: float = max(min(h, (hi - lo) / 2**8), (hi - lo) / 2**21)
    return result
