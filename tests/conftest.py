"""Shared test fixtures; puts tests/ on sys.path so that tests import ``support``."""
import sys
from pathlib import Path

import mpmath
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _mp_precision():
    """Every test starts with 50-digit mpmath arithmetic (references are computed at this precision)."""
    with mpmath.workdps(50):
        yield
