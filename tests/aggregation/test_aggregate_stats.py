"""pydp_core.aggregation, statistically (false-alarm rate 1e-6 everywhere): the noise of each aggregate
against its exact law, the selection probability against its formula, the coverage of the confidence
intervals, and an empirical privacy test in the spirit of Google's stochastic DP tester, with
under-noised controls that it must catch."""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support.privacy_loss import estimated_epsilon
from support.stats import ALPHA  # noqa: E402

import pydp_core.aggregation.local as agg_local
from pydp_core.aggregation import aggregate, aggregate_report, calibrate_selection, selection_delta, selection_probability
from pydp_core.aggregation import aggregations as aggs
from pydp_core.aggregation.bounding import Bounded
from pydp_core.io import generate_key

KEY = bytes(range(32))


def dlap_pmf_bins(t: Fraction, edges: np.ndarray) -> np.ndarray:
    """P(Y <= e) at the edges for Y ~ discrete Laplace(t), 50 digits, as bin probabilities."""
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)

    def cdf(m):
        return q ** (-m) / (1 + q) if m < 0 else 1 - q ** (m + 1) / (1 + q)

    c = [cdf(int(e)) for e in edges]
    return np.array([float(p) for p in [c[0]] + [c[i] - c[i - 1] for i in range(1, len(c))] + [1 - c[-1]]])


def chi_square_p(draws: np.ndarray, t: Fraction, nbins: int = 30) -> float:
    scale = float(t)
    edges = np.unique(np.round(np.linspace(-3.5 * scale, 3.5 * scale, nbins)).astype(np.int64))
    probs = dlap_pmf_bins(t, edges)
    counts = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=edges.size + 1)
    expected = probs * draws.size
    assert expected.min() >= 5
    return float(stats.chisquare(counts, expected).pvalue)


# -- noise distributions ------------------------------------------------------------------------------------
def test_noise_of_each_aggregate_has_its_calibrated_law():
    """20000 empty public groups: every released count, unit count and sum is pure noise."""
    groups = list(range(1, 20_001))
    df = pd.DataFrame({"pid": [1, 2], "g": [0, 0], "x": [1.0, 2.0]})
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["count", "sum"], "pid": ["privacy_id_count"]},
                    bounds={"x": (-1.0, 3.0)}, max_partitions=2, max_contributions=3, epsilon=1.5, key=KEY,
                    public_partitions=groups)
    rep = aggregate_report(out)["aggregates"]
    for name, comp in (("x_count", "rows"), ("privacy_id_count", "units"), ("x_sum", "sum")):
        c = rep[name]["components"][comp]
        t = Fraction(c["t"])
        draws = out[name].to_numpy()
        steps = np.rint(draws / c["grid"]).astype(np.int64)
        assert np.array_equal(steps * c["grid"], draws)  # on the grid (integers for counts)
        assert chi_square_p(steps, t) > ALPHA, name
    assert Fraction(rep["x_count"]["components"]["rows"]["t"]) == aggs.integer_laplace_t(0.5, 6)
    # independent across aggregates: the count and unit-count noises are uncorrelated
    r = stats.pearsonr(out["x_count"], out["privacy_id_count"])
    assert r.pvalue > ALPHA


# -- partition selection ------------------------------------------------------------------------------------
@pytest.mark.parametrize("t, tau, kp", [(Fraction(1), 15, 1), (Fraction(3), 20, 3), (Fraction(1000, 3), 40, 7), (Fraction(1, 2), 700, 2)])
def test_selection_delta_against_mpmath(t, tau, kp):
    q = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
    p = q ** (tau - 1) / (1 + q)
    ref = 1 - (1 - p) ** kp
    assert abs(selection_delta(threshold=tau, t=t, max_partitions=kp) - ref) <= 1e-12 * ref


@pytest.mark.parametrize("eps, delta, kp", [(1.0, 1e-6, 1), (0.3, 1e-10, 4), (5.0, 1e-300, 2), (1.0, 0.5, 10)])
def test_selection_threshold_is_the_smallest_meeting_delta(eps, delta, kp):
    sel = calibrate_selection(epsilon=eps, delta=delta, max_partitions=kp)
    assert sel.noise.l1_sensitivity == kp and Fraction(kp) / sel.noise.t <= Fraction(eps)
    assert sel.delta_achieved <= delta
    if sel.threshold > 2:
        assert selection_delta(threshold=sel.threshold - 1, t=sel.noise.t, max_partitions=kp) > delta * (1 - 1e-12)


def test_selection_probability_matches_its_formula():
    """3000 groups of exactly n units for n around the threshold: released fractions vs P(n + Y >= tau)."""
    kp, eps_sel, delta = 1, 1.0, 1e-6
    sel = calibrate_selection(epsilon=eps_sel, delta=delta, max_partitions=kp)
    tau, reps = sel.threshold, 3000
    ns = [tau - 4, tau - 1, tau, tau + 2]
    frames, pid = [], 0
    for i, n in enumerate(ns):
        groups = np.repeat(np.arange(reps) + i * reps, n)
        frames.append(pd.DataFrame({"pid": np.arange(pid, pid + groups.size), "g": groups, "x": 1.0}))
        pid += groups.size
    df = pd.concat(frames, ignore_index=True)
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"pid": ["privacy_id_count"]}, bounds=None,
                    max_partitions=kp, max_contributions=1, epsilon=2 * eps_sel, delta=delta, key=KEY)
    assert aggregate_report(out)["partition_selection"]["threshold"] == tau
    released = out["g"].to_numpy() // reps
    for i, n in enumerate(ns):
        k = int(np.count_nonzero(released == i))
        p = float(selection_probability(n, threshold=tau, t=sel.noise.t))
        assert stats.binomtest(k, reps, p).pvalue > ALPHA, (n, k, p)


# -- confidence intervals -----------------------------------------------------------------------------------
@pytest.mark.parametrize("budget", [{"epsilon": 8.0}, {"rho": 4.0}], ids=["laplace", "gaussian"])
def test_confidence_intervals_cover_the_bounded_truth(budget):
    """2000 public groups of 30 persons (one row each, so nothing is dropped): the 90% intervals of count,
    sum, mean and variance miss the clamped truth no more often than 10% (binomial bound at 1e-6), under
    pure DP (Laplace noise) and zCDP (discrete Gaussian noise)."""
    rng = np.random.default_rng(5)
    g, size = 2000, 30
    df = pd.DataFrame({"pid": np.arange(g * size), "g": np.repeat(np.arange(g), size),
                       "x": rng.normal(4.0, 3.0, g * size)})
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["count", "sum", "mean", "variance"]},
                    bounds={"x": (0.0, 10.0)}, max_partitions=1, max_contributions=1, key=KEY,
                    public_partitions=list(range(g)), confidence=0.9, **budget)
    clamped = df.assign(x=df.x.clip(0, 10)).groupby("g").x
    truth = {"count": clamped.count(), "sum": clamped.sum(), "mean": clamped.mean(), "variance": clamped.var(ddof=0)}
    limit = stats.binom.isf(ALPHA, g, 0.1)
    for name, tv in truth.items():
        col = f"x_{name}"
        miss = (tv.to_numpy() < out[f"{col}_ci_low"].to_numpy()) | (tv.to_numpy() > out[f"{col}_ci_high"].to_numpy())
        assert miss.sum() <= limit, (name, miss.sum())
        assert (out[f"{col}_ci_low"] <= out[col]).all() and (out[col] <= out[f"{col}_ci_high"]).all()


# -- empirical privacy (stochastic tester) ------------------------------------------------------------------
THRESHOLDS = {"x_count": np.arange(0, 13), "x_sum": np.arange(0.0, 75.0, 5.0)}
FAMILY = 2 * 2 * sum(v.size for v in THRESHOLDS.values())  # (<=, >=) x (D vs D', D' vs D) x thresholds
D = pd.DataFrame({"pid": np.arange(5), "g": 0, "x": 5.0})
D_PRIME = pd.concat([D, pd.DataFrame({"pid": np.full(1000, 99), "g": 0, "x": 10.0})], ignore_index=True)
ARGS = dict(privacy_unit="pid", by="g", aggregations={"x": ["count", "sum"]}, bounds={"x": (0.0, 10.0)},
            max_partitions=1, max_contributions=2, epsilon=2.0, public_partitions=[0], confidence=None)


def _samples(df, n):
    rows = [aggregate(df, key=generate_key(), **ARGS) for _ in range(n)]
    return {c: np.array([r[c].iloc[0] for r in rows]) for c in THRESHOLDS}


def _losses(n):
    a, b = _samples(D, n), _samples(D_PRIME, n)
    return {c: estimated_epsilon(a[c], b[c], THRESHOLDS[c], FAMILY) for c in THRESHOLDS}


def test_estimated_privacy_loss_stays_within_the_guarantee():
    """Each aggregate gets epsilon = 1 (half of 2); the count's loss is exactly 1 on {v <= 5}."""
    loss = _losses(2000)
    assert loss["x_count"] <= 1.0 and loss["x_sum"] <= 1.0
    assert loss["x_count"] > 0.3  # the test has power: the true loss of the count is 1 (estimates near 0.63)


def test_tester_catches_half_the_noise(monkeypatch):
    real_int, real_grid = aggs.integer_noise, aggs.grid_noise

    def half_int(eps, sens, kp):
        n = real_int(eps, sens, kp)
        return dataclasses.replace(n, t=n.t / 2)

    def half_grid(eps, sens, kp):
        n = real_grid(eps, sens, kp)
        return dataclasses.replace(n, plan=dataclasses.replace(n.plan, parameter=n.plan.parameter / 2))

    monkeypatch.setattr(aggs, "integer_noise", half_int)
    monkeypatch.setattr(aggs, "grid_noise", half_grid)
    loss = _losses(2000)
    assert loss["x_count"] > 1.0 and loss["x_sum"] > 1.0


def test_tester_catches_bounding_switched_off(monkeypatch):
    def no_bounding(person, person_hash, group, group_hash, values, **kw):
        pairs = np.unique(np.stack([person, group])[:, group >= 0], axis=1)
        return Bounded(np.flatnonzero(group >= 0), np.bincount(pairs[1], minlength=group_hash.shape[0]))

    monkeypatch.setattr(agg_local, "bound_contributions", no_bounding)
    loss = _losses(500)
    assert loss["x_count"] > 1.0 and loss["x_sum"] > 1.0
