"""``count_distinct`` and ``("histogram", edges)`` per group: the released noise against its exact law (mpmath),
one person's effect within the bounding's limits, keyed reproducibility and row-order independence, the partials the
engines unite over partitions, the command line, and bad input."""
from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from support.stats import chi_square

from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation.histograms import bin_counts
from pydp_core.aggregation.local import partial_aggregates
from pydp_core.aggregation.spec import aggregate_spec
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

EDGES = [0.0, 1.0, 2.5, 10.0]


def _run(df, aggs, *, groups=None, key=b"h" * 32, kp=1, kc=1, epsilon=1.0, **kw):
    groups = sorted(set(df["g"].tolist())) if groups is None else groups
    return aggregate(df, privacy_unit="pid", by="g", aggregations=aggs, bounds=kw.pop("bounds", None),
                     max_partitions=kp, max_contributions=kc, epsilon=epsilon, key=key, public_partitions=groups,
                     ledger=UNRECORDED, **kw)


def _dlaplace_chi_square(noise: np.ndarray, t: Fraction, width: int = 8) -> None:
    """Chi-square of integer ``noise`` against P(y) = (1 - q) / (1 + q) q^|y|, q = exp(-1/t) (mpmath)."""
    q = mpmath.exp(-1 / mpmath.mpf(t.numerator) * t.denominator)
    tail = q ** width / (1 + q)  # P(Y <= -w) = P(Y >= w)
    probs = [tail] + [(1 - q) / (1 + q) * q ** abs(y) for y in range(-width + 1, width)] + [tail]
    edges = list(range(-width, width))  # (-inf, -w], {-w + 1}, ..., {w - 1}, (w - 1, inf)
    stat, crit = chi_square(noise, edges, np.array([float(p) for p in probs]))
    assert stat < crit, f"chi-square {stat:.1f} >= {crit:.1f}"


def _distinct_table(groups: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Per group ``g``: ``g % 7 + 1`` distinct products over ``2 (g % 7 + 1)`` persons, one row each."""
    rows = []
    for g in range(groups):
        k = g % 7 + 1
        rows += [(f"{g}-{j}", g, f"p{j % k}") for j in range(2 * k)]
    df = pd.DataFrame(rows, columns=["pid", "g", "prod"])
    return df, np.array([g % 7 + 1 for g in range(groups)])


def test_count_distinct_noise_follows_the_exact_law():
    df, truth = _distinct_table(20000)
    out = _run(df, {"prod": ["count_distinct"]}, epsilon=0.5)
    comp = aggregate_report(out)["aggregates"]["prod_count_distinct"]["components"]["distinct"]
    t = Fraction(comp["t"])
    assert t == 2 and comp["sensitivity_per_partition"] == 1
    _dlaplace_chi_square(out["prod_count_distinct"].to_numpy() - truth, t)


def test_histogram_noise_follows_the_exact_law_in_every_bin():
    groups = 6000
    x = np.tile([0.5, 0.7, 3.0, 9.0, 12.0, -4.0], groups)  # bins 0, 0, 2, 2, 2 (clamped), 0 (clamped)
    df = pd.DataFrame({"pid": np.arange(x.size), "g": np.repeat(np.arange(groups), 6), "x": x})
    out = _run(df, {"x": [("histogram", EDGES)]}, epsilon=0.5)
    rep = aggregate_report(out)["aggregates"]["x_histogram"]
    assert rep["edges"] == EDGES
    t = Fraction(rep["components"]["bins"]["t"])
    assert t == 2  # the whole histogram has the sensitivity of a row count
    noise = np.concatenate([out[f"x_histogram_{i}"].to_numpy() - c for i, c in enumerate([3, 0, 3])])
    _dlaplace_chi_square(noise, t)


def test_bins_are_half_open_and_values_are_clamped():
    v = np.array([-1.0, 0.0, np.nextafter(1.0, 0), 1.0, 2.5, 9.99, 10.0, 11.0])
    np.testing.assert_array_equal(bin_counts(v, np.zeros(v.size, dtype=np.int64), tuple(EDGES), 1), [[3, 1, 4]])


def _person(df, pid, rows, groups, values):
    extra = pd.DataFrame({"pid": pid, "g": np.resize(groups, rows), "prod": np.resize(values, rows),
                          "x": np.resize([0.5, 3.0, 5.0], rows)})
    return pd.concat([df, extra], ignore_index=True)


@pytest.mark.parametrize("kp, kc", [(1, 1), (2, 3)])
def test_one_person_changes_at_most_kp_groups_by_at_most_kc(kp, kc):
    rng = np.random.default_rng(2)
    n = 3000
    base = pd.DataFrame({"pid": rng.integers(0, 800, n), "g": rng.integers(0, 10, n),
                         "prod": rng.choice([f"p{i}" for i in range(40)], n), "x": rng.uniform(0, 10, n)})
    big = _person(base, 10_000, 5000, np.arange(10), [f"new{i}" for i in range(997)])
    aggs = {"prod": ["count_distinct"], "x": [("histogram", EDGES)]}
    a = _run(base, aggs, groups=list(range(10)), kp=kp, kc=kc)
    b = _run(big, aggs, groups=list(range(10)), kp=kp, kc=kc)
    d = (b["prod_count_distinct"] - a["prod_count_distinct"]).to_numpy()
    assert (d != 0).sum() <= kp and d.max() <= kc and d.min() >= 0
    assert d.sum() == kp * kc  # the new person's values are new in each kept group
    h = np.stack([(b[f"x_histogram_{i}"] - a[f"x_histogram_{i}"]).to_numpy() for i in range(3)])
    assert (np.abs(h).sum(axis=0) > 0).sum() <= kp and h.sum() == kp * kc and h.min() >= 0


def test_keyed_and_independent_of_row_order():
    df, _ = _distinct_table(300)
    df = pd.concat([df, df.assign(prod=df["prod"] + "x")], ignore_index=True)  # persons with several rows
    df["x"] = 1.0  # identical content but for the counted value
    aggs = {"prod": ["count_distinct"], "x": [("histogram", EDGES)]}
    a = _run(df, aggs, kc=1)
    b = _run(df.sample(frac=1.0, random_state=4).reset_index(drop=True), aggs, kc=1)
    pd.testing.assert_frame_equal(a, b)
    c = _run(df, aggs, kc=1, key=b"i" * 32)
    assert not np.array_equal(a["prod_count_distinct"].to_numpy(), c["prod_count_distinct"].to_numpy())
    arrow = _run(pa.Table.from_pandas(df, preserve_index=False), aggs, kc=1, groups=sorted(set(df["g"])))
    np.testing.assert_array_equal(arrow.column("prod_count_distinct").to_numpy(), a["prod_count_distinct"])


def test_partitions_of_whole_persons_combine_distinct_values_and_histograms():
    """The engines' partials of two partitions splitting the persons: the union of their distinct (group,
    value) pairs counts what the whole table counts (a value held in both counts once), the bins add up."""
    df, truth = _distinct_table(40)
    df["x"] = np.arange(len(df)) % 11 * 1.0
    spec = aggregate_spec(list(df.columns), privacy_unit="pid", by="g", aggregations={"prod": ["count_distinct"],
                          "x": [("histogram", EDGES)]}, bounds=None, max_partitions=1, max_contributions=1,
                          epsilon=1.0, public_partitions=list(range(40)))
    half = np.arange(len(df)) % 2 == 0  # one row per person
    union: dict = {}
    per_part = []
    bins = np.zeros((40, len(EDGES) - 1), dtype=np.int64)
    for part in (df[half], df[~half]):
        groups, partials, pairs = partial_aggregates(part.reset_index(drop=True), spec)
        bins[groups[0]] += partials["x\x00bins"]
        index, values = pairs["prod"]
        per_part.append(index.size)
        for g, v in zip(groups[0][index].tolist(), values.tolist()):
            union.setdefault(g, set()).add(v)
    groups, partials, pairs = partial_aggregates(df, spec)
    np.testing.assert_array_equal(bins[groups[0]], partials["x\x00bins"])
    np.testing.assert_array_equal([len(union[g]) for g in groups[0].tolist()], truth[groups[0]])
    assert sum(map(len, union.values())) < sum(per_part)  # a value held in both partitions counts once



def test_signed_zeros_are_one_value_for_every_table_kind():
    df = pd.DataFrame({"pid": range(6), "g": [0] * 6, "z": [0.0, -0.0, 0.0, -0.0, 1.0, -1.0]})
    counts = [_run(t, {"z": ["count_distinct"]}, groups=[0], epsilon=1e6)["z_count_distinct"]
              for t in (df, pa.Table.from_pandas(df, preserve_index=False))]
    assert list(counts[0]) == counts[1].to_pylist() == [3]

@pytest.mark.parametrize("hist, exc, words", [
    (("histogram", [0.0, 2.0, 1.0]), ValueError, "strictly increasing"),
    (("histogram", [1.0, 1.0]), ValueError, "strictly increasing"),
    (("histogram", [0.0]), TypeError, "at least two"),
    (("histogram", [0.0, float("inf")]), ValueError, "finite"),
    (("histogram", [0.0, "a"]), TypeError, "numbers"),
    (("histogram", 3), TypeError, "at least two"),
])
def test_bad_bins_name_the_argument(hist, exc, words):
    df = pd.DataFrame({"pid": [1, 2], "g": [0, 0], "x": [1.0, 2.0]})
    with pytest.raises(exc, match=rf"aggregations\['x'\].*{words}"):
        _run(df, {"x": [hist]})


def test_bad_columns():
    df = pd.DataFrame({"pid": [1, 2], "g": [0, 0], "x": ["a", "b"], "y": [None, "b"]})
    with pytest.raises(TypeError, match="'x'.*numeric"):
        _run(df, {"x": [("histogram", EDGES)]})
    with pytest.raises(ValueError, match="'y'"):
        _run(df, {"y": ["count_distinct"]})


def test_command_line(tmp_path):
    from pydp_core.cli import main

    df, truth = _distinct_table(40)
    df["x"] = np.resize([0.5, 2.0, 7.0], len(df))
    src = tmp_path / "in.parquet"
    df.to_parquet(src)
    out = tmp_path / "out.parquet"
    rc = main(["aggregate", str(src), str(out), "--privacy-unit", "pid", "--group-by", "g", "--count-distinct",
               "prod", "--histogram", "x", "0", "1", "2.5", "10", "--max-partitions", "1", "--max-contributions",
               "1", "--epsilon", "4", "--delta", "1e-6", "-q"])
    assert rc == 0
    res = pd.read_parquet(out)
    assert {"prod_count_distinct", "x_histogram_0", "x_histogram_2"} <= set(res.columns)
    rep = json.loads((tmp_path / "out.parquet.json").read_text())
    assert rep["aggregates"]["x_histogram"]["edges"] == EDGES
