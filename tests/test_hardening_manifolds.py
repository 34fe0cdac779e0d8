"""Hardening of the manifold privacy profile and mu (issue 12, item 3 and its sweep): the circle's profile
near its largest epsilon, rounded up, against an independent 50-digit reference (tests/support/mpref.py)."""
import math

import mpmath as mp
import numpy as np
import pytest
from support import mpref as R

from pydp_core import manifolds as M
from pydp_core.manifolds import privacy as P


def _largest(sigma, D):
    """The largest double below the exact largest loss D (2 pi - D) / (2 sigma^2)."""
    with mp.workdps(60):
        v = mp.mpf(D) * (2 * mp.pi - mp.mpf(D)) / (2 * mp.mpf(sigma) ** 2)
    f = float(v)
    return f if mp.mpf(f) < v else float(np.nextafter(f, 0.0))


# sigma, D (nearly equal points, moderate, antipodal and one ulp short of antipodal)
CIRCLE_CASES = [
    (1e-3, math.pi), (1e-3, 3.141592), (1e-2, math.pi - 1e-9), (0.1, 1e-3), (0.1, 1.0), (0.3, 0.5),
    (1.0, 1e-9), (1.0, 1.0), (1.0, math.pi), (3.0, 3e-9), (3.0, 0.001), (100.0, 1e-7), (100.0, 1.0),
    (1e3, math.pi),
]
FRACTIONS = [0.0, 0.5, 0.99, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12, "last"]


def _circle_tolerance(sigma):
    return math.expm1(2 * P._circle_log_error(sigma))


@pytest.mark.parametrize("sigma,D", CIRCLE_CASES)
def test_circle_profile_rounded_up_near_largest_loss(sigma, D):
    """delta(eps) is never below the 50-digit reference and within the documented error of it, from
    eps = 0 to one double below the largest loss (before the fix: up to 5x too large or 50% too small
    there, from the loss computed at rounded positions and an ill-conditioned arcsin near D = pi)."""
    emax = _largest(sigma, D)
    eps = [emax if f == "last" else emax * f for f in FRACTIONS]
    got = M.privacy_profile(M.Circle(), epsilon=eps, sigma=sigma, sensitivity=D)
    tol = _circle_tolerance(sigma)
    for e, g in zip(eps, got):
        ref = R.circle_delta(e, sigma, D)
        if ref < R.SUB_ULP:  # below the doubles: the smallest positive double, never 0
            assert g == (0.0 if ref == 0 else R.SUB_ULP), (sigma, D, e, g)
            continue
        assert mp.mpf(float(g)) >= min(ref, 1), (sigma, D, e, g, ref)
        assert g <= float(ref) * (1 + tol) + R.SUB_ULP, (sigma, D, e, g, mp.nstr(ref, 17))


def test_circle_profile_zero_from_largest_loss_on():
    for sigma, D in ((0.5, 1.0), (1.0, math.pi), (1e-3, 3.0)):
        emax = _largest(sigma, D)
        up = float(np.nextafter(emax, math.inf))
        assert M.privacy_profile(M.Circle(), epsilon=[up, 2 * emax], sigma=sigma, sensitivity=D).tolist() == [0.0, 0.0]
        assert M.privacy_profile(M.Circle(), epsilon=emax, sigma=sigma, sensitivity=D) > 0.0


def test_circle_profile_at_most_one():
    """The upward rounding never claims delta > 1 (sigma = 1e-3, antipodal points, where the profile is
    within 1e-9 of 1)."""
    g = M.privacy_profile(M.Circle(), epsilon=[0.0, 1e6, 4.9e6], sigma=1e-3, sensitivity=math.pi)
    assert np.all(g <= 1.0) and g[0] == 1.0
