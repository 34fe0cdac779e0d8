"""pydp_core: exact differential-privacy numerics with a C++ core.

The public API lives in subpackages that mirror the C++ areas (``csrc/include/pydp/<area>/``); the
common names are re-exported here and load on first use (PEP 562), so ``import pydp_core`` stays cheap:

- :mod:`pydp_core.noise`: the symmetric log-concave families (Laplace, Gaussian, Logistic, Subbotin_r,
  truncations, user-defined families);
- :mod:`pydp_core.calibration`: the exact (epsilon, delta) profile, its inverse, the minimal scale and the
  choice of the Subbotin order (Vinterbo 2022);
- :mod:`pydp_core.random`: the ChaCha20 generator and its samplers; :mod:`pydp_core.mechanisms`: calibrated
  additive mechanisms;
- :mod:`pydp_core.release`: floating-point-safe releases with exact discrete noise on a grid;
- :mod:`pydp_core.accounting`: budgets, conversions, composition, subsampling, the Gaussian sensitivity
  index, Rao DP and the accountant;
- :mod:`pydp_core.manifolds`: Gaussian differential privacy on Riemannian manifolds;
- :mod:`pydp_core.io`: keys, keyed noise for columnar data and files, Spark and Dask;
- :mod:`pydp_core.special`: the special functions behind them.
"""
from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys
from typing import TYPE_CHECKING, Any

from ._loader import load_core as _load_core

# The compiled extension beside these sources, or an ImportError that says how to build it.
_core = _load_core(_os.path.dirname(__file__))

from ._version import __version__  # noqa: E402  (read once the extension is known to match it)

# Public name -> the module that defines it. Subpackages are listed under their own name.
_EXPORTS: dict[str, str] = {
    "Session": "pydp_core.session",
    "aggregate": "pydp_core.aggregation",
    "aggregate_report": "pydp_core.aggregation",
    "top_k": "pydp_core.aggregation",
    **dict.fromkeys(
        ["NoiseFamily", "Laplace", "Gaussian", "Logistic", "Subbotin", "Truncated", "LogConcaveFamily"],
        "pydp_core.noise",
    ),
    **dict.fromkeys(
        [
            "privacy_profile",
            "log_privacy_profile",
            "epsilon_for_delta",
            "minimal_scale",
            "linear_query_sensitivity",
            "select_subbotin",
            "SubbotinChoice",
            "variance_ratio",
            "laplace_logistic_scale_ratio",
            "geng_truncated_laplace",
            "CalibrationError",
        ],
        "pydp_core.calibration",
    ),
    **dict.fromkeys(["Random", "as_random"], "pydp_core.random"),
    **dict.fromkeys(
        ["AdditiveMechanism", "LaplaceMechanism", "GaussianMechanism", "LogisticMechanism", "SubbotinMechanism"],
        "pydp_core.mechanisms",
    ),
    **dict.fromkeys(["release_laplace", "release_gaussian", "release_subbotin", "release_logistic",
                     "calibrate_subbotin_release", "calibrate_logistic_release"], "pydp_core.release"),
    **dict.fromkeys(
        [
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
            "gaussian_sigma",
            "arsinh_parameters",
            "ArsinhParameters",
            "Accountant",
            "BudgetExceededError",
            "PLD",
        ],
        "pydp_core.accounting",
    ),
    "privatize": "pydp_core.io",
    **dict.fromkeys(["get_include", "get_cmake_dir", "get_library_dir"], "pydp_core._paths"),
}

# Subpackages and modules reachable as attributes.
_MODULES: dict[str, str] = {
    "noise": "pydp_core.noise",
    "calibration": "pydp_core.calibration",
    "random": "pydp_core.random",
    "mechanisms": "pydp_core.mechanisms",
    "release": "pydp_core.release",
    "accounting": "pydp_core.accounting",
    "manifolds": "pydp_core.manifolds",
    "io": "pydp_core.io",
    "aggregation": "pydp_core.aggregation",
    "special": "pydp_core.special",
    "cli": "pydp_core.cli",
    "gdp": "pydp_core.accounting.gdp",
    "rao": "pydp_core.accounting.rao",
    "spark": "pydp_core.io.spark",
    "dask": "pydp_core.io.dask",
}

# Former names of subpackages: still reachable, with a DeprecationWarning naming the new one.
_DEPRECATED_MODULES: dict[str, str] = {
    "gaussian": "pydp_core.accounting.gdp",
    "discrete": "pydp_core.release",
    "etl": "pydp_core.io",
}

# Spelled out for static type checkers (mypy needs a literal list); a test checks it against the maps above.
__all__ = [
    "__version__",
    "NoiseFamily",
    "Laplace",
    "Gaussian",
    "Logistic",
    "Subbotin",
    "Truncated",
    "LogConcaveFamily",
    "privacy_profile",
    "log_privacy_profile",
    "epsilon_for_delta",
    "minimal_scale",
    "linear_query_sensitivity",
    "select_subbotin",
    "SubbotinChoice",
    "variance_ratio",
    "laplace_logistic_scale_ratio",
    "geng_truncated_laplace",
    "CalibrationError",
    "Random",
    "as_random",
    "AdditiveMechanism",
    "LaplaceMechanism",
    "GaussianMechanism",
    "LogisticMechanism",
    "SubbotinMechanism",
    "release_laplace",
    "release_gaussian",
    "release_subbotin",
    "release_logistic",
    "calibrate_subbotin_release",
    "calibrate_logistic_release",
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
    "gaussian_sigma",
    "arsinh_parameters",
    "ArsinhParameters",
    "Accountant",
    "BudgetExceededError",
    "Session",
    "aggregate",
    "aggregate_report",
    "top_k",
    "PLD",
    "privatize",
    "get_include",
    "get_cmake_dir",
    "get_library_dir",
    "noise",
    "calibration",
    "random",
    "mechanisms",
    "release",
    "accounting",
    "manifolds",
    "io",
    "aggregation",
    "special",
    "gdp",
    "rao",
    "spark",
    "dask",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(_importlib.import_module(_EXPORTS[name]), name)
    elif name in _MODULES:
        value = _importlib.import_module(_MODULES[name])
    elif name in _DEPRECATED_MODULES:
        import warnings

        new = _DEPRECATED_MODULES[name]
        warnings.warn(f"pydp_core.{name} is deprecated: use {new}", DeprecationWarning, stacklevel=2)
        if name == "gaussian":  # its functions kept their former names there, each with its own warning
            new = "pydp_core.accounting.gaussian"
        return _importlib.import_module(new)  # not cached, so that every use warns
    else:
        raise AttributeError(f"module 'pydp_core' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from . import (
        accounting,
        aggregation,
        calibration,
        io,
        manifolds,
        mechanisms,
        noise,
        random,
        release,
        special,
    )
    from ._paths import get_cmake_dir, get_include, get_library_dir
    from .accounting import (
        DEFAULT_ALPHAS,
        GDP,
        KLDP,
        MCDP,
        PLD,
        RDP,
        RDP_METHODS,
        TCDP,
        ZCDP,
        Accountant,
        ApproxDP,
        ArsinhParameters,
        Budget,
        BudgetExceededError,
        PrivacyWarning,
        PureDP,
        RaoDP,
        RDPCurve,
        advanced_composition,
        arsinh_parameters,
        compose,
        gaussian_sigma,
        gdp,
        rao,
        subsample,
    )
    from .aggregation import aggregate, aggregate_report, top_k
    from .calibration import (
        CalibrationError,
        SubbotinChoice,
        epsilon_for_delta,
        geng_truncated_laplace,
        laplace_logistic_scale_ratio,
        linear_query_sensitivity,
        log_privacy_profile,
        minimal_scale,
        privacy_profile,
        select_subbotin,
        variance_ratio,
    )
    from .io import dask, privatize, spark
    from .mechanisms import (
        AdditiveMechanism,
        GaussianMechanism,
        LaplaceMechanism,
        LogisticMechanism,
        SubbotinMechanism,
    )
    from .noise import (
        Gaussian,
        Laplace,
        LogConcaveFamily,
        Logistic,
        NoiseFamily,
        Subbotin,
        Truncated,
    )
    from .random import Random, as_random
    from .release import (
        calibrate_logistic_release,
        calibrate_subbotin_release,
        release_gaussian,
        release_laplace,
        release_logistic,
        release_subbotin,
    )
    from .session import Session
