"""Noise for columnar data: numpy arrays, pandas Series and DataFrames, pyarrow arrays and tables.

:func:`privatize` adds a mechanism's noise to the chosen columns and returns the same kind of object
it was given, with nulls kept as nulls (or dropped or replaced: ``nulls=``, :mod:`pydp_core.io.nulls`) and
the other columns untouched. It is the one code path behind
the ``pydp-core privatize`` command and the Spark and Dask front ends
(:mod:`pydp_core.spark`, :mod:`pydp_core.dask`).

Keyed noise (reproducible, partition-independent)
-------------------------------------------------
With a 256-bit secret ``key``, the noise of a value depends only on (key, release, column name, global
row index): row ``i`` of column ``c`` gets the ``i mod B``-th value of the stream

    Random(column_key(release_key(key, R), c)).stream(i // B),   B = block_rows,

where ``R = release_id(release_description(...))`` describes everything that changes the output law (the
mechanisms and their parameters, the columns, the bounds, ``B``, the noise format), and
``release_key(key, R) = HMAC-SHA256(key, "pydp_core.release/key" || 0x00 || R)``,
``column_key(k, c) = HMAC-SHA256(k, "pydp_core.etl/column" || 0x00 || c)``. Releases that differ in
anything but their data and rows get independent noise (``docs/io.md``);

computed by one ``mechanism.privatize(block, rng=stream)`` call over the whole block of ``B`` rows (rows of
the block that a call does not hold are padded and discarded). So:

- processing a column in pieces (``offset=``), by Parquet row group or CSV batch, by Spark or Dask
  partition, in any order, gives bit-for-bit the output of processing it in one piece;
- a retried or recomputed piece reproduces its noise exactly, so recomputation cannot average noise away;
- different rows, blocks, columns and releases get independent noise (distinct streams of a keyed CSPRNG).

This rests on one property of the noise, which tests/io/test_etl.py checks: it is added elementwise, and
the noise of position ``j`` depends on the stream and on ``j`` only, not on the values.

Releases: with the project's mechanisms each value is released on the floating-point-safe path
(exact integer noise on a power-of-two grid, :mod:`pydp_core.release`: discrete Laplace and Gaussian, and
the exactly specified lattice laws of Subbotin_r and Logistic noise, which need delta > 0) as one scalar
query with the mechanism's sensitivity (:func:`privatizer`); ``release=False`` selects floating-point
noise for simulations.

The key is a secret. Generate it once per release (:func:`generate_key`, or ``pydp-core keygen``, which
writes it with owner-only permissions) and keep it out of logs, job arguments and notebooks. Every use is
recorded in the key's ledger (:mod:`pydp_core.io.ledger`; in the process, or in ``<key file>.ledger``)
before noise is drawn: a second release under the key (other parameters, columns or bounds, or other
values on the same rows) is refused with :class:`KeyReuseError`, unless every release under the key is
made through one :class:`pydp_core.Session`, which charges each to its budget. Without a key a fresh one
is drawn from OS entropy for the call (and thrown away), which is right for a one-shot release but not
reproducible.

Clamping and sensitivity
------------------------
``bounds=(lower, upper)`` clamps the values before noise is added; nothing is clamped without it, and
values must then be finite. The sensitivity is the mechanism's: :func:`sensitivity_from_bounds` gives
``upper - lower`` (the sensitivity of releasing one record's value) when you ask for it, for instance
``mechanism(..., sensitivity="bounds", bounds=(0, 100))``. A sensitivity below ``upper - lower`` is
refused (:func:`release_bounds`), and a column without bounds is refused unless
``sensitivity_holds=True`` declares that the mechanism's sensitivity holds; the declaration is recorded in
the output's release report.
"""
from __future__ import annotations

from .files import file_format, privatize_file
from .frames import privatize
from .keyed import (
    KeyedNoise,
    check_bounds,
    describe_mechanism,
    mechanism,
    privatizer,
    release_bounds,
    release_description,
    sensitivity_from_bounds,
)
from .keys import (
    BLOCK_ROWS,
    KEY_BYTES,
    NOISE_FORMAT,
    check_key,
    column_key,
    generate_key,
    load_key,
    parse_key,
    release_id,
    release_key,
    write_key,
)
from .ledger import KeyLedger, KeyReuseError, SessionLedger, ledger_for_key, values_digest

__all__ = [
    "privatize",
    "privatize_file",
    "generate_key",
    "load_key",
    "write_key",
    "sensitivity_from_bounds",
    "mechanism",
    "KeyedNoise",
    "KeyLedger",
    "KeyReuseError",
    "SessionLedger",
    "ledger_for_key",
    "release_id",
    "release_key",
    "release_description",
    "describe_mechanism",
    "NOISE_FORMAT",
    "values_digest",
    "release_bounds",
    "BLOCK_ROWS",
    "KEY_BYTES",
    "check_key",
    "parse_key",
    "column_key",
    "check_bounds",
    "privatizer",
    "file_format",
]
