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
  NOT hold in general (counterexample in ``docs/calibration.md``: r = 3, two coordinates). The
  guarantee is per coordinate; use it for scalar queries or with the sensitivity of a single
  coordinate, and account for the coordinates by composition.

.. warning::
   **Floating-point noise is not safe against least-significant-bit attacks.** Adding a floating-point
   noise sample to a floating-point value leaks information through the low-order bits of the result
   (Mironov 2012): the set of reachable doubles depends on the true value, and an attacker who sees the
   exact output can sometimes tell neighbouring datasets apart, whatever epsilon says. Therefore
   :meth:`~AdditiveMechanism.privatize` defaults to ``release=True``, the exact discrete release of
   :mod:`pydp_core.release` (Laplace, Gaussian, and the lattice Subbotin_r and Logistic releases with
   delta > 0, or the pure-DP Logistic lattice release with delta = 0, an array as one l_inf-bounded vector
   query; truncated and user-defined families refuse it), and the
   floating-point path is :meth:`~AdditiveMechanism.simulate` (or ``privatize(..., release=False)``),
   for research, simulation and utility estimates only.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._arrays import accepts_arrays
from ._safety import check_release_delta
from ._validation import as_float_array, as_scalar, check_delta, check_epsilon_scalar, check_finite, check_positive_scalar
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


class AdditiveMechanism:
    """q(d) + scale * X with X from a standard symmetric log-concave family, calibrated exactly.

    Subclasses fix the family. Not safe against least-significant-bit attacks on floating-point outputs
    (see the module documentation).

    Parameters
    ----------
    epsilon : float
        >= 0 and finite (> 0 when delta = 0).
    delta : float, optional
        In [0, 1) (default 0).
    sensitivity : float, optional
        The query's sensitivity, > 0 and finite (default 1).
    confirm_delta : bool, optional
        Accept a delta above :data:`pydp_core._safety.DELTA_CONFIRM` (1e-3) without a
        :class:`~pydp_core.PrivacyWarning`. delta >= 1/2 is always refused.

    Attributes
    ----------
    tied_bounds : (float, float) or None
        The clamping bounds the mechanism is tied to (set by :func:`pydp_core.io.mechanism`): the
        privatizers of :mod:`pydp_core.io` clamp to them when given no bounds and refuse other bounds.
        None (the default) ties it to none.

    Raises
    ------
    ValueError
        If a parameter is out of range, including delta >= 1/2.

    Examples
    --------
    >>> m = LaplaceMechanism(epsilon=1.0, sensitivity=2.0)
    >>> m.scale, m.variance
    (2.0, 8.0)
    """

    _noise: NoiseFamily
    tied_bounds: tuple[float, float] | None = None

    def __init__(self, *, epsilon: float, delta: float = 0.0, sensitivity: float = 1.0,
                 confirm_delta: bool = False) -> None:
        self._epsilon = check_epsilon_scalar(epsilon)
        self._delta = as_scalar(check_delta(delta), "delta")
        check_release_delta(self._delta, confirm_delta)
        if self._epsilon == 0.0 and self._delta == 0.0:
            raise ValueError("epsilon must be > 0 when delta = 0")
        self._sensitivity = check_positive_scalar(sensitivity, "sensitivity")
        self._scale = minimal_scale(self._noise, epsilon=self._epsilon, delta=self._delta, sensitivity=self._sensitivity)

    # -- the calibration -----------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """The epsilon the mechanism is calibrated to."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """The delta the mechanism is calibrated to."""
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
        """Standard deviation of the noise in each coordinate."""
        return math.sqrt(self.variance)

    @property
    def noise(self) -> NoiseFamily:
        """The standard noise family."""
        return self._noise

    # -- sampling ------------------------------------------------------------------------------------
    def _sample(self, rng: Any, out: np.ndarray) -> None:
        raise NotImplementedError

    def charge(self, accountant: Any, *, release: bool = True) -> None:
        """Charge one run of this mechanism to ``accountant`` (raises, and records nothing, past its limit).

        Parameters
        ----------
        accountant : Accountant
            The :class:`~pydp_core.Accountant` to charge.
        release : bool, optional
            True (the default): the exact discrete release, charged as its calibrated guarantee (pure
            epsilon-DP for the Laplace with delta = 0, else (epsilon, delta)-DP); False: the
            floating-point noise, charged as the continuous mechanism of ``scale``.

        Raises
        ------
        BudgetExceededError
            If the spend would take the total past the accountant's limit.
        TypeError
            If ``accountant`` has no ``spend`` method.

        Examples
        --------
        >>> acc = dp.Accountant(dp.PureDP(1.0))
        >>> LaplaceMechanism(epsilon=0.5).charge(acc)
        >>> acc.total()
        PureDP(epsilon=0.5)
        """
        from .accounting import ApproxDP, PureDP

        if not callable(getattr(accountant, "spend", None)):
            raise TypeError(f"accountant must be a pydp_core.Accountant, not {type(accountant).__name__}")
        key = self._noise.identity
        if key == ("Laplace",) and (not release or self._delta == 0.0):
            accountant.spend_laplace(scale=self._scale, sensitivity=self._sensitivity)
        elif key == ("Gaussian",) and not release:
            accountant.spend_gaussian(sigma=self._scale, sensitivity=self._sensitivity)
        elif self._delta == 0.0:
            accountant.spend(PureDP(self._epsilon))
        else:
            accountant.spend(ApproxDP(self._epsilon, self._delta))

    @accepts_arrays("values", keep_float32=True)
    def privatize(self, values: ArrayLike, rng: Any = None, release: bool = True, *, simulation: bool = False,
                  accountant: Any = None) -> Any:
        """A noisy copy of ``values`` (a scalar or an array of finite numbers).

        ``release=True`` (the default): the floating-point-safe release of :mod:`pydp_core.release`:
        values rounded to a power-of-two grid (the rounding charged to the sensitivity) plus exact
        integer noise, calibrated on the grid and verified: discrete Laplace or discrete Gaussian noise
        (a scalar is one scalar query; an array is one vector query with the l1 (Laplace) or l2
        (Gaussian) sensitivity), or, for :class:`SubbotinMechanism` (r not 1 or 2) and
        :class:`LogisticMechanism`, the lattice table noise of :func:`pydp_core.release_subbotin` /
        :func:`pydp_core.release_logistic`: a scalar is one scalar query, and an array one vector
        query with l_inf sensitivity ``sensitivity`` (every coordinate moves by at most it; this also
        covers l1 and l2 sensitivities of that size), calibrated by
        :func:`pydp_core.release.calibrate_vector_release` on the product law (its scale is larger than
        :attr:`scale`, the scalar one). They need delta > 0, except a Logistic mechanism with delta = 0:
        its release is pure epsilon-DP through the table's exact geometric tail (an array of m values gets
        epsilon / m per coordinate; docs/release.md, section 6). Other families raise
        :class:`pydp_core.release.ReleaseNotSupportedError`.

        ``release=False``: :meth:`simulate`, floating-point noise of exactly ``scale`` for simulations
        (not safe against least-significant-bit attacks: see the module docs).

        ``rng``: ``None`` (a fresh secure generator from OS entropy: use this for releases), a
        :class:`pydp_core.Random`, or a ``numpy.random.Generator`` (keys a ChaCha20 stream; reproducible,
        not for releases). A seeded or numpy generator with ``release=True`` is refused unless
        ``simulation=True`` says the run is a simulation.

        ``accountant``: an :class:`~pydp_core.Accountant` charged (:meth:`charge`) before any noise is
        drawn; past its limit it raises :class:`~pydp_core.BudgetExceededError` and nothing is released.

        Parameters
        ----------
        values : float or array_like
            The true values (finite).
        rng : None, Random or numpy.random.Generator, optional
            The generator (see above).
        release : bool, optional
            The exact discrete release (default) or floating-point noise.
        simulation : bool, optional
            Allow a seeded or numpy ``rng`` for a simulation.
        accountant : Accountant, optional
            Charged before the noise is drawn.

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar input, else a float64 array of the same shape.

        Raises
        ------
        ValueError
            If ``rng`` is reproducible without ``simulation=True``, or a value is not finite.
        BudgetExceededError
            If the accountant's limit would be exceeded.
        ReleaseNotSupportedError
            For ``release=True`` with a family that has no floating-point-safe release.

        Examples
        --------
        >>> acc = dp.Accountant(dp.PureDP(1.0))
        >>> y = LaplaceMechanism(epsilon=1.0).privatize(3.0, accountant=acc)
        >>> acc.total()
        PureDP(epsilon=1.0)
        """
        from ._safety import check_release_rng

        if release:
            check_release_rng(rng, simulation)
        if accountant is not None:
            self.charge(accountant, release=release)
        if not release:
            return self.simulate(values, rng)
        from .release.dispatch import release_noise

        arr = as_float_array(values, "values")
        # An array is one vector query (for the lattice families: l_inf sensitivity, docs/release.md, section 5).
        vector = arr.size > 1
        return release_noise(
            self._noise, arr if arr.ndim else float(arr), epsilon=self._epsilon, delta=self._delta,
            sensitivity=self._sensitivity, rng=rng, vector=vector, simulation=True, confirm_delta=True,
        )

    @accepts_arrays("values", keep_float32=True)
    def simulate(self, values: ArrayLike, rng: Any = None) -> Any:
        """values + iid floating-point noise of exactly ``scale``, for simulations and utility studies.

        NOT for releases (floating-point noise is not safe against least-significant-bit attacks, see the
        module docs; use :meth:`privatize` for releases). Arguments as in :meth:`privatize`.
        """
        arr = check_finite(values, "values")
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

    Parameters
    ----------
    epsilon : float
        >= 0 and finite (> 0 when delta = 0).
    delta : float, optional
        In [0, 1) (default 0).
    sensitivity : float, optional
        The l_1 sensitivity, > 0 and finite (default 1).
    confirm_delta : bool, optional
        Accept a delta above 1e-3 without a :class:`~pydp_core.PrivacyWarning` (as in
        :class:`AdditiveMechanism`).

    Examples
    --------
    >>> m = LaplaceMechanism(epsilon=1.0)
    >>> m.scale
    1.0
    >>> m.simulate(10.0, rng=dp.Random(seed=7))
    11.06489929464...
    """

    _noise = Laplace()

    def _sample(self, rng: Any, out: np.ndarray) -> None:
        rng.laplace(0.0, self._scale, out=out)


class GaussianMechanism(AdditiveMechanism):
    """The exact (analytic) Gaussian mechanism for an l_2 sensitivity; ``scale`` is the standard deviation.

    delta must be > 0. Not safe against least-significant-bit attacks on floating-point outputs.

    Parameters
    ----------
    epsilon : float
        >= 0 and finite.
    delta : float
        In (0, 1).
    sensitivity : float, optional
        The l_2 sensitivity, > 0 and finite (default 1).
    confirm_delta : bool, optional
        Accept a delta above 1e-3 without a :class:`~pydp_core.PrivacyWarning` (as in
        :class:`AdditiveMechanism`).

    Examples
    --------
    >>> g = GaussianMechanism(epsilon=1.0, delta=1e-6)
    >>> g.scale
    4.22467888932...
    >>> g.privatize([1.0, 2.0], rng=dp.Random(seed=7), simulation=True)
    array([-1.21447754,  5.16213989])
    """

    _noise = Gaussian()

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float = 1.0, confirm_delta: bool = False) -> None:
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, confirm_delta=confirm_delta)

    def _sample(self, rng: Any, out: np.ndarray) -> None:
        rng.normal(0.0, self._scale, out=out)


class LogisticMechanism(AdditiveMechanism):
    """Logistic noise (Vinterbo 2022, Theorem 4); like the Laplace it reaches delta = 0.

    Not safe against least-significant-bit attacks on floating-point outputs (see the module docs).

    Parameters
    ----------
    epsilon : float
        >= 0 and finite (> 0 when delta = 0).
    delta : float, optional
        In [0, 1) (default 0).
    sensitivity : float, optional
        The sensitivity, > 0 and finite (default 1).
    confirm_delta : bool, optional
        Accept a delta above 1e-3 without a :class:`~pydp_core.PrivacyWarning` (as in
        :class:`AdditiveMechanism`).

    Examples
    --------
    >>> LogisticMechanism(epsilon=1.0).scale
    1.0
    """

    _noise = Logistic()

    def _sample(self, rng: Any, out: np.ndarray) -> None:
        rng.logistic(0.0, self._scale, out=out)


class SubbotinMechanism(AdditiveMechanism):
    """Subbotin_r noise, density ``exp(-|x|^r / r) / C(r)`` (r >= 1), calibrated exactly for a scalar query.

    ``SubbotinMechanism(1, ...)`` is the Laplace and ``SubbotinMechanism(2, ...)`` the Gaussian
    mechanism. For r > 1, delta must be > 0. For arrays the noise is iid per coordinate; the l_r
    pairing of the paper's Theorem 9 is a guarantee only for r in {1, 2} (see the module docs), so
    :func:`pydp_core.select_subbotin` reproduces the paper's choice of r but not a vector guarantee.
    Not safe against least-significant-bit attacks on floating-point outputs.

    Parameters
    ----------
    r : float
        The order, finite and >= 1.
    epsilon : float
        >= 0 and finite.
    delta : float
        In [0, 1); > 0 for r > 1.
    sensitivity : float, optional
        The sensitivity, > 0 and finite (default 1).
    confirm_delta : bool, optional
        Accept a delta above 1e-3 without a :class:`~pydp_core.PrivacyWarning` (as in
        :class:`AdditiveMechanism`).

    Examples
    --------
    >>> SubbotinMechanism(3.0, epsilon=1.0, delta=1e-6).scale
    8.65900639905...
    """

    def __init__(self, r: float, *, epsilon: float, delta: float, sensitivity: float = 1.0,
                 confirm_delta: bool = False) -> None:
        self._noise = Subbotin(r)  # validates r (finite, >= 1), naming it
        self._r = self._noise.r
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, confirm_delta=confirm_delta)

    @property
    def r(self) -> float:
        """The Subbotin order."""
        return self._r

    def _sample(self, rng: Any, out: np.ndarray) -> None:
        rng.subbotin(self._r, 0.0, self._scale, out=out)

    def __repr__(self) -> str:
        return f"SubbotinMechanism(r={self._r:g}, " + super().__repr__().split("(", 1)[1]
