"""The Laplace mechanism's exact Renyi curve (Mironov 2017, Table II), and the accountant's use of it.

The closed form is checked against a 50-digit quadrature of the divergence's definition from orders near 1
to large orders and from a tiny to a huge noise scale; the accountant's RDP total of Laplace spends is that
curve, below the randomised-response bound that holds for every pure-DP mechanism.
"""
import numpy as np
import pytest
from support import mpref

import pydp_core as dp
from pydp_core.accounting.guarantees import laplace_rdp_epsilon


@pytest.mark.parametrize("alpha", [1.001, 1.5, 2.0, 8.0, 32.0, 1000.0])
@pytest.mark.parametrize("b", [0.05, 1.0, 20.0, 1e4])
def test_laplace_rdp_against_mpmath(alpha, b):
    ref = float(mpref.laplace_renyi(alpha, b))
    assert laplace_rdp_epsilon(alpha, scale=b) == pytest.approx(ref, rel=1e-9)


def test_laplace_rdp_is_vectorised_and_capped_by_pure_dp():
    alphas = np.array([1.5, 2.0, 64.0, np.inf])
    got = laplace_rdp_epsilon(alphas, sensitivity=2.0, scale=4.0)
    assert got.shape == (4,)
    assert np.array_equal(got, [laplace_rdp_epsilon(a, sensitivity=2.0, scale=4.0) for a in alphas])
    assert got[-1] == 0.5 and np.all(got <= 0.5)
    with pytest.raises(ValueError, match="alpha"):
        laplace_rdp_epsilon(np.array([2.0, 1.0]), scale=1.0)


@pytest.mark.parametrize("alpha", [1.5, 4.0, 32.0])
def test_the_accountant_composes_the_laplace_curve(alpha):
    acc = dp.Accountant(dp.RDP(alpha, 1e6))
    acc.spend_laplace(scale=2.0, count=10)
    total = acc.total().epsilon
    exact = 10 * laplace_rdp_epsilon(alpha, scale=2.0)
    randomised_response = 10 * dp.PureDP(0.5).rdp_epsilon(alpha)
    assert total == pytest.approx(exact, rel=1e-12)
    assert exact < randomised_response
