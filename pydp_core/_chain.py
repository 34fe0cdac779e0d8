"""An append-only file of HMAC-chained JSON lines, shared by the key ledger and the accountant's journal.

Each line is ``{"<field>": body, "mac": m}`` with ``m = HMAC-SHA256(k, m_prev || json(body))`` (``m_prev``
is 64 zeros for the first line, ``json`` sorts keys), so a line edited, reordered, or removed from the
middle fails the check, and the file is refused.

Writers serialise through an exclusive ``flock`` on the file: under the lock the file is read again (another
process may have appended), the caller decides on the fresh content, and the new line is appended and
``fsync``-ed before the lock is released. So concurrent writers in several processes see each other's
lines and never interleave them.

A torn last line (a write cut by a crash, a kill or a full disk: the file does not end with a newline and
its last line does not authenticate) was never acknowledged to anyone, since an append returns only after
its ``fsync``. It is discarded with a :class:`RuntimeWarning` and cut off before the next append. Any line
that ends with a newline and fails the check is refused, torn or not.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import warnings
from collections.abc import Iterator
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no lock between processes
    fcntl = None  # type: ignore[assignment]

from ._files import fsync_dir

__all__ = ["ChainedLog"]

_ZERO = "0" * 64


class ChainedLog:
    """An HMAC-chained, append-only JSON-lines file.

    Parameters
    ----------
    path : str or os.PathLike
        The file (created with mode 0600 by the first append).
    mac_key : bytes
        The MAC key (derived by the caller from a secret that is not in the file).
    field : str
        The name of the body field of each line.
    error : type
        The exception raised when the file fails its check.
    what : str
        What to call the file in messages (e.g. "key ledger").

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log")
    >>> log = ChainedLog(path, bytes(32), field="entry", error=ValueError, what="log")
    >>> with log.locked() as lines:
    ...     mac = log.append({"n": len(lines)})
    >>> ChainedLog(path, bytes(32), field="entry", error=ValueError, what="log").read()
    [{'n': 0}]
    """

    def __init__(self, path: str | os.PathLike[str], mac_key: bytes, *, field: str, error: type[Exception],
                 what: str) -> None:
        self.path = os.fspath(path)
        self._key = bytes(mac_key)
        self._field = field
        self._error = error
        self._what = what
        self._head = _ZERO
        self._good = 0  # bytes of authenticated lines: where the next line goes
        self._newline = False  # the last authenticated line lacks its newline
        self._fd: int | None = None
        self._torn_at = -1  # where the torn last line this object has warned about starts (warned once)

    @property
    def head(self) -> str:
        """The MAC of the last authenticated line (64 zeros for an empty file)."""
        return self._head

    def _mac(self, prev: str, body: Any) -> str:
        text = json.dumps(body, sort_keys=True)
        return hmac.new(self._key, (prev + text).encode("utf-8"), hashlib.sha256).hexdigest()

    def read(self) -> list[Any]:
        """The bodies of the authenticated lines, oldest first (a torn last line is dropped with a warning).

        Raises
        ------
        error
            If a complete line fails its check.
        """
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            self._head, self._good, self._newline = _ZERO, 0, False
            return []
        bodies: list[Any] = []
        head, pos, n = _ZERO, 0, 0
        while pos < len(data):
            n += 1
            end = data.find(b"\n", pos)
            line = data[pos:] if end < 0 else data[pos:end]
            try:
                doc = json.loads(line.decode("utf-8"))
                body = doc[self._field]
                ok = hmac.compare_digest(str(doc["mac"]), self._mac(head, body))
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                ok = False
            if not ok:
                if end < 0:  # a torn last line: never acknowledged
                    if self._torn_at == pos:
                        break
                    self._torn_at = pos
                    warnings.warn(
                        f"the {self._what} {self.path!r} ends with an incomplete line (a write cut short by a crash or "
                        "a full disk); it was never acknowledged and is discarded",
                        RuntimeWarning, stacklevel=3,
                    )
                    break
                raise self._error(
                    f"the {self._what} {self.path!r} fails its authentication at line {n} (edited, reordered, or "
                    "written under another key): refusing it"
                )
            bodies.append(body)
            head = doc["mac"]
            pos = len(data) if end < 0 else end + 1
        self._head, self._good = head, pos
        self._newline = pos > 0 and not data[:pos].endswith(b"\n")  # a whole last line without its newline
        return bodies

    @contextlib.contextmanager
    def locked(self) -> Iterator[list[Any]]:
        """Hold the file's exclusive lock; yield its bodies as read under the lock (for :meth:`append`)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        created = os.fstat(fd).st_size == 0
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._fd = fd
            bodies = self.read()
            if created:
                fsync_dir(os.path.dirname(os.path.abspath(self.path)))
            yield bodies
        finally:
            self._fd = None
            os.close(fd)  # releases the lock

    def append(self, body: Any) -> str:
        """Append ``body`` durably (inside :meth:`locked`); returns its MAC."""
        if self._fd is None:
            raise RuntimeError("ChainedLog.append must be called inside locked()")
        mac = self._mac(self._head, body)
        line = json.dumps({self._field: body, "mac": mac}, sort_keys=True) + "\n"
        good = self._good
        if self._newline:
            line = "\n" + line
        os.ftruncate(self._fd, good)  # cuts a torn tail off (a no-op otherwise)
        os.lseek(self._fd, good, os.SEEK_SET)
        os.write(self._fd, line.encode("utf-8"))
        os.fsync(self._fd)
        self._good, self._newline, self._head = good + len(line.encode("utf-8")), False, mac
        return mac
