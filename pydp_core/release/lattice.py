"""Subbotin_r and Logistic releases on the grid with noise from an exact integer weight table.

The noise law on the grid is a table of integer weights (``csrc/include/pydp/release/table.hpp``):
``W(0) = 2**P`` and, for ``y >= 1``, ``W(y) = min(W(y - 1), floor(2**P w(y / s)))`` with
``w(x) = exp(-|x|**r / r)`` (Subbotin_r) or ``w(x) = 4 e^-|x| / (1 + e^-|x|)**2`` (Logistic), stopping
where the weight reaches 0; ``P(Y = y) = W(|y|) / T``. The table is the law: the privacy profile is
computed from these integers (an upper bound, exact up to a 2**-40 relative widening), sampling is exact
integer inversion, and the calibration picks the smallest integer scale ``s`` (grid steps) that meets
(epsilon, delta), checking that ``s - 1`` does not. docs/release.md, section 4, has the proofs.

The Logistic with ``delta = 0`` (pure epsilon-DP) keeps the table only down to ``2**(P - 12)`` and gives
each side one more integer weight spread over ``K + 1 + G``, ``G`` exactly geometric of ratio
``exp(-1/s)`` (infinite support); the calibration picks the smallest ``s`` whose certified log-ratio bound
at the charged shift is at most epsilon (docs/release.md, section 6).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, ClassVar, TypeVar

from numpy.typing import ArrayLike

from .._arrays import accepts_arrays
from .._core import release as _D
from .._safety import check_release_delta, check_release_rng
from .._validation import check_int, check_subbotin_order
from ..calibration import CalibrationError, minimal_scale
from ..noise import Logistic, Subbotin
from .plans import GridRelease, _check_common, _release

#: Total variation distance between the timing-stable uniform (three words) and the exact one.
STABLE_TV_BOUND = 2.0**-129
#: With timing_stable=True and the automatic grid, the table has at most this many entries (12 KiB: within
#: the first-level data cache, where the measured time of a draw does not depend on the value;
#: bench/bench_timing.py), on the finest grid of 8, 7, ..., 0 bits that keeps it so.
STABLE_TABLE_ENTRIES = int(_D.LATTICE_STABLE_TABLE_ENTRIES)
_KIND = {"subbotin": 0, "logistic": 1}
#: PlanStatus of lattice_plan.hpp (grid_plan.hpp): Invalid, ScaleOverflow, VerifyFailed, TableTooLong.
_INVALID, _SCALE_OVERFLOW, _VERIFY_FAILED, _TABLE_TOO_LONG = 1, 3, 4, 5


def _raise_for(status: int, message: str, s0: float) -> None:
    """The Python exception of a lattice_plan.hpp status (0: none), for the continuous scale s0."""
    if status == 0:
        return
    if status == _INVALID:
        raise ValueError(f"the noise scale {s0!r} is outside the range a float64 grid can serve")
    if status == _SCALE_OVERFLOW:
        raise CalibrationError("lattice calibration: the scale would exceed 2**40 grid steps")
    if status == _TABLE_TOO_LONG:
        raise CalibrationError(f"lattice calibration: {message}")
    if message.startswith("timing-stable"):
        raise CalibrationError(
            f"timing-stable lattice calibration: no grid keeps the table within {STABLE_TABLE_ENTRIES} entries "
            "(give grid_bits to choose the grid yourself)")
    raise CalibrationError("lattice calibration could not be verified")


def _build_table(mechanism: str, r: float, s: int, tail: bool = False) -> tuple[Any, int]:
    """The table for the integer scale s and its weight bits P: the largest P <= 62 with T < 2**63
    (``tail``: the Logistic table with the geometric tail of the pure-DP release)."""
    status, message, table, bits = _D.lattice_table(_KIND[mechanism], r, s, tail)
    _raise_for(status, message, math.nan)
    return table, bits


def _lattice_grid(mechanism: str, r: float, sens: float, grid_bits: Any, s0: float,
                  refine: bool = True) -> tuple[int, int]:
    """The grid exponent e and the charged integer shift k for the continuous scale s0 (``refine``: a
    finer grid for small epsilon, within the table budget; lattice_plan.hpp)."""
    ok, e, k = _D.lattice_grid(_KIND[mechanism], r, sens, check_int(grid_bits, "grid_bits", 0, 30), s0, refine)
    if not ok:
        _raise_for(_INVALID, "", s0)
    return e, k


def _smallest_passing(mechanism: str, r: float, start: int,
                      excess: Callable[[Any], float], tail: bool = False) -> tuple[int, tuple[Any, int]]:
    """The smallest integer scale s (grid steps) with ``excess(table of s) <= 0`` that the search of
    lattice_plan.hpp verifies (s passes and s - 1 fails, else CalibrationError), and its table."""
    status, message, s = _D.lattice_smallest_passing(_KIND[mechanism], r, float(start), tail, excess)
    _raise_for(status, message, math.nan)
    return s, _build_table(mechanism, r, s, tail)


@dataclass(frozen=True)
class LatticeRelease(GridRelease):
    """A calibrated, verified Subbotin_r or Logistic release plan on the grid (a :class:`GridRelease`).

    Made by :func:`calibrate_subbotin_release` and :func:`calibrate_logistic_release`.

    Parameters
    ----------
    mechanism : {"subbotin", "logistic"}
        The family of the table.
    epsilon, delta, sensitivity, grid_exponent, shift, delta_achieved, dimension :
        As in :class:`GridRelease` (``dimension`` is always 1: a per-value guarantee).
    parameter : Fraction
        The integer scale ``s`` of the table, in grid steps.
    r : float or None
        The Subbotin order (None for the Logistic).
    weight_bits : int
        P with ``W(0) = 2**P``.
    timing_stable : bool
        Every value costs three random words and the same number of search steps; the total-variation
        charge ``(1 + e^eps) 2**-129`` is included in ``delta_achieved``.

    Examples
    --------
    >>> from pydp_core import release
    >>> plan = release.calibrate_subbotin_release(r=1.5, epsilon=1.0, delta=1e-6)
    >>> plan.mechanism, plan.grid == 2.0**-15, plan.shift, plan.parameter, plan.weight_bits
    ('subbotin', True, 32768, Fraction(78425, 1), 44)
    >>> plan.delta_achieved <= 1e-6, round(plan.scale, 4)
    (True, 2.3933)
    """

    r: float | None = None
    weight_bits: int = 0
    timing_stable: bool = False
    #: The law has the geometric tail of the pure-DP Logistic (:class:`PureLogisticRelease`).
    _GEOMETRIC_TAIL: ClassVar[bool] = False

    @property
    def geometric_tail(self) -> bool:
        """Whether the law is the table with an exact geometric tail (pure epsilon-DP)."""
        return self._GEOMETRIC_TAIL

    @property
    def scale(self) -> float:
        """The noise scale in data units: s * g."""
        return float(self.parameter) * self.grid

    @functools.cached_property
    def table(self) -> Any:
        """The weight table (``_core.release.LatticeTable``), built on first use."""
        t, bits = _build_table(self.mechanism, self.r or 1.0, int(self.parameter), self.geometric_tail)
        if bits != self.weight_bits:
            raise CalibrationError("the lattice table could not be rebuilt with the plan's weight bits")
        return t

    def __getstate__(self) -> dict[str, Any]:  # pickle the plan, not its table (rebuilt on first use)
        state = dict(self.__dict__)
        state.pop("table", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _draw(self, gen: Any, x: Any, low: float, high: float, threads: int) -> Any:
        return self.table.release(gen, x, self.grid_exponent, low, high, self.timing_stable, threads)


@dataclass(frozen=True)
class PureLogisticRelease(LatticeRelease):
    """A calibrated, verified pure epsilon-DP Logistic plan (a :class:`LatticeRelease`, ``delta = 0``).

    Made by :func:`calibrate_logistic_release` with ``delta = 0``. The law is the table down to the weight
    ``2**(P - 12)``, then on each side an exact geometric tail of ratio ``exp(-1/s)`` (docs/release.md,
    section 6); ``delta_achieved`` is 0 and ``timing_stable`` False.

    Parameters
    ----------
    epsilon_achieved : float
        The certified upper bound on the privacy loss at the charged shift (at most ``epsilon``).
    (others) :
        As in :class:`LatticeRelease`.

    Examples
    --------
    >>> from pydp_core import release
    >>> plan = release.calibrate_logistic_release(epsilon=1.0)
    >>> type(plan).__name__, plan.geometric_tail, plan.delta_achieved, plan.epsilon_achieved
    ('PureLogisticRelease', True, 0.0, 1.0)
    """

    epsilon_achieved: float = 0.0
    _GEOMETRIC_TAIL: ClassVar[bool] = True


def _calibrate_lattice(mechanism: str, r: float, eps: float, dl: float, sens: float, grid_bits: Any,
                       timing_stable: bool, s0: float) -> LatticeRelease:
    """The plan of lattice_plan.hpp (the C ABI's pydp_calibrate_lattice_release runs the same code): the grid
    ``grid_bits`` asks for, or the automatic one, and the smallest passing integer scale; ``dl = 0``: the
    pure-DP Logistic (:class:`PureLogisticRelease`)."""
    bits = -1 if grid_bits is None else check_int(grid_bits, "grid_bits", 0, 30)
    pure = dl == 0
    (status, message, s, weight_bits, e, k, delta_achieved, epsilon_achieved,
     table) = _D.lattice_plan(_KIND[mechanism], r, eps, dl, sens, bits, timing_stable, pure, s0)
    _raise_for(status, message, s0)
    if pure:
        plan: LatticeRelease = PureLogisticRelease("logistic", eps, 0.0, sens, e, k, Fraction(s), 0.0, 1, None,
                                                   weight_bits, False, epsilon_achieved=epsilon_achieved)
    else:
        plan = LatticeRelease(mechanism, eps, dl, sens, e, k, Fraction(s), delta_achieved, 1,
                              r if mechanism == "subbotin" else None, weight_bits, bool(timing_stable))
    plan.__dict__["table"] = table  # the cached_property's slot: reuse the table just verified
    return plan


@functools.lru_cache(maxsize=4)
def _calibrate_pure_cached(eps: float, sens: float, grid_bits: Any) -> PureLogisticRelease:
    s0 = float(minimal_scale(Logistic(), epsilon=eps, delta=0.0, sensitivity=sens))
    plan = _calibrate_lattice("logistic", 1.0, eps, 0.0, sens, grid_bits, False, s0)
    assert isinstance(plan, PureLogisticRelease)
    return plan


_Plan = TypeVar("_Plan", bound=LatticeRelease)


def _on_automatic_grid(calibrate_on: Callable[[int, bool], _Plan], grid_bits: Any, timing_stable: bool,
                       reference: float | None, what: str) -> _Plan:
    """The plan of ``calibrate_on(bits, refine)`` on the grid that ``grid_bits`` asks for, or (None) on the
    automatic grid of lattice_plan.hpp, with its constants (the scalar plans run the rule in C++; the vector
    plans, whose searches certify a product law, run it here): with ``timing_stable``, the finest grid whose
    table stays cache-resident (the search's memory accesses depend on the value, and a table beyond the
    first-level cache makes their time depend on it too); otherwise 16 bits, unless the table's dynamic
    range binds (the truncation charge forces a scale more than ``LATTICE_AUTO_GRID_SLACK`` above the
    continuous ``reference``; None: never), and then a coarser grid, whose shorter table has a larger weight
    range (T < 2**63), is tried too, keeping the plan with the smallest scale."""
    if grid_bits is not None:
        return calibrate_on(grid_bits, True)
    if timing_stable:
        for bits in _D.LATTICE_STABLE_GRID_BITS:
            plan = calibrate_on(bits, False)
            if plan.table.half_size + 1 <= STABLE_TABLE_ENTRIES:
                return plan
        raise CalibrationError(
            f"timing-stable {what} calibration: no grid keeps the table within {STABLE_TABLE_ENTRIES} entries "
            "(give grid_bits to choose the grid yourself)")
    plan = calibrate_on(_D.LATTICE_AUTO_GRID_BITS, True)
    if reference is not None and plan.scale > reference * (1.0 + _D.LATTICE_AUTO_GRID_SLACK):
        for bits in _D.LATTICE_COARSER_GRID_BITS:
            other = calibrate_on(bits, True)
            if other.scale < plan.scale:
                plan = other
    return plan


@functools.lru_cache(maxsize=4)
def _calibrate_cached(mechanism: str, r: float, eps: float, dl: float, sens: float, grid_bits: Any,
                      timing_stable: bool) -> LatticeRelease:
    noise = Subbotin(r) if mechanism == "subbotin" else Logistic()
    s0 = float(minimal_scale(noise, epsilon=eps, delta=dl, sensitivity=sens))
    return _calibrate_lattice(mechanism, r, eps, dl, sens, grid_bits, timing_stable, s0)


def _check_lattice(mechanism: str, epsilon: Any, delta: Any, sensitivity: Any, timing_stable: Any) -> tuple[float, float, float]:
    eps, dl, sens = _check_common(epsilon, delta, sensitivity)
    if dl == 0 and mechanism == "Logistic":
        if not isinstance(timing_stable, bool):
            raise TypeError("timing_stable must be a bool")
        if eps == 0:
            raise ValueError("epsilon must be > 0 when delta = 0 (epsilon = 0 needs an infinite scale)")
        if timing_stable:
            raise ValueError(
                "timing_stable=True needs delta > 0 for the Logistic release: the pure-DP law has infinite "
                "support, and a draw from a fixed number of random bits has finitely many outcomes, so no "
                "fixed-work sampler of it exists (docs/release.md, section 6); give delta > 0 (the table "
                "law) or timing_stable=False"
            )
        return eps, dl, sens
    if dl == 0:
        raise ValueError(
            f"delta must be > 0 for the lattice {mechanism} release: its table has finite support, so no "
            "scale gives delta = 0 (docs/release.md, section 4)"
        )
    if not isinstance(timing_stable, bool):
        raise TypeError("timing_stable must be a bool")
    return eps, dl, sens


def calibrate_subbotin_release(
    *,
    r: float,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    grid_bits: int | None = None,
    timing_stable: bool = False,
) -> LatticeRelease:
    """The verified smallest Subbotin_r lattice release on the grid meeting (epsilon, delta), delta > 0.

    The grid comes from the continuous Subbotin_r scale ``s0`` (:func:`pydp_core.minimal_scale`) as in
    :func:`calibrate_gaussian_release`, with one unit of scale spanning at most ``2**17`` grid steps
    (for small epsilon, where the sensitivity would span fewer than ``2**12`` steps, a finer grid, up to
    ``2**21`` steps for large r, within a table of about 4 million entries).
    The noise is the table law ``W(y) ~ floor(2**P exp(-|y / s|**r / r))`` (docs/release.md, section 4);
    the smallest integer ``s`` (grid steps) whose exact table profile at the shift ``k`` meets delta is
    found by a safeguarded secant search from the continuous scale, and ``s - 1`` is checked to fail.
    r = 1 and r = 2 use the table too (:func:`release_noise` sends ``Subbotin(1)`` and ``Subbotin(2)`` to
    the exact discrete Laplace and Gaussian instead); ``r=2, timing_stable=True`` is a timing-stable
    Gaussian-shaped release.

    Parameters
    ----------
    r : float
        The order, finite and >= 1.
    epsilon : float
        epsilon >= 0, finite.
    delta : float
        delta in (0, 1): the table has finite support, so delta = 0 is impossible.
    sensitivity : float, optional
        The sensitivity D of each value (> 0, default 1).
    grid_bits : int or None, optional
        As in :func:`calibrate_laplace_release`. None (the default): 16, or, when the table's dynamic
        range binds (large epsilon with a tiny delta: the truncation then forces a scale more than 0.1%
        above the continuous one), whichever of 16, 12, 8 and 4 bits gives the smallest scale
        (docs/release.md, section 4).
    timing_stable : bool, optional
        Draw every value from exactly three random words with a fixed number of search steps (its
        total-variation charge ``(1 + e^eps) 2**-129`` is added to delta). Default False: exact uniforms
        by rejection, whose number of words is random but independent of the value drawn.

    Returns
    -------
    LatticeRelease
        The plan (``mechanism="subbotin"``, parameter ``s``).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range (r < 1, NaN, delta outside (0, 1), ...).
    CalibrationError
        If the table would be too long or the result cannot be verified.

    Examples
    --------
    >>> from pydp_core import release
    >>> plan = release.calibrate_subbotin_release(r=3.0, epsilon=1.0, delta=1e-6)
    >>> plan.parameter > 0, plan.delta_achieved <= 1e-6
    (True, True)
    """
    rr = check_subbotin_order(r)
    eps, dl, sens = _check_lattice("Subbotin", epsilon, delta, sensitivity, timing_stable)
    return _calibrate_cached("subbotin", rr, eps, dl, sens, grid_bits, timing_stable)


def calibrate_logistic_release(
    *,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    grid_bits: int | None = None,
    timing_stable: bool = False,
) -> LatticeRelease:
    """The verified smallest Logistic lattice release on the grid meeting (epsilon, delta).

    ``delta > 0``: as :func:`calibrate_subbotin_release` with the table ``W(y) ~ floor(2**P 4u / (1 + u)**2)``,
    ``u = exp(-|y| / s)`` (finite support).

    ``delta = 0`` (the default; pure epsilon-DP): the table is kept down to the weight ``2**(P - 12)`` (at
    ``|y| = K``) and each side gets one integer weight ``W_t`` spread over ``K + 1 + G``, ``G`` exactly
    geometric of ratio ``exp(-1/s)``, so that ``P(Y = K + 1 + g) = W_t (1 - exp(-1/s)) exp(-g/s) / T``
    (docs/release.md, section 6). The plan is the smallest integer ``s`` whose certified bound on
    ``max_y log(P(y) / P(y + k))`` at the charged shift ``k`` is at most epsilon (``s - 1`` is checked
    to fail): a :class:`PureLogisticRelease`, whose ``delta_achieved`` is 0 and ``epsilon_achieved`` the bound.

    Parameters
    ----------
    epsilon : float
        epsilon >= 0, finite (> 0 when ``delta = 0``).
    delta : float, optional
        delta in [0, 1) (default 0: pure epsilon-DP).
    sensitivity, grid_bits :
        As in :func:`calibrate_subbotin_release` (with ``delta = 0`` the automatic grid is 16 bits).
    timing_stable : bool, optional
        As in :func:`calibrate_subbotin_release`; refused (ValueError) with ``delta = 0``: the pure-DP law
        has infinite support, which no fixed number of random bits can sample.

    Returns
    -------
    LatticeRelease
        The plan (``mechanism="logistic"``, parameter ``s``).

    Raises
    ------
    TypeError, ValueError, CalibrationError
        As in :func:`calibrate_subbotin_release`.

    Examples
    --------
    >>> from pydp_core import release
    >>> plan = release.calibrate_logistic_release(epsilon=1.0, delta=1e-9)
    >>> plan.mechanism, plan.delta_achieved <= 1e-9
    ('logistic', True)
    >>> pure = release.calibrate_logistic_release(epsilon=1.0)
    >>> pure.geometric_tail, pure.delta_achieved, pure.shift, pure.parameter, pure.epsilon_achieved
    (True, 0.0, 65536, Fraction(65536, 1), 1.0)
    """
    eps, dl, sens = _check_lattice("Logistic", epsilon, delta, sensitivity, timing_stable)
    if dl == 0:
        return _calibrate_pure_cached(eps, sens, grid_bits)
    return _calibrate_cached("logistic", 1.0, eps, dl, sens, grid_bits, timing_stable)


def _release_with(calibrate: Callable[[], LatticeRelease], values: ArrayLike, rng: Any, bounds: Any,
                  simulation: bool, confirm_delta: bool) -> Any:
    check_release_rng(rng, simulation)
    plan = calibrate()
    check_release_delta(plan.delta, confirm_delta)
    return _release(plan, values, rng, bounds)


@accepts_arrays("values", keep_float32=True)
def release_subbotin(
    values: ArrayLike,
    *,
    r: float,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
    grid_bits: int | None = None,
    timing_stable: bool = False,
    simulation: bool = False,
    confirm_delta: bool = False,
) -> Any:
    """Release ``values`` with Subbotin_r lattice noise on a power-of-two grid, (epsilon, delta)-DP per value.

    Parameters
    ----------
    values : float or array_like
        The true values, finite and at most 2**52 grid steps in magnitude (after clamping); each entry
        is one release of a scalar query of the given sensitivity.
    r, epsilon, delta, sensitivity, grid_bits, timing_stable :
        As in :func:`calibrate_subbotin_release`.
    rng, bounds, simulation, confirm_delta :
        As in :func:`release_laplace`.

    Returns
    -------
    float or numpy.ndarray
        The noisy values on the grid; a float for a scalar ``values``.

    Raises
    ------
    TypeError, ValueError, CalibrationError
        As in :func:`calibrate_subbotin_release`; ValueError also for a non-finite or too large value.

    Examples
    --------
    >>> import pydp_core as dp
    >>> x = dp.release_subbotin(np.zeros(4), r=1.5, epsilon=1.0, delta=1e-6, rng=dp.Random(7), simulation=True)
    >>> x.shape, bool(np.all(x * 2**16 == np.round(x * 2**16)))
    ((4,), True)
    """
    return _release_with(
        lambda: calibrate_subbotin_release(r=r, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                           grid_bits=grid_bits, timing_stable=timing_stable),
        values, rng, bounds, simulation, confirm_delta,
    )


@accepts_arrays("values", keep_float32=True)
def release_logistic(
    values: ArrayLike,
    *,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
    grid_bits: int | None = None,
    timing_stable: bool = False,
    simulation: bool = False,
    confirm_delta: bool = False,
) -> Any:
    """Release ``values`` with Logistic lattice noise on a power-of-two grid, (epsilon, delta)-DP per value.

    ``delta = 0`` (the default): pure epsilon-DP, the table law with its exact geometric tail; ``delta > 0``:
    the finite table (see :func:`calibrate_logistic_release`).

    Parameters
    ----------
    values : float or array_like
        As in :func:`release_subbotin`.
    epsilon, delta, sensitivity, grid_bits, timing_stable :
        As in :func:`calibrate_logistic_release`.
    rng, bounds, simulation, confirm_delta :
        As in :func:`release_laplace`.

    Returns
    -------
    float or numpy.ndarray
        The noisy values on the grid; a float for a scalar ``values``.

    Raises
    ------
    TypeError, ValueError, CalibrationError
        As in :func:`calibrate_logistic_release`.

    Examples
    --------
    >>> import pydp_core as dp
    >>> y = dp.release_logistic(2.0, epsilon=1.0, delta=1e-9, rng=dp.Random(7), simulation=True)
    >>> isinstance(y, float)
    True
    >>> dp.release_logistic(np.zeros(3), epsilon=1.0, rng=dp.Random(7), simulation=True).shape
    (3,)
    """
    return _release_with(
        lambda: calibrate_logistic_release(epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                           grid_bits=grid_bits, timing_stable=timing_stable),
        values, rng, bounds, simulation, confirm_delta,
    )
