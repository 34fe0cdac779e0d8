"""The optimal partition selection (Desfontaines et al. 2022): the table of release probabilities against a
50-digit reference of the recursion, the DP constraints and maximality at every step, the released
fraction of groups against pi(n) (binomial tests at alpha 1e-6), reproducibility and bad input."""
from __future__ import annotations

import argparse
import dataclasses
import json
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats
from support.stats import ALPHA

from pydp_core.aggregation import (
    aggregate,
    aggregate_report,
    calibrate_optimal_selection,
    calibrate_selection,
    optimal_probability,
    selection_probability,
)
from pydp_core.aggregation.aggregations import split_epsilon
from pydp_core.aggregation.selection import _optimal_table, optimal_selection_for_rho
from pydp_core.cli import aggregate as cmd
from pydp_core.io import write_key
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

KEY = bytes(range(32))
def DPS(delta: float) -> int:
    return 60 + int(-np.log10(delta))


CASES = [(1.0, 1e-6), (0.1, 1e-10), (5.0, 1e-300), (2.0, 0.3), (0.01, 1e-5), (30.0, 1e-12)]


def reference(eps: float, delta: float, n: int) -> list:
    """pi(0..n) by the recursion in mpmath, 60 digits beyond delta (1 - pi goes down to delta)."""
    with mpmath.workdps(DPS(delta)):
        e, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)
        pi = [mpmath.mpf(0)]
        for _ in range(n):
            p = pi[-1]
            pi.append(min(e * p + d, 1 - (1 - p - d) / e, mpmath.mpf(1)))
        return pi


@pytest.mark.parametrize("eps, delta", CASES)
def test_table_matches_the_recursion_near_0_and_near_1(eps, delta):
    bits, table = _optimal_table(eps, delta)
    one = 1 << bits
    assert 2.0 ** -bits <= delta * 2.0 ** -96
    ref = reference(eps, delta, len(table) + 2)
    assert table[0] == 0 and table[-1] == one and all(t < one for t in table[:-1])
    assert ref[len(table) - 1] == 1 and ref[len(table) - 2] < 1  # 1 reached at the same step
    # e^eps is rounded down (2.2e-16 relative) and each step inherits the previous error: pi is accurate to
    # ~1e-16 N relative; 1 - pi near delta loses more where 1 - pi(n-1) - delta cancels (the recursion's own
    # conditioning, measured <= 1e-13 N here)
    rel = 1e-15 * len(table)
    with mpmath.workdps(DPS(delta)):
        for t, r in zip(table[1:-1], ref[1:]):
            p = mpmath.mpf(t) / one
            assert abs(p - r) <= rel * r + mpmath.mpf(2) ** (2 - bits)
            assert abs((1 - p) - (1 - r)) <= 100 * rel * (1 - r) + mpmath.mpf(2) ** (2 - bits)  # relative near 1


@pytest.mark.parametrize("eps, delta", CASES)
def test_every_step_is_dp_and_binds_a_constraint(eps, delta):
    """Exactly (60 digits beyond delta, true e^eps): pi(n) <= e^eps pi(n-1) + delta and 1 - pi(n-1) <= e^eps (1 - pi(n)) +
    delta (the other two constraints follow from monotonicity); and pi(n) is within rounding of the largest
    value those allow, so no larger table is DP."""
    bits, table = _optimal_table(eps, delta)
    one = 1 << bits
    assert all(a <= b for a, b in zip(table, table[1:]))
    with mpmath.workdps(DPS(delta)):
        e, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)
        for a, b in zip(table, table[1:]):
            prev, cur = mpmath.mpf(a) / one, mpmath.mpf(b) / one
            assert cur <= e * prev + d
            assert 1 - prev <= e * (1 - cur) + d
            bound = min(e * prev + d, 1 - (1 - prev - d) / e, mpmath.mpf(1))
            assert bound - cur <= 1e-15 * min(bound, 1 - cur) + mpmath.mpf(2) ** (1 - bits)


@pytest.mark.parametrize("eps, delta, kp", [(1.0, 1e-6, 1), (0.7, 1e-9, 3), (2.0, 1e-5, 7)])
def test_dominates_laplace_thresholding_at_the_same_budget(eps, delta, kp):
    """Optimality: no (eps, delta)-DP selection releases a group of n units more often than pi(n)."""
    sel = calibrate_selection(epsilon=eps / kp, delta=delta / kp, max_partitions=1)
    n = np.arange(0, 3 * sel.threshold)
    pi = optimal_probability(n, epsilon=eps, delta=delta, max_partitions=kp)
    thr = selection_probability(n, threshold=sel.threshold, t=sel.noise.t)
    thr[0] = 0.0  # a group without units does not exist
    assert np.all(pi >= thr * (1 - 1e-12))
    assert np.any(pi > thr * 1.5)


def test_max_partitions_splits_epsilon_and_delta_without_exceeding_them():
    for eps, delta, kp in [(1.0, 1e-6, 3), (0.3, 7e-11, 10), (2.0 / 3.0, 1e-5, 7)]:
        sel = calibrate_optimal_selection(epsilon=eps, delta=delta, max_partitions=kp)
        assert kp * Fraction(sel.epsilon_group) <= Fraction(eps) and kp * Fraction(sel.delta_group) <= Fraction(delta)
        assert sel.epsilon_group >= eps / kp * (1 - 1e-15) and sel.delta_achieved <= delta
        assert (sel.bits, sel.table) == _optimal_table(sel.epsilon_group, sel.delta_group)


def _groups_of(ns, reps, persons_groups=1):
    """``reps`` groups of exactly n units for each n (one row per unit, each unit in ``persons_groups`` groups)."""
    frames, pid = [], 0
    for i, n in enumerate(ns):
        groups = np.repeat(np.arange(reps) + i * reps, n)
        frames.append(pd.DataFrame({"pid": np.arange(pid, pid + groups.size), "g": groups, "x": 1.0}))
        pid += groups.size
    return pd.concat(frames, ignore_index=True)


def _check_released_fractions(out, ns, reps, pi_all):
    """Binomial test of the released fraction of the ``reps`` groups of each ``n`` against ``pi_all[n]``."""
    released = out["g"].to_numpy() // reps
    for i, n in enumerate(ns):
        k = int(np.count_nonzero(released == i))
        p = float(pi_all[n])
        assert 0.005 < p < 0.995
        assert stats.binomtest(k, reps, p).pvalue > ALPHA, (n, k, p)


@pytest.mark.parametrize("kp", [1, 2])
def test_released_fraction_matches_pi(kp):
    eps_sel, delta, reps = 1.0, 1e-4, 3000
    pi_all = optimal_probability(np.arange(40), epsilon=eps_sel, delta=delta, max_partitions=kp)
    ns = [int(np.searchsorted(pi_all, q)) for q in (0.01, 0.2, 0.5, 0.9)]
    df = _groups_of(ns, reps)
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"pid": ["privacy_id_count"]}, bounds=None,
                    max_partitions=kp, max_contributions=1, epsilon=2 * eps_sel, delta=delta, key=KEY,
                    partition_selection="optimal")
    rep = aggregate_report(out)["partition_selection"]
    assert rep["method"] == "optimal" and rep["epsilon"] == eps_sel and rep["delta_achieved"] <= delta
    _check_released_fractions(out, ns, reps, pi_all)


def test_selection_is_a_function_of_the_key_and_the_groups():
    df = _groups_of([6, 9], 500)
    kw = dict(privacy_unit="pid", by="g", aggregations={"x": ["count"]}, bounds=None, max_partitions=1,
              max_contributions=1, epsilon=1.0, delta=1e-3, partition_selection="optimal")
    a = aggregate(df, key=KEY, **kw)
    shuffled = df.sample(frac=1.0, random_state=3).reset_index(drop=True)
    b = aggregate(pa.Table.from_pandas(shuffled, preserve_index=False), key=KEY, **kw).to_pandas()
    assert a["g"].tolist() == b["g"].tolist() and a["x_count"].tolist() == b["x_count"].tolist()
    c = aggregate(df, key=bytes(32), **kw)
    assert a["g"].tolist() != c["g"].tolist()
    assert 0 < len(a) < 1000


@pytest.mark.parametrize("value, error", [("foo", ValueError), ("", ValueError), (None, TypeError), (1, TypeError)])
def test_unknown_method_names_the_argument(value, error):
    df = _groups_of([3], 5)
    with pytest.raises(error, match="partition_selection"):
        aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["count"]}, bounds=None, max_partitions=1,
                  max_contributions=1, epsilon=1.0, delta=1e-6, partition_selection=value)


def test_too_small_an_epsilon_is_refused_at_once():
    # about 2 ln(1 + eps / (2 delta)) / eps entries: 7.9e4 are built, 7.9e6 refused before the table is built
    assert 70_000 < len(calibrate_optimal_selection(epsilon=1e-4, delta=1e-6, max_partitions=1).table) < 90_000
    with pytest.raises(ValueError, match="partition_selection='threshold'"):
        calibrate_optimal_selection(epsilon=1e-4, delta=1e-6, max_partitions=100)
    df = _groups_of([3], 5)
    with pytest.raises(ValueError, match="budget_split"):
        aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["count"]}, bounds=None,
                  max_partitions=1 << 20, max_contributions=1, epsilon=1.0, delta=1e-6, partition_selection="optimal")


def test_optimal_under_rho_spends_its_zcdp_share():
    """With rho, the optimal selection takes its rho share as (e, delta / Kp) per group with Kp e^2 / 2 <= rho_s
    (exactly) and the largest such float e; the total is delta-approximate rho-zCDP."""
    df = _groups_of([3, 40], 5)
    for kp, rho in [(1, 0.5), (3, 0.02), (7, 1e-3 / 3)]:
        out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["count"]}, bounds=None, max_partitions=kp,
                        max_contributions=1, rho=rho, delta=1e-6, partition_selection="optimal", key=KEY, ledger=UNRECORDED)
        rep = aggregate_report(out)
        sel, budget = rep["partition_selection"], rep["budget"]
        rho_s = split_epsilon(rho, [1.0, 1.0])[1]
        e = sel["epsilon_per_partition"]
        assert sel["method"] == "optimal" and sel["max_partitions"] == kp
        assert kp * Fraction(e) ** 2 / 2 <= Fraction(rho_s) < kp * Fraction(np.nextafter(e, np.inf)) ** 2 / 2
        assert sel["rho"] >= kp * Fraction(e) ** 2 / 2 and sel["rho"] <= rho_s
        assert kp * Fraction(sel["delta_per_partition"]) <= Fraction(1e-6) and sel["delta_achieved"] <= 1e-6
        assert budget["definition"] == "approximate zCDP" and budget["delta"] == sel["delta_achieved"]
        assert Fraction(budget["rho"]) <= Fraction(rho)
        assert budget["rho"] == pytest.approx(rho, rel=1e-9)  # the count's share and the selection's, both spent
        ref = optimal_selection_for_rho(rho=rho_s, delta=1e-6, max_partitions=kp)
        assert ref.epsilon_group == e and ref.describe() == sel


def test_optimal_under_rho_releases_with_pi():
    """The released fraction of 3000 groups of n units matches pi(n) of the rho-calibrated table."""
    rho, delta, reps = 0.5, 1e-4, 3000
    sel = optimal_selection_for_rho(rho=rho / 2, delta=delta, max_partitions=1)
    pi_all = np.array([float(Fraction(t, 1 << sel.bits)) for t in sel.table])
    ns = [int(np.searchsorted(pi_all, q)) for q in (0.01, 0.3, 0.9)]
    df = _groups_of(ns, reps)
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"pid": ["privacy_id_count"]}, bounds=None,
                    max_partitions=1, max_contributions=1, rho=rho, delta=delta, key=KEY, partition_selection="optimal")
    assert aggregate_report(out)["partition_selection"]["epsilon_per_partition"] == sel.epsilon_group
    _check_released_fractions(out, ns, reps, pi_all)


def test_optimal_under_rho_bad_budgets_name_the_argument():
    df = _groups_of([3], 5)
    kw = dict(privacy_unit="pid", by="g", aggregations={"x": ["count"]}, bounds=None, max_contributions=1,
              partition_selection="optimal")
    with pytest.raises(ValueError, match="delta"):  # selection needs delta, under rho as well
        aggregate(df, max_partitions=1, rho=0.5, **kw)
    with pytest.raises(ValueError, match="budget_split"):  # a share too small for a table of 10**6 entries
        aggregate(df, max_partitions=1, rho=0.5, delta=1e-12, budget_split={"x_count": 1.0, "selection": 1e-12}, **kw)
    # public partitions: no selection, so the method does not matter
    out = aggregate(df, max_partitions=1, rho=0.5, public_partitions=[0, 1], **kw)
    assert aggregate_report(out)["partition_selection"]["method"] == "public_partitions"


def test_vectorised_draws_equal_one_stream_per_group():
    """select() compares, for every group at once, the first bits / 64 words of Random(key).stream(id) read as
    one big-endian integer with 2**bits pi(n): the same decisions as reading each group's stream alone."""
    from pydp_core.aggregation.aggregations import _base_generator

    rng = np.random.default_rng(5)
    for eps, delta in [(1.0, 1e-6), (0.5, 1e-30), (5.0, 1e-300)]:
        sel = calibrate_optimal_selection(epsilon=eps, delta=delta, max_partitions=1)
        last = len(sel.table) - 1
        units = rng.integers(0, last + 5, 4000)
        ids = rng.integers(0, 2**63, 4000, dtype=np.uint64)
        base, words = _base_generator(KEY), sel.bits // 64
        ref = []
        for n, i in zip(np.minimum(units, last).tolist(), ids.tolist()):
            u = int.from_bytes(base.spawn(i).random_raw(words).astype(">u8").tobytes(), "big")
            ref.append(u < sel.table[n])
        got = sel.select(units, ids, KEY)
        assert got.tolist() == ref
        assert 0 < int(got.sum()) < got.size
    # a threshold equal to U in the leading words: the decision falls to the last word
    sel = calibrate_optimal_selection(epsilon=1.0, delta=1e-6, max_partitions=1)
    words = sel.bits // 64
    ids = np.arange(8, dtype=np.uint64)
    raw = [int.from_bytes(_base_generator(KEY).spawn(int(i)).random_raw(words).astype(">u8").tobytes(), "big") for i in ids]
    table = list(sel.table)
    for j, u in enumerate(raw):
        n = 1 + j
        table[n] = u + (1 if j % 2 else 0)  # released iff U < threshold: odd j only
    hacked = dataclasses.replace(sel, table=tuple(table))
    assert hacked.select(np.arange(1, 9), ids, KEY).tolist() == [j % 2 == 1 for j in range(8)]


def test_cli_partition_selection_optimal(tmp_path):
    df = _groups_of([4, 12], 200)
    src, dst, key = tmp_path / "in.parquet", tmp_path / "out.parquet", tmp_path / "release.key"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), src)
    write_key(key, KEY)
    p = argparse.ArgumentParser()
    cmd.configure(p)
    args = p.parse_args([str(src), str(dst), "--privacy-unit", "pid", "--group-by", "g", "--count",
                         "--max-partitions", "1", "--max-contributions", "1", "--epsilon", "1", "--delta", "1e-3",
                         "--partition-selection", "optimal", "-k", str(key), "--quiet"])
    assert cmd.run(args) == 0
    side = json.loads((tmp_path / "out.parquet.json").read_text())
    assert side["partition_selection"]["method"] == "optimal"
    ref = aggregate(df, privacy_unit="pid", by="g", aggregations={"pid": ["count"]}, bounds=None, max_partitions=1,
                    max_contributions=1, epsilon=1.0, delta=1e-3, partition_selection="optimal", key=KEY)
    out = pq.read_table(dst)
    assert out.column("g").to_pylist() == ref["g"].tolist()
    assert out.column("count").to_pylist() == ref["count"].tolist()
    with pytest.raises(SystemExit):
        p.parse_args([str(src), str(dst), "--privacy-unit", "pid", "--group-by", "g", "--count", "--max-partitions",
                      "1", "--max-contributions", "1", "--epsilon", "1", "--partition-selection", "best"])
