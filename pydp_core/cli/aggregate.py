"""``pydp-core aggregate``: differentially private group-by aggregation of a Parquet or CSV file."""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

from ._args import finite_float, positive_int
from ._common import Progress, in_flags, nulls_option, warn_in_flags

HELP = ("differentially private group-by counts, sums, means, variances, quantiles, distinct counts and histograms "
        "with per-person bounding (atomic)")

_EPILOG = """\
The budget: --epsilon and --delta (or --rho, zCDP) are the TOTAL for one privacy unit (all its rows),
split evenly over the aggregates and partition selection unless --budget-split says otherwise; the report
(written into the Parquet key-value metadata under 'pydp_core.aggregation' and into OUT.json) lists the
definition, the noise, the share, noise scale and interval half-width of every aggregate and the composed
total. Noise: --epsilon alone is pure DP with discrete Laplace noise; --rho is zCDP with discrete Gaussian
noise; with --epsilon and --delta > 0, --noise laplace spends delta on partition selection only and
--noise gaussian splits epsilon and delta between selection and the Gaussian aggregates (composed in
zCDP); without --noise the one with the smaller noise is taken. Partition selection (Laplace
thresholding, or with --partition-selection optimal the optimal mechanism of Desfontaines et al. 2022)
needs --delta > 0; with --public-partitions every listed group is released and delta may be 0. The key's
use is recorded in KEY.ledger before any noise is drawn: a second aggregation under the key is refused
(an identical rerun on identical data is accepted and gives the identical output), unless both go
through one --session (pydp-core session), which charges each to its budget.

example:
  pydp-core aggregate visits.parquet out.parquet --privacy-unit user --group-by city \\
      --count --sum spend --mean spend --bounds spend 0 500 --privacy-id-count \\
      --max-partitions 3 --max-contributions 5 --epsilon 1 --delta 1e-7 -k release.key
  pydp-core aggregate visits.parquet out.parquet --privacy-unit user --group-by city --count \\
      --max-partitions 20 --max-contributions 1 --rho 0.5 --delta 1e-9 -k release.key
"""


def _bounds(items: list[list[str]]) -> Any:
    """``--bounds C LOW HIGH``, ``--bounds C auto`` or ``--bounds auto`` (every column) as ``aggregate``'s bounds."""
    if any(item == ["auto"] for item in items):
        if len(items) > 1:
            raise ValueError("--bounds auto chooses every column's bounds: give no other --bounds")
        return "auto"
    out: dict[str, Any] = {}
    for item in items:
        if len(item) == 2 and item[1] == "auto":
            out[item[0]] = "auto"
        elif len(item) == 3:
            out[item[0]] = (finite_float(item[1]), finite_float(item[2]))
        else:
            raise ValueError(f"--bounds takes C LOW HIGH, C auto or auto, got {' '.join(item)!r}")
    return out or None


def configure(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _EPILOG
    p.add_argument("input", metavar="IN", help="input Parquet file or folder (partitioned, Spark output), or CSV file")
    p.add_argument("output", metavar="OUT", help="output file, written atomically; the report goes to OUT.json too")
    p.add_argument("--privacy-unit", required=True, metavar="C", help="the column identifying a person")
    p.add_argument("--group-by", action="append", metavar="C", help="group-by column (repeat for more; not with --top-k)")
    p.add_argument("--count", action="append", nargs="?", const="", metavar="C",
                   help="noisy row count per group (named after C, default the privacy-unit column)")
    for agg in ("sum", "mean", "variance"):
        p.add_argument(f"--{agg}", action="append", default=[], metavar="C", help=f"noisy {agg} of column C (needs --bounds C)")
    p.add_argument("--quantile", action="append", nargs="+", default=[], metavar=("C", "Q"),
                   help="noisy quantiles of column C at levels Q in [0, 1] (needs --bounds C); --median C, --min C, "
                        "--max C likewise")
    for agg in ("median", "min", "max"):
        p.add_argument(f"--{agg}", action="append", default=[], metavar="C", help=f"noisy {agg} of column C (needs --bounds C)")
    p.add_argument("--count-distinct", action="append", default=[], metavar="C",
                   help="noisy number of distinct values of column C per group (a person counts with at most "
                        "--max-contributions rows per group)")
    p.add_argument("--histogram", action="append", nargs="+", default=[], metavar=("C", "EDGE"),
                   help="noisy counts of column C in the public bins [E0, E1), ..., [Em-1, Em] (values clamped)")
    p.add_argument("--vector-sum", action="append", nargs=4, default=[], metavar=("C", "NORM", "BOUND", "SIZE"),
                   help="noisy sum of the vectors (lists of SIZE numbers) of column C, each clipped to BOUND in the "
                        "l1, l2 or linf NORM")
    p.add_argument("--privacy-id-count", action="store_true", help="noisy number of distinct privacy units per group")
    p.add_argument("--bounds", action="append", nargs="+", default=[], metavar="C LOW HIGH",
                   help="clamp column C to [LOW, HIGH] (one per summed/averaged column); 'C auto' chooses C's "
                        "bounds under DP with a share of the budget, 'auto' every column's")
    p.add_argument("--bounds-share", type=finite_float, metavar="S",
                   help="the share of the budget in (0, 1) spent on choosing 'auto' bounds (default 0.1)")
    p.add_argument("--max-partitions", type=positive_int, required=True, metavar="K", help="groups kept per person")
    p.add_argument("--max-contributions", type=positive_int, metavar="K",
                   help="rows kept per person and group (required but with --top-k, where it applies to --top-k-score)")
    p.add_argument("--top-k", nargs=2, metavar=("C", "K"),
                   help="instead of group-by aggregates: the K values of column C held by the most persons "
                        "(report-noisy-max; --public-partitions gives public candidates, else --delta > 0 selects them)")
    p.add_argument("--top-k-score", metavar="S",
                   help="with --top-k: rank by the sum of column S (needs --bounds S LOW HIGH with 0 <= LOW)")
    p.add_argument("--top-k-values", action="store_true",
                   help="with --top-k: also release each winner's noisy count (or sum), with half the ranking's share")
    budget = p.add_mutually_exclusive_group(required=True)
    budget.add_argument("--epsilon", type=finite_float, help="total epsilon of the release (with --delta)")
    budget.add_argument("--rho", type=finite_float, help="total zCDP budget of the release (Gaussian noise)")
    p.add_argument("--delta", type=finite_float, default=0.0,
                   help="total delta (partition selection, and Gaussian noise under --epsilon; default 0)")
    p.add_argument("--noise", choices=("laplace", "gaussian"),
                   help="noise of the aggregates (default: Laplace for pure DP, Gaussian for zCDP, else the smaller)")
    p.add_argument("--partition-selection", choices=("threshold", "optimal"), default="threshold",
                   help="how groups are selected without --public-partitions: Laplace thresholding (default) or the "
                        "optimal mechanism of Desfontaines et al. 2022 (not with --rho)")
    p.add_argument("--public-partitions", metavar="FILE",
                   help="Parquet/CSV file with the group-by columns: release exactly these groups (no selection)")
    p.add_argument("--budget-split", action="append", default=[], metavar="NAME=W",
                   help="weight of one aggregate ('<column>_<aggregate>' or 'selection'); give all or none")
    p.add_argument("--confidence", type=finite_float, default=0.95, help="level of the interval columns (default 0.95)")
    p.add_argument("--key-file", "-k", metavar="FILE",
                   help="256-bit release key from 'pydp-core keygen' (default: a fresh key); its use is recorded in "
                        "FILE.ledger, and a second release under it (other parameters, or other data) is refused "
                        "unless both go through one --session")
    p.add_argument("--session", metavar="FILE",
                   help="session file from 'pydp-core session create' (with its --key-file): the release is charged "
                        "to the session's budget before any noise is drawn, and refused past it")
    p.add_argument("--format", choices=("parquet", "csv"), help="input format (default: from the name; folders are Parquet)")
    p.add_argument("--output-format", choices=("parquet", "csv"), help="output format (default: from OUT's name, else Parquet)")
    p.add_argument("--delimiter", help="CSV field delimiter for input and output (default: a tab for .tsv, else ',')")
    p.add_argument(
        "--nulls", nargs="+", action="append", default=[], metavar="[C] POLICY",
        help="missing values (nulls) of aggregated column C, or without C of every aggregated column: keep (the "
        "default: a null reaches the aggregation, which refuses it), drop (the row is left out before the "
        "per-person bounding; no sensitivity changes) or replace=VALUE (the value, clamped like any other)",
    )
    p.add_argument("--force", "-f", action="store_true", help="replace OUT (and OUT.json) if they exist (never the input)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="always show a progress bar (rows read, then the aggregation)")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show a progress bar")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")


def _aggregations(args: argparse.Namespace) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for col in args.count or []:
        out.setdefault(col or args.privacy_unit, []).append("count")
    for agg in ("sum", "mean", "variance"):
        for col in getattr(args, agg):
            out.setdefault(col, []).append(agg)
    for agg in ("median", "min", "max"):
        for col in getattr(args, agg):
            out.setdefault(col, []).append(agg)
    for col, *levels in args.quantile:
        if not levels:
            raise ValueError(f"--quantile {col}: give at least one level Q in [0, 1]")
        out.setdefault(col, []).append(("quantile", [finite_float(q) for q in levels]))
    for col in args.count_distinct:
        out.setdefault(col, []).append("count_distinct")
    for col, *edges in args.histogram:
        if len(edges) < 2:
            raise ValueError(f"--histogram {col}: give at least two increasing edges")
        out.setdefault(col, []).append(("histogram", [finite_float(e) for e in edges]))
    for col, norm, bound, size in args.vector_sum:
        out.setdefault(col, []).append(("vector_sum", norm, finite_float(bound), positive_int(size)))
    if args.privacy_id_count:
        out.setdefault(args.privacy_unit, []).append("privacy_id_count")
    if not out:
        raise ValueError("ask for at least one aggregate: --count, --sum C, --mean C, --variance C, --median C, "
                         "--quantile C Q, --count-distinct C, --histogram C EDGES or --privacy-id-count")
    return out


def _split(items: list[str]) -> dict[str, float] | None:
    if not items:
        return None
    out = {}
    for item in items:
        name, sep, weight = item.partition("=")
        if not sep:
            raise ValueError(f"--budget-split takes NAME=WEIGHT, got {item!r}")
        out[name] = finite_float(weight)
    return out


def _top_k_options(args: argparse.Namespace, bounds: Any) -> dict[str, Any]:
    """The arguments of :func:`pydp_core.top_k` from ``--top-k C K`` and its options."""
    if args.group_by or args.noise or args.rho is not None or args.budget_split or args.bounds_share is not None:
        raise ValueError("--top-k takes no --group-by, --noise, --rho, --budget-split or --bounds-share")
    column, k = args.top_k[0], positive_int(args.top_k[1])
    score = args.top_k_score
    if score is not None and (not isinstance(bounds, dict) or set(bounds) != {score}):
        raise ValueError(f"--top-k-score {score}: give --bounds {score} LOW HIGH (and no other --bounds)")
    if score is None and (bounds is not None or args.max_contributions is not None):
        raise ValueError("--bounds and --max-contributions apply to --top-k with --top-k-score")
    return dict(column=column, k=k, privacy_unit=args.privacy_unit, max_partitions=args.max_partitions,
                epsilon=args.epsilon, delta=args.delta, score=score, bounds=None if score is None else bounds[score],
                max_contributions=args.max_contributions or 1, release_values=args.top_k_values,
                confidence=args.confidence)


#: Library messages that start with an argument's name -> the flag it is given with here.
_STARTS = (("nulls", "--nulls"),)


def cli_message(text: str) -> str:
    """A library message in this command's flags (:func:`pydp_core.cli._common.in_flags`)."""
    return in_flags(text, _STARTS)


def run(args: argparse.Namespace) -> int:
    """Aggregate the file; messages and warnings name the flags."""
    with warnings.catch_warnings():
        warn_in_flags(cli_message)
        try:
            return _run(args)
        except (ValueError, TypeError, OSError, ArithmeticError, RuntimeError) as exc:
            exc.args = (cli_message(str(exc)),)
            raise


def _value_columns(args: argparse.Namespace, aggs: Any, score: Any) -> list[str]:
    """The columns whose values are aggregated (those ``--nulls`` may name)."""
    cols = [score] if args.top_k else [c for c in aggs if c != args.privacy_unit]
    return [c for c in cols if c]


def _run(args: argparse.Namespace) -> int:
    from ..io.files import csv_delimiter, input_format, read_columns
    from ..io.nulls import null_policies

    bounds = _bounds(args.bounds)
    aggs: Any = None
    options: Any = None
    if args.top_k:
        options = _top_k_options(args, bounds)
        by = [options["column"]]
        columns = list(dict.fromkeys([args.privacy_unit, *by] + ([options["score"]] if options["score"] else [])))
    else:
        if not args.group_by or args.max_contributions is None:
            raise ValueError("--group-by and --max-contributions are required (unless --top-k)")
        if args.top_k_score or args.top_k_values:
            raise ValueError("--top-k-score and --top-k-values go with --top-k")
        aggs = _aggregations(args)
        by = args.group_by
        columns = list(dict.fromkeys([args.privacy_unit, *by, *aggs]))
    values = _value_columns(args, aggs, options["score"] if args.top_k else None)
    nulls = nulls_option(args.nulls, values, "aggregated")
    null_policies(nulls, values)  # checked before the input is read; the library applies them
    fmt_in = input_format(args.input, args.format)
    _check_output(args)
    public: Any = None
    if args.public_partitions:
        public = read_columns(args.public_partitions, by, delimiter=csv_delimiter(args.public_partitions, args.delimiter))
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = Progress(show, args.progress is True, "aggregate", args.input, fmt_in)
    try:
        table = read_columns(args.input, columns, format=fmt_in, delimiter=csv_delimiter(args.input, args.delimiter),
                             progress=bar)
        bar.stage("noise")
        result, session = _release(args, table, public, aggs, bounds, options, nulls)
    finally:
        bar.close()
    return _write(args, result, session)


def _check_output(args: argparse.Namespace) -> None:
    """The output checks that need no data, made before the input is read."""
    for path in (args.output, args.output + ".json"):
        if os.path.exists(path) and not args.force:
            raise FileExistsError(f"{path!r} exists (use --force to replace it)")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"output folder {folder!r} does not exist")
    if args.key_file and not os.path.exists(args.key_file):
        raise FileNotFoundError(f"--key-file {args.key_file!r} does not exist")


def _release(args: argparse.Namespace, table: Any, public: Any, aggs: Any, bounds: Any,
             options: Any, nulls: Any) -> tuple[Any, Any]:
    """The aggregation (or top-k) of ``table``, and the session it was charged to (or None)."""
    from ..aggregation import aggregate, top_k
    from ..io import load_key

    session = None
    if args.session:
        if not args.key_file:
            raise ValueError("--session needs the session's --key-file")
        from .session import open_session

        session = open_session(args.session, args.key_file)
    key = load_key(args.key_file) if args.key_file and session is None else None
    ledger = args.key_file + ".ledger" if key is not None else None
    if args.top_k:
        if public is not None:
            public = public.column(options["column"]).to_pylist()
        if session is not None:
            return session.top_k(table, candidates=public, nulls=nulls, **options), session
        return top_k(table, key=key, candidates=public, ledger=ledger, nulls=nulls, **options), None
    options = dict(privacy_unit=args.privacy_unit, by=args.group_by, aggregations=aggs, bounds=bounds,
                   bounds_share=args.bounds_share,
                   max_partitions=args.max_partitions, max_contributions=args.max_contributions, epsilon=args.epsilon,
                   delta=args.delta, rho=args.rho, noise=args.noise, public_partitions=public,
                   budget_split=_split(args.budget_split), confidence=args.confidence,
                   partition_selection=args.partition_selection, nulls=nulls)
    if session is not None:
        return session.aggregate(table, **options), session
    return aggregate(table, key=key, ledger=ledger, **options), None


def _write(args: argparse.Namespace, result: Any, session: Any) -> int:
    """Write the result and its report, and say what was released."""
    from ..aggregation import aggregate_report
    from ..io.files import csv_delimiter, file_format, write_result

    if args.output_format is not None:
        fmt_out = args.output_format
    else:
        try:
            fmt_out = file_format(args.output)
        except ValueError:
            fmt_out = "parquet"
    sep_out = csv_delimiter(args.output, args.delimiter)
    sidecar = write_result(result, args.output, aggregate_report(result), format=fmt_out, delimiter=sep_out,
                           overwrite=args.force, protect=(args.input,))
    if not args.quiet:
        b = aggregate_report(result)["budget"]
        guarantee = (f"(rho={b['rho']:.6g}, delta={b['delta']:.3g})-{b['definition']}" if "rho_given" in b
                     else f"(epsilon={b['epsilon']:.6g}, delta={b['delta']:.3g})-DP")
        print(f"wrote {args.output} ({result.num_rows} groups) and {sidecar}: {guarantee} with {b['noise']} noise "
              "per privacy unit in total", file=sys.stderr)
        from ..aggregation import BOUNDING_BIAS

        print(f"note: {BOUNDING_BIAS}", file=sys.stderr)
        if session is not None:
            print(f"session {args.session}: spent {session.spent()!r} of {session.budget!r}", file=sys.stderr)
    return 0
