"""Exact calibration of iid noise on a vector query whose neighbours differ inside an l_inf ball (a box).

A query q with values in R^m whose neighbouring values differ by a vector d in the box
[-w, w]^m (for example the mean of n records in an l_inf ball of width W: w = W / n), released k times
with independent noise ``scale * X`` in every coordinate, X from a symmetric log-concave family. The
pair of output distributions is the product of the one-dimensional pairs (f, f(. - |d_i|)), each
composed k times. For such families a larger shift Blackwell-dominates a smaller one and products
preserve the order, so the corner |d_i| = w is the worst case (proof in ``docs/study-subbotin.md``).
The exact guarantee is therefore the privacy-loss distribution of the one-dimensional mechanism with
shift w / scale, self-composed N = m k times, and the minimal scale depends on m and k only through
N. This replaces the paper's Theorem 9 (Vinterbo 2022), which pairs the l_r sensitivity with iid
Subbotin_r noise and is exact only for r = 2 (see ``docs/calibration.md``).

The search is the root solver of :mod:`.calibration`; :mod:`pydp_core.calibration` re-exports these
names (lazily, so that importing it does not load the accounting).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validation import check_delta, check_finite, check_int, check_positive_scalar
from .calibration import _calibrate_scale, _calibration_start
from .core import PLD
from .interval import Interval

__all__ = ["box_pld", "calibrate_box", "BoxCalibration"]

# The loss grid is refined while the certified bracket on the scale is wider than this (relative).
_BRACKET = 1e-3


def box_pld(noise: Any, *, scale: Any, shifts: Any, releases: int = 1) -> PLD:
    """The privacy-loss distribution of iid noise on a vector query, for one shift vector.

    The output distributions of a neighbouring pair are ``q + scale * X`` with q = a and q = a + d,
    X with iid coordinates from ``noise``. Their PLD is the composition of the one-dimensional PLDs
    with sensitivities |d_i| (coordinates with d_i = 0 reveal nothing), each composed ``releases``
    times (k releases with independent noise).

    Parameters
    ----------
    noise : Gaussian, Laplace, Logistic or Subbotin
        The unit-scale family of every coordinate.
    scale : float
        The noise scale (> 0, finite).
    shifts : array_like
        The shift vector d (finite; at least one non-zero entry).
    releases : int, optional
        Number of releases k (>= 1).

    Returns
    -------
    PLD
        A :class:`pydp_core.accounting.pld.PLD`; query it with ``delta(epsilon)`` or ``epsilon(delta)``.

    Raises
    ------
    ValueError
        If ``scale`` is not finite and > 0, a shift is not finite, all shifts are 0, or
        ``releases`` < 1.
    TypeError
        If ``noise`` is not one of the four families, or ``releases`` is not an integer.

    Examples
    --------
    >>> from pydp_core.noise import Gaussian
    >>> iv = box_pld(Gaussian(), scale=1.0, shifts=[0.6, 0.8]).delta(1.0)
    >>> from pydp_core.accounting import gaussian
    >>> bool(iv.lower <= gaussian.delta(1.0, epsilon=1.0) <= iv.upper)  # l2 norm 1: exactly GDP(1)
    True

    References
    ----------
    Vinterbo 2022; Dong, Roth and Su 2022.
    """
    s = check_positive_scalar(scale, "scale")
    k = check_int(releases, "releases", 1)
    d = np.abs(np.asarray(check_finite(shifts, "shifts"), dtype=float).reshape(-1))
    values, counts = np.unique(d[d > 0.0], return_counts=True)
    if values.size == 0:
        raise ValueError("shifts must have a non-zero entry (a zero shift reveals nothing)")
    parts = [PLD.from_noise(noise, scale=s, sensitivity=float(v)).self_compose(int(c) * k)
             for v, c in zip(values, counts)]
    return PLD.composition(parts)


@dataclass(frozen=True)
class BoxCalibration:
    """The result of :func:`calibrate_box`: the scale and the certificate that it meets the target.

    Parameters
    ----------
    noise : NoiseFamily
        The family.
    scale : float
        The calibrated scale: the certified upper bound of delta(epsilon) is <= the target at this scale.
    scale_bounds : Interval
        Certified bounds on the exact minimal scale: ``upper`` is ``scale``; at ``lower`` the certified
        lower bound of delta(epsilon) exceeds the target (delta(epsilon) decreases in the scale, so no
        smaller scale meets it).
    value_step : float
        The loss grid step of the certificate (rebuild it with :meth:`pld`).
    delta_bounds : Interval
        The certified interval of the exact delta(epsilon) at ``scale``.
    epsilon, delta : float
        The target.
    sensitivity : float
        The per-coordinate (l_inf) sensitivity w.
    dimension, releases : int
        m and k.

    Examples
    --------
    >>> from pydp_core.noise import Laplace
    >>> c = calibrate_box(Laplace(), epsilon=1.0, delta=1e-6, sensitivity=1.0)
    >>> bool(c.delta_bounds.upper <= 1e-6), c.steps
    (True, 1)
    """

    noise: Any
    scale: float
    scale_bounds: Any
    value_step: float
    delta_bounds: Any
    epsilon: float
    delta: float
    sensitivity: float
    dimension: int
    releases: int

    @property
    def steps(self) -> int:
        """N = dimension * releases: the number of composed one-dimensional mechanisms."""
        return self.dimension * self.releases

    @property
    def rmse(self) -> float:
        """The root-mean-square error of each coordinate, ``scale * noise.std``."""
        return self.scale * float(self.noise.std)

    @property
    def rmse_bounds(self) -> Interval:
        """Certified bounds on the per-coordinate RMSE at the exact minimal scale."""
        std = float(self.noise.std)
        return Interval(self.scale_bounds.lower * std, self.scale_bounds.upper * std)

    def pld(self, scale: float | None = None) -> PLD:
        """The corner PLD on this certificate's grid, at ``scale`` (default: the calibrated one)."""
        s = self.scale if scale is None else scale
        return box_pld(self.noise, scale=s, shifts=[self.sensitivity], releases=self.steps) \
            .with_discretization(value_step=self.value_step)


def calibrate_box(noise: Any, *, epsilon: Any, delta: Any, sensitivity: Any, dimension: int = 1,
                  releases: int = 1, rtol: float = 1e-4) -> BoxCalibration:
    """The smallest scale of iid noise meeting (epsilon, delta) for a box-bounded vector query, exactly.

    The worst neighbouring pair shifts every coordinate by ``sensitivity`` (the corner of the box), so
    the mechanism is (epsilon, delta)-DP exactly when the PLD of the one-dimensional mechanism,
    self-composed N = ``dimension * releases`` times, has delta(epsilon) <= ``delta``. The search is
    that of :meth:`pydp_core.accounting.pld.PLD.calibrate`: bracketing by doubling, then on a fixed
    loss grid the boundaries of the certified upper and lower bounds of delta(epsilon), each to relative
    ``rtol``, the grid refined (up to 256 times) while the bracket between them is wider than 0.1% and
    each refinement narrows the delta interval. The
    returned scale is never one whose certified delta exceeds the target.

    Parameters
    ----------
    noise : Gaussian, Laplace, Logistic or Subbotin
        The unit-scale family of every coordinate.
    epsilon : float
        Target epsilon (> 0, finite).
    delta : float
        Target delta in (0, 1).
    sensitivity : float
        The per-coordinate sensitivity w: neighbouring query values differ by at most w in each
        coordinate (the mean of n records in a box of width W: w = W / n).
    dimension : int, optional
        The number of coordinates m (>= 1).
    releases : int, optional
        The number of releases k (>= 1), each with independent noise.
    rtol : float, optional
        Relative width of the final bracket, in (0, 0.1).

    Returns
    -------
    BoxCalibration
        The scale, its grid, and the certified delta interval there.

    Raises
    ------
    ValueError
        If an argument is out of range, or no scale below 1e12 * sensitivity meets the target.
    TypeError
        If ``noise`` is not one of the four families, or ``dimension``/``releases`` is not an integer.

    Examples
    --------
    >>> from pydp_core.noise import Subbotin
    >>> c = calibrate_box(Subbotin(4), epsilon=1.0, delta=1e-6, sensitivity=1 / 500, dimension=10)
    >>> round(c.scale, 4), bool(c.delta_bounds.upper <= 1e-6)
    (0.0501, True)

    References
    ----------
    Vinterbo 2022; Doroshenko et al. 2022.
    """
    eps = check_positive_scalar(epsilon, "epsilon")
    target = float(check_delta(delta, "delta", allow_zero=False))
    w = check_positive_scalar(sensitivity, "sensitivity")
    m = check_int(dimension, "dimension", 1)
    k = check_int(releases, "releases", 1)
    if not 0.0 < rtol < 0.1:
        raise ValueError(f"rtol must lie in (0, 0.1), got {rtol}")
    steps = m * k

    def build(s: float, h: float | None) -> Any:
        return box_pld(noise, scale=s, shifts=[w], releases=steps).with_discretization(value_step=h)

    found = _calibrate_scale(build, epsilon=eps, delta=target, start=_calibration_start(w, steps, 1.0, eps),
                             rtol=rtol, width=max(_BRACKET, rtol))
    if not found.scale_bounds.lower > 0.0:
        raise ValueError("the discretisation cannot certify a lower bound on the scale; lower rtol")
    return BoxCalibration(noise, found.scale, found.scale_bounds, found.value_step, found.delta_bounds, eps, target,
                          w, m, k)
