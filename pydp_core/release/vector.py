"""Vector queries released with iid lattice noise, calibrated through the PLD of the product law.

The query q has m coordinates and neighbouring values differ by a vector d with ``||d|| <= sensitivity``
in the l_inf, l_1 or l_2 norm (the mean of n records in a box of width W: l_inf, ``W / n``; Vinterbo
2022, Section 4.1). Each coordinate is rounded to the grid and gets independent noise from the exact
integer table of :mod:`.lattice`; ``releases`` such vectors (k releases of the query) share one total
(epsilon, delta). The rounded shift vector j has every coordinate at most ``k = floor(D) + 1`` grid
steps (Lemma 1, D the sensitivity in grid steps), and for l_1 and l_2 its sorted coordinates obey
``|j|_(i) <= 1 + D / i`` resp. ``1 + D / sqrt(i)``; a larger shift in any coordinate is never better for
privacy (docs/release.md, section 5, Lemmas 5 and 6), so the mechanism is (epsilon, delta)-DP when the
PLD of the product of table laws at the dominating shift (:func:`ball_shifts`: the corner
``(k, ..., k)`` for l_inf, the sorted envelope for l_1 and l_2), composed over the ``releases`` vectors,
has delta(epsilon) <= delta. That PLD is certified
(:meth:`pydp_core.accounting.pld.PLD.from_integer_weights`), and the calibration picks the smallest
integer table scale whose certified upper bound meets the target.
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._arrays import accepts_arrays
from .._safety import check_release_delta, check_release_rng
from .._validation import as_float_array, check_choice, check_int
from ..accounting.pld import PLD
from ..accounting.pld.box import calibrate_box
from .lattice import (
    STABLE_TV_BOUND,
    LatticeRelease,
    _check_lattice,
    _lattice_grid,
    _on_automatic_grid,
    _smallest_passing,
)
from .plans import _DELTA_MARGIN, _grid_shift, _release

NORMS = ("linf", "l1", "l2")
#: ball_shifts keeps the largest _EXACT_LEADING coordinate bounds exact and rounds the others up to a
#: ladder of _LADDER_STEPS values an octave (and every integer up to _LADDER_SMALL).
_EXACT_LEADING = 8
_LADDER_STEPS = 8
_LADDER_SMALL = 16


def _table_family(noise: Any) -> tuple[str, float]:
    """(table kind, order) of a unit-scale family: the Laplace is Subbotin_1, the Gaussian Subbotin_2."""
    r = getattr(noise, "subbotin_order", None)
    if r is not None:
        return "subbotin", float(r)
    if getattr(noise, "spec_name", None) == "logistic":
        return "logistic", 1.0
    raise TypeError(f"noise must be Subbotin(r), Laplace(), Gaussian() or Logistic(), not {noise!r}")


def table_std(weights: np.ndarray) -> float:
    """The standard deviation (grid steps) of the law W(|y|) / T of a table's weights (a figure, in
    floating point)."""
    w = weights.astype(np.float64)
    y = np.arange(w.size, dtype=np.float64)
    total = w[0] + 2.0 * float(np.sum(w[1:]))
    return math.sqrt(2.0 * float(np.sum(w * y * y)) / total)


@dataclass(frozen=True)
class LatticeVectorRelease(LatticeRelease):
    """A calibrated lattice release of ``releases`` vectors of ``dimension`` coordinates under one budget.

    A :class:`LatticeRelease` (same fields; ``dimension`` is m) with:

    Parameters
    ----------
    norm : {"linf", "l1", "l2"}
        The norm of ``sensitivity``.
    releases : int
        k: the plan's (epsilon, delta) covers k vectors in total (one call with an array of shape
        (k, m), or k calls with m values; the plan does not count the calls).
    value_step : float
        The loss grid step of the PLD certificate.
    delta_lower : float
        The certified lower bound of the exact delta(epsilon) of the product law at the plan
        (``delta_achieved`` is the upper bound).
    shifts : tuple of (int, int)
        The dominating integer shift of one vector, as (grid steps, number of coordinates) pairs
        (:func:`ball_shifts`); ``shift`` is its largest entry.

    Examples
    --------
    >>> from pydp_core import release
    >>> from pydp_core.noise import Subbotin
    >>> plan = release.calibrate_vector_release(Subbotin(1.5), epsilon=1.0, delta=1e-6, sensitivity=1 / 500,
    ...                                         dimension=5, releases=2)
    >>> plan.steps, plan.delta_achieved <= 1e-6, plan.delta_lower <= plan.delta_achieved
    (10, True, True)
    """

    norm: str = "linf"
    releases: int = 1
    value_step: float = 0.0
    delta_lower: float = 0.0
    shifts: tuple[tuple[int, int], ...] = ()

    @property
    def steps(self) -> int:
        """N = dimension * releases: the number of composed one-coordinate laws."""
        return self.dimension * self.releases

    @property
    def noise_std(self) -> float:
        """The standard deviation of each coordinate's noise in data units (from the table's integers)."""
        return table_std(self.table.weights()) * self.grid

    def pld(self) -> PLD:
        """The certificate: the PLD of the product of table laws at ``shifts``, for ``releases`` vectors."""
        return _product_pld(self.table, self.shifts, self.releases, self.value_step)

    def _vector_sizes(self) -> tuple[int, ...]:
        return (self.dimension, self.dimension * self.releases)


def ball_shifts(norm: str, sensitivity: float, grid_exponent: int, dimension: int) -> tuple[tuple[int, int], ...]:
    """The dominating shift of the rounded sensitivity ball, as (grid steps, number of coordinates) pairs.

    With ``D = sensitivity / 2**grid_exponent`` and ``K`` the charged one-coordinate shift (Lemma 1), every
    integer shift vector j that the rounding can produce has, sorted by decreasing ``|j_i|``,
    ``|j|_(i) <= min(K, 1 + floor(D / i))`` (l_1) or ``min(K, 1 + floor(D / sqrt(i)))`` (l_2), and
    ``|j_i| <= K`` (l_inf); docs/release.md, section 5, Lemma 6. The first ``_EXACT_LEADING`` bounds are
    kept as they are, the others rounded up to a geometric ladder of ``_LADDER_STEPS`` values an octave
    (fewer distinct one-coordinate laws for the certificate; rounding up only enlarges the shift).

    Parameters
    ----------
    norm : {"linf", "l1", "l2"}
        The norm of the sensitivity.
    sensitivity : float
        The radius of the sensitivity ball in data units (> 0).
    grid_exponent : int
        e, the grid ``g = 2**e``.
    dimension : int
        m >= 1, the number of coordinates.

    Returns
    -------
    tuple of (int, int)
        (shift, count) pairs, shifts decreasing, counts summing to m.

    Raises
    ------
    TypeError
        If ``dimension`` is not an integer.
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> from pydp_core import release
    >>> release.ball_shifts("l1", 3.5, 0, 3), release.ball_shifts("linf", 3.5, 0, 3)
    (((4, 1), (2, 2)), ((4, 3),))
    """
    nm = check_choice(norm, "norm", NORMS)
    m = check_int(dimension, "dimension", 1, 2**20)
    if not (isinstance(sensitivity, (int, float)) and math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    norm, dimension = nm, m
    k = _grid_shift(sensitivity, grid_exponent)
    if norm == "linf":
        return ((k, dimension),)
    d = Fraction(sensitivity) / Fraction(2) ** grid_exponent  # exact: a power-of-two scaling
    p, q = d.numerator, d.denominator
    ladder = sorted({min(k, math.ceil(k * 2.0 ** (-t / _LADDER_STEPS))) for t in range(_LADDER_STEPS * 64)}
                    | set(range(1, min(k, _LADDER_SMALL) + 1)))
    counts: dict[int, int] = {}
    i = 1
    while i <= dimension:
        if norm == "l1":  # a = floor(D / i), constant up to i_end
            a = p // (q * i)
            i_end = dimension if a == 0 else min(dimension, p // (q * a))
        else:  # a = floor(D / sqrt(i)) = isqrt(floor(D**2 / i))
            a = math.isqrt(p * p // (q * q * i))
            i_end = dimension if a == 0 else min(dimension, p * p // (q * q * a * a))
        v = min(k, 1 + a)
        if i > _EXACT_LEADING:
            v = ladder[bisect.bisect_left(ladder, v)]
        n = i_end - i + 1 if i > _EXACT_LEADING else 1
        counts[v] = counts.get(v, 0) + n
        i += n
    return tuple(sorted(counts.items(), reverse=True))


def _shift_norm(shifts: Sequence[tuple[int, int]], p: float) -> float:
    """The l_p norm of the shift vector given as (shift, count) pairs."""
    return float(float(sum(c * float(j) ** p for j, c in shifts)) ** (1.0 / p))


def _product_pld(table: Any, shifts: Sequence[tuple[int, int]], releases: int, value_step: float) -> PLD:
    """The PLD of the product of table laws at the shift vector ``shifts`` (per vector), ``releases`` times."""
    w = table.weights()
    pld: PLD | None = None
    for j, c in shifts:
        term = PLD.from_integer_weights(w, shift=j).self_compose(c * releases)
        pld = term if pld is None else pld.compose(term)
    assert pld is not None
    return pld.with_discretization(value_step=value_step)


def _stable_charge(eps: float, steps: int) -> float:
    """The timing-stable mode's total-variation charge for ``steps`` values: (1 + e^eps) steps 2**-129."""
    return math.inf if eps > 700 else (1.0 + math.exp(eps)) * steps * STABLE_TV_BOUND


def _search(mechanism: str, r: float, eps: float, dl: float, sens: float, e: int, shifts: Sequence[tuple[int, int]],
            norm: str, k: int, timing_stable: bool, start: int, h: float) -> LatticeVectorRelease:
    """The smallest table scale on the grid 2**e whose certificate at the dominating shift meets delta."""
    shifts = tuple((int(j), int(c)) for j, c in shifts)
    m = sum(c for _, c in shifts)
    steps = m * k
    target = dl * (1.0 - _DELTA_MARGIN)
    charge = _stable_charge(eps, steps) if timing_stable else 0.0

    def excess(table: Any) -> float:
        up = float(_product_pld(table, shifts, k, h).delta(eps).upper) + charge
        return math.inf if up >= 1.0 else up - target

    s, (table, bits) = _smallest_passing(mechanism, r, start, excess)
    iv = _product_pld(table, shifts, k, h).delta(eps)
    plan = LatticeVectorRelease(mechanism, eps, dl, sens, e, max(j for j, _ in shifts), Fraction(s),
                                float(iv.upper) + charge, m, r if mechanism == "subbotin" else None, bits,
                                bool(timing_stable), norm, k, h, float(iv.lower), shifts)
    plan.__dict__["table"] = table
    return plan


def calibrate_vector_release(
    noise: Any,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    dimension: int,
    norm: str = "linf",
    releases: int = 1,
    grid_bits: int | None = None,
    timing_stable: bool = False,
) -> LatticeVectorRelease:
    """The verified smallest lattice release of a vector query with iid noise of ``noise``'s shape.

    A continuous calibration (:func:`pydp_core.calibration.calibrate_box`: for l_inf the corner of the
    box, N = m k; for l_1 and l_2 one coordinate with the l_p norm of the dominating shift, a start value
    only) gives the start scale and the loss grid; the grid on the data is that of
    :func:`calibrate_subbotin_release` for that scale; then the smallest integer table scale ``s`` whose
    certified upper delta(epsilon) of the product law at the dominating shift of the rounded
    sensitivity ball (:func:`ball_shifts`) meets delta is found, and ``s - 1`` is checked to fail
    (docs/release.md, section 5).

    Parameters
    ----------
    noise : Subbotin, Laplace, Gaussian or Logistic
        The shape of every coordinate's noise (the Laplace is Subbotin(1), the Gaussian Subbotin(2), both
        through the table law).
    epsilon : float
        epsilon > 0, finite: the total over the ``releases`` vectors.
    delta : float
        delta in (0, 1): the total.
    sensitivity : float, optional
        The bound on ``||q(x) - q(x')||`` in ``norm`` (> 0, default 1).
    dimension : int
        m >= 1, the number of coordinates.
    norm : {"linf", "l1", "l2"}, optional
        The sensitivity's norm. For l_inf the certificate is the product at the corner of the box, which
        the rounding can reach. For l_1 and l_2 it is the product at the sorted envelope of the ball
        (the i-th largest coordinate shift at most ``1 + D / i``, resp. ``1 + D / sqrt(i)``, D the
        sensitivity in grid steps): an upper bound over every shift of the ball, which the rounding
        need not reach (docs/release.md, section 5, Lemma 6).
    releases : int, optional
        k >= 1: the number of vectors the budget covers.
    grid_bits : int or None, optional
        As in :func:`calibrate_subbotin_release` (None: 16, or for l_inf a coarser grid where the table's
        range binds).
    timing_stable : bool, optional
        As in :func:`calibrate_subbotin_release` (with the automatic grid, the finest one whose table has
        at most ``STABLE_TABLE_ENTRIES`` entries); the charge ``(1 + e^eps) N 2**-129`` is added to delta.

    Returns
    -------
    LatticeVectorRelease
        The plan; ``plan.release(values)`` takes m values (one vector) or an array of shape (k, m).

    Raises
    ------
    TypeError
        If ``noise`` is not one of the four families or an argument has the wrong type.
    ValueError
        If an argument is out of range.
    CalibrationError
        If the table would be too long or the result cannot be verified.

    Examples
    --------
    >>> from pydp_core import release
    >>> from pydp_core.noise import Laplace
    >>> plan = release.calibrate_vector_release(Laplace(), epsilon=1.0, delta=1e-6, sensitivity=0.5, dimension=2)
    >>> plan.dimension, plan.delta_achieved <= 1e-6
    (2, True)

    References
    ----------
    Vinterbo 2022; Dong, Roth and Su 2022; Doroshenko et al. 2022.
    """
    mechanism, r = _table_family(noise)
    eps, dl, sens = _check_lattice("vector", epsilon, delta, sensitivity, timing_stable)
    if not eps > 0.0:
        raise ValueError("epsilon must be > 0 for a vector lattice release")
    m = check_int(dimension, "dimension", 1, 2**20)
    k = check_int(releases, "releases", 1, 2**30)
    nm = check_choice(norm, "norm", NORMS)
    if nm == "linf" or m == 1:
        box = calibrate_box(noise, epsilon=eps, delta=dl, sensitivity=sens, dimension=m, releases=k)
        power, reference = math.inf, float(box.scale)
    else:  # a start value: one coordinate with the sensitivity of the envelope's l_p norm (p in [1, 2])
        power = min(max(r, 1.0), 2.0) if mechanism == "subbotin" else 1.0
        unit = _shift_norm(ball_shifts(nm, 2.0**20, 0, m), power) / 2.0**20  # the envelope over D, large D
        box = calibrate_box(noise, epsilon=eps, delta=dl, sensitivity=sens * unit, dimension=1, releases=k)
        reference = None  # no continuous calibration of the envelope to compare with
    s0, h = float(box.scale), float(box.value_step)

    def on_grid(bits: int, refine: bool) -> LatticeVectorRelease:
        e, _ = _lattice_grid(mechanism, r, sens, bits, s0, refine)
        shifts = ball_shifts(nm, sens, e, m)
        ratio = (shifts[0][0] * 2.0**e / sens if power == math.inf  # the corner K over D
                 else _shift_norm(shifts, power) / (sens * unit / 2.0**e))
        start = round(s0 / 2.0**e * ratio)
        return _search(mechanism, r, eps, dl, sens, e, shifts, nm, k, timing_stable, start, h)

    return _on_automatic_grid(on_grid, grid_bits, timing_stable, reference, "vector")


@accepts_arrays("values", keep_float32=True)
def release_vector(
    values: ArrayLike,
    noise: Any,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    norm: str = "linf",
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
    grid_bits: int | None = None,
    timing_stable: bool = False,
    simulation: bool = False,
    confirm_delta: bool = False,
) -> Any:
    """Release a vector query (or k of them under one budget) with iid lattice noise, (epsilon, delta)-DP.

    Parameters
    ----------
    values : array_like
        One vector of m values (shape (m,)), or k vectors (shape (k, m)) released under the one total
        (epsilon, delta).
    noise : Subbotin, Laplace, Gaussian or Logistic
        As in :func:`calibrate_vector_release`.
    epsilon, delta, sensitivity, norm, grid_bits, timing_stable :
        As in :func:`calibrate_vector_release`.
    rng, bounds, simulation, confirm_delta :
        As in :func:`release_laplace`.

    Returns
    -------
    numpy.ndarray
        The noisy values on the grid, of the shape given.

    Raises
    ------
    TypeError, ValueError, CalibrationError
        As in :func:`calibrate_vector_release`; ValueError also for values of another shape.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core.noise import Subbotin
    >>> y = dp.release.release_vector(np.zeros((2, 3)), Subbotin(1.5), epsilon=1.0, delta=1e-6,
    ...                               sensitivity=0.01, rng=dp.Random(7), simulation=True)
    >>> y.shape
    (2, 3)
    """
    check_release_rng(rng, simulation)
    x = as_float_array(values, "values")
    if x.ndim not in (1, 2) or x.size == 0:
        raise ValueError("values must have shape (m,) (one vector) or (k, m) (k vectors)")
    k, m = (1, x.shape[0]) if x.ndim == 1 else x.shape
    plan = calibrate_vector_release(noise, epsilon=epsilon, delta=delta, sensitivity=sensitivity, dimension=m,
                                    norm=norm, releases=k, grid_bits=grid_bits, timing_stable=timing_stable)
    check_release_delta(plan.delta, confirm_delta)
    return _release(plan, x, rng, bounds)
