"""One privacy budget for one data set: a key, an accountant and a journal that every release goes through.

A :class:`Session` holds the total budget of a data set (any privacy definition the accountant knows), a
release key and, optionally, a durable journal. Each release made through it (:meth:`Session.privatize`,
:meth:`Session.aggregate`, :meth:`Session.top_k`, on numpy, pandas, pyarrow, polars, Spark or Dask data) is

1. described canonically, so that its randomness is its own (:func:`pydp_core.io.release_id`): two
   releases of a session never share noise, whatever their parameters;
2. recorded in the key's ledger under the session's id, and charged to the accountant, before any noise
   leaves; a release past the budget raises :class:`~pydp_core.BudgetExceededError` and nothing is
   released;
3. free when it repeats an earlier release exactly (same description, same data): the output is the same
   bit for bit, so nothing new is learnt and nothing is charged.

The composition of the charges is the accountant's: the tightest certified route it knows for the
budget's definition (the PLD where it applies, ``docs/accounting.md``). With a journal, several processes
(or several command-line runs, ``pydp-core ... --session FILE``) share one budget; the key's ledger
(``<key file>.ledger`` for a key file) refuses any release under the key made outside the session.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from typing import Any

from .accounting import Accountant, Budget
from .io.keys import check_key, generate_key
from .io.ledger import KeyLedger, SessionLedger, ledger_for_key

__all__ = ["Session"]

_RESERVED = ("key", "rng", "ledger", "accountant")


def journal_key_for(key: bytes) -> bytes:
    """The MAC key of a session's journal derived from its release key (for the command line, which keeps
    one secret: the key file)."""
    return hmac.new(check_key(key), b"pydp_core.session/journal", hashlib.sha256).digest()


class Session:
    """The privacy budget of one data set, charged by every release made through it.

    Parameters
    ----------
    budget : Budget
        The total budget: :class:`~pydp_core.PureDP`, :class:`~pydp_core.ApproxDP`, :class:`~pydp_core.ZCDP`,
        :class:`~pydp_core.GDP`, :class:`~pydp_core.RDP` or :class:`~pydp_core.RaoDP` (the limit of an
        :class:`~pydp_core.Accountant`).
    key : bytes, optional
        The 32-byte release key of the session (default: a fresh one, :func:`pydp_core.io.generate_key`;
        then only this object can repeat a release exactly).
    journal : str or os.PathLike, optional
        A durable, authenticated journal of the spends (:class:`~pydp_core.Accountant`); an existing journal
        is replayed, so the budget carries over between processes and runs. Needs ``journal_key``.
    journal_key : bytes, optional
        The journal's MAC key (at least 32 bytes, kept apart from the journal).
    ledger : str or os.PathLike, optional
        The key's ledger file (default: the key's ledger in the state directory; the command line uses
        ``<key file>.ledger``).

    Raises
    ------
    TypeError
        If ``budget`` is not a budget the accountant takes, or ``journal`` comes without ``journal_key``.
    pydp_core.io.KeyReuseError, JournalError
        If the ledger or the journal fails its authentication.

    Examples
    --------
    >>> import numpy as np, pydp_core as dp
    >>> s = dp.Session(dp.PureDP(1.0))
    >>> x = np.array([0.1, 0.5, 0.9])
    >>> a = s.privatize(x, dp.LaplaceMechanism(epsilon=0.5), bounds=(0, 1))
    >>> s.spent()
    PureDP(epsilon=0.5)
    >>> bool(np.array_equal(a, s.privatize(x, dp.LaplaceMechanism(epsilon=0.5), bounds=(0, 1))))  # a free repeat
    True
    >>> b = s.privatize(x, dp.LaplaceMechanism(epsilon=0.25), bounds=(0, 1))   # another release: its own noise
    >>> s.spent()
    PureDP(epsilon=0.75)
    >>> s.privatize(x, dp.LaplaceMechanism(epsilon=0.3), bounds=(0, 1))   # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    BudgetExceededError: spend refused: ...
    """

    def __init__(self, budget: Budget, *, key: bytes | None = None, journal: str | os.PathLike[str] | None = None,
                 journal_key: bytes | None = None, ledger: str | os.PathLike[str] | None = None) -> None:
        self._accountant: Accountant[Any] = Accountant(budget, journal=journal, journal_key=journal_key)
        self._init(key, ledger)

    @classmethod
    def open(cls, journal: str | os.PathLike[str], *, key: bytes, journal_key: bytes | None = None,
             ledger: str | os.PathLike[str] | None = None) -> Session:
        """The session of an existing journal (its budget is the one written in it).

        ``journal_key`` defaults to the one derived from ``key`` (what the command line uses).

        Raises
        ------
        JournalError
            If the file is not a journal or fails its authentication.
        """
        self = cls.__new__(cls)
        jkey = journal_key_for(key) if journal_key is None else journal_key
        self._accountant = Accountant.from_journal(journal, journal_key=jkey)
        self._init(key, ledger)
        return self

    def _init(self, key: bytes | None, ledger: str | os.PathLike[str] | None) -> None:
        self._key = generate_key() if key is None else check_key(key)
        jid = self._accountant.journal_id
        # A journaled session is the same session in every process that opens its journal; an in-memory one
        # is this object only.
        ident = secrets.token_hex(16) if jid is None else jid
        self.id = hmac.new(self._key, b"pydp_core.session/id\x00" + ident.encode(), hashlib.sha256).hexdigest()[:32]
        led: KeyLedger = ledger_for_key(self._key, ledger)
        self._ledger = SessionLedger(led, self.id)

    # -- the budget ---------------------------------------------------------------------------------------
    @property
    def budget(self) -> Budget:
        """The session's total budget."""
        result: Budget = self._accountant.limit
        return result

    @property
    def accountant(self) -> Accountant[Any]:
        """The accountant charged by the session's releases (read it; spend through the session)."""
        return self._accountant

    def spent(self) -> Budget:
        """The budget spent so far, in the budget's definition (the accountant's tightest certified total)."""
        result: Budget = self._accountant.total()
        return result

    def remaining(self) -> Budget:
        """What is left of the budget, in its definition."""
        result: Budget = self._accountant.remaining()
        return result

    def _summary(self) -> dict[str, Any]:
        return {"id": self.id, "budget": repr(self.budget), "spent": repr(self.spent())}

    # -- releases -----------------------------------------------------------------------------------------
    @staticmethod
    def _check(kwargs: dict[str, Any]) -> None:
        given = [k for k in _RESERVED if k in kwargs]
        if given:
            raise TypeError(f"a Session supplies {', '.join(given)} itself: leave {'them' if len(given) > 1 else 'it'} out")

    def privatize(self, data: Any, mechanism: Any, *, columns: Any = None, **kwargs: Any) -> Any:
        """:func:`pydp_core.privatize` under the session's key, charged to its budget.

        Spark and Dask DataFrames go to :func:`pydp_core.spark.privatize` / :func:`pydp_core.dask.privatize`
        (recorded and charged at the driver). The release report (pandas ``attrs``, Arrow metadata) gains
        ``session``: the session's id, budget and spend so far.

        Raises
        ------
        BudgetExceededError
            If the release would take the spend past the budget (nothing is released).
        KeyReuseError
            If the key was used outside this session, or the release repeats one with other data.
        TypeError
            If ``key``, ``rng``, ``ledger`` or ``accountant`` is given (the session supplies them).
        """
        self._check(kwargs)
        mod = type(data).__module__.split(".")[0]
        common = dict(key=self._key, columns=columns, ledger=self._ledger, accountant=self._accountant, **kwargs)
        if mod == "pyspark":
            from .io.spark import privatize as spark_privatize

            return spark_privatize(data, mechanism, **common)
        if mod == "dask":
            from .io.dask import privatize as dask_privatize

            return dask_privatize(data, mechanism, **common)
        from .io.frames import REPORT_KEY, privatize

        return self._noted(privatize(data, mechanism, **common), REPORT_KEY)

    def privatize_file(self, source: Any, target: Any, mechanism: Any, *, columns: Any, **kwargs: Any) -> int:
        """:func:`pydp_core.io.privatize_file` under the session's key, charged to its budget.

        Returns
        -------
        int
            The number of rows written.

        Raises
        ------
        BudgetExceededError, KeyReuseError, TypeError
            As :meth:`privatize`.
        """
        self._check(kwargs)
        from .io.files import privatize_file

        return privatize_file(source, target, mechanism, key=self._key, columns=columns, ledger=self._ledger,
                              accountant=self._accountant, **kwargs)

    def aggregate(self, table: Any, **kwargs: Any) -> Any:
        """:func:`pydp_core.aggregation` under the session's key, charged to its budget (its composed
        guarantee, the report's ``budget``).

        Spark and Dask DataFrames are aggregated by their engines (:func:`pydp_core.spark.aggregate`,
        :func:`pydp_core.dask.aggregate`: charged once, on the driver) and come back as their kind. The
        report gains ``session``.

        Raises
        ------
        BudgetExceededError, KeyReuseError, TypeError
            As :meth:`privatize`.
        """
        self._check(kwargs)
        return self._table_release("aggregate", table, kwargs)

    def top_k(self, table: Any, *, column: str, k: int, privacy_unit: str, max_partitions: int, epsilon: float,
              delta: float = 0.0, **kwargs: Any) -> Any:
        """:func:`pydp_core.top_k` under the session's key, charged to its budget (the release's epsilon and
        delta) before any noise is drawn.

        The arguments are those of :func:`pydp_core.top_k` but ``key``, ``ledger`` and ``accountant``. Spark
        and Dask DataFrames are ranked by their engines (:func:`pydp_core.spark.top_k`,
        :func:`pydp_core.dask.top_k`: charged once, on the driver) and come back as their kind. An exact
        repeat is free and gives the same output; any other top-k (another ``k``, column, budget, ...) is
        another release with its own noise. The report gains ``session``.

        Raises
        ------
        BudgetExceededError, KeyReuseError, TypeError
            As :meth:`privatize`.
        """
        self._check(kwargs)
        return self._table_release("top_k", table, dict(column=column, k=k, privacy_unit=privacy_unit,
                                                        max_partitions=max_partitions, epsilon=epsilon, delta=delta,
                                                        **kwargs))

    def _table_release(self, name: str, table: Any, kwargs: dict[str, Any]) -> Any:
        """``name`` (``aggregate`` or ``top_k``) of ``table`` under the session: the Spark or Dask engine for
        their DataFrames, the local one otherwise; the report gains ``session``."""
        import importlib

        from .aggregation import REPORT_KEY

        mod = type(table).__module__.split(".")[0]
        where = {"pyspark": ".spark", "dask": ".dask"}.get(mod, ".aggregation")
        release = getattr(importlib.import_module(where, __package__), name)
        out = release(table, key=self._key, ledger=self._ledger, accountant=self._accountant, **kwargs)
        return self._noted(out, REPORT_KEY)

    def _noted(self, out: Any, report_key: str) -> Any:
        """``out`` with the session's summary added to its report (where the kind of object carries one)."""
        import json

        attrs = getattr(out, "attrs", None)
        if isinstance(attrs, dict) and isinstance(attrs.get(report_key), dict):
            attrs[report_key] = {**attrs[report_key], "session": self._summary()}
            return out
        meta = getattr(getattr(out, "schema", None), "metadata", None)
        if meta and report_key.encode() in meta and hasattr(out, "replace_schema_metadata"):
            report = {**json.loads(meta[report_key.encode()]), "session": self._summary()}
            return out.replace_schema_metadata({**meta, report_key.encode(): json.dumps(report, sort_keys=True).encode()})
        return out

    def __repr__(self) -> str:
        return f"Session(budget={self.budget!r}, spent={self.spent()!r})"
