"""Key ledgers of a test run's own.

Tests, benchmarks and studies draw keyed noise under fixed keys on every run (reproducible outputs and
measurements, not releases). The fixture below gives each test a fresh state directory for the per-key
ledgers and empty in-process ledger objects, so reuse of a key across tests is not a reuse of a release,
while reuse inside one test is still refused. Subprocesses inherit the directory through the environment.
The conftest files of tests/, bench/ and studies/ import it.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _own_key_ledgers(tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from pydp_core.io import ledger

    monkeypatch.setenv(ledger.STATE_DIR_ENV, str(tmp_path_factory.mktemp("state")))
    ledger._PROCESS_LEDGERS.clear()
    yield
    ledger._PROCESS_LEDGERS.clear()
