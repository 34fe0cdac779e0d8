"""pydp_core.aggregation with discrete Gaussian noise (zCDP and approximate DP): the noise against its exact
law (chi-square at 1e-6), the calibration (l2 sensitivity sqrt(Kp) Kc, exact rational checks), the budget
split and its composed total, interval coverage, bad budgets, and the empirical privacy test with an
under-noised control."""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import mpmath
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support.stats import ALPHA  # noqa: E402

from pydp_core.accounting.conversions import zcdp_log_delta
from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation import aggregations as aggs
from pydp_core.io import generate_key
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

KEY = bytes(range(32))
mpmath.mp.dps = 50


def dgauss_bins(sigma2: Fraction, edges: np.ndarray) -> np.ndarray:
    """Bin probabilities of N_Z(0, sigma2) for the bins split at ``edges`` (P(Y <= e)): summed in 50 digits,
    or for sigma > 100 the normal cdf at half-integers (Poisson summation: the error is far below exp(-10^4))."""
    s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
    if s2 > 10**4:
        sd = mpmath.sqrt(s2)
        cdf = [mpmath.ncdf((int(e) + mpmath.mpf(0.5)) / sd) for e in edges]
        return np.array([float(p) for p in [cdf[0]] + [cdf[i] - cdf[i - 1] for i in range(1, len(cdf))] + [1 - cdf[-1]]])
    top = int(mpmath.ceil(40 * mpmath.sqrt(s2))) + 2
    w = {y: mpmath.exp(-mpmath.mpf(y * y) / (2 * s2)) for y in range(-top, top + 1)}
    z = mpmath.fsum(w.values())
    cdf = [mpmath.fsum(v for y, v in w.items() if y <= int(e)) / z for e in edges]
    return np.array([float(p) for p in [cdf[0]] + [cdf[i] - cdf[i - 1] for i in range(1, len(cdf))] + [1 - cdf[-1]]])


def chi_square_p(steps: np.ndarray, sigma2: Fraction) -> float:
    sd = math.sqrt(float(sigma2))
    edges = np.unique(np.round(np.linspace(-2.8 * sd, 2.8 * sd, 25)).astype(np.int64))
    probs = dgauss_bins(sigma2, edges)
    counts = np.bincount(np.searchsorted(edges, steps, side="left"), minlength=edges.size + 1)
    expected = probs * steps.size
    assert expected.min() >= 5
    return float(stats.chisquare(counts, expected).pvalue)


EMPTY = pd.DataFrame({"pid": [1, 2], "g": [0, 0], "x": [1.0, 2.0]})
GROUPS = list(range(1, 20_001))


@pytest.mark.parametrize("budget", [dict(rho=0.3), dict(epsilon=2.0, delta=1e-5, noise="gaussian")])
def test_gaussian_noise_of_each_aggregate_has_its_calibrated_law(budget):
    """20000 empty public groups: every released count, unit count and sum is pure discrete Gaussian noise
    with the reported sigma2, and the reported scale and std are those of that law."""
    out = aggregate(EMPTY, privacy_unit="pid", by="g", aggregations={"x": ["count", "sum"], "pid": ["privacy_id_count"]},
                    bounds={"x": (-1.0, 3.0)}, max_partitions=2, max_contributions=3, key=KEY,
                    public_partitions=GROUPS, **budget)
    rep = aggregate_report(out)
    assert rep["budget"]["noise"] == "gaussian"
    for name, comp in (("x_count", "rows"), ("privacy_id_count", "units"), ("x_sum", "sum")):
        c = rep["aggregates"][name]["components"][comp]
        sigma2 = Fraction(c["sigma2"])
        draws = out[name].to_numpy()
        steps = np.rint(draws / c["grid"]).astype(np.int64)
        assert np.array_equal(steps * c["grid"], draws)
        assert chi_square_p(steps, sigma2) > ALPHA, name
        assert c["scale"] == pytest.approx(math.sqrt(float(sigma2)) * c["grid"], rel=1e-15)
        assert abs(c["std"] / c["grid"] - math.sqrt(float(sigma2))) <= 1e-9 * math.sqrt(float(sigma2))
    r = stats.pearsonr(out["x_count"], out["privacy_id_count"])
    assert r.pvalue > ALPHA


@pytest.mark.parametrize("rho, kp, kc", [(0.3, 2, 3), (1e-4, 7, 1), (50.0, 1, 4), (0.01, 1000, 10)])
def test_count_sigma2_is_the_smallest_for_l2_sensitivity_sqrt_kp_kc(rho, kp, kc):
    """sigma2 (a multiple of 2**-20) is the smallest with (sqrt(Kp) Kc)^2 / (2 sigma2) <= rho, exactly."""
    n = aggs.gaussian_integer_noise(rho, kc, kp)
    l2sq = Fraction(kp * kc * kc)
    assert n.l2_squared == kp * kc * kc
    assert l2sq / (2 * n.sigma2) <= Fraction(rho)
    assert l2sq / (2 * (n.sigma2 - Fraction(1, 2**20))) > Fraction(rho)
    assert (n.sigma2 * 2**20).denominator == 1


@pytest.mark.parametrize("rho, sens, kp", [(0.3, 6.0, 2), (1e-3, 0.37, 5), (20.0, 1e6, 1)])
def test_grid_sum_charges_rounding_and_spends_at_most_rho(rho, sens, kp):
    n = aggs.gaussian_grid_noise(rho, sens, kp)
    k = n.shift
    assert k >= sens / n.grid  # the per-group shift in steps covers the sensitivity (plus rounding)
    assert Fraction(kp * k * k) / (2 * n.sigma2) <= Fraction(rho)
    assert Fraction(kp * k * k) / (2 * (n.sigma2 - 1)) > Fraction(rho)
    assert n.rho_achieved <= rho and n.rho_achieved > rho * (1 - 1e-3)


def _run(df, **kw):
    args = dict(privacy_unit="pid", by="g", aggregations={"x": ["count", "sum", "mean"]}, bounds={"x": (0.0, 10.0)},
                max_partitions=2, max_contributions=3, key=KEY, ledger=UNRECORDED)  # several releases per test
    args.update(kw)
    return aggregate(df, **args)


DF = pd.DataFrame({"pid": np.arange(3000) % 700, "g": np.arange(3000) % 9, "x": np.linspace(0.0, 10.0, 3000)})


def test_approx_dp_gaussian_split_and_total():
    """(eps, delta) with selection: selection gets its weight's share of both, the aggregates the largest rho
    whose conversion meets the rest; the composed total stays within the given budget and uses most of it."""
    eps, delta = 3.0, 1e-6
    out = _run(DF, epsilon=eps, delta=delta, noise="gaussian")
    rep = aggregate_report(out)
    b, sel = rep["budget"], rep["partition_selection"]
    assert b["definition"] == "approximate DP" and b["noise"] == "gaussian"
    assert Fraction(b["epsilon"]) <= Fraction(eps) and b["delta"] <= delta
    assert sel["epsilon"] == pytest.approx(eps / 4) and sel["delta"] == pytest.approx(delta / 4)
    eps_g, delta_g = eps - sel["epsilon"], delta - sel["delta"]
    rho = b["rho_aggregates"]
    assert rho == pytest.approx(math.fsum(a["rho_achieved"] for a in rep["aggregates"].values()))
    assert zcdp_log_delta(rho=rho, epsilon=eps_g)[0] <= math.log(delta_g)
    assert zcdp_log_delta(rho=rho * 1.01, epsilon=eps_g)[0] > math.log(delta_g)  # tight: no budget left over
    assert b["delta"] > 0.9 * delta * 0.75


def test_zcdp_total_and_selection():
    out = _run(DF, rho=0.8, delta=1e-7, budget_split={"x_count": 1, "x_sum": 2, "x_mean": 1, "selection": 4})
    rep = aggregate_report(out)
    b = rep["budget"]
    assert b["definition"] == "approximate zCDP" and b["rho"] <= 0.8 and b["rho"] > 0.8 * (1 - 1e-4)
    assert b["delta"] <= 1e-7
    assert rep["aggregates"]["x_sum"]["rho"] == pytest.approx(0.2)
    assert rep["partition_selection"]["epsilon"] ** 2 / 2 <= 0.4
    pub = _run(DF, rho=0.8, public_partitions=list(range(9)))
    pb = aggregate_report(pub)["budget"]
    assert pb["definition"] == "zCDP" and pb["delta"] == 0.0 and pb["rho"] <= 0.8


def test_default_noise_is_the_smaller():
    """Approximate DP without ``noise``: Laplace for one count at a small delta, Gaussian for many
    partitions per person (the l2 sensitivity grows as sqrt(Kp), the l1 as Kp)."""
    one = aggregate_report(_run(DF, epsilon=1.0, delta=1e-6, aggregations={"x": ["count"]}, bounds=None, max_partitions=1))
    many = aggregate_report(_run(DF, epsilon=1.0, delta=1e-6, aggregations={"x": ["count"]}, bounds=None, max_partitions=400,
                                 public_partitions=list(range(9))))
    assert one["budget"]["noise"] == "laplace"
    assert many["budget"]["noise"] == "gaussian"
    lap = aggregate_report(_run(DF, epsilon=1.0, delta=1e-6, aggregations={"x": ["count"]}, bounds=None, max_partitions=400,
                                public_partitions=list(range(9)), noise="laplace"))
    assert many["aggregates"]["x_count"]["components"]["rows"]["std"] < lap["aggregates"]["x_count"]["components"]["rows"]["std"]


@pytest.mark.parametrize("kw, word", [
    (dict(rho=-1.0), "rho"), (dict(rho=0.0), "rho"), (dict(rho=float("nan")), "rho"),
    (dict(epsilon=1.0, rho=1.0), "rho"), (dict(), "epsilon"), (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=1.0, noise="cauchy"), "noise"), (dict(epsilon=1.0, noise="gaussian"), "delta"),
    (dict(rho=1.0, noise="laplace"), "noise"), (dict(rho=1.0, delta=2.0), "delta"),
    (dict(epsilon=1.0, delta=-0.1, noise="gaussian"), "delta"), (dict(rho=1e-30), "rho"),
])
def test_bad_budgets_raise_naming_the_argument(kw, word):
    with pytest.raises((ValueError, TypeError), match=word):
        _run(DF, public_partitions=list(range(9)), **kw)


def test_zcdp_selection_needs_delta():
    with pytest.raises(ValueError, match="delta"):
        _run(DF, rho=1.0)


def test_gaussian_count_interval_is_the_exact_discrete_gaussian_quantile():
    df = pd.DataFrame({"pid": np.arange(200), "g": np.repeat(np.arange(10), 20), "x": np.linspace(0.0, 10.0, 200)})
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["count", "sum", "mean", "variance"]},
                    bounds={"x": (0.0, 10.0)}, max_partitions=1, max_contributions=1, rho=4.0, key=KEY,
                    public_partitions=list(range(10)), confidence=0.9)
    # the count's interval is the exact discrete Gaussian quantile: P(|Y| > m) <= 0.1 < P(|Y| > m - 1)
    c = aggregate_report(out)["aggregates"]["x_count"]["components"]["rows"]
    m = c["ci_half_width"]
    sd = math.sqrt(float(Fraction(c["sigma2"])))
    assert 2 * stats.norm.sf((m + 0.5) / sd) <= 0.1 / 3 * 1.05 and 2 * stats.norm.sf((m - 0.5) / sd) > 0.1 / 3 * 0.95


# -- empirical privacy: P(E) <= e^eps Q(E) + delta on threshold events ---------------------------------------
THRESHOLDS = {"x_count": np.arange(-4, 17), "x_sum": np.arange(-20.0, 85.0, 5.0)}
FAMILY = 2 * 2 * sum(v.size for v in THRESHOLDS.values())
D = pd.DataFrame({"pid": np.arange(5), "g": 0, "x": 5.0})
D_PRIME = pd.concat([D, pd.DataFrame({"pid": np.full(1000, 99), "g": 0, "x": 10.0})], ignore_index=True)
ARGS = dict(privacy_unit="pid", by="g", aggregations={"x": ["count", "sum"]}, bounds={"x": (0.0, 10.0)},
            max_partitions=1, max_contributions=2, rho=1.0, public_partitions=[0], confidence=None)
REF_DELTA = 0.1


def _ref_epsilon(rho: float) -> float:
    """The epsilon that rho-zCDP guarantees at REF_DELTA (bisection on the conversion)."""
    lo, hi = 0.0, 20.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if zcdp_log_delta(rho=rho, epsilon=mid)[0] <= math.log(REF_DELTA) else (mid, hi)
    return hi


def _cp(k, n, a):
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.isf(a, k + 1, n - k) if k < n else 1.0
    return lo, hi


def estimated_delta(a: np.ndarray, b: np.ndarray, thresholds: np.ndarray, eps: float) -> float:
    """A lower confidence bound on max_E P(E) - e^eps Q(E) over {v <= c}, {v >= c} in both directions."""
    level = ALPHA / (2 * FAMILY)
    best = -np.inf
    for c in thresholds:
        for ev in (lambda v: v <= c, lambda v: v >= c):
            ka, kb = int(ev(a).sum()), int(ev(b).sum())
            for (k1, n1), (k2, n2) in (((ka, a.size), (kb, b.size)), ((kb, b.size), (ka, a.size))):
                p_lo, _ = _cp(k1, n1, level)
                _, q_hi = _cp(k2, n2, level)
                best = max(best, p_lo - math.exp(eps) * q_hi)
    return best


def _deltas(n):
    eps = _ref_epsilon(0.5)  # each aggregate gets rho = 1 / 2
    runs = {}
    for name, df in (("a", D), ("b", D_PRIME)):
        rows = [aggregate(df, key=generate_key(), **ARGS) for _ in range(n)]
        runs[name] = {c: np.array([r[c].iloc[0] for r in rows]) for c in THRESHOLDS}
    return {c: estimated_delta(runs["a"][c], runs["b"][c], THRESHOLDS[c], eps) for c in THRESHOLDS}


def test_gaussian_estimated_privacy_stays_within_the_guarantee():
    d = _deltas(2500)
    assert d["x_count"] <= REF_DELTA and d["x_sum"] <= REF_DELTA


def test_gaussian_tester_catches_half_the_noise(monkeypatch):
    real_int, real_grid = aggs.gaussian_integer_noise, aggs.gaussian_grid_noise

    def half_int(rho, sens, kp):
        n = real_int(rho, sens, kp)
        return dataclasses.replace(n, sigma2=n.sigma2 / 4)

    def half_grid(rho, sens, kp):
        n = real_grid(rho, sens, kp)
        return dataclasses.replace(n, sigma2=max(Fraction(1), n.sigma2 / 4))

    monkeypatch.setattr(aggs, "gaussian_integer_noise", half_int)
    monkeypatch.setattr(aggs, "gaussian_grid_noise", half_grid)
    d = _deltas(2500)
    assert d["x_count"] > REF_DELTA and d["x_sum"] > REF_DELTA


def test_default_noise_falls_back_to_laplace_when_gaussian_cannot_be_calibrated():
    """epsilon = 1e-8 at delta = 1e-12 leaves a zCDP block too small for the exact discrete Gaussian sampler
    (sigma^2 = n / 2**20 needs n <= 2**62); Laplace works: the default takes it, and an explicit
    noise='gaussian' names the budget."""
    kw = dict(epsilon=1e-8, delta=1e-12, aggregations={"x": ["count"]}, bounds=None, public_partitions=list(range(9)))
    assert aggregate_report(_run(DF, **kw))["budget"]["noise"] == "laplace"
    with pytest.raises(ValueError, match="epsilon"):
        _run(DF, noise="gaussian", **kw)
