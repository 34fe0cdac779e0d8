"""Durable file operations shared by the atomic output, the key ledger and the accountant's journal.

Atomic output writes to a temporary file in the target's folder, named
``.<target name>.<pid>.<random>.tmp`` (:func:`temporary_name`), and renames it over the target only when
complete. A hard kill (SIGKILL, power loss) can leave such a file; the process id in its name lets
:func:`stale_temporaries` tell a leftover of a dead process from the file of a run in progress. Files that
belong together (a table and its sidecar) are published by :func:`atomic_outputs`, the main one last.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Sequence
from typing import Callable

__all__ = ["fsync_dir", "append_durably", "atomic_output", "atomic_outputs", "same_file", "stale_temporaries",
           "temporary_name"]


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


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True if paths ``a`` and ``b`` name the same file (following links), when ``b`` exists."""
    try:
        return os.path.samefile(a, b)
    except FileNotFoundError:
        return os.path.realpath(a) == os.path.realpath(b)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temporary_name(target: str) -> str:
    """The temporary file name for ``target``: ``.<name>.<pid>.<16 hex digits>.tmp`` in its folder."""
    directory, name = os.path.split(os.path.abspath(target))
    return os.path.join(directory, f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")


def _pattern(target: str) -> re.Pattern[str]:
    return re.compile(re.escape(f".{os.path.basename(target)}.") + r"(\d+)\.[0-9a-f]{16}\.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process, or not a pid: not ours to judge
        return True
    return True


def stale_temporaries(target: str | os.PathLike[str]) -> list[str]:
    """The temporary files of atomic outputs to ``target`` whose writing process no longer exists.

    Only files named by :func:`temporary_name` for ``target`` are considered, and only those whose
    process id names no running process (on this host), so a run in progress is never touched.

    Parameters
    ----------
    target : str or os.PathLike
        The output file.

    Returns
    -------
    list of str
        Their paths, sorted.
    """
    target = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(target))
    pattern = _pattern(target)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        m = pattern.fullmatch(name)
        if m is not None and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            found.append(os.path.join(directory, name))
    return sorted(found)


@contextlib.contextmanager
def atomic_output(
    path: str | os.PathLike[str], *, mode: int | None = None, before_rename: Callable[[], None] | None = None
) -> Iterator[str]:
    """Yield a temporary path next to ``path``; on success fsync it, rename it to ``path``, fsync the folder.

    ``mode`` sets the final permissions (default: 0666 minus the umask, as ``open`` would).
    ``before_rename`` is called last before the rename (a cancellation check that may raise). On any
    exception (KeyboardInterrupt included) the temporary file is removed and the exception propagates.

    Raises
    ------
    FileNotFoundError
        If the folder of ``path`` does not exist (said in those words, not through the temporary name).
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"output folder {directory!r} does not exist")
    name = temporary_name(target)
    os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    tmp: str | None = name
    try:
        yield name
        os.chmod(name, (0o666 & ~_umask()) if mode is None else mode)
        with open(name, "rb+") as fh:
            os.fsync(fh.fileno())
        if before_rename is not None:
            before_rename()
        os.replace(name, target)
        tmp = None
        fsync_dir(directory)
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _output_folder(target: str) -> str:
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"output folder {directory!r} does not exist")
    return directory


@contextlib.contextmanager
def atomic_outputs(
    paths: Sequence[str | os.PathLike[str]], *, before_rename: Callable[[], None] | None = None
) -> Iterator[list[str]]:
    """Yield one temporary path per entry of ``paths``; on success publish them all, in the order given.

    Give the companions first and the main output last (a sidecar, then the table it describes): the
    main output is renamed into place only once every companion is, so a reader who finds the new main
    output finds its companions beside it, never a stale one. If a rename fails, or anything before it
    raises (``before_rename`` included), nothing new stays: the companions already renamed are put back
    as they were (the old file restored, or removed if there was none), the temporary files are removed,
    and the exception propagates. Each companion that replaces a file keeps it under a temporary name
    (:func:`temporary_name`) until the main output is in place. Once the main output is renamed the set is
    published: an exception arriving after that (an interruption) leaves the new files in place, the kept
    ones removed, and propagates. A hard kill between two renames can leave
    new companions beside the old main output (or none) and such a kept file, which
    :func:`stale_temporaries` then lists; never a new main output with old or missing companions.

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        The outputs, distinct, the main one last; final permissions 0666 minus the umask.
    before_rename : callable, optional
        Called once, after every file is written and flushed and before the first rename (a
        cancellation check that may raise).

    Raises
    ------
    FileNotFoundError
        If the folder of a path does not exist.
    """
    targets = [os.fspath(p) for p in paths]
    directories = [_output_folder(t) for t in targets]
    temps: list[str] = []
    try:
        for target in targets:
            name = temporary_name(target)
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            temps.append(name)
        yield list(temps)
        for name in temps:
            os.chmod(name, 0o666 & ~_umask())
            with open(name, "rb+") as fh:
                os.fsync(fh.fileno())
        if before_rename is not None:
            before_rename()
        _publish(temps, targets)
        temps = []
        for directory in dict.fromkeys(directories):
            fsync_dir(directory)
    finally:
        for name in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)


def _publish(temps: list[str], targets: list[str]) -> None:
    """Rename each of ``temps`` over its target in order; on an error undo the renames done (see above)."""
    started: list[tuple[str, str, str | None]] = []  # (temporary, target, the target's previous file kept or None)
    try:
        for i, (name, target) in enumerate(zip(temps, targets)):
            started.append((name, target, _keep(target) if i < len(targets) - 1 else None))
            os.replace(name, target)
    except BaseException:
        if len(started) == len(targets) and not os.path.lexists(started[-1][0]):
            # The main output is in place, so the publication is complete (an interruption came after its
            # rename): what stands is the new set, exactly as a kill at that instant would leave it.
            _discard_kept(started)
            raise
        # An entry whose temporary file is still there was not renamed (the error, or an interruption,
        # came before or instead of its rename); the others are taken back, newest first.
        for name, target, kept in reversed(started):
            if os.path.lexists(name):
                if kept is not None:
                    os.unlink(kept)
            elif kept is not None:
                os.replace(kept, target)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(target)
        raise
    _discard_kept(started)


def _discard_kept(started: list[tuple[str, str, str | None]]) -> None:
    for _, _, kept in started:
        if kept is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(kept)


def _keep(target: str) -> str | None:
    """A second name for the current file at ``target`` (a hard link, else a copy), or None if there is none."""
    if not os.path.lexists(target):
        return None
    kept = temporary_name(target)
    try:
        os.link(target, kept)
    except OSError:  # a file system without hard links
        shutil.copy2(target, kept)
    return kept
