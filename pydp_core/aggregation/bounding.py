"""Identities, keyed hashes and per-person contribution bounding (``docs/aggregate.md``, section 2).

Every random choice of the bounding is a keyed hash of identifiers, never a function of the row order:

- each distinct person value and group value gets a 64-bit keyed hash of its canonical encoding
  (:func:`identity_hashes`: integers by value, floats by their bits, strings by their UTF-8 bytes);
- a person keeps the ``max_partitions`` groups with the smallest pair priority ``H(person, group)``;
- in a kept (person, group) pair, the ``max_contributions`` rows with the smallest row priority
  ``H(pair, row content, duplicate index)`` are kept, where the row content is the bit pattern of the
  clamped aggregated values and the duplicate index numbers the identical rows of the pair (identical
  rows are interchangeable, so the kept multiset depends on the multiset of rows only). With a keyed
  pseudo-random function the kept groups are a uniform subset of the person's groups and the kept rows
  a uniform subset of the pair's rows.

Privacy never rests on these hashes: any selection that depends on one person's own rows only keeps the
sensitivities of ``docs/aggregate.md``; the key makes the choice unpredictable and reproducible.
"""
from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S33 = np.uint64(33)


def subkey(key: bytes, label: str) -> bytes:
    """HMAC-SHA256(key, "pydp_core.aggregation" 0x00 label): one independent key per use."""
    return hmac.new(key, b"pydp_core.aggregation\x00" + label.encode("utf-8"), hashlib.sha256).digest()


def _word(key: bytes, i: int) -> np.uint64:
    return np.uint64(int.from_bytes(key[8 * i : 8 * i + 8], "little"))


def fmix(h: np.ndarray) -> np.ndarray:
    """The MurmurHash3 64-bit finaliser, a bijection of uint64 with full avalanche (new array)."""
    h = h ^ (h >> _S33)
    h *= _M1
    h ^= h >> _S33
    h *= _M2
    h ^= h >> _S33
    return h


def keyed_mix(x: np.ndarray, key: bytes) -> np.ndarray:
    """A keyed bijection of uint64 words: fmix(fmix(x xor k0) + k1) with (k0, k1) from ``key``."""
    return fmix(fmix(x ^ _word(key, 0)) + _word(key, 1))


def identity_hashes(values: np.ndarray, key: bytes) -> np.ndarray:
    """64-bit keyed hashes of distinct identifier values (one per entry), independent of their order.

    Integers (and booleans) hash their int64 value, floats their float64 bits (-0.0 as 0.0), dates and
    times their nanoseconds, strings their UTF-8 bytes and bytes themselves (keyed BLAKE2b); every kind
    carries its own tag, so 1, 1.0 and "1" are different identities.
    """
    arr = np.asarray(values)
    kind = arr.dtype.kind
    if kind in "iub":
        return keyed_mix(arr.astype(np.int64).view(np.uint64) ^ np.uint64(1), key)
    if kind == "f":
        f = arr.astype(np.float64) + 0.0  # -0.0 -> 0.0
        return keyed_mix(f.view(np.uint64), subkey(key, "float"))
    if kind in "Mm":
        unit = "datetime64[ns]" if kind == "M" else "timedelta64[ns]"
        return keyed_mix(arr.astype(unit).view(np.int64).view(np.uint64), subkey(key, unit))
    if kind in "OSU":
        out = np.empty(arr.shape[0], dtype=np.uint64)
        for i, v in enumerate(arr.tolist()):
            if isinstance(v, str):
                data = b"s" + v.encode("utf-8")
            elif isinstance(v, bytes):
                data = b"b" + v
            elif isinstance(v, (bool, int, np.integer)):
                out[i] = identity_hashes(np.array([int(v)], dtype=np.int64), key)[0]
                continue
            elif isinstance(v, (float, np.floating)):
                out[i] = identity_hashes(np.array([float(v)]), key)[0]
                continue
            else:
                raise TypeError(f"identifier values must be numbers, strings or bytes, not {type(v).__name__}")
            out[i] = int.from_bytes(hashlib.blake2b(data, digest_size=8, key=key).digest(), "little")
        return out
    raise TypeError(f"identifier values of dtype {arr.dtype} are not supported")


def combine_hashes(columns: Sequence[np.ndarray], key: bytes) -> np.ndarray:
    """One keyed hash per row of several identifier-hash columns (order of the columns matters)."""
    h = np.full(columns[0].shape[0], _word(key, 2), dtype=np.uint64)
    for c in columns:
        h = fmix((h * _GOLDEN) ^ c)
    return h


@dataclass(frozen=True)
class Bounded:
    """The kept rows (indices into the input, increasing), the kept (person, group) pairs per group and
    whether each group has rows (before bounding)."""

    rows: np.ndarray
    units: np.ndarray
    seen: np.ndarray | None = None


def bounding_keys(key: bytes) -> np.ndarray:
    """The seven 64-bit words of the bounding kernel: the group salt, then the pair, row and duplicate keys."""
    words = [_word(key, 3)]
    for label in ("pair", "row", "duplicate"):
        k = subkey(key, label)
        words += [_word(k, 0), _word(k, 1)]
    return np.array(words, dtype=np.uint64)


def bound_contributions(
    person: np.ndarray,
    person_hash: np.ndarray,
    group: np.ndarray,
    group_hash: np.ndarray,
    values: Sequence[np.ndarray],
    *,
    max_partitions: int,
    max_contributions: int,
    key: bytes,
    bounds: Sequence[tuple[float, float]] | None = None,
    names: Sequence[str] | None = None,
) -> Bounded:
    """Keep at most ``max_partitions`` groups per person and ``max_contributions`` rows per (person, group).

    ``person`` and ``group`` are per-row codes into ``person_hash`` and ``group_hash`` (keyed identity
    hashes; group -1 drops the row); ``values`` are the aggregated columns, whose float64 bits after
    clamping are the row content: already clamped, or raw with ``bounds`` (one (low, high) per column),
    clamped by the kernel as ``numpy.clip`` would. The C++ kernel (``csrc/include/pydp/aggregation/bounding.hpp``) keeps, per
    person, the groups with the smallest pair priority ``keyed_mix(person_hash ^ fmix(group_hash ^
    salt), pair key)`` and, per kept pair, the rows with the smallest ``fmix(row ^ keyed_mix(duplicate
    index, duplicate key))``, where ``row = keyed_mix(pair ^ content, row key)`` and the content hash
    is ``h = seed; h = fmix(h ^ bits(v))`` over the row's values; multi-threaded, the same for any
    thread count. ``rows`` of the result are increasing. A NaN in ``values`` is a ValueError naming the
    column (its entry of ``names``), found by the kernel in its pass over the rows.
    """
    from .._core import aggregation as _cagg

    limits = np.asarray([b for pair in bounds for b in pair] if bounds is not None else [], dtype=np.float64)
    try:
        rows, units, seen = _cagg.bound_contributions(
            np.ascontiguousarray(person, dtype=np.int64), np.ascontiguousarray(person_hash, dtype=np.uint64),
            np.ascontiguousarray(group, dtype=np.int64), np.ascontiguousarray(group_hash, dtype=np.uint64),
            [np.ascontiguousarray(v, dtype=np.float64) for v in values], limits, int(content_seed(key)),
            int(max_partitions), int(max_contributions), bounding_keys(key), 0,
        )
    except ValueError as err:
        found = re.fullmatch(r"values column (\d+) has NaN", str(err))
        if found is None:
            raise
        j = int(found.group(1))
        name = repr(names[j]) if names is not None else str(j)
        raise ValueError(f"aggregations: column {name} has missing values (null or NaN); drop or impute them first") \
            from None
    return Bounded(rows, units, seen.view(bool))


def content_seed(key: bytes) -> np.uint64:
    """The first word of the row content hash."""
    return _word(subkey(key, "content"), 0)


#: Integer identifiers spanning at most DENSE_SLACK * rows + 1024 values are coded by offset (no hashing).
DENSE_SLACK = 2


def _integer_kind(column: Any, arrow: bool) -> bool:
    """A signed or unsigned integer column of at most 63 value bits (int8 ... int64, uint8 ... uint32)."""
    if arrow:
        import pyarrow as pa

        return bool(pa.types.is_integer(column.type) and column.type != pa.uint64())
    dtype = getattr(column.dtype, "numpy_dtype", column.dtype)
    return isinstance(dtype, np.dtype) and dtype.kind in "iu" and dtype != np.uint64


def factorize(column: Any, name: str, *, dense: bool = True) -> tuple[np.ndarray, Any]:
    """(int64 codes, uniques) of a pandas Series or pyarrow (Chunked)Array; nulls are a ValueError.

    With ``dense``, an integer column whose values span a short range is coded as ``value - min`` and its
    uniques are the whole range (values without rows included): one pass instead of a hash table.
    """
    arrow = hasattr(column, "null_count") and hasattr(column, "type")
    if (column.null_count if arrow else column.isna().any()):
        raise ValueError(f"column {name!r} has nulls (missing identifiers are not supported)")
    if dense and _integer_kind(column, arrow) and len(column):
        values = np.asarray(column.to_numpy(), dtype=np.int64)
        if arrow:  # one multi-threaded pass for both
            import pyarrow.compute as pc

            mm = pc.min_max(column)
            lo, hi = int(mm["min"].as_py()), int(mm["max"].as_py())
        else:
            lo, hi = int(values.min()), int(values.max())
        if hi - lo < DENSE_SLACK * values.shape[0] + 1024:
            return (values if lo == 0 else values - lo), np.arange(lo, hi + 1, dtype=np.int64)
    if arrow:
        arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
        enc = arr.dictionary_encode()
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary
    import pandas as pd

    codes, uniques = pd.factorize(column, sort=False)
    return codes.astype(np.int64, copy=False), uniques


def unique_values(uniques: Any) -> np.ndarray:
    """The uniques of :func:`factorize` as a numpy array (object for strings)."""
    if hasattr(uniques, "to_numpy") and hasattr(uniques, "type"):  # pyarrow Array
        return np.asarray(uniques.to_numpy(zero_copy_only=False))
    return np.asarray(uniques)
