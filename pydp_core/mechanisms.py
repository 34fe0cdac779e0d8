"""Additive noise mechanisms calibrated exactly: Laplace, Gaussian, Logistic and Subbotin_r.

Each mechanism is built from (epsilon, delta, sensitivity): its scale is the smallest one for which
``q(d) + scale * X`` is (epsilon, delta)-DP (:func:`pydp_core.minimal_scale`, Vinterbo 2022, Lemmas 1-2;
verified, never rounded down). :meth:`~AdditiveMechanism.privatize` adds iid noise to every coordinate of
a scalar or an array. Noise comes from :class:`pydp_core.Random` (secure ChaCha20 by default), in bulk
and multi-threaded.

What ``sensitivity`` means for an array (the vector mechanism of Theorem 9, with the project's
correction, see :mod:`pydp_core.calibration`):

- a scalar query, or neighbouring datasets that change a single coordinate: the calibration is exact
  for every family;
- :class:`GaussianMechanism`: the l_2 sensitivity (exact: the Gaussian is rotation invariant);
- :class:`LaplaceMechanism`: the l_1 sensitivity (Theorem 9 with r = 1; exact at delta = 0, and
  confirmed numerically for delta > 0);
- :class:`LogisticMechanism`: the l_1 sensitivity at delta = 0 (each coordinate's privacy loss is at
  most |shift| / scale); for delta > 0 treat it as a scalar mechanism;
- :class:`SubbotinMechanism` with r not in {1, 2}: Theorem 9's pairing with the l_r sensitivity does
  NOT hold in general (counterexample in tests/test_paper_002.py: r = 3, two coordinates). The
  guarantee is per coordinate; use it for scalar queries or with the sensitivity of a single
  coordinate, and account for the coordinates by composition.

.. warning::
   **Floating-point noise is not safe against least-significant-bit attacks.** Adding a floating-point
   noise sample to a floating-point value leaks information through the low-order bits of the result
   (Mironov 2012): the set of reachable doubles depends on the true value, and an attacker who sees the
   exact output can sometimes tell neighbouring datasets apart, whatever epsilon says. Therefore
   :meth:`~AdditiveMechanism.privatize` defaults to ``release=True``, the exact discrete release of
   :mod:`pydp_core.release` (Laplace and Gaussian only; the other families refuse it), and the
   floating-point path is :meth:`~AdditiveMechanism.simulate` (or ``privatize(..., release=False)``),
   for research, simulation and utility estimates only.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import as_float_array, check_delta, check_epsilon, check_positive
from .calibration import minimal_scale
from .noise import Gaussian, Laplace, Logistic, NoiseFamily, Subbotin
from .random import as_random

__all__ = [
    "AdditiveMechanism",
    "LaplaceMechanism",
    "GaussianMechanism",
    "LogisticMechanism",
    "SubbotinMechanism",
]


def _scalar_param(value: Any, check, name: str, **kw) -> float:
    arr = check(value, name, **kw) if kw else check(value, name)
    if np.ndim(arr) != 0:
        raise TypeError(f"{name} must be a scalar")
    return float(arr)


class AdditiveMechanism:
    """q(d) + scale * X with X from a standard symmetric log-concave family, calibrated exactly.

    Subclasses fix the family. Not safe against least-significant-bit attacks on floating-point outputs
    (see the module documentation).
    """

    _noise: NoiseFamily

    def __init__(self, *, epsilon: float, delta: float = 0.0, sensitivity: float = 1.0) -> None:
        self._epsilon = _scalar_param(epsilon, check_epsilon, "epsilon")
        self._delta = _scalar_param(delta, check_delta, "delta")
        if self._epsilon == 0.0 and self._delta == 0.0:
            raise ValueError("epsilon must be > 0 when delta = 0")
        self._sensitivity = _scalar_param(sensitivity, check_positive, "sensitivity")
        self._scale = float(minimal_scale(self._noise, epsilon=self._epsilon, delta=self._delta, sensitivity=self._sensitivity))

    # -- the calibration -----------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def delta(self) -> float:
        return self._delta

    @property
    def sensitivity(self) -> float:
        """The query's sensitivity (for arrays: see the module docs for the norm each family pairs with)."""
        return self._sensitivity

    @property
    def scale(self) -> float:
        """The noise scale: the smallest one giving (epsilon, delta)-DP."""
        return self._scale

    @property
    def variance(self) -> float:
        """Variance of the noise in each coordinate: scale^2 * Var(X)."""
        return self._scale * self._scale * self._noise.variance

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)

    @property
    def noise(self) -> NoiseFamily:
        """The standard noise family."""
        return self._noise

    # -- sampling ------------------------------------------------------------------------------------
    def _sample(self, rng, out: np.ndarray) -> None:
        raise NotImplementedError

    def privatize(self, values, rng=None, release: bool = True):
        """A noisy copy of ``values`` (a scalar or an array of finite numbers).

        ``release=True`` (the default): the floating-point-safe release of :mod:`pydp_core.release`:
        values rounded to a power-of-two grid (the rounding charged to the sensitivity) plus exact
        discrete Laplace or discrete Gaussian noise, calibrated on the grid and verified. A scalar is one
        scalar query; an array is one vector query with the l1 (Laplace) or l2 (Gaussian) sensitivity.
        Only :class:`LaplaceMechanism` and :class:`GaussianMechanism` (and Subbotin orders 1 and 2) have
        this path; the others raise :class:`pydp_core.release.ReleaseNotSupported`.

        ``release=False``: :meth:`simulate`, floating-point noise of exactly ``scale`` for simulations
        (not safe against least-significant-bit attacks: see the module docs).

        ``rng``: ``None`` (a fresh secure generator from OS entropy: use this for releases), a
        :class:`pydp_core.Random`, or a ``numpy.random.Generator`` (keys a ChaCha20 stream; reproducible,
        not for releases). Returns a float for a scalar input, else a float64 array of the same shape.
        """
        if not release:
            return self.simulate(values, rng)
        from .release import release_noise

        arr = as_float_array(values, "values")
        return release_noise(
            self._noise, arr if arr.ndim else float(arr), epsilon=self._epsilon, delta=self._delta,
            sensitivity=self._sensitivity, rng=rng, vector=arr.size > 1,
        )

    def simulate(self, values, rng=None):
        """values + iid floating-point noise of exactly ``scale``: for simulations and utility studies,
        NOT for releases (floating-point noise is not safe against least-significant-bit attacks, see the
        module docs; use :meth:`privatize` for releases). Arguments as in :meth:`privatize`."""
        arr = as_float_array(values, "values")
        if not np.isfinite(arr).all():
            raise ValueError("values must be finite (NaN or infinity found)")
        gen = as_random(rng)
        out = np.empty(arr.shape, dtype=np.float64)
        self._sample(gen, out)
        out += arr
        if arr.ndim == 0:
            return float(out)
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(epsilon={self._epsilon:g}, delta={self._delta:g}, "
                f"sensitivity={self._sensitivity:g}, scale={self._scale:.6g})")


class LaplaceMechanism(AdditiveMechanism):
    """Laplace noise: (epsilon, delta)-DP for an l_1 sensitivity; scale = D / (eps - 2 log(1 - delta)) (Theorem 3).

    Not safe against least-significant-bit attacks on floating-point outputs (see the module docs).
    """

    _noise = Laplace()

    def _sample(self, rng, out):
        rng.laplace(0.0, self._scale, out=out)


class GaussianMechanism(AdditiveMechanism):
    """The exact (analytic) Gaussian mechanism for an l_2 sensitivity; ``scale`` is the standard deviation.

    delta must be > 0. Not safe against least-significant-bit attacks on floating-point outputs.
    """

    _noise = Gaussian()

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float = 1.0) -> None:
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity)

    def _sample(self, rng, out):
        rng.normal(0.0, self._scale, out=out)


class LogisticMechanism(AdditiveMechanism):
    """Logistic noise (Vinterbo 2022, Theorem 4); like the Laplace it reaches delta = 0.

    Not safe against least-significant-bit attacks on floating-point outputs (see the module docs).
    """

    _noise = Logistic()

    def _sample(self, rng, out):
        rng.logistic(0.0, self._scale, out=out)


class SubbotinMechanism(AdditiveMechanism):
    """Subbotin_r noise, density exp(-|x|^r / r) / C(r) (r >= 1), calibrated exactly for a scalar query.

    ``SubbotinMechanism(1, ...)`` is the Laplace and ``SubbotinMechanism(2, ...)`` the Gaussian
    mechanism. For r > 1, delta must be > 0. For arrays the noise is iid per coordinate; the l_r
    pairing of the paper's Theorem 9 is a guarantee only for r in {1, 2} (see the module docs), so
    :func:`pydp_core.select_subbotin` reproduces the paper's choice of r but not a vector guarantee.
    Not safe against least-significant-bit attacks on floating-point outputs.
    """

    def __init__(self, r: float, *, epsilon: float, delta: float, sensitivity: float = 1.0) -> None:
        self._noise = Subbotin(r)  # validates r (finite, >= 1), naming it
        self._r = self._noise.r
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity)

    @property
    def r(self) -> float:
        return self._r

    def _sample(self, rng, out):
        rng.subbotin(self._r, 0.0, self._scale, out=out)

    def __repr__(self) -> str:
        return f"SubbotinMechanism(r={self._r:g}, " + super().__repr__().split("(", 1)[1]
