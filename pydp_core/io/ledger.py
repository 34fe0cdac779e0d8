"""The use record of a release key: one key, one release.

The threat. The randomness of a keyed release is a function of the key and the release's description
(:func:`pydp_core.io.keys.release_id`). Two releases under one key with other descriptions get independent
noise, but each is charged to the same people; two uses of one release with other data get the SAME noise,
and the difference of the outputs is the difference of the data, exactly.

The rule. The ledger records every released piece: its release id, its column, its rows and a SHA-256
digest of the values that received the noise (after clamping, with the nulls), and the budget it spent. A
new piece is accepted when

- it belongs to the release already recorded under the key, and its rows are disjoint from every recorded
  piece of its column (the next piece of the release), or it repeats a recorded piece exactly (same rows,
  same digest: a resumed or retried run, whose output is identical bit for bit and reveals nothing new);
- or it belongs to a new release made through a :class:`pydp_core.Session` that made every other release
  recorded under the key (the session charges each release to its one budget).

Anything else (a rerun at another epsilon, other bounds or columns, other data on the same rows) is refused
with :class:`KeyReuseError` before any noise is drawn, with a message that says how to do it right.

Where the record lives. Every key has one ledger in :func:`state_dir`, named by the key's fingerprint
(HMAC(key, "pydp_core.ledger/id"), which reveals nothing of the key): HMAC-chained JSON lines under a subkey
of the release key, locked and re-read by each writer, so that several processes serialise on it
(:mod:`pydp_core._chain`). A line edited, reordered or removed from the middle is detected and the ledger
refused; a torn last line (a crash mid-write) was never acknowledged and is discarded with a warning. A key
file (``pydp-core keygen``) has in addition the ledger beside it, ``<key file>.ledger``, which travels with
the key file. Whatever ledger a release is given, it is also checked against and recorded in the key's
state-directory ledger, so that two processes, two copies of one key file, or a key file and the same key
held as ``bytes`` all see each other's releases. No public argument skips the record (``ledger=False`` is
refused); what a local ledger cannot see (a copy of the key on another machine or under another user, a
deleted state directory) is stated in docs/io.md.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._chain import ChainedLog

__all__ = ["KeyLedger", "KeyReuseError", "SessionLedger", "values_digest", "ledger_for_key", "state_dir"]

#: The environment variable naming the directory of the per-key ledgers (:func:`state_dir`).
STATE_DIR_ENV = "PYDP_STATE_DIR"


class _RecordedAtDriver:
    """The ledger argument of the tasks of a distributed release whose driver recorded it: no record."""

    def __repr__(self) -> str:
        return "<recorded at the driver>"

    def __reduce__(self) -> str:
        return "_RECORDED_AT_DRIVER"  # unpickled on an executor as this module's one marker


#: Internal: the ledger of an engine task (Spark, Dask) computing a piece of a release that its driver has
#: already recorded. Not part of the public API: a public switch that skips the record is how one key's
#: noise gets onto two data sets.
_RECORDED_AT_DRIVER = _RecordedAtDriver()


class KeyReuseError(ValueError):
    """A release would reuse a key (see :mod:`pydp_core.io.ledger`)."""


@dataclass(frozen=True)
class Piece:
    """One released piece: release ``release``, rows ``[start, stop)`` of ``column``, the digest of its values,
    the session that made it (``None``: none) and what it spent (as recorded, for the user)."""

    column: str
    start: int
    stop: int
    digest: str
    release: str = ""
    session: str | None = None
    spent: Any = None


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


def unrecorded_refused(ledger: Any) -> Exception:
    """The error for a ``ledger=`` argument that is not a ledger (``False`` once skipped the record)."""
    if ledger is False:
        return ValueError(
            "ledger=False is no longer accepted: every keyed release is recorded, since a release that skips the "
            "record can put one key's noise on two data sets. For a test or a check of reproducibility use a "
            "fresh key (pydp_core.io.generate_key); for several releases of one data set use a pydp_core.Session"
        )
    return TypeError(f"ledger must be None, a path or a KeyLedger, not {type(ledger).__name__}")


def _another_release(release: str, session: str | None, found: Piece) -> KeyReuseError:
    where = "a Session" if found.session is not None else "no Session"
    return KeyReuseError(
        f"this key was already used for another release (release {found.release[:12] or 'of an earlier version'}, "
        f"made through {where}); this one ({release[:12]}) differs in its mechanism, parameters, columns, "
        "bounds or null policy. Two releases under one key are charged to the same people, and a rerun with other parameters "
        "is how data is recovered from keyed noise. Use a new key for a new release (pydp-core keygen, "
        "pydp_core.io.generate_key), or make all the releases of one data set through one pydp_core.Session, "
        "which charges each to its budget" + ("" if session is None else " (this key belongs to another session)")
    )


class KeyLedger:
    """The use record of one release key (a file, or in memory), guarded by the key's state-directory ledger.

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
    >>> led = KeyLedger(bytes([1]) * 32)
    >>> r1, r2 = "a" * 64, "b" * 64
    >>> led.claim("x", 0, 3, values_digest([1.0, 2.0, 3.0]), release=r1)
    'first'
    >>> led.claim("x", 3, 5, values_digest([4.0, 5.0]), release=r1)           # the next piece
    'next'
    >>> led.claim("x", 0, 3, values_digest([1.0, 2.0, 3.0]), release=r1)      # an exact repeat
    'repeat'
    >>> led.claim("x", 0, 3, values_digest([1.0, 2.0, 9.0]), release=r1)      # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    KeyReuseError: rows 0..2 of column 'x' were released under this key with other values
    >>> led.claim("x", 0, 3, values_digest([1.0, 2.0, 3.0]), release=r2)      # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    KeyReuseError: this key was already used for another release ...
    """

    def __init__(self, key: bytes, path: str | os.PathLike[str] | None = None, *, _guard: bool = True) -> None:
        mac_key = hmac.new(bytes(key), b"pydp_core.ledger/mac", hashlib.sha256).digest()
        self._log = None if path is None else ChainedLog(path, mac_key, field="piece", error=KeyReuseError,
                                                         what="key ledger")
        self._key = bytes(key)
        # False: this ledger is the key's state-directory ledger, which guards every other one (a claim on
        # any other ledger of the key is also checked against and recorded in it).
        self._guarded = _guard
        self._lock = threading.Lock()
        self._pieces: list[Piece] = []
        if self._log is not None:
            self._pieces = self._parse(self._log.read())

    @property
    def path(self) -> str | None:
        """The ledger file (None: in memory)."""
        return None if self._log is None else self._log.path

    @property
    def pieces(self) -> tuple[Piece, ...]:
        """The recorded pieces, oldest first (re-read from the file, where another process may have written)."""
        if self._log is not None:
            with self._lock:
                self._pieces = self._parse(self._log.read())
        return tuple(self._pieces)

    def check(self, column: str, start: int, stop: int, digest: str, *, release: str = "",
              session: str | None = None) -> bool:
        """Whether releasing rows ``[start, stop)`` of ``column`` with values of ``digest`` is allowed.

        Parameters
        ----------
        column : str
            The column (or the label of a whole release, as :func:`pydp_core.aggregation` records).
        start, stop : int
            The piece's rows ``[start, stop)``.
        digest : str
            :func:`values_digest` of the piece's values.
        release : str, optional
            The release id (:func:`pydp_core.io.keys.release_id`).
        session : str, optional
            The id of the :class:`pydp_core.Session` making the release.

        Returns
        -------
        bool
            True for a new piece, False for an exact repeat of a recorded one.

        Raises
        ------
        KeyReuseError
            For a piece of another release (outside the session that made every release under the key),
            or one that overlaps a recorded piece of the release with other rows or values.

        Examples
        --------
        >>> led = KeyLedger(bytes([2]) * 32)
        >>> led.claim("x", 0, 2, "a")
        'first'
        >>> led.check("x", 0, 2, "a"), led.check("x", 2, 3, "b")
        (False, True)
        """
        for p in self._pieces:
            if p.release != release and (session is None or p.session != session):
                raise _another_release(release, session, p)
        own = [p for p in self._pieces if p.release == release and p.column == column]
        for p in own:
            if p.stop <= start or stop <= p.start:
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
                f"offset (the first unused row is {max(q.stop for q in own)}), or use a new key for a new release"
            )
        return True

    def record(self, column: str, start: int, stop: int, digest: str, *, release: str = "") -> None:
        """Check a piece (see :meth:`check`) and record it; a repeat is accepted and not recorded again."""
        self.claim(column, start, stop, digest, release=release)

    def claim(self, column: str, start: int, stop: int, digest: str, on_first: Callable[[], None] | None = None,
              *, release: str = "", session: str | None = None, spent: Any = None) -> str:
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
            Called, under the ledger's lock, before the first piece of ``column`` in ``release`` is recorded
            (the privacy accountant's charge); if it raises, nothing is recorded.
        release, session : str, optional
            As in :meth:`check`.
        spent : JSON data, optional
            What the piece spends (recorded for the user; the rules do not read it).

        Returns
        -------
        str
            ``"first"`` (the column's first piece in the release), ``"next"`` (a further, disjoint piece) or
            ``"repeat"`` (an exact repeat: nothing recorded).

        Raises
        ------
        KeyReuseError
            As :meth:`check`.

        Examples
        --------
        >>> led = KeyLedger(bytes([3]) * 32)
        >>> [led.claim("x", 0, 2, "a"), led.claim("x", 2, 4, "b"), led.claim("x", 0, 2, "a")]
        ['first', 'next', 'repeat']
        """
        if not (isinstance(start, (int, np.integer)) and isinstance(stop, (int, np.integer)) and 0 <= start <= stop):
            raise ValueError(f"piece rows must satisfy 0 <= start <= stop, got [{start}, {stop})")
        if not self._guarded:
            return self._claim_here(column, int(start), int(stop), digest, on_first, release, session, spent)
        state = _state_ledger(self._key)
        with _GUARD_LOCK, contextlib.ExitStack() as stack:
            # The state ledger's file lock is taken first, then this ledger's: one order for every process.
            held = [] if state is self else [state]
            for g in held:
                stack.enter_context(g._held())
                g.check(column, int(start), int(stop), digest, release=release, session=session)
            status = self._claim_here(column, int(start), int(stop), digest, on_first, release, session, spent)
            for g in held:
                g._claim(column, int(start), int(stop), digest, None, release, session, spent)
            return status

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """Hold this ledger's locks, its pieces re-read from its file (for a guard's check and record)."""
        with self._lock:
            if self._log is None:
                yield
                return
            with self._log.locked() as bodies:
                self._pieces = self._parse(bodies)
                yield

    def _claim_here(self, column: str, start: int, stop: int, digest: str, on_first: Callable[[], None] | None,
                    release: str, session: str | None, spent: Any) -> str:
        with self._lock:
            if self._log is None:
                return self._claim(column, start, stop, digest, on_first, release, session, spent)
            with self._log.locked() as bodies:  # another process may have appended: decide on the fresh record
                self._pieces = self._parse(bodies)
                return self._claim(column, start, stop, digest, on_first, release, session, spent)

    def _claim(self, column: str, start: int, stop: int, digest: str, on_first: Callable[[], None] | None,
               release: str, session: str | None, spent: Any) -> str:
        if not self.check(column, start, stop, digest, release=release, session=session):
            return "repeat"
        first = not any(p.column == column and p.release == release for p in self._pieces)
        if first and on_first is not None:
            on_first()
        piece = Piece(column, start, stop, digest, release, session, spent)
        if self._log is not None:
            body = {"column": column, "start": start, "stop": stop, "digest": digest, "release": release,
                    "session": session, "spent": spent, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            self._log.append(body)
        self._pieces.append(piece)
        return "first" if first else "next"

    @staticmethod
    def _parse(bodies: list[Any]) -> list[Piece]:
        try:
            return [Piece(b["column"], b["start"], b["stop"], b["digest"], b.get("release", ""), b.get("session"),
                          b.get("spent")) for b in bodies]
        except (KeyError, TypeError):
            raise KeyReuseError("the key ledger holds a malformed record: refusing to release under this key") from None


class SessionLedger:
    """A key's ledger as one :class:`pydp_core.Session` uses it: every claim carries the session's id.

    Parameters
    ----------
    ledger : KeyLedger
        The key's ledger.
    session : str
        The session's id.

    Examples
    --------
    >>> led = KeyLedger(bytes([4]) * 32)
    >>> view = SessionLedger(led, "s1")
    >>> view.claim("x", 0, 1, "a", release="a" * 64), view.claim("x", 0, 1, "a", release="b" * 64)
    ('first', 'first')
    """

    def __init__(self, ledger: KeyLedger, session: str) -> None:
        if not isinstance(ledger, KeyLedger):
            raise TypeError(f"ledger must be a KeyLedger, not {type(ledger).__name__}")
        self.ledger, self.session = ledger, str(session)

    @property
    def pieces(self) -> tuple[Piece, ...]:
        """The pieces recorded under the key (by any user of it)."""
        return self.ledger.pieces

    def check(self, column: str, start: int, stop: int, digest: str, *, release: str = "") -> bool:
        """:meth:`KeyLedger.check` for this session."""
        return self.ledger.check(column, start, stop, digest, release=release, session=self.session)

    def claim(self, column: str, start: int, stop: int, digest: str, on_first: Callable[[], None] | None = None,
              *, release: str = "", spent: Any = None) -> str:
        """:meth:`KeyLedger.claim` for this session."""
        return self.ledger.claim(column, start, stop, digest, on_first, release=release, session=self.session,
                                 spent=spent)


_PROCESS_LEDGERS: dict[str, KeyLedger] = {}
_PROCESS_LOCK = threading.Lock()
_GUARD_LOCK = threading.RLock()


def _fingerprint(key: bytes) -> str:
    """The public identity of a key: HMAC-SHA256(key, "pydp_core.ledger/id"), hex (it reveals nothing of it)."""
    return hmac.new(bytes(key), b"pydp_core.ledger/id", hashlib.sha256).hexdigest()


def state_dir() -> str:
    """The directory of the per-key ledgers: ``$PYDP_STATE_DIR``, else ``$XDG_STATE_HOME/pydp_core``, else
    ``~/.local/state/pydp_core``.

    Returns
    -------
    str
        The directory (it need not exist yet).

    Examples
    --------
    >>> import os
    >>> os.path.isabs(state_dir())
    True
    """
    given = os.environ.get(STATE_DIR_ENV)
    if given:
        return os.path.abspath(os.path.expanduser(given))
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.abspath(os.path.join(base, "pydp_core"))


def _state_path(key: bytes) -> str:
    return os.path.join(state_dir(), "ledgers", _fingerprint(key) + ".ledger")


def _cached(ident: str, make: Callable[[], KeyLedger]) -> KeyLedger:
    with _PROCESS_LOCK:
        led = _PROCESS_LEDGERS.get(ident)
        if led is None:
            led = _PROCESS_LEDGERS[ident] = make()
        return led


def _state_ledger(key: bytes) -> KeyLedger:
    """The key's ledger in :func:`state_dir` (one object per path for the life of the process)."""
    path = _state_path(key)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise OSError(
            f"cannot create the key ledger directory {os.path.dirname(path)!r} ({exc.strerror}): set "
            f"{STATE_DIR_ENV} to a writable directory"
        ) from None
    return _cached(path, lambda: KeyLedger(key, path, _guard=False))


def ledger_for_key(key: bytes, path: str | os.PathLike[str] | None = None) -> KeyLedger:
    """The ledger of ``key``: the file ``path`` when given, else the key's ledger in :func:`state_dir`.

    Whatever ledger a release is given, it is also checked against (and recorded in) the key's ledger in
    :func:`state_dir` (named by the key's fingerprint), so every process that holds the key sees the
    releases made under it.

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
    if path is None:
        return _state_ledger(bytes(key))
    ident = _fingerprint(key) + "\x00" + os.path.abspath(os.fspath(path))
    return _cached(ident, lambda: KeyLedger(key, path))
