"""Arrays beyond numpy: the one place where foreign arrays come in and go back out.

A *foreign* array is any object that is not a numpy array but offers DLPack (``__dlpack__``) or numpy's
``__array__`` protocol: torch CPU tensors, jax arrays, pyarrow arrays, and the like. :func:`as_ndarray`
views it as a numpy array (``numpy.from_dlpack`` first: no copy; ``numpy.asarray`` otherwise) and returns
a function that turns a numpy result back into the kind that came in, without a copy where the target
library can wrap numpy memory:

- torch: ``torch.from_numpy`` (shares memory);
- jax: ``jax.dlpack.from_dlpack`` (no copy on the CPU when the buffer is suitably aligned; without
  ``jax_enable_x64`` jax holds float32 only, and rounds a float64 result to float32 itself);
- pyarrow: ``pyarrow.array`` (one-dimensional; wraps a numeric buffer without nulls);
- any other kind: the numpy array (there is no general way to build an object of an unknown kind).

torch and jax are imported only when an input is of their kind. GPU tensors and tensors that require
gradients are refused with a message saying what to do (``.cpu()``, ``.detach()``): pydp_core computes on
the CPU and never moves data between devices silently.

``keep_float32`` (the values-in, values-out functions: the releases, the mechanisms' ``privatize`` and
:func:`pydp_core.privatize`): a float32 input gives a float32 output. The kernels of those paths compute in
float64 (exact for float32 input); the float64 result is rounded to the nearest float32 at the end. For a
grid release the float64 result is ``(round(x / g) + Y) * g``, exact in float32 whenever
``|round(x / g) + Y| < 2**24`` (and ``g`` is in float32's range); otherwise the rounding to float32 is a
deterministic function of the released value alone, i.e. post-processing, so the privacy guarantee and the
resistance to least-significant-bit attacks are unchanged (the attack needs floating-point noise added to
the data, which never happens here). A released value beyond float32's range is refused (ValueError)
rather than returned as an infinity; that decision also depends on the released value only.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

import numpy as np

__all__ = ["as_ndarray", "accepts_arrays", "is_foreign", "numpy_dtype"]

F = TypeVar("F", bound=Callable[..., Any])

#: ``restore(result)``: a numpy result (or a Python scalar) as the kind of array that came in.
Restore = Callable[[Any], Any]

_F32_MAX = float(np.finfo(np.float32).max)


def _kind(x: Any) -> str:
    """'torch', 'jax', 'pyarrow' or 'other': the library an array object comes from."""
    mod = type(x).__module__.split(".")[0]
    if mod in ("torch", "pyarrow"):
        return mod
    if mod in ("jax", "jaxlib"):
        return "jax"
    return "other"


def is_foreign(x: Any) -> bool:
    """True for an array object that is not a numpy array but offers ``__dlpack__`` or ``__array__``."""
    if isinstance(x, (np.ndarray, np.generic, type)):
        return False
    return hasattr(x, "__dlpack__") or hasattr(x, "__array__")


def _torch_checks(x: Any, name: str) -> None:
    device = getattr(x, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        raise ValueError(f"{name} is a tensor on {device}: pydp_core works on the CPU; pass {name}.cpu()")
    if getattr(x, "requires_grad", False):
        raise ValueError(f"{name} requires gradients: pass {name}.detach() (noise is not differentiated)")


def to_numpy(x: Any, name: str) -> np.ndarray:
    """A foreign array ``x`` as a numpy array: through DLPack (no copy) if it can, else ``__array__``."""
    kind = _kind(x)
    if kind == "torch":
        _torch_checks(x, name)
    nulls = getattr(x, "null_count", None) if kind == "pyarrow" else None
    if nulls:
        raise ValueError(f"{name} has nulls: fill them, or use pydp_core.privatize, which keeps nulls")
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (BufferError, TypeError, RuntimeError, ValueError) as exc:
            if not hasattr(x, "__array__"):
                raise TypeError(f"{name} cannot be read through DLPack as a CPU array ({exc})") from None
    try:
        return np.asarray(x)
    except Exception as exc:  # an __array__ that raises
        raise TypeError(f"{name} could not be converted to a numpy array ({exc})") from None


def _to_float32(result: np.ndarray, name: str) -> np.ndarray:
    finite = np.isfinite(result)
    if np.any(np.abs(result[finite]) > _F32_MAX):
        raise ValueError(f"{name}: a released value exceeds float32's range; pass float64 values")
    return result.astype(np.float32)


def _rebuild(kind: str, arr: np.ndarray) -> Any:
    if kind == "torch":
        import torch

        if not arr.flags.writeable:
            arr = arr.copy()  # torch.from_numpy warns on read-only memory
        return torch.from_numpy(arr)
    if kind == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(arr if arr.flags.c_contiguous else arr.copy())
    if kind == "pyarrow" and arr.ndim == 1:
        import pyarrow as pa

        return pa.array(arr)
    return arr


def as_ndarray(x: Any, name: str, *, keep_float32: bool = False) -> tuple[Any, Restore]:
    """A numpy view of ``x`` when it is a foreign array, and the function that converts results back.

    Parameters
    ----------
    x : object
        An argument: a foreign array (``__dlpack__`` or ``__array__``), or anything else.
    name : str
        The argument's name, for messages.
    keep_float32 : bool, optional
        Whether the result should be float32 when ``x`` is float32 (numpy or foreign): the values-in,
        values-out functions (module docstring). False: results keep their dtype.

    Returns
    -------
    (object, callable)
        ``x`` as a numpy array when it is foreign (a view through DLPack where possible), else ``x``
        itself; and ``restore(result)``, which returns a numpy result as ``x``'s kind (float64 results
        rounded to float32 for a float32 ``x`` with ``keep_float32``; a Python scalar result for a
        non-foreign ``x`` is returned as it is).

    Raises
    ------
    ValueError
        If ``x`` is a GPU tensor, a tensor that requires gradients, or a pyarrow array with nulls.
    TypeError
        If ``x`` offers the protocols but cannot be read as a CPU array.

    Examples
    --------
    >>> class Values:
    ...     def __array__(self, dtype=None, copy=None):
    ...         return np.array([1.0, 2.0], dtype=np.float32)
    >>> arr, restore = as_ndarray(Values(), "values", keep_float32=True)
    >>> arr.dtype
    dtype('float32')
    >>> restore(arr.astype(np.float64) + 0.5)
    array([1.5, 2.5], dtype=float32)
    """
    foreign = is_foreign(x)
    arr = to_numpy(x, name) if foreign else x
    f32 = keep_float32 and isinstance(arr, np.ndarray) and arr.dtype == np.float32
    kind = _kind(x) if foreign else "numpy"

    def restore(result: Any) -> Any:
        if not foreign and not isinstance(result, np.ndarray):
            return result
        out = np.asarray(result)
        if f32 and out.dtype == np.float64:
            out = _to_float32(out, name)
        return out if kind == "numpy" else _rebuild(kind, out)

    return arr, restore


def numpy_dtype(dtype: Any) -> Any:
    """``dtype`` with torch's ``float32``/``float64`` dtype objects mapped to numpy's (others unchanged).

    Examples
    --------
    >>> numpy_dtype(np.float32) is np.float32
    True
    """
    if type(dtype).__module__.split(".")[0] == "torch":
        mapped = {"torch.float32": np.float32, "torch.float64": np.float64}.get(str(dtype))
        if mapped is not None:
            return mapped
    return dtype


def _writeable_view(x: Any) -> np.ndarray:
    """A foreign ``out=`` as a numpy view of its memory (DLPack only: ``__array__`` may copy)."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"out must be a numpy array or a writeable DLPack array (a torch CPU tensor), "
                        f"not {type(x).__name__}")
    arr = to_numpy(x, "out")
    if not arr.flags.writeable:
        raise ValueError(f"out must be writeable ({type(x).__name__} arrays are read-only through DLPack)")
    return arr


def accepts_arrays(*names: str, keep_float32: bool = False) -> Callable[[F], F]:
    """Let the arguments ``names`` of a function be foreign arrays, and return results of their kind.

    The first foreign argument among ``names`` (in call order) decides the kind of the result; a foreign
    ``out`` argument is filled in place through a DLPack view and returned itself. With ``keep_float32``
    a float32 argument (numpy or foreign) gives a float32 result (module docstring). Calls without such
    arguments go straight through.

    Parameters
    ----------
    *names : str
        The parameters that may be arrays (``out`` included when the function has one).
    keep_float32 : bool, optional
        As in :func:`as_ndarray`.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> @accepts_arrays("x", keep_float32=True)
    ... def double(x):
    ...     return np.asarray(x, dtype=np.float64) * 2
    >>> double(np.ones(2, dtype=np.float32)).dtype
    dtype('float32')
    """

    def wanted(v: Any) -> bool:
        return is_foreign(v) or (keep_float32 and isinstance(v, np.ndarray) and v.dtype == np.float32)

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not (any(map(wanted, args)) or any(map(wanted, kwargs.values()))):
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            restore: Restore | None = None
            out_obj = None
            for key in names:
                if key not in bound.arguments or not wanted(bound.arguments[key]):
                    continue
                value = bound.arguments[key]
                if key == "out" and is_foreign(value):
                    out_obj = value
                    bound.arguments[key] = _writeable_view(value)
                    continue
                bound.arguments[key], r = as_ndarray(value, key, keep_float32=keep_float32)
                if restore is None:
                    restore = r
            result = fn(*bound.args, **bound.kwargs)
            if out_obj is not None:
                return out_obj
            return result if restore is None else restore(result)

        return wrapper  # type: ignore[return-value]

    return decorate
