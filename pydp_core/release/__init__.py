"""Floating-point-safe releases: exact integer noise (discrete Laplace, discrete Gaussian, lattice Subbotin_r
and Logistic tables) on a power-of-two grid.

Plain floating-point noise is not differentially private: the set of doubles that ``x + noise`` can reach
depends on ``x``, and the low-order bits of one output can tell two neighbouring inputs apart (Mironov
2012). The release path here is safe by construction:

1. **Grid.** The output lies on the grid ``g * Z`` with ``g = 2**e`` a power of two chosen from the
   scale, as Google's library chooses its granularity, and from the sensitivity:
   ``e = floor(log2(min(scale, sensitivity))) - grid_bits`` (default ``grid_bits = 16``), raised if
   needed so that the scale spans at most ``2**30`` (Gaussian) or ``2**38`` (Laplace) grid steps. The
   rounding charge below is then at most ``2**-grid_bits`` of the sensitivity.
2. **Rounding, charged to the sensitivity.** Each value is rounded to the nearest grid point (ties to
   even). Two inputs at distance at most ``sensitivity`` round to grid indices at most
   ``k = floor(D) + 1`` apart, ``D = sensitivity / g`` (``k = D`` when D is an even integer), and the
   privacy analysis uses the integer shift ``k``.
3. **Exact integer noise.** An integer ``Y`` is drawn exactly from the discrete Laplace,
   ``P(y) ~ exp(-|y| / t)``, or the discrete Gaussian, ``P(y) ~ exp(-y**2 / (2 sigma2))`` (Canonne,
   Kamath and Steinke 2020), by integer arithmetic only, from the ChaCha20 CSPRNG of
   :class:`pydp_core.Random`. The output is ``(round(x / g) + Y) * g``, exactly representable (checked).
4. **Exact guarantee and calibration.** The (epsilon, delta) profile of the discrete mechanism for the
   shift ``k`` is computed exactly (closed form for the discrete Laplace; a cancellation-free sum in log
   space for the discrete Gaussian). Calibration returns the smallest integer ``t`` (Laplace) or integer
   ``sigma2`` (Gaussian, in grid steps squared) meeting (epsilon, delta), verifies it and verifies that one
   step less fails; otherwise it raises :class:`CalibrationError`.

By default the guarantee is per value: every entry of ``values`` is one release of a scalar query whose
value changes by at most ``sensitivity`` between neighbouring data sets. With ``vector=True`` (or
``dimension=d`` in the calibrations) ``values`` is one vector query with l1 (Laplace: pure epsilon-DP with
the l1 rounding charge ``floor(D) + d``) or l2 sensitivity (Gaussian: the zCDP bound of the product of
discrete Gaussians with the l2 charge ``D + sqrt(d)``, valid but not exact). The mechanisms'
``privatize(values, release=True)`` uses the vector form for arrays.

Bad input: non-finite values, and values beyond ``2**52`` grid steps (where the grid could not be
represented exactly), raise ``ValueError``. Nothing is clamped unless ``bounds=(low, high)`` is given.

Subbotin_r (any real r >= 1) and Logistic noise have a lattice release (:func:`release_subbotin`,
:func:`release_logistic`, plans from :func:`calibrate_subbotin_release` and
:func:`calibrate_logistic_release`): the same grid and rounding charge, and noise whose law is an
exactly specified table of integer weights ``W(y) ~ floor(2**P w(y / s))`` (w the standard density up to
its normaliser), sampled by exact integer inversion; the table's (epsilon, delta) profile is computed
from the integers themselves (an upper bound), the worst shift being the charged k because the table is
symmetric and non-increasing in |y|. These are per value and need delta > 0 (finite support), except the
Logistic at delta = 0 (:class:`PureLogisticRelease`): the table down to ``2**(P - 12)`` with an exact
geometric tail beyond, pure epsilon-DP by a certified bound on the privacy loss. A
``timing_stable=True`` plan costs three random words and a fixed number of search steps per value, from a
table kept within the first-level cache (``release_noise(..., timing_stable=True)`` gives the same for
the Laplace and Gaussian shapes).

Vector queries with lattice noise (Vinterbo 2022, Section 4.1): :func:`calibrate_vector_release` and
:func:`release_vector` release m coordinates (or k vectors under one total budget) with iid table noise,
calibrated through the certified PLD of the product law at the dominating shift of the rounded
sensitivity ball (:func:`ball_shifts`: the corner of the box for l_inf, the sorted envelope for l_1 and
l_2); :func:`select_subbotin` with ``release=True`` (also :func:`select_subbotin_release`) picks the order
with the smallest lattice RMSE and returns its plan. The
Subbotin and Logistic mechanisms use this for arrays (an l_inf vector query).
Truncated and user-defined families are refused by :func:`release_noise` (docs/release.md). Floating-point
noise stays available for simulations through :class:`pydp_core.Random`; it is not a release.

Timing: see docs/release.md. The time to draw the noise depends on the noise values (rejection
sampling), never on the data; adding the noise to the data has no data-dependent branches.
"""
from __future__ import annotations

from typing import Any

from .dispatch import release_noise
from .lattice import (
    LatticeRelease,
    PureLogisticRelease,
    calibrate_logistic_release,
    calibrate_subbotin_release,
    release_logistic,
    release_subbotin,
)
from .plans import (
    DEFAULT_GRID_BITS,
    SAFE_RELEASE_FAMILIES,
    GridRelease,
    ReleaseNotSupportedError,
    calibrate_gaussian_release,
    calibrate_laplace_release,
    release_gaussian,
    release_laplace,
)
from .profile import (
    discrete_gaussian_delta,
    discrete_gaussian_log_cdf,
    discrete_gaussian_log_delta,
    discrete_laplace_delta,
    discrete_laplace_log_cdf,
    discrete_laplace_log_delta,
)
from .samplers import sample_discrete_gaussian, sample_discrete_laplace
from .selection import SubbotinReleaseChoice, select_subbotin, select_subbotin_release
from .vector import LatticeVectorRelease, ball_shifts, calibrate_vector_release, release_vector

__all__ = [
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "discrete_laplace_log_delta",
    "discrete_laplace_delta",
    "discrete_gaussian_log_delta",
    "discrete_gaussian_delta",
    "discrete_laplace_log_cdf",
    "discrete_gaussian_log_cdf",
    "GridRelease",
    "calibrate_laplace_release",
    "calibrate_gaussian_release",
    "release_laplace",
    "release_gaussian",
    "release_noise",
    "LatticeRelease",
    "PureLogisticRelease",
    "calibrate_subbotin_release",
    "calibrate_logistic_release",
    "release_subbotin",
    "release_logistic",
    "LatticeVectorRelease",
    "calibrate_vector_release",
    "release_vector",
    "ball_shifts",
    "select_subbotin",
    "select_subbotin_release",
    "SubbotinReleaseChoice",
    "ReleaseNotSupportedError",
    "SAFE_RELEASE_FAMILIES",
    "DEFAULT_GRID_BITS",
]


def __getattr__(name: str) -> Any:
    if name == "ReleaseNotSupported":  # the former name
        import warnings

        warnings.warn("pydp_core.release.ReleaseNotSupported is deprecated: use ReleaseNotSupportedError",
                      DeprecationWarning, stacklevel=2)
        return ReleaseNotSupportedError
    raise AttributeError(f"module 'pydp_core.release' has no attribute {name!r}")
