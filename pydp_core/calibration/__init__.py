"""Exact (epsilon, delta) analysis and calibration of additive symmetric log-concave noise.

Vinterbo (AISTATS 2022), Lemma 1: q(d) + scale * X, with X from a standard symmetric log-concave
family f = exp(-psi) and sensitivity D, is (epsilon, delta)-DP if and only if

    delta >= S((t - D) / scale) - e^epsilon S(t / scale),
    t = sup{z : psi(z / scale) - psi((z - D) / scale) <= epsilon},

with S the survival function. Lemma 2: the minimal scale is linear in D and decreasing in epsilon and
delta, so calibration is a monotone one-dimensional root find. The C++ core evaluates the condition in a
cancellation-free log form (see ``csrc/include/pydp/calibration/profile.hpp``), valid for delta down to
1e-300 and epsilon up to the overflow range, and every calibration verifies its own result.

Vector queries (Theorem 9, with a correction). The paper states that iid Subbotin_r noise in every
coordinate is (epsilon, delta)-DP for a query with l_r sensitivity D exactly when the scalar mechanism
with sensitivity D is. That holds for r = 2 (the Gaussian is rotation invariant, so the l_2 pairing is
exact) and, in our numerical checks, for r = 1 (Laplace with l_1). It does NOT hold for other r: in
two dimensions, with r = 3, epsilon = 1 and the scale calibrated for delta = 0.01, the diagonal shift
(2^(-1/3), 2^(-1/3)) of l_3 norm 1 has delta = 0.01129 (r = 1.5: 0.01034); see
``docs/calibration.md``. So for r not in {1, 2} the scalar calibration
is exact per coordinate (a change confined to one coordinate), and :func:`select_subbotin` reproduces
equation (5) of the paper as printed, which is an optimisation of the paper's criterion, not a vector
privacy guarantee. :func:`linear_query_sensitivity` gives the l_p sensitivity of linear queries
(Theorem 10). :func:`calibrate_box` is the exact replacement for box-bounded vector queries (such as
the mean of records in an l_inf ball), under k-fold composition too: the product of the one-dimensional
privacy-loss distributions at the worst (corner) shift. It runs on the privacy-loss distributions of the
accounting, and lives there (:mod:`pydp_core.accounting.pld.box`); it is re-exported here on first use,
so that importing this package does not load the accounting.
"""
from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING, Any

from .comparison import (
    geng_truncated_laplace,
    laplace_logistic_scale_ratio,
    variance_ratio,
)
from .profile import (
    CalibrationError,
    epsilon_for_delta,
    log_privacy_profile,
    minimal_scale,
    privacy_profile,
)
from .selection import SubbotinChoice, linear_query_sensitivity, select_subbotin

if TYPE_CHECKING:
    from ..accounting.pld.box import BoxCalibration, box_pld, calibrate_box

# Names defined below this package (PEP 562: loaded on first access).
_LAZY = {name: "pydp_core.accounting.pld.box" for name in ("box_pld", "calibrate_box", "BoxCalibration")}

__all__ = [
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
    "box_pld",
    "calibrate_box",
    "BoxCalibration",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
