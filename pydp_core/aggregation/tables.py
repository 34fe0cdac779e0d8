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

