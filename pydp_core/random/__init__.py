"""Bulk noise generation: a ChaCha20 counter-based generator, secure by default, multi-threaded.

:class:`Random` is the generator object. ``Random()`` (no seed) takes a fresh 256-bit key from the
operating system (``getrandom``) and produces its stream with ChaCha20, a cryptographically secure
stream cipher (verified against the RFC 8439 test vectors): this is the generator to use for releases.
``Random(seed)`` with an ``int`` or ``bytes`` seed gives a reproducible stream. **A seeded stream is for
tests, simulations and benchmarks, never for releases**: anyone who knows or guesses the seed knows the
noise.

Samplers follow numpy's ``Generator`` conventions (``loc``, ``scale``, ``size``, ``dtype``, ``out``):
:meth:`Random.normal`, :meth:`Random.laplace`, :meth:`Random.logistic`, :meth:`Random.subbotin`,
:meth:`Random.gamma`, :meth:`Random.uniform`, :meth:`Random.exponential`,
:meth:`Random.arsinh_normal` (the tCDP arsinh-normal noise of Bun et al. 2018) and :meth:`Random.sphere`
(uniform directions on S^{d-1}). They run in C++ with the GIL released, on ``threads`` threads, in fixed
chunks of ``CHUNK`` values: for a given seed the output is bit-identical for every thread count.

Streams: ``rng.stream(i)`` is an independent generator for partition or task ``i``, a function of
(key, i) only. Successive calls on one generator never reuse randomness: every bulk call reserves fresh
chunks of the ChaCha20 counter space.

Interoperability: wherever pydp_core accepts a generator (the ``rng=`` arguments), it accepts ``None``
(a fresh secure :class:`Random`), a :class:`Random`, or a ``numpy.random.Generator``. A numpy generator is
used as a key source: 32 bytes drawn from it key a ChaCha20 stream (:func:`as_random`), so results are
reproducible from the numpy seed, and exactly as (in)secure as numpy's bit generator: not for releases.

For other pydp_core modules: ``rng.kernel`` is the C++ ``pydp::random::Generator``
(``_core.random.Generator``) and ``rng.kernel_threads`` its thread count; a binding that takes
``pydp::random::Generator&`` accepts the kernel directly. Use :func:`as_random` (``as_random(rng).kernel``)
to accept every generator form.

Floating-point noise is not safe against least-significant-bit attacks (Mironov 2012): see
:mod:`pydp_core.mechanisms`. The construction, the chunking and the tests are in docs/random.md.
"""
from __future__ import annotations

from .bitgen import ChaCha20
from .generator import CHUNK, Random, as_random

__all__ = ["Random", "as_random", "ChaCha20", "CHUNK"]
