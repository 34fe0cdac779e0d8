"""The studies reproduce the papers' figures and check their claims; their scripts import one another."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _own_key_ledgers(tmp_path_factory, monkeypatch):
    """The studies simulate releases under fixed keys on every run: their key ledgers live in a directory
    of the run's own, not in the user's state directory."""
    from pydp_core.io import ledger

    monkeypatch.setenv(ledger.STATE_DIR_ENV, str(tmp_path_factory.mktemp("state")))
    yield
