"""The Subbotin order for a box-bounded vector query (Vinterbo 2022, Section 4.1), with its release plan.

:func:`select_subbotin` is the public entry point: with ``release=False`` it is the continuous choice of
:func:`pydp_core.calibration.select_subbotin` (the paper's Theorem 9 pairing, kept there because the
calibration layer cannot build release plans), with ``release=True`` the order whose exactly calibrated
lattice release (:func:`~pydp_core.release.calibrate_vector_release`) has the smallest noise, and that plan.
:func:`select_subbotin_release` is the release form under its own name.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..accounting.pld.box import calibrate_box
from ..calibration import select_subbotin as _select_continuous
from ..noise import Subbotin
from .vector import LatticeVectorRelease, calibrate_vector_release

#: The orders compared by the release selection when none are given.
RELEASE_ORDERS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)


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
    orders: Sequence[float] = RELEASE_ORDERS,
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


def select_subbotin(
    *,
    epsilon: float,
    delta: float,
    dimension: int,
    linf_sensitivity: float,
    orders: Sequence[float] | None = None,
    release: bool = False,
    releases: int = 1,
    candidates: float = 0.02,
) -> Any:
    """The Subbotin order for a box-bounded vector query; with ``release=True`` also its release plan.

    Parameters
    ----------
    epsilon, delta : float
        The (total) guarantee: epsilon > 0, delta in (0, 1).
    dimension : int
        m, the number of coordinates.
    linf_sensitivity : float
        The per-coordinate sensitivity (the mean of n records in a box of width W: W / n).
    orders : sequence of float, optional
        The orders r >= 1 to compare. None: ``release=False`` optimises r continuously on [1, 64]
        (:func:`pydp_core.calibration.select_subbotin`); ``release=True`` compares ``RELEASE_ORDERS``.
    release : bool, optional
        False (default): the paper's continuous choice, a :class:`~pydp_core.calibration.SubbotinChoice`
        (Theorem 9's l_r pairing, a guarantee for r = 1 and 2 only). True: every order calibrated exactly
        for the box, the best ones on the lattice, a :class:`SubbotinReleaseChoice` whose ``plan``
        releases the query (:func:`select_subbotin_release`).
    releases : int, optional
        k, the number of vectors under the budget (``release=True`` only).
    candidates : float, optional
        The relative RMSE window of the orders calibrated on the lattice (``release=True`` only).

    Returns
    -------
    SubbotinChoice or SubbotinReleaseChoice

    Raises
    ------
    TypeError
        If ``release`` is not a bool, or as the selected function raises.
    ValueError
        If ``releases`` or ``candidates`` is given with ``release=False``, or as the selected function
        raises.

    Examples
    --------
    >>> import pydp_core as dp
    >>> dp.select_subbotin(epsilon=1.0, delta=1e-4, dimension=100, linf_sensitivity=1 / 500,
    ...                    orders=[1, 2, 3, 4, 5, 6]).order
    4.0
    >>> c = dp.select_subbotin(epsilon=1.0, delta=1e-6, dimension=2, linf_sensitivity=0.01, orders=[1.0, 2.0],
    ...                        release=True)
    >>> c.order, c.plan.dimension
    (1.0, 2)

    References
    ----------
    Vinterbo 2022.
    """
    if not isinstance(release, bool):
        raise TypeError(f"release must be a bool, not {type(release).__name__}")
    if release:
        return select_subbotin_release(epsilon=epsilon, delta=delta, dimension=dimension,
                                       linf_sensitivity=linf_sensitivity, releases=releases,
                                       orders=RELEASE_ORDERS if orders is None else orders, candidates=candidates)
    if releases != 1 or candidates != 0.02:
        raise ValueError("releases and candidates apply to release=True only")
    return _select_continuous(epsilon=epsilon, delta=delta, dimension=dimension, linf_sensitivity=linf_sensitivity,
                              orders=orders)
