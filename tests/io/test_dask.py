"""pydp_core.dask.privatize on a local Dask cluster (2 worker processes)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from support import frames as sup  # noqa: E402

import pydp_core  # noqa: E402

pd = pytest.importorskip("pandas", reason="pandas is an optional extra (pydp_core[etl])")
da = pytest.importorskip("dask.array", reason="dask is an optional extra (pydp_core[dask])")
dd = pytest.importorskip("dask.dataframe", reason="dask is an optional extra (pydp_core[dask])")
distributed = pytest.importorskip("distributed", reason="dask.distributed is an optional extra (pydp_core[dask])")
from support.paths import export_to_subprocesses  # noqa: E402

from pydp_core import dask as pdask  # noqa: E402
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # noqa: E402  (a check only: no record)

# The noise of different data under one key is compared on purpose (the ledger is tested in
# tests/release/test_release_safety.py): no ledger, and the sensitivity declared to hold without bounds.
SIM = dict(ledger=UNRECORDED, sensitivity_holds=True)

KEY = bytes(range(32))
B = 4096


@pytest.fixture(scope="module")
def client():
    export_to_subprocesses()
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    except Exception as exc:
        pytest.skip(f"a local Dask cluster cannot start here: {exc}")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_arrays_do_not_depend_on_the_chunking(client):
    mech = sup.laplace()
    x = np.arange(60_000, dtype=float).reshape(200, 300) % 17
    ref = pydp_core.privatize(x, mech, **SIM, key=KEY, block_rows=B)
    for chunks in [(200, 300), (50, 300), (33, 70), (1, 1000)]:
        out = pdask.privatize(da.from_array(x, chunks=chunks), mech, **SIM, key=KEY, block_rows=B)
        assert isinstance(out, da.Array) and out.dtype == np.float64
        np.testing.assert_array_equal(out.compute(), ref)


def test_array_noise_statistics_and_independent_chunks(client):
    mech = sup.gaussian()
    out = pdask.privatize(da.zeros(100_000, chunks=25_000), mech, **SIM, key=KEY, block_rows=B).compute()
    sup.assert_noise_distribution(out, mech)
    parts = out.reshape(4, -1)
    for i in range(3):
        sup.assert_uncorrelated(parts[i], parts[i + 1])


def test_recomputation_and_retries_reproduce_the_noise(client, tmp_path):
    mech = sup.laplace()
    x = da.arange(40_000, chunks=10_000).astype(float)
    first = pdask.privatize(x, mech, **SIM, key=KEY, block_rows=B)
    marks = str(tmp_path)

    def flaky(block, block_info=None):
        # The task for chunk 1 fails on its first run; the scheduler retries it.
        if block_info[0]["chunk-location"] == (1,):
            mark = os.path.join(marks, "failed")
            if not os.path.exists(mark):
                open(mark, "w").close()
                raise RuntimeError("injected task failure")
        return block

    again = pdask.privatize(x.map_blocks(flaky, dtype=float), mech, **SIM, key=KEY, block_rows=B)
    a = first.compute()
    b = client.compute(again, retries=2).result()
    assert os.path.exists(os.path.join(marks, "failed"))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, first.compute())


def test_dataframes_by_order_and_by_row_id(client):
    mech = sup.laplace()
    n = 30_000
    pdf = pd.DataFrame({"id": np.arange(n), "x": (np.arange(n) % 50).astype(float), "s": [f"r{i}" for i in range(n)]})
    pdf.loc[::13, "x"] = np.nan
    ref = pydp_core.privatize(pdf, mech, columns=["x"], **SIM, key=KEY, block_rows=B)
    for parts in (1, 4, 7):
        ddf = dd.from_pandas(pdf, npartitions=parts)
        out = pdask.privatize(ddf, mech, **SIM, key=KEY, columns=["x"], block_rows=B).compute()
        # (dask stores strings with its own string dtype: compare their values)
        pd.testing.assert_frame_equal(out[["id", "x"]], ref[["id", "x"]])
        assert out["s"].tolist() == ref["s"].tolist()
        shuffled = ddf.sample(frac=1.0, random_state=parts)
        by_id = pdask.privatize(shuffled, mech, **SIM, key=KEY, columns=["x"], index="id", block_rows=B).compute()
        pd.testing.assert_frame_equal(by_id.sort_values("id")[["id", "x"]], ref[["id", "x"]])
    series = pdask.privatize(dd.from_pandas(pdf["x"], npartitions=3), mech, **SIM, key=KEY, block_rows=B).compute()
    pd.testing.assert_series_equal(series, ref["x"])


def test_errors(client):
    mech = sup.laplace()
    ddf = dd.from_pandas(pd.DataFrame({"x": [1.0, 2.0], "s": ["a", "b"]}), npartitions=1)
    with pytest.raises(ValueError, match="columns is required"):
        pdask.privatize(ddf, mech, **SIM, key=KEY)
    with pytest.raises(TypeError, match="must be numeric"):
        pdask.privatize(ddf, mech, **SIM, key=KEY, columns=["s"])
    with pytest.raises(TypeError, match="bytes"):
        pdask.privatize(ddf, mech, key="key", columns=["x"])
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        x = da.arange(10, chunks=5)
        pdask.privatize(x[x > 3], mech, **SIM, key=KEY)
    with pytest.raises(TypeError, match="dask Array, DataFrame or Series"):
        pdask.privatize(np.zeros(3), mech, **SIM, key=KEY)


def test_rerun_at_another_epsilon_is_refused_at_the_driver(client):
    from pydp_core.io import KeyReuseError

    x = da.zeros(10_000, chunks=2500)
    pdask.privatize(x, sup.laplace(), key=KEY, sensitivity_holds=True, block_rows=B)
    with pytest.raises(KeyReuseError, match="another release"):
        pdask.privatize(x, sup.laplace(sensitivity=2.0), key=KEY, sensitivity_holds=True, block_rows=B)


def test_session_charges_once_at_the_driver_and_refuses_past_its_limit(client):
    import dask.dataframe as dd
    import pandas as pd

    from pydp_core.io import generate_key

    n = 8000
    pdf = pd.DataFrame({"id": np.arange(n), "pid": np.arange(n) % 2000, "g": np.arange(n) % 4,
                        "x": (np.arange(n) % 100).astype(float)})
    ddf = dd.from_pandas(pdf, npartitions=4)
    s = pydp_core.Session(pydp_core.PureDP(2.5), key=generate_key())
    noisy = s.privatize(ddf, sup.laplace(), columns="x", sensitivity_holds=True, index="id", block_rows=B)
    assert s.spent() == pydp_core.PureDP(1.0)  # recorded and charged at the driver, before any task ran
    first = noisy.compute()
    assert noisy.compute().equals(first) and s.spent() == pydp_core.PureDP(1.0)  # four tasks, twice: one charge
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds={"x": (0, 100)}, max_partitions=1,
                max_contributions=4, public_partitions=[0, 1, 2, 3])
    out = s.aggregate(ddf, epsilon=1.0, **args)
    assert len(out) == 4 and s.spent() == pydp_core.PureDP(2.0)
    assert out.attrs["pydp_core.aggregation"]["session"]["spent"] == "PureDP(epsilon=2.0)"
    with pytest.raises(pydp_core.BudgetExceededError):
        s.aggregate(ddf, epsilon=1.0, **dict(args, bounds={"x": (0, 50)}))
    with pytest.raises(pydp_core.BudgetExceededError):
        s.privatize(ddf, sup.laplace(), columns="x", sensitivity_holds=True, index="id", block_rows=2 * B)
    assert s.spent() == pydp_core.PureDP(2.0)
