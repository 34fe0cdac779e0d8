"""``bounds="auto"``: the public grid's cells, the searches' output law against the exact law (mpmath), a broken
control, the stated accuracy, the budget and its charge, keyed reproducibility, the ledger, and bad input."""
from __future__ import annotations

import bisect
import dataclasses
import json
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pytest
from support.search_law import chi_square_p, search_law
from support.stats import ALPHA

from pydp_core.accounting import Accountant, PureDP
from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation import autobounds as ab
from pydp_core.aggregation import spec as spec_mod
from pydp_core.aggregation.bounding import subkey
from pydp_core.aggregation.local import partial_aggregates
from pydp_core.aggregation.quantiles import noisy_search
from pydp_core.aggregation.spec import aggregate_spec
from pydp_core.io.keys import generate_key
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record
from pydp_core.io.ledger import KeyReuseError

POINTS = ab.grid_points()


def _run(df, aggs=("sum",), key=b"a" * 32, bounds="auto", **kw):
    kw.setdefault("ledger", UNRECORDED)
    return aggregate(df, privacy_unit="pid", by="g", aggregations={"x": list(aggs)}, bounds=bounds,
                     max_partitions=1, max_contributions=1, epsilon=kw.pop("epsilon", 1.0), key=key,
                     public_partitions=sorted(set(df["g"].tolist())), **kw)


def _frame(x, groups=4):
    x = np.asarray(x, dtype=float)
    return pd.DataFrame({"pid": np.arange(x.size), "g": np.arange(x.size) % groups, "x": x})


def test_the_grid_is_exact_and_its_cells_are_the_first_point_at_or_above():
    assert POINTS.size == ab.WIDTH + 1 and np.all(np.diff(POINTS) > 0)
    assert [Fraction(float(p)) for p in POINTS[129:]] == [Fraction(2) ** (j - 65) for j in range(1, 129)]
    rng = np.random.default_rng(1)
    v = np.concatenate([POINTS, np.nextafter(POINTS, np.inf), np.nextafter(POINTS, -np.inf),
                        rng.normal(0, 1, 5000) * np.exp2(rng.integers(-80, 80, 5000)),
                        [0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, np.inf, -np.inf]])
    exact = [Fraction(float(p)) for p in POINTS]  # the reference: rational comparisons, one value at a time

    def cell(x: float) -> int:
        if x != x or x == np.inf:
            return ab.WIDTH
        if x == -np.inf:
            return 0
        return min(bisect.bisect_left(exact, Fraction(x)), ab.WIDTH)

    np.testing.assert_array_equal(ab.grid_cells(v), [cell(float(x)) for x in v])


def _statistics(values, margin):
    """The two searches' statistics from the definition (independent of the implementation)."""
    low = [sum(1 for v in values if v <= p) - margin for p in POINTS]
    high = [margin - sum(1 for v in values if v > p) for p in POINTS]
    return low, high


VALUES = [3.0, 5.0, 5.5, 40.0, 1000.0, -2.0]


@pytest.mark.parametrize("side", ["low", "high"])
@pytest.mark.parametrize("halve", [False, True])
def test_the_searches_follow_their_exact_law(side, halve):
    plan = ab.BoundsSearch("x", 1.0, 1, Fraction(3, 2), 2)
    law = search_law(_statistics(VALUES, plan.margin)[side == "high"], mpmath.mpf(3) / 2)
    used = dataclasses.replace(plan, t=plan.t / 2) if halve else plan  # the control: half the noise
    stat = used.statistics(ab.grid_counts(np.asarray(VALUES)))[side == "high"]
    reps = 20000
    idx = noisy_search(np.repeat(stat, reps, axis=0), np.arange(reps, dtype=np.uint64), b"s" * 32, used.t)
    p = chi_square_p(idx, law)
    assert (p < ALPHA) if halve else (p > ALPHA)


def test_search_is_the_sorted_pair_of_the_two_searches():
    plan = ab.plan_bounds_search("x", epsilon=2.0, max_partitions=1, max_contributions=1)
    counts = ab.grid_counts(np.asarray(VALUES * 50))
    lo, hi, i_lo, i_hi = plan.search(counts, b"k" * 32)
    low_stat, high_stat = plan.statistics(counts)
    ids = np.zeros(1, dtype=np.uint64)
    assert i_lo == noisy_search(low_stat, ids, subkey(b"k" * 32, "low"), plan.t)[0]
    assert i_hi == noisy_search(high_stat, ids, subkey(b"k" * 32, "high"), plan.t)[0]
    a, b = sorted((i_lo, i_hi))
    assert (lo, hi) == (POINTS[max(a - 1, 0)], POINTS[max(b, 1)]) and lo < hi


def test_calibration_is_exact_and_minimal():
    for eps, kp, kc in [(1.0, 1, 1), (0.1, 3, 5), (2.5, 7, 2)]:
        p = ab.plan_bounds_search("x", epsilon=eps, max_partitions=kp, max_contributions=kc)
        assert p.sensitivity == kp * kc
        assert Fraction(2 * ab.STEPS * kp * kc) / p.t <= Fraction(eps)
        assert Fraction(2 * ab.STEPS * kp * kc) / (p.t - Fraction(1, 1 << 20)) > Fraction(eps)
        assert p.epsilon_achieved <= eps
        assert p.margin == int(mpmath.ceil(mpmath.mpf(p.t.numerator) / p.t.denominator
                                           * mpmath.log(2 * ab.STEPS / mpmath.mpf(ab.MARGIN_BETA))))


def test_bounds_found_clamp_few_rows_on_known_data():
    # With probability >= 1 - beta every step's noise is below B = t log(2 S / beta): fewer than r + B rows lie
    # below the low bound and above the high one (docs/aggregate.md, section 11).
    rng = np.random.default_rng(3)
    x = rng.lognormal(4.0, 1.0, 100_000)
    df = _frame(x)
    reps = 20
    for rep in range(reps):
        out = _run(df, key=bytes([rep]) * 32)
        found = aggregate_report(out)["bounds_search"]["x"]
        lo, hi = found["bounds"]
        t = Fraction(*found["t"])
        bound = found["margin_rows"] + float(t) * np.log(2 * ab.STEPS / (ALPHA / (2 * reps)))
        assert (x < lo).sum() < bound and (x > hi).sum() < bound
        assert hi / lo < 2.0 ** 16  # a useful range, not the whole grid


def test_the_report_the_budget_and_the_charge():
    df = _frame(np.random.default_rng(4).gamma(2.0, 30.0, 20_000))
    acc = Accountant(PureDP(5.0))
    out = _run(df, ["sum", "mean", "median"], bounds_share=0.2, epsilon=2.0, accountant=acc)
    rep = aggregate_report(out)
    auto = rep["bounds_search"]
    assert auto["share"] == 0.2 and auto["charged"] == {"epsilon": 2.0, "delta": 0.0}
    assert rep["bounds"]["x"] == auto["x"]["bounds"]
    assert auto["x"]["epsilon"] <= 0.2 * 2.0
    total = rep["budget"]
    assert total["epsilon_given"] == 2.0 and total["epsilon"] <= 2.0
    parts = [a["epsilon"] for a in rep["aggregates"].values()] + [auto["x"]["epsilon"]]
    assert total["epsilon"] == pytest.approx(sum(parts), rel=1e-12)
    assert acc.total().epsilon == pytest.approx(2.0)  # the whole given budget, before the searches


def test_zcdp_and_selection():
    df = _frame(np.random.default_rng(5).normal(50.0, 10.0, 20_000), groups=3)
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["mean"]}, bounds={"x": "auto"},
                    max_partitions=1, max_contributions=1, rho=0.5, delta=1e-6, key=b"z" * 32, ledger=UNRECORDED)
    rep = aggregate_report(out)
    assert rep["bounds_search"]["x"]["rho_achieved"] <= 0.05
    assert rep["budget"]["rho"] <= 0.5 and rep["budget"]["rho_given"] == 0.5
    assert out.shape[0] == 3 and np.all(np.abs(out["x_mean"] - 50.0) < 5.0)


def test_keyed_and_independent_of_row_order():
    df = _frame(np.random.default_rng(6).exponential(100.0, 5000))
    a = _run(df, ["sum", "median"])
    b = _run(df.sample(frac=1.0, random_state=1).reset_index(drop=True), ["sum", "median"])
    pd.testing.assert_frame_equal(a, b)
    c = _run(df, ["sum", "median"], key=b"b" * 32)
    assert not np.array_equal(a["x_sum"].to_numpy(), c["x_sum"].to_numpy())


def test_the_key_is_refused_on_other_data():
    key = generate_key()
    df = _frame(np.random.default_rng(7).exponential(100.0, 5000))
    a = _run(df, key=key, ledger=None)
    pd.testing.assert_frame_equal(a, _run(df, key=key, ledger=None))  # an exact repeat
    other = df.assign(x=df["x"] * 50.0)  # other grid counts: refused before the searches
    with pytest.raises(KeyReuseError, match="bounds"):
        _run(other, key=key, ledger=None)
    same_grid = df.assign(x=np.where(df["pid"] == 0, df["x"] + 1e-9, df["x"]))  # same grid counts, other data
    with pytest.raises(KeyReuseError):
        _run(same_grid, key=key, ledger=None)


def test_explicit_and_auto_bounds_mix():
    df = _frame(np.random.default_rng(8).uniform(0, 10, 5000)).assign(y=lambda d: d["x"] * 2)
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["sum"], "y": ["sum"]},
                    bounds={"x": (0, 10), "y": "auto"}, max_partitions=1, max_contributions=1, epsilon=1.0,
                    key=b"m" * 32, public_partitions=[0, 1, 2, 3], ledger=UNRECORDED)
    rep = aggregate_report(out)
    assert rep["bounds"]["x"] == [0.0, 10.0] and set(rep["bounds_search"]) == {"share", "charged", "y"}


@pytest.mark.parametrize("share", [0.0, 1.0, 1.5, -0.1])
def test_bad_share(share):
    with pytest.raises(ValueError, match="bounds_share"):
        _run(_frame([1.0, 2.0]), bounds_share=share)


def test_bad_input():
    df = _frame([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="bounds_share"):
        _run(df, bounds={"x": (0, 5)}, bounds_share=0.2)
    with pytest.raises((TypeError, ValueError), match="bounds"):
        _run(df, bounds="automatic")
    with pytest.raises(TypeError, match="'x'.*numeric"):
        _run(df.assign(x=["a", "b", "c"]))
    spec = aggregate_spec(list(df.columns), privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds="auto",
                          max_partitions=1, max_contributions=1, epsilon=1.0, public_partitions=[0, 1])
    with pytest.raises(ValueError, match="auto"):  # an engine's partition cannot choose the bounds
        partial_aggregates(df, spec)
    assert spec.auto.share == spec_mod.DEFAULT_BOUNDS_SHARE


def test_command_line(tmp_path):
    from pydp_core.cli import main

    df = _frame(np.random.default_rng(9).gamma(3.0, 10.0, 3000))
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    for extra, name in ((["--bounds", "auto"], "a.csv"), (["--bounds", "x", "auto", "--bounds-share", "0.3"], "b.csv")):
        out = tmp_path / name
        rc = main(["aggregate", str(src), str(out), "--privacy-unit", "pid", "--group-by", "g", "--sum", "x",
                   "--median", "x", "--max-partitions", "1", "--max-contributions", "1", "--epsilon", "1",
                   "--delta", "1e-6", "-q", *extra])
        assert rc == 0
        rep = json.loads((tmp_path / (name + ".json")).read_text())
        assert rep["bounds_search"]["share"] == (0.3 if "0.3" in extra else 0.1)
        assert rep["bounds"]["x"] == rep["bounds_search"]["x"]["bounds"]
    rc = main(["aggregate", str(src), str(tmp_path / "c.csv"), "--privacy-unit", "pid", "--group-by", "g", "--sum",
               "x", "--bounds", "x", "1", "--max-partitions", "1", "--max-contributions", "1", "--epsilon", "1",
               "--delta", "1e-6", "-q"])
    assert rc != 0
