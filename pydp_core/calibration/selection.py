"""Vector queries and the choice of the Subbotin order (Vinterbo 2022, Theorems 9 and 10, equation 5).

The paper's Theorem 9 pairs iid Subbotin_r noise with the l_r sensitivity; that pairing is exact for
r in {1, 2} only (counterexample and proof notes in ``docs/calibration.md``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import (
    as_scalar,
    check_delta,
    check_finite,
    check_int,
    check_positive_scalar,
    check_subbotin_order,
)
from ..noise import Subbotin
from .profile import minimal_scale


def linear_query_sensitivity(p: float, dimension: int, linf_diameter: float, weight: float = 1.0) -> float:
    """l_p sensitivity of a linear query q(d) = weight * sum_i f(d_i) (Theorem 10).

    Delta_p = dimension^(1/p) * |weight| * ||f(R)||_inf, an upper bound that is attained when f(R) is an
    l_inf ball. For the mean of n records in a box of width w: ``weight = 1/n``, ``linf_diameter = w``.
    The paper pairs an l_p sensitivity with iid Subbotin_p noise (Theorem 9), exact for p in {1, 2}.

    Parameters
    ----------
    p : float
        The norm, >= 1 (``inf`` allowed).
    dimension : int
        The number of coordinates m, >= 1.
    linf_diameter : float
        The l_inf diameter of f(R), > 0 and finite.
    weight : float, optional
        The query's weight (finite, non-zero; default 1).

    Returns
    -------
    float
        The l_p sensitivity.

    Raises
    ------
    ValueError
        If an argument is out of range or NaN.
    TypeError
        If ``dimension`` is not an integer.

    Examples
    --------
    >>> linear_query_sensitivity(2.0, 4, 1.0, weight=0.01)
    0.02
    """
    pp = check_positive_scalar(p, "p", allow_inf=True)
    if pp < 1:
        raise ValueError("p must be >= 1")
    m = check_int(dimension, "dimension", 1)
    w = check_positive_scalar(linf_diameter, "linf_diameter")
    nu = abs(as_scalar(check_finite(weight, "weight"), "weight"))
    if nu == 0:
        raise ValueError("weight must be non-zero")
    return (m ** (1.0 / pp) if math.isfinite(pp) else 1.0) * nu * w


@dataclass(frozen=True)
class SubbotinChoice:
    """The Subbotin order minimising the per-coordinate MSE (equation 5) and its calibration.

    Returned by :func:`select_subbotin`.

    Parameters
    ----------
    order : float
        The chosen order r.
    scale : float
        The minimal scale for the l_r sensitivity.
    mse : float
        The per-coordinate mean squared error scale^2 Var(X_r).
    sensitivity : float
        The l_r sensitivity dimension^(1/r) * linf_sensitivity.
    epsilon, delta : float
        The budget.
    dimension : int
        The number of coordinates.

    Examples
    --------
    >>> c = select_subbotin(epsilon=1.0, delta=1e-4, dimension=100, linf_sensitivity=1 / 500,
    ...                     orders=[1, 2, 3, 4, 5, 6])
    >>> c.order, c.noise
    (4.0, Subbotin(r=4))
    """

    order: float
    scale: float
    mse: float
    sensitivity: float
    epsilon: float
    delta: float
    dimension: int

    @property
    def noise(self) -> Subbotin:
        """The chosen family, ``Subbotin(order)``."""
        return Subbotin(self.order)


def _mse(r: float, eps: float, delta: float, m: int, linf: float) -> tuple[float, float, float]:
    fam = Subbotin(r)
    sens = m ** (1.0 / r) * linf
    s = float(minimal_scale(fam, epsilon=eps, delta=delta, sensitivity=sens))
    return s * s * fam.variance, s, sens


def select_subbotin(
    *,
    epsilon: float,
    delta: float,
    dimension: int,
    linf_sensitivity: float,
    orders: Sequence[float] | None = None,
) -> SubbotinChoice:
    """Choose the Subbotin order r minimising the per-coordinate MSE s_r^2 Var(X_r) (equation 5).

    Caution: the scales use the paper's Theorem 9 pairing of the l_r sensitivity with iid Subbotin_r
    noise, which is exact for r = 1 and r = 2 only (see the module docstring for the counterexample);
    the result reproduces the paper's Section 4.1 and is a guarantee only when ``order`` is 1 or 2.

    The query is assumed to have l_inf sensitivity ``linf_sensitivity`` in each of ``dimension``
    coordinates on an l_inf ball, so its l_r sensitivity is ``dimension^(1/r) * linf_sensitivity``
    (Theorem 10). With ``orders`` a grid of r >= 1 the best grid point is returned (ties to the smaller
    r); with ``orders=None`` r is optimised continuously on [1, 64] (a grid scan, then a bounded scalar
    minimisation around the best point).

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    dimension : int
        The number of coordinates m, >= 1.
    linf_sensitivity : float
        The per-coordinate (l_inf) sensitivity, > 0 and finite.
    orders : sequence of float, optional
        A grid of orders (finite, >= 1); None optimises r continuously on [1, 64].

    Returns
    -------
    SubbotinChoice
        The order, its scale and MSE, and the inputs.

    Raises
    ------
    ValueError
        If an argument is out of range or NaN, or ``orders`` is empty.
    TypeError
        If ``dimension`` is not an integer.

    Examples
    --------
    >>> c = select_subbotin(epsilon=1.0, delta=1e-4, dimension=100, linf_sensitivity=1 / 500,
    ...                     orders=[1, 2, 3, 4, 5, 6])
    >>> c.order
    4.0
    >>> c.scale
    0.0552972706...
    """
    eps = check_positive_scalar(epsilon, "epsilon")
    dl = as_scalar(check_delta(delta, allow_zero=False), "delta")
    m = check_int(dimension, "dimension", 1)
    linf = check_positive_scalar(linf_sensitivity, "linf_sensitivity")
    if orders is not None:
        grid = np.asarray([check_subbotin_order(r, "orders") for r in np.asarray(orders, dtype=float).reshape(-1)])
        if grid.size == 0:
            raise ValueError("orders must not be empty")
        results = [_mse(float(r), eps, dl, m, linf) for r in grid]
        best = int(np.argmin([res[0] for res in results]))
        mse, s, sens = results[best]
        return SubbotinChoice(float(grid[best]), s, mse, sens, eps, dl, m)
    from scipy import optimize

    grid = np.concatenate([np.arange(1.0, 16.0, 0.5), np.arange(16.0, 65.0, 4.0)])
    vals = [_mse(float(r), eps, dl, m, linf)[0] for r in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda r: math.log(_mse(float(r), eps, dl, m, linf)[0]), bounds=(lo, hi), method="bounded",
            options={"xatol": 1e-6},
        )
        r_best = float(res.x) if float(res.fun) <= math.log(vals[i]) else float(grid[i])
    else:
        r_best = float(grid[i])
    mse, s, sens = _mse(r_best, eps, dl, m, linf)
    return SubbotinChoice(r_best, s, mse, sens, eps, dl, m)


