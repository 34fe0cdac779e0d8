"""The use record of a release key: noise under one key is released with one set of values, never two.

The threat. The keyed noise of a value is a function of (key, column, row index) only. If the same key,
column and rows are released twice with different data, the difference of the two outputs is the
difference of the data, exactly: the noise cancels. That happens when a job is re-run on changed data
under the same key, or when a release is processed in pieces that all start at row 0.

The rule. For every column, the ledger records each released piece: its rows and a SHA-256 digest of the
values that received the noise (after clamping, with the nulls). A new piece is accepted when its rows
are disjoint from every recorded piece of that column (the next piece of the release), or when it is an
exact repeat of a recorded piece (same rows, same digest: a resumed or retried run, whose output is
identical and reveals nothing new). Anything else is refused with :class:`KeyReuseError` before any noise
is drawn. A repeat is harmless only because the output is the same bit for bit, which the keyed noise
guarantees.

Where the record lives. For a key file (``pydp-core keygen``) the record is a file beside it,
``<key file>.ledger``, one JSON line per piece, each line authenticated by an HMAC chained over the
previous line under a subkey of the release key: a line edited, reordered or removed from the middle is
detected and the whole ledger refused (removing lines from the end cannot be detected without a second
copy; keep the ledger with the key). For a key held in memory (``bytes``) the record lives in the process,
so a notebook or a service that releases twice under one key is stopped as well.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

try:
    import fcntl
except ImportError:  # not POSIX: no lock between processes
    fcntl = None  # type: ignore[assignment]

import numpy as np

from .._files import append_durably

__all__ = ["KeyLedger", "KeyReuseError", "values_digest", "ledger_for_key"]


class KeyReuseError(ValueError):
    """A release would reuse keyed noise with different values (see :mod:`pydp_core.io.ledger`)."""


@dataclass(frozen=True)
class Piece:
    """One released piece of a column: rows ``[start, stop)`` and the digest of its values."""

    column: str
    start: int
    stop: int
    digest: str


def values_digest(values: Any, rows: Any = None) -> str:
    """The SHA-256 digest (hex) of the values that receive noise, and of their row ids when given.

    Parameters
    ----------
    values : array_like
        The values as released (after clamping); NaN stands for a null.
    rows : array_like of int, optional
        The global row ids of the values, when they are not consecutive.

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    TypeError
        If ``values`` is not numeric.

    Examples
    --------
    >>> values_digest([1.0, 2.0]) == values_digest([1.0, 2.0]), values_digest([1.0, 2.0]) == values_digest([1.0, 2.5])
    (True, False)
    """
    arr = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    h = hashlib.sha256(b"pydp_core.ledger/values\x00")
    h.update(arr.size.to_bytes(8, "little"))
    h.update(arr.tobytes())
    if rows is not None:
        h.update(b"\x00rows")
        h.update(np.ascontiguousarray(np.asarray(rows, dtype=np.int64)).tobytes())
    return h.hexdigest()


class KeyLedger:
    """The use record of one release key (in a file beside the key file, or in this process).

    Parameters
    ----------
    key : bytes
        The 32-byte release key (it authenticates the ledger; it is never written to it).
    path : str or os.PathLike, optional
        The ledger file; None keeps the record in memory.

    Raises
    ------
    KeyReuseError
        If the ledger file fails its authentication (edited, reordered or truncated in the middle).

    Examples
    --------
    >>> led = KeyLedger(bytes(32))
    >>> led.record("x", 0, 3, values_digest([1.0, 2.0, 3.0]))
    >>> led.record("x", 3, 5, values_digest([4.0, 5.0]))           # the next piece
    >>> led.record("x", 0, 3, values_digest([1.0, 2.0, 3.0]))      # an exact repeat
    >>> led.record("x", 0, 3, values_digest([1.0, 2.0, 9.0]))      # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    KeyReuseError: rows 0..2 of column 'x' were released under this key with other values
    """

    def __init__(self, key: bytes, path: str | os.PathLike[str] | None = None) -> None:
        self._mac_key = hmac.new(bytes(key), b"pydp_core.ledger/mac", hashlib.sha256).digest()
        self._path = None if path is None else os.fspath(path)
        self._lock = threading.Lock()
        self._pieces: list[Piece] = []
        self._last_mac = "0" * 64
        if self._path is not None and os.path.exists(self._path):
            self._load()

    @property
    def pieces(self) -> tuple[Piece, ...]:
        """The recorded pieces, oldest first."""
        return tuple(self._pieces)

    def check(self, column: str, start: int, stop: int, digest: str) -> bool:
        """Whether releasing rows ``[start, stop)`` of ``column`` with values of ``digest`` is allowed.

        Parameters
        ----------
        column : str
            The column.
        start, stop : int
            The piece's rows ``[start, stop)``.
        digest : str
            :func:`values_digest` of the piece's values.

        Returns
        -------
        bool
            True for a new piece, False for an exact repeat of a recorded one.

        Raises
        ------
        KeyReuseError
            For a piece that overlaps a recorded one with other rows or values.

        Examples
        --------
        >>> led = KeyLedger(bytes(32))
        >>> led.record("x", 0, 2, "a")
        >>> led.check("x", 0, 2, "a"), led.check("x", 2, 3, "b")
        (False, True)
        """
        for p in self._pieces:
            if p.column != column or p.stop <= start or stop <= p.start:
                continue
            if p.start == start and p.stop == stop and p.digest == digest:
                return False
            if p.digest.startswith("distributed:") or digest.startswith("distributed:"):
                raise KeyReuseError(
                    f"column {column!r} was already released under this key (a Spark or Dask release covers every "
                    "row): pass resume=True if this is the same release on the same data, or use a new key"
                )
            raise KeyReuseError(
                f"rows {max(start, p.start)}..{min(stop, p.stop) - 1} of column {column!r} were released under this "
                "key with other values: the noise would cancel between the two releases. Pass the next piece's "
                f"offset (the first unused row is {max(q.stop for q in self._pieces if q.column == column)}), or "
                "use a new key for a new release"
            )
        return True

    def record(self, column: str, start: int, stop: int, digest: str) -> None:
        """Check a piece (see :meth:`check`) and record it; a repeat is accepted and not recorded again."""
        self.claim(column, start, stop, digest)

    def claim(self, column: str, start: int, stop: int, digest: str, on_first: Callable[[], None] | None = None) -> str:
        """Check a piece and record it, calling ``on_first`` before recording the first piece of a column.

        Parameters
        ----------
        column : str
            The column.
        start, stop : int
            The piece's rows ``[start, stop)`` (for row ids: the smallest and one past the largest).
        digest : str
            :func:`values_digest` of the piece's values (and row ids).
        on_first : callable, optional
            Called, under the ledger's lock, before the first piece of ``column`` is recorded (the
            privacy accountant's charge); if it raises, nothing is recorded.

        Returns
        -------
        str
            ``"first"`` (the column's first piece), ``"next"`` (a further, disjoint piece) or ``"repeat"``
            (an exact repeat: nothing recorded).

        Raises
        ------
        KeyReuseError
            If the piece overlaps a recorded piece of the column with other rows or values.

        Examples
        --------
        >>> led = KeyLedger(bytes(32))
        >>> [led.claim("x", 0, 2, "a"), led.claim("x", 2, 4, "b"), led.claim("x", 0, 2, "a")]
        ['first', 'next', 'repeat']
        """
        if not (isinstance(start, (int, np.integer)) and isinstance(stop, (int, np.integer)) and 0 <= start <= stop):
            raise ValueError(f"piece rows must satisfy 0 <= start <= stop, got [{start}, {stop})")
        with self._lock, self._file_lock():
            if not self.check(column, start, stop, digest):
                return "repeat"
            first = not any(p.column == column for p in self._pieces)
            if first and on_first is not None:
                on_first()
            piece = Piece(column, int(start), int(stop), digest)
            if self._path is not None:
                self._append(piece)
            self._pieces.append(piece)
            return "first" if first else "next"

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """For a ledger file: hold an exclusive lock on it and re-read it (another process may have
        appended to it, or it may have been altered since it was opened)."""
        if self._path is None:
            yield
            return
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._pieces, self._last_mac = [], "0" * 64
            self._load()
            yield
        finally:
            os.close(fd)  # releases the lock

    # -- the file ------------------------------------------------------------------------------------------
    def _mac(self, body: str) -> str:
        return hmac.new(self._mac_key, (self._last_mac + body).encode("utf-8"), hashlib.sha256).hexdigest()

    def _load(self) -> None:
        assert self._path is not None
        with open(self._path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                try:
                    doc = json.loads(line)
                    body = json.dumps(doc["piece"], sort_keys=True)
                    ok = hmac.compare_digest(doc["mac"], self._mac(body))
                except (ValueError, KeyError, TypeError):
                    ok = False
                if not ok:
                    raise KeyReuseError(
                        f"the key ledger {self._path!r} fails its authentication at line {n} (edited, reordered, "
                        "or not this key's ledger): refusing to release under this key"
                    )
                p = doc["piece"]
                self._pieces.append(Piece(p["column"], p["start"], p["stop"], p["digest"]))
                self._last_mac = doc["mac"]

    def _append(self, piece: Piece) -> None:
        assert self._path is not None
        body = {"column": piece.column, "start": piece.start, "stop": piece.stop, "digest": piece.digest,
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        text = json.dumps(body, sort_keys=True)
        mac = self._mac(text)
        append_durably(self._path, json.dumps({"piece": body, "mac": mac}, sort_keys=True) + "\n")
        self._last_mac = mac


_PROCESS_LEDGERS: dict[str, KeyLedger] = {}
_PROCESS_LOCK = threading.Lock()


def ledger_for_key(key: bytes, path: str | os.PathLike[str] | None = None) -> KeyLedger:
    """The ledger of ``key``: the file ``path`` when given, else this process's record of the key.

    Parameters
    ----------
    key : bytes
        The 32-byte release key.
    path : str or os.PathLike, optional
        The ledger file (``<key file>.ledger`` for a key file).

    Returns
    -------
    KeyLedger
        One object per key (per path) for the life of the process.

    Raises
    ------
    KeyReuseError
        If the ledger file fails its authentication.

    Examples
    --------
    >>> ledger_for_key(b"k" * 32) is ledger_for_key(b"k" * 32)
    True
    """
    fingerprint = hmac.new(bytes(key), b"pydp_core.ledger/id", hashlib.sha256).hexdigest()
    ident = fingerprint if path is None else fingerprint + "\x00" + os.path.abspath(os.fspath(path))
    with _PROCESS_LOCK:
        led = _PROCESS_LEDGERS.get(ident)
        if led is None:
            led = _PROCESS_LEDGERS[ident] = KeyLedger(key, path)
        return led
