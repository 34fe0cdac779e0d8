"""Shared test fixtures."""
import mpmath
import pytest


@pytest.fixture(autouse=True)
def _mp_precision():
    """Every test starts with 50-digit mpmath arithmetic (references are computed at this precision)."""
    with mpmath.workdps(50):
        yield
