"""The ``pydp-core`` command line (argparse: standard library, no extra dependency).

One module per command (``pydp_core.cli.<command>``, each with ``HELP``, ``configure(parser)`` and
``run(args)``), listed in :data:`COMMANDS`; ``demo`` is the main job of the README.

- ``calibrate NOISE --epsilon E [--delta D] [--sensitivity S | --sensitivity bounds --bounds L U]``
  (or ``--scale S`` to analyse a given scale): scale, std, variance and the guarantees under each
  definition (pure DP, (epsilon, delta)-DP, GDP, zCDP, RDP, Rao DP) where they are known; ``--json``.
- ``profile NOISE ...``: the delta(epsilon) table; with
  ``-m SPEC`` (repeatable) and ``--compose K ...``: the certified profile, trade-off and ROC bands of
  several mechanisms and their compositions in one figure (``--out``, matplotlib) and a CSV (``--csv``).
- ``compose FILE --delta D | --epsilon E``: the certified interval of a composition listed in JSON.
- ``privatize IN OUT --column C ... --mechanism M --epsilon E --sensitivity S [--bounds [C] L U ...]
  [--nulls [C] keep|drop|replace=V ...] [--key-file K]``: Parquet or CSV files, or partitioned Parquet
  folders (written as a folder of the same partitions), streamed by batch, atomic output, never the
  input; privatising an output again adds to its release report.
- ``mu MANIFOLD --sigma S``: the GDP parameter of the Riemannian Gaussian (pydp_core.manifolds).
- ``keygen FILE``: a fresh 256-bit release key, mode 0600.
- ``session create|show FILE -k KEY [--epsilon E [--delta D] | --rho R]``: one budget for several
  ``privatize`` and ``aggregate`` runs (``--session FILE``).
- ``gaussian-epsilon --psi P ... [--delta D]``: the exact epsilon of the Gaussian mechanism and the RDP routes.

Why argparse rather than typer or click: it ships with Python (the base install stays numpy + scipy),
its conventions are the ones users expect from standard tools (``--help``, usage errors on stderr with
exit status 2), and sub-commands register through one decorator without a framework.

Exit codes: 0 success; 1 runtime failure (bad value, missing or existing file, calibration failure),
with one ``pydp-core COMMAND: error: ...`` line on stderr and nothing on stdout; 2 usage error
(argparse's convention); 130 interrupted by Ctrl-C (SIGINT), 143 by SIGTERM (128 + the signal's number, as
shells report it). ``privatize`` stops at its next safe point within about a second, leaving no output
and no temporary file. Once a run's output is published, a signal no longer interrupts it: the run
completes (its metadata with it) and exits 0. A signal during start-up ends the run as interrupted once
its imports are complete.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

#: Command name -> module of ``pydp_core.cli`` that implements it.
COMMANDS: dict[str, str] = {
    "demo": "demo",
    "calibrate": "calibrate",
    "profile": "profile",
    "privatize": "privatize",
    "mu": "mu",
    "keygen": "keygen",
    "gaussian-epsilon": "gaussian_epsilon",
    "aggregate": "aggregate",
    "compose": "compose",
    "session": "session",
}

__all__ = ["main", "build_parser", "COMMANDS"]


def build_parser() -> argparse.ArgumentParser:
    """The ``pydp-core`` argument parser with every command of :data:`COMMANDS`."""
    from .._version import __version__

    parser = argparse.ArgumentParser(prog="pydp-core", description="Exact differential-privacy numerics.")
    parser.add_argument("--version", action="version", version=f"pydp-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in COMMANDS.items():
        mod = importlib.import_module(f"{__name__}.{module}")
        mod.configure(sub.add_parser(name, help=mod.HELP, description=mod.HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pydp-core`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    SIGINT and SIGTERM during start-up (the parser and the command's imports, before anything is
    written) end the program at once as interrupted; called with ``argv``, the signal is noted and the
    run ends as interrupted once the imports are complete (no import is torn). During the command they interrupt
    it, until its output is published (``OUT`` of ``privatize`` and ``aggregate`` appears or is
    replaced): from then on the run completes, with its metadata, and reports success. As the program
    (``argv`` None) the handlers stay so until exit, so that a signal while the interpreter shuts down
    does not turn a published run into a failure.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name.

    Returns
    -------
    int
        0 on success, 1 on a runtime failure (one ``pydp-core COMMAND: error: ...`` line on stderr),
        2 on a usage error, 130 when interrupted by SIGINT (Ctrl-C), 143 by SIGTERM.
    """
    received: list[int] = []
    signals = _Signals(received, exit_at_start=argv is None)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        run = importlib.import_module(f"{__name__}.{COMMANDS[args.command]}").run
        if received:
            return _interrupted(args.command, received[0])
        signals.arm(getattr(args, "output", None))
        try:
            code = int(run(args))
        except (ValueError, TypeError, OSError, ArithmeticError, RuntimeError, ImportError) as exc:
            if received:  # the signal interrupted an import, which reports it as an ImportError
                return _interrupted(args.command, received[0])
            print(f"pydp-core {args.command}: error: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt as exc:
            return _interrupted(args.command, int(getattr(exc, "signum", received[0] if received else signal.SIGINT)))
        except Exception:
            # An import torn by the signal can fail later with another error ("partially initialized module").
            if received:
                return _interrupted(args.command, received[0])
            raise
        signals.disarm()
        return code
    finally:
        signals.restore(keep=argv is None)


def _interrupted(command: str, signum: int) -> int:
    print(f"pydp-core {command}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
    return 128 + signum


class _Signals:
    """SIGINT and SIGTERM handlers of one run, noting each signal in ``received``.

    Until :meth:`arm` (start-up, nothing written yet) a signal ends the process at once with 128 + signum
    if ``exit_at_start``, else it is only noted. Armed, a signal raises KeyboardInterrupt (with ``signum``)
    unless the output was published since :meth:`arm`; commands that stop at safe points install their
    own handlers meanwhile. Disarmed, a signal is only noted. Nothing is installed outside the main thread.
    """

    def __init__(self, received: list[int], exit_at_start: bool = False) -> None:
        self.received = received
        self.starting, self.exit_at_start = True, exit_at_start
        self.armed = False
        self.output: str | None = None
        self.before: tuple[Any, ...] | None = None
        self.previous: dict[Any, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._handler) for s in (signal.SIGINT, signal.SIGTERM)}

    @staticmethod
    def _identity(path: str) -> tuple[Any, ...] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size

    def arm(self, output: Any) -> None:
        self.output = output if isinstance(output, str) else None
        self.before = self._identity(self.output) if self.output else None
        self.starting, self.armed = False, True

    def disarm(self) -> None:
        self.starting = self.armed = False

    def published(self) -> bool:
        """Whether the output file appeared or was replaced since :meth:`arm`."""
        if self.output is None:
            return False
        now = self._identity(self.output)
        return now is not None and now != self.before

    def _handler(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        if self.starting and self.exit_at_start:
            os.write(2, f"pydp-core: interrupted ({signal.Signals(signum).name})\n".encode())
            os._exit(128 + signum)
        if self.armed and not self.published():
            exc = KeyboardInterrupt()
            exc.signum = signum  # type: ignore[attr-defined]
            raise exc

    def restore(self, keep: bool) -> None:
        """Put the previous handlers back, or (``keep``) leave these, disarmed, until the process exits."""
        self.starting = self.armed = False
        if not keep:
            for s, h in self.previous.items():
                signal.signal(s, h)
