"""Privacy accounting: budgets of every definition, conversions, composition, subsampling, the Gaussian
sensitivity index, Rao DP and a thread-safe accountant.

- :mod:`~pydp_core.accounting.budgets`: immutable budget types (``PureDP``, ``ApproxDP``, ``ZCDP``,
  ``RDP``, ``RDPCurve``, ``GDP``, ``TCDP``, ``RaoDP``, ``KLDP``, ``MCDP``) and their conversions;
- :mod:`~pydp_core.accounting.composition`: sequential and advanced composition;
- :mod:`~pydp_core.accounting.subsampling`: amplification by subsampling;
- :mod:`~pydp_core.accounting.gdp`: the Gaussian mechanism through its sensitivity index
  psi = D / sigma, the mu of mu-GDP (Kaissis et al. 2023), and the calibration of sigma to any budget
  (formerly ``pydp_core.accounting.gaussian``, which still works with a DeprecationWarning);
- :mod:`~pydp_core.accounting.rao`: Rao (Fisher-Rao) differential privacy (Anonymous 2022);
- :mod:`~pydp_core.accounting.pld`: certified privacy-loss distributions (:class:`PLD`): tight composition of
  many mechanisms with two-sided intervals (docs/pld.md);
- :mod:`~pydp_core.accounting.curves`: their certified privacy profile, trade-off function and ROC curve
  (:func:`privacy_curves`, plotted by ``pydp-core profile``);
- :mod:`~pydp_core.accounting.accountant`: :class:`Accountant`, a thread-safe, resumable running total.

The proofs and the conversion formulas are in ``docs/accounting.md``.
"""
from __future__ import annotations

import importlib as _importlib
from typing import Any

from . import gdp, rao
from .accountant import Accountant, BudgetExceededError
from .budgets import (
    DEFAULT_ALPHAS,
    GDP,
    KLDP,
    MCDP,
    RDP,
    RDP_METHODS,
    TCDP,
    ZCDP,
    ApproxDP,
    Budget,
    PrivacyWarning,
    PureDP,
    RaoDP,
    RDPCurve,
)
from .composition import advanced_composition, compose
from .curves import PrivacyCurves, privacy_curves
from .gdp import ArsinhParameters, arsinh_parameters, gaussian_sigma
from .journal import Journal, JournalError
from .pld import PLD, Interval, ScaleCalibration
from .subsampling import subsample

__all__ = [
    "Budget",
    "PureDP",
    "ApproxDP",
    "KLDP",
    "MCDP",
    "ZCDP",
    "RDP",
    "RDPCurve",
    "GDP",
    "TCDP",
    "RaoDP",
    "RDP_METHODS",
    "DEFAULT_ALPHAS",
    "PrivacyWarning",
    "compose",
    "advanced_composition",
    "subsample",
    "gdp",
    "rao",
    "gaussian_sigma",
    "arsinh_parameters",
    "ArsinhParameters",
    "Accountant",
    "BudgetExceededError",
    "Journal",
    "JournalError",
    "PLD",
    "Interval",
    "ScaleCalibration",
    "privacy_curves",
    "PrivacyCurves",
]


def __getattr__(name: str) -> Any:
    # The deprecated module gaussian (now gdp) loads on first use: importing it here would load it for everyone.
    if name == "gaussian":
        return _importlib.import_module(f"{__name__}.gaussian")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
