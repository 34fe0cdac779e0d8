"""Vinterbo 2022, Section 4.1 and Figure 2: private mean estimation, Gaussian vs Subbotin_r.

Setup as in the paper (after Balle and Wang 2018): records in the unit l_inf ball v + [-1/2, 1/2]^m
with v ~ N(0, I_m) drawn per database, n = 500 records drawn uniformly, the mean query (l_inf
sensitivity 1/n per coordinate, l_p sensitivity m^(1/p) / n), delta = 1e-4, eps in {0.01, 0.1, 1},
m in {10, 100, 500, 1000, 2000}. Mechanisms:

- Gauss: GaussianMechanism(eps, delta, sqrt(m) / n);
- Sub(r): r from select_subbotin on the grid 1, 1.5, ..., 14 (equation 5), noise
  SubbotinMechanism(r, eps, delta, m^(1/r) / n) (the paper's Theorem 9 pairing; see the note in
  pydp_core.calibration: for r not in {1, 2} that pairing is not a vector guarantee);
- Gauss-t / Sub(r)-t: soft thresholding sign(y) max(0, |y| - t) with t = s sqrt(2 log m) (Gaussian) and
  t = s * mean of 300 maxima of m standard Subbotin_r variates (Subbotin);
- Gauss-JS: James-Stein, (1 - (m - 2) s^2 / ||y||^2) y.

The mean l2 error over the databases is written to a CSV: studies/results/mean_estimation_fig2.csv in the
full-size run (PYDP_BENCH_FULL=1: 100 databases, as in the paper), studies/out/mean_estimation_ci.csv
otherwise (20 databases, a few seconds). The tests below check the paper's qualitative claims.
Run: PYDP_BENCH_FULL=1 pytest studies/study_vinterbo2022_mean_estimation.py --benchmark-disable
"""
from __future__ import annotations

import csv
import functools
import math
import os
from pathlib import Path

import numpy as np

import pydp_core as dp

FULL = os.environ.get("PYDP_BENCH_FULL", "") == "1"
N_DATABASES = 100 if FULL else 20
EPSILONS = (0.01, 0.1, 1.0)
DIMENSIONS = (10, 100, 500, 1000, 2000)
N_RECORDS = 500
DELTA = 1e-4
GRID = np.arange(1.0, 14.0 + 1e-9, 0.5)
SEED = 2022
METHODS = ("Gauss", "Gauss-JS", "Gauss-t", "Sub(r)", "Sub(r)-t")

# The paper's printed choices (Section 4.1): r and scales rounded to two decimals.
PAPER_R = {1.0: (2, 4, 6, 7, 7.5), 0.1: (2.5, 5, 7.5, 8.5, 9), 0.01: (3.5, 7, 10.5, 11.5, 13)}
PAPER_SUB_SCALE = {1.0: (0.02, 0.06, 0.08, 0.09, 0.10), 0.1: (0.16, 0.37, 0.52, 0.58, 0.63),
                   0.01: (1.14, 2.07, 2.63, 2.84, 3.04)}
PAPER_GAUSS_SCALE = {1.0: (0.02, 0.06, 0.14, 0.20, 0.28), 0.1: (0.16, 0.49, 1.10, 1.55, 2.19),
                     0.01: (1.09, 3.45, 7.72, 10.91, 15.44)}


def soft_threshold(y: np.ndarray, t: float) -> np.ndarray:
    return np.sign(y) * np.maximum(0.0, np.abs(y) - t)


def run(n_databases: int = N_DATABASES, seed: int = SEED) -> list[dict]:
    rng = dp.Random(seed)  # seeded: a reproducible simulation, not a release
    rows = []
    for m in DIMENSIONS:
        truths = []
        for _ in range(n_databases):
            v = rng.normal(size=m)
            records = rng.uniform(-0.5, 0.5, size=(N_RECORDS, m))
            records += v
            truths.append(records.mean(axis=0))
        for eps in EPSILONS:
            choice = dp.select_subbotin(epsilon=eps, delta=DELTA, dimension=m, linf_sensitivity=1.0 / N_RECORDS, orders=GRID)
            r = choice.order
            gauss = dp.GaussianMechanism(epsilon=eps, delta=DELTA, sensitivity=math.sqrt(m) / N_RECORDS)
            sub = dp.SubbotinMechanism(r, epsilon=eps, delta=DELTA, sensitivity=m ** (1.0 / r) / N_RECORDS)
            t_gauss = gauss.scale * math.sqrt(2.0 * math.log(m))
            t_sub = sub.scale * float(np.mean(np.max(rng.subbotin(r, size=(300, m)), axis=1)))
            errors = {k: [] for k in METHODS}
            for q in truths:
                yg = gauss.simulate(q, rng=rng)  # a simulation: floating-point noise of exactly `scale`
                ys = sub.simulate(q, rng=rng)
                js = (1.0 - (m - 2) * gauss.scale ** 2 / float(yg @ yg)) * yg
                for name, est in (("Gauss", yg), ("Gauss-JS", js), ("Gauss-t", soft_threshold(yg, t_gauss)),
                                  ("Sub(r)", ys), ("Sub(r)-t", soft_threshold(ys, t_sub))):
                    errors[name].append(float(np.linalg.norm(est - q)))
            row = {"epsilon": eps, "m": m, "r": r, "sub_scale": sub.scale, "gauss_scale": gauss.scale,
                   "sub_mse": choice.mse, "databases": n_databases}
            for name in METHODS:
                row[name] = float(np.mean(errors[name]))
                row[name + " se"] = float(np.std(errors[name], ddof=1) / math.sqrt(n_databases))
            rows.append(row)
    return rows


@functools.cache
def results() -> tuple:
    return tuple(run())


def write_csv(rows, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


def test_mean_estimation_figure2(benchmark):
    rows = benchmark.pedantic(results, rounds=1, iterations=1)
    here = Path(__file__).parent
    path = here / "results" / "mean_estimation_fig2.csv" if FULL else here / "out" / "mean_estimation_ci.csv"
    write_csv(rows, path)
    assert len(rows) == len(EPSILONS) * len(DIMENSIONS)
    for row in rows:
        assert all(np.isfinite(row[k]) and row[k] > 0 for k in METHODS)


def test_selected_orders_and_scales_match_the_paper():
    for row in results():
        i = DIMENSIONS.index(row["m"])
        eps = row["epsilon"]
        assert row["r"] == PAPER_R[eps][i]
        assert round(row["sub_scale"], 2) == PAPER_SUB_SCALE[eps][i]
        assert round(row["gauss_scale"], 2) == PAPER_GAUSS_SCALE[eps][i]


def test_gaussian_error_grows_like_its_scale():
    # E||s Z||_2 is between s m / sqrt(m + 1) and s sqrt(m) (the paper's explanation of the linear growth).
    for row in results():
        m, s = row["m"], row["gauss_scale"]
        assert s * m / math.sqrt(m + 1) - 5 * row["Gauss se"] <= row["Gauss"] <= s * math.sqrt(m) + 5 * row["Gauss se"]


def test_selected_subbotin_beats_gaussian_and_its_denoised_versions():
    # The paper: optimising (5) "consistently produced smaller l2-errors over the Gaussian mechanism
    # and its denoised versions". Read as: the better of Sub(r) and Sub(r)-t beats the best of Gauss,
    # Gauss-JS and Gauss-t (at large scales the thresholded versions are the ones to compare).
    # Reproduced outright for m >= 100. At m = 10 the mechanisms are within standard errors of each
    # other (r = 2 at eps = 1 is the Gaussian itself; at eps = 0.01 James-Stein is ~1 standard error
    # better in the 100-database run), so there the check is "not significantly worse".
    for row in results():
        gauss = {k: row[k] for k in ("Gauss", "Gauss-JS", "Gauss-t")}
        sub = {k: row[k] for k in ("Sub(r)", "Sub(r)-t")}
        bg, bs = min(gauss, key=gauss.get), min(sub, key=sub.get)
        if row["m"] >= 100:
            assert sub[bs] < gauss[bg], row
        else:
            assert sub[bs] <= gauss[bg] + 3 * math.hypot(row[bs + " se"], row[bg + " se"]), row


def test_james_stein_always_improves_the_gaussian():
    # Where the scale is tiny (eps = 1, m = 10: s = 0.02) the shrinkage factor is ~1 - 1e-4 and the two
    # errors agree within their standard errors; elsewhere James-Stein is clearly better.
    for row in results():
        if row["gauss_scale"] >= 0.1:
            assert row["Gauss-JS"] < row["Gauss"], row
        else:
            assert row["Gauss-JS"] <= row["Gauss"] + 3 * row["Gauss se"], row


def test_thresholding_helps_only_at_large_scale():
    # The changeover is near scale 1 (where noise and the spread of v are equal). Check the clear cases.
    for row in results():
        for mech, s in (("Gauss", row["gauss_scale"]), ("Sub(r)", row["sub_scale"])):
            if s >= 2.0:
                assert row[mech + "-t"] < row[mech], (mech, row)
            elif s <= 0.5:
                assert row[mech + "-t"] > row[mech], (mech, row)
