"""A numpy BitGenerator over pydp_core's keyed ChaCha20 stream.

``numpy.random.Generator(ChaCha20())`` gives every numpy distribution on top of the same
cryptographically secure stream as :class:`pydp_core.random.Random`: a 256-bit key, a 64-bit stream
id and a block counter (Bernstein 2008; RFC 8439). The C callbacks that numpy calls read a buffer of
16 ChaCha20 blocks (128 64-bit words), refilled with the fastest ChaCha20 implementation for the CPU
(csrc/include/pydp/random/bitgen.hpp).

Keys and seeds:

- ``ChaCha20()`` (``seed=None``): a fresh 256-bit key from the operating system (``getrandom``). Use it
  for releases.
- ``ChaCha20(seed)`` with an int, a sequence of ints or a ``numpy.random.SeedSequence``: numpy's
  convention, the key is ``SeedSequence(seed).generate_state(8, uint32)``. Reproducible: for tests,
  simulations and benchmarks, **not for releases** (whoever knows the seed knows the noise).
- ``ChaCha20(key=k)`` with 32 bytes: the stream of that key, word for word the stream of
  ``pydp_core.random`` and of the C ABI (``pydp_rng_new``) for the same key.

Independent streams: ``bitgen.stream(i)`` is the generator of partition or task ``i``, derived from
(key, i) by ChaCha20 itself (the project's (key, stream id, counter) design; ``Random.stream(i)`` for the
same key gives the same words). ``bitgen.spawn(n)`` follows numpy: children from
``seed_seq.spawn(n)``, where ``seed_seq`` is the SeedSequence of the seed, or, for a key from the
operating system or ``key=``, a SeedSequence (pool size 8, 256 bits) of that key.

Processes: after ``os.fork()`` a child process would repeat its parent's stream. Generators made without
a seed or key (and their streams and spawns) are re-keyed from the operating system in the child, so
parent and child never release the same noise. Seeded generators are not (their output is meant to be
reproducible): give each worker its own ``stream(i)``.

Threads: numpy's ``Generator`` holds ``bitgen.lock`` while it draws; a ChaCha20 shared between threads is
safe through numpy's API, and faster when each thread has its own ``stream(i)``.

The ``state`` (a dict) contains the key: whoever reads it can predict the stream.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import weakref
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from .._core import random as _R
from .._validation import check_int, check_size
from .generator import os_key

__all__ = ["ChaCha20"]

_UINT64_MAX = (1 << 64) - 1

# Generators to re-key in a forked child: those whose key came from the operating system.
_SECURE: weakref.WeakSet[ChaCha20] = weakref.WeakSet()


def _rekey_after_fork() -> None:
    for bitgen in list(_SECURE):
        bitgen._rekey()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_rekey_after_fork)


class _BitGenT(ctypes.Structure):
    """numpy's bitgen_t."""

    _fields_ = [
        ("state", ctypes.c_void_p),
        ("next_uint64", ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)),
        ("next_uint32", ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)),
        ("next_double", ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)),
        ("next_raw", ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)),
    ]


class _Interface(NamedTuple):
    """The fields of numpy's BitGenerator.ctypes interface."""

    state_address: Any
    state: Any
    next_uint64: Any
    next_uint32: Any
    next_double: Any
    bit_generator: Any


def _check_key(key: Any) -> bytes:
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"key must be 32 bytes, not {type(key).__name__}")
    k = bytes(key)
    if len(k) != 32:
        raise ValueError(f"key must be exactly 32 bytes, got {len(k)}")
    return k


def _key_seed_seq(key: bytes) -> np.random.SeedSequence:
    return np.random.SeedSequence(int.from_bytes(key, "little"), pool_size=8)


def _as_seed_seq(seed: Any) -> Any:
    if isinstance(seed, np.random.bit_generator.ISeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("seed must be None, a non-negative int, a sequence of them or a SeedSequence, not bool")
    if isinstance(seed, (float, complex, str, bytes, np.floating)):
        raise TypeError(
            "seed must be None, a non-negative int, a sequence of them or a SeedSequence, "
            f"not {type(seed).__name__} (for a raw 32-byte key use key=)"
        )
    try:
        return np.random.SeedSequence(seed)
    except TypeError as exc:
        raise TypeError(f"seed must be None, a non-negative int, a sequence of them or a SeedSequence: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"seed must be non-negative: {exc}") from None


class ChaCha20(np.random.BitGenerator):
    """The keyed ChaCha20 stream as a numpy BitGenerator: ``numpy.random.Generator(ChaCha20())``.

    Parameters
    ----------
    seed : None, int, sequence of int or numpy.random.SeedSequence, optional
        ``None`` (the default): a fresh 256-bit key from the operating system's entropy; the stream
        cannot be reproduced: use this for releases. Otherwise numpy's convention: the key is
        ``SeedSequence(seed).generate_state(8, np.uint32)``; reproducible, for tests and simulations,
        **not for releases**.
    key : bytes, optional, keyword-only
        A 32-byte ChaCha20 key (instead of ``seed``): the stream of ``pydp_core.random`` and of the C
        ABI for the same key (stream id 0). Not for releases unless the key is secret and random.

    Attributes
    ----------
    lock : threading lock
        Held by ``numpy.random.Generator`` while it draws.
    capsule : PyCapsule
        numpy's ``bitgen_t`` interface ("BitGenerator").
    seed_seq : numpy.random.SeedSequence
        Used by :meth:`spawn` (numpy's convention).

    Raises
    ------
    TypeError
        ``seed`` or ``key`` of a wrong type, or both given.
    ValueError
        A negative seed, or a key that is not 32 bytes long.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.Generator(ChaCha20(12345))   # seeded: for tests only
    >>> x = rng.standard_normal(3)
    >>> streams = [ChaCha20(12345).stream(i) for i in range(4)]   # one per worker
    """

    def __init__(self, seed: Any = None, *, key: Any = None) -> None:
        secure = seed is None and key is None
        if key is not None:
            if seed is not None:
                raise TypeError("give seed or key, not both")
            k = _check_key(key)
            seed_seq = _key_seed_seq(k)
        elif seed is None:
            k = os_key()
            seed_seq = _key_seed_seq(k)
        else:
            seed_seq = _as_seed_seq(seed)
            k = np.asarray(seed_seq.generate_state(8, np.uint32), dtype="<u4").tobytes()
        super().__init__(seed_seq)
        self._init_state(k, secure)

    def _init_state(self, key: bytes, secure: bool) -> None:
        self._bg = _R.BitGen(key, 0)
        self._capsule = self._bg.capsule()
        self._secure = secure
        self._forked = False
        if secure:
            _SECURE.add(self)

    @classmethod
    def _from_key(cls, key: bytes, secure: bool) -> ChaCha20:
        obj = cls(key=key)
        if secure:
            obj._secure = True
            _SECURE.add(obj)
        return obj

    # -- numpy's interface ---------------------------------------------------------------------------
    @property
    def capsule(self) -> Any:
        """numpy's ``bitgen_t`` for this stream, in a PyCapsule named "BitGenerator"."""
        return self._capsule

    @property
    def ctypes(self) -> Any:
        """numpy's ``interface`` named tuple of ctypes objects (state, next_uint64, ...), as PCG64's."""
        s = _BitGenT.from_address(self._bg.address)
        return _Interface(s.state, ctypes.c_void_p(s.state), s.next_uint64, s.next_uint32, s.next_double,
                          ctypes.c_void_p(self._bg.address))

    @property
    def cffi(self) -> Any:
        """Not provided: use :attr:`ctypes` or :attr:`capsule`."""
        raise NotImplementedError("ChaCha20 offers the ctypes and capsule interfaces, not cffi")

    def random_raw(self, size: Any = None, output: bool = True) -> Any:
        """The next 64-bit words of the stream, as numpy's ``BitGenerator.random_raw``.

        ``size=None`` gives one int; an int or tuple gives a uint64 array of that shape. With
        ``output=False`` the words are drawn and dropped (returns None).
        """
        dims = check_size(size)
        shape: tuple[int, ...] = () if dims is None else dims
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        with self.lock:
            words = self._bg.random_raw(n)
        if not output:
            return None
        return int(words[0]) if size is None else words.reshape(shape)

    def _benchmark(self, cnt: int, method: str = "uint64") -> None:
        self.random_raw(cnt, output=False)

    @property
    def state(self) -> dict[str, Any]:
        """The position in the stream: key, stream id, block and 64-bit word within it (contains the key)."""
        with self.lock:
            key, stream, block, word, has_uint32, uinteger = self._bg.get_state()
        return {
            "bit_generator": type(self).__name__,
            "state": {"key": key, "stream": stream, "block": block, "word": word},
            "has_uint32": int(has_uint32),
            "uinteger": int(uinteger),
        }

    @state.setter
    def state(self, value: Mapping[str, Any]) -> None:
        if not isinstance(value, Mapping):
            raise TypeError(f"state must be a dict, not {type(value).__name__}")
        if value.get("bit_generator") != type(self).__name__:
            raise ValueError(f"state must be for the {type(self).__name__} bit generator, got {value.get('bit_generator')!r}")
        try:
            inner = value["state"]
            key = _check_key(inner["key"])
            stream = self._uint(inner["stream"], "state['state']['stream']", _UINT64_MAX - 1)
            block = self._uint(inner["block"], "state['state']['block']", _UINT64_MAX)
            word = self._uint(inner["word"], "state['state']['word']", 7)
            has_uint32 = self._uint(value.get("has_uint32", 0), "state['has_uint32']", 1)
            uinteger = self._uint(value.get("uinteger", 0), "state['uinteger']", 0xFFFFFFFF)
        except KeyError as exc:
            raise ValueError(f"state is missing the entry {exc}") from None
        with contextlib.nullcontext() if self._forked else self.lock:
            self._bg.set_state(key, stream, block, word, bool(has_uint32), uinteger)

    @staticmethod
    def _uint(v: Any, name: str, high: int) -> int:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an int, not {type(v).__name__}")
        if not 0 <= int(v) <= high:
            raise ValueError(f"{name} must lie in [0, {high}], got {int(v)}")
        return int(v)

    # -- streams -------------------------------------------------------------------------------------
    def stream(self, i: int) -> ChaCha20:
        """The independent generator for partition or task ``i`` (0 <= i < 2**64 - 1).

        Its key is a ChaCha20 output of (this key, i): the same key and ``i`` always give the same
        stream, whatever this generator has drawn; different ``i`` give unrelated keys. It equals
        ``pydp_core.random.Random.stream(i)`` for the same key. Derive streams in one thread before
        handing them out.
        """
        child_key = self._bg.spawn_key(check_int(i, "i", 0, (1 << 64) - 2))
        return ChaCha20._from_key(child_key, self._secure)

    def spawn(self, n_children: int) -> list[ChaCha20]:
        """``n_children`` new independent generators from ``seed_seq.spawn`` (numpy's convention).

        Successive calls give new children. Children of a generator keyed by the operating system are
        re-keyed after ``os.fork()`` like their parent.
        """
        if isinstance(n_children, (bool, np.bool_)) or not isinstance(n_children, (int, np.integer)):
            raise TypeError(f"n_children must be an int, not {type(n_children).__name__}")
        if n_children < 0:
            raise ValueError(f"n_children must be >= 0, got {n_children}")
        children = [ChaCha20(seed=s) for s in self.seed_seq.spawn(int(n_children))]  # type: ignore[attr-defined]  # numpy types seed_seq as ISeedSequence; ours is a SeedSequence
        if self._secure:
            for c in children:
                c._secure = True
                _SECURE.add(c)
        return children

    def _rekey(self) -> None:
        """A fresh key from the operating system, in place (numpy Generators keep working).

        Runs in a forked child, which has one thread: the lock is not taken (another thread of the parent
        may have held it at the fork, and it would never be released here).
        """
        key = os_key()
        self._forked = True
        try:
            # numpy.random.BitGenerator defines __setstate__ in C, which its stubs do not declare.
            self.__setstate__(({"bit_generator": type(self).__name__,  # type: ignore[attr-defined]
                                "state": {"key": key, "stream": 0, "block": 0, "word": 0}},
                               _key_seed_seq(key)))
        finally:
            self._forked = False

    def __repr__(self) -> str:
        kind = "secure" if self._secure else "seeded (not for releases)"
        return f"ChaCha20({kind})"
