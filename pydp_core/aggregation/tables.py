"""The table front end of an aggregation: column access for pyarrow Tables and pandas DataFrames (polars goes
through pyarrow)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..io.keyed import prepared_values


def _FLOAT_TYPES() -> tuple[Any, ...]:
    import pyarrow as pa

    return (pa.float16(), pa.float32(), pa.float64())


class Frame:
    """Column access for a pyarrow Table or a pandas DataFrame."""

    def __init__(self, table: Any) -> None:
        mod = type(table).__module__
        if mod.startswith("pyarrow") and hasattr(table, "schema") and hasattr(table, "column"):
            self.kind = "arrow"
            self.names = list(table.column_names)
        elif mod.startswith("pandas") and hasattr(table, "columns") and hasattr(table, "iloc"):
            self.kind = "pandas"
            self.names = [c for c in table.columns]
        else:
            raise TypeError(
                f"table must be a pyarrow Table, a pandas DataFrame or a polars DataFrame, not {type(table).__name__}"
            )
        self.table = table
        self.num_rows = int(table.num_rows if self.kind == "arrow" else len(table))

    def column(self, name: str) -> Any:
        return self.table.column(name) if self.kind == "arrow" else self.table[name]

    def check_complete(self, name: str) -> None:
        """A counted column must have no missing values (null or NaN)."""
        col = self.column(name)
        if self.kind == "arrow":
            import pyarrow.compute as pc

            missing = col.null_count > 0 or (col.type in _FLOAT_TYPES() and pc.any(pc.is_nan(col)).as_py())
        else:
            missing = bool(col.isna().any())
        if missing:
            raise ValueError(f"aggregations: column {name!r} has missing values (null or NaN); drop or impute them first")

    def raw_values(self, name: str) -> np.ndarray:
        """A value column as float64, not clamped (no copy for float64 data); nulls and non-numeric columns
        raise. The bounding kernel refuses NaN and clamps for its content hash; the kept rows are clamped after."""
        col = self.column(name)
        if self.kind == "arrow":
            import pyarrow as pa

            numeric = pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
        else:
            numeric = col.dtype.kind in "iuf" or str(col.dtype) in ("Int64", "Int32", "Float64", "Float32")
        if not numeric:
            raise TypeError(f"aggregations: column {name!r} must be numeric (got {getattr(col, 'type', None) or col.dtype})")
        if (col.null_count if self.kind == "arrow" else col.isna().any()):
            raise ValueError(f"aggregations: column {name!r} has missing values (null or NaN); drop or impute them first")
        arr = col.to_numpy() if self.kind == "arrow" else col.to_numpy(dtype=None if col.dtype.kind in "iuf" else np.float64)
        if arr.dtype.kind != "f":
            return prepared_values(arr, None, name)  # integers: exact conversion checked
        result: np.ndarray = arr.astype(np.float64, copy=False)  # NaN: refused by the bounding kernel (see partial_aggregates)
        return result


def is_polars(obj: Any) -> bool:
    return type(obj).__module__.startswith("polars") and hasattr(obj, "to_arrow") and hasattr(obj, "columns")


def group_type(frame: Frame, name: str) -> Any:
    col = frame.column(name)
    return col.type if frame.kind == "arrow" else col.dtype



def value_columns(aggregations: Any, privacy_unit: Any) -> list[str]:
    """The columns whose values an ``aggregations`` mapping aggregates (those ``nulls`` may name)."""
    from collections.abc import Mapping

    if not isinstance(aggregations, Mapping):
        return []  # the spec's checks refuse it, naming the argument
    return [c for c in aggregations if isinstance(c, str) and c != privacy_unit]


def with_null_policies(table: Any, nulls: Any, columns: list[str]) -> tuple[Any, dict[str, str] | None]:
    """``table`` (a pyarrow Table or a pandas DataFrame) with the ``nulls`` policies of ``columns`` applied
    (:mod:`pydp_core.io.nulls`), and their description for the release (None: the default for all).

    ``keep`` leaves a null where it is, and the aggregation refuses it; ``drop`` leaves out the rows with a null
    in the column; ``replace=VALUE`` fills the nulls (as float64), to be clamped like any value. Dropping rows
    changes no sensitivity: the bounds on each person's contributions are applied after. In pandas a NaN is a
    missing value, in pyarrow only a null is."""
    from ..io.nulls import describe_nulls, fill_nulls, null_policies

    if nulls is None:
        return table, None
    policies = null_policies(nulls, columns)
    described = describe_nulls(policies)
    if described is None:
        return table, None
    mod = type(table).__module__
    if mod.startswith("pyarrow") and hasattr(table, "schema"):
        from ..io.frames import apply_null_policies

        missing = [c for c in policies if c not in table.column_names]
        return (table if missing else apply_null_policies(table, policies)), described
    if not (mod.startswith("pandas") and hasattr(table, "columns")) or any(c not in table.columns for c in policies):
        return table, described  # the spec's checks name the table's kind or the missing column
    from ..io.frames import drop_null_rows

    table, _ = drop_null_rows(table, list(policies), policies)
    filled = {}
    for c, policy in policies.items():
        col = table[c]
        if policy[0] != "replace" or not col.isna().any():
            continue
        if not (col.dtype.kind in "iuf" or str(col.dtype) in ("Int64", "Int32", "Float64", "Float32")):
            raise TypeError(f"nulls for column {c!r}: replace=VALUE needs a numeric column (got dtype {col.dtype})")
        valid = col.notna().to_numpy()
        filled[c] = fill_nulls(col.to_numpy(dtype=np.float64, na_value=0.0), valid, policy)[0]
    return (table.assign(**filled) if filled else table), described
