"""``pydp-core keygen``: a fresh 256-bit release key, readable by its owner only."""
from __future__ import annotations

import argparse
import sys

HELP = "write a fresh 256-bit release key, readable by its owner only"


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``keygen``."""
    p.add_argument("output", metavar="FILE", help="key file to create (mode 0600)")
    p.add_argument("--force", "-f", action="store_true", help="replace FILE if it exists")


def run(args: argparse.Namespace) -> int:
    """Write the key file."""
    from ..io import write_key

    try:
        write_key(args.output, overwrite=args.force)
    except FileExistsError:
        raise FileExistsError(f"{args.output!r} exists: a key is never overwritten without --force") from None
    print(f"wrote a 256-bit key to {args.output} (mode 0600); keep it secret and use it for one release only", file=sys.stderr)
    return 0
