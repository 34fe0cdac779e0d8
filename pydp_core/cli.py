"""The ``pydp-core`` command line (argparse: standard library, no extra dependency).

Sub-commands register themselves in :data:`COMMANDS`; ``demo`` is the main job of the README.
Exit codes: 0 success, 1 runtime failure, 2 usage error (argparse's convention).
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def command(name: str, help: str, configure: Callable[[argparse.ArgumentParser], None]):
    def wrap(fn: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help, configure, fn)
        return fn

    return wrap


@command("demo", "calibrate a few mechanisms exactly and print them", lambda p: None)
def _demo(args: argparse.Namespace) -> int:
    from .demo import run

    run(sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="pydp-core", description="Exact differential-privacy numerics.")
    parser.add_argument("--version", action="version", version=f"pydp-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_text, configure, _) in COMMANDS.items():
        configure(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _, _, fn = COMMANDS[args.command]
    try:
        return fn(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"pydp-core {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"pydp-core {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
