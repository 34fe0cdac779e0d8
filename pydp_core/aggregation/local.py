"""The local engine: bounding and exact partial aggregates of a table, and their release (selection, keyed
noise, estimates). The Dask and Spark engines (:mod:`~pydp_core.aggregation.engines`) reuse both halves."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import require_extra
from .aggregations import component_exponent, component_limb_sums, estimate, limbs_on_grid
from .autobounds import GRID_RANGE, grid_counts
from .bounding import bound_contributions, combine_hashes, factorize, identity_hashes, subkey, unique_values
from .histograms import bin_counts
from .keyuse import KeyUse, key_use, record_release, record_search
from .quantiles import QuantilePlan, cell_counts
from .report import REPORT_KEY, build_result, describe_plan, release_report, to_polars
from .spec import AggregateSpec, aggregate_spec, output_name, public_groups
from .tables import Frame, group_type, is_polars, value_columns, with_null_policies
from .vectors import VectorPlan, clipped_units, row_hashes, unit_sums, vector_values


def aggregate(
    table: Any,
    *,
    privacy_unit: str,
    by: str | Sequence[str],
    aggregations: Mapping[str, Sequence[str] | str],
    bounds: Mapping[str, tuple[float, float]] | None,
    max_partitions: int,
    max_contributions: int,
    epsilon: float | None = None,
    delta: float = 0.0,
    rho: float | None = None,
    noise: str | None = None,
    key: bytes | None = None,
    public_partitions: Any = None,
    budget_split: Mapping[str, float] | None = None,
    confidence: float | None = 0.95,
    partition_selection: str = "threshold",
    bounds_share: float | None = None,
    nulls: str | Mapping[str, str] | None = None,
    ledger: Any = None,
    accountant: Any = None,
) -> Any:
    """Differentially private group-by aggregation of a table whose rows belong to privacy units.

    Each privacy unit (person) keeps at most ``max_partitions`` groups and, in each, at most
    ``max_contributions`` rows, chosen uniformly at random by keyed hashes; values are clamped to
    ``bounds``. Every aggregate is released with exact discrete Laplace or discrete Gaussian noise
    (Canonne, Kamath and Steinke 2020) calibrated to its sensitivity under these limits (``docs/aggregate.md``); groups
    are released by Laplace thresholding on their number of units (Korolova et al. 2009; Wilson et al.
    2020) or by the optimal partition selection (Desfontaines et al. 2022), or all of ``public_partitions``
    (empty ones too) when the groups are public. The result is (epsilon, delta)-DP, or rho-zCDP
    (delta-approximate with selection), for adding or removing all the rows of one privacy unit.

    The total budget is ``epsilon`` (with ``delta``) or ``rho``, never both. Pure DP (``delta = 0``):
    discrete Laplace. zCDP (``rho``): discrete Gaussian; partition selection then needs ``delta`` and is
    ``delta``-approximately ``rho_s``-zCDP (thresholding at ``epsilon_s = sqrt(2 rho_s)``, or the optimal
    selection at ``(e, delta / Kp)`` per group with ``Kp e^2 / 2 <= rho_s``). Approximate DP
    (``delta > 0``): ``noise="laplace"`` spends delta on selection only; ``noise="gaussian"`` gives
    selection its weight's share of epsilon and delta, and the Gaussian aggregates the largest zCDP budget
    whose (epsilon, delta) conversion fits the rest; the default picks the family whose noise standard
    deviations have the smaller geometric mean.

    Parameters
    ----------
    table : pyarrow.Table, pandas.DataFrame, polars.DataFrame or polars.LazyFrame
        One row per record; nulls are refused in the columns used (but see ``nulls``). A polars DataFrame goes through
        pyarrow (``to_arrow``/``from_arrow``, zero-copy where the types allow; extra ``polars``) and gives
        the same groups and values as the pyarrow Table for the same key; a LazyFrame is collected first
        and the result is a LazyFrame. Spark and Dask DataFrames: :func:`pydp_core.spark.aggregate`,
        :func:`pydp_core.dask.aggregate`.
    privacy_unit : str
        The column identifying the person (privacy unit).
    by : str or sequence of str
        The group-by columns.
    aggregations : mapping
        Column -> list of ``"count"`` (rows), ``"sum"``, ``"mean"``, ``"variance"``; the
        ``privacy_unit`` column may map to ``"privacy_id_count"`` (distinct units per group). Output columns
        are named ``<column>_<aggregate>``, except the row count and the unit count asked of the
        ``privacy_unit`` column: ``count`` and ``privacy_id_count``. Quantiles: ``"median"``, ``"min"``,
        ``"max"`` and ``("quantile", [levels])`` (levels in [0, 1]; output ``<column>_quantile_<level>``) by a
        noisy binary search on a grid of 1024 cells between the bounds (``docs/aggregate.md``, section 9;
        pure DP, no interval columns). ``"count_distinct"``: the number of distinct values of the column per
        group (any column type; one person changes it by at most ``max_contributions`` per group).
        ``("histogram", [e0, ..., em])``: the counts of the column's values in the public bins
        ``[e_i, e_{i+1})`` (the last closed; values clamped to ``[e0, em]``), output ``<column>_histogram_<i>``,
        the whole histogram at the cost of one count (section 12). ``("vector_sum", norm, bound, size)``: the
        sum per group of a column of length-``size`` vectors, each clipped to ``bound`` in the ``"l1"``,
        ``"l2"`` or ``"linf"`` norm (section 13). All of them also run on Spark and Dask, ``bounds="auto"``
        too, bit for bit the same release for one key. Contribution bounding drops rows, so
        counts and sums are biased downwards when persons exceed the limits; the interval columns cover the
        noise only, not that bias.
    bounds : mapping, "auto" or None
        Column -> ``(low, high)`` with low < high, or ``"auto"``, for every column with a sum, mean, variance
        or quantile; ``"auto"`` alone: every such column. An ``"auto"`` column's bounds are chosen under DP
        from the kept rows with ``bounds_share`` of the budget (two noisy binary searches on signed powers of
        two, section 11); the report's ``bounds_search`` gives them and their cost.
    max_partitions : int
        The most groups one unit contributes to (>= 1).
    max_contributions : int
        The most rows one unit contributes to one group (>= 1).
    epsilon : float, optional
        The total epsilon (> 0), split over the aggregates and the selection (``budget_split``); required
        unless ``rho`` is given.
    delta : float, optional
        The total delta (default 0): partition selection needs delta > 0 unless ``public_partitions``;
        Gaussian noise under approximate DP needs it too.
    rho : float, optional
        The total zCDP budget (> 0) instead of ``epsilon``: discrete Gaussian noise for every aggregate.
    noise : {"laplace", "gaussian"}, optional
        The noise of the aggregates (see above); default: Laplace for pure DP, Gaussian for zCDP, the
        smaller noise for approximate DP.
    key : bytes, optional
        A 32-byte release key (:func:`pydp_core.io.generate_key`). The randomness is derived from the key and
        the release's description (every argument that changes the output law), so the output is a function
        of (key, description, data) only: row order and partitioning do not matter, and the same call
        reproduces it. The use is recorded in the key's ledger before any noise is drawn: another
        aggregation under the key (other parameters, or other data) is refused with
        :class:`~pydp_core.io.KeyReuseError`; use a new key, or a :class:`pydp_core.Session`. Default: a
        fresh key, used once.
    public_partitions : sequence, DataFrame or Table, optional
        The groups to release (values, or tuples when ``by`` has several columns): no selection, every
        listed group is in the output, rows of other groups are dropped.
    budget_split : mapping, optional
        Weight per aggregate (``"<column>_<aggregate>"``) and ``"selection"``; default equal weights.
    confidence : float or None, optional
        The level of the ``<name>_ci_low`` / ``<name>_ci_high`` columns (default 0.95); None: no intervals.
    partition_selection : {"threshold", "optimal"}, optional
        How groups are selected without ``public_partitions``: Laplace thresholding (default), or the
        optimal mechanism of Desfontaines et al. (2022), which releases each group with the largest
        probability ``pi(n)`` that (epsilon_s / Kp, delta_s / Kp)-DP allows for its ``n`` units
        (:func:`~pydp_core.aggregation.selection.optimal_probability`); with ``rho``, each group gets
        ``delta_s / Kp`` and the largest ``e`` with ``Kp e^2 / 2 <= rho_s``.

    bounds_share : float, optional
        The share, in (0, 1), of the total budget (epsilon, or rho) spent on the ``"auto"`` bounds, split
        evenly over their columns (default 0.1); the whole given budget is charged to ``accountant`` before
        the searches.
    nulls : str or mapping, optional
        What to do with the missing values (a pyarrow or polars null; in pandas also NaN) of the aggregated
        columns (those of ``aggregations`` other than ``privacy_unit``): ``"keep"`` (the default: they are
        refused), ``"drop"`` (a row with a missing value in the column is left out before the contributions
        are bounded, which changes no sensitivity) or ``"replace=VALUE"`` (the value, clamped like the others);
        one policy for every such column, or ``{column: policy}`` (:mod:`pydp_core.io.nulls`). A policy other
        than the default is part of the release's description (another policy is another release under the
        key) and of the report (``nulls``). The Spark and Dask engines apply it in each partition, to the same
        release (on Spark a missing value is an SQL NULL; NaN stays refused).
    ledger : None, path or KeyLedger, optional
        The use record of ``key`` (:mod:`pydp_core.io.ledger`): None the key's ledger in
        :func:`~pydp_core.io.ledger.state_dir`; a path (the command line uses ``<key file>.ledger``) or a
        :class:`~pydp_core.io.KeyLedger`, each consulted together with the key's state-directory ledger.
        There is no switch that skips the record.
    accountant : Accountant, optional
        Charged with the release's composed guarantee (the report's ``budget``) before any noise is drawn;
        an exact repeat is not charged again.

    Returns
    -------
    pyarrow.Table, pandas.DataFrame, polars.DataFrame or polars.LazyFrame
        The same kind as ``table``: the ``by`` columns, then per aggregate ``<column>_<aggregate>`` and its
        interval columns. Counts are integers. The guarantee (mechanisms, per-aggregate epsilon, noise
        scale and std, total budget, library version; never the key) is attached as schema metadata /
        ``attrs`` (pandas and polars) under :data:`REPORT_KEY` (read it with
        :func:`~pydp_core.aggregation.aggregate_report`). Groups are sorted by
        their values (public partitions: in the given order).

    Raises
    ------
    TypeError
        For a table of another kind, non-numeric value columns, or arguments of the wrong type.
    ValueError
        For missing columns, nulls or NaN, bounds with low >= high, limits below 1, epsilon <= 0, rho <= 0,
        both or neither of epsilon and rho, delta = 0 without public partitions or with Gaussian noise under
        epsilon, an unknown ``noise`` or ``partition_selection``, a selection share too small, or a
        ``budget_split`` that does not cover the aggregates.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": [1, 1, 2, 3], "city": ["a", "b", "a", "a"], "x": [1.0, 2.0, 3.0, 4.0]})
    >>> out = aggregate(df, privacy_unit="pid", by="city", aggregations={"x": ["count", "sum"]},
    ...                 bounds={"x": (0, 5)}, max_partitions=1, max_contributions=1, epsilon=1.0,
    ...                 public_partitions=["a", "b"])
    >>> list(out.columns)[:3]
    ['city', 'x_count', 'x_count_ci_low']
    """
    lazy = type(table).__module__.startswith("polars") and type(table).__name__ == "LazyFrame"
    if lazy:  # a polars query: run here (the bounding needs every row of a person); the result is lazy again
        table = table.collect()
    polars = is_polars(table)
    if polars:  # through pyarrow: zero-copy for numeric columns without nulls
        require_extra("polars", "polars", "pyarrow")
        table = table.to_arrow()
        if is_polars(public_partitions):
            public_partitions = public_partitions.to_arrow()
    table, null_rules = with_null_policies(table, nulls, value_columns(aggregations, privacy_unit))
    frame = Frame(table)
    use = key_use(key, ledger, accountant)
    spec = aggregate_spec(frame.names, privacy_unit=privacy_unit, by=by, aggregations=aggregations, bounds=bounds,
                 max_partitions=max_partitions, max_contributions=max_contributions, epsilon=epsilon, delta=delta,
                 rho=rho, noise=noise, key=key, public_partitions=public_partitions, budget_split=budget_split,
                 confidence=confidence, partition_selection=partition_selection, bounds_share=bounds_share,
                 null_rules=null_rules)
    spec, group_cols, partials = bounded_partials(frame, spec, use)
    out = release_partials(spec, frame, group_cols, partials, use)
    if not polars:
        return out
    result = to_polars(out)
    if lazy:
        attrs, result = result.attrs, result.lazy()
        result.attrs = attrs
    return result


def partial_aggregates(frame: Any, spec: AggregateSpec) -> tuple[list[np.ndarray], dict[str, np.ndarray],
                                                                dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Bounding and exact partial aggregates of one table (or one engine partition holding whole persons).

    Returns the group values (one array per ``by`` column; the groups with rows, within the public
    partitions if given), int64 partials per group (:meth:`AggregateSpec.partial_names`, the cell, bin and
    coordinate counts) and, per ``count_distinct`` column, its distinct kept values per group as the pair
    (group index into the groups returned, value), sorted by group. Partials of partitions that split the
    persons disjointly add up to the partials of the whole table exactly, and the union of their distinct
    (group, value) pairs is the whole table's. A spec with ``bounds="auto"`` must carry the bounds found
    (:func:`grid_partials` gives what the search needs): the rows kept do not depend on them.
    """
    if spec.pending:
        raise ValueError("bounds: 'auto' must be searched first (grid_partials, then AggregateSpec.with_bounds)")
    return _partials(_bounded(frame, spec), spec)


def grid_partials(frame: Any, spec: AggregateSpec) -> dict[str, np.ndarray]:
    """The search grid's counts of the kept rows (all groups) of each ``bounds="auto"`` column of one table or
    partition (:func:`~pydp_core.aggregation.autobounds.grid_counts`): they add up over partitions holding
    whole persons to the counts of the whole table, from which :func:`search_bounds` chooses the bounds."""
    assert spec.auto is not None
    return {c: grid_counts(v) for c, v in _bounded(frame, spec).auto_values(spec).items()}


def bounded_partials(frame: Any, spec: AggregateSpec,
                     use: KeyUse | None) -> tuple[AggregateSpec, list[np.ndarray], dict[str, np.ndarray]]:
    """The groups and partials of a whole table (:func:`partial_aggregates`, the distinct counts per group
    among them), choosing first the bounds of the columns with ``bounds="auto"`` from the kept rows
    (recorded in the key's ledger and charged to ``use`` before the searches draw noise, section 11 of
    ``docs/aggregate.md``); returns the spec with every bound known."""
    bounded = _bounded(frame, spec)
    if spec.pending:
        spec = search_bounds(spec, {c: grid_counts(v) for c, v in bounded.auto_values(spec).items()}, use)
    groups, partials, pairs = _partials(bounded, spec)
    for c, (g, _) in pairs.items():
        partials[f"{c}\x00distinct"] = distinct_counts(g, groups[0].shape[0])
    return spec, groups, partials


def distinct_counts(group_index: np.ndarray, n_groups: int) -> np.ndarray:
    """The int64 number of distinct (group, value) pairs per group, from the group index of each pair."""
    return np.bincount(group_index, minlength=n_groups).astype(np.int64)


@dataclass(frozen=True)
class _Bounded:
    """A table after contribution bounding: the group of each row, the groups, the value columns read, the
    kept rows, the codes of the ``count_distinct`` columns and the vector columns."""

    gid: np.ndarray
    group_cols: list[np.ndarray]
    raw: dict[str, np.ndarray]
    kept: Any
    distinct: dict[str, tuple[np.ndarray, Any]]
    vectors: dict[str, np.ndarray]

    def auto_values(self, spec: AggregateSpec) -> dict[str, np.ndarray]:
        """The kept values (all groups) of each ``bounds="auto"`` column."""
        assert spec.auto is not None
        return {s.column: self.raw[s.column][self.kept.rows] for s in spec.auto.searches}


def _bounded(frame: Any, spec: AggregateSpec) -> _Bounded:
    """Contribution bounding of one table or partition. The rows kept are a function of the rows' own content
    (keyed hashes of the person, the group and the clamped values), never of the row order, the other rows
    of other persons or the bounds an ``"auto"`` search finds (those columns are clamped to the grid's range
    whether or not the spec carries their bounds)."""
    frame = frame if isinstance(frame, Frame) else Frame(frame)
    key, pu, by_list = spec.key, spec.privacy_unit, spec.by
    p_codes, p_uniques = factorize(frame.column(pu), pu)
    p_hash = identity_hashes(unique_values(p_uniques), subkey(key, "person"))
    dense = spec.public is None and len(by_list) == 1  # range codes: groups without rows are dropped below
    g_codes, g_uniques = zip(*(factorize(frame.column(c), c, dense=dense) for c in by_list))
    g_values = [unique_values(u) for u in g_uniques]
    gid, group_cols = _combine_groups(list(g_codes), g_values)
    if spec.public is not None:
        public = public_groups(spec.public, by_list, g_values)
        lookup = {k: i for i, k in enumerate(zip(*[c.tolist() for c in public]))}
        remap = np.array([lookup.get(k, -1) for k in zip(*[c.tolist() for c in group_cols])], dtype=np.int64)
        gid = remap[gid] if remap.size else gid
        group_cols = public
    g_hash = group_hashes(group_cols, key)
    auto = [s.column for s in spec.auto.searches] if spec.auto is not None else []
    raw = {c: frame.raw_values(c) for c in [*(c for c in spec.bounds if c not in auto), *auto]}
    for c in {c for c, _ in spec.requests} - set(raw) - {pu}:
        frame.check_complete(c)
    for c in spec.bins:
        raw.setdefault(c, frame.raw_values(c))
    # A row's content is its values clamped to the bounds (the search grid's range for "auto" columns, the
    # edges for histograms), and a hash of the value of each count_distinct column, so that the rows kept do
    # not depend on the row order.
    clamp = [GRID_RANGE if c in auto else spec.bounds[c] if c in spec.bounds else (spec.bins[c][0], spec.bins[c][-1])
             for c in raw]
    distinct = {c: factorize(_unsigned_zero(frame, c), c) for c in spec.distinct_columns}
    vectors = {c: vector_values(frame, c, size) for c, (_, _, size) in spec.vectors.items()}
    hashed = [(identity_hashes(unique_values(u), subkey(key, f"distinct\x00{c}")) >> np.uint64(11))[codes]
              for c, (codes, u) in distinct.items()] + [row_hashes(v) >> np.uint64(11) for v in vectors.values()]
    kept = bound_contributions(p_codes, p_hash, gid, g_hash, list(raw.values()) + [h.astype(np.float64) for h in hashed],
                               max_partitions=spec.max_partitions, max_contributions=spec.max_contributions,
                               key=subkey(key, "bounding"), bounds=clamp + [(0.0, 2.0 ** 53)] * len(hashed),
                               names=[*raw, *distinct, *vectors])
    return _Bounded(gid, group_cols, raw, kept, distinct, vectors)


def _unsigned_zero(frame: Frame, name: str) -> Any:
    """A column, with -0.0 as 0.0 if it is a pyarrow float column, so that -0.0 and 0.0 are one distinct value
    as for their identity hash, pandas and the engines."""
    column = frame.column(name)
    if frame.kind == "arrow":
        import pyarrow as pa
        import pyarrow.compute as pc

        if pa.types.is_floating(column.type):
            return pc.add(column, pa.scalar(0.0, column.type))  # -0.0 + 0.0 = 0.0
    return column


def _partials(bounded: _Bounded, spec: AggregateSpec) -> tuple[list[np.ndarray], dict[str, np.ndarray],
                                                               dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The groups with rows, their partials and distinct (group index, value) pairs (:func:`partial_aggregates`)
    of a bounded table, under the spec's bounds (all known)."""
    gid, group_cols, raw, kept = bounded.gid, bounded.group_cols, bounded.raw, bounded.kept
    n_groups = group_cols[0].shape[0]
    row_groups = gid[kept.rows]
    partials = {"rows": np.bincount(row_groups, minlength=n_groups).astype(np.int64), "units": kept.units}
    for c in raw:
        comps = [comp for col, comp in spec.components if col == c]
        if comps:
            limbs = component_limb_sums(comps, row_groups, raw[c], kept.rows, spec.bounds[c], n_groups)
            for j, comp in enumerate(comps):
                for k in range(3):
                    partials[f"{c}\x00{comp}\x00{k}"] = limbs[3 * j + k]
    for c in spec.quantile_columns:
        partials[f"{c}\x00cells"] = cell_counts(raw[c][kept.rows], row_groups, spec.bounds[c], n_groups)
    for c, edges in spec.bins.items():
        partials[f"{c}\x00bins"] = bin_counts(raw[c][kept.rows], row_groups, edges, n_groups)
    for c, v in bounded.vectors.items():
        norm, bound, _ = spec.vectors[c]
        partials[f"{c}\x00vector"] = unit_sums(clipped_units(v[kept.rows], norm, bound), row_groups, n_groups)
    present = np.flatnonzero(kept.seen if kept.seen is not None else
                             np.bincount(gid[gid >= 0], minlength=n_groups))
    pairs = {}
    for c, (codes, u) in bounded.distinct.items():
        width = np.int64(max(1, len(u)))
        pair = np.unique(row_groups * width + codes[kept.rows])  # sorted by group
        # every group with a kept row is present: its index among the present groups
        pairs[c] = (np.searchsorted(present, pair // width).astype(np.int64), unique_values(u)[pair % width])
    return [c[present] for c in group_cols], {k: v[present] for k, v in partials.items()}, pairs


def search_bounds(spec: AggregateSpec, counts: Mapping[str, np.ndarray], use: KeyUse | None) -> AggregateSpec:
    """The spec with the bounds of its "auto" columns chosen from the grid counts of their kept values (all
    groups, :func:`grid_partials`): the counts are recorded in the key's ledger and the whole budget charged,
    then the searches run."""
    assert spec.auto is not None
    record_search(spec, use, counts)
    found = {s.column: s.search(counts[s.column], subkey(spec.key, f"bounds\x00{s.column}")) for s in spec.auto.searches}
    return spec.with_bounds(found)


def group_hashes(group_cols: Sequence[np.ndarray], key: bytes) -> np.ndarray:
    """The keyed 64-bit identity hash of each group (a function of the group's values only)."""
    return combine_hashes(
        [identity_hashes(c, subkey(key, f"group\x00{j}")) for j, c in enumerate(group_cols)], subkey(key, "groups")
    )


def release_partials(spec: AggregateSpec, frame: Any, group_cols: list[np.ndarray], partials: dict[Any, Any],
                     use: KeyUse | None = None) -> Any:
    """Selection (or the public partitions), keyed noise and estimates from combined partial aggregates.

    ``frame`` gives the output kind and the group columns' types (a :class:`Frame`, or the pair
    (kind, types) of an engine); the result is the table :func:`aggregate` returns. Before any noise is
    drawn the release is recorded in the key's ledger (``use``; an exact repeat, same release and same
    partials, is accepted and gives the same output) and charged to the accountant.
    """
    key, by_list = spec.key, spec.by
    group_cols, partials, stream_ids = selected_groups(spec, group_cols, partials, use)
    selection = spec.budget.selection
    alpha = None if spec.confidence is None else 1.0 - spec.confidence
    ci_alpha = 0.05 if alpha is None else alpha
    columns: dict[Any, Any] = {c: v for c, v in zip(by_list, group_cols)}
    report_aggs: dict[Any, Any] = {}
    for (col, agg), plan in zip(spec.requests, spec.budget.plans):
        if isinstance(plan, QuantilePlan):
            name = output_name(col, agg, spec.privacy_unit)
            columns[name] = plan.release(partials[f"{col}\x00cells"], stream_ids,
                                         subkey(key, f"quantile\x00{col}\x00{agg}"))
            report_aggs[name] = plan.describe()
            continue
        name = output_name(col, agg, spec.privacy_unit)
        if isinstance(plan, VectorPlan):
            vectors = plan.release(partials[f"{col}\x00vector"], stream_ids,
                                   subkey(key, f"noise\x00{col}\x00vector_sum"))
            half = plan.half_width(ci_alpha)
            _put(columns, name, (vectors, [v - half for v in vectors], [v + half for v in vectors]), alpha)
            report_aggs[name] = plan.describe(alpha)
            continue
        if agg == "histogram":
            (noise,) = plan.components.values()
            counts = partials[f"{col}\x00bins"]
            for i in range(counts.shape[1]):
                noisy = noise.draw(counts[:, i], stream_ids, subkey(key, f"noise\x00{col}\x00histogram\x00{i}"))
                _put(columns, f"{name}_{i}", estimate(plan, {"bins": noisy}, ci_alpha), alpha)
            report_aggs[name] = dict(describe_plan(plan, alpha), edges=list(spec.bins[col]))
            continue
        noisy = {
            comp: noise.draw(_exact_input(partials, col, comp, noise, spec.bounds.get(col)), stream_ids,
                             subkey(key, f"noise\x00{col}\x00{agg}\x00{comp}"))
            for comp, noise in plan.components.items()
        }
        _put(columns, name, estimate(plan, noisy, ci_alpha), alpha)
        report_aggs[name] = describe_plan(plan, alpha)
    report = release_report(spec, selection, report_aggs)
    kind, types = (frame.kind, {c: group_type(frame, c) for c in by_list}) if isinstance(frame, Frame) else frame
    out = build_result(kind, columns, types, report)
    if spec.public is None and len(group_cols[0]):
        out = out.sort_by([(c, "ascending") for c in by_list]) if kind == "arrow" else \
            out.sort_values(by_list, kind="stable").reset_index(drop=True)
        if kind == "pandas":
            out.attrs[REPORT_KEY] = report
    return out


def selected_groups(spec: AggregateSpec, group_cols: list[np.ndarray], partials: dict[Any, Any],
                    use: KeyUse | None) -> tuple[list[np.ndarray], dict[Any, Any], np.ndarray]:
    """The released groups (the public partitions, or the selected ones), their partials and noise stream ids,
    after the release is recorded in the key's ledger and charged (``use``)."""
    key, by_list = spec.key, spec.by
    if spec.public is not None:
        public = public_groups(spec.public, by_list, [np.asarray(c) for c in group_cols])
        lookup = {k: i for i, k in enumerate(zip(*[c.tolist() for c in group_cols]))}
        where = np.array([lookup.get(k, -1) for k in zip(*[c.tolist() for c in public])], dtype=np.int64)
        partials = {k: _public_rows(v, where) for k, v in partials.items()}
        group_cols = public
    record_release(spec, use, group_cols, partials)
    stream_ids = group_hashes(group_cols, key) >> np.uint64(1)
    selection = spec.budget.selection
    if selection is not None:
        idx = np.flatnonzero(selection.select(partials["units"], stream_ids, subkey(key, "selection")))
        group_cols = [c[idx] for c in group_cols]
        stream_ids = stream_ids[idx]
        partials = {k: v[idx] for k, v in partials.items()}
    if np.unique(stream_ids).size != stream_ids.size:
        raise RuntimeError("two groups have the same 64-bit keyed hash; run again with another key")
    return group_cols, partials, stream_ids


def _put(columns: dict[Any, Any], name: str, released: tuple[Any, ...], alpha: float | None) -> None:
    """The estimate of ``released`` (estimate, ci_low, ci_high) as column ``name``, and its interval if asked."""
    columns[name] = released[0]
    if alpha is not None:
        columns[f"{name}_ci_low"], columns[f"{name}_ci_high"] = released[1], released[2]


def _public_rows(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """The rows ``where`` of per-group partials (one row per group, scalars or cell counts), 0 where < 0."""
    out = np.zeros((where.shape[0],) + values.shape[1:], dtype=values.dtype)
    if values.shape[0]:
        out[where >= 0] = values[where[where >= 0]]
    return out


def _exact_input(partials: dict[Any, Any], col: str, comp: str, noise: Any, bounds: Any) -> np.ndarray:
    """The true value of a component per group: integer counts, or the exact sum rounded to the grid."""
    if comp in ("rows", "units"):
        result: np.ndarray = partials[comp]
        return result
    if comp == "distinct":
        distinct: np.ndarray = partials[f"{col}\x00distinct"]
        return distinct
    return limbs_on_grid([partials[f"{col}\x00{comp}\x00{k}"] for k in range(3)], partials["rows"],
                         component_exponent(comp, bounds), noise.grid_exponent)


def _combine_groups(codes: list[np.ndarray], uniques: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One group code per row for several ``by`` columns, and the group values per column."""
    if len(codes) == 1:
        return codes[0], [uniques[0]]
    combined = np.zeros(codes[0].shape[0], dtype=np.int64)
    width = 1
    for c, u in zip(codes, uniques):
        width *= max(1, u.shape[0])
        if width >= 1 << 62:
            raise ValueError("by: too many combinations of group values for one 64-bit code")
        combined = combined * max(1, u.shape[0]) + c
    uniq, gid = np.unique(combined, return_inverse=True)
    cols = []
    for _, u in reversed(list(zip(codes, uniques))):
        size = max(1, u.shape[0])
        cols.append(u[uniq % size])
        uniq = uniq // size
    return gid.astype(np.int64), cols[::-1]

