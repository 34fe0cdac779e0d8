"""``pydp-core privatize``: noise for columns of a Parquet or CSV file, streamed, with atomic output."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import warnings
from typing import Any

from ._args import finite_float, mechanism_arg, positive_int, sensitivity_arg, split_mechanism
from ._common import Progress, in_flags, nulls_option, per_column, warn_in_flags

HELP = "add calibrated noise to columns of a Parquet or CSV file, or a partitioned Parquet folder (streaming, atomic)"


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``privatize``."""
    p.add_argument("input", metavar="IN",
                   help="input Parquet or CSV file, or a partitioned Parquet folder (hive, Spark output); only read")
    p.add_argument("output", metavar="OUT",
                   help="output file, written atomically (temporary file, then rename); for a folder IN, a folder of "
                        "the same partitions (partition columns kept in the folder names), renamed into place whole")
    p.add_argument("--column", "-c", action="append", required=True, metavar="C", help="column to privatise (repeat for more)")
    p.add_argument("--mechanism", "-m", type=mechanism_arg, required=True, metavar="M",
                   help="noise mechanism: laplace, gaussian, logistic, subbotin (with --r), or subbotin:r=R")
    p.add_argument("--r", type=finite_float, help="Subbotin order r >= 1 (subbotin only)")
    p.add_argument(
        "--epsilon", type=finite_float, required=True,
        help="the TOTAL epsilon per record: split evenly over the --column columns (each column's mechanism gets "
        "epsilon / number of columns, rounded down), so one record costs epsilon in all; see --budget-per-column",
    )
    p.add_argument("--delta", type=finite_float, default=0.0,
                   help="the TOTAL delta per record, split evenly like --epsilon (default 0)")
    p.add_argument(
        "--budget-per-column", action="store_true",
        help="give every column the whole --epsilon and --delta instead: one record then costs their sum over the "
        "columns (number of columns x epsilon), which the output's metadata records as its budget per record",
    )
    p.add_argument(
        "--sensitivity", type=sensitivity_arg, required=True,
        help="sensitivity D of one value, or 'bounds' for upper - lower of --bounds",
    )
    p.add_argument(
        "--bounds", nargs="+", action="append", default=[], metavar="[C] LOWER UPPER",
        help="clamp column C's values to [LOWER, UPPER] first (repeat per column); without C, every --column "
        "that has no bounds of its own. With --sensitivity bounds each column's sensitivity is its UPPER - LOWER",
    )
    p.add_argument(
        "--nulls", nargs="+", action="append", default=[], metavar="[C] POLICY",
        help="missing values (nulls) of column C, or without C of every --column: keep (the default: a null stays "
        "null, so which values are missing is released as it is), drop (the row is left out; no sensitivity "
        "changes) or replace=VALUE (noised like any value)",
    )
    p.add_argument(
        "--sensitivity-holds", action="store_true",
        help="declare that --sensitivity holds for the values as they are (no --bounds; e.g. already-aggregated "
        "columns); recorded in the output's metadata. Without --bounds a release is refused unless given",
    )
    p.add_argument(
        "--confirm-delta", action="store_true", help="accept a delta above 1e-3 without a privacy warning"
    )
    p.add_argument(
        "--key-file", "-k", metavar="FILE",
        help="256-bit release key from 'pydp-core keygen' (default: a fresh random key); its use is recorded in "
        "FILE.ledger, and a second release under it (other parameters, or other data) is refused unless both go "
        "through one --session",
    )
    p.add_argument(
        "--privacy-unit", metavar="C",
        help="the column identifying a person: the guarantee is then per person, and a person with more than "
        "--max-contributions rows is refused (default: per row)",
    )
    p.add_argument(
        "--max-contributions", type=positive_int, default=1, metavar="K",
        help="with --privacy-unit, the most rows one person may hold (default 1); each is one release, so the "
        "budget per person is K times the per-row budget",
    )
    p.add_argument(
        "--session", metavar="FILE",
        help="session file from 'pydp-core session create' (with its --key-file): the release is charged to the "
        "session's budget before any noise is drawn, and refused past it",
    )
    p.add_argument("--format", choices=("parquet", "csv"), help="input format (default: from the file name)")
    p.add_argument("--delimiter", help="CSV input field delimiter (default: a tab for .tsv, else ',')")
    p.add_argument(
        "--output-format", choices=("parquet", "csv"),
        help="output format (default: from OUT's name; a name that does not tell it is refused)",
    )
    p.add_argument(
        "--compression", choices=("snappy", "zstd", "lz4", "gzip", "brotli", "none"), default="snappy",
        help="Parquet output compression (default snappy, as pyarrow; noisy floats hardly compress, 'none' is fastest)",
    )
    p.add_argument(
        "--batch-rows", type=positive_int, default=1 << 20, help="rows read at a time (default 1048576, one keyed block)"
    )
    p.add_argument(
        "--block-rows", type=positive_int, default=1 << 20,
        help="rows per keyed noise block (default 1048576; part of the noise's definition: keep it fixed per key)",
    )
    p.add_argument("--force", "-f", action="store_true", help="replace OUT if it exists (never the input)")
    p.add_argument(
        "--simulate", action="store_true",
        help="floating-point noise for simulations (NOT a release: unsafe against least-significant-bit attacks); "
        "by default Laplace and Gaussian noise use the exact discrete release path",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show a progress bar")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show a progress bar")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.add_argument(
        "--clean-stale", action="store_true",
        help="remove the temporary files that killed runs (kill -9, power loss) left next to OUT: only files named "
        ".OUT.<pid>.<random>.tmp whose process no longer exists (without it they are only reported)",
    )


#: Library messages that start with an argument's name -> the flag it is given with here.
_STARTS = (("nulls", "--nulls"), ("column ", "--column: column "), ("columns lists", "--column lists"))


def cli_message(text: str) -> str:
    """A library message in this command's flags (:func:`pydp_core.cli._common.in_flags`)."""
    return in_flags(text, _STARTS)


def run(args: argparse.Namespace) -> int:
    """Privatise the file.

    SIGINT and SIGTERM only set a flag from here on (:func:`pydp_core.io.atomic.cancellation`); the run
    stops at its next safe point, removes its temporary file and exits 130 (SIGINT) or 143 (SIGTERM).
    The last check is just before the output is renamed into place; a signal after that finds the
    release complete, and the command exits 0.
    """
    from ..io.atomic import cancellation

    with cancellation() as cancel, warnings.catch_warnings():
        warn_in_flags(cli_message)
        try:
            code = _run(args)
        except (ValueError, TypeError, OSError, ArithmeticError, RuntimeError) as exc:
            if cancel.is_set():
                raise cancel.error() from None
            exc.args = (cli_message(str(exc)),)
            raise
        return code  # a signal after the rename finds the work done: it is reported as done


def _stale(args: argparse.Namespace) -> None:
    from ..io.atomic import stale_temporaries

    stale = stale_temporaries(args.output)
    for path in stale:
        if args.clean_stale:
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
            print(f"pydp-core privatize: removed {path}, left by a killed run", file=sys.stderr)
        else:
            print(f"pydp-core privatize: warning: {path} was left by a killed run; --clean-stale removes it",
                  file=sys.stderr)


def column_bounds(args: argparse.Namespace) -> Any:
    """``--bounds`` as the library takes it: None, one (lower, upper) pair, or ``{column: (lower, upper)}``."""
    from ..io import check_bounds

    columns = list(dict.fromkeys(args.column))
    default, named = per_column(args.bounds, columns, "--bounds", 2, "--column")

    def pair(values: list[str], where: str) -> Any:
        try:
            numbers = [finite_float(v) for v in values]
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return check_bounds(tuple(numbers), where)

    common = None if default is None else pair(default, "--bounds")
    if not named:
        return common
    out = {c: pair(named[c], f"--bounds {c}") for c in named}
    if common is not None:
        out.update({c: common for c in columns if c not in out})
    return out


def column_nulls(args: argparse.Namespace) -> Any:
    """``--nulls`` as the library takes it: None (the default policy), one policy, or ``{column: policy}``."""
    return nulls_option(args.nulls, list(dict.fromkeys(args.column)), "--column")


def _mechanisms(args: argparse.Namespace, bounds: Any) -> Any:
    """One mechanism, or ``{column: mechanism}`` when ``--sensitivity bounds`` meets per-column ``--bounds``."""
    from ..io import mechanism

    epsilon, delta = column_budget(args)
    name, r = split_mechanism(args.mechanism, args.r)

    def make(b: Any) -> Any:
        return mechanism(name, epsilon=epsilon, delta=delta, sensitivity=args.sensitivity, bounds=b, r=r,
                         confirm_delta=args.confirm_delta)

    if not isinstance(bounds, dict):
        return make(bounds)
    if args.sensitivity != "bounds":
        return make(None)
    missing = [c for c in dict.fromkeys(args.column) if c not in bounds]
    if missing:
        raise ValueError(f"--sensitivity bounds needs bounds for every --column: give --bounds {missing[0]} LOWER UPPER "
                         "(or --bounds LOWER UPPER for all)")
    mechs = {c: make(b) for c, b in bounds.items()}
    return {c: mechs[c] for c in dict.fromkeys(args.column)}


def _run(args: argparse.Namespace) -> int:
    from ..io import load_key, privatize_file

    _stale(args)
    bounds = column_bounds(args)
    nulls = column_nulls(args)
    mech = _mechanisms(args, bounds)
    key = load_key(args.key_file) if args.key_file else None
    ledger = args.key_file + ".ledger" if args.key_file else None
    session = None
    if args.session:
        if not args.key_file:
            raise ValueError("--session needs the session's --key-file")
        from .session import open_session

        session = open_session(args.session, args.key_file)
    extra = {"release": False} if args.simulate else {}
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = Progress(show, args.progress is True, "privatize", args.input, args.format)
    options = dict(bounds=bounds, format=args.format, delimiter=args.delimiter, output_format=args.output_format,
                   batch_rows=args.batch_rows, nulls=nulls,
                   block_rows=args.block_rows, overwrite=args.force, progress=bar,
                   compression=args.compression, sensitivity_holds=args.sensitivity_holds,
                   simulation=args.simulate and key is None, privacy_unit=args.privacy_unit,
                   max_contributions=args.max_contributions, **extra)
    try:
        if session is not None:
            rows = session.privatize_file(args.input, args.output, mech, columns=args.column, **options)
        else:
            rows = privatize_file(args.input, args.output, mech, key=key, columns=args.column, ledger=ledger,
                                      **options)
    finally:
        bar.close()
    if not args.quiet:
        what = "SIMULATION (floating-point noise, not a release)" if args.simulate else "privatised"
        k = len(dict.fromkeys(args.column))
        per = args.max_contributions if args.privacy_unit else 1
        unit = f"per person ({per} row(s) at most)" if args.privacy_unit else "per record"
        total = f"(epsilon={(args.epsilon * k if args.budget_per_column else args.epsilon) * per:.6g}, " \
                f"delta={(args.delta * k if args.budget_per_column else args.delta) * per:.3g}) {unit} in total"
        how = "; ".join(f"{c}: {m!r}" for c, m in mech.items()) if isinstance(mech, dict) else f"{mech!r} each"
        print(f"wrote {args.output}: {rows} rows, column(s) {', '.join(args.column)} {what} with {how}, "
              f"{total}" + (" (sensitivity declared to hold without bounds)" if args.sensitivity_holds else ""),
              file=sys.stderr)
        _note_earlier(args.output)
        if session is not None:
            print(f"session {args.session}: spent {session.spent()!r} of {session.budget!r}", file=sys.stderr)
    return 0


def _note_earlier(output: str) -> None:
    """Say so when the output's report composes earlier releases of the input (its total per record)."""
    from ..io.files import input_format
    from ..io.provenance import read_report

    try:
        report = read_report(output, input_format(output, None))
    except (ValueError, OSError):
        return
    budget = (report or {}).get("budget_per_record")
    if report and "releases" in report and budget:
        print(f"{output}: its release report holds {len(report['releases'])} releases of this data, "
              f"(epsilon={budget['epsilon']:.6g}, delta={budget['delta']:.3g}) per record in all", file=sys.stderr)


def column_budget(args: argparse.Namespace) -> tuple[float, float]:
    """The (epsilon, delta) of each column: the total split evenly (rounded down so that the exact sums stay
    within the total), or the whole of it with ``--budget-per-column``."""
    from ..aggregation.aggregations import split_epsilon

    k = len(dict.fromkeys(args.column))
    if args.budget_per_column or k == 1:
        return args.epsilon, args.delta
    if not args.epsilon > 0:
        raise ValueError(f"--epsilon must be > 0, got {args.epsilon!r}")
    delta = split_epsilon(args.delta, [1.0] * k)[0] if args.delta > 0 else args.delta
    return split_epsilon(args.epsilon, [1.0] * k)[0], delta
