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

import hashlib
import hmac
import json
import os
import threading
from typing import Any

from .._files import append_durably

__all__ = ["Journal", "JournalError"]

_FORMAT = "pydp_core.Accountant.journal/1"


class JournalError(ValueError):
    """The journal failed its authentication or does not belong to this accountant."""


class Journal:
    """An authenticated append-only journal file (one JSON line per entry, HMAC-chained).

    Parameters
    ----------
    path : str or os.PathLike
        The journal file; created (with mode 0600) when it does not exist.
    key : bytes
        At least 32 bytes kept by the user; the MACs are keyed by it.
    limit : dict
        The accountant's limit as a JSON-able mapping: written as the header of a new journal, and compared
        with the header of an existing one.

    Raises
    ------
    JournalError
        If an existing file fails its authentication, or holds another limit.
    TypeError
        If ``key`` is not bytes of at least 32 bytes.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "budget.journal")
    >>> j = Journal(path, key=bytes(32), limit={"kind": "PureDP", "epsilon": 1.0})
    >>> j.append({"kind": "laplace", "scale": 2.0})
    >>> Journal(path, key=bytes(32), limit={"kind": "PureDP", "epsilon": 1.0}).entries
    [{'kind': 'laplace', 'scale': 2.0}]
    """

    def __init__(self, path: str | os.PathLike[str], *, key: bytes, limit: dict[str, Any]) -> None:
        if not isinstance(key, (bytes, bytearray)) or len(key) < 32:
            raise TypeError("key must be bytes of length >= 32 (keep it apart from the journal)")
        self._key = hmac.new(bytes(key), b"pydp_core.journal/mac", hashlib.sha256).digest()
        self._path = os.fspath(path)
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self._head = "0" * 64
        header = {"format": _FORMAT, "limit": limit}
        if os.path.exists(self._path):
            found = self._load()
            if json.dumps(found, sort_keys=True) != json.dumps(header, sort_keys=True):
                raise JournalError(f"the journal {self._path!r} was written for another limit ({found.get('limit')!r})")
        else:
            self._write_line(header, create=True)

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The spends recorded so far, oldest first (verified when the journal was opened)."""
        return [dict(e) for e in self._entries]

    @property
    def head(self) -> str:
        """The MAC of the last line: record it elsewhere to detect a journal cut short later."""
        return self._head

    def append(self, entry: dict[str, Any]) -> None:
        """Write ``entry`` durably (file flushed to disk) before returning."""
        with self._lock:
            self._write_line(entry, create=False)
            self._entries.append(dict(entry))

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, (self._head + body).encode("utf-8"), hashlib.sha256).hexdigest()

    def _write_line(self, doc: dict[str, Any], *, create: bool) -> None:
        body = json.dumps(doc, sort_keys=True)
        mac = self._mac(body)
        append_durably(self._path, json.dumps({"entry": doc, "mac": mac}, sort_keys=True) + "\n", create=create)
        self._head = mac

    def _load(self) -> dict[str, Any]:
        header: dict[str, Any] | None = None
        with open(self._path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                try:
                    doc = json.loads(line)
                    entry = doc["entry"]
                    ok = hmac.compare_digest(doc["mac"], self._mac(json.dumps(entry, sort_keys=True)))
                except (ValueError, KeyError, TypeError):
                    ok = False
                if not ok:
                    raise JournalError(
                        f"the journal {self._path!r} fails its authentication at line {n}: it was edited, reordered, "
                        "or written under another key; refusing it"
                    )
                self._head = doc["mac"]
                if header is None:
                    header = entry
                else:
                    self._entries.append(entry)
        if header is None:
            raise JournalError(f"the journal {self._path!r} is empty")
        return header
