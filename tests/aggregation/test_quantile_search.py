"""Quantile aggregates (``median``, ``("quantile", levels)``, ``min``, ``max``): the noisy binary search's output
law against its exact law (mpmath), a broken control, accuracy within the stated bound, keyed reproducibility,
and bad input."""
from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import pandas as pd
import pytest
from support.search_law import chi_square_p, search_law
from support.stats import ALPHA

import pydp_core.aggregation._budget as budget_mod
from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation import quantiles as qm
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

LO, HI = 0.0, float(qm.CELLS)  # one grid cell per unit: the grid index of a value v is ceil(v)
VALUES = [100.5, 101.5, 102.5, 104.5, 130.5]  # cells 101, 102, 103, 105, 131


def _table(groups: int, values=VALUES) -> pd.DataFrame:
    k = len(values)
    return pd.DataFrame({"pid": np.arange(groups * k), "g": np.repeat(np.arange(groups), k),
                         "x": np.tile(np.asarray(values, dtype=float), groups)})


def _run(df, aggs, epsilon, key=b"q" * 32, **kw):
    groups = sorted(set(df["g"].tolist()))
    return aggregate(df, privacy_unit="pid", by="g", aggregations={"x": aggs}, bounds={"x": (LO, HI)},
                     max_partitions=1, max_contributions=1, epsilon=epsilon, key=key, public_partitions=groups,
                     ledger=UNRECORDED, **kw)


def _exact_law(cells: list[int], numerator: int, t: mpmath.mpf) -> dict[int, mpmath.mpf]:
    """P(output index = i) of the search on the cell indices ``cells`` (mpmath, from the definition)."""
    d, n = qm.LEVEL_DENOMINATOR, len(cells)
    r = d if numerator == 0 else 0
    return search_law([d * sum(1 for c in cells if c <= i) - numerator * n - r for i in range(qm.CELLS + 1)], t)


@pytest.mark.parametrize("agg, numerator", [("median", 1 << 15), ("min", 0), ("max", 1 << 16),
                                            (("quantile", [0.3]), round(0.3 * 65536))])
def test_the_output_law_is_the_exact_law(agg, numerator):
    groups = 20000
    out = _run(_table(groups), [agg], epsilon=20.0)
    name = [c for c in out.columns if c.startswith("x_")][0]
    desc = aggregate_report(out)["aggregates"][name]
    assert desc["level_fraction"] == [numerator, qm.LEVEL_DENOMINATOR]
    t = mpmath.mpf(desc["t"][0]) / desc["t"][1]
    idx = qm.value_index(out[name].to_numpy(), (LO, HI))
    law = _exact_law([int(np.ceil(v)) for v in VALUES], numerator, t)
    assert chi_square_p(idx, law) > ALPHA


def test_half_the_noise_is_caught(monkeypatch):
    real = budget_mod.plan_quantile

    def half(*args, **kw):
        plan = real(*args, **kw)
        return dataclasses.replace(plan, t=plan.t / 2)

    monkeypatch.setattr(budget_mod, "plan_quantile", half)
    out = _run(_table(20000), ["median"], epsilon=20.0)
    desc = aggregate_report(out)["aggregates"]["x_median"]
    t_claimed = 2 * mpmath.mpf(desc["t"][0]) / desc["t"][1]  # what a correct release would have used
    idx = qm.value_index(out["x_median"].to_numpy(), (LO, HI))
    law = _exact_law([int(np.ceil(v)) for v in VALUES], 1 << 15, t_claimed)
    assert chi_square_p(idx, law) < ALPHA


def test_median_error_within_the_stated_bound():
    rng = np.random.default_rng(7)
    groups, n = 30, 100_000
    x = rng.normal(500.0, 80.0, groups * n)
    df = pd.DataFrame({"pid": np.arange(groups * n), "g": np.repeat(np.arange(groups), n), "x": x})
    out = _run(df, ["median", ("quantile", [0.9])], epsilon=1.0)
    rep = aggregate_report(out)["aggregates"]
    for name, q in (("x_median", 0.5), ("x_quantile_0.9", 0.9)):
        d = rep[name]
        plan = qm.QuantilePlan(name, 0.0, (LO, HI), d["level_fraction"][0], d["step_sensitivity"],
                               qm.Fraction(d["t"][0], d["t"][1]))
        bound = qm.error_bound(plan, ALPHA / groups)  # all groups within it, but with probability ALPHA
        cells = np.clip(np.ceil(x), 0, qm.CELLS).reshape(groups, n)
        for g in range(groups):
            i = int(qm.value_index(np.array([out[name][g]]), (LO, HI))[0])
            assert (cells[g] <= i).sum() > q * n - bound
            assert (cells[g] <= i - 1).sum() < q * n + bound
        assert bound < 0.005 * n  # the bound is in rows: a rank error below 0.5% of the rows


def test_the_value_interpolates_the_noisy_statistics_inside_the_cell():
    # groups ending at i = 0, 5, W and 7; the columns are the search's steps (-1: the search had ended)
    index = np.array([0, 5, qm.CELLS, 7])
    queried = np.array([[512, 256, 0, -1], [4, 5, -1, -1], [1023, -1, -1, -1], [6, 7, 8, -1]])
    released = np.array([[9, 4, 2, 0], [-30, 10, 0, 0], [-5, 0, 0, 0], [-1, 10**9, 10**9, 0]])
    got = qm.interpolated_value(index, queried, released, (LO, HI))
    np.testing.assert_array_equal(got, [0.0, 4.75, qm.CELLS - 0.5, 6.0 + qm.CELL_MARGIN])


@pytest.mark.parametrize("bounds", [(LO, HI), (-3.3, 7.1), (1e12, 1e12 + 1.0), (-1e-300, 5e-301)])
def test_the_interpolated_value_stays_in_its_cell(bounds):
    rng = np.random.default_rng(11)
    index = rng.integers(1, qm.CELLS, 5000)
    y_below, y_at = -rng.integers(1, 10**6, index.size), rng.integers(0, 10**6, index.size)
    got = qm.interpolated_value(index, np.stack([index - 1, index], axis=1), np.stack([y_below, y_at], axis=1),
                                bounds)
    np.testing.assert_array_equal(qm.value_index(got, bounds), index)


def test_keyed_and_independent_of_row_order():
    df = _table(50, values=[3.0, 700.0, 12.5, 600.0, 400.0])
    a = _run(df, ["median", "min", "max"], epsilon=1.0)
    b = _run(df.sample(frac=1.0, random_state=3).reset_index(drop=True), ["median", "min", "max"], epsilon=1.0)
    pd.testing.assert_frame_equal(a, b)
    c = _run(df, ["median", "min", "max"], epsilon=1.0, key=b"r" * 32)
    assert not np.array_equal(a["x_median"].to_numpy(), c["x_median"].to_numpy())


def test_quantiles_under_zcdp_and_with_selection():
    df = _table(30)
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["median", "sum"]}, bounds={"x": (LO, HI)},
                    max_partitions=1, max_contributions=1, rho=0.5, delta=1e-6, key=b"z" * 32, ledger=UNRECORDED)
    rep = aggregate_report(out)
    assert rep["budget"]["rho"] <= 0.5
    assert rep["aggregates"]["x_median"]["rho_achieved"] <= rep["aggregates"]["x_median"]["rho"]


@pytest.mark.parametrize("aggs, bounds, match, err", [
    ([("quantile", [1.5])], {"x": (0, 1)}, "outside", ValueError),
    ([("quantile", [-0.1])], {"x": (0, 1)}, "outside", ValueError),
    ([("quantile", [])], {"x": (0, 1)}, "non-empty", TypeError),
    ([("quantile", ["a"])], {"x": (0, 1)}, "numbers", TypeError),
    ([("quantile", [0.5, 0.5])], {"x": (0, 1)}, "twice", ValueError),
    ([("quantil", [0.5])], {"x": (0, 1)}, "quantile", TypeError),
    (["median"], None, "bounds", ValueError),
])
def test_bad_quantile_arguments(aggs, bounds, match, err):
    df = _table(2)
    with pytest.raises(err, match=match):
        aggregate(df, privacy_unit="pid", by="g", aggregations={"x": aggs}, bounds=bounds, max_partitions=1,
                  max_contributions=1, epsilon=1.0, public_partitions=[0, 1])


def test_a_string_column_is_refused():
    df = _table(2).assign(s="a")
    with pytest.raises(TypeError, match="'s' must be numeric"):
        aggregate(df, privacy_unit="pid", by="g", aggregations={"s": ["median"]}, bounds={"s": (0, 1)},
                  max_partitions=1, max_contributions=1, epsilon=1.0, public_partitions=[0, 1])
