"""The k values of a column with the largest numbers of privacy units, by report-noisy-max peeling with exact
keyed discrete Laplace noise (``docs/aggregate.md``, section 10)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._core import aggregation as _cagg
from .._validation import check_int
from .aggregations import _base_generator, integer_laplace_t
from .bounding import subkey
from .keyuse import key_use
from .local import partial_aggregates, selected_groups
from .report import build_result, release_report
from .spec import aggregate_spec
from .tables import Frame, group_type


def top_k(table: Any, *, column: str, k: int, privacy_unit: str, max_partitions: int, epsilon: float,
          delta: float = 0.0, key: bytes | None = None, candidates: Any = None, ledger: Any = None,
          accountant: Any = None) -> Any:
    """The ``k`` values of ``column`` held by the most privacy units, epsilon-DP (with delta for the selection).

    Each unit keeps at most ``max_partitions`` of its values (chosen by keyed hashes, as in
    :func:`~pydp_core.aggregation.aggregate`), so each value's count of units changes by at most one and all
    move the same way when a unit is added or removed. The values are chosen by ``k`` rounds of
    report-noisy-max (Dwork and Roth 2014, claim 3.9) with exact discrete Laplace noise of parameter
    ``t >= k / epsilon_r`` (Canonne, Kamath and Steinke 2020), fresh keyed noise per round, ties broken by
    the values' keyed hashes; without ``candidates`` the values competing are first selected by Laplace
    thresholding on their counts (Korolova et al. 2009), which takes half the budget and needs ``delta``.

    Parameters
    ----------
    table : pyarrow.Table or pandas.DataFrame
        One row per record.
    column : str
        The column whose values are ranked.
    k : int
        How many values to release (>= 1); fewer when fewer values compete.
    privacy_unit : str
        The column identifying the person.
    max_partitions : int
        The most distinct values of ``column`` one unit counts for (>= 1).
    epsilon : float
        The total epsilon (> 0).
    delta : float, optional
        The delta of the selection of the competing values (> 0 unless ``candidates``).
    key : bytes, optional
        A 32-byte release key; the output is a function of (key, arguments, data). Default: a fresh key.
    candidates : sequence, optional
        Public candidate values: no selection, all of epsilon goes to the ranking.
    ledger, accountant : optional
        As for :func:`~pydp_core.aggregation.aggregate`.

    Returns
    -------
    pyarrow.Table or pandas.DataFrame
        The same kind as ``table``: ``column`` (the values, best first) and ``rank`` (1..k); the guarantee
        in the metadata (:func:`~pydp_core.aggregation.aggregate_report`). The counts are not released.

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or value (``k < 1``, a missing column, ``delta = 0`` without
        ``candidates``), naming the argument.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": range(60), "code": ["a"] * 40 + ["b"] * 15 + ["c"] * 5})
    >>> out = top_k(df, column="code", k=1, privacy_unit="pid", max_partitions=1, epsilon=5.0,
    ...             candidates=["a", "b", "c"], key=b"k" * 32)
    >>> list(out["code"])
    ['a']
    """
    frame = Frame(table)
    use = key_use(key, ledger, accountant)
    kk, spec = top_k_spec(frame.names, column=column, k=k, privacy_unit=privacy_unit, max_partitions=max_partitions,
                          epsilon=epsilon, delta=delta, key=key, candidates=candidates)
    group_cols, partials = partial_aggregates(frame, spec)
    return ranked(spec, kk, (frame.kind, {column: group_type(frame, column)}), group_cols, partials, use)


def top_k_spec(names: Any, *, column: str, k: int, privacy_unit: str, max_partitions: int, epsilon: float,
               delta: float, key: bytes | None, candidates: Any) -> tuple[int, Any]:
    """(k, the checked spec) of a :func:`top_k` call: the units per value of ``column``, as an aggregation."""
    kk = check_int(k, "k", 1, 1 << 20)
    spec = aggregate_spec(names, privacy_unit=privacy_unit, by=column,
                          aggregations={privacy_unit: ["privacy_id_count"]}, bounds=None,
                          max_partitions=max_partitions, max_contributions=1, epsilon=epsilon, delta=delta,
                          noise="laplace", key=key, public_partitions=candidates, confidence=None,
                          kind=f"top_k\x00{kk}")
    return kk, spec


def ranked(spec: Any, kk: int, kind_types: tuple[str, dict], group_cols: list, partials: dict, use: Any) -> Any:
    """The :func:`top_k` result from the partial aggregates of its spec (local, or combined by an engine):
    selection, the ledger record and charge, then ``kk`` rounds of report-noisy-max."""
    column = spec.by[0]
    group_cols, partials, stream_ids = selected_groups(spec, group_cols, partials, use)
    eps_r = spec.budget.plans[0].epsilon
    t = integer_laplace_t(eps_r, kk)  # k rounds, each (1 / t)-DP: k / t <= eps_r
    counts = np.ascontiguousarray(partials["units"], dtype=np.int64)
    ids = np.ascontiguousarray(stream_ids, dtype=np.uint64)
    order = np.argsort(ids, kind="stable")  # the tie-break: smaller keyed hash first
    remaining = np.ones(counts.shape[0], dtype=bool)
    chosen: list[int] = []
    for r in range(min(kk, counts.shape[0])):
        noisy = np.asarray(_cagg.keyed_laplace_integers(_base_generator(subkey(spec.key, f"top_k\x00{r}")), ids,
                                                        counts, t.numerator, t.denominator, 0))
        cand = order[remaining[order]]
        best = int(cand[np.argmax(noisy[cand])])  # argmax: the first maximum in tie-break order
        chosen.append(best)
        remaining[best] = False
    idx = np.asarray(chosen, dtype=np.int64)
    report = release_report(spec, spec.budget.selection, {"top_k": {
        "mechanism": "report-noisy-max peeling", "noise": "discrete_laplace", "k": kk, "rounds": len(chosen),
        "epsilon": eps_r, "t": [t.numerator, t.denominator], "delta": 0.0}})
    report["mechanism"] = "pydp_core.top_k"
    columns = {column: group_cols[0][idx], "rank": np.arange(1, idx.size + 1, dtype=np.int64)}
    return build_result(kind_types[0], columns, kind_types[1], report)
