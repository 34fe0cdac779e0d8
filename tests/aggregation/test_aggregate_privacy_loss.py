"""The empirical privacy loss of distinct counts, histograms, quantiles and automatic bounds on neighbouring data
sets (one person added), with controls that the tester must catch: bounding switched off, and a grid that
depends on the data. The per-group tests use many public groups, each with its own added person: the noise
of each group is an independent keyed stream, so the groups' outputs are independent samples of the one-group
release on the neighbouring pair."""
from __future__ import annotations

import numpy as np
import pandas as pd
from support.privacy_loss import estimated_epsilon

import pydp_core.aggregation.local as agg_local
from pydp_core.aggregation import aggregate, aggregate_report
from pydp_core.aggregation import autobounds as ab
from pydp_core.aggregation.bounding import Bounded
from pydp_core.io import generate_key

GROUPS = 3000


def _neighbours(base_values, extra_value, extra_rows=1000):
    """Per group, persons with one row each (``base_values``), and the same plus one person with ``extra_rows``
    rows of new products and ``extra_value``."""
    k = len(base_values)
    d = pd.DataFrame({"pid": np.arange(GROUPS * k), "g": np.repeat(np.arange(GROUPS), k),
                      "prod": np.tile([f"p{j}" for j in range(k)], GROUPS), "x": np.tile(base_values, GROUPS)})
    extra = pd.DataFrame({"pid": 10**7 + np.repeat(np.arange(GROUPS), extra_rows),
                          "g": np.repeat(np.arange(GROUPS), extra_rows),
                          "prod": np.tile([f"new{j}" for j in range(extra_rows)], GROUPS), "x": extra_value})
    return d, pd.concat([d, extra], ignore_index=True)


def _per_group(df, aggs, bounds=None, **kw):
    return aggregate(df, privacy_unit="pid", by="g", aggregations=aggs, bounds=bounds,
                     public_partitions=list(range(GROUPS)), confidence=None, key=generate_key(), **kw)


DISTINCT_THRESHOLDS = np.arange(-4, 18)
DISTINCT_FAMILY = 2 * 2 * 2 * DISTINCT_THRESHOLDS.size  # events x directions x two statistics


def _distinct_losses():
    d, d1 = _neighbours([0.5] * 5, 0.5)
    args = dict(aggs={"prod": ["count_distinct"], "x": [("histogram", [0.0, 1.0, 2.0])]}, max_partitions=1,
                max_contributions=2, epsilon=2.0)
    a, b = _per_group(d, **args), _per_group(d1, **args)
    return [estimated_epsilon(a[c].to_numpy(), b[c].to_numpy(), DISTINCT_THRESHOLDS, DISTINCT_FAMILY)
            for c in ("prod_count_distinct", "x_histogram_0")]


def test_distinct_counts_and_histograms_stay_within_the_guarantee():
    """Each gets epsilon = 1 with t = Kp Kc / 1 = 2; the person adds Kc = 2 to both: a true loss of exactly 1."""
    losses = _distinct_losses()
    assert max(losses) <= 1.0
    assert min(losses) > 0.3  # the test has power


def test_tester_catches_bounding_switched_off(monkeypatch):
    def no_bounding(person, person_hash, group, group_hash, values, **kw):
        pairs = np.unique(np.stack([person, group])[:, group >= 0], axis=1)
        return Bounded(np.flatnonzero(group >= 0), np.bincount(pairs[1], minlength=group_hash.shape[0]))

    monkeypatch.setattr(agg_local, "bound_contributions", no_bounding)
    assert min(_distinct_losses()) > 1.0


MEDIAN_THRESHOLDS = np.arange(0.0, 129.0, 4.0)
MEDIAN_FAMILY = 2 * 2 * MEDIAN_THRESHOLDS.size


def _median_loss(bounds_of):
    d, d1 = _neighbours([1.0, 2.0, 3.0, 4.0, 5.0], 100.0, extra_rows=1)
    a, b = (_per_group(df, {"x": ["median"]}, bounds={"x": bounds_of(df)}, max_partitions=1, max_contributions=1,
                       epsilon=1.0)["x_median"].to_numpy() for df in (d, d1))
    return estimated_epsilon(a, b, MEDIAN_THRESHOLDS, MEDIAN_FAMILY)


def test_median_on_a_public_grid_stays_within_the_guarantee():
    assert _median_loss(lambda df: (0.0, 128.0)) <= 1.0


def test_tester_catches_a_grid_taken_from_the_data():
    assert _median_loss(lambda df: (float(df["x"].min()), float(df["x"].max()))) > 1.0


BOUND_THRESHOLDS = [float(p) for p in ab.grid_points()[120:150]] + [4.5, 6.0, 1000.0]  # 4.5, 6: the control's bounds
BOUND_FAMILY = 2 * 2 * 2 * len(BOUND_THRESHOLDS)


def _bounds_losses(n=1000):
    d = pd.DataFrame({"pid": np.arange(300), "g": 0, "x": 5.0})
    d1 = pd.concat([d, pd.DataFrame({"pid": 999, "g": 0, "x": np.full(1000, 1000.0)})], ignore_index=True)

    def found(df):
        out = [aggregate_report(aggregate(df, privacy_unit="pid", by="g", aggregations={"x": ["sum"]}, bounds="auto",
                                          bounds_share=0.2, max_partitions=1, max_contributions=2, epsilon=10.0,
                                          public_partitions=[0], key=generate_key()))["bounds"]["x"]
               for _ in range(n)]
        return np.array(out)

    a, b = found(d), found(d1)
    return [estimated_epsilon(a[:, j], b[:, j], BOUND_THRESHOLDS, BOUND_FAMILY) for j in (0, 1)]


def test_automatic_bounds_stay_within_their_share():
    """The searches get 0.2 of epsilon = 10: 2, for both bounds together."""
    assert max(_bounds_losses()) <= 2.0


def test_tester_catches_automatic_bounds_on_a_grid_taken_from_the_data(monkeypatch):
    seen: dict = {}

    def cells(values):
        seen["top"] = float(max(np.max(values), 1e-300))
        return np.clip(np.ceil(np.asarray(values) / seen["top"] * ab.WIDTH), 0, ab.WIDTH).astype(np.int64)

    monkeypatch.setattr(ab, "grid_cells", cells)
    monkeypatch.setattr(ab, "grid_points", lambda: seen["top"] * np.arange(ab.WIDTH + 1) / ab.WIDTH)
    assert max(_bounds_losses(300)) > 2.0
