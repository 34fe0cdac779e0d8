"""The guarantees of one additive noise mechanism under every privacy definition.

:func:`guarantees` collects, for ``sensitivity``-sensitive noise ``scale * X``, the exact pure and
(epsilon, delta) guarantees (Vinterbo 2022), GDP, zCDP and RDP (exact for the Gaussian; the exact
Laplace RDP curve of Mironov 2017; otherwise the bounds implied by pure DP) and Rao DP (the Fisher
information of the location, Anonymous 2022).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_alpha_array, check_positive_scalar
from ..calibration.profile import epsilon_for_delta
from ..noise import NoiseFamily
from .budgets import GDP, PureDP
from .rao import theta

__all__ = ["laplace_rdp_epsilon", "guarantees"]

_ALPHAS = (1.5, 2.0, 4.0, 8.0, 16.0, 32.0)
_DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)


def laplace_rdp_epsilon(alpha: Any, *, sensitivity: float = 1.0, scale: float) -> Any:
    """The exact Renyi divergence of order ``alpha`` of the Laplace mechanism (Mironov 2017, Table II).

    Parameters
    ----------
    alpha : float or array_like
        The Renyi order, > 1 (``inf`` gives the pure-DP epsilon); an array gives an array.
    sensitivity : float, optional
        The l1 sensitivity D (> 0, default 1).
    scale : float
        The Laplace scale b (> 0).

    Returns
    -------
    float or ndarray
        ``log(a/(2a-1) e^{(a-1)/t} + (a-1)/(2a-1) e^{-a/t}) / (a - 1)`` with ``t = b / D``, summed in log space,
        never above the pure-DP epsilon ``D / b``.

    Raises
    ------
    ValueError
        If ``alpha <= 1`` or a parameter is not positive and finite.

    Examples
    --------
    >>> round(laplace_rdp_epsilon(2.0, scale=1.0), 6)
    0.619124
    >>> laplace_rdp_epsilon(float("inf"), scale=2.0)
    0.5
    """
    a = check_alpha_array(alpha, allow_inf=True)
    t = check_positive_scalar(scale, "scale") / check_positive_scalar(sensitivity, "sensitivity")
    with np.errstate(over="ignore", invalid="ignore"):
        t1 = np.log(a / (2 * a - 1)) + (a - 1) / t
        t2 = np.log((a - 1) / (2 * a - 1)) - a / t
        val = np.logaddexp(t1, t2) / (a - 1)
    val = np.minimum(np.where(np.isinf(a), 1.0 / t, val), 1.0 / t)
    return float(val) if val.ndim == 0 else val


def guarantees(noise: NoiseFamily, *, sensitivity: float = 1.0, scale: float) -> dict[str, Any]:
    """The guarantees of ``sensitivity``-sensitive additive noise ``scale * noise`` under each definition.

    Parameters
    ----------
    noise : NoiseFamily
        The unit-scale noise family.
    sensitivity : float, optional
        The sensitivity D (> 0, default 1).
    scale : float
        The noise scale (> 0).

    Returns
    -------
    dict
        ``"variance"`` and ``"std"`` of the noise ``scale * noise``; ``"pure DP epsilon"``;
        ``"(epsilon, delta)-DP"``, a dict from delta to the exact epsilon; GDP mu,
        zCDP rho and RDP epsilon(alpha) (exact for the Gaussian and, for RDP, the Laplace; otherwise the
        bounds implied by pure DP, labelled so); ``"Rao-DP theta"`` (NaN where the Fisher information of the
        family is not implemented).

    Raises
    ------
    ValueError
        If ``scale`` or ``sensitivity`` is not positive and finite.

    Examples
    --------
    >>> import pydp_core as dp
    >>> g = guarantees(dp.Gaussian(), scale=2.0)
    >>> g["GDP mu"]
    0.5
    """
    s = check_positive_scalar(scale, "scale")
    d = check_positive_scalar(sensitivity, "sensitivity")
    kind = noise.identity[0]
    out: dict[str, Any] = {"variance": s * s * noise.variance}
    out["std"] = math.sqrt(out["variance"])
    eps0 = float(epsilon_for_delta(noise, delta=0.0, sensitivity=d, scale=s))
    out["pure DP epsilon"] = eps0
    out["(epsilon, delta)-DP"] = {
        x: float(epsilon_for_delta(noise, delta=x, sensitivity=d, scale=s)) for x in _DELTAS
    }
    if kind == "Gaussian":
        gdp = GDP(d / s)
        out["GDP mu"] = gdp.mu
        out["zCDP rho"] = gdp.to_zcdp().rho
        out["RDP epsilon(alpha)"] = {a: gdp.to_rdp(a).epsilon for a in _ALPHAS}
    elif math.isfinite(eps0):
        pure = PureDP(eps0)
        out["GDP mu (bound via pure DP)"] = pure.to_gdp().mu
        out["zCDP rho (bound via pure DP)"] = pure.to_zcdp().rho
        if kind == "Laplace":
            out["RDP epsilon(alpha)"] = {a: laplace_rdp_epsilon(a, sensitivity=d, scale=s) for a in _ALPHAS}
        else:
            out["RDP epsilon(alpha) (bound via pure DP)"] = {a: float(pure.rdp_epsilon(a)) for a in _ALPHAS}
    try:
        out["Rao-DP theta"] = theta(noise, sensitivity=d, scale=s).theta
    except TypeError:
        out["Rao-DP theta"] = math.nan
    return out
