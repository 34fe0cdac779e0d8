"""Atomic file output, cancellation by signal at safe points, and the read/transform/write pipeline.

Atomic output (:func:`atomic_output`, from ``pydp_core._files``): a crash, Ctrl-C or SIGTERM while
writing leaves the target as it was (absent or the previous version); only a hard kill (SIGKILL, power
loss) can leave the temporary file ``.<target>.<pid>.<random>.tmp``, which :func:`stale_temporaries`
finds once its process is gone. Several files published together (a table and its sidecar,
:func:`atomic_outputs`) are renamed companions first, main output last, and a failed rename puts back
the companions already renamed.

Cancellation (:func:`cancellation`): in the main thread, SIGINT and SIGTERM only set a flag
(a :class:`threading.Event`); the work checks it at safe points (between batches, between columns, in
the reader and writer threads, before the rename) and raises :class:`Interrupted` there. A Python signal
handler that raised instead would raise at an arbitrary bytecode of the main thread: inside the import
machinery (a half-imported module), while a lock is held, or after the output was renamed.
"""
from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any, Callable

from .._files import _umask, atomic_output, atomic_outputs, fsync_dir, same_file, stale_temporaries, temporary_name

__all__ = ["atomic_output", "atomic_outputs", "atomic_folder", "same_file", "stale_temporaries", "Pipeline", "Interrupted",
           "Cancellation", "cancellation"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_POLL = 0.05  # seconds between checks of the flag while a thread waits on a queue


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; raised at a safe point. ``signum`` is the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


class Cancellation:
    """A cancellation flag: :meth:`check` raises :class:`Interrupted` once :meth:`cancel` was called."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signum: int = signal.SIGINT

    def cancel(self, signum: int = signal.SIGINT) -> None:
        """Set the flag (what the signal handler does; safe from any thread)."""
        if not self._event.is_set():
            self.signum = signum
        self._event.set()

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.cancel(signum)

    def is_set(self) -> bool:
        """True once cancelled."""
        return self._event.is_set()

    def error(self) -> Interrupted:
        """The exception that reports the cancellation."""
        return Interrupted(self.signum)

    def check(self) -> None:
        """Raise :class:`Interrupted` if cancelled."""
        if self._event.is_set():
            raise self.error()


_active: list[Cancellation] = []


@contextlib.contextmanager
def cancellation() -> Iterator[Cancellation]:
    """A :class:`Cancellation` set by SIGINT and SIGTERM for the duration of the block.

    In the main thread the two signals' handlers are replaced by one that only sets the flag, and
    restored afterwards; nested blocks share the outer flag. In other threads signals cannot be handled:
    the flag is then only set by :meth:`Cancellation.cancel`.
    """
    if _active:
        yield _active[-1]
        return
    cancel = Cancellation()
    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    previous = {s: signal.signal(s, cancel._handler) for s in _SIGNALS}
    _active.append(cancel)
    try:
        yield cancel
    finally:
        _active.pop()
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def atomic_folder(
    path: str, *, overwrite: bool = False, before_rename: Callable[[], None] | None = None
) -> Iterator[str]:
    """Yield a new temporary folder next to ``path``; on success fsync its files and folders and rename it to
    ``path``. On any exception the temporary folder is removed and ``path`` is left as it was.

    With ``overwrite``, an existing ``path`` is first renamed to a temporary name, then removed once the new
    folder is in place: readers find the old folder or the new one, never a mixture (for the instant between
    the two renames, none).

    Raises
    ------
    FileNotFoundError
        If the folder that would hold ``path`` does not exist.
    """
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"output folder {parent!r} does not exist")
    name = temporary_name(path)
    os.mkdir(name, 0o700)
    done = False
    try:
        yield name
        for root, _dirs, names in os.walk(name):
            for file in names:
                fd = os.open(os.path.join(root, file), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            fsync_dir(root)
        os.chmod(name, 0o777 & ~_umask())
        if before_rename is not None:
            before_rename()
        old = None
        if os.path.lexists(path):
            if not overwrite:
                raise FileExistsError(f"output {path!r} exists (use --force / overwrite=True to replace it)")
            old = temporary_name(path)
            os.rename(path, old)
        os.rename(name, path)
        done = True
        fsync_dir(parent)
        if old is not None:
            shutil.rmtree(old) if os.path.isdir(old) and not os.path.islink(old) else os.unlink(old)
    finally:
        if not done:
            shutil.rmtree(name, ignore_errors=True)


class Pipeline:
    """Run ``produce`` (an iterable) and ``consume`` (a callable) in two background threads around the
    caller, with at most ``depth`` items waiting on each side: read, transform and write overlap.

    ``for item in pipe.items(): pipe.put(transform(item))``; ``pipe.finish()`` waits for the consumer.
    The first error of any side is raised in the caller, and :class:`Interrupted` once ``cancel`` is set
    (every wait is a bounded poll of the flag). ``close()`` (always call it, e.g. in ``finally``) stops
    both threads and waits for them, so nothing touches the output afterwards. Whatever the threads
    import must be imported before (an import in a thread can wait on the import lock of the main one).
    """

    def __init__(
        self, produce: Iterable[Any], consume: Callable[[Any], None], depth: int = 2,
        cancel: Cancellation | None = None,
    ) -> None:
        self._in: queue.Queue[Any] = queue.Queue(depth)
        self._out: queue.Queue[Any] = queue.Queue(depth)
        self._stop = threading.Event()
        self._cancel = Cancellation() if cancel is None else cancel
        self._error: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._producer, args=(produce,), daemon=True),
            threading.Thread(target=self._consumer, args=(consume,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _halted(self) -> bool:
        return self._stop.is_set() or self._cancel.is_set()

    def _offer(self, q: queue.Queue[Any], item: Any) -> bool:
        while not self._halted():
            try:
                q.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _take(self, q: queue.Queue[Any]) -> Any:
        while not self._halted():
            try:
                return q.get(timeout=_POLL)
            except queue.Empty:
                continue
        return _END

    def _producer(self, produce: Iterable[Any]) -> None:
        try:
            for item in produce:
                if not self._offer(self._in, item):
                    return
        except BaseException as exc:  # handed to the caller
            self._error.append(exc)
            self._stop.set()
            return
        self._offer(self._in, _END)

    def _consumer(self, consume: Callable[[Any], None]) -> None:
        try:
            while True:
                item = self._take(self._out)
                if item is _END:
                    return
                consume(item)
        except BaseException as exc:
            self._error.append(exc)
            self._stop.set()

    def _check(self) -> None:
        self._cancel.check()
        if self._error:
            raise self._error[0]

    def items(self) -> Iterator[Any]:
        """The produced items, in order; raises the first error of either thread, or :class:`Interrupted`."""
        while True:
            item = self._take(self._in)
            self._check()
            if item is _END:
                return
            yield item

    def put(self, item: Any) -> None:
        """Hand ``item`` to the consumer thread (blocks while ``depth`` items wait)."""
        if not self._offer(self._out, item):
            self._check()

    def finish(self) -> None:
        """Wait for the consumer to take every item; raises the first error of either thread."""
        self._offer(self._out, _END)
        writer = self._threads[1]
        while writer.is_alive():
            writer.join(_POLL)
            self._cancel.check()
        self._check()

    def close(self) -> None:
        """Stop both threads and wait for them (always call it, e.g. in ``finally``)."""
        self._stop.set()
        for t in self._threads:
            t.join()


_END = object()
