"""An append-only, authenticated, durable journal of privacy spends.

The accountant's total is only as good as its record. The journal makes the record

- durable: every entry is written and flushed to disk (``fsync`` of the file, and of its folder when the
  file is created) before the spend returns, so a spend is never lost when the process dies after it;
- append-only and authenticated: the first line holds the limit, every line carries an HMAC-SHA256 over
  its content and the previous line's MAC, under a 32-byte key that the user keeps (not in the file).
  An edited limit, an edited, removed or reordered spend, or a file written under another key fails the
  check when the journal is opened, and the journal is refused.

Removing lines from the end of the file cannot be told from a journal that was never written further; keep
a copy of the file's length (or of its last MAC, :attr:`Journal.head`) where the job records its outputs
when that matters.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Iterator
from typing import Any

from .._chain import ChainedLog

__all__ = ["Journal", "JournalError"]

_FORMAT = "pydp_core.Accountant.journal/1"


class JournalError(ValueError):
    """The journal failed its authentication or does not belong to this accountant."""


class Journal:
    """An authenticated append-only journal file (one JSON line per entry, HMAC-chained).

    Several processes may share one journal: :meth:`transaction` holds the file's lock and gives the
    entries as they are on disk, so a writer decides on everything written before it (see
    :mod:`pydp_core._chain`).

    Parameters
    ----------
    path : str or os.PathLike
        The journal file; created (with mode 0600) when it does not exist.
    key : bytes
        At least 32 bytes kept by the user; the MACs are keyed by it.
    limit : dict
        The accountant's limit as a JSON-able mapping: written as the header of a new journal (with a random
        identifier, :attr:`id`), and compared with the header of an existing one.
    sampler : str, optional
        The batch sampler the spends are declared for (``Accountant(sampler=...)``): written in the header
        of a new journal and compared with the header of an existing one, so spends recorded under one
        sampler are never replayed under another. None (the default) writes no sampler.

    Raises
    ------
    JournalError
        If an existing file fails its authentication, or holds another limit or sampler.
    TypeError
        If ``key`` is not bytes of at least 32 bytes, or ``sampler`` is not a string or None.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "budget.journal")
    >>> j = Journal(path, key=bytes(32), limit={"kind": "PureDP", "epsilon": 1.0})
    >>> j.append({"kind": "laplace", "scale": 2.0})
    >>> Journal(path, key=bytes(32), limit={"kind": "PureDP", "epsilon": 1.0}).entries
    [{'kind': 'laplace', 'scale': 2.0}]
    """

    def __init__(self, path: str | os.PathLike[str], *, key: bytes, limit: dict[str, Any],
                 sampler: str | None = None) -> None:
        if not isinstance(key, (bytes, bytearray)) or len(key) < 32:
            raise TypeError("key must be bytes of length >= 32 (keep it apart from the journal)")
        if sampler is not None and not isinstance(sampler, str):
            raise TypeError(f"sampler must be a string or None, got {type(sampler).__name__}")
        self._sampler = sampler
        mac_key = hmac.new(bytes(key), b"pydp_core.journal/mac", hashlib.sha256).digest()
        self._log = ChainedLog(path, mac_key, field="entry", error=JournalError, what="journal")
        self._path = self._log.path
        self._limit = limit
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self._id = ""
        self._owner: int | None = None
        with self.transaction():
            pass

    @staticmethod
    def read_limit(path: str | os.PathLike[str]) -> Any:
        """The limit written in a journal's header (not verified: opening the journal verifies it).

        Raises
        ------
        JournalError
            If the file has no readable header.
        """
        return Journal._read_header(path)["limit"]

    @staticmethod
    def read_sampler(path: str | os.PathLike[str]) -> str | None:
        """The batch sampler written in a journal's header, or None (not verified, as :meth:`read_limit`).

        Raises
        ------
        JournalError
            If the file has no readable header, or its sampler is not a string.
        """
        sampler = Journal._read_header(path).get("sampler")
        if sampler is not None and not isinstance(sampler, str):
            raise JournalError(f"the journal {os.fspath(path)!r} holds a malformed sampler")
        return sampler

    @staticmethod
    def _read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
        try:
            with open(path, "rb") as fh:
                header = json.loads(fh.readline().decode("utf-8"))["entry"]
            header["limit"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            raise JournalError(f"{os.fspath(path)!r} is not an accountant journal") from None
        if not isinstance(header, dict):
            raise JournalError(f"{os.fspath(path)!r} is not an accountant journal")
        return header

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The spends recorded so far, oldest first (as last read from the file, verified)."""
        return [dict(e) for e in self._entries]

    @property
    def head(self) -> str:
        """The MAC of the last line: record it elsewhere to detect a journal cut short later."""
        return self._log.head

    @property
    def id(self) -> str:
        """The journal's identifier: random, written in its header when it was created."""
        return self._id

    @contextlib.contextmanager
    def transaction(self) -> Iterator[list[dict[str, Any]]]:
        """Hold the journal's lock (this process's threads and other processes); yield the entries as on disk.

        :meth:`append` inside the block writes after everything read here.
        """
        with self._lock, self._log.locked() as bodies:
            if not bodies:
                header = {"format": _FORMAT, "limit": self._limit, "id": secrets.token_hex(16)}
                if self._sampler is not None:
                    header["sampler"] = self._sampler
                self._log.append(header)
                bodies = [header]
            found = bodies[0]
            if not isinstance(found, dict) or found.get("format") != _FORMAT:
                raise JournalError(f"{self._path!r} is not an accountant journal")
            if json.dumps(found.get("limit"), sort_keys=True) != json.dumps(self._limit, sort_keys=True):
                raise JournalError(f"the journal {self._path!r} was written for another limit ({found.get('limit')!r})")
            if found.get("sampler") != self._sampler:
                raise JournalError(f"the journal {self._path!r} was written for the sampler {found.get('sampler')!r}, "
                                   f"not {self._sampler!r}")
            self._id = str(found.get("id") or self._log.head)
            self._entries = [dict(e) for e in bodies[1:]]
            self._owner = threading.get_ident()
            try:
                yield self.entries
            finally:
                self._owner = None

    def append(self, entry: dict[str, Any]) -> None:
        """Write ``entry`` durably (file flushed to disk) before returning (in a :meth:`transaction`, or alone)."""
        if self._owner == threading.get_ident():
            self._log.append(dict(entry))
            self._entries.append(dict(entry))
            return
        with self.transaction():
            self._log.append(dict(entry))
            self._entries.append(dict(entry))
