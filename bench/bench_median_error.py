"""Median error per group at epsilon 1: pydp_core's noisy binary search (its value interpolated inside the final
grid cell from the search's own noisy statistics) against OpenDP's exponential-mechanism
quantile (``make_private_quantile``, 0.16) on the same grid of 1025 candidates, same data, same run; and the
median and 0.9-quantile together (epsilon 1 in total, half each) against PipelineDP's ``PERCENTILE`` (its
quantile tree, Laplace noise, public partitions, the same bounds).

G groups of R rows (one row per person), values N(500, 100) clamped to [0, 1024]; the error is the absolute
difference, in value, between the released median and the exact median of the group, averaged over groups
and seeds. G = PYDP_BENCH_MED_G (default 20), R = PYDP_BENCH_MED_R (default 10^4), S seeds =
PYDP_BENCH_MED_S (default 2). The ratio (pydp_core / OpenDP) is printed; it is a Monte Carlo estimate.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from pydp_core.aggregation import aggregate
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

G = int(os.environ.get("PYDP_BENCH_MED_G", 20))
R = int(os.environ.get("PYDP_BENCH_MED_R", 10_000))
S = int(os.environ.get("PYDP_BENCH_MED_S", 2))


def _data(seed: int):
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(500.0, 100.0, (G, R)), 0.0, 1024.0)
    return x


def _ours(x: np.ndarray, seed: int) -> np.ndarray:
    import pandas as pd

    df = pd.DataFrame({"pid": np.arange(x.size), "g": np.repeat(np.arange(G), R), "x": x.ravel()})
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["median"]}, bounds={"x": (0.0, 1024.0)},
                    max_partitions=1, max_contributions=1, epsilon=1.0, key=seed.to_bytes(4, "little") * 8,
                    public_partitions=list(range(G)), ledger=UNRECORDED)
    return out["x_median"].to_numpy()


def _opendp(x: np.ndarray) -> np.ndarray:
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    candidates = [float(i) for i in range(1025)]
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    make = lambda s: dp.m.make_private_quantile(*space, dp.max_divergence(), candidates, 0.5, s)  # noqa: E731
    scale = dp.binary_search_param(make, d_in=1, d_out=1.0)
    meas = make(scale)
    return np.array([meas(list(row)) for row in x])


def _ours_pair(x: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    df = pd.DataFrame({"pid": np.arange(x.size), "g": np.repeat(np.arange(G), R), "x": x.ravel()})
    out = aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["median", ("quantile", [0.9])]},
                    bounds={"x": (0.0, 1024.0)}, max_partitions=1, max_contributions=1, epsilon=1.0,
                    key=(seed + 1 << 20).to_bytes(4, "little") * 8, public_partitions=list(range(G)), ledger=UNRECORDED)
    return out["x_median"].to_numpy(), out["x_quantile_0.9"].to_numpy()


def _pipeline_dp(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import pipeline_dp  # the peers extra, installed by .ci/run: never skipped

    rows = [(g, i, float(v)) for g in range(G) for i, v in enumerate(x[g])]
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1.0, total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        metrics=[pipeline_dp.Metrics.PERCENTILE(50), pipeline_dp.Metrics.PERCENTILE(90)],
        max_partitions_contributed=1, max_contributions_per_partition=1, min_value=0.0, max_value=1024.0)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: (r[0], r[1]),
                                            partition_extractor=lambda r: r[0], value_extractor=lambda r: r[2])
    result = engine.aggregate(rows, params, extractors, public_partitions=list(range(G)))
    accountant.compute_budgets()
    got = dict(result)
    return (np.array([got[g].percentile_50 for g in range(G)]), np.array([got[g].percentile_90 for g in range(G)]))


def test_median_and_q90_error_vs_pipeline_dp():
    ours, theirs = [], []
    for seed in range(S):
        x = _data(seed)
        truth = np.median(x, axis=1), np.quantile(x, 0.9, axis=1)
        ours.append([np.abs(a - t) for a, t in zip(_ours_pair(x, seed), truth)])
        theirs.append([np.abs(a - t) for a, t in zip(_pipeline_dp(x), truth)])
    for j, name in enumerate(("median", "0.9-quantile")):
        a = float(np.mean([o[j] for o in ours]))
        b = float(np.mean([t[j] for t in theirs]))
        print(f"\n{name} |error| at epsilon 1 (0.5 each), {G} groups x {R} rows x {S} seeds: pydp_core {a:.3f}, "
              f"PipelineDP {b:.3f}, ratio {a / b:.2f} (Monte Carlo estimate)")
        assert np.isfinite(a) and np.isfinite(b)


def test_median_error_vs_opendp():
    ours, theirs = [], []
    for seed in range(S):
        x = _data(seed)
        truth = np.median(x, axis=1)
        ours.append(np.abs(_ours(x, seed) - truth))
        theirs.append(np.abs(_opendp(x) - truth))
    a, b = float(np.mean(ours)), float(np.mean(theirs))
    print(f"\nmedian |error| at epsilon 1, {G} groups x {R} rows x {S} seeds: pydp_core {a:.3f}, OpenDP {b:.3f}, "
          f"ratio {a / b:.2f} (Monte Carlo estimate)")
    assert np.isfinite(a) and np.isfinite(b)
