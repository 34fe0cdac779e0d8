"""pydp_core: exact differential-privacy numerics with a C++ core.

The public API lives in the area modules and is re-exported here:

- :mod:`pydp_core.noise`: the symmetric log-concave families (Laplace, Gaussian, Logistic, Subbotin_r,
  truncations, user-defined families);
- :mod:`pydp_core.calibration`: the exact (epsilon, delta) profile, its inverse, the minimal scale and
  the choice of the Subbotin order (Vinterbo 2022);
- :mod:`pydp_core.special`: the special functions behind them (log-space normal CDF, regularised
  incomplete gamma function).
"""
from __future__ import annotations

import os as _os

__version__ = "0.1.0"

from ._loader import load_core as _load_core

_core = _load_core(_os.path.dirname(__file__), __version__)

from . import special  # noqa: E402
from .noise import *  # noqa: E402,F401,F403
from .noise import __all__ as _noise_all  # noqa: E402
from .calibration import *  # noqa: E402,F401,F403
from .calibration import __all__ as _calibration_all  # noqa: E402
from . import random  # noqa: E402
from .random import Random, as_random  # noqa: E402,F401
from .mechanisms import *  # noqa: E402,F401,F403
from .mechanisms import __all__ as _mechanisms_all  # noqa: E402
from . import manifolds  # noqa: E402

__all__ = ["special", "__version__", *_noise_all, *_calibration_all]

# accounting (issue 4): budgets, composition, conversions, the sensitivity index, Rao DP, the accountant
from . import gaussian, rao  # noqa: E402
from .budgets import *  # noqa: E402,F401,F403
from .budgets import __all__ as _budgets_all  # noqa: E402
from .composition import *  # noqa: E402,F401,F403
from .composition import __all__ as _composition_all  # noqa: E402
from .gaussian import ArsinhParameters, arsinh_parameters, gaussian_sigma  # noqa: E402
from .accountant import Accountant, BudgetExceededError  # noqa: E402

__all__ += [
    "gaussian",
    "rao",
    *_budgets_all,
    *_composition_all,
    "gaussian_sigma",
    "arsinh_parameters",
    "ArsinhParameters",
    "Accountant",
    "BudgetExceededError",
]

__all__ += ["random", "Random", "as_random", *_mechanisms_all]
from . import discrete  # noqa: E402
from .discrete import release_gaussian, release_laplace  # noqa: E402,F401

__all__ += ["discrete", "release_laplace", "release_gaussian"]
__all__ += ["manifolds"]

# columnar data, files, Spark and Dask (issue 7); spark and dask import their engines only when called
from . import etl, spark, dask  # noqa: E402
from .etl import privatize  # noqa: E402

__all__ += ["etl", "spark", "dask", "privatize"]
