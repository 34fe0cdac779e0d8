"""PLD.mu for a Gaussian: the bracket contains mu and is as narrow as docs/pld.md states."""
import pytest

from pydp_core.accounting.pld import PLD


@pytest.mark.parametrize("mu, width", [(1.0, 4e-6), (2.0, 3e-6), (3.0, 3e-6)])
def test_gdp_mu_bracket_contains_mu_within_the_documented_width(mu, width):
    iv = PLD.from_gdp(mu).mu()
    assert iv.lower <= mu <= iv.upper
    assert iv.width < width, iv
