"""Differentially private group-by aggregation with per-person contribution bounding.

:func:`aggregate` computes, per group of ``by``, counts, sums, means, variances, quantiles, distinct
counts, histograms, vector sums and the number of distinct privacy units (with bounds given or chosen under
DP), releases them with exact discrete noise and, unless the groups are public, selects the groups to
release by Laplace thresholding (or the optimal partition selection). The guarantee is (epsilon, delta)-DP
for adding or removing all the rows of one privacy unit. The proofs (sensitivities, selection, budget
split) are in ``docs/aggregate.md``.

- :mod:`~pydp_core.aggregation.spec`: the checked request (:class:`AggregateSpec`);
- :mod:`~pydp_core.aggregation._budget`: the budget plan (split over the aggregates and the selection);
- :mod:`~pydp_core.aggregation.keyuse`: the key's ledger entry and the accountant's charge;
- :mod:`~pydp_core.aggregation.local`: the local engine (bounding, partial aggregates, release);
- :mod:`~pydp_core.aggregation.report`: the guarantee report attached to the result;
- :mod:`~pydp_core.aggregation.tables`: column access for pyarrow and pandas tables;
- :mod:`~pydp_core.aggregation.bounding`: keyed identity hashes and contribution bounding;
- :mod:`~pydp_core.aggregation.aggregations`: sensitivities, noise, estimators, confidence intervals;
- :mod:`~pydp_core.aggregation.selection`: Laplace thresholding and its delta, and the optimal selection;
- :mod:`~pydp_core.aggregation.quantiles`: the quantile aggregates (noisy binary search on the grid);
- :mod:`~pydp_core.aggregation.autobounds`: ``bounds="auto"`` (the bounds chosen under DP);
- :mod:`~pydp_core.aggregation.histograms`: histograms on public bins;
- :mod:`~pydp_core.aggregation.vectors`: vector sums with l1/l2/linf clipping;
- :mod:`~pydp_core.aggregation.topk`: :func:`top_k` (report-noisy-max peeling);
- :mod:`~pydp_core.aggregation.engines`: the same release on Dask and Spark.
"""
from __future__ import annotations

from .aggregations import AGGREGATES
from .keyuse import KeyUse as KeyUse
from .keyuse import key_use as key_use
from .local import aggregate
from .report import BOUNDING_BIAS as BOUNDING_BIAS
from .report import REPORT_KEY, aggregate_report
from .selection import (
    SELECTION_METHODS,
    calibrate_optimal_selection,
    calibrate_selection,
    optimal_probability,
    selection_delta,
    selection_probability,
)
from .topk import top_k

__all__ = [
    "aggregate",
    "aggregate_report",
    "top_k",
    "AGGREGATES",
    "REPORT_KEY",
    "calibrate_selection",
    "calibrate_optimal_selection",
    "optimal_probability",
    "SELECTION_METHODS",
    "selection_delta",
    "selection_probability",
]
