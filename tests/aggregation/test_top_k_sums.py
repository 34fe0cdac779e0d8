"""``top_k`` by bounded sums and with released values: the winner's law against the exact law of
report-noisy-max with discrete Laplace noise on integer sums (mpmath, closed form), a broken control, the
released values against their exact law, keyed reproducibility, and bad input."""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support.stats import ALPHA, chi_square

import pydp_core.aggregation.topk as topk_mod
from pydp_core.aggregation import aggregate_report, top_k
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

ROWS = {"a": 5, "b": 3}  # rows of value 1.0 each, one unit per row


def _table() -> pd.DataFrame:
    codes = [c for c, n in ROWS.items() for _ in range(n)]
    return pd.DataFrame({"pid": np.arange(len(codes)), "code": codes, "x": 1.0})


def _p_difference_above(m: int, t: Fraction) -> mpmath.mpf:
    """P(Y_a - Y_b > m) for m < 0, Y iid discrete Laplace(t): P(D = d) = C q^|d| (|d| + 1 + r), C = ((1 - q) /
    (1 + q))^2, r = 2 q^2 / (1 - q^2), summed in closed form over d <= m."""
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
    c, r, j = ((1 - q) / (1 + q)) ** 2, 2 * q * q / (1 - q * q), -m
    geo = q ** j / (1 - q)
    lin = q ** j * (j * (1 - q) + q) / (1 - q) ** 2  # sum_{i >= j} i q^i
    return 1 - c * (lin + (1 + r) * geo)


def _run(df, key, **kw):
    return top_k(df, column="code", k=1, privacy_unit="pid", max_partitions=1, epsilon=1.0, candidates=["a", "b"],
                 score="x", bounds=(0.0, 1.0), key=key, ledger=UNRECORDED, **kw)


def _wins(n: int) -> tuple[int, Fraction, int]:
    df = _table()
    wins, t, m = 0, None, None
    for i in range(n):
        out = _run(df, i.to_bytes(4, "little") * 8)
        wins += out["code"][0] == "a"
        if t is None:
            d = aggregate_report(out)["aggregates"]["top_k"]
            t = Fraction(*d["t"])
    unit = 2 ** 19  # the grid 2**(e - 20) of the bound 1.0 = 0.5 * 2**1
    m = (ROWS["b"] - ROWS["a"]) * unit
    return wins, t, m


def test_the_winner_follows_the_exact_law():
    wins, t, m = _wins(3000)
    assert t == 2 ** 19 + 1  # Delta = floor(Kc M / g) + 1, k = 1, epsilon = 1
    p = _p_difference_above(m, t)  # a tie has probability below 1e-6 and goes either way
    assert stats.binomtest(wins, 3000, float(p)).pvalue > ALPHA


def test_half_the_noise_is_caught(monkeypatch):
    real = topk_mod.integer_laplace_t
    monkeypatch.setattr(topk_mod, "integer_laplace_t", lambda eps, k: real(eps, k) / 2)
    wins, t, m = _wins(3000)
    p = _p_difference_above(m, 2 * t)  # the law a correct release would follow
    assert stats.binomtest(wins, 3000, float(p)).pvalue < ALPHA


def _dlaplace_cdf(y: int, t: Fraction):
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
    return q ** (-y) / (1 + q) if y < 0 else 1 - q ** (y + 1) / (1 + q)


@pytest.mark.parametrize("score", [None, "x"])
def test_released_values_follow_the_exact_law(score):
    n_values = 4000
    df = pd.DataFrame({"pid": np.arange(3 * n_values), "code": np.repeat(np.arange(n_values), 3), "x": 0.5})
    kw = {} if score is None else {"score": "x", "bounds": (0.0, 1.0)}
    out = top_k(df, column="code", k=n_values, privacy_unit="pid", max_partitions=1, epsilon=1.0,
                candidates=list(range(n_values)), release_values=True, key=b"t" * 32, ledger=UNRECORDED, **kw)
    d = aggregate_report(out)["aggregates"]["top_k"]["values"]
    t = Fraction(*d["t"])
    truth = 3 if score is None else 1.5
    noise = (out[d["column"]].to_numpy() - truth) / d["grid"]
    assert np.array_equal(noise, np.rint(noise)) and sorted(out["code"]) == list(range(n_values))
    edges = [int(k * float(t) / 2) for k in range(-6, 7)]
    probs = np.diff([0.0, *[float(_dlaplace_cdf(e, t)) for e in edges], 1.0])
    stat, crit = chi_square(noise.astype(np.int64), edges, probs)
    assert stat < crit


@pytest.mark.parametrize("score", [None, "x"])
def test_released_values_come_with_intervals_that_hold_the_truth(score):
    n_values, level = 4000, 0.8
    x = 0.3  # not on the sums' grid: the sum's interval must cover its rounding too
    df = pd.DataFrame({"pid": np.arange(3 * n_values), "code": np.repeat(np.arange(n_values), 3), "x": x})
    kw = {} if score is None else {"score": "x", "bounds": (0.0, 1.0)}
    out = top_k(df, column="code", k=n_values, privacy_unit="pid", max_partitions=1, epsilon=1.0,
                candidates=list(range(n_values)), release_values=True, key=b"t" * 32, ledger=UNRECORDED,
                confidence=level, **kw)
    d = aggregate_report(out)["aggregates"]["top_k"]["values"]
    name, truth = d["column"], 3 if score is None else 3 * x
    lo, hi, v = (out[f"{name}{c}"].to_numpy() for c in ("_ci_low", "_ci_high", ""))
    np.testing.assert_array_equal(hi - v, d["ci_half_width"])
    np.testing.assert_array_equal(v - lo, d["ci_half_width"])
    if score is None:
        assert lo.dtype.kind == "i"
    misses = int(((truth < lo) | (truth > hi)).sum())
    assert misses <= stats.binom.ppf(1 - ALPHA, n_values, 1 - level)
    # The half-width is the smallest number of steps at this level (plus half a step for sums).
    t, grid = Fraction(*d["t"]), d["grid"]
    m = d["ci_half_width"] / grid - (0 if score is None else 0.5)
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
    tail = lambda m: 2 * q ** (m + 1) / (1 + q)  # noqa: E731  (P(|Y| > m))
    assert m == int(m) and tail(int(m)) <= 1 - level < tail(int(m) - 1)
    plain = top_k(df.head(30), column="code", k=2, privacy_unit="pid", max_partitions=1, epsilon=1.0,
                  candidates=list(range(10)), release_values=True, key=b"t" * 32, ledger=UNRECORDED,
                  confidence=None, **kw)
    assert f"{name}_ci_low" not in plain.columns


def test_sum_ranking_finds_clear_winners_keyed_and_order_free():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 30, 20000)
    df = pd.DataFrame({"pid": np.arange(codes.size), "code": codes, "x": (codes + 1) * 10.0})
    kw = dict(column="code", k=3, privacy_unit="pid", max_partitions=1, epsilon=3.0, delta=1e-6, score="x",
              bounds=(0.0, 300.0), key=b"u" * 32, ledger=UNRECORDED)
    a = top_k(df, **kw)
    assert list(a["code"]) == [29, 28, 27]
    b = top_k(df.sample(frac=1.0, random_state=2).reset_index(drop=True), **kw)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("kw, exc, words", [
    ({"score": "x", "bounds": (-1.0, 1.0)}, ValueError, "0 <= low"),
    ({"score": "x"}, ValueError, "bounds"),
    ({"bounds": (0.0, 1.0)}, ValueError, "score"),
    ({"release_values": 1}, TypeError, "release_values"),
    ({"score": "code", "bounds": (0.0, 1.0)}, TypeError, "numeric"),
])
def test_bad_arguments(kw, exc, words):
    with pytest.raises(exc, match=words):
        top_k(_table(), column="code", k=1, privacy_unit="pid", max_partitions=1, epsilon=1.0,
              candidates=["a", "b"], **kw)


def test_command_line(tmp_path):
    import json

    from pydp_core.cli import main

    rng = np.random.default_rng(6)
    codes = rng.integers(0, 10, 5000)
    pd.DataFrame({"pid": np.arange(codes.size), "code": codes, "x": codes * 2.0}).to_csv(tmp_path / "in.csv",
                                                                                         index=False)
    common = ["--privacy-unit", "pid", "--max-partitions", "1", "--epsilon", "4", "--delta", "1e-6", "-q"]
    rc = main(["aggregate", str(tmp_path / "in.csv"), str(tmp_path / "a.csv"), "--top-k", "code", "3",
               "--top-k-values", *common])
    assert rc == 0
    a = pd.read_csv(tmp_path / "a.csv")
    assert list(a.columns) == ["code", "rank", "count", "count_ci_low", "count_ci_high"] and len(a) == 3
    assert ((a["count_ci_low"] <= a["count"]) & (a["count"] <= a["count_ci_high"])).all()
    rc = main(["aggregate", str(tmp_path / "in.csv"), str(tmp_path / "b.csv"), "--top-k", "code", "2",
               "--top-k-score", "x", "--bounds", "x", "0", "20", "--max-contributions", "1", *common])
    assert rc == 0
    assert list(pd.read_csv(tmp_path / "b.csv")["code"]) == [9, 8]
    rep = json.loads((tmp_path / "b.csv.json").read_text())
    assert rep["aggregates"]["top_k"]["statistic"].startswith("sum of x")
    assert main(["aggregate", str(tmp_path / "in.csv"), str(tmp_path / "c.csv"), "--top-k", "code", "2",
                 "--group-by", "code", *common]) != 0
