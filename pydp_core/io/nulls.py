"""What a file release does with the missing values (nulls) of a privatised column: keep, drop or replace.

- ``"keep"`` (the default): a null stays null and receives no noise. Which values are missing is then
  released as it is; choose ``"drop"`` or ``"replace=VALUE"`` when missingness itself is sensitive.
- ``"drop"``: a row with a null in the column is left out of the output (every column of it). Each value is
  released on its own, so leaving rows out changes no value's sensitivity and no budget: the remaining
  rows cost what they cost before.
- ``"replace=VALUE"``: a null becomes ``VALUE`` (clamped to the column's bounds like the others) and is
  noised like any value, so the output has no nulls in the column.

NaN is not a missing value here: it stays refused (store missing values as nulls).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT", "null_policies", "apply_nulls", "describe_nulls"]

#: The policy of a column that is not given one.
DEFAULT = "keep"


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


def describe_nulls(policies: Mapping[str, tuple[str, float | None]]) -> dict[str, str] | None:
    """The policies other than the default, as text, for a release's description and report (None if none)."""
    out = {c: name if value is None else f"{name}={value!r}" for c, (name, value) in policies.items()
           if name != DEFAULT}
    return out or None


def apply_nulls(batch: Any, policies: Mapping[str, tuple[str, float | None]]) -> Any:
    """A pyarrow RecordBatch or Table with the rows dropped and the nulls replaced that ``policies`` ask for."""
    import pyarrow as pa
    import pyarrow.compute as pc

    drop = [c for c, (name, _) in policies.items() if name == "drop" and batch.column(c).null_count]
    if drop:
        keep = pc.is_valid(batch.column(drop[0]))
        for c in drop[1:]:
            keep = pc.and_(keep, pc.is_valid(batch.column(c)))
        batch = batch.filter(keep)
    for c, (name, value) in policies.items():
        if name == "replace" and batch.column(c).null_count:
            i = batch.schema.get_field_index(c)
            col = batch.column(c)
            filled = pc.fill_null(col.cast(pa.float64()) if pa.types.is_integer(col.type) else col,
                                  pa.scalar(value, pa.float64()).cast(pa.float32() if pa.types.is_float32(col.type)
                                                                      else pa.float64()))
            batch = batch.set_column(i, c, filled) if isinstance(batch, pa.Table) else \
                pa.RecordBatch.from_arrays([filled if j == i else batch.column(j) for j in range(batch.num_columns)],
                                           schema=batch.schema.set(i, pa.field(c, filled.type)))
    return batch
