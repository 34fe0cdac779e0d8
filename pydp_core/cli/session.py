"""``pydp-core session``: one privacy budget shared by several ``privatize`` and ``aggregate`` runs."""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..session import Session

from ._args import finite_float

HELP = "create or show a session: one budget for every release of a data set under one key"

_EPILOG = """\
A session is a journal file that holds the total budget of one data set and every spend against it,
authenticated under the key file's secret. Pass it with --session FILE (and the same --key-file) to
privatize and aggregate: each run is charged before any noise leaves and refused past the budget; an
identical rerun is free and gives the identical output; runs with other parameters get independent noise.

example:
  pydp-core keygen release.key
  pydp-core session create budget.session -k release.key --epsilon 3
  pydp-core aggregate visits.parquet counts.parquet ... --epsilon 1 -k release.key --session budget.session
  pydp-core privatize visits.parquet noisy.parquet ... --epsilon 2 -k release.key --session budget.session
  pydp-core session show budget.session -k release.key
"""


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``session``."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _EPILOG
    p.add_argument("action", choices=("create", "show"), help="create a session file, or show its budget and spend")
    p.add_argument("file", metavar="FILE", help="the session (journal) file")
    p.add_argument("--key-file", "-k", metavar="KEY", required=True, help="the release key of the session")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--epsilon", type=finite_float, help="create: total epsilon (with --delta: approximate DP)")
    budget.add_argument("--rho", type=finite_float, help="create: total zCDP budget")
    p.add_argument("--delta", type=finite_float, default=0.0, help="create: total delta (default 0: pure DP)")


def open_session(path: str, key_file: str) -> Session:
    """The :class:`pydp_core.Session` of a session file, with the key file's ledger (for ``--session``)."""
    from ..io import load_key
    from ..session import Session

    if not os.path.isfile(path):
        raise FileNotFoundError(f"--session: {path!r} does not exist (create it with 'pydp-core session create')")
    return Session.open(path, key=load_key(key_file), ledger=key_file + ".ledger")


def run(args: argparse.Namespace) -> int:
    """Create or show the session."""
    from ..accounting import ZCDP, ApproxDP, PureDP
    from ..io import load_key
    from ..session import Session, journal_key_for

    if args.action == "show":
        s = open_session(args.file, args.key_file)
        print(f"budget {s.budget!r}; spent {s.spent()!r}; remaining {s.remaining()!r}")
        return 0
    if os.path.exists(args.file):
        raise FileExistsError(f"{args.file!r} exists: a session is never replaced (its spends would be lost)")
    budget: Any
    if args.rho is not None:
        budget = ZCDP(args.rho)
    elif args.epsilon is not None:
        budget = ApproxDP(args.epsilon, args.delta) if args.delta > 0 else PureDP(args.epsilon)
    else:
        raise ValueError("session create needs the total budget: --epsilon (with --delta) or --rho")
    key = load_key(args.key_file)
    Session(budget, key=key, journal=args.file, journal_key=journal_key_for(key), ledger=args.key_file + ".ledger")
    print(f"wrote session {args.file}: budget {budget!r} under the key {args.key_file}", file=sys.stderr)
    return 0
