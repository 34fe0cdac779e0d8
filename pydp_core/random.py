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
:meth:`Random.arsinh_normal` (the tCDP sinh-normal noise of paper 003) and :meth:`Random.sphere`
(uniform directions on S^{d-1}). They run in C++ with the GIL released, on ``threads`` threads, in fixed
chunks of ``CHUNK`` values: for a given seed the output is bit-identical for every thread count.

Streams: ``rng.stream(i)`` is an independent generator for partition or task ``i``, a function of
(key, i) only. Successive calls on one generator never reuse randomness: every bulk call reserves fresh
chunks of the ChaCha20 counter space.

Interoperability: wherever pydp_core accepts a generator (the ``rng=`` arguments), it accepts ``None``
(a fresh secure :class:`Random`), a :class:`Random`, or a ``numpy.random.Generator``. A numpy generator is
used as a key source: 32 bytes drawn from it key a ChaCha20 stream (:func:`as_random`), so results are
reproducible from the numpy seed, and exactly as (in)secure as numpy's bit generator: not for releases.

For other pydp_core modules: ``rng._gen`` is the C++ ``pydp::random::Generator``
(``_core.random.Generator``); a binding that takes ``pydp::random::Generator&`` accepts it directly. Use
:func:`as_random` (``as_random(rng)._gen``) to accept every generator form.

Floating-point noise is not safe against least-significant-bit attacks (Mironov 2012): see
:mod:`pydp_core.mechanisms`.
"""
from __future__ import annotations

import hashlib
import numbers
import operator
import os
import weakref
from typing import Any

import numpy as np

from . import _core
from ._validation import as_float_array, check_threads

__all__ = ["Random", "as_random", "CHUNK"]

_R = _core.random

#: Values per fixed chunk of bulk output (part of the stream layout of seeded generators).
CHUNK: int = int(_R.CHUNK)

_UINT64_MAX = (1 << 64) - 1


# ------------------------------------------------------------------------------------------------------
# Keys, seeds and threads
# ------------------------------------------------------------------------------------------------------
def _os_key() -> bytes:
    getrandom = getattr(os, "getrandom", None)
    if getrandom is not None:
        key = getrandom(32)  # blocks until the kernel pool is initialised, never returns short reads here
        if len(key) == 32:
            return key
    return os.urandom(32)


def _key_from_seed(seed: Any) -> bytes:
    """SHA-256 of a type-tagged seed: int 1 and bytes b'\\x01' give different streams."""
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("seed must be None, a non-negative int or bytes, not bool")
    if isinstance(seed, (int, np.integer)):
        value = int(seed)
        if value < 0:
            raise ValueError(f"seed must be >= 0, got {value}")
        raw = value.to_bytes((value.bit_length() + 7) // 8 or 1, "little")
        return hashlib.sha256(b"pydp_core.Random:int:" + raw).digest()
    if isinstance(seed, (bytes, bytearray, memoryview)):
        return hashlib.sha256(b"pydp_core.Random:bytes:" + bytes(seed)).digest()
    raise TypeError(f"seed must be None, a non-negative int or bytes, not {type(seed).__name__}")


def _check_threads(threads: Any) -> int:
    """0 means all cores."""
    return check_threads(threads)


def _check_index(i: Any, name: str) -> int:
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(i).__name__}")
    v = int(i)
    if not 0 <= v < _UINT64_MAX:
        raise ValueError(f"{name} must lie in [0, 2**64 - 1), got {v}")
    return v


# ------------------------------------------------------------------------------------------------------
# Argument handling shared by the samplers
# ------------------------------------------------------------------------------------------------------
_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _check_dtype(dtype: Any) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be float64 or float32, not {dtype!r}") from None
    if dt not in _DTYPES:
        raise TypeError(f"dtype must be float64 or float32, not {dt}")
    return dt


def _check_size(size: Any) -> tuple[int, ...] | None:
    if size is None:
        return None
    if isinstance(size, (bool, np.bool_)):
        raise TypeError("size must be None, an int or a tuple of ints, not bool")
    try:
        dims = (operator.index(size),)
    except TypeError:
        try:
            dims = tuple(operator.index(s) for s in size)
        except TypeError:
            raise TypeError(f"size must be None, an int or a tuple of ints, not {size!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"size must not be negative, got {size!r}")
    return dims


def _param(value: Any, name: str, *, low: float | None = None, strict: bool = False, finite: bool = True) -> np.ndarray:
    """A float64 parameter (scalar or array) checked for NaN, finiteness and a lower bound, naming it."""
    arr = as_float_array(value, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    if low is not None:
        bad = (arr <= low) if strict else (arr < low)
        if bad.any():
            raise ValueError(f"{name} must be {'>' if strict else '>='} {low:g}")
    return arr


def _scalar(arr: np.ndarray, name: str) -> float:
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a scalar")
    return float(arr)


def _prepare_out(shape: tuple[int, ...] | None, dtype: np.dtype, out: Any, size_given: bool) -> np.ndarray:
    if out is None:
        return np.empty(() if shape is None else shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"out has dtype {out.dtype} but dtype is {dtype} (they must match)")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("out must be writeable")
    if size_given and shape is not None and out.shape != shape:
        raise ValueError(f"out has shape {out.shape} but size is {shape}")
    return out


# Secure (OS-keyed) C++ generators alive in this process. A fork copies them with their key and buffered
# words; the child re-keys every one of them at once from OS entropy (the kernel would also re-key each
# on its next keystream block, but words already buffered must not be served twice).
_SECURE: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _rekey_after_fork() -> None:
    for gen in list(_SECURE):
        gen.ensure_owner()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_rekey_after_fork)


class Random:
    """A ChaCha20 counter-based random generator (secure by default) with bulk, multi-threaded samplers.

    Parameters
    ----------
    seed:
        ``None`` (the default): a fresh 256-bit key from the operating system's entropy (``getrandom``);
        the stream is cryptographically secure and cannot be reproduced: use this for releases.
        An ``int`` (>= 0) or ``bytes``: a reproducible stream keyed by SHA-256 of the seed. Seeded streams
        are for tests, simulations and benchmarks, **not for releases**.

        Processes: a secure generator copied by ``os.fork()`` (a multiprocessing "fork" pool, a server
        that preloads the application, a module-level generator) takes a fresh OS key in the child, so
        parent and children never draw the same noise; its streams (:meth:`stream`) do the same. A
        seeded generator keeps its documented determinism: a forked copy continues the same stream, so
        every process draws the same values unless each takes its own :meth:`stream`.
    threads:
        Worker threads for bulk sampling; ``None`` uses all cores. Work is split into fixed chunks of
        :data:`CHUNK` values, so the output is bit-identical for every thread count.

    Attributes
    ----------
    _gen:
        The C++ generator (``pydp_core._core.random.Generator``, ``pydp::random::Generator`` in C++) for
        other pydp_core bindings. Users do not need it.
    _threads:
        The thread count as an int for the bindings: 0 means all cores.
    """

    __slots__ = ("_gen", "_threads", "_seeded")

    def __init__(self, seed: int | bytes | None = None, threads: int | None = None) -> None:
        self._threads = _check_threads(threads)
        self._seeded = seed is not None
        if seed is None:
            self._gen = _R.Generator(_os_key(), 0, secure=True)
            _SECURE.add(self._gen)
        else:
            self._gen = _R.Generator(_key_from_seed(seed), 0)

    @classmethod
    def _wrap(cls, gen: Any, threads: int, seeded: bool) -> "Random":
        obj = cls.__new__(cls)
        obj._gen = gen
        if gen.secure:
            _SECURE.add(gen)
        obj._threads = threads
        obj._seeded = seeded
        return obj

    # -- properties and streams --------------------------------------------------------------------
    @property
    def threads(self) -> int | None:
        """Worker threads (``None``: all cores)."""
        return None if self._threads == 0 else self._threads

    @property
    def seeded(self) -> bool:
        """True for a reproducible (seeded, not-for-release) stream."""
        return self._seeded

    def stream(self, i: int) -> "Random":
        """The independent generator for partition or task ``i`` (0 <= i < 2**64 - 1).

        It is derived from (key, i) only: the same seed and ``i`` always give the same stream, whatever
        this generator has drawn so far; different ``i`` give unrelated keys. Derive streams in one
        thread before handing them out.
        """
        return Random._wrap(self._gen.spawn(_check_index(i, "i")), self._threads, self._seeded)

    def with_threads(self, threads: int | None) -> "Random":
        """This generator (sharing its state) with a different number of worker threads."""
        return Random._wrap(self._gen, _check_threads(threads), self._seeded)

    def __repr__(self) -> str:
        kind = "seeded (not for releases)" if self._seeded else "secure"
        return f"Random({kind}, threads={self.threads})"

    # -- raw output --------------------------------------------------------------------------------
    def random_raw(self, size: int) -> np.ndarray:
        """The next ``size`` 64-bit words of the stream (uint64), sequentially."""
        n = _check_size(size)
        if n is None or len(n) != 1:
            raise TypeError("size must be an int")
        return self._gen.random_raw(n[0])

    # -- samplers ----------------------------------------------------------------------------------
    def _run(self, kernel, params: dict[str, np.ndarray], scalar_args: tuple, size, dtype, out):
        """Shared driver: scalar parameters go to C++ fused; array ones are applied as loc + scale * X."""
        dt = _check_dtype(dtype)
        shape = _check_size(size)
        arrays = {k: v for k, v in params.items() if v.ndim > 0}
        if arrays:
            try:
                bshape = np.broadcast_shapes(*(v.shape for v in arrays.values()))
            except ValueError:
                shapes = ", ".join(f"{k} {v.shape}" for k, v in arrays.items())
                raise ValueError(f"parameters cannot be broadcast together: {shapes}") from None
            if shape is None:
                shape = tuple(out.shape) if isinstance(out, np.ndarray) else bshape
            else:
                try:
                    if np.broadcast_shapes(bshape, shape) != shape:
                        raise ValueError
                except ValueError:
                    raise ValueError(f"size {shape} is not compatible with the parameter shape {bshape}") from None
        elif shape is None and isinstance(out, np.ndarray):
            shape = tuple(out.shape)
        res = _prepare_out(shape, dt, out, size is not None)
        kernel(res, scalar_args, bool(arrays))
        if arrays:
            loc = params.get("loc")
            scale = params.get("scale")
            if scale is not None:
                np.multiply(res, scale.astype(dt, copy=False), out=res, casting="unsafe")
            if loc is not None:
                np.add(res, loc.astype(dt, copy=False), out=res, casting="unsafe")
        if shape is None and out is None:
            return float(res)
        return res

    def _affine(self, name: str, loc, scale, size, dtype, out):
        loc_a = _param(loc, "loc")
        scale_a = _param(scale, "scale", low=0.0)
        fn = getattr(_R, name)

        def kernel(res, _args, arrays):
            if arrays:
                fn(self._gen, res, 0.0, 1.0, self._threads)
            else:
                fn(self._gen, res, float(loc_a), float(scale_a), self._threads)

        return self._run(kernel, {"loc": loc_a, "scale": scale_a}, (), size, dtype, out)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64, out=None):
        """Normal noise N(loc, scale^2) (scale is the standard deviation, as in numpy)."""
        return self._affine("normal", loc, scale, size, dtype, out)

    def laplace(self, loc=0.0, scale=1.0, size=None, dtype=np.float64, out=None):
        """Laplace noise with density exp(-|x - loc| / scale) / (2 scale)."""
        return self._affine("laplace", loc, scale, size, dtype, out)

    def logistic(self, loc=0.0, scale=1.0, size=None, dtype=np.float64, out=None):
        """Logistic noise with CDF 1 / (1 + exp(-(x - loc) / scale))."""
        return self._affine("logistic", loc, scale, size, dtype, out)

    def subbotin(self, r, loc=0.0, scale=1.0, size=None, dtype=np.float64, out=None):
        """Subbotin_r noise: loc + scale * X with X of density exp(-|x|^r / r) / C(r), r >= 1.

        ``r = 1`` is the Laplace and ``r = 2`` the standard normal (pydp_core.Subbotin(r) is the density).
        Sampled as X = sign * (r G)^(1/r), G ~ Gamma(1/r) (Marsaglia-Tsang with the shape < 1 boost).
        """
        rr = _param(r, "r", low=1.0)
        r_val = _scalar(rr, "r")
        loc_a = _param(loc, "loc")
        scale_a = _param(scale, "scale", low=0.0)

        def kernel(res, _args, arrays):
            if arrays:
                _R.subbotin(self._gen, res, r_val, 0.0, 1.0, self._threads)
            else:
                _R.subbotin(self._gen, res, r_val, float(loc_a), float(scale_a), self._threads)

        return self._run(kernel, {"loc": loc_a, "scale": scale_a}, (), size, dtype, out)

    def exponential(self, scale=1.0, size=None, dtype=np.float64, out=None):
        """Exponential variates with mean ``scale``."""
        scale_a = _param(scale, "scale", low=0.0)

        def kernel(res, _args, arrays):
            _R.exponential(self._gen, res, 1.0 if arrays else float(scale_a), self._threads)

        return self._run(kernel, {"scale": scale_a}, (), size, dtype, out)

    def gamma(self, shape, scale=1.0, size=None, dtype=np.float64, out=None):
        """Gamma(shape, scale) variates (Marsaglia-Tsang; shape < 1 by the U^(1/shape) boost)."""
        k = _scalar(_param(shape, "shape", low=0.0, strict=True), "shape")
        scale_a = _param(scale, "scale", low=0.0)

        def kernel(res, _args, arrays):
            _R.gamma(self._gen, res, k, 1.0 if arrays else float(scale_a), self._threads)

        return self._run(kernel, {"scale": scale_a}, (), size, dtype, out)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64, out=None):
        """Uniform variates on [low, high) (53 random bits per value)."""
        lo = _param(low, "low")
        hi = _param(high, "high")
        if lo.ndim == 0 and hi.ndim == 0:
            if not np.isfinite(float(hi) - float(lo)):
                raise ValueError("high - low must be finite")

            def kernel(res, _args, arrays):
                _R.uniform(self._gen, res, float(lo), float(hi), self._threads)

            return self._run(kernel, {}, (), size, dtype, out)
        width = hi - lo
        if not np.isfinite(width).all():
            raise ValueError("high - low must be finite")

        def kernel_arr(res, _args, arrays):
            _R.uniform(self._gen, res, 0.0, 1.0, self._threads)

        return self._run(kernel_arr, {"loc": lo, "scale": width}, (), size, dtype, out)

    def arsinh_normal(self, A, sigma, loc=0.0, size=None, dtype=np.float64, out=None):
        """The tCDP arsinh-normal noise of paper 003: loc + A * asinh(Z / A), Z ~ N(0, sigma^2).

        With Z ~ N(0, D^2 / (2 rho0)) and A = 8 D omega the mechanism is (16 rho0, omega)-tCDP for l2
        sensitivity D; :func:`pydp_core.arsinh_parameters` returns (A, sigma) for a target
        ``TCDP(rho, omega)``: ``rng.arsinh_normal(*dp.arsinh_parameters(dp.TCDP(rho, omega), D), size=n)``.
        """
        a = _scalar(_param(A, "A", low=0.0, strict=True), "A")
        s = _scalar(_param(sigma, "sigma", low=0.0), "sigma")
        loc_a = _param(loc, "loc")

        def kernel(res, _args, arrays):
            _R.arsinh_normal(self._gen, res, a, s, 0.0 if arrays else float(loc_a), self._threads)

        return self._run(kernel, {"loc": loc_a}, (), size, dtype, out)

    def sphere(self, d: int, size=None, dtype=np.float64, out=None) -> np.ndarray:
        """Unit vectors uniform on the sphere S^{d-1} in R^d: an array of shape (*size, d).

        Each is a standard normal vector divided by its norm.
        """
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"d must be an int, not {type(d).__name__}")
        dim = int(d)
        if dim < 1:
            raise ValueError(f"d must be >= 1, got {dim}")
        dt = _check_dtype(dtype)
        shape = _check_size(size)
        full = (dim,) if shape is None else (*shape, dim)
        if out is None:
            res = np.empty(full, dtype=dt)
        else:
            res = _prepare_out(full, dt, out, True)
        _R.sphere(self._gen, res, self._threads)
        return res


def as_random(rng: Any = None) -> Random:
    """The :class:`Random` behind any accepted generator argument.

    - ``None``: a fresh secure generator (OS entropy);
    - a :class:`Random`: itself;
    - a ``numpy.random.Generator``: a ChaCha20 stream keyed by 32 bytes drawn from it (this advances the
      numpy generator). The result is reproducible from the numpy seed and no more secure than numpy's
      bit generator: not for releases.

    Anything else (including an int seed: write ``Random(seed)`` to make the opt-in explicit) is a
    TypeError naming ``rng``.
    """
    if rng is None:
        return Random()
    if isinstance(rng, Random):
        return rng
    if isinstance(rng, np.random.Generator):
        key = rng.bytes(32)
        return Random._wrap(_R.Generator(hashlib.sha256(b"pydp_core.Random:numpy:" + key).digest(), 0), 0, True)
    raise TypeError(
        "rng must be None, a pydp_core.Random or a numpy.random.Generator "
        f"(for a seeded stream pass pydp_core.Random(seed)), not {type(rng).__name__}"
    )
