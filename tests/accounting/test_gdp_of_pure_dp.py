"""PureDP(eps).to_gdp(): mu = -2 Phi^-1(1 / (1 + e^eps)) (Dong, Roth and Su 2022),
rounded up, against mpmath from eps = 5e-324 to 1e300.

The check of "never below" is the defining inequality itself, Phi(-mu/2) <= 1/(1 + e^eps) at the returned
mu (Phi(-x) decreases in x), in enough digits to resolve it (p - 1/2 ~ eps/4 needs -log10(eps) extra
digits). Accuracy: within 1e-13 relative of the exact mu, from 2 sqrt 2 erfinv(tanh(eps/2)) for eps < 1 and
from a root of log Phi(-x) = -log(1 + e^eps) for larger eps.
"""
import math

import mpmath as mp
import numpy as np
import pytest

import pydp_core as dp
from pydp_core import _core

EPSILONS = [5e-324, 1e-320, 1e-300, 1e-200, 1e-100, 1e-30, 1e-17, 1e-14, 1e-10, 1e-5, 1e-3, 0.01, 0.0499,
            0.05, 0.0501, 0.1, 0.5, 1.0, 2.0, 7.5, 30.0, 100.0, 700.0, 710.0, 1000.0, 1e4, 1e6, 1e100, 1e249,
            1e250, 1e300]


def _log_ncdf_neg(x):
    """log Phi(-x); beyond x = 1e10 the upper bound log(phi(x) / x), within 1/x^2 < 1e-20 of it (mpmath's
    ncdf cannot form exp(-x^2/2) once x^2 has hundreds of digits)."""
    if x > 1e10:
        return -x * x / 2 - mp.log(x) - mp.log(mp.sqrt(2 * mp.pi))
    return mp.log(mp.ncdf(-x))


def _log_p(e):
    """log(1 / (1 + e^eps)) (the e^-eps term is below 1e-434 beyond eps = 1000)."""
    if e > 1000:
        return -e
    return -mp.log1p(mp.exp(e)) if e < 1 else -(e + mp.log1p(mp.exp(-e)))


def _exact_mu(eps: float):
    e = mp.mpf(eps)
    if eps < 1:
        return 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(e / 2))
    log_p = _log_p(e)
    x = mp.sqrt(2 * e) if eps > 50 else mp.mpf(1)
    for _ in range(200):  # Newton on log Phi(-x) = log p; d/dx log Phi(-x) = -phi(x) / Phi(-x)
        lphi = _log_ncdf_neg(x)
        step = (lphi - log_p) / -mp.exp(-x * x / 2 - mp.log(mp.sqrt(2 * mp.pi)) - lphi)
        x -= step
        if abs(step) <= x * mp.mpf(10) ** (-mp.mp.dps + 5):
            break
    return 2 * x


@pytest.mark.parametrize("eps", EPSILONS)
def test_pure_dp_mu_certified_and_accurate(eps):
    mu = dp.PureDP(eps).to_gdp().mu
    extra = int(abs(math.log10(eps)))  # p - 1/2 ~ eps/4 for tiny eps; x^2/2 ~ eps cancels in log space for huge eps
    with mp.workdps(60 + extra):
        e = mp.mpf(eps)
        # Phi(-mu/2) <= p = 1/(1 + e^eps), compared in log space
        log_p = _log_p(e)
        assert _log_ncdf_neg(mp.mpf(mu) / 2) <= log_p, f"mu {mu!r} below the exact value at eps {eps!r}"
        exact = _exact_mu(eps)
        rel = float(mp.mpf(mu) / exact - 1)
    # relative 1e-13, or two units of the subnormal spacing for a subnormal mu
    assert rel >= 0 and (rel <= 1e-13 or mu - float(exact) <= 2 * 5e-324), (eps, mu, mp.nstr(exact, 20), rel)


def test_pure_dp_mu_edges_and_vectorised():
    assert dp.PureDP(0.0).to_gdp().mu == 0.0
    e = np.array([[1e-300, 1.0], [30.0, 1e4]])
    out = _core.accounting.pure_dp_mu(e)
    assert out.shape == e.shape
    assert [float(v) for v in out.ravel()] == [dp.PureDP(float(v)).to_gdp().mu for v in e.ravel()]
    assert _core.accounting.pure_dp_mu(np.array([math.inf]))[0] == math.inf
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            _core.accounting.pure_dp_mu(np.array([bad]))
