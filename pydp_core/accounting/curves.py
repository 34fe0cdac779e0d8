"""Certified privacy curves of a PLD: the privacy profile, the trade-off function and the ROC curve.

For a mechanism described by a :class:`~pydp_core.accounting.pld.PLD` (one release or a composition),
:func:`privacy_curves` evaluates on given grids

- the privacy profile delta(epsilon) (:meth:`PLD.delta`),
- the trade-off function beta(alpha), the smallest type II error of a test between neighbouring outputs
  at type I error alpha (:meth:`PLD.tradeoff`; Dong, Roth and Su 2022),
- the ROC curve of the most powerful attack: true-positive rate 1 - beta(alpha) at false-positive rate
  alpha,

each as a certified :class:`~pydp_core.accounting.pld.Interval`: the exact curve lies between the
ends at every point (the ROC band is the trade-off band reflected, 1 - upper to 1 - lower). The
``pydp-core profile`` command plots these bands and writes them to CSV.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_epsilon, check_probability
from .pld import PLD, Interval

__all__ = ["PrivacyCurves", "privacy_curves"]


@dataclass(frozen=True)
class PrivacyCurves:
    """Certified privacy profile, trade-off function and ROC curve of one mechanism on fixed grids.

    Returned by :func:`privacy_curves`.

    Parameters
    ----------
    epsilon : ndarray
        The epsilon grid.
    delta : Interval
        Bounds on delta(epsilon) at each grid point.
    alpha : ndarray
        The type I error (false-positive rate) grid.
    beta : Interval
        Bounds on the trade-off function beta(alpha).
    power : Interval
        Bounds on the ROC curve 1 - beta(alpha) (true-positive rate of the most powerful test).

    Examples
    --------
    >>> c = privacy_curves(PLD.from_gdp(1.0), epsilon=[0.0, 1.0], alpha=[0.05])
    >>> bool(c.power.lower[0] <= 1 - c.beta.lower[0])
    True
    """

    epsilon: np.ndarray
    delta: Interval
    alpha: np.ndarray
    beta: Interval
    power: Interval


def privacy_curves(pld: PLD, *, epsilon: Any, alpha: Any) -> PrivacyCurves:
    """The certified privacy profile, trade-off function and ROC curve of ``pld`` on the given grids.

    Parameters
    ----------
    pld : PLD
        The mechanism (or composition).
    epsilon : array_like
        Grid of epsilon >= 0 for the privacy profile (one-dimensional).
    alpha : array_like
        Grid of type I errors in [0, 1] for the trade-off and ROC curves (one-dimensional).

    Returns
    -------
    PrivacyCurves
        Intervals containing delta(epsilon), beta(alpha) and 1 - beta(alpha) at every grid point.

    Raises
    ------
    TypeError
        If ``pld`` is not a PLD, or a grid is not one-dimensional.
    ValueError
        If an epsilon is negative or NaN, or an alpha is outside [0, 1].

    Examples
    --------
    >>> from pydp_core.accounting import gdp
    >>> c = privacy_curves(PLD.from_gdp(1.0).self_compose(4), epsilon=[1.0], alpha=[0.1])
    >>> exact = float(gdp.tradeoff(0.1, 2.0))  # 4-fold GDP(1) is GDP(2)
    >>> bool(c.beta.lower[0] <= exact <= c.beta.upper[0])
    True

    References
    ----------
    Dong, Roth and Su 2022.
    """
    if not isinstance(pld, PLD):
        raise TypeError(f"pld must be a PLD, not {type(pld).__name__}")
    eps = np.asarray(check_epsilon(epsilon, "epsilon"), dtype=float)
    a = np.asarray(check_probability(alpha, "alpha"), dtype=float)
    for name, arr in (("epsilon", eps), ("alpha", a)):
        if arr.ndim != 1:
            raise TypeError(f"{name} must be a one-dimensional grid, got shape {arr.shape}")
    delta = pld.delta(eps)
    beta = pld.tradeoff(a)
    power = Interval(1.0 - np.asarray(beta.upper), 1.0 - np.asarray(beta.lower))
    return PrivacyCurves(eps, delta, a, beta, power)
