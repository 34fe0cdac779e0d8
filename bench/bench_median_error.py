"""Median error per group at epsilon 1: pydp_core's noisy binary search against OpenDP's exponential-mechanism
quantile (``make_private_quantile``, 0.16) on the same grid of 1025 candidates, same data, same run.

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
