"""The declared batch sampler written in the accountant's journal: replayed with the journal, and a journal
written under one sampler refused under another."""
import pytest

from pydp_core.accounting import Accountant
from pydp_core.accounting.budgets import ApproxDP
from pydp_core.accounting.journal import Journal, JournalError

KEY = bytes(range(32))


def test_the_sampler_is_in_the_header_and_restored(tmp_path):
    path = tmp_path / "j"
    acc = Accountant(ApproxDP(2.0, 1e-5), journal=path, journal_key=KEY, sampler="shuffle")
    assert Journal.read_sampler(path) == "shuffle"
    again = Accountant.from_journal(path, journal_key=KEY)
    assert again.sampler == "shuffle" and again.journal_id == acc.journal_id


def test_another_sampler_is_refused(tmp_path):
    path = tmp_path / "j"
    Accountant(ApproxDP(2.0, 1e-5), journal=path, journal_key=KEY, sampler="random_allocation")
    with pytest.raises(JournalError, match="sampler 'random_allocation'"):
        Accountant(ApproxDP(2.0, 1e-5), journal=path, journal_key=KEY, sampler="poisson")
    with pytest.raises(JournalError, match="sampler"):
        Accountant(ApproxDP(2.0, 1e-5), journal=path, journal_key=KEY)


def test_no_sampler_writes_none_and_bad_types_are_refused(tmp_path):
    path = tmp_path / "j"
    Accountant(ApproxDP(2.0, 1e-5), journal=path, journal_key=KEY)
    assert Journal.read_sampler(path) is None and Accountant.from_journal(path, journal_key=KEY).sampler is None
    with pytest.raises(TypeError, match="sampler"):
        Journal(tmp_path / "k", key=KEY, limit={"type": "x"}, sampler=3)
