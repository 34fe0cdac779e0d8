"""Calibration of a noise scale on a PLD: the smallest scale whose certified delta(epsilon) meets a target.

:func:`_calibrate_scale` is the root solver: on a family of PLDs whose exact delta(epsilon) decreases in
the scale, it returns a scale that passes for certain (certified upper delta <= the target) with a
bracket [lower, scale] on the exact minimal scale (lower fails for certain), refining the loss grid while
the discretisation keeps the bracket open (docs/pld.md, "Calibration"). ``PLD.calibrate`` (additive noise,
composed and sampled) and :func:`~pydp_core.accounting.pld.calibrate_box` (a box-bounded vector query,
:mod:`.box`) build their PLDs and run it.
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from ..._validation import check_delta, check_positive, check_probability
from ._args import _count, _scalar
from .grid import _TAIL_MASS
from .interval import Interval
from .mechanisms import _relation

if TYPE_CHECKING:
    from .core import PLD

__all__ = ["ScaleCalibration"]


class ScaleCalibration(NamedTuple):
    """A calibrated noise scale with its certificate (the result of ``PLD.calibrate(..., certificate=True)``).

    Parameters
    ----------
    scale : float
        The calibrated scale: the certified upper bound of delta(epsilon) is <= the target there.
    scale_bounds : Interval
        Certified bounds on the exact minimal scale: ``upper`` is ``scale``; at ``lower`` the certified
        lower bound of delta(epsilon) exceeds the target, so no smaller scale meets it (``lower`` is 0 if
        no scale could be shown to fail).
    value_step : float
        The loss grid step on which ``scale`` passed, and on which ``scale_bounds.lower`` fails for
        certain unless only another grid showed that (rebuild the certificate with
        ``with_discretization(value_step=...)``).
    delta_bounds : Interval
        The certified interval of delta(epsilon) at ``scale`` on that grid.

    Examples
    --------
    >>> from pydp_core.accounting.pld import PLD
    >>> from pydp_core.noise import Logistic
    >>> c = PLD.calibrate(Logistic(), epsilon=1.0, delta=1e-6, steps=10, certificate=True)
    >>> pld = PLD.from_noise(Logistic(), scale=c.scale).self_compose(10).with_discretization(value_step=c.value_step)
    >>> bool(pld.delta(1.0).upper <= 1e-6 and c.scale_bounds.upper <= 1.001 * c.scale_bounds.lower)
    True
    """

    scale: float
    scale_bounds: Interval
    value_step: float
    delta_bounds: Interval


def _calibration_start(sensitivity: float, steps: int, sampling_rate: float, epsilon: float) -> float:
    """Where a calibration's doubling starts: the Gaussian order of magnitude sens q sqrt(k) / epsilon."""
    return sensitivity * max(sampling_rate * math.sqrt(steps), 1.0) / min(epsilon, 1.0)


# The smallest truncated mass a calibration uses (with_discretization accepts tail_mass down to 1e-300).
_MIN_TAIL = 1e-300

# A calibration refines the loss grid at most _REFINE times, each time 2 to 4 times finer.
_REFINE = 4

# Doublings of the scale without a lower certified delta after which a calibration gives up.
_STALL = 3

# The smallest rtol: the delta intervals at the finest grid a calibration uses bracket the minimal scale
# to about 1e-7 (relative); a smaller rtol could not be met and would only cost time.
_MIN_RTOL = 1e-6


class _ScaleSearch:
    """One calibration's state: the target, and the delta intervals computed so far by (scale, grid step).

    ``build(scale, value_step)`` is the composed PLD at ``scale`` (``value_step`` None: automatic). A scale
    "passes" on a grid when its certified upper delta(epsilon) is <= the target and "fails for certain"
    when its certified lower delta exceeds it; every interval stays in the memo, so the largest scale
    known to fail is always at hand.
    """

    def __init__(self, build: Callable[..., Any], *, epsilon: float, delta: float, start: float, rtol: float,
                 width: float) -> None:
        self.build, self.epsilon, self.delta = build, epsilon, delta
        self.start, self.rtol, self.width = start, rtol, width
        self.memo: dict[tuple[float, float | None], Interval] = {}
        # log(-log delta) is nearly linear in log scale (for Gaussian-like tails -log delta grows like a
        # power of the scale), so regula falsi on it converges in a few steps.
        self.level = math.log(-math.log(delta))

    def bound(self, s: float, h: float | None) -> Interval:
        """The certified interval of delta(epsilon) at scale ``s`` on grid ``h`` (None: automatic)."""
        memo = self.memo
        if (s, h) not in memo:
            pld = self.build(s, h)
            key = (s, pld.value_step)
            if key not in memo:
                try:
                    memo[key] = pld.delta(self.epsilon)
                except ValueError as exc:
                    # A small scale has a loss range too wide for grid h: its automatic grid certifies
                    # it as well (every grid gives a valid interval; h only sets how tight).
                    if h is None or "value_step is too small" not in str(exc):
                        raise
                    memo[key] = self.bound(s, None)
            memo[s, h] = memo[key]
        return memo[s, h]

    def excess(self, s: float, h: float, side: int) -> float:
        """> 0 iff end ``side`` (0 lower, 1 upper) of the delta interval exceeds the target (exactly)."""
        value = self.bound(s, h)[side]
        f = self.level - math.log(-math.log(min(max(value, 1e-300), 1.0 - 2.0**-52)))
        return max(f, 1e-300) if value > self.delta else min(f, 0.0)

    def boundary(self, side: int, h: float, a: float, b: float,
                 done: Callable[[float, float], bool]) -> tuple[float, float]:
        """Shrink [a, b] (excess > 0 at a, <= 0 at b) until b / a <= 1 + rtol or ``done(a, b)``."""
        fa, fb = self.excess(a, h, side), min(self.excess(b, h, side), 0.0)
        last, span = 0, math.log(b / a)
        for it in range(100):
            if b / a <= 1.0 + self.rtol or done(a, b):
                break
            la, lb = math.log(a), math.log(b)
            t = fa / (fa - fb) if fa > fb else 0.5
            if it > 0 and it % 3 == 0:  # the bracket must halve every three steps, else bisect
                t, span = (0.5 if lb - la > 0.5 * span else t), lb - la
            mid = math.exp(la + min(max(t, 0.01), 0.99) * (lb - la))
            if not a < mid < b:
                break
            f = self.excess(mid, h, side)
            if f > 0.0:
                a, fa = mid, f
                fb, last = (0.5 * fb if last == 1 else fb), 1
            else:
                b, fb = mid, f
                fa, last = (0.5 * fa if last == -1 else fa), -1
        return a, b

    def failing(self, h: float | None = None) -> float:
        """The largest scale that fails for certain (on grid ``h``, or on any grid if None), or 0."""
        return max((s for (s, g), iv in self.memo.items() if iv.lower > self.delta and h in (None, g)),
                   default=0.0)

    def bracket(self, factor: float) -> tuple[float, float]:
        """Step 1: scales ``(lo, hi)``, a factor apart, with ``hi`` passing on its automatic grid."""
        lo = hi = self.start
        if self.bound(hi, None).upper <= self.delta:
            while self.bound(lo, None).upper <= self.delta and lo > 1e-12 * self.start:
                hi, lo = lo, lo / factor
            return lo, hi
        # The exact delta decreases in the scale; the certified upper end does too while the grid resolves
        # the composed loss. Once it has dropped below 1 and then fails to improve over _STALL doublings,
        # the discretisation error grows faster than the exact delta falls (a loss per step far below
        # the grid step, in very long compositions): larger scales cannot pass either.
        best_up, best_at, stalled = 1.0, hi, 0
        while not self.bound(hi, None).upper <= self.delta:
            up = self.bound(hi, None).upper
            if up < best_up:
                best_up, best_at, stalled = up, hi, 0
            elif best_up < 1.0:
                stalled += 1
                if stalled >= _STALL:
                    raise ValueError(
                        f"no noise scale is certified for this many steps: from scale {best_at:.6g} to {hi:.6g} the "
                        f"certified delta(epsilon) no longer falls (at best {best_up:.3g}, above the target "
                        f"{self.delta:g}), the loss grid cannot resolve so long a composition of so small losses; use "
                        "fewer steps or a larger target")
            lo, hi = hi, hi * factor
            if hi > 1e12 * self.start:
                raise ValueError("no noise scale below 1e12 * sensitivity meets the target (epsilon, delta)")
        return lo, hi

    def upper_boundary(self, a: float, b: float, step: float) -> tuple[float, float]:
        """Step 2, upper criterion on grid ``step``: ``(a, b)`` narrowed, ``a`` not passing and ``b`` passing."""
        while self.bound(a, step).upper <= self.delta and a > 1e-12 * self.start:  # smaller scales pass here
            b, a = a, a / 2.0
        if self.bound(a, step).upper > self.delta:
            a, b = self.boundary(1, step, a, b, lambda x, y: y / max(self.failing(), 1e-300) <= 1.0 + self.width)
        return a, b

    def lower_boundary(self, a: float, best: float, step: float) -> float:
        """Step 2, lower criterion on grid ``step``, below the answer ``best``; returns where it started.

        The search runs from the largest scale known to fail for certain (or, moving down from ``a`` by
        growing factors, the first one found) to the smallest known not to; it only adds to the memo.
        """
        factor, c = 1.0 + self.width, self.failing(step)
        if c == 0.0:
            c = a
            while not self.bound(c, step).lower > self.delta and c > 1e-12 * self.start:
                c, factor = c / factor, min(factor * factor, 2.0)  # halving at most: a tiny scale has no grid
        if self.bound(c, step).lower > self.delta:
            d = min((s for (s, h), iv in self.memo.items() if h == step and s > c and not iv.lower > self.delta),
                    default=best)
            self.boundary(0, step, c, d, lambda x, y: best / x <= 1.0 + self.width)
        return c


def _calibrate_scale(build: Callable[..., Any], *, epsilon: float, delta: float, start: float, rtol: float,
                     width: float, factor: float = 2.0) -> ScaleCalibration:
    """The smallest noise scale whose certified upper delta(epsilon) is <= ``delta``, with a certified bracket.

    ``build(scale, value_step)`` is the composed PLD at ``scale`` (``value_step`` None: automatic); its
    exact delta(epsilon) decreases in the scale. A scale becomes the answer only once it passes (certified
    upper delta <= target on the grid it is evaluated on) and the lower end only once it fails for
    certain (certified lower delta > target), so [lower, scale] contains the exact minimal scale
    whatever the grids. The steps:

    1. bracket by doubling from ``start`` (steps of ``factor``) on the automatic grid of each scale;
    2. on one fixed grid (first the automatic one of the passing end) find the boundary of the upper
       criterion and that of the lower one, each to relative ``rtol`` (regula falsi with the Illinois
       safeguard on log(-log delta) against log scale, which is smooth and nearly linear);
    3. while the bracket between them is wider than ``width`` (relative), the discretisation is what keeps
       it open: refine the grid (the delta interval shrinks with the square of the step, so by the
       square root of the excess, 2 to 4 times) and repeat 2 inside the bracket, as long as each
       refinement narrows the delta interval at the answer by 20% or more (below ~1e-12 the FFT's
       rounding, not the grid, limits composed deltas). A scale that passes is certified on any grid, so the grid only decides how
       close to the exact minimum the answer is.
    """
    search = _ScaleSearch(build, epsilon=epsilon, delta=delta, start=start, rtol=rtol, width=width)
    lo, hi = search.bracket(factor)
    step = build(hi, None).value_step
    best, best_step = hi, step  # the answer and the grid it passed on
    last_spread = math.inf  # the width of the delta interval at the answer on the last grid
    for refinement in range(_REFINE + 1):
        # 2. The two boundaries on this grid: the upper one between a failing scale and the answer, the
        # lower one below it.
        a, b = search.upper_boundary(max(lo, search.failing()), best, step)
        if b < best:
            best, best_step = b, step
        c = search.lower_boundary(a, best, step)
        below = search.failing()
        # 3. Refine the grid while the bracket is wider than ``width``.
        gap = best / below - 1.0 if below > 0.0 else math.inf
        spread = search.bound(best, step).upper - search.bound(best, step).lower
        if gap <= width or refinement == _REFINE or not spread < 0.8 * last_spread:
            break  # narrow enough, or the grid no longer limits the delta interval (the FFT's rounding does)
        last_spread = spread
        finer = step / min(4.0, max(2.0, math.sqrt(gap / width)))
        lo = below if below > 0.0 else c
        try:
            search.bound(best, finer), search.bound(lo, finer)
        except ValueError:  # the grid would exceed the transform's size: keep this bracket
            break
        step = finer
    if search.bound(best, step).upper <= delta:  # report the finest grid the answer passes on
        best_step = step
    # One grid certifies both ends where it can (the bracket can then be checked on value_step alone).
    below = search.failing(best_step) or search.failing()
    return ScaleCalibration(best, Interval(below, best), best_step, search.bound(best, best_step))


def _calibrate(cls: type[PLD], noise: Any, *, epsilon: Any, delta: Any, sensitivity: Any, steps: Any,
               sampling_rate: Any, sampling: str, neighbours: str, rtol: float, certificate: bool) -> Any:
    """``PLD.calibrate`` (see there): the arguments checked, the composed PLD of ``cls`` calibrated."""
    e = _scalar(epsilon, "epsilon", check_positive)
    dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False, allow_one=False))
    k = _count(steps, "steps")
    sens = _scalar(sensitivity, "sensitivity", check_positive)
    q = _scalar(sampling_rate, "sampling_rate", check_probability)
    if not (_MIN_RTOL <= rtol < 0.5):
        raise ValueError(f"rtol must lie in [{_MIN_RTOL:g}, 0.5), got {rtol} (the certified bracket on a scale "
                         "is limited by the loss grid to about 1e-7)")
    if q == 0.0:
        raise ValueError("sampling_rate must be > 0: a mechanism that is never applied needs no noise")
    if dl < 1e3 * _MIN_TAIL:
        raise ValueError(f"delta must be >= {1e3 * _MIN_TAIL:g} for a calibration: below it the truncated tails "
                         f"(at least {_MIN_TAIL:g}) leave no room to certify a scale, got {dl:g}")
    _relation(sampling, neighbours)
    if q < 1.0:
        # k sampled steps reveal nothing with probability (1 - q)^k: whatever the noise, delta(epsilon) <=
        # 1 - (1 - q)^k once epsilon >= -k log(1 - q) (the add order's loss is at least -k log(1 - q)).
        silent = k * math.log1p(-q)
        if -math.expm1(silent) <= dl and e >= -silent:
            raise ValueError(f"sampling_rate = {q:g} over {k} steps meets (epsilon, delta) without any noise "
                             f"(delta(epsilon) <= 1 - (1 - sampling_rate)^steps = {-math.expm1(silent):.3g} <= delta "
                             "for every scale): there is no scale to calibrate")

    # The truncated mass joins the upper end of every delta: below delta / 1000 it leaves room to pass.
    tail = min(_TAIL_MASS, dl * 1e-3)

    def build(s: float, h: float | None) -> PLD:
        return cls.from_noise(noise, scale=s, sensitivity=sens, sampling_rate=q, sampling=sampling,
                              neighbours=neighbours).self_compose(k) \
            .with_discretization(value_step=h, tail_mass=tail)

    found = _calibrate_scale(build, epsilon=e, delta=dl, start=_calibration_start(sens, k, q, e),
                             rtol=rtol / 4.0, width=rtol)
    lower, upper = found.scale_bounds
    if not upper <= lower * (1.0 + rtol):
        warnings.warn(f"the calibrated scale {upper:.6g} is certified, but the minimal scale is only known to "
                      f"lie in [{lower:.6g}, {upper:.6g}], wider than rtol = {rtol:g} (the grid's resolution "
                      "limits it): a larger rtol states what was reached", RuntimeWarning, stacklevel=3)
    return found if certificate else found.scale
