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
from types import FrameType
from typing import Any, Callable, Iterable, Iterator, Optional

from .._files import fsync_dir

__all__ = ["atomic_output", "same_file", "Pipeline"]


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


class _Terminated(BaseException):
    """SIGTERM raised as an exception so that ``finally`` blocks run (exits like Ctrl-C)."""


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[str]:
    """Yield a temporary path next to ``path``; on success fsync it and rename it to ``path``.

    ``mode`` sets the final permissions (default: 0666 minus the umask, as ``open`` would). On any
    exception, KeyboardInterrupt or SIGTERM (main thread only) the temporary file is removed and the
    exception propagates.
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, name = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp: Optional[str] = name
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        yield name
        os.chmod(name, (0o666 & ~_umask()) if mode is None else mode)
        with open(name, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(name, target)
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


def _raise_terminated(signum: int, frame: Optional[FrameType]) -> None:  # pragma: no cover - exercised through a subprocess test
    raise _Terminated()


_fsync_dir = fsync_dir


class Pipeline:
    """Run ``produce`` (an iterable) and ``consume`` (a callable) in two background threads around the
    caller, with at most ``depth`` items waiting on each side: read, transform and write overlap.

    ``for item in pipe.items(): pipe.put(transform(item))``; ``pipe.finish()`` waits for the consumer.
    The first error of any side is raised in the caller; ``close()`` (always call it, e.g. in
    ``finally``) stops both threads and waits for them, so nothing touches the output afterwards.
    """

    def __init__(self, produce: Iterable[Any], consume: Callable[[Any], None], depth: int = 2) -> None:
        import queue
        import threading

        self._queue_mod = queue
        self._in: Any = queue.Queue(depth)
        self._out: Any = queue.Queue(depth)
        self._stop = threading.Event()
        self._error: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._producer, args=(produce,), daemon=True),
            threading.Thread(target=self._consumer, args=(consume,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _offer(self, q: Any, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except self._queue_mod.Full:
                continue
        return False

    def _take(self, q: Any) -> Any:
        while not self._stop.is_set():
            try:
                return q.get(timeout=0.05)
            except self._queue_mod.Empty:
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
        if self._error:
            raise self._error[0]

    def items(self) -> Iterator[Any]:
        """The produced items, in order; raises the first error of either thread."""
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
        self._threads[1].join()
        self._check()

    def close(self) -> None:
        """Stop both threads and wait for them (always call it, e.g. in ``finally``)."""
        self._stop.set()
        for t in self._threads:
            t.join()


_END = object()
