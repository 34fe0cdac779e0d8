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


@pytest.fixture(autouse=True)
def _fresh_process_ledgers(tmp_path_factory, monkeypatch):
    """Each test is its own session: the in-process key ledgers start empty and the per-key ledgers of key
    files live in a directory of the test's own (tests reuse fixed keys across tests on purpose, for
    reproducible outputs; reuse inside one test is still refused). Subprocesses inherit the directory."""
    from pydp_core.io import ledger

    monkeypatch.setenv(ledger.STATE_DIR_ENV, str(tmp_path_factory.mktemp("state")))
    ledger._PROCESS_LEDGERS.clear()
    yield
    ledger._PROCESS_LEDGERS.clear()
