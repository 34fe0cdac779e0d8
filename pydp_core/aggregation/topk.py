"""The k values of a column with the largest numbers of privacy units, by report-noisy-max peeling with exact
keyed discrete Laplace noise (``docs/aggregate.md``, section 10)."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._core import aggregation as _cagg
from .._validation import check_int
from .aggregations import (
    _base_generator,
    _half_width_steps,
    component_bound,
    component_exponent,
    integer_laplace_t,
    limbs_on_grid,
    split_epsilon,
)
from .bounding import subkey
from .keyuse import key_use
from .local import partial_aggregates, selected_groups
from .report import build_result, release_report
from .spec import aggregate_spec
from .tables import Frame, group_type, with_null_policies


def top_k(table: Any, *, column: str, k: int, privacy_unit: str, max_partitions: int, epsilon: float,
          delta: float = 0.0, key: bytes | None = None, candidates: Any = None, score: str | None = None,
          bounds: tuple[float, float] | None = None, max_contributions: int = 1, release_values: bool = False,
          confidence: float | None = 0.95, nulls: Any = None, ledger: Any = None, accountant: Any = None) -> Any:
    """The ``k`` values of ``column`` held by the most privacy units (or with the largest bounded sums of
    ``score``), epsilon-DP (with delta for the selection).

    Each unit keeps at most ``max_partitions`` of its values (chosen by keyed hashes, as in
    :func:`~pydp_core.aggregation.aggregate`), so each value's count of units changes by at most one and all
    move the same way when a unit is added or removed. The values are chosen by ``k`` rounds of
    report-noisy-max (Dwork and Roth 2014, claim 3.9) with exact discrete Laplace noise of parameter
    ``t >= k / epsilon_r`` (Canonne, Kamath and Steinke 2020), fresh keyed noise per round, ties broken by
    the values' keyed hashes; without ``candidates`` the values competing are first selected by Laplace
    thresholding on their counts (Korolova et al. 2009), which takes half the budget and needs ``delta``.
    With ``score``, a value's statistic is the sum of ``score`` over its kept rows (at most
    ``max_contributions`` per unit), clamped to ``bounds`` with ``0 <= low``, in integer units of the sum's
    release grid: all sums still move the same way, by at most ``Delta`` units, and ``t >= k Delta /
    epsilon_r`` (``docs/aggregate.md``, section 10). With ``release_values``, half of the ranking's share
    releases the winners' statistics with fresh keyed discrete Laplace noise (``t >= min(k, Kp) Delta /
    epsilon_v``).

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
    score : str, optional
        A numeric column: rank by its bounded sum per value instead of the number of units.
    bounds : (float, float), optional
        The clamping bounds of ``score`` (required with it), ``0 <= low < high``.
    max_contributions : int, optional
        With ``score``, the most rows one unit contributes to one value (default 1).
    release_values : bool, optional
        Also release each winner's noisy statistic (column ``count``, or ``<score>_sum``), with half of the
        ranking's share; the report gives its noise.
    confidence : float or None, optional
        With ``release_values``, the level of the ``<value>_ci_low`` / ``<value>_ci_high`` columns (default
        0.95): each holds the winner's true statistic (the bounded count, or the clamped sum) with at least
        this probability, whichever values won, since the values' noise is drawn afresh after the ranking.
        None: no intervals.
    nulls : str or mapping, optional
        With ``score``, what to do with its missing values: as for :func:`~pydp_core.aggregation.aggregate`
        (``"keep"``, refused; ``"drop"``; ``"replace=VALUE"``), part of the release's description.
    ledger, accountant : optional
        As for :func:`~pydp_core.aggregation.aggregate`.

    Returns
    -------
    pyarrow.Table or pandas.DataFrame
        The same kind as ``table``: ``column`` (the values, best first), ``rank`` (1..k) and, with
        ``release_values``, the noisy statistic and its interval; the guarantee in the metadata
        (:func:`~pydp_core.aggregation.aggregate_report`).

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
    table, null_rules = with_null_policies(table, nulls, [score] if isinstance(score, str) else [])
    frame = Frame(table)
    use = key_use(key, ledger, accountant)
    kk, spec = top_k_spec(frame.names, column=column, k=k, privacy_unit=privacy_unit, max_partitions=max_partitions,
                          epsilon=epsilon, delta=delta, key=key, candidates=candidates, score=score, bounds=bounds,
                          max_contributions=max_contributions, release_values=release_values, confidence=confidence,
                          null_rules=null_rules)
    group_cols, partials, _ = partial_aggregates(frame, spec)
    return ranked(spec, kk, (frame.kind, {column: group_type(frame, column)}), group_cols, partials, use,
                  score=score, release_values=release_values)


def top_k_spec(names: Any, *, column: str, k: int, privacy_unit: str, max_partitions: int, epsilon: float,
               delta: float, key: bytes | None, candidates: Any, score: str | None = None,
               bounds: tuple[float, float] | None = None, max_contributions: int = 1,
               release_values: bool = False, confidence: float | None = 0.95,
               null_rules: dict[str, str] | None = None) -> tuple[int, Any]:
    """(k, the checked spec) of a :func:`top_k` call: the units (or the bounded sums of ``score``) per value
    of ``column``, as an aggregation."""
    kk = check_int(k, "k", 1, 1 << 20)
    if not isinstance(release_values, bool):
        raise TypeError(f"release_values must be True or False, not {type(release_values).__name__}")
    if score is None:
        aggs: dict[Any, Any] = {privacy_unit: ["privacy_id_count"]}
        if bounds is not None or max_contributions != 1:
            raise ValueError("bounds and max_contributions apply to top_k by score (score=...)")
    else:
        aggs = {score: ["sum"]}
        if bounds is None:
            raise ValueError("bounds: top_k by score needs the bounds (low, high) of the score column")
        if isinstance(bounds, (tuple, list)) and len(bounds) == 2 and float(bounds[0]) < 0:
            raise ValueError("bounds: top_k by score needs 0 <= low (sums must all move the same way when a unit "
                             f"is added), got {tuple(bounds)!r}")
    kind = f"top_k\x00{kk}" + ("" if score is None and not release_values else f"\x00{score}\x00{release_values}")
    spec = aggregate_spec(names, privacy_unit=privacy_unit, by=column, aggregations=aggs,
                          bounds=None if score is None else {score: bounds}, max_partitions=max_partitions,
                          max_contributions=max_contributions, epsilon=epsilon, delta=delta, noise="laplace", key=key,
                          public_partitions=candidates, confidence=confidence if release_values else None, kind=kind,
                          null_rules=null_rules)
    return kk, spec


def ranked(spec: Any, kk: int, kind_types: tuple[str, dict[Any, Any]], group_cols: list[Any], partials: dict[Any, Any],
           use: Any, *, score: str | None = None, release_values: bool = False) -> Any:
    """The :func:`top_k` result from the partial aggregates of its spec (local, or combined by an engine):
    selection, the ledger record and charge, then ``kk`` rounds of report-noisy-max."""
    column = spec.by[0]
    group_cols, partials, stream_ids = selected_groups(spec, group_cols, partials, use)
    eps_r = spec.budget.plans[0].epsilon
    eps_v = 0.0
    if release_values:
        eps_r, eps_v = split_epsilon(eps_r, [1.0, 1.0])
    counts, step, delta_score = _scores(spec, partials, score)
    t = integer_laplace_t(eps_r, kk * delta_score)  # k rounds, each (Delta / t)-DP: k Delta / t <= eps_r
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
    desc = {"mechanism": "report-noisy-max peeling", "noise": "discrete_laplace", "k": kk, "rounds": len(chosen),
            "epsilon": eps_r, "t": [t.numerator, t.denominator], "delta": 0.0,
            "statistic": "privacy units" if score is None else f"sum of {score} clamped to {list(spec.bounds[score])}",
            "score_sensitivity": delta_score}
    columns = {column: group_cols[0][idx], "rank": np.arange(1, idx.size + 1, dtype=np.int64)}
    if release_values:
        shift = min(kk, spec.max_partitions) * delta_score
        t_v = integer_laplace_t(eps_v, shift)
        values = np.asarray(_cagg.keyed_laplace_integers(_base_generator(subkey(spec.key, "top_k\x00values")),
                                                         ids[idx], counts[idx], t_v.numerator, t_v.denominator, 0))
        name = "count" if score is None else f"{score}_sum"
        columns[name] = values if step is None else np.ldexp(values.astype(np.float64), step)
        desc["values"] = {"column": name, "noise": "discrete_laplace", "epsilon": eps_v, "l1_sensitivity": shift,
                          "t": [t_v.numerator, t_v.denominator], "grid": 1.0 if step is None else math.ldexp(1.0, step)}
        if spec.confidence is not None:
            half = _value_half_width(t_v, 1.0 - spec.confidence, step)
            columns[f"{name}_ci_low"], columns[f"{name}_ci_high"] = columns[name] - half, columns[name] + half
            desc["values"]["ci_half_width"] = half
    report = release_report(spec, spec.budget.selection, {"top_k": desc})
    report["mechanism"] = "pydp_core.top_k"
    return build_result(kind_types[0], columns, kind_types[1], report)


def _value_half_width(t: Fraction, alpha: float, step: int | None) -> int | float:
    """The half-width of a winner's interval at level ``1 - alpha``: ``m`` noise steps with ``P(|Y| > m) <=
    alpha``, plus, for sums, the half step by which the true sum was rounded to the grid ``2**step``."""
    m = _half_width_steps(t, alpha)
    return m if step is None else (m + 0.5) * math.ldexp(1.0, step)


def _scores(spec: Any, partials: dict[Any, Any], score: str | None) -> tuple[np.ndarray, int | None, int]:
    """The integer statistic per value, the exponent of its unit (None: counts) and its sensitivity ``Delta``.

    Sums: the exact sum rounded to the grid ``2**e`` (ties to even), ``e`` 20 bits below the clamped row
    bound ``M``; one unit moves it by at most ``Kc M`` before rounding, so by at most
    ``floor(Kc M / 2**e) + 1`` units after, the same way for every value."""
    if score is None:
        return np.ascontiguousarray(partials["units"], dtype=np.int64), None, 1
    bound = component_bound("sum", spec.bounds[score])
    e = math.frexp(bound)[1] - 20
    on = limbs_on_grid([partials[f"{score}\x00sum\x00{j}"] for j in range(3)], partials["rows"],
                       component_exponent("sum", spec.bounds[score]), e)
    shift = math.floor(Fraction(spec.max_contributions) * Fraction(bound) / Fraction(2) ** e) + 1
    return np.ldexp(on, -e).astype(np.int64), e, shift
