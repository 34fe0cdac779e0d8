"""User-defined log-concave families (the slower scipy path) against the built-in kernels."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import pydp_core as dp


def _custom_gaussian():
    return dp.LogConcaveFamily(stats.norm.logpdf, stats.norm.cdf, logcdf=special.log_ndtr, variance=1.0, name="normal")


def _custom_logistic():
    return dp.LogConcaveFamily(
        stats.logistic.logpdf, stats.logistic.cdf, logcdf=stats.logistic.logcdf, mlr_bounded=True, name="logistic"
    )


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (0.3, 1e-2), (4.0, 1e-12)])
def test_custom_gaussian_matches_builtin(eps, delta):
    custom = _custom_gaussian()
    s_builtin = dp.minimal_scale(dp.Gaussian(), epsilon=eps, delta=delta, sensitivity=2.0)
    s_custom = dp.minimal_scale(custom, epsilon=eps, delta=delta, sensitivity=2.0)
    assert s_custom == pytest.approx(s_builtin, rel=1e-9)
    assert dp.privacy_profile(custom, epsilon=eps, scale=s_custom, sensitivity=2.0) <= delta
    assert dp.privacy_profile(custom, epsilon=eps, scale=3.0) == pytest.approx(dp.privacy_profile(dp.Gaussian(), epsilon=eps, scale=3.0), rel=1e-9)
    assert dp.epsilon_for_delta(custom, delta=delta, scale=3.0) == pytest.approx(dp.epsilon_for_delta(dp.Gaussian(), delta=delta, scale=3.0), rel=1e-8)


def test_custom_logistic_matches_theorem4():
    custom = _custom_logistic()
    for eps, delta in [(1.0, 1e-6), (0.5, 0.0), (2.0, 1e-3)]:
        assert dp.minimal_scale(custom, epsilon=eps, delta=delta) == pytest.approx(dp.minimal_scale(dp.Logistic(), epsilon=eps, delta=delta), rel=1e-9)


def test_custom_family_evaluation_and_variance():
    custom = _custom_gaussian()
    x = np.array([-3.0, 0.0, 1.5])
    np.testing.assert_allclose(custom.logsf(x), dp.Gaussian().logsf(x), rtol=1e-14)
    np.testing.assert_allclose(custom.ppf([0.1, 0.5, 0.9]), stats.norm.ppf([0.1, 0.5, 0.9]), rtol=1e-12, atol=1e-15)
    unknown = dp.LogConcaveFamily(stats.laplace.logpdf, stats.laplace.cdf, mlr_bounded=True)
    assert unknown.variance == pytest.approx(2.0, rel=1e-8)


def test_custom_family_rejects_non_symmetric_or_non_log_concave():
    with pytest.raises(ValueError, match="not symmetric"):
        dp.LogConcaveFamily(stats.gumbel_r.logpdf, stats.gumbel_r.cdf)
    with pytest.raises(ValueError, match="not concave"):
        dp.LogConcaveFamily(stats.t(3).logpdf, stats.t(3).cdf)  # Student t is not log-concave
    with pytest.raises(TypeError, match="logpdf must be callable"):
        dp.LogConcaveFamily(1.0, stats.norm.cdf)
    with pytest.raises(ValueError, match="delta = 0"):
        dp.minimal_scale(_custom_gaussian(), epsilon=1.0, delta=0.0)
