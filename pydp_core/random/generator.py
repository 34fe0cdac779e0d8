"""The ChaCha20 generator :class:`Random` and its samplers (see :mod:`pydp_core.random`)."""
from __future__ import annotations

import hashlib
import math
import os
import weakref
from typing import Any, Callable, Union, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._arrays import accepts_arrays
from .._core import random as _R
from .._validation import (
    as_scalar,
    check_finite,
    check_float_dtype,
    check_int,
    check_lower_bounded,
    check_out,
    check_size,
    check_threads,
)

__all__ = ["Random", "as_random", "CHUNK"]

#: Values per fixed chunk of bulk output (part of the stream layout of seeded generators).
CHUNK: int = int(_R.CHUNK)

_UINT64_MAX = (1 << 64) - 1

#: numpy-style output size: None (one value), an int or a tuple of ints.
Size = Union[int, tuple[int, ...], None]


# ------------------------------------------------------------------------------------------------------
# Keys, seeds and threads
# ------------------------------------------------------------------------------------------------------
def os_key() -> bytes:
    getrandom = getattr(os, "getrandom", None)
    if getrandom is not None:
        key = getrandom(32)  # blocks until the kernel pool is initialised, never returns short reads here
        if len(key) == 32:
            return bytes(key)
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


def _threads(threads: Any) -> int:
    """The thread count for the bindings: ``None`` (all cores) is 0."""
    return check_threads(threads)


# Secure (OS-keyed) C++ generators alive in this process. A fork copies them with their key and buffered
# words; the child re-keys every one of them at once from OS entropy (the kernel would also re-key each on
# its next keystream block, but words already buffered must not be served twice).
_SECURE: weakref.WeakSet[Any] = weakref.WeakSet()

#: The largest scale a sampler accepts: every unit-scale draw is below 1e8 in magnitude, so scaled draws
#: stay finite (a larger scale would return +-inf). float32 draws are limited in proportion to their range.
MAX_SCALE = 1e300
_MAX_SCALE_BY_DTYPE = {np.dtype(np.float64): MAX_SCALE, np.dtype(np.float32): 1e30}


def _check_scale_range(scale: np.ndarray, dt: np.dtype, largest_unit_draw: float = 1e8) -> None:
    """Refuse a scale whose draws (at most ``largest_unit_draw`` times the scale) overflow ``dt``."""
    if not np.size(scale):
        return
    limit = _MAX_SCALE_BY_DTYPE[dt] * (1e8 / largest_unit_draw)
    if float(np.max(scale)) > limit:
        raise ValueError(f"scale must be at most {limit:g} for {dt} draws here: larger scales overflow its range")


def _rekey_after_fork() -> None:
    for gen in list(_SECURE):
        gen.ensure_owner()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_rekey_after_fork)


class Random:
    """A ChaCha20 counter-based random generator (secure by default) with bulk, multi-threaded samplers.

    Parameters
    ----------
    seed : None, int or bytes, optional
        ``None`` (the default): a fresh 256-bit key from the operating system's entropy (``getrandom``);
        the stream is cryptographically secure and cannot be reproduced: use this for releases.
        An ``int`` (>= 0) or ``bytes``: a reproducible stream keyed by SHA-256 of the type-tagged seed.
        Seeded streams are for tests, simulations and benchmarks, **not for releases**.

        Processes: a secure generator copied by ``os.fork()`` (a multiprocessing "fork" pool, a server that
        preloads the application, a module-level generator) takes a fresh OS key in the child, so parent and
        children never draw the same noise; its streams (:meth:`stream`) do the same. A seeded generator keeps
        its documented determinism: a forked copy continues the same stream, so every process draws the same
        values unless each takes its own :meth:`stream`.
    threads : int, optional
        Worker threads for bulk sampling (>= 1); ``None`` uses all cores. Work is split into fixed chunks
        of :data:`CHUNK` values, so the output is bit-identical for every thread count.

    Raises
    ------
    TypeError
        If ``seed`` is not None, an int or bytes, or ``threads`` is not an int.
    ValueError
        If ``seed`` is negative or ``threads < 1``.

    Notes
    -----
    Other pydp_core bindings take the C++ generator :attr:`kernel` (``pydp::random::Generator``) and the
    thread count :attr:`kernel_threads` (0 for all cores); :func:`as_random` gives them for every accepted
    ``rng`` argument. The construction and its tests are in docs/random.md.

    Examples
    --------
    >>> import pydp_core as dp
    >>> dp.Random()
    Random(secure, threads=None)
    >>> sim = dp.Random(42, threads=2)
    >>> sim
    Random(seeded (not for releases), threads=2)
    >>> x = sim.normal(0.0, 2.0, size=1000)
    >>> x.shape, x.dtype
    ((1000,), dtype('float64'))
    >>> bool(np.array_equal(dp.Random(1, threads=1).laplace(size=5000), dp.Random(1, threads=4).laplace(size=5000)))
    True
    """

    __slots__ = ("_gen", "_threads", "_seeded")

    def __init__(self, seed: int | bytes | None = None, threads: int | None = None) -> None:
        self._threads = _threads(threads)
        self._seeded = seed is not None
        if seed is None:
            self._gen = _R.Generator(os_key(), 0, secure=True)
            _SECURE.add(self._gen)
        else:
            self._gen = _R.Generator(_key_from_seed(seed), 0)

    @classmethod
    def _wrap(cls, gen: Any, threads: int, seeded: bool) -> Random:
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

    @property
    def kernel(self) -> Any:
        """The C++ ``pydp::random::Generator`` (``_core.random.Generator``) that the bindings take."""
        return self._gen

    @property
    def kernel_threads(self) -> int:
        """The thread count the bindings take: :attr:`threads`, with 0 for all cores."""
        return self._threads

    @classmethod
    def from_secret_key(cls, key: bytes, threads: int | None = None) -> Random:
        """The stream keyed by the secret bytes ``key`` (a release key, not a public seed): not :attr:`seeded`.

        The stream is the one ``Random(key, threads)`` gives; only the label differs, because whoever
        knows no key cannot reproduce it.
        """
        rng = cls(key, threads)
        return cls._wrap(rng._gen, rng._threads, False)

    def stream(self, i: int) -> Random:
        """The independent generator for partition or task ``i`` (0 <= i < 2**64 - 1).

        It is derived from (key, i) only: the same seed and ``i`` always give the same stream, whatever
        this generator has drawn so far; different ``i`` give unrelated keys. Derive streams in one
        thread before handing them out.
        """
        index = check_int(i, "i", 0, _UINT64_MAX - 1)
        return Random._wrap(self._gen.spawn(index), self._threads, self._seeded)

    def with_threads(self, threads: int | None) -> Random:
        """This generator (sharing its state) with a different number of worker threads."""
        return Random._wrap(self._gen, _threads(threads), self._seeded)

    def __repr__(self) -> str:
        kind = "seeded (not for releases)" if self._seeded else "secure"
        return f"Random({kind}, threads={self.threads})"

    # -- raw output --------------------------------------------------------------------------------
    def random_raw(self, size: int) -> np.ndarray:
        """The next ``size`` 64-bit words of the stream (uint64), sequentially."""
        n = check_size(size)
        if n is None or len(n) != 1:
            raise TypeError("size must be an int")
        return np.asarray(self._gen.random_raw(n[0]))

    # -- samplers ----------------------------------------------------------------------------------
    def _run(self, kernel: Callable[[np.ndarray, bool], None], params: dict[str, np.ndarray], size: Size,
             dtype: DTypeLike, out: np.ndarray | None, largest: float = 1e8) -> Any:
        """Shared driver: scalar parameters go to C++ fused; array ones are applied as loc + scale * X.
        ``largest`` bounds the unit-scale draws in magnitude (1e8 unless the law's range depends on a
        shape parameter)."""
        dt = check_float_dtype(dtype)
        shape = check_size(size)
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
        scale_p = params.get("scale")
        if scale_p is not None:
            _check_scale_range(scale_p, dt, largest)
        loc_p = params.get("loc")
        if loc_p is not None and np.size(loc_p) and float(np.max(np.abs(loc_p))) > float(np.finfo(dt).max):
            raise ValueError(f"loc must be within the range of {dt} (|loc| <= {float(np.finfo(dt).max):g})")
        res = check_out(out, shape, dt, size_given=size is not None)
        kernel(res, bool(arrays))
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

    def _affine(self, name: str, loc: ArrayLike, scale: ArrayLike, size: Size, dtype: DTypeLike,
                out: np.ndarray | None) -> Any:
        loc_a = check_finite(loc, "loc")
        scale_a = check_lower_bounded(scale, "scale", 0.0)
        fn = getattr(_R, name)

        def kernel(res: np.ndarray, arrays: bool) -> None:
            if arrays:
                fn(self._gen, res, 0.0, 1.0, self._threads)
            else:
                fn(self._gen, res, float(loc_a), float(scale_a), self._threads)

        return self._run(kernel, {"loc": loc_a, "scale": scale_a}, size, dtype, out)

    @overload
    def normal(self, loc: float = ..., scale: float = ..., size: None = ..., dtype: DTypeLike = ...,
               out: None = ...) -> float: ...
    @overload
    def normal(self, loc: ArrayLike = ..., scale: ArrayLike = ..., size: Size = ..., dtype: DTypeLike = ...,
               out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("loc", "scale", "out")
    def normal(self, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0, size: Size = None, dtype: DTypeLike = np.float64,
               out: np.ndarray | None = None) -> Any:
        """Normal noise N(loc, scale^2) (``scale`` is the standard deviation, as in numpy)."""
        return self._affine("normal", loc, scale, size, dtype, out)

    @overload
    def laplace(self, loc: float = ..., scale: float = ..., size: None = ..., dtype: DTypeLike = ...,
                out: None = ...) -> float: ...
    @overload
    def laplace(self, loc: ArrayLike = ..., scale: ArrayLike = ..., size: Size = ..., dtype: DTypeLike = ...,
                out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("loc", "scale", "out")
    def laplace(self, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0, size: Size = None, dtype: DTypeLike = np.float64,
                out: np.ndarray | None = None) -> Any:
        """Laplace noise with density exp(-|x - loc| / scale) / (2 scale)."""
        return self._affine("laplace", loc, scale, size, dtype, out)

    @overload
    def logistic(self, loc: float = ..., scale: float = ..., size: None = ..., dtype: DTypeLike = ...,
                 out: None = ...) -> float: ...
    @overload
    def logistic(self, loc: ArrayLike = ..., scale: ArrayLike = ..., size: Size = ..., dtype: DTypeLike = ...,
                 out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("loc", "scale", "out")
    def logistic(self, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0, size: Size = None, dtype: DTypeLike = np.float64,
                 out: np.ndarray | None = None) -> Any:
        """Logistic noise with CDF 1 / (1 + exp(-(x - loc) / scale))."""
        return self._affine("logistic", loc, scale, size, dtype, out)

    @overload
    def subbotin(self, r: float, loc: float = ..., scale: float = ..., size: None = ..., dtype: DTypeLike = ...,
                 out: None = ...) -> float: ...
    @overload
    def subbotin(self, r: float, loc: ArrayLike = ..., scale: ArrayLike = ..., size: Size = ...,
                 dtype: DTypeLike = ..., out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("loc", "scale", "out")
    def subbotin(self, r: float, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0, size: Size = None,
                 dtype: DTypeLike = np.float64, out: np.ndarray | None = None) -> Any:
        """Subbotin_r noise: loc + scale * X with X of density ``exp(-|x|^r / r) / C(r)``, r >= 1.

        ``r = 1`` is the Laplace and ``r = 2`` the standard normal (``pydp_core.Subbotin(r)`` is the
        density). Sampled exactly as X = sign * (r G)^(1/r), G ~ Gamma(1/r) (Marsaglia and Tsang 2000,
        with the U^(1/shape) boost for shapes below 1).
        """
        r_val = as_scalar(check_lower_bounded(r, "r", 1.0), "r")
        loc_a = check_finite(loc, "loc")
        scale_a = check_lower_bounded(scale, "scale", 0.0)

        def kernel(res: np.ndarray, arrays: bool) -> None:
            if arrays:
                _R.subbotin(self._gen, res, r_val, 0.0, 1.0, self._threads)
            else:
                _R.subbotin(self._gen, res, r_val, float(loc_a), float(scale_a), self._threads)

        return self._run(kernel, {"loc": loc_a, "scale": scale_a}, size, dtype, out)

    @overload
    def exponential(self, scale: float = ..., size: None = ..., dtype: DTypeLike = ..., out: None = ...) -> float: ...
    @overload
    def exponential(self, scale: ArrayLike = ..., size: Size = ..., dtype: DTypeLike = ...,
                    out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("scale", "out")
    def exponential(self, scale: ArrayLike = 1.0, size: Size = None, dtype: DTypeLike = np.float64,
                    out: np.ndarray | None = None) -> Any:
        """Exponential variates with mean ``scale``."""
        scale_a = check_lower_bounded(scale, "scale", 0.0)

        def kernel(res: np.ndarray, arrays: bool) -> None:
            _R.exponential(self._gen, res, 1.0 if arrays else float(scale_a), self._threads)

        return self._run(kernel, {"scale": scale_a}, size, dtype, out)

    @overload
    def gamma(self, shape: float, scale: float = ..., size: None = ..., dtype: DTypeLike = ...,
              out: None = ...) -> float: ...
    @overload
    def gamma(self, shape: float, scale: ArrayLike = ..., size: Size = ..., dtype: DTypeLike = ...,
              out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("scale", "out")
    def gamma(self, shape: float, scale: ArrayLike = 1.0, size: Size = None, dtype: DTypeLike = np.float64,
              out: np.ndarray | None = None) -> Any:
        """Gamma(shape, scale) variates (Marsaglia and Tsang 2000; shape < 1 by the U^(1/shape) boost)."""
        k = as_scalar(check_lower_bounded(shape, "shape", 0.0, strict=True), "shape")
        scale_a = check_lower_bounded(scale, "scale", 0.0)

        def kernel(res: np.ndarray, arrays: bool) -> None:
            _R.gamma(self._gen, res, k, 1.0 if arrays else float(scale_a), self._threads)

        # unit-scale draws stay below k + 10 sqrt(k) + 100 (a tail probability far below 2^-64)
        return self._run(kernel, {"scale": scale_a}, size, dtype, out, largest=max(1e8, k + 10.0 * math.sqrt(k) + 100.0))

    @overload
    def uniform(self, low: float = ..., high: float = ..., size: None = ..., dtype: DTypeLike = ...,
                out: None = ...) -> float: ...
    @overload
    def uniform(self, low: ArrayLike = ..., high: ArrayLike = ..., size: Size = ..., dtype: DTypeLike = ...,
                out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("low", "high", "out")
    def uniform(self, low: ArrayLike = 0.0, high: ArrayLike = 1.0, size: Size = None, dtype: DTypeLike = np.float64,
                out: np.ndarray | None = None) -> Any:
        """Uniform variates on [low, high) (53 random bits per value)."""
        lo = check_finite(low, "low")
        hi = check_finite(high, "high")
        with np.errstate(over="ignore"):
            width = hi - lo
        if not np.isfinite(width).all():
            raise ValueError("high - low must be finite")
        top = float(np.finfo(check_float_dtype(dtype)).max)
        if float(np.max(np.abs(lo))) > top or float(np.max(np.abs(hi))) > top:
            raise ValueError(f"low and high must be within the range of {np.dtype(dtype)} (|x| <= {top:g})")
        if lo.ndim == 0 and hi.ndim == 0:

            def kernel(res: np.ndarray, arrays: bool) -> None:
                _R.uniform(self._gen, res, float(lo), float(hi), self._threads)

            return self._run(kernel, {}, size, dtype, out)

        def kernel_arr(res: np.ndarray, arrays: bool) -> None:
            _R.uniform(self._gen, res, 0.0, 1.0, self._threads)

        return self._run(kernel_arr, {"loc": lo, "scale": width}, size, dtype, out)

    @overload
    def arsinh_normal(self, A: float, sigma: float, loc: float = ..., size: None = ..., dtype: DTypeLike = ...,
                      out: None = ...) -> float: ...
    @overload
    def arsinh_normal(self, A: float, sigma: float, loc: ArrayLike = ..., size: Size = ...,
                      dtype: DTypeLike = ..., out: np.ndarray | None = ...) -> np.ndarray: ...
    @accepts_arrays("loc", "out")
    def arsinh_normal(self, A: float, sigma: float, loc: ArrayLike = 0.0, size: Size = None,
                      dtype: DTypeLike = np.float64, out: np.ndarray | None = None) -> Any:
        """The tCDP arsinh-normal noise loc + A * asinh(Z / A), Z ~ N(0, sigma^2) (Bun et al. 2018).

        With Z ~ N(0, D^2 / (2 rho0)) and A = 8 D omega the mechanism is (16 rho0, omega)-tCDP for l2
        sensitivity D (Variants of DP 2019); :func:`pydp_core.arsinh_parameters` returns (A, sigma) for a
        target ``TCDP(rho, omega)``: ``rng.arsinh_normal(*dp.arsinh_parameters(dp.TCDP(rho, omega), D), size=n)``.
        """
        a = as_scalar(check_lower_bounded(A, "A", 0.0, strict=True), "A")
        s = as_scalar(check_lower_bounded(sigma, "sigma", 0.0), "sigma")
        loc_a = check_finite(loc, "loc")

        def kernel(res: np.ndarray, arrays: bool) -> None:
            _R.arsinh_normal(self._gen, res, a, s, 0.0 if arrays else float(loc_a), self._threads)

        return self._run(kernel, {"loc": loc_a}, size, dtype, out)

    @accepts_arrays("out")
    def sphere(self, d: int, size: Size = None, dtype: DTypeLike = np.float64,
               out: np.ndarray | None = None) -> np.ndarray:
        """Unit vectors uniform on the sphere S^{d-1} in R^d: an array of shape ``(*size, d)``.

        Each is a standard normal vector divided by its norm.
        """
        dim = check_int(d, "d", 1)
        dt = check_float_dtype(dtype)
        shape = check_size(size)
        full = (dim,) if shape is None else (*shape, dim)
        res = check_out(out, full, dt, size_given=True)
        _R.sphere(self._gen, res, self._threads)
        return res


def as_random(rng: Any = None) -> Random:
    """The :class:`Random` behind any accepted generator argument.

    Parameters
    ----------
    rng : None, Random or numpy.random.Generator, optional
        ``None``: a fresh secure generator (OS entropy); a :class:`Random`: itself; a
        ``numpy.random.Generator``: a ChaCha20 stream keyed by SHA-256 of 32 bytes drawn from it (this
        advances the numpy generator). The result is then reproducible from the numpy seed and no more
        secure than numpy's bit generator: not for releases.

    Returns
    -------
    Random
        The generator to draw from.

    Raises
    ------
    TypeError
        For anything else, including an int seed (write ``Random(seed)`` to make the opt-in explicit).

    Examples
    --------
    >>> import pydp_core as dp
    >>> dp.as_random(None).seeded
    False
    >>> r = dp.Random(3)
    >>> dp.as_random(r) is r
    True
    >>> dp.as_random(np.random.default_rng(0))
    Random(seeded (not for releases), threads=None)
    """
    if rng is None:
        return Random()
    if isinstance(rng, Random):
        return rng
    if isinstance(rng, np.random.Generator):
        key = rng.bytes(32)
        digest = hashlib.sha256(b"pydp_core.Random:numpy:" + key).digest()
        return Random._wrap(_R.Generator(digest, 0), 0, True)
    raise TypeError(
        "rng must be None, a pydp_core.Random or a numpy.random.Generator "
        f"(for a seeded stream pass pydp_core.Random(seed)), not {type(rng).__name__}"
    )
