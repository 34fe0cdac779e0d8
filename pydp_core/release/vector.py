"""Vector queries released with iid lattice noise, calibrated through the PLD of the product law.

The query q has m coordinates and neighbouring values differ by a vector d with ``||d|| <= sensitivity``
in the l_inf, l_1 or l_2 norm (the mean of n records in a box of width W: l_inf, ``W / n``; Vinterbo
2022, Section 4.1). Each coordinate is rounded to the grid and gets independent noise from the exact
integer table of :mod:`.lattice`; ``releases`` such vectors (k releases of the query) share one total
(epsilon, delta). The rounded shift vector has every coordinate at most ``k = floor(D) + 1`` grid steps
(Lemma 1, D the sensitivity in grid steps; every l_1 and l_2 ball lies in the l_inf ball of the same
radius), and the corner ``(k, ..., k)`` of that box is the worst shift (docs/release.md, section 5), so
the mechanism is (epsilon, delta)-DP when the PLD of the table law with shift k, self-composed
``N = m * releases`` times, has delta(epsilon) <= delta. That PLD is certified
(:meth:`pydp_core.accounting.pld.PLD.from_integer_weights`), and the calibration picks the smallest
integer table scale whose certified upper bound meets the target.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from .._arrays import accepts_arrays
from .._safety import check_release_delta, check_release_rng
from .._validation import as_float_array, check_choice, check_int
from ..accounting.pld import PLD
from ..accounting.pld.box import calibrate_box
from ..calibration import CalibrationError
from ..noise import Laplace, Subbotin  # noqa: F401 (Laplace: the Examples)
from .lattice import (
    _AUTO_GRID_SLACK,
    _COARSER_GRID_BITS,
    _STABLE_GRID_BITS,
    STABLE_TABLE_ENTRIES,
    STABLE_TV_BOUND,
    LatticeRelease,
    _check_lattice,
    _lattice_grid,
    _smallest_passing,
)
from .plans import _DELTA_MARGIN, DEFAULT_GRID_BITS, _release

NORMS = ("linf", "l1", "l2")


def _table_family(noise: Any) -> Tuple[str, float]:
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

    @property
    def steps(self) -> int:
        """N = dimension * releases: the number of composed one-coordinate laws."""
        return self.dimension * self.releases

    @property
    def noise_std(self) -> float:
        """The standard deviation of each coordinate's noise in data units (from the table's integers)."""
        return table_std(self.table.weights()) * self.grid

    def pld(self) -> PLD:
        """The certificate: the PLD of the table law at the shift, self-composed ``steps`` times."""
        return _product_pld(self.table, self.shift, self.steps, self.value_step)

    def _vector_sizes(self) -> Tuple[int, ...]:
        return (self.dimension, self.dimension * self.releases)


def _product_pld(table: Any, shift: int, steps: int, value_step: float) -> PLD:
    return PLD.from_integer_weights(table.weights(), shift=shift).self_compose(steps) \
        .with_discretization(value_step=value_step)


def _stable_charge(eps: float, steps: int) -> float:
    """The timing-stable mode's total-variation charge for ``steps`` values: (1 + e^eps) steps 2**-129."""
    return math.inf if eps > 700 else (1.0 + math.exp(eps)) * steps * STABLE_TV_BOUND


def _search(mechanism: str, r: float, eps: float, dl: float, sens: float, e: int, shift: int, m: int, norm: str,
            k: int, timing_stable: bool, start: int, h: float) -> LatticeVectorRelease:
    """The smallest table scale on the grid 2**e whose certificate at the corner shift meets delta."""
    steps = m * k
    target = dl * (1.0 - _DELTA_MARGIN)
    charge = _stable_charge(eps, steps) if timing_stable else 0.0

    def excess(table: Any) -> float:
        up = float(_product_pld(table, shift, steps, h).delta(eps).upper) + charge
        return math.inf if up >= 1.0 else up - target

    s, (table, bits) = _smallest_passing(mechanism, r, start, excess)
    iv = _product_pld(table, shift, steps, h).delta(eps)
    plan = LatticeVectorRelease(mechanism, eps, dl, sens, e, shift, Fraction(s), float(iv.upper) + charge, m,
                                r if mechanism == "subbotin" else None, bits, bool(timing_stable), norm, k, h,
                                float(iv.lower))
    plan.__dict__["table"] = table
    return plan


def _calibrate_on(mechanism: str, r: float, eps: float, dl: float, sens: float, m: int, norm: str, k: int,
                  grid_bits: int, timing_stable: bool, s0: float, h: float, refine: bool = True) -> LatticeVectorRelease:
    e, shift = _lattice_grid(mechanism, r, sens, grid_bits, s0, refine)
    return _search(mechanism, r, eps, dl, sens, e, shift, m, norm, k, timing_stable, round(s0 / sens * shift), h)


def calibrate_vector_release(
    noise: Any,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    dimension: int,
    norm: str = "linf",
    releases: int = 1,
    grid_bits: Optional[int] = None,
    timing_stable: bool = False,
) -> LatticeVectorRelease:
    """The verified smallest lattice release of a vector query with iid noise of ``noise``'s shape.

    The continuous calibration of the same product (:func:`pydp_core.calibration.calibrate_box`, the
    corner of the box, N = m k) gives the start scale and the loss grid; the grid on the data is that of
    :func:`calibrate_subbotin_release` for that scale; then the smallest integer table scale ``s`` whose
    certified upper delta(epsilon) of the N-fold product at the corner shift ``(k, ..., k)`` meets
    delta is found, and ``s - 1`` is checked to fail (docs/release.md, section 5).

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
        The sensitivity's norm. l1 and l2 balls are bounded by the l_inf ball of the same radius (exact
        for l_inf, an upper bound that over-charges up to m-fold for l1 and l2).
    releases : int, optional
        k >= 1: the number of vectors the budget covers.
    grid_bits : int or None, optional
        As in :func:`calibrate_subbotin_release` (None: 16, or a coarser grid where the table's range binds).
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
    box = calibrate_box(noise, epsilon=eps, delta=dl, sensitivity=sens, dimension=m, releases=k)
    s0, h = float(box.scale), float(box.value_step)
    if grid_bits is not None:
        return _calibrate_on(mechanism, r, eps, dl, sens, m, nm, k, grid_bits, timing_stable, s0, h)
    if timing_stable:  # the finest grid whose table stays cache-resident, as for the scalar plans
        for bits in _STABLE_GRID_BITS:
            plan = _calibrate_on(mechanism, r, eps, dl, sens, m, nm, k, bits, True, s0, h, refine=False)
            if plan.table.half_size + 1 <= STABLE_TABLE_ENTRIES:
                return plan
        raise CalibrationError(f"timing-stable vector calibration: no grid keeps the table within "
                               f"{STABLE_TABLE_ENTRIES} entries (give grid_bits to choose the grid yourself)")
    plan = _calibrate_on(mechanism, r, eps, dl, sens, m, nm, k, DEFAULT_GRID_BITS, timing_stable, s0, h)
    if plan.scale > s0 * (1.0 + _AUTO_GRID_SLACK):
        for bits in _COARSER_GRID_BITS:
            other = _calibrate_on(mechanism, r, eps, dl, sens, m, nm, k, bits, timing_stable, s0, h)
            if other.scale < plan.scale:
                plan = other
    return plan


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
    bounds: Optional[Tuple[float, float]] = None,
    grid_bits: Optional[int] = None,
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


@dataclass(frozen=True)
class SubbotinReleaseChoice:
    """The result of :func:`select_subbotin_release`.

    Parameters
    ----------
    order : float
        The Subbotin order whose lattice release has the smallest per-coordinate noise RMSE.
    plan : LatticeVectorRelease
        Its release plan.
    rmse : float
        Its per-coordinate noise standard deviation (data units).
    continuous_rmse : dict
        Every order's exact continuous RMSE (``calibrate_box``), by order.
    lattice_rmse : dict
        The lattice RMSE of the orders calibrated on the lattice (those within ``candidates`` of the
        continuous best).

    Examples
    --------
    >>> from pydp_core import release
    >>> c = release.select_subbotin_release(epsilon=1.0, delta=1e-6, dimension=2, linf_sensitivity=0.01,
    ...                                     orders=[1.0, 2.0])
    >>> c.order, sorted(c.continuous_rmse)
    (1.0, [1.0, 2.0])
    """

    order: float
    plan: LatticeVectorRelease
    rmse: float
    continuous_rmse: dict[Any, Any]
    lattice_rmse: dict[Any, Any]


def select_subbotin_release(
    *,
    epsilon: float,
    delta: float,
    dimension: int,
    linf_sensitivity: float,
    releases: int = 1,
    orders: Sequence[float] = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0),
    candidates: float = 0.02,
) -> SubbotinReleaseChoice:
    """The Subbotin order with the smallest lattice-release RMSE for a box-bounded vector query, and its plan.

    Every order is first calibrated exactly in the continuous model (:func:`calibrate_box`, cheap); the
    orders whose continuous RMSE is within the relative ``candidates`` of the best are calibrated on the
    lattice (:func:`calibrate_vector_release`), and the smallest lattice RMSE wins (the lattice RMSE is
    within a few 1e-4 of the continuous one, docs/release.md, section 5, so an order more than 2% worse
    in the continuous model does not win on the lattice).

    Parameters
    ----------
    epsilon, delta : float
        The total guarantee (epsilon > 0, delta in (0, 1)).
    dimension : int
        m, the number of coordinates.
    linf_sensitivity : float
        The per-coordinate sensitivity (the mean of n records in a box of width W: W / n).
    releases : int, optional
        k, the number of vectors under the budget.
    orders : sequence of float, optional
        The orders r >= 1 to compare.
    candidates : float, optional
        The relative RMSE window, in [0, 1), of the orders calibrated on the lattice.

    Returns
    -------
    SubbotinReleaseChoice

    Raises
    ------
    ValueError, TypeError, CalibrationError
        As in :func:`calibrate_vector_release`; ValueError for an empty ``orders``.

    Examples
    --------
    >>> from pydp_core import release
    >>> c = release.select_subbotin_release(epsilon=1.0, delta=1e-6, dimension=10, linf_sensitivity=1 / 500,
    ...                                     releases=2, orders=[1.0, 1.75, 2.0])
    >>> c.order, c.plan.steps
    (1.75, 20)
    """
    grid = [float(r) for r in orders]
    if not grid:
        raise ValueError("orders must not be empty")
    if not 0.0 <= candidates < 1.0:
        raise ValueError(f"candidates must lie in [0, 1), got {candidates}")
    cont = {r: calibrate_box(Subbotin(r), epsilon=epsilon, delta=delta, sensitivity=linf_sensitivity,
                             dimension=dimension, releases=releases).rmse for r in grid}
    best = min(cont.values())
    plans = {r: calibrate_vector_release(Subbotin(r), epsilon=epsilon, delta=delta, sensitivity=linf_sensitivity,
                                         dimension=dimension, releases=releases)
             for r in grid if cont[r] <= best * (1.0 + candidates)}
    lat = {r: p.noise_std for r, p in plans.items()}  # never empty: the continuous best is in the window
    order = min(lat, key=lambda r: (lat[r], r))
    return SubbotinReleaseChoice(order, plans[order], lat[order], cont, lat)
