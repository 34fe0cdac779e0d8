"""Durable file operations shared by the atomic output, the key ledger and the accountant's journal."""
from __future__ import annotations

import os


def fsync_dir(directory: str) -> None:
    """Flush a folder's entries (a new or renamed file in it) to disk; a no-op off POSIX."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_durably(path: str, line: str, *, create: bool | None = None) -> None:
    """Append ``line`` to ``path`` and fsync it; fsync the folder when the file is new (mode 0600).

    ``create``: None creates the file when missing, True requires that it does not exist yet, False that
    it exists (a journal deleted behind the writer's back is an error, not a new empty journal).
    """
    existed = os.path.exists(path)
    flags = os.O_WRONLY | os.O_APPEND
    if create is None or create:
        flags |= os.O_CREAT | (os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    if not existed:
        fsync_dir(os.path.dirname(os.path.abspath(path)))
