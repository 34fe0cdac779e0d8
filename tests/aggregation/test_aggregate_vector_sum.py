"""``("vector_sum", norm, bound, size)``: the exact clipping limits (against rational and mpmath references),
the released noise against its exact law, one person's effect within ``Kp`` groups and ``Kc`` bounded
vectors, pyarrow and pandas alike, the calibration's minimality, the command line, and bad input."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats
from support.stats import chi_square

from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation import vectors as vm
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

NORMS = ["l1", "l2", "linf"]


def _run(df, vec, *, groups=(0, 1, 2), key=b"v" * 32, kp=1, kc=1, **kw):
    kw.setdefault("epsilon", None if "rho" in kw else 1.0)
    return aggregate(df, privacy_unit="pid", by="g", aggregations={"v": [("vector_sum", *vec)]}, bounds=None,
                     max_partitions=kp, max_contributions=kc, key=key, public_partitions=list(groups),
                     ledger=UNRECORDED, **kw)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("bound", [1.0, 2.0, 0.3, 1e-3, 7e5])
def test_norm_limits_against_exact_references(norm, bound):
    size = 5
    b, b2, s1, s2 = vm.norm_limits(norm, bound, size)
    c = Fraction(bound) / Fraction(2) ** vm.unit_exponent(bound)
    assert 2 ** 19 <= c < 2 ** 20 and b == math.floor(c) and b2 == math.floor(c * c)
    mp = mpmath.mpf(bound) * mpmath.mpf(2) ** -vm.unit_exponent(bound)
    want_s1 = {"l1": b, "linf": size * b, "l2": int(mpmath.floor(mpmath.sqrt(size * b2)))}[norm]
    want_s2 = {"l1": b * b, "linf": size * b * b, "l2": int(mpmath.floor(mp * mp))}[norm]
    assert (s1, s2) == (want_s1, want_s2)


@pytest.mark.parametrize("norm", NORMS)
def test_clipped_rows_meet_the_limit_exactly_and_small_rows_are_kept(norm):
    rng = np.random.default_rng(1)
    bound = 1.5
    x = rng.standard_cauchy((20000, 6)) * np.exp(rng.uniform(-3, 3, (20000, 1)))
    q = vm.clipped_units(x, norm, bound)
    b, b2, s1, s2 = vm.norm_limits(norm, bound, 6)
    l1 = [sum(abs(int(v)) for v in row) for row in q[:2000]]
    l2 = [sum(int(v) ** 2 for v in row) for row in q[:2000]]
    assert max(l1) <= s1 and max(l2) <= s2
    if norm == "l1":
        assert np.abs(q).sum(axis=1).max() <= b
    elif norm == "l2":
        assert (q * q).sum(axis=1).max() <= b2
    else:
        assert np.abs(q).max() <= b
    small = x / (np.abs(x).sum(axis=1, keepdims=True) * 1.01) * bound  # inside every norm ball of radius bound
    g = math.ldexp(1.0, vm.unit_exponent(bound))
    np.testing.assert_array_equal(vm.clipped_units(small, norm, bound), np.rint(small / g).astype(np.int64))


def _dlaplace_cdf(y: int, t: Fraction):
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
    return q ** (-y) / (1 + q) if y < 0 else 1 - q ** (y + 1) / (1 + q)


def test_released_noise_follows_the_exact_law():
    groups, size, bound = 3000, 4, 1.0
    x = np.tile(np.array([[0.25, -0.5, 0.125, 0.0]]), (groups, 1))  # on the unit grid: exact sums
    df = pd.DataFrame({"pid": np.arange(groups), "g": np.arange(groups), "v": list(x)})
    out = _run(df, ("l1", bound, size), groups=range(groups), epsilon=2.0)
    rep = aggregate_report(out)["aggregates"]["v_vector_sum"]
    g = rep["unit"]
    t = Fraction(rep["components"]["vector"]["t"])
    _, _, s1, _ = vm.norm_limits("l1", bound, size)
    assert t == Fraction(s1, 2)
    noise = (np.stack(out["v_vector_sum"]) - x) / g
    assert np.array_equal(noise, np.rint(noise))
    edges = [int(k * float(t) / 2) for k in range(-6, 7)]
    cdf = [float(_dlaplace_cdf(e, t)) for e in edges]
    probs = np.diff([0.0, *cdf, 1.0])
    stat, crit = chi_square(noise.astype(np.int64).ravel(), edges, probs)
    assert stat < crit


@pytest.mark.parametrize("kw", [dict(epsilon=2.0), dict(rho=0.5)], ids=["laplace", "gaussian"])
def test_the_interval_box_holds_the_true_vector(kw):
    groups, size, bound, level = 3000, 4, 1.0, 0.9
    x = np.tile(np.array([[0.25, -0.5, 0.125, 0.0]]), (groups, 1))  # on the unit grid: the true sums are x
    df = pd.DataFrame({"pid": np.arange(groups), "g": np.arange(groups), "v": list(x)})
    out = _run(df, ("l1", bound, size), groups=range(groups), confidence=level, **kw)
    lo, hi, est = (np.stack(out[f"v_vector_sum{c}"]) for c in ("_ci_low", "_ci_high", ""))
    comp = aggregate_report(out)["aggregates"]["v_vector_sum"]["components"]["vector"]
    np.testing.assert_array_equal(hi - est, comp["ci_half_width"])
    np.testing.assert_array_equal(est - lo, comp["ci_half_width"])
    misses = int((~((lo <= x) & (x <= hi)).all(axis=1)).sum())
    # At most 10% of the boxes miss (union bound over the 4 coordinates); 1e-6 false alarm. Per-coordinate
    # intervals at level 0.9 would give boxes at about 0.9^4 and ~1000 misses.
    assert misses <= stats.binom.ppf(1 - 1e-6, groups, 1 - level)
    table = pa.table({"pid": np.arange(groups), "g": np.arange(groups),
                      "v": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), size)})
    arrow = _run(table, ("l1", bound, size), groups=range(groups), confidence=level, **kw)
    np.testing.assert_array_equal(np.array(arrow.column("v_vector_sum_ci_low").to_pylist()), lo)
    assert "v_vector_sum_ci_low" not in _run(df.head(3), ("l1", bound, size), confidence=None, **kw).columns


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("kp, kc", [(1, 1), (2, 3)])
def test_one_person_moves_at_most_kp_groups_by_kc_bounded_vectors(norm, kp, kc):
    rng = np.random.default_rng(2)
    n, size, bound = 2000, 3, 2.0
    base = pd.DataFrame({"pid": rng.integers(0, 500, n), "g": rng.integers(0, 6, n),
                         "v": list(rng.normal(0, 1, (n, size)))})
    extra = pd.DataFrame({"pid": 10_000, "g": np.arange(3000) % 6, "v": list(rng.normal(0, 50, (3000, size)))})
    a = _run(base, (norm, bound, size), groups=range(6), kp=kp, kc=kc)
    b = _run(pd.concat([base, extra], ignore_index=True), (norm, bound, size), groups=range(6), kp=kp, kc=kc)
    d = np.stack(b["v_vector_sum"]) - np.stack(a["v_vector_sum"])  # the same noise under one key
    length = {"l1": np.abs(d).sum(axis=1), "l2": np.sqrt((d * d).sum(axis=1)), "linf": np.abs(d).max(axis=1)}[norm]
    assert (length > 0).sum() <= kp and length.max() <= kc * bound * (1 + 1e-12)


def test_arrow_lists_and_pandas_give_the_same_release_and_gaussian_is_minimal():
    rng = np.random.default_rng(3)
    n, size = 3000, 3
    x = rng.normal(0, 1, (n, size))
    g = rng.integers(0, 3, n)
    df = pd.DataFrame({"pid": np.arange(n), "g": g, "v": list(x)})
    table = pa.table({"pid": np.arange(n), "g": g, "v": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), size)})
    a = _run(df, ("l2", 1.0, size), rho=0.5)
    b = _run(table, ("l2", 1.0, size), rho=0.5)
    np.testing.assert_array_equal(np.stack(a["v_vector_sum"]), np.array(b.column("v_vector_sum").to_pylist()))
    comp = aggregate_report(a)["aggregates"]["v_vector_sum"]["components"]["vector"]
    sigma2 = Fraction(comp["sigma2"])
    _, _, _, s2 = vm.norm_limits("l2", 1.0, size)
    assert sigma2.denominator == 1 and Fraction(s2) / (2 * sigma2) <= Fraction(0.5) < Fraction(s2) / (2 * (sigma2 - 1))


@pytest.mark.parametrize("vec, frame, exc, words", [
    (("l3", 1.0, 2), None, ValueError, "norm"),
    (("l2", 0.0, 2), None, ValueError, "bound"),
    (("l2", float("nan"), 2), None, ValueError, "bound"),
    (("l2", 1.0, 0), None, ValueError, "size"),
    (("l2", 1.0, 3), None, ValueError, "length"),
    (("l2", 1.0, 2), {"v": [1.0, 2.0]}, TypeError, "sequences"),
    (("l2", 1.0, 2), {"v": [[1.0, np.nan], [0.0, 1.0]]}, ValueError, "NaN"),
])
def test_bad_input_names_the_argument(vec, frame, exc, words):
    df = pd.DataFrame({"pid": [1, 2], "g": [0, 0], "v": [[1.0, 2.0], [3.0, 4.0]]})
    if frame:
        df = df.assign(v=frame["v"])
    with pytest.raises(exc, match=rf"(aggregations\['v'\]|'v').*{words}"):
        _run(df, vec, groups=[0])


def test_command_line(tmp_path):
    from pydp_core.cli import main

    rng = np.random.default_rng(4)
    n = 500
    table = pa.table({"pid": np.arange(n), "g": rng.integers(0, 2, n),
                      "v": pa.array(list(rng.normal(0, 1, (n, 2))), type=pa.list_(pa.float64()))})
    import pyarrow.parquet as pq

    pq.write_table(table, tmp_path / "in.parquet")
    rc = main(["aggregate", str(tmp_path / "in.parquet"), str(tmp_path / "out.parquet"), "--privacy-unit", "pid",
               "--group-by", "g", "--vector-sum", "v", "l2", "1.0", "2", "--max-partitions", "1",
               "--max-contributions", "1", "--epsilon", "1", "--delta", "1e-6", "-q"])
    assert rc == 0
    rep = json.loads((tmp_path / "out.parquet.json").read_text())
    assert rep["aggregates"]["v_vector_sum"]["norm"] == "l2"
    assert pq.read_table(tmp_path / "out.parquet").column("v_vector_sum").type == pa.list_(pa.float64())
