"""What a release does with the missing values (nulls) of a privatised column: keep, drop or replace.

- ``"keep"`` (the default): a null stays null and receives no noise. Which values are missing is then
  released as it is; choose ``"drop"`` or ``"replace=VALUE"`` when missingness itself is sensitive.
- ``"drop"``: a row with a null in the column is left out of the output (every column of it), and the rows
  kept are numbered on without gaps (the keyed noise of a row is that of its place in the output). Each
  value is released on its own, so leaving rows out changes no value's sensitivity and no budget: the
  remaining rows cost what they cost before.
- ``"replace=VALUE"``: a null becomes ``VALUE`` (clamped to the column's bounds like the others) and is
  noised like any value, so the output has no nulls in the column.

The rule is the same for files (:func:`~pydp_core.io.privatize_file`, ``pydp-core privatize --nulls``) and
for data in memory (:func:`~pydp_core.privatize`), and a policy other than the default is part of the
release's description (:func:`with_nulls`): one data set released under ``drop`` and under ``keep`` is two
releases under one key, which the key's ledger refuses.

What counts as missing: a pyarrow null, a pandas NA (and NaN in a float column, pandas' own missing value)
and a masked entry of a ``numpy.ma.MaskedArray``. A plain numpy array has no nulls: its NaN are the missing
values once a policy is given (``nulls=...``), and refused without one. NaN in Arrow data or in a file is
not a missing value: it stays refused (store missing values as nulls).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["DEFAULT", "Policies", "null_policies", "describe_nulls", "with_nulls", "dropped_columns", "kept_rows",
           "fill_nulls"]

#: The policy of a column that is not given one.
DEFAULT = "keep"

#: ``{column: (name, value)}``: every privatised column's policy, ``value`` the replacement (or None).
Policies = Mapping[str, tuple[str, float | None]]


def _policy(text: Any, where: str) -> tuple[str, float | None]:
    if not isinstance(text, str):
        raise TypeError(f"{where} must be 'keep', 'drop' or 'replace=VALUE' (a str), not {type(text).__name__}")
    name, sep, value = text.partition("=")
    if name in ("keep", "drop") and not sep:
        return name, None
    if name == "replace" and sep:
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{where}: replace=VALUE needs a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"{where}: replace=VALUE needs a finite number, got {value!r}")
        return name, number
    raise ValueError(f"{where} must be 'keep', 'drop' or 'replace=VALUE', got {text!r}")


def null_policies(nulls: Any, columns: Sequence[str]) -> dict[str, tuple[str, float | None]]:
    """The null policy of every privatised column.

    Parameters
    ----------
    nulls : str or mapping, optional
        One policy for every column (``"keep"``, ``"drop"``, ``"replace=VALUE"``), or ``{column: policy}``
        (columns not named get :data:`DEFAULT`); ``None`` is the default for all.
    columns : sequence of str
        The privatised columns.

    Returns
    -------
    dict
        ``{column: (name, value)}``, ``value`` the replacement (or None).

    Raises
    ------
    ValueError
        If a policy is not one of the three, a replacement is not a finite number, or the mapping names a
        column that is not privatised.
    TypeError
        If a policy is not a str.

    Examples
    --------
    >>> null_policies({"spend": "replace=0"}, ["spend", "minutes"])
    {'spend': ('replace', 0.0), 'minutes': ('keep', None)}
    """
    if nulls is None:
        nulls = DEFAULT
    if isinstance(nulls, Mapping):
        extra = [c for c in nulls if c not in columns]
        if extra:
            raise ValueError(f"nulls names column {extra[0]!r}, which is not privatised (columns: {', '.join(columns)})")
        return {c: _policy(nulls.get(c, DEFAULT), f"nulls for column {c!r}") for c in columns}
    one = _policy(nulls, "nulls")
    return {c: one for c in columns}


def describe_nulls(policies: Policies) -> dict[str, str] | None:
    """The policies other than the default, as text, for a release's description and report (None if none)."""
    out = {c: name if value is None else f"{name}={value!r}" for c, (name, value) in policies.items()
           if name != DEFAULT}
    return out or None


def with_nulls(description: dict[str, Any], policies: Policies) -> dict[str, Any]:
    """A release description (:func:`~pydp_core.io.release_description`) with the null policies other than
    the default: they change the output law, so a release under another policy is another release."""
    described = describe_nulls(policies)
    return description if described is None else {**description, "nulls": described}


def dropped_columns(policies: Policies) -> list[str]:
    """The columns whose nulls drop their rows."""
    return [c for c, (name, _) in policies.items() if name == "drop"]


def kept_rows(valid: Iterable[np.ndarray | None]) -> np.ndarray | None:
    """The rows a ``drop`` keeps: those valid in every dropping column (``valid`` holds one boolean array
    per such column, None for a column without nulls). None when every row is kept."""
    kept: np.ndarray | None = None
    for v in valid:
        if v is not None and not v.all():
            kept = v.copy() if kept is None else kept & v
    return kept


def fill_nulls(values: np.ndarray, valid: np.ndarray | None,
               policy: tuple[str, float | None]) -> tuple[np.ndarray, np.ndarray | None]:
    """One column's values ready for the noise, and the rows whose output is kept (None: all).

    Under ``replace`` a null takes the replacement (in the column's float type: float32 stays float32) and
    is released like any value; otherwise a null is padded with a placeholder whose output is discarded.
    Integer input becomes float64 when anything is written into it.
    """
    if valid is None or valid.all():
        return values, None
    name, value = policy
    out = np.array(values, dtype=np.float64 if values.dtype.kind in "iub" else values.dtype)
    out[~valid] = value if name == "replace" else 0
    return (out, None) if name == "replace" else (out, valid)
