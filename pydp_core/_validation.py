"""Argument checks shared by the public API. Every error names the argument it is about.

Rules: inputs must be real numbers (bool, complex, strings and objects are a TypeError); NaN is always
an error; each check states its allowed range in the message. A silently rounded privacy parameter is a
privacy bug, so integer inputs are converted only when the conversion to float64 is exact.

Over 600 lines because every public argument check of the package is here, one rule in one place (about
180 lines of code; the rest are the checkers' docstrings, which state each range and message).
"""
from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

from ._arrays import is_foreign, numpy_dtype
from ._arrays import to_numpy as foreign_to_numpy
from ._core import MAX_THREADS as _CORE_MAX_THREADS

__all__ = [
    "as_float_array",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_probability",
    "check_threads",
    "broadcast",
    "scalar_or_array",
]


def as_float_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, or a TypeError naming ``name`` if it is not real-valued.

    Integers are converted only when float64 holds them exactly (a silently rounded privacy parameter is
    a privacy bug); NaN and inf pass through (the callers decide).

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str
        The argument's name, for messages.

    Returns
    -------
    ndarray
        A float64 array (a view when ``value`` already is one).

    Raises
    ------
    TypeError
        If ``value`` is bool, a string, complex, an object or ragged.
    ValueError
        If an integer or long double cannot be represented in float64 exactly.

    Examples
    --------
    >>> as_float_array([1, 2], 'x')
    array([1., 2.])
    """
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of real numbers, not {type(value).__name__}")
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, numbers.Real):
        arr = np.asarray(value)
    elif is_foreign(value):
        arr = foreign_to_numpy(value, name)
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be a real number or an array of real numbers ({exc})") from None
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real-valued (got dtype {arr.dtype})")
    if arr.dtype.kind in "iu":
        out = arr.astype(np.float64)
        if out.size and not np.array_equal(out.astype(arr.dtype), arr):
            raise ValueError(f"{name} has integers too large to convert to float64 exactly")
        return out
    if arr.dtype.itemsize > 8:
        out = arr.astype(np.float64)
        finite = np.isfinite(arr)
        if np.any(out[finite] != arr[finite]):
            raise ValueError(f"{name} cannot be represented in float64 without rounding")
        return out
    return arr.astype(np.float64, copy=False)


#: The largest ``threads=`` accepted: more is never useful, and the C++ pool would only try to start them.
#: The one cap of the library, ``pydp::kMaxThreads`` (pydp/parallel.hpp), as the bindings export it; the C
#: ABI's ``PYDP_MAX_THREADS`` is tied to it by a static_assert.
MAX_THREADS: int = _CORE_MAX_THREADS



# ------------------------------------------------------------------------------------------------------
# the one rule for real arguments: a range with open or closed ends, and whether inf is allowed
# ------------------------------------------------------------------------------------------------------
def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if high is None:
        return f"be {'>' if low_open else '>='} {low:g}"
    if low is None:
        return f"be {'<' if high_open else '<='} {high:g}"
    return f"lie in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_real(value: Any, name: str, *, low: float | None = None, high: float | None = None, low_open: bool = False,
               high_open: bool = False, allow_inf: bool = False, why: str = "") -> np.ndarray:
    """Real values in a range, as a float64 array: the rule every range check of the API applies.

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str
        Its name, used in every message.
    low, high : float, optional
        The ends of the range (None: unbounded on that side).
    low_open, high_open : bool, optional
        Whether the end is excluded (default: included).
    allow_inf : bool, optional
        Whether an infinite value in the range is allowed (default False).
    why : str, optional
        Text appended to the range in the message (the reason for the range).

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        ``"{name} must not be NaN"``, ``"{name} must <range>{why}"`` (with the value, for a scalar) or
        ``"{name} must be finite"``: one message per kind of failure.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_real([0.0, 0.5], "q", low=0.0, high=1.0, high_open=True)
    array([0. , 0.5])
    >>> check_real(2.0, "q", low=0.0, high=1.0)
    Traceback (most recent call last):
    ...
    ValueError: q must lie in [0, 1], got 2.0
    """
    arr = as_float_array(value, name)
    _no_nan(arr, name)
    ok = np.ones(arr.shape, dtype=bool)
    if low is not None:
        ok &= (arr > low) if low_open else (arr >= low)
    if high is not None:
        ok &= (arr < high) if high_open else (arr <= high)
    if not ok.all():
        got = f", got {float(arr)!r}" if arr.ndim == 0 else ""
        raise ValueError(f"{name} must {_range_text(low, high, low_open, high_open)}{why}{got}")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    return arr


def check_real_scalar(value: Any, name: str, *, low: float | None = None, high: float | None = None,
                      low_open: bool = False, high_open: bool = False, allow_inf: bool = False, why: str = "") -> float:
    """:func:`check_real` for one real scalar, returned as a float (a fast path for Python floats)."""
    x = real_scalar(value, name)
    if (low is not None and not (x > low if low_open else x >= low)) or (
            high is not None and not (x < high if high_open else x <= high)):
        raise ValueError(f"{name} must {_range_text(low, high, low_open, high_open)}{why}, got {x!r}")
    if not allow_inf and math.isinf(x):
        raise ValueError(f"{name} must be finite")
    return x


def check_threads(threads: Any, *, zero_means_all: bool = False) -> int:
    """``threads`` for the bindings (0 = all cores): None, or an int in [1, MAX_THREADS] ([0, ...] with
    ``zero_means_all``); bool and non-integers are a TypeError, anything else a ValueError naming it."""
    if threads is None:
        return 0
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be None or a positive int, not {type(threads).__name__}")
    t = int(threads)
    low = 0 if zero_means_all else 1
    if not low <= t <= MAX_THREADS:
        hint = "0 or None for all cores" if zero_means_all else "or None for all cores"
        raise ValueError(f"threads must lie in [{low}, {MAX_THREADS}] ({hint}), got {t}")
    return t


def _no_nan(arr: np.ndarray, name: str) -> None:
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> np.ndarray:
    """A privacy parameter >= 0 (epsilon, psi, mu, ...) as a float64 array.

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str, optional
        Its name (default "epsilon").
    allow_inf : bool, optional
        Whether inf is allowed (default False).

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        If a value is NaN, negative, or inf when not allowed.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_epsilon(0.5)
    array(0.5)
    """
    return check_real(value, name, low=0.0, allow_inf=allow_inf)


def check_delta(value: Any, name: str = "delta", *, allow_zero: bool = True, allow_one: bool = False) -> np.ndarray:
    """A delta in [0, 1) (the end points per ``allow_zero`` and ``allow_one``) as a float64 array.

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str, optional
        Its name (default "delta").
    allow_zero : bool, optional
        Whether 0 is allowed (default True).
    allow_one : bool, optional
        Whether 1 is allowed (default False).

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        If a value is NaN or outside the interval.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_delta([0.0, 1e-6])
    array([0.e+00, 1.e-06])
    """
    return check_real(value, name, low=0.0, high=1.0, low_open=not allow_zero, high_open=not allow_one)


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> np.ndarray:
    """Values > 0 (finite unless ``allow_inf``) as a float64 array.

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str
        Its name.
    allow_inf : bool, optional
        Whether inf is allowed (default False).

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        If a value is NaN, <= 0, or inf when not allowed.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_positive(2, 'scale')
    array(2.)
    """
    return check_real(value, name, low=0.0, low_open=True, allow_inf=allow_inf)


def check_probability(value: Any, name: str = "q") -> np.ndarray:
    """Probabilities in [0, 1] as a float64 array.

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str, optional
        Its name (default "q").

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        If a value is NaN or outside [0, 1].
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_probability(0.5)
    array(0.5)
    """
    return check_real(value, name, low=0.0, high=1.0)


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays to one shape (C-contiguous float64 copies), naming them if they do not fit.

    Parameters
    ----------
    **arrays : ndarray
        The arrays, by argument name.

    Returns
    -------
    list of ndarray
        The broadcast arrays, in the order given.

    Raises
    ------
    ValueError
        If the shapes do not broadcast (the message lists each name with its shape).

    Examples
    --------
    >>> broadcast(a=np.array(1.0), b=np.array([1.0, 2.0]))
    [array([1., 1.]), array([1., 2.])]
    """
    try:
        out = np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"arguments cannot be broadcast together: {shapes}") from None
    return [np.ascontiguousarray(a, dtype=np.float64) for a in out]


def scalar_or_array(result: np.ndarray, *inputs: Any) -> Any:
    """A Python float when every input was a scalar, else the array.

    Parameters
    ----------
    result : ndarray
        The computed values.
    *inputs : object
        The caller's original arguments.

    Returns
    -------
    float or ndarray
        ``float(result)`` for scalar inputs, else ``result``.

    Raises
    ------
    ValueError
        Never for a 0-d result; a result of another size with scalar inputs cannot be reshaped.

    Examples
    --------
    >>> scalar_or_array(np.array(3.0), 1.0)
    3.0
    >>> scalar_or_array(np.array([3.0]), [1.0])
    array([3.])
    """
    if all(np.ndim(x) == 0 for x in inputs):
        return float(np.asarray(result).reshape(()))
    return result


def check_finite(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array of finite numbers (no NaN, no inf).

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str
        Its name.

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        If a value is NaN or infinite.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_finite(1.5, 'x')
    array(1.5)
    """
    arr = as_float_array(value, name)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_int(value: Any, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as a Python int within [minimum, maximum]; bool, float and other types are a TypeError.

    Parameters
    ----------
    value : int
        The argument (a Python or numpy integer).
    name : str
        Its name.
    minimum, maximum : int, optional
        The allowed range (None: unbounded).

    Returns
    -------
    int
        The value.

    Raises
    ------
    TypeError
        If ``value`` is not an integer (bool included).
    ValueError
        If it is outside the range.

    Examples
    --------
    >>> check_int(3, 'k', 1)
    3
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    v = int(value)
    if minimum is not None and maximum is not None and not minimum <= v <= maximum:
        raise ValueError(f"{name} must lie in [{minimum}, {maximum}], got {v}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def as_scalar(arr: np.ndarray, name: str) -> float:
    """The one value of a 0-d array; any other shape is a TypeError naming ``name``.

    Parameters
    ----------
    arr : ndarray
        A checked array.
    name : str
        The argument's name.

    Returns
    -------
    float
        The value.

    Raises
    ------
    TypeError
        If ``arr`` is not 0-d.

    Examples
    --------
    >>> as_scalar(np.array(2.0), 'x')
    2.0
    """
    if np.ndim(arr) != 0:
        raise TypeError(f"{name} must be a scalar, got shape {np.shape(arr)}")
    return float(arr)


def check_positive_scalar(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A real scalar > 0 (finite unless ``allow_inf``).

    Parameters
    ----------
    value : float
        The argument.
    name : str
        Its name.
    allow_inf : bool, optional
        Whether inf is allowed (default False).

    Returns
    -------
    float
        The value.

    Raises
    ------
    ValueError
        If it is NaN, <= 0, or inf when not allowed.
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_positive_scalar(2, 'scale')
    2.0
    """
    return as_scalar(check_positive(value, name, allow_inf=allow_inf), name)


def check_epsilon_scalar(value: Any, name: str = "epsilon") -> float:
    """A real scalar epsilon >= 0, finite.

    Parameters
    ----------
    value : float
        The argument.
    name : str, optional
        Its name (default "epsilon").

    Returns
    -------
    float
        The value.

    Raises
    ------
    ValueError
        If it is NaN, negative or inf.
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_epsilon_scalar(1)
    1.0
    """
    return as_scalar(check_epsilon(value, name), name)


def require_extra(extra: str, *modules: str) -> list[Any]:
    """Import ``modules``, or raise an ImportError naming the pydp_core extra that provides them.

    Parameters
    ----------
    extra : str
        The name of the extra (``pip install 'pydp_core[extra]'``).
    *modules : str
        The modules to import.

    Returns
    -------
    list of module
        The imported modules, in order.

    Raises
    ------
    ImportError
        If a module is missing; the message names the extra.

    Examples
    --------
    >>> require_extra('test', 'math')[0].__name__
    'math'
    """
    import importlib

    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as exc:
        raise ImportError(
            f"this needs {', '.join(modules)}, which the '{extra}' extra installs: "
            f"pip install 'pydp_core[{extra}]' ({exc})"
        ) from None


def real_scalar(value: Any, name: str) -> float:
    """A real scalar (not NaN) as a float; a fast path for Python floats and exact ints.

    Parameters
    ----------
    value : float
        The argument.
    name : str
        Its name.

    Returns
    -------
    float
        The value (inf passes).

    Raises
    ------
    ValueError
        If it is NaN.
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> real_scalar(3, 'x')
    3.0
    """
    t = type(value)
    if t is float:  # fast path for the common case (optimisers call conversions in inner loops)
        if value != value:
            raise ValueError(f"{name} must not be NaN")
        checked: float = value
        return checked
    if t is int and -(2**53) <= value <= 2**53:
        return float(value)
    arr = as_float_array(value, name)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a scalar real number, got an array of shape {arr.shape}")
    x = float(arr)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def check_nonneg_scalar(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A real scalar >= 0 (finite unless ``allow_inf``).

    Parameters
    ----------
    value : float
        The argument.
    name : str
        Its name.
    allow_inf : bool, optional
        Whether inf is allowed (default False).

    Returns
    -------
    float
        The value.

    Raises
    ------
    ValueError
        If it is NaN, negative, or inf when not allowed.
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_nonneg_scalar(0.0, 'rho')
    0.0
    """
    return check_real_scalar(value, name, low=0.0, allow_inf=allow_inf)


def check_alpha(value: Any, name: str = "alpha", *, allow_inf: bool = False) -> float:
    """A Renyi order alpha > 1 (finite unless ``allow_inf``).

    Parameters
    ----------
    value : float
        The argument.
    name : str, optional
        Its name (default "alpha").
    allow_inf : bool, optional
        Whether inf is allowed (default False).

    Returns
    -------
    float
        The value.

    Raises
    ------
    ValueError
        If it is NaN, <= 1, or inf when not allowed.
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_alpha(2)
    2.0
    """
    return check_real_scalar(value, name, low=1.0, low_open=True, allow_inf=allow_inf)


def check_open_delta(value: Any, name: str = "delta") -> float:
    """A delta for a conversion: it must lie in the open interval (0, 1).

    Parameters
    ----------
    value : float
        The argument.
    name : str, optional
        Its name (default "delta").

    Returns
    -------
    float
        The value.

    Raises
    ------
    ValueError
        If it is NaN or outside (0, 1).
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_open_delta(1e-6)
    1e-06
    """
    return check_real_scalar(value, name, low=0.0, high=1.0, low_open=True, high_open=True, why=" for this conversion")


# ------------------------------------------------------------------------------------------------------
# random, release, manifolds, io: sizes, dtypes, output buffers, lower-bounded parameters, exact rationals
# ------------------------------------------------------------------------------------------------------
from fractions import Fraction  # noqa: E402  (kept inside this block: the file is appended to per area)


def check_open_unit(value: Any, name: str) -> float:
    """A real scalar in the open interval (0, 1), such as a confidence level."""
    return check_real_scalar(value, name, low=0.0, high=1.0, low_open=True, high_open=True)


def check_lower_bounded(value: Any, name: str, low: float, *, strict: bool = False) -> np.ndarray:
    """A float64 array of finite values >= ``low`` (> ``low`` when ``strict``), such as a scale or an order."""
    return check_real(value, name, low=low, low_open=strict)


def check_size(size: Any, name: str = "size") -> tuple[int, ...] | None:
    """A numpy-style output size: ``None`` (one value), a non-negative int, or a tuple of them."""
    import operator

    if size is None:
        return None
    if isinstance(size, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int or a tuple of ints, not bool")
    try:
        dims: tuple[int, ...] = (operator.index(size),)
    except TypeError:
        try:
            if any(isinstance(s, (bool, np.bool_)) for s in size):
                raise TypeError
            dims = tuple(operator.index(s) for s in size)
        except TypeError:
            raise TypeError(f"{name} must be None, an int or a tuple of ints, not {size!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{name} must not be negative, got {size!r}")
    check_allocation(math.prod(dims), 8, name)
    return dims


def check_allocation(count: int, itemsize: int, name: str = "size") -> int:
    """Refuse, before allocating, an output of ``count`` items of ``itemsize`` bytes that exceeds this
    machine's physical memory (a ValueError naming ``name`` instead of a MemoryError or a swap storm)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 1 << 46
    if count * itemsize > physical:
        raise ValueError(
            f"{name} asks for {count} values ({count * itemsize / 2**30:.3g} GiB), more than this machine's "
            f"memory ({physical / 2**30:.3g} GiB); ask for less, or work in pieces"
        )
    return count


def check_float_dtype(dtype: Any, name: str = "dtype") -> np.dtype:
    """``dtype`` as ``numpy.float64`` or ``numpy.float32`` (torch's float dtypes too; anything else is a TypeError)."""
    try:
        dt: np.dtype = np.dtype(numpy_dtype(dtype))
    except TypeError:
        raise TypeError(f"{name} must be float64 or float32, not {dtype!r}") from None
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"{name} must be float64 or float32, not {dt}")
    return dt


def check_out(out: Any, shape: tuple[int, ...] | None, dtype: np.dtype, *, size_given: bool) -> np.ndarray:
    """An output buffer: a writeable C-contiguous array of ``dtype`` (and of ``shape`` when a size was given).

    ``out=None`` allocates a new array of ``shape`` (``()`` for ``shape=None``).
    """
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


def check_rational(value: Any, name: str, max_terms: int) -> Fraction:
    """A positive exact rational (int, Fraction, or float converted exactly) with numerator and
    denominator at most ``max_terms``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Rational, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be an int, a fractions.Fraction or a float, not {type(value).__name__}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite")
        frac = Fraction(float(value))
    else:
        frac = Fraction(int(value)) if isinstance(value, (numbers.Integral, np.integer)) else Fraction(value)
    if frac <= 0:
        raise ValueError(f"{name} must be > 0")
    if frac.numerator > max_terms or frac.denominator > max_terms:
        bound = f"2**{max_terms.bit_length() - 1}" if max_terms & (max_terms - 1) == 0 else str(max_terms)
        raise ValueError(
            f"{name} = {frac} is not a ratio of integers up to {bound}; pass a fractions.Fraction with smaller terms"
        )
    return frac


# noise, calibration, mechanisms and accounting
# ------------------------------------------------------------------------------------------------------
def check_subbotin_order(value: Any, name: str = "r") -> float:
    """A Subbotin order r: a real scalar, finite and >= 1 (the family is log-concave only for r >= 1).

    Parameters
    ----------
    value : float
        The argument.
    name : str, optional
        Its name (default "r").

    Returns
    -------
    float
        The order.

    Raises
    ------
    ValueError
        If it is NaN, infinite or < 1.
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_subbotin_order(3)
    3.0
    """
    return check_real_scalar(value, name, low=1.0, why=" (log-concavity)")


def check_alpha_array(value: Any, name: str = "alpha", *, allow_inf: bool = False) -> np.ndarray:
    """Renyi orders alpha > 1 as a float64 array (finite unless ``allow_inf``); the vectorised :func:`check_alpha`.

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str, optional
        Its name (default "alpha").
    allow_inf : bool, optional
        Whether inf is allowed (default False).

    Returns
    -------
    ndarray
        The orders as float64.

    Raises
    ------
    ValueError
        If a value is NaN, <= 1, or inf when not allowed.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_alpha_array([2.0, np.inf], allow_inf=True)
    array([ 2., inf])
    """
    return check_real(value, name, low=1.0, low_open=True, allow_inf=allow_inf)


def check_integral_array(value: Any, name: str, minimum: int = 1) -> np.ndarray:
    """Whole numbers >= ``minimum`` as a float64 array (integral floats allowed, inf and NaN not).

    Parameters
    ----------
    value : scalar or array_like
        The argument.
    name : str
        Its name.
    minimum : int, optional
        The smallest allowed value (default 1).

    Returns
    -------
    ndarray
        The values as float64.

    Raises
    ------
    ValueError
        If a value is NaN, infinite, fractional or below ``minimum``.
    TypeError
        If ``value`` is not real-valued.

    Examples
    --------
    >>> check_integral_array([1.0, 3.0], 'k')
    array([1., 3.])
    """
    arr = as_float_array(value, name)
    if not np.isfinite(arr).all() or (arr < minimum).any() or (arr != np.floor(arr)).any():
        raise ValueError(f"{name} must be a finite integer >= {minimum}")
    return arr


def check_rate(value: Any, name: str = "rate") -> float:
    """A sampling rate: a real scalar in (0, 1].

    Parameters
    ----------
    value : float
        The argument.
    name : str, optional
        Its name (default "rate").

    Returns
    -------
    float
        The rate.

    Raises
    ------
    ValueError
        If it is NaN or outside (0, 1].
    TypeError
        If it is not a real scalar.

    Examples
    --------
    >>> check_rate(0.5)
    0.5
    """
    return check_real_scalar(value, name, low=0.0, high=1.0, low_open=True)


# aggregate
def check_aggregate_names(value: Any, name: str, allowed: tuple[str, ...]) -> list[str]:
    """A list of distinct aggregate names from ``allowed`` (a single str is one name)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise TypeError(f"{name} must be an aggregate name or a non-empty list of them ({', '.join(allowed)})")
    out = []
    for v in items:
        if not isinstance(v, str):
            raise TypeError(f"{name}: aggregate names are strings, not {type(v).__name__}")
        if v not in allowed:
            raise ValueError(f"{name}: unknown aggregate {v!r} (allowed: {', '.join(allowed)})")
        if v in out:
            raise ValueError(f"{name}: aggregate {v!r} is listed twice")
        out.append(v)
    return out


def check_confidence(value: Any, name: str = "confidence") -> float:
    """A confidence level in the open interval (0, 1)."""
    return check_real_scalar(value, name, low=0.0, high=1.0, low_open=True, high_open=True)


def check_choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    """One of the strings ``allowed`` (TypeError for a non-string, ValueError naming ``name`` otherwise)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(map(repr, allowed))}; got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value
