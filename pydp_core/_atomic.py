"""Atomic file output: write to a temporary file in the target's directory, then rename over the target.

A crash, Ctrl-C or SIGTERM while writing leaves the target as it was (absent or the previous version);
only the temporary file may remain after a hard kill (SIGKILL, power loss), under a name starting with
``.<target>.`` and ending in ``.tmp``.
"""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from typing import Iterator

__all__ = ["atomic_output", "same_file"]


def same_file(a: str, b: str) -> bool:
    """True if paths ``a`` and ``b`` name the same file (following links), when ``b`` exists."""
    try:
        return os.path.samefile(a, b)
    except FileNotFoundError:
        return os.path.realpath(a) == os.path.realpath(b)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Terminated(BaseException):
    """SIGTERM raised as an exception so that ``finally`` blocks run (exits like Ctrl-C)."""


@contextlib.contextmanager
def atomic_output(path: str, *, mode: int | None = None) -> Iterator[str]:
    """Yield a temporary path next to ``path``; on success fsync it and rename it to ``path``.

    ``mode`` sets the final permissions (default: 0666 minus the umask, as ``open`` would). On any
    exception, KeyboardInterrupt or SIGTERM (main thread only) the temporary file is removed and the
    exception propagates.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        yield tmp
        os.chmod(tmp, (0o666 & ~_umask()) if mode is None else mode)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
        _fsync_dir(directory)
    except _Terminated:
        raise KeyboardInterrupt("terminated (SIGTERM)") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum, frame):  # pragma: no cover - exercised through a subprocess test
    raise _Terminated()


def _fsync_dir(directory: str) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
