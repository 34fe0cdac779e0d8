"""``top_k``: the law of the winner against the exact law of report-noisy-max with discrete Laplace noise
(mpmath), a broken control, keyed reproducibility, selection, and bad input."""
from __future__ import annotations

import mpmath
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support.stats import ALPHA

import pydp_core
import pydp_core.aggregation.topk as topk_mod
from pydp_core.aggregation import aggregate_report, top_k
from pydp_core.aggregation.local import group_hashes
from pydp_core.aggregation.spec import aggregate_spec
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

COUNTS = {"a": 5, "b": 3}


def _table() -> pd.DataFrame:
    codes = [c for c, n in COUNTS.items() for _ in range(n)]
    return pd.DataFrame({"pid": np.arange(len(codes)), "code": codes})


def _p_a_wins(t: mpmath.mpf, a_first: bool) -> mpmath.mpf:
    """P(a is reported) for counts 5 and 3 with iid discrete Laplace(t) noise, ties to the first in order."""
    q = mpmath.exp(-1 / t)
    p = lambda y: (1 - q) / (1 + q) * q ** abs(y)  # noqa: E731
    m = COUNTS["b"] - COUNTS["a"]  # a wins iff Y_a - Y_b > m (or = m and a first)
    span = int(60 * t) + 10
    win = mpmath.mpf(0)
    for ya in range(-span, span + 1):
        for yb in range(-span, span + 1):
            z = ya - yb
            if z > m or (z == m and a_first):
                win += p(ya) * p(yb)
    return win


def _a_first(key: bytes) -> bool:
    spec = aggregate_spec(["pid", "code"], privacy_unit="pid", by="code", aggregations={"pid": ["privacy_id_count"]},
                          bounds=None, max_partitions=1, max_contributions=1, epsilon=1.0, noise="laplace", key=key,
                          public_partitions=["a", "b"], confidence=None, kind="top_k\x001")
    h = group_hashes([np.array(["a", "b"], dtype=object)], spec.key) >> np.uint64(1)
    return bool(h[0] < h[1])


def _winners(n: int) -> dict[bool, list[bool]]:
    df = _table()
    out: dict[bool, list[bool]] = {True: [], False: []}
    for i in range(n):
        key = i.to_bytes(4, "little") * 8
        res = top_k(df, column="code", k=1, privacy_unit="pid", max_partitions=1, epsilon=1.0,
                    candidates=["a", "b"], key=key, ledger=UNRECORDED)
        out[_a_first(key)].append(res["code"][0] == "a")
    return out


def _p_values(winners: dict[bool, list[bool]], t: mpmath.mpf) -> list[float]:
    return [stats.binomtest(sum(w), len(w), float(_p_a_wins(t, first))).pvalue for first, w in winners.items() if w]


def test_the_winner_follows_the_exact_law():
    winners = _winners(3000)
    assert all(p > ALPHA for p in _p_values(winners, mpmath.mpf(1)))  # k = 1, epsilon = 1: t = 1


def test_half_the_noise_is_caught(monkeypatch):
    real = topk_mod.integer_laplace_t
    monkeypatch.setattr(topk_mod, "integer_laplace_t", lambda eps, k: real(eps, k) / 2)
    winners = _winners(3000)
    assert min(_p_values(winners, mpmath.mpf(1))) < ALPHA


def test_clear_winners_keyed_and_order_free():
    codes = np.repeat(np.arange(20), np.arange(20) * 50 + 1)
    df = pd.DataFrame({"pid": np.arange(codes.size), "code": codes}).sample(frac=1.0, random_state=1)
    out = pydp_core.top_k(df, column="code", k=3, privacy_unit="pid", max_partitions=1, epsilon=3.0, delta=1e-6,
                          key=b"t" * 32, ledger=UNRECORDED)
    assert list(out["code"]) == [19, 18, 17] and list(out["rank"]) == [1, 2, 3]
    again = top_k(df.sample(frac=1.0, random_state=2), column="code", k=3, privacy_unit="pid", max_partitions=1,
                  epsilon=3.0, delta=1e-6, key=b"t" * 32, ledger=UNRECORDED)
    pd.testing.assert_frame_equal(out.reset_index(drop=True), again.reset_index(drop=True))
    rep = aggregate_report(out)
    assert rep["mechanism"] == "pydp_core.top_k" and rep["budget"]["epsilon"] <= 3.0


@pytest.mark.parametrize("change, err, match", [
    ({"k": 0}, ValueError, "k"),
    ({"k": 1.5}, TypeError, "k"),
    ({"column": "nope"}, ValueError, "column"),
    ({"candidates": None}, ValueError, "delta"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
])
def test_bad_arguments(change, err, match):
    args = dict(column="code", k=1, privacy_unit="pid", max_partitions=1, epsilon=1.0, candidates=["a", "b"])
    args.update(change)
    with pytest.raises(err, match=match):
        top_k(_table(), **args)


