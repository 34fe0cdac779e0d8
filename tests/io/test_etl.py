"""pydp_core.privatize / pydp_core.io: columnar containers, nulls, bounds, keyed block streams."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from support import frames as sup  # noqa: E402

import pydp_core  # noqa: E402
from pydp_core import io as etl  # noqa: E402
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # noqa: E402  (a check only: no record)

pd = pytest.importorskip("pandas", reason="pandas is an optional extra (pydp_core[etl])")
pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))

# These tests compare the keyed noise of different data under one key on purpose (the noise is a function
# of key, column and row only), so they run without the key ledger; they declare that the mechanisms'
# sensitivity holds where they give no bounds, and that seeded generators are simulations. The ledger,
# the bounds rule and the generator rule are tested in tests/release/test_release_safety.py.
SIM = dict(ledger=UNRECORDED, sensitivity_holds=True, simulation=True)


def privatize(*args, **kwargs):
    return pydp_core.privatize(*args, **{**SIM, **kwargs})


# -- keys -------------------------------------------------------------------------------------------------
def test_generate_key_is_256_bits_and_fresh():
    a, b = etl.generate_key(), etl.generate_key()
    assert isinstance(a, bytes) and len(a) == 32 and a != b


@pytest.mark.parametrize("bad, exc", [("00" * 32, TypeError), (b"\x00" * 31, ValueError), (None, TypeError), (7, TypeError)])
def test_bad_keys_are_refused(bad, exc):
    with pytest.raises(exc, match="key"):
        etl.privatize(np.zeros(3), sup.laplace(), key=bad) if bad is not None else etl.check_key(bad)


def test_key_file_round_trip_and_permissions(tmp_path):
    path = tmp_path / "release.key"
    etl.write_key(path, KEY)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_text() == KEY.hex() + "\n"
    assert etl.load_key(path) == KEY
    with pytest.raises(FileExistsError):
        etl.write_key(path)
    etl.write_key(path, OTHER_KEY, overwrite=True)
    assert etl.load_key(path) == OTHER_KEY and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        etl.load_key(path)


def test_raw_key_files_and_garbage(tmp_path):
    raw = tmp_path / "raw.key"
    raw.write_bytes(KEY)
    os.chmod(raw, 0o600)
    assert etl.load_key(raw) == KEY
    bad = tmp_path / "bad.key"
    bad.write_text("not a key\n")
    os.chmod(bad, 0o600)
    with pytest.raises(ValueError, match="hexadecimal"):
        etl.load_key(bad)


# -- bounds, sensitivity, mechanisms -----------------------------------------------------------------------
def test_sensitivity_from_bounds():
    assert etl.sensitivity_from_bounds((-2, 3.5)) == 5.5


@pytest.mark.parametrize(
    "bounds, exc",
    [((1, 1), ValueError), ((2, 1), ValueError), ((0, float("nan")), ValueError), ((0, float("inf")), ValueError),
     ((True, 2), TypeError), ((0, "1"), TypeError), ((1,), TypeError), ((2**60 + 1, 2**61), ValueError)],
)
def test_bad_bounds(bounds, exc):
    with pytest.raises(exc, match="bounds"):
        etl.sensitivity_from_bounds(bounds)


def test_mechanism_factory_derives_sensitivity_from_bounds_when_asked():
    m = etl.mechanism("laplace", epsilon=0.5, sensitivity="bounds", bounds=(0, 10))
    assert m.sensitivity == 10 and m.epsilon == 0.5
    assert etl.mechanism("laplace", epsilon=0.5, sensitivity=20.0, bounds=(0, 10)).sensitivity == 20.0
    with pytest.raises(ValueError, match="below upper - lower"):
        etl.mechanism("laplace", epsilon=0.5, sensitivity=2.0, bounds=(0, 10))
    with pytest.raises(ValueError, match="needs bounds"):
        etl.mechanism("laplace", epsilon=1.0, sensitivity="bounds")
    with pytest.raises(ValueError, match="mechanism must be one of"):
        etl.mechanism("cauchy", epsilon=1.0)
    with pytest.raises(ValueError, match="order r"):
        etl.mechanism("subbotin", epsilon=1.0, delta=1e-6)


# -- the property the keyed blocks rest on ----------------------------------------------------------------
@pytest.mark.parametrize("release", [True, False])
@pytest.mark.parametrize("make", [sup.laplace, sup.gaussian])
def test_block_noise_is_elementwise_and_data_independent(make, release):
    """privatizer(mech)(x, stream)[j] depends on x[j], the stream and j only: equal inputs, equal outputs."""
    mech = make()
    noisy = etl.privatizer(mech, {"release": release})
    rng = pydp_core.Random(KEY)
    x = np.linspace(-50, 50, 5000)
    y = x.copy()
    changed = np.arange(0, 5000, 7)
    y[changed] = 1000.0 + np.arange(changed.size)
    ox = np.asarray(noisy(x, rng.stream(9)))
    oy = np.asarray(noisy(y, rng.stream(9)))
    same = np.ones(5000, bool)
    same[changed] = False
    np.testing.assert_array_equal(ox[same], oy[same])
    assert not np.array_equal(ox[~same], oy[~same])
    # and on a prefix: the noise of position j does not depend on the block's length
    np.testing.assert_array_equal(np.asarray(noisy(x[:1234], rng.stream(9))), ox[:1234])


def test_each_value_is_released_as_a_scalar_query_on_the_grid():
    from pydp_core import release as discrete

    mech = sup.gaussian()
    x = np.linspace(-3, 3, 1000)
    got = privatize(x, mech, rng=pydp_core.Random(7))
    want = discrete.release_noise(mech.noise, x, epsilon=mech.epsilon, delta=mech.delta, sensitivity=mech.sensitivity, rng=pydp_core.Random(7), vector=False, simulation=True)
    np.testing.assert_array_equal(got, want)
    grid = discrete.calibrate_gaussian_release(epsilon=mech.epsilon, delta=mech.delta, sensitivity=mech.sensitivity).grid
    np.testing.assert_array_equal(got / grid, np.round(got / grid))
    sim = privatize(x, mech, rng=pydp_core.Random(7), release=False)
    np.testing.assert_array_equal(sim, mech.simulate(x, rng=pydp_core.Random(7)))
    class TruncatedLaplaceMechanism(pydp_core.LaplaceMechanism):  # a family without a safe release
        _noise = pydp_core.Truncated(pydp_core.Laplace(), 5.0)

    with pytest.raises(ValueError, match="release=True is not available"):
        privatize(x, TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-3), key=KEY)
    # the Logistic at delta = 0 is released (pure DP, the lattice table with its geometric tail)
    pure = np.asarray(privatize(x, pydp_core.LogisticMechanism(epsilon=1.0), key=KEY))
    np.testing.assert_array_equal(pure / 2.0**-16, np.round(pure / 2.0**-16))
    with pytest.raises(TypeError, match="unexpected arguments"):
        privatize(x, mech, key=KEY, grid_bits=3)


# -- numpy ------------------------------------------------------------------------------------------------
def test_pieces_with_offsets_reproduce_the_whole():
    mech = sup.laplace()
    x = np.linspace(0, 1, 10_000)
    whole = privatize(x, mech, key=KEY, block_rows=1000)
    cuts = [0, 1, 999, 1000, 1001, 4321, 9999, 10_000]
    parts = [privatize(x[a:b], mech, key=KEY, offset=a, block_rows=1000) for a, b in zip(cuts, cuts[1:])]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    np.testing.assert_array_equal(privatize(x, mech, key=KEY, block_rows=1000), whole)


def test_row_index_makes_the_output_independent_of_order():
    mech = sup.laplace()
    x = np.arange(5000.0)
    whole = privatize(x, mech, key=KEY, block_rows=256)
    perm = np.random.default_rng(3).permutation(5000)
    np.testing.assert_array_equal(privatize(x[perm], mech, key=KEY, index=perm, block_rows=256), whole[perm])
    with pytest.raises(ValueError, match="not unique"):
        privatize(x[:3], mech, key=KEY, index=np.array([0, 5, 5]))
    with pytest.raises(ValueError, match=">= 0"):
        privatize(x[:3], mech, key=KEY, index=np.array([0, -5, 5]))


def test_keys_columns_and_blocks_get_independent_noise():
    mech = sup.laplace()
    n, B = 40_000, 1000
    z = np.zeros(n)
    a = privatize(z, mech, key=KEY, columns="a", block_rows=B)
    sup.assert_noise_distribution(a, mech)
    sup.assert_uncorrelated(a, privatize(z, mech, key=KEY, columns="b", block_rows=B))
    sup.assert_uncorrelated(a, privatize(z, mech, key=OTHER_KEY, columns="a", block_rows=B))
    # Consecutive blocks (streams b and b + 1) are uncorrelated position by position.
    blocks = a.reshape(-1, B)
    sup.assert_uncorrelated(blocks[:-1].ravel(), blocks[1:].ravel())
    # A fresh key by default: two calls differ.
    assert not np.array_equal(privatize(z[:10], mech), privatize(z[:10], mech))


def test_numpy_shapes_and_dtypes():
    mech = sup.laplace()
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = privatize(x, mech, key=KEY)
    assert out.shape == x.shape and out.dtype == np.float32
    np.testing.assert_array_equal(out.ravel(), privatize(x.ravel().astype(np.float64), mech, key=KEY).astype(np.float32))
    ints = privatize(np.arange(5), mech, key=KEY)
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints, privatize(np.arange(5.0), mech, key=KEY))


def test_masked_arrays_keep_their_mask():
    mech = sup.laplace()
    x = np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 1])
    out = privatize(x, mech, key=KEY)
    assert isinstance(out, np.ma.MaskedArray)
    np.testing.assert_array_equal(out.mask, x.mask)
    full = privatize(np.array([1.0, 77.0, 3.0, -5.0]), mech, key=KEY)
    np.testing.assert_array_equal(out.compressed(), full[[0, 2]])


# -- clamping ---------------------------------------------------------------------------------------------
def test_bounds_clamp_before_noise_and_nothing_is_clamped_without_them():
    mech = sup.laplace()
    x = np.array([-1e9, -np.inf, 0.5, 3.0, np.inf, 1e300])
    out = privatize(x, mech, key=KEY, bounds=(0, 1))
    # the clamped values are what receives the noise: the same release of the clamped data is an exact repeat
    np.testing.assert_array_equal(out, privatize(np.clip(x, 0, 1), mech, key=KEY, bounds=(0, 1)))
    with pytest.raises(ValueError, match="infinite values: give bounds"):
        privatize(x, mech, key=KEY, ledger=UNRECORDED)
    # NaN is refused with and without bounds, and the message does not offer bounds as the way out
    for bounds in (None, (0, 1)):
        with pytest.raises(ValueError, match="NaN values: store missing values as nulls") as err:
            privatize(np.array([0.0, np.nan]), mech, key=KEY, bounds=bounds, sensitivity_holds=bounds is None)
        assert "give bounds" not in str(err.value)
    big = np.array([1e6])
    assert abs(privatize(big, mech, key=KEY)[0] - 1e6) < 1e3


# -- pandas -----------------------------------------------------------------------------------------------
def test_pandas_dataframe_named_columns_nulls_and_passthrough():
    mech = sup.laplace()
    df = pd.DataFrame(
        {"x": [1.0, None, 3.0, 4.0], "n": pd.array([1, None, 3, 4], dtype="Int64"), "s": list("abcd"), "k": [1, 2, 3, 4]},
        index=[10, 11, 12, 13],
    )
    out = privatize(df, mech, columns=["x", "n"], key=KEY)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(df.columns)
    assert list(out.index) == [10, 11, 12, 13]
    assert out["x"].dtype == np.float64 and str(out["n"].dtype) == "Float64"
    assert out["x"].isna().tolist() == [False, True, False, False]
    assert out["n"].isna().tolist() == [False, True, False, False]
    pd.testing.assert_series_equal(out["s"], df["s"])
    pd.testing.assert_series_equal(out["k"], df["k"])
    # Valid entries get the noise of their row, whatever the nulls are replaced by (a check only: no ledger).
    filled = df.assign(x=[1.0, -42.0, 3.0, 4.0], n=[1, -7, 3, 4])
    ref = privatize(filled, mech, key=KEY, columns=["n", "x"], ledger=UNRECORDED)
    np.testing.assert_array_equal(out["x"].to_numpy()[[0, 2, 3]], ref["x"].to_numpy()[[0, 2, 3]])
    # A Series is the release of its column alone: the same noise as that column released alone from the frame.
    alone = privatize(df, mech, columns="x", key=bytes(range(1, 33)))
    pd.testing.assert_series_equal(privatize(df["x"], mech, key=bytes(range(1, 33))), alone["x"])
    assert df["x"].isna().sum() == 1  # input untouched


def test_pandas_errors():
    mech = sup.laplace()
    df = pd.DataFrame({"x": [1.0], "s": ["a"]})
    with pytest.raises(ValueError, match="columns is required"):
        privatize(df, mech, key=KEY)
    with pytest.raises(ValueError, match="'y' not found"):
        privatize(df, mech, columns=["y"], key=KEY)
    with pytest.raises(TypeError, match="'s' must be numeric"):
        privatize(df, mech, columns=["s"], key=KEY)
    with pytest.raises(ValueError, match="either key or rng"):
        privatize(df, mech, columns=["x"], key=KEY, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="privatize"):
        privatize(df, object(), columns=["x"], key=KEY)
    with pytest.raises(TypeError, match="data must be"):
        privatize([1.0, 2.0], mech, key=KEY)


def test_per_column_mechanisms_and_bounds():
    lap, lap10 = sup.laplace(), sup.laplace(sensitivity=10.0)
    df = pd.DataFrame({"a": np.zeros(2000), "b": np.full(2000, 50.0)})
    out = privatize(df, {"a": lap, "b": lap10}, columns=["a", "b"], key=KEY, bounds={"b": (0, 10)})
    # each column gets its own mechanism and bounds: b is clamped to 10 before its noise
    same = privatize(df.assign(b=10.0), {"a": lap, "b": lap10}, columns=["a", "b"], key=KEY, bounds={"b": (0, 10)})
    pd.testing.assert_frame_equal(out, same)
    assert np.std(out["b"] - 10.0) > 5 * np.std(out["a"])  # b's noise has ten times a's scale
    with pytest.raises(ValueError, match="no entry for column 'b'"):
        privatize(df, {"a": lap}, columns=["a", "b"], key=KEY)


# -- pyarrow ----------------------------------------------------------------------------------------------
def test_pyarrow_arrays_tables_and_batches_keep_nulls():
    mech = sup.laplace()
    arr = pa.array([1.0, None, 3.0], type=pa.float64())
    out = privatize(arr, mech, key=KEY, columns="x")
    assert isinstance(out, pa.Array) and out.null_count == 1 and not out[1].is_valid
    chunked = pa.chunked_array([[1.0, None], [3.0]])
    out_c = privatize(chunked, mech, key=KEY, columns="x")
    assert isinstance(out_c, pa.ChunkedArray) and out_c.to_pylist()[1] is None
    assert out_c.to_pylist() == out.to_pylist()
    meta = {b"origin": b"test"}
    table = pa.table({"x": arr, "i": pa.array([1, 2, None], pa.int32()), "s": ["a", "b", "c"]}).replace_schema_metadata(meta)
    out_t = privatize(table, mech, columns=["x", "i"], key=KEY)
    assert isinstance(out_t, pa.Table) and {**out_t.schema.metadata, **meta} == out_t.schema.metadata
    assert b"pydp_core.release" in out_t.schema.metadata
    assert privatize(table, mech, columns="x", key=bytes(range(1, 33))).column("x").to_pylist() == \
        privatize(arr, mech, key=bytes(range(1, 33)), columns="x").to_pylist()
    assert out_t.column("i").type == pa.float64() and out_t.column("i").to_pylist()[2] is None
    assert out_t.column("s").equals(table.column("s"))
    batch = table.to_batches()[0]
    out_b = privatize(batch, mech, columns=["x", "i"], key=KEY)
    assert isinstance(out_b, pa.RecordBatch) and pa.Table.from_batches([out_b]).equals(out_t)
    f32 = privatize(pa.array([1.0, 2.0], pa.float32()), mech, key=KEY)
    assert f32.type == pa.float32()
    with pytest.raises(TypeError, match="must be numeric"):
        privatize(table, mech, columns=["s"], key=KEY)
    with pytest.raises(ValueError, match="NaN"):
        privatize(pa.array([float("nan")]), mech, key=KEY)


def test_pyarrow_index_column():
    mech = sup.laplace()
    t = pa.table({"id": [5, 0, 3], "x": [0.0, 0.0, 0.0]})
    out = privatize(t, mech, columns=["x"], key=KEY, index="id")
    ref = privatize(np.zeros(6), mech, key=KEY, columns="x")
    np.testing.assert_array_equal(out.column("x").to_numpy(), ref[[5, 0, 3]])
    with pytest.raises(ValueError, match="nulls"):
        privatize(pa.table({"id": [1, None], "x": [0.0, 1.0]}), mech, columns=["x"], key=KEY, index="id")


def test_rng_path_passes_the_generator_through():
    mech = sup.laplace()
    x = np.arange(100.0)
    got = privatize(x, mech, rng=pydp_core.Random(7))
    np.testing.assert_array_equal(got, etl.privatizer(mech, {})(x, pydp_core.Random(7)))
    with pytest.raises(ValueError, match="index applies"):
        privatize(x, mech, rng=pydp_core.Random(7), index=np.arange(100))
