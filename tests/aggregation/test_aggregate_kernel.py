"""The C++ bounding kernel (csrc/include/pydp/aggregation/bounding.hpp) against an independent numpy
reference written from docs/aggregate.md, section 2: the same kept rows and kept pairs, for any thread count."""
from __future__ import annotations

import numpy as np
import pytest

from pydp_core import _core
from pydp_core.aggregation.bounding import (
    bound_contributions,
    bounding_keys,
    content_seed,
    fmix,
    keyed_mix,
    subkey,
)

KEY = subkey(bytes(range(32)), "bounding")


def reference(person, person_hash, group, group_hash, values, kp, kc, key):
    """Kept row indices and kept pairs per group by sorting every row (numpy, O(n log n)); group -1 rows
    are dropped."""
    use = np.flatnonzero(group >= 0)
    rows, units = _reference(person[use], person_hash, group[use], group_hash, [v[use] for v in values], kp, kc, key)
    return use[rows], units


def _reference(person, person_hash, group, group_hash, values, kp, kc, key):
    n = person.shape[0]
    w = bounding_keys(key)
    content = np.full(n, content_seed(key), dtype=np.uint64)
    for v in values:
        content = fmix(content ^ (np.asarray(v, dtype=np.float64) + 0.0).view(np.uint64))
    pair = keyed_mix(person_hash[person] ^ fmix(group_hash[group] ^ w[0]), subkey(key, "pair"))
    row0 = keyed_mix(pair ^ content, subkey(key, "row"))
    order = np.lexsort((np.arange(n), row0, group, pair, person))
    p, g, r0 = person[order], group[order], row0[order]
    new_person = np.r_[True, p[1:] != p[:-1]]
    new_pair = new_person | np.r_[True, g[1:] != g[:-1]]
    pair_id = np.cumsum(new_pair) - 1
    first_pair = np.maximum.accumulate(np.where(new_person, pair_id, 0))
    keep = (pair_id - first_pair) < kp
    units = np.bincount(g[new_pair & keep], minlength=group_hash.shape[0])
    for pid in np.unique(pair_id[keep]):
        idx = np.flatnonzero(pair_id == pid)
        if idx.size <= kc:
            continue
        run = np.r_[True, r0[idx][1:] != r0[idx][:-1]]
        pos = np.arange(idx.size)
        dup = (pos - np.maximum.accumulate(np.where(run, pos, 0))).astype(np.uint64)
        prio = fmix(r0[idx] ^ keyed_mix(dup, subkey(key, "duplicate")))
        chosen = np.zeros(idx.size, dtype=bool)
        chosen[np.lexsort((pos, prio))[:kc]] = True
        keep[idx] = chosen
    return np.sort(order[keep]), units


def data(seed, n, persons, groups, distinct_values, dropped=0.0):
    rng = np.random.default_rng(seed)
    person = rng.integers(0, persons, n)
    group = np.where(rng.uniform(size=n) < dropped, -1, rng.integers(0, groups, n))
    x = rng.integers(0, distinct_values, n).astype(np.float64)  # many identical rows
    values = [x, -x * 0.5] if seed % 2 else [x]
    ph = fmix(np.arange(persons, dtype=np.uint64) + np.uint64(7))
    gh = fmix(np.arange(groups, dtype=np.uint64) + np.uint64(99))
    return person, ph, group, gh, values


@pytest.mark.parametrize("seed, n, persons, groups, values, kp, kc", [
    (1, 3000, 20, 15, 3, 2, 3),
    (2, 5000, 500, 40, 1000, 1, 1),
    (3, 4000, 3, 4, 2, 10, 100),
    (4, 2000, 2000, 2000, 5, 3, 2),
    (5, 6000, 7, 1, 4, 1, 5),
    (8, 20000, 50, 100, 10, 20, 3),  # more than 16 partitions: the full-sort path
    (9, 3000, 1000, 50, 2, 4, 4),  # most persons keep everything (the fast path), some do not
    (10, 5000, 100, 30, 5, 2, 2),
])
def test_kernel_matches_the_numpy_reference(seed, n, persons, groups, values, kp, kc):
    args = data(seed, n, persons, groups, values, dropped=0.3 if seed >= 9 else 0.0)
    got = bound_contributions(*args, max_partitions=kp, max_contributions=kc, key=KEY)
    rows, units = reference(*args, kp, kc, KEY)
    assert np.array_equal(got.rows, rows)
    assert np.array_equal(got.units, units)
    group = args[2]
    assert np.array_equal(got.seen, np.bincount(group[group >= 0], minlength=args[3].shape[0]) > 0)


NO_BOUNDS = np.zeros(0)


@pytest.mark.parametrize("kp", [3, 17])  # the streaming path (row ranges merged) and the sorted path
def test_thread_count_does_not_change_the_kept_rows(kp):
    person, ph, group, gh, values = data(6, 200_000, 5000, 300, 50)
    seed = int(content_seed(KEY))
    outs = [_core.aggregation.bound_contributions(person, ph, group, gh, values, NO_BOUNDS, seed, kp, 3, bounding_keys(KEY), t)
            for t in (1, 2, 3)]
    for rows, units, seen in outs[1:]:
        assert np.array_equal(rows, outs[0][0]) and np.array_equal(units, outs[0][1]) and np.array_equal(seen, outs[0][2])
    rows, units = reference(person, ph, group, gh, values, kp, 3, KEY)
    assert np.array_equal(outs[0][0], rows) and np.array_equal(outs[0][1], units)
    assert np.array_equal(outs[0][2].view(bool), np.bincount(group[group >= 0], minlength=gh.shape[0]) > 0)


@pytest.mark.parametrize("bucket_persons", [64, 256, 8192])
def test_person_buckets_give_the_streaming_result(bucket_persons):
    """The partitioned path (rows routed to buckets of bucket_persons persons) keeps the rows and pairs of the
    streaming path (bucket_persons=0) and of the reference, for any thread count; with dropped rows and
    identical rows."""
    person, ph, group, gh, values = data(12, 300_000, 3000, 200, 20, dropped=0.2)
    seed = int(content_seed(KEY))
    keys = bounding_keys(KEY)
    want = _core.aggregation.bound_contributions(person, ph, group, gh, values, NO_BOUNDS, seed, 3, 2, keys, 1, 0)
    for t in (1, 2, 3):
        got = _core.aggregation.bound_contributions(person, ph, group, gh, values, NO_BOUNDS, seed, 3, 2, keys, t,
                                                  bucket_persons)
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
    rows, units = reference(person, ph, group, gh, values, 3, 2, KEY)
    assert np.array_equal(want[0], rows) and np.array_equal(want[1], units)


@pytest.mark.parametrize("n", [2_500_000, 9_000_000])
def test_person_buckets_across_routing_pieces(n):
    """Three routing pieces of 2^20 rows, and two rounds of eight pieces (9 * 10^6 rows), each person's rows
    in all of them."""
    person, ph, group, gh, values = data(13, n, 40_000, 5000, 1000)
    seed = int(content_seed(KEY))
    keys = bounding_keys(KEY)
    want = _core.aggregation.bound_contributions(person, ph, group, gh, values, NO_BOUNDS, seed, 4, 1, keys, 1, 0)
    for t in (1, 2):
        got = _core.aggregation.bound_contributions(person, ph, group, gh, values, NO_BOUNDS, seed, 4, 1, keys, t, 1024)
        for a, b in zip(got, want):
            assert np.array_equal(a, b)


def test_person_buckets_reject_bad_sizes_and_codes():
    person, ph, group, gh, values = data(7, 100, 10, 5, 3)
    args = (person, ph, group, gh, values, NO_BOUNDS, 1, 1, 1, bounding_keys(KEY), 1)
    for bad in (3, 100):
        with pytest.raises(ValueError, match="power of two"):
            _core.aggregation.bound_contributions(*args, bad)
    with pytest.raises(ValueError, match="bucket_persons"):
        _core.aggregation.bound_contributions(*args, -2)
    person[3] = 10
    with pytest.raises(ValueError, match="out of range"):
        _core.aggregation.bound_contributions(*args, 64)


@pytest.mark.parametrize("kp", [2, 20])
def test_kernel_clamps_raw_values_like_numpy_clip(kp):
    """Raw values with bounds give the kept rows of the values clamped by numpy (the content hash is of the
    clamped bits; -0.0 and 0.0 are one content)."""
    person, ph, group, gh, values = data(11, 5000, 40, 30, 7)
    raw = [values[0] * 3.0 - 9.0, np.where(values[0] == 0, -0.0, -values[0])]
    bounds = [(-4.0, 5.5), (-2.0, 0.0)]
    got = bound_contributions(person, ph, group, gh, raw, max_partitions=kp, max_contributions=2, key=KEY, bounds=bounds)
    ref = bound_contributions(person, ph, group, gh, [np.clip(v, *b) for v, b in zip(raw, bounds)], max_partitions=kp,
                              max_contributions=2, key=KEY)
    assert np.array_equal(got.rows, ref.rows) and np.array_equal(got.units, ref.units)
    assert np.array_equal(ref.rows, reference(person, ph, group, gh, [np.clip(v, *b) for v, b in zip(raw, bounds)], kp, 2,
                                              KEY)[0])


def test_kernel_rejects_bad_codes():
    person, ph, group, gh, values = data(7, 100, 10, 5, 3)
    for bad in (5, -2):
        group[3] = bad
        with pytest.raises(ValueError, match="out of range"):
            _core.aggregation.bound_contributions(person, ph, group, gh, values, NO_BOUNDS, 1, 1, 1, bounding_keys(KEY), 1)
    with pytest.raises(ValueError, match="limits"):
        _core.aggregation.bound_contributions(*data(7, 100, 10, 5, 3), NO_BOUNDS, 1, 0, 1, bounding_keys(KEY), 1)
    with pytest.raises(ValueError, match="values"):
        _core.aggregation.bound_contributions(person, ph, group, gh, [values[0][:5]], NO_BOUNDS, 1, 1, 1, bounding_keys(KEY), 1)
    with pytest.raises(ValueError, match="bounds"):
        _core.aggregation.bound_contributions(person, ph, group, gh, values, np.array([1.0, 0.0]), 1, 1, 1,
                                            bounding_keys(KEY), 1)


def test_keyed_group_noise_is_the_stream_of_each_group():
    """Group j's noise is the first draw of Random(key).stream(id_j), whatever the other groups are."""
    from fractions import Fraction

    from pydp_core.aggregation.aggregations import grid_noise, integer_noise
    from pydp_core.random import Random
    from pydp_core.release import sample_discrete_laplace

    key = bytes(range(1, 33))
    ids = np.array([0, 5, 2**63 - 1, 12345678901234, 7], dtype=np.uint64)
    counts = np.array([0, 3, 10**6, -4, 2**40], dtype=np.int64)
    inoise = integer_noise(0.7, 3, 2)
    got = inoise.draw(counts, ids, key)
    ref = [int(c) + sample_discrete_laplace(inoise.t, rng=Random(key, threads=1).stream(int(i))) for c, i in zip(counts, ids)]
    assert got.tolist() == ref
    assert inoise.draw(counts[::-1], ids[::-1], key).tolist() == ref[::-1]  # per group, not per position
    gnoise = grid_noise(0.9, 2.5, 3)
    sums = np.array([0.0, 1.5, -1e6, 3.25, 1e-3])
    got = gnoise.draw(sums, ids, key)
    ref = [gnoise.plan.release(float(v), rng=Random(key, threads=1).stream(int(i)), simulation=True) for v, i in zip(sums, ids)]
    assert got.tolist() == ref
    assert isinstance(inoise.t, Fraction)


@pytest.mark.parametrize("words", [1, 2, 8, 9, 64])
def test_keyed_words_are_the_start_of_each_groups_stream(words):
    from pydp_core.aggregation.aggregations import _base_generator

    ids = np.array([0, 5, 2**63 - 1, 12345678901234, 7, 5], dtype=np.uint64)
    got = _core.aggregation.keyed_words(_base_generator(KEY), ids, words, 2)
    assert got.shape == (ids.size, words) and got.dtype == np.uint64
    for row, i in zip(got, ids.tolist()):
        assert row.tolist() == _base_generator(KEY).spawn(i).random_raw(words).tolist()
    assert got[1].tolist() == got[5].tolist() and got[0].tolist() != got[1].tolist()
    for bad in (0, 65):
        with pytest.raises(ValueError, match="words"):
            _core.aggregation.keyed_words(_base_generator(KEY), ids, bad, 1)
