"""pydp_core.aggregation: bounding on neighbouring data sets, keyed reproducibility, row-order and
front-end independence, the budget split, the report, and bad input."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation.aggregations import _half_width_steps, integer_laplace_t, split_epsilon
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

KEY = bytes(range(32))


def people(n_people=5000, n_groups=20, rows=20000, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "pid": rng.integers(0, n_people, rows),
        "g": rng.integers(0, n_groups, rows),
        "x": rng.uniform(-5.0, 15.0, rows),
    })


ARGS = dict(
    privacy_unit="pid", by="g", aggregations={"x": ["count", "sum", "mean", "variance"], "pid": ["privacy_id_count"]},
    bounds={"x": (0.0, 10.0)}, max_partitions=3, max_contributions=2, epsilon=2.0, delta=1e-6, noise="laplace",
)


# -- bounding on neighbouring data sets ---------------------------------------------------------------------
def test_one_person_changes_at_most_kp_groups_by_at_most_kc_rows():
    """A person with 10^4 rows over 10^3 groups: with the same key (same noise per group), the outputs of
    D and D + person differ in at most max_partitions groups, by at most max_contributions rows each."""
    rng = np.random.default_rng(2)
    groups = np.arange(1000)
    base = pd.DataFrame({"pid": rng.integers(0, 300, 3000), "g": rng.choice(groups, 3000), "x": rng.uniform(0, 10, 3000)})
    heavy = pd.DataFrame({"pid": np.full(10_000, 10**6), "g": rng.choice(groups, 10_000), "x": rng.uniform(0, 10, 10_000)})
    kp, kc, hi = 4, 3, 10.0
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["count", "sum"], "pid": ["privacy_id_count"]},
                bounds={"x": (0.0, hi)}, max_partitions=kp, max_contributions=kc, epsilon=1.0, key=KEY,
                public_partitions=list(groups), ledger=UNRECORDED)  # neighbouring data sets under one key: a check only
    a = aggregate(base, **args)
    b = aggregate(pd.concat([base, heavy], ignore_index=True), **args)
    assert list(a["g"]) == list(b["g"]) == list(groups)
    dc = (b["x_count"] - a["x_count"]).to_numpy()
    du = (b["privacy_id_count"] - a["privacy_id_count"]).to_numpy()
    ds = (b["x_sum"] - a["x_sum"]).to_numpy()
    grid = aggregate_report(a)["aggregates"]["x_sum"]["components"]["sum"]["grid"]
    assert np.count_nonzero(dc) == kp and dc.min() >= 0 and dc.max() <= kc  # 10 rows per group on average: all full
    assert np.array_equal(du != 0, dc != 0) and set(du[du != 0]) == {1}
    assert np.count_nonzero(ds) <= kp and np.abs(ds).max() <= kc * hi + grid
    assert np.array_equal(dc[dc != 0], np.full(kp, kc))


def test_bounding_keeps_every_row_under_the_limits():
    """Without overflow (one row per person and group) the noiseless partials are the plain group-by."""
    df = pd.DataFrame({"pid": np.arange(400), "g": np.arange(400) % 4, "x": np.linspace(0, 10, 400)})
    out = aggregate(df, **{**ARGS, "epsilon": 1e3, "public_partitions": [0, 1, 2, 3], "key": KEY})
    truth = df.groupby("g").x.agg(["count", "sum"])
    assert np.all(np.abs(out["x_count"].to_numpy() - truth["count"].to_numpy()) <= out["x_count_ci_high"] - out["x_count"])
    assert np.all(np.abs(out["x_sum"].to_numpy() - truth["sum"].to_numpy()) <= 1.0)


# -- keys, row order, front ends ---------------------------------------------------------------------------
def test_same_key_same_output_and_row_order_does_not_matter():
    df = people()
    a = aggregate(df, **ARGS, key=KEY)
    b = aggregate(df, **ARGS, key=KEY)
    c = aggregate(df.sample(frac=1.0, random_state=7).reset_index(drop=True), **ARGS, key=KEY)
    assert len(a) == 20
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    d = aggregate(df, **ARGS, key=bytes(32))
    assert not a.equals(d)


def test_pyarrow_and_pandas_give_the_same_release():
    df = people()
    a = aggregate(df, **ARGS, key=KEY)
    t = aggregate(pa.Table.from_pandas(df, preserve_index=False), **ARGS, key=KEY)
    assert isinstance(t, pa.Table)
    pd.testing.assert_frame_equal(a, t.to_pandas(), check_dtype=False)
    assert aggregate_report(t) == aggregate_report(a)


def test_string_groups_several_by_columns_and_public_partitions():
    df = pd.DataFrame({"pid": ["p1", "p2", "p3", "p1"], "city": ["a", "a", "b", "b"], "year": [2020, 2020, 2021, 2021],
                       "x": [1.0, 2.0, 3.0, 4.0]})
    public = [("a", 2020), ("b", 2021), ("z", 1999)]
    out = aggregate(df, privacy_unit="pid", by=["city", "year"], aggregations={"x": ["count", "mean"]},
                    bounds={"x": (0, 5)}, max_partitions=2, max_contributions=1, epsilon=1.0, key=KEY,
                    public_partitions=public)
    assert list(zip(out["city"], out["year"])) == public  # the empty group ("z", 1999) too, in the given order
    assert out["x_mean"].between(0, 5).all()
    assert out["year"].dtype == df["year"].dtype


def test_selection_drops_rare_groups_and_keeps_large_ones():
    rng = np.random.default_rng(3)
    big = pd.DataFrame({"pid": np.arange(5000), "g": rng.integers(0, 3, 5000), "x": 1.0})
    rare = pd.DataFrame({"pid": [10**6], "g": [99], "x": [1.0]})
    out = aggregate(pd.concat([big, rare]), **{**ARGS, "key": KEY})
    assert sorted(out["g"]) == [0, 1, 2]
    sel = aggregate_report(out)["partition_selection"]
    assert sel["method"] == "laplace_threshold" and sel["delta_achieved"] <= 1e-6 and sel["threshold"] > 10


# -- budget split and report --------------------------------------------------------------------------------
def test_budget_is_split_evenly_and_composes_to_the_total():
    out = aggregate(people(), **ARGS, key=KEY)
    rep = aggregate_report(out)
    eps = [a["epsilon"] for a in rep["aggregates"].values()] + [rep["partition_selection"]["epsilon"]]
    assert len(eps) == 6 and max(eps) - min(eps) < 1e-15
    assert sum(Fraction(e) for e in eps) <= Fraction(2.0)
    assert rep["budget"]["epsilon"] <= 2.0 and rep["budget"]["delta"] <= 1e-6
    assert KEY.hex() not in json.dumps(rep)
    mean = rep["aggregates"]["x_mean"]["components"]
    assert set(mean) == {"rows", "centred_sum"}
    assert mean["centred_sum"]["sensitivity_per_partition"] == 2 * 5.0  # Kc * (U - L) / 2
    assert rep["aggregates"]["x_sum"]["components"]["sum"]["l1_sensitivity"] == 3 * 2 * 10.0


def test_budget_split_weights():
    split = {"x_count": 4, "x_sum": 1, "x_mean": 1, "x_variance": 1, "privacy_id_count": 1, "selection": 2}
    rep = aggregate_report(aggregate(people(), **ARGS, key=KEY, budget_split=split))
    assert rep["aggregates"]["x_count"]["epsilon"] == pytest.approx(2.0 * 4 / 10)
    assert rep["partition_selection"]["epsilon"] == pytest.approx(2.0 * 2 / 10)


@pytest.mark.parametrize("eps", [0.1, 1.0 / 3.0, 0.7, 1e-300, 1000.0, 5e-324])
@pytest.mark.parametrize("k", [1, 2, 3, 7, 10, 13])
def test_split_epsilon_never_exceeds_the_total(eps, k):
    shares = split_epsilon(eps, [1.0] * k)
    assert sum(Fraction(s) for s in shares) <= Fraction(eps)
    assert all(s >= 0 for s in shares)


@pytest.mark.parametrize("eps, shift", [(1.0, 1), (0.1, 6), (1 / 3, 7), (2.5, 12), (1e-3, 1000)])
def test_integer_laplace_t_is_the_smallest_safe_step(eps, shift):
    t = integer_laplace_t(eps, shift)
    assert Fraction(shift) / t <= Fraction(eps)
    assert Fraction(shift) / (t - Fraction(1, 1 << 20)) > Fraction(eps)


@pytest.mark.parametrize("t", [Fraction(1, 3), Fraction(2), Fraction(37748737, 1 << 20), Fraction(10**6)])
@pytest.mark.parametrize("alpha", [0.05, 1e-3, 1e-9])
def test_confidence_half_width_against_mpmath(t, alpha):
    """m is the smallest integer with P(|Y| > m) = 2 q^(m+1) / (1 + q) <= alpha (50 digits)."""
    m = _half_width_steps(t, alpha)
    q = mpmath.exp(-1 / mpmath.mpf(t.numerator) * t.denominator)

    def tail(k):
        return 2 * q ** (k + 1) / (1 + q)

    assert tail(m) <= alpha * (1 + 1e-12)
    assert m == 0 or tail(m - 1) > alpha * (1 - 1e-12)


# -- bad input ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, exc, words",
    [
        ({"privacy_unit": "nope"}, ValueError, "privacy_unit"),
        ({"by": "nope"}, ValueError, "by"),
        ({"by": []}, TypeError, "by"),
        ({"aggregations": {"nope": ["sum"]}}, ValueError, "aggregations"),
        ({"aggregations": {"x": ["mode"]}}, ValueError, "mode"),
        ({"aggregations": {"x": ["privacy_id_count"]}}, ValueError, "privacy_unit"),
        ({"aggregations": {"s": ["sum"]}, "bounds": {"s": (0, 1)}}, TypeError, "'s'"),
        ({"aggregations": {}}, TypeError, "aggregations"),
        ({"bounds": {"x": (10.0, 0.0)}}, ValueError, "bounds"),
        ({"bounds": {"x": (1.0, 1.0)}}, ValueError, "bounds"),
        ({"bounds": {"x": (0.0, math.inf)}}, ValueError, "bounds"),
        ({"bounds": {}}, ValueError, "bounds"),
        ({"bounds": {"x": (0, 1), "y": (0, 1)}}, ValueError, "bounds"),
        ({"max_partitions": 0}, ValueError, "max_partitions"),
        ({"max_contributions": -1}, ValueError, "max_contributions"),
        ({"max_contributions": 1.5}, TypeError, "max_contributions"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": math.nan}, ValueError, "epsilon"),
        ({"delta": 0.0}, ValueError, "delta"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"key": b"short"}, ValueError, "key"),
        ({"budget_split": {"x_count": 1.0}}, ValueError, "budget_split"),
        ({"budget_split": {"x_sum": 1.0, "selection": 1.0, "x_count": 0.0}}, ValueError, "budget_split"),
        ({"confidence": 1.0}, ValueError, "confidence"),
    ],
)
def test_bad_arguments_name_the_argument(change, exc, words):
    df = people(rows=50)
    df["s"] = "text"
    args = {**ARGS, "aggregations": {"x": ["count", "sum"]}, **change}
    with pytest.raises(exc, match=words):
        aggregate(df, **args)


@pytest.mark.parametrize("kp", [2, 20])  # the streaming and the sorted bounding kernels
def test_arrow_nan_is_refused_naming_the_column(kp):
    """Arrow float columns count NaN as a value, not a null: the bounding kernel finds it in its pass."""
    df = people(rows=300)
    df["y"] = 1.0
    for col in ("x", "y"):
        bad = df.copy()
        bad.loc[250, col] = np.nan  # the NaN row is dropped by no bound: every row is read
        table = pa.table({c: bad[c].to_numpy() for c in bad.columns})  # numpy NaN stays a value in arrow
        assert table.column(col).null_count == 0
        args = {**ARGS, "aggregations": {"x": ["sum"], "y": ["mean"]}, "bounds": {"x": (0.0, 10.0), "y": (0.0, 2.0)},
                "max_partitions": kp}
        with pytest.raises(ValueError, match=f"'{col}'.*null or NaN"):
            aggregate(table, **args)
    assert aggregate(pa.Table.from_pandas(df, preserve_index=False), **args).num_rows >= 0


@pytest.mark.parametrize("bounds", [(0.0, 10.0), None])
def test_nan_and_nulls_are_refused(bounds):
    """NaN in a summed column (with bounds) or a counted column (no bounds needed), nulls in identifiers."""
    df = people(rows=50)
    df.loc[3, "x"] = np.nan
    args = {**ARGS, "aggregations": {"x": ["sum"] if bounds else ["count"]}, "bounds": {"x": bounds} if bounds else None}
    with pytest.raises(ValueError, match="'x'.*null or NaN"):
        aggregate(df, **args)
    df2 = people(rows=50)
    df2["pid"] = df2["pid"].astype("float64")
    df2.loc[5, "pid"] = np.nan
    with pytest.raises(ValueError, match="'pid'.*nulls"):
        aggregate(df2, **{**ARGS, "aggregations": {"x": ["count"]}, "bounds": None})
    with pytest.raises(ValueError, match="'x'.*null"):
        aggregate(pa.table({"pid": [1, 2], "g": [1, 1], "x": [1.0, None]}), **{**ARGS, "aggregations": {"x": ["sum"]}})


def test_not_a_table_and_bad_public_partitions():
    with pytest.raises(TypeError, match="table"):
        aggregate({"pid": [1]}, **ARGS)
    with pytest.raises(TypeError, match="public_partitions"):
        aggregate(people(rows=50), **{**ARGS, "public_partitions": 3})
    with pytest.raises(ValueError, match="public_partitions"):
        aggregate(people(rows=50), **{**ARGS, "public_partitions": [1, 1]})


# -- exact sums ---------------------------------------------------------------------------------------------
def test_group_sums_are_exact_integers():
    from pydp_core.aggregation.aggregations import limb_sums, limbs_to_totals

    rng = np.random.default_rng(9)
    q = rng.integers(-(1 << 52), (1 << 52) + 1, 5000)
    q[:4] = [1 << 52, -(1 << 52), 1 << 52, -(1 << 52)]
    groups = rng.integers(0, 7, 5000)
    groups[:4] = 0
    got = list(limbs_to_totals(limb_sums(groups, q, 8), np.bincount(groups, minlength=8)))
    assert got == [sum(int(v) for v, g in zip(q, groups) if g == j) for j in range(8)]


@pytest.mark.parametrize("total, e_gamma, e_grid", [(5, -3, -2), (6, -3, -2), (7, -3, -2), (-5, -3, -2), (-7, -3, -2),
                                                    (3, 0, 2), (2, 0, 2), (6, 0, 2), (10, 0, 2), (-2, 0, 2),
                                                    (7, 4, -1), (2**70 + 2**26, -60, -33), (2**70 + 3 * 2**26, -60, -33)])
def test_exact_sums_round_to_the_grid_with_ties_to_even(total, e_gamma, e_grid):
    from pydp_core.aggregation.aggregations import on_grid

    exact = Fraction(total) * Fraction(2) ** e_gamma / Fraction(2) ** e_grid
    assert on_grid([total], e_gamma, e_grid)[0] == math.ldexp(round(exact), e_grid)  # round(): ties to even


def _limbs_of_totals(totals, rows):
    """Limbs (l0, l1, l2) in [0, 2**18) x ... whose totals l0 + l1 2**18 + l2 2**36 - rows 2**52 are ``totals``."""
    out = [[], [], []]
    for t, r in zip(totals, rows):
        u = t + (r << 52)
        assert u >= 0
        out[0].append(u & (2**18 - 1))
        out[1].append((u >> 18) & (2**18 - 1))
        out[2].append(u >> 36)
    return [np.array(v, dtype=np.int64) for v in out]


@pytest.mark.parametrize("e_gamma, e_grid", [(-3, -2), (0, 2), (4, -1), (-60, -33), (-52, -52), (-52, -40), (-40, -52)])
def test_limbs_on_grid_equals_the_exact_reference(e_gamma, e_grid):
    from pydp_core.aggregation.aggregations import limbs_on_grid, on_grid

    rng = np.random.default_rng(abs(e_gamma * 100 + e_grid))
    rows = rng.integers(2**9, 2**20, 3000)  # rows 2**52 > |total|: non-negative limbs
    scale = 2 ** max(0, min(60, 52 + e_grid - e_gamma))  # totals up to ~2**52 grid steps
    totals = [int(v) for v in rng.integers(-scale, scale, 3000, dtype=np.int64)]
    shift = e_grid - e_gamma
    if shift > 0:  # exact ties, just below and above, for both parities
        totals[:8] = [k * 2**shift + d for k in (3, 4, -3, -4) for d in (2 ** (shift - 1), 2 ** (shift - 1) - 1)][:8]
    totals[8:10] = [0, 0]
    limbs = _limbs_of_totals(totals, rows.tolist())
    want = on_grid(np.array(totals, dtype=object), e_gamma, e_grid)
    got = limbs_on_grid(limbs, rows, e_gamma, e_grid)
    assert got.tolist() == want.tolist()
    big = [2**53 * 2 ** max(0, shift)]  # 2**53 steps: refused by both
    with pytest.raises(ValueError, match="2\\*\\*52 steps"):
        on_grid(np.array(big, dtype=object), e_gamma, e_grid)
    with pytest.raises(ValueError, match="2\\*\\*52 steps"):
        limbs_on_grid(_limbs_of_totals(big, [1]), np.array([1]), e_gamma, e_grid)


@pytest.mark.parametrize("name", ["sum", "centred_sum", "centred_squares"])
@pytest.mark.parametrize("bounds", [(0.0, 100.0), (-3.5, 1e6), (-1e-3, -1e-4), (-2.0**40, 2.0**40)])
def test_component_limb_sums_equal_the_numpy_terms(name, bounds):
    from pydp_core.aggregation.aggregations import component_limb_sums, limb_sums, quantized_terms

    rng = np.random.default_rng(3)
    lo, hi = bounds
    values = np.concatenate([rng.uniform(lo - (hi - lo), hi + (hi - lo), 4000), [lo, hi, (lo + hi) / 2, -0.0, 0.0]])
    rows = np.sort(rng.choice(values.size, 3000, replace=False))
    rows[-5:] = np.arange(values.size - 5, values.size)
    groups = rng.integers(0, 11, rows.size)
    want = limb_sums(groups, quantized_terms(name, np.clip(values[rows], lo, hi), bounds), 11)
    got = component_limb_sums([name], groups, values, rows, bounds, 11)
    assert got.shape == (3, 11) and [list(v) for v in want] == got.tolist()
    every = ["centred_squares", name, "sum"]  # several terms of one column in one pass
    both = component_limb_sums(every, groups, values, rows, bounds, 11)
    assert both.shape == (9, 11) and both[3:6].tolist() == got.tolist()
    assert both[:3].tolist() == component_limb_sums(["centred_squares"], groups, values, rows, bounds, 11).tolist()
    many = np.repeat(rows, 200)  # 600000 rows: several row ranges, the same sums for any thread count
    sums = [component_limb_sums(every, np.repeat(groups, 200), values, many, bounds, 11, threads=t) for t in (1, 2, 3)]
    assert sums[0].tolist() == sums[1].tolist() == sums[2].tolist() == (200 * both).tolist()


def test_float_summation_order_cannot_change_a_release():
    """Values whose float sum depends on the order (1 + 2**-53 + 2**-53 ...) give one release per key."""
    x = np.array([1.0] + [2.0**-53] * 64 + [3.0, -3.0] * 8)
    df = pd.DataFrame({"pid": np.arange(x.size), "g": 0, "x": x})
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds={"x": (-4.0, 4.0)}, max_partitions=1,
                max_contributions=1, epsilon=1.0, key=KEY, public_partitions=[0])
    assert math.fsum(x) != sum(x.tolist()) or math.fsum(x[::-1]) != sum(x[::-1].tolist())
    outs = {aggregate(df.iloc[rng_perm], **args)["x_sum"].iloc[0] for rng_perm in
            (np.arange(x.size), np.arange(x.size)[::-1], np.random.default_rng(1).permutation(x.size))}
    assert len(outs) == 1


def test_range_coded_and_hashed_identifiers_give_the_same_release(monkeypatch):
    """Integer ids in a short range are coded by offset (groups without rows dropped); the release is the
    one of the hash-table path, which is a function of the values only."""
    import pydp_core.aggregation.bounding as bounding

    df = people()
    df["g"] = df["g"] * 3 + 1000  # a range with holes: codes of absent groups must not be released
    dense = aggregate(df, **ARGS, key=KEY)
    monkeypatch.setattr(bounding, "DENSE_SLACK", -(10**9))
    hashed = aggregate(df, **ARGS, key=KEY, ledger=UNRECORDED)  # a check: the same release
    assert len(dense) == 20 and set(dense["g"]) <= set(df["g"])
    pd.testing.assert_frame_equal(dense, hashed)
