"""``pydp_core.aggregation`` on polars DataFrames: a polars DataFrame in, a polars DataFrame out, equal to the
pyarrow result for the same key (groups, values, types and report)."""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pydp_core.aggregation import aggregate, aggregate_report

KEY = bytes(range(32))


@pytest.fixture
def frame():
    rng = np.random.default_rng(11)
    n = 5000
    return pl.DataFrame({"user": rng.integers(0, 800, n), "city": rng.choice(["a", "b", "c", "d"], n),
                         "day": rng.integers(0, 3, n).astype(np.int32), "spend": rng.uniform(-10, 600, n)})


KW = dict(privacy_unit="user", aggregations={"user": ["count", "privacy_id_count"], "spend": ["sum", "mean"]},
          bounds={"spend": (0.0, 500.0)}, max_partitions=2, max_contributions=3, epsilon=2.0, delta=1e-6, key=KEY)


@pytest.mark.parametrize("by, selection", [("city", "threshold"), (["city", "day"], "optimal")])
def test_polars_result_equals_the_pyarrow_result(frame, by, selection):
    out = aggregate(frame, by=by, partition_selection=selection, **KW)
    ref = aggregate(frame.to_arrow(), by=by, partition_selection=selection, **KW)
    assert isinstance(out, pl.DataFrame) and out.height > 0
    assert out.equals(pl.from_arrow(ref))
    assert out.to_arrow().replace_schema_metadata(ref.schema.metadata).equals(ref)
    assert aggregate_report(out) == aggregate_report(ref)
    assert out.schema["count"] == pl.Int64


def test_polars_public_partitions_and_row_order(frame):
    public = pl.DataFrame({"city": ["d", "a", "zz"]})
    kw = dict(KW, delta=0.0)
    out = aggregate(frame, by="city", public_partitions=public, **kw)
    assert out["city"].to_list() == ["d", "a", "zz"]
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=2)
    assert aggregate(shuffled, by="city", public_partitions=public, **kw).equals(out)
    ref = aggregate(frame.to_arrow(), by="city", public_partitions=pa.table({"city": ["d", "a", "zz"]}), **kw)
    assert out.equals(pl.from_arrow(ref))


def test_polars_bad_input_names_the_argument(frame):
    with pytest.raises(ValueError, match="privacy_unit"):
        aggregate(frame, **dict(KW, privacy_unit="nobody"), by="city")
    with pytest.raises(TypeError, match="spend"):
        aggregate(frame.with_columns(pl.col("spend").cast(pl.String)), by="city", **KW)
