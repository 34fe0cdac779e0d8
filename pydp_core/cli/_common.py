"""What the data commands (``privatize``, ``aggregate``) share: library messages and warnings in the flags'
spellings, the progress display, and the per-column options ``[C] VALUE...`` (``--bounds``,
``--nulls``)."""
from __future__ import annotations

import sys
import warnings
from typing import Any

#: Python argument spellings in library messages -> the flags of the data commands (privatize, aggregate).
_FLAGS = (
    ("release=True is not available", "a release (without --simulate) is not available"),
    ("Pass simulation=True if this is a simulation", "Leave out --key-file if this is a simulation"),
    ("release=False", "--simulate"),
    ("simulation=True", "--simulate"),
    ("sensitivity_holds=True", "--sensitivity-holds"),
    ("sensitivity='bounds'", "--sensitivity bounds"),
    ("bounds=(lower, upper)", "--bounds LOWER UPPER"),
    ("bounds=(low, high)", "--bounds LOWER UPPER"),
    ("bounds=", "--bounds"),
    ("--force / overwrite=True", "--force"),
    ("output_format='parquet' or 'csv'", "--output-format parquet or csv"),
    ("format='parquet' or 'csv'", "--format parquet or csv"),
    ("confirm_delta=True", "--confirm-delta"),
    ("batch_rows", "--batch-rows"),
    ("block_rows", "--block-rows"),
    ("read as format='parquet'", "read as --format parquet"),
    ("output_format='parquet' or none", "--output-format parquet or none"),
    ("through one pydp_core.Session", "through one --session (pydp-core session create)"),
    ("pydp-core keygen, pydp_core.io.generate_key", "pydp-core keygen"),
    ("pass a larger max_contributions", "give a larger --max-contributions"),
    ("max_contributions=", "--max-contributions "),
    ("max_contributions", "--max-contributions"),
    ("privacy_unit", "--privacy-unit"),
    ("the delimiter must be one character", "--delimiter must be one character"),
    ("delimiter must be one character", "--delimiter must be one character"),
    ("drop or impute them first", "give --nulls C drop or --nulls C replace=VALUE"),
    ("public_partitions", "--public-partitions"),
    ("max_partitions", "--max-partitions"),
    ("budget_split", "--budget-split"),
    ("bounds_share", "--bounds-share"),
)


def in_flags(text: str, starts: tuple[tuple[str, str], ...] = ()) -> str:
    """A library message with its Python argument spellings replaced by the flags (:data:`_FLAGS`), and a
    message that starts with one of ``starts``' names given that name's flag."""
    for python, flag in _FLAGS:
        text = text.replace(python, flag)
    for python, flag in starts:
        if text.startswith(python):
            return flag + text[len(python):]
    return text


def warn_in_flags(translate: Any) -> None:
    """Within a ``catch_warnings`` block: warnings go on as before, their text in the flags (``translate``,
    a function of the text)."""
    previous = warnings.showwarning

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        warnings.showwarning = previous
        try:
            warnings.warn_explicit(translate(str(message)), category, filename, lineno)
        finally:
            warnings.showwarning = show

    warnings.showwarning = show


def progress_bar(enabled: bool, total: Any, label: str, *, asked: bool = False) -> Any:
    """A tqdm bar on stderr, or None; says why on stderr when ``--progress`` was asked for but cannot be shown."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        if asked:
            print("pydp-core: --progress needs tqdm, which the 'progress' extra installs: "
                  "pip install 'pydp_core[progress]'; continuing without a progress bar", file=sys.stderr)
        return None
    return tqdm(total=total, unit=" rows", unit_scale=True, desc=label, file=sys.stderr, leave=False)




class Progress:
    """The progress display of a run: created on the first call, which the command makes once every check
    has passed, so that nothing is drawn before an argument or file error.

    Parameters
    ----------
    show, asked : bool
        Whether to draw a bar, and whether ``--progress`` asked for it (then a missing tqdm is reported).
    label : str
        The bar's label (the command).
    source, fmt : str
        The input and its format, for the total number of rows (Parquet metadata; none for CSV).
    """

    def __init__(self, show: bool, asked: bool, label: str, source: str, fmt: str | None) -> None:
        self.show, self.asked, self.label, self.source, self.fmt = show, asked, label, source, fmt
        self.bar: Any = None
        self.started = False

    def __call__(self, rows: int) -> None:
        if not self.started:
            self.started = True
            if self.show:
                from ..io.files import total_rows

                self.bar = progress_bar(True, total_rows(self.source, self.fmt), self.label, asked=self.asked)
        if self.bar is not None and rows:
            self.bar.update(rows)

    def stage(self, text: str) -> None:
        """Name what the run does now (after the rows are read: the noise) in the bar's label."""
        if self.bar is not None:
            self.bar.set_description(f"{self.label}: {text}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def per_column(items: list[list[str]], columns: list[str], flag: str, width: int,
               of: str) -> tuple[Any, dict[str, list[str]]]:
    """``[C] VALUE...`` options (``width`` values each): (the values given without C or None, {C: values}).

    Raises
    ------
    ValueError
        Naming ``flag``: a wrong number of values, a column that is not one of ``columns`` (described as
        "the {of} columns"), or one given twice.
    """
    default: Any = None
    named: dict[str, list[str]] = {}
    for item in items:
        if len(item) == width:
            if default is not None:
                raise ValueError(f"{flag} is given twice without a column ({' '.join(default)} and {' '.join(item)})")
            default = item
        elif len(item) == width + 1:
            col, values = item[0], item[1:]
            if col not in columns:
                raise ValueError(f"{flag} {' '.join(item)}: {col!r} is not one of the {of} columns ({', '.join(columns)})")
            if col in named:
                raise ValueError(f"{flag} is given twice for column {col!r}")
            named[col] = values
        else:
            raise ValueError(f"{flag} takes [C] {'LOWER UPPER' if width == 2 else 'POLICY'}, got {' '.join(item)!r}")
    return default, named


def nulls_option(items: list[list[str]], columns: list[str], of: str) -> Any:
    """``--nulls [C] POLICY`` as the library takes it (:mod:`pydp_core.io.nulls`): None (the default
    policy), one policy, or ``{column: policy}``; ``columns`` are the columns a policy may name."""
    default, named = per_column(items, columns, "--nulls", 1, of)
    if not named:
        return None if default is None else default[0]
    return {c: named[c][0] if c in named else (None if default is None else default[0]) for c in columns
            if c in named or default is not None}
