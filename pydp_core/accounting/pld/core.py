"""The :class:`PLD` class: a lazy composition of mechanisms, its grid, and its certified queries.

A PLD records (mechanism, count) terms (:mod:`.mechanisms`); the first query chooses the grid for the
whole composition (:mod:`.grid`), discretises each distinct mechanism once per neighbour order and
composes them in the Fourier domain (``pld_compose``, ``csrc/include/pydp/accounting/pld.hpp``, with the
GIL released). Queries take the worse of the two orders, screening them on a coarser grid first
(:meth:`PLD._combine`); the trade-off and GDP curves are in :mod:`.curves`, the JSON descriptions in
:mod:`.spec`, the calibration of a scale in :mod:`.calibration`.

This module is longer than the package's others (~1370 lines) because it carries the public
documentation of every method of the class (about 1000 lines of docstrings, doctested; about 130 lines
of code); the methods
delegate their bodies to the modules beside it, and a class's methods stay in one file.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..._core import accounting as _acc
from ..._validation import check_delta, check_epsilon, check_positive, check_probability
from . import curves as _curves
from . import grid as _grid
from . import mechanisms as _mech
from ._args import _count, _scalar
from .calibration import _calibrate
from .interval import Interval, _merge, _shape
from .spec import _from_spec

if TYPE_CHECKING:
    from ..budgets import GDP, ApproxDP

__all__ = ["PLD"]


class PLD:
    """A privacy-loss distribution with certified two-sided bounds.

    Build one with :meth:`from_noise`, :meth:`from_density` (truncated and user-defined families),
    :meth:`from_discrete_laplace`, :meth:`from_discrete_gaussian`, :meth:`from_gdp`,
    :meth:`from_approx_dp`, :meth:`from_randomized_response` or :meth:`from_spec`; combine with
    :meth:`compose` and :meth:`self_compose`; query with :meth:`delta`, :meth:`epsilon`, :meth:`tradeoff`,
    :meth:`roc` and :meth:`mu`, which return an :class:`Interval` containing the truth; convert with
    :meth:`to_approx_dp`, :meth:`approx_dp_profile` and :meth:`to_gdp`.

    Parameters
    ----------
    terms : sequence of tuple
        Pairs (mechanism, count): the discretisable mechanisms and how often each is composed (use the
        constructors, not this).
    value_step : float, optional
        The grid step of the privacy loss (default: chosen from the number of steps). A given step is
        used as given, except with Laplace noise under add/remove neighbours whose largest loss l is at
        least the step: it is then lowered by less than a factor n / (n + 1) (n >= 1 the grid steps
        below l) to put a grid point just below l (see :attr:`value_step`).
    tail_mass : float, optional
        The probability mass the loss window may leave out on each side (accounted for in the bounds).

    Examples
    --------
    >>> from pydp_core.accounting.pld import PLD
    >>> from pydp_core.noise import Gaussian
    >>> step = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01)
    >>> iv = step.self_compose(10_000).epsilon(1e-5)
    >>> iv.lower <= 6.18771 <= iv.upper
    True
    """

    __slots__ = ("_terms", "_value_step", "_tail_mass", "_bounds", "_auto_step", "_fine", "_screen")

    def __init__(self, terms: Sequence[tuple[Any, int]], *, value_step: float | None = None,
                 tail_mass: float = _grid._TAIL_MASS) -> None:
        # terms: ((mechanism, count), ...), merged by mechanism key.
        merged: dict[Any, Any] = {}
        for mech, count in terms:
            key = mech.key()
            if key in merged:
                merged[key] = (merged[key][0], merged[key][1] + count)
            else:
                merged[key] = (mech, count)
        self._terms = tuple(merged.values())
        self._value_step = value_step
        self._tail_mass = tail_mass
        self._bounds: list[Any] | None = None
        self._auto_step: float | None = None
        self._fine: dict[Any, Any] = {}  # neighbour order (remove: bool) -> bounds on the grid value_step
        self._screen: list[Any] | None = None  # bounds of every order on the screening grid

    # ----- constructors ---------------------------------------------------------------------------------
    @classmethod
    def from_noise(cls, noise: Any, *, scale: Any, sensitivity: Any = 1.0, sampling_rate: Any = 1.0,
                   sampling: str = "poisson", neighbours: str = "add_remove") -> PLD:
        """The PLD of additive noise ``scale * X``, X ~ ``noise``, on a query of l1/l2 ``sensitivity``.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, Truncated or LogConcaveFamily
            The unit-scale noise family (:mod:`pydp_core.noise`). Truncated and user-defined families
            take the slower density path (:meth:`from_density`; Poisson sampling, add/remove only).
        scale : float
            Noise scale (> 0); sigma for the Gaussian, b for the Laplace.
        sensitivity : float, optional
            Sensitivity of the query (> 0).
        sampling_rate : float, optional
            Sampling rate q in [0, 1]: the probability that a given record is in the sample.
        sampling : {"poisson", "without_replacement"}, optional
            ``"poisson"``: each record is included independently with probability q.
            ``"without_replacement"``: a batch of fixed size m is drawn from n records, q = m / n.
        neighbours : {"add_remove", "substitution"}, optional
            ``"add_remove"``: neighbouring datasets differ by one record, added or removed; each
            record's contribution to the query has norm <= ``sensitivity``.
            ``"substitution"``: one record is replaced by another, each of norm <= ``sensitivity``
            (so the query moves by up to 2 ``sensitivity``: without sampling this is the add/remove PLD
            at twice the sensitivity). This is dp-accounting's REPLACE_ONE convention.

        Returns
        -------
        PLD
            Supported relations: Poisson sampling with add/remove neighbours (remove: P = (1-q) f +
            q f(. - d) vs Q = f; add: the reverse; both orders are kept and the worse one is reported),
            Poisson sampling with substitution neighbours (P = (1-q) f + q f(. - d) vs
            Q = (1-q) f + q f(. + d), one order suffices by symmetry), and sampling without replacement
            with substitution neighbours: the replaced record displaces another one in the batch, so the
            pair is the add/remove one at shift 2d (:meth:`fixed_size`), with
            d = sensitivity / scale (Balle, Barthe and Gaboardi 2018; Zhu, Dong and Wang 2022). The loss
            is monotone in the output (log-concavity), so its distribution follows from the family's
            log-space tails at the loss thresholds.

        Raises
        ------
        TypeError
            If ``noise`` is not a noise family of :mod:`pydp_core.noise`, or ``sampling`` /
            ``neighbours`` is not a string.
        ValueError
            If ``scale`` or ``sensitivity`` is not finite and > 0, ``sampling_rate`` is outside [0, 1],
            ``sampling`` or ``neighbours`` is not one of the names above, or sampling without
            replacement is combined with add/remove neighbours (a fixed-size sample has no
            add/remove analysis here).

        References
        ----------
        Balle, Barthe and Gaboardi 2018; Zhu, Dong and Wang 2022.

        Examples
        --------
        >>> from pydp_core.accounting.pld import PLD
        >>> from pydp_core.noise import Gaussian
        >>> sub = PLD.from_noise(Gaussian(), scale=2.0, sampling_rate=0.01, neighbours="substitution")
        >>> add_remove = PLD.from_noise(Gaussian(), scale=2.0, sampling_rate=0.01)
        >>> bool(sub.epsilon(1e-5).lower > add_remove.epsilon(1e-5).upper)
        True
        """
        return cls([(_mech.noise_term(noise, scale=scale, sensitivity=sensitivity, sampling_rate=sampling_rate,
                                      sampling=sampling, neighbours=neighbours), 1)])

    @classmethod
    def from_gdp(cls, mu: Any) -> PLD:
        """The PLD of mu-GDP (Dong, Roth and Su 2022): the Gaussian mechanism with shift mu."""
        return cls([(_mech.gdp_term(mu), 1)])

    @classmethod
    def from_approx_dp(cls, *, epsilon: Any, delta: Any = 0.0) -> PLD:
        """The worst-case PLD of an (epsilon, delta)-DP mechanism.

        Every (epsilon, delta)-DP pair is a post-processing of the four-outcome pair
        P = (delta, (1 - delta) e^eps / (1 + e^eps), (1 - delta) / (1 + e^eps), 0) and Q its reverse
        (Kairouz, Oh and Viswanath 2015), so this PLD dominates every such mechanism under composition.
        """
        return cls([(_mech.approx_dp_term(epsilon=epsilon, delta=delta), 1)])

    @classmethod
    def from_discrete_laplace(cls, *, scale: Any, sensitivity: int = 1, sampling_rate: Any = 1.0,
                              sampling: str = "poisson", neighbours: str = "add_remove") -> PLD:
        """The PLD of the discrete Laplace (two-sided geometric) mechanism on the integers, exactly.

        The noise has pmf (1 - a) / (1 + a) a^|x|, a = e^{-1/scale}, on an integer query of integer
        ``sensitivity`` D. The likelihood ratio p(x - D) / p(x) takes D + 1 values (x <= 0, x = 1..D-1,
        x >= D), so the PLD has D + 1 atoms whose masses are closed-form geometric sums. With Poisson
        sampling at ``sampling_rate`` q both add/remove orders are kept. ``sampling`` and ``neighbours``
        are as in :meth:`from_noise`: under substitution the pair is (1-q) p + q p(. - D) vs
        (1-q) p + q p(. + D), whose likelihood ratio takes 2D + 1 values (x <= -D, |x| < D, x >= D);
        without sampling it is the add/remove PLD at sensitivity 2D.
        """
        return cls([(_mech.discrete_laplace_term(scale=scale, sensitivity=sensitivity, sampling_rate=sampling_rate,
                                                 sampling=sampling, neighbours=neighbours), 1)])

    @classmethod
    def from_discrete_gaussian(cls, *, sigma2: Any = None, scale: Any = None, sensitivity: int = 1,
                               sampling_rate: Any = 1.0) -> PLD:
        """The PLD of the discrete Gaussian mechanism of the release path on the integers, from its exact pmf.

        The noise has pmf N(y) = exp(-y^2 / (2 sigma2)) / Z on the integers (Canonne, Kamath and Steinke
        2020), as sampled by :func:`pydp_core.release.sample_discrete_gaussian`; the query is an integer
        with integer ``sensitivity`` D. Each integer output y is an atom with loss
        L(y) = D (2 y - D) / (2 sigma2) (the normaliser cancels). The masses need Z: with error bounds for
        Z and the rounding, the pessimistic side over-states and the optimistic side under-states every
        mass, and the P-mass beyond the summed range (bounded by a geometric series) goes to +inf on the
        pessimistic side only.
        With Poisson sampling at ``sampling_rate`` q both add/remove orders are kept.

        Parameters
        ----------
        sigma2 : int, Fraction or float, optional
            The variance parameter sigma^2 of the release path (grid steps squared); give this or ``scale``.
        scale : float, optional
            sigma itself (sigma2 = scale**2).
        sensitivity : int, optional
            The integer sensitivity D in [1, 1e6].
        sampling_rate : float, optional
            Poisson sampling rate q in [0, 1].

        Returns
        -------
        PLD
            Add/remove neighbours; the worse order is reported.

        Raises
        ------
        TypeError
            If neither or both of ``sigma2`` and ``scale`` are given, or ``sensitivity`` is not an integer.
        ValueError
            If a parameter is out of range, or sigma2 is so large that the support would span more than
            2^28 integers (about sigma > 3e6).

        Examples
        --------
        >>> from pydp_core import release
        >>> iv = PLD.from_discrete_gaussian(sigma2=4).delta(1.0)
        >>> iv.lower <= release.discrete_gaussian_delta(epsilon=1.0, sigma2=4) <= iv.upper
        True
        """
        return cls([(_mech.discrete_gaussian_term(sigma2=sigma2, scale=scale, sensitivity=sensitivity,
                                                  sampling_rate=sampling_rate), 1)])

    @classmethod
    def from_integer_weights(cls, weights: Any, *, shift: Any) -> PLD:
        """The PLD of the symmetric integer law P(y) = W(|y|) / T on an integer query with integer sensitivity.

        The law of a lattice release (``release.calibrate_subbotin_release``: its ``table.weights()``):
        ``W = weights[0..K]``, zero beyond K, ``T = W(0) + 2 sum_{y >= 1} W(y)``. Every output is an
        exact atom (the masses with 4-ulp error bounds, raised on the pessimistic and lowered on the
        optimistic side); the outputs that only the unshifted law reaches are the P-mass at +inf. The
        two neighbour orders coincide (reflect y -> shift - y).

        Parameters
        ----------
        weights : array_like of int
            W(0), ..., W(K): non-negative integers, W(0) > 0, total T below 2**64.
        shift : int
            The integer sensitivity in [1, 2**52].

        Returns
        -------
        PLD

        Raises
        ------
        TypeError
            If ``weights`` is not a 1-d integer array or ``shift`` not an integer.
        ValueError
            If a weight is negative, W(0) = 0, the total is too large, or ``shift`` is out of range.

        Examples
        --------
        >>> iv = PLD.from_integer_weights([4, 2, 1], shift=1).delta(0.0)
        >>> bool(iv.lower <= 0.4 <= iv.upper)  # T = 10; sum_y (P - Q)_+ = (1 + 1 + 2) / 10
        True
        """
        return cls([(_mech.integer_weights_term(weights, shift=shift), 1)])

    @classmethod
    def from_density(cls, noise: Any, *, scale: Any, sensitivity: Any = 1.0, sampling_rate: Any = 1.0) -> PLD:
        """The PLD of additive noise of any symmetric log-concave family, from its density and tails.

        The slower path for :class:`~pydp_core.noise.Truncated` and
        :class:`~pydp_core.noise.LogConcaveFamily` (it accepts the built-in families too). The loss
        L(x) = log f(x - d) - log f(x) (d = sensitivity / scale, with Poisson sampling
        log(1 - q + q e^{L})) is monotone in the output x, so the output axis is cut where L crosses the
        loss grid points (bisection). A piece whose loss stays inside one grid cell enters with its exact
        P- and Q-masses (differences of the family's log-space tails); a piece that straddles a grid
        point is rounded up (pessimistic side) or down (optimistic side). For a bounded support the
        P-mass where Q has none is carried at +inf on both sides.

        Parameters
        ----------
        noise : NoiseFamily
            A unit-scale symmetric log-concave family with ``logpdf``, ``logcdf``, ``logsf`` and
            ``support_bound`` (:mod:`pydp_core.noise`).
        scale : float
            Noise scale (> 0).
        sensitivity : float, optional
            Sensitivity of the query (> 0).
        sampling_rate : float, optional
            Poisson sampling rate q in [0, 1]; add/remove neighbours, the worse order is reported.

        Returns
        -------
        PLD

        Raises
        ------
        TypeError
            If ``noise`` is not a noise family.
        ValueError
            If ``scale`` or ``sensitivity`` is not finite and > 0, or ``sampling_rate`` is outside [0, 1].

        Examples
        --------
        The truncated Laplace has loss at most 1 where both outputs are possible; beyond the bound only
        the shifted law lives, so delta(1) is that mass, (e^-4 - e^-5) / (2 (1 - e^-5)):

        >>> import math
        >>> from pydp_core.noise import Laplace, Truncated
        >>> iv = PLD.from_density(Truncated(Laplace(), 5.0), scale=1.0).delta(1.0)
        >>> iv.lower <= (math.exp(-4) - math.exp(-5)) / (2 * (1 - math.exp(-5))) <= iv.upper
        True
        """
        return cls([(_mech.density_term(noise, scale=scale, sensitivity=sensitivity, sampling_rate=sampling_rate), 1)])

    @classmethod
    def from_spec(cls, spec: Any) -> PLD:
        """A PLD from a JSON-style description (the schema of ``pydp-core compose`` and the accountant).

        ``spec`` is a dict with an optional ``"count"`` (k-fold self-composition) and one of:

        - ``"noise"``: ``"gaussian"``, ``"laplace"``, ``"logistic"`` or ``"subbotin"`` (with ``"r"``), and
          ``"scale"``, optional ``"sensitivity"`` (1), ``"sampling_rate"`` (1) and ``"bound"`` (the
          support half-width of a :class:`~pydp_core.noise.Truncated` family, through :meth:`from_density`);
        - ``"gdp"``: mu; ``"approx_dp"``: ``{"epsilon", "delta"}``; ``"randomized_response"``:
          ``{"epsilon"}``;
        - ``"discrete_laplace"``: ``{"scale", "sensitivity", "sampling_rate"}``; ``"discrete_gaussian"``:
          ``{"sigma2" or "scale", "sensitivity", "sampling_rate"}``;
        - ``"fixed_size"``, ``"truncated_poisson"``, ``"balls_in_bins"``, ``"b_min_sep"``: the keyword
          arguments of the constructor of that name, with ``"noise"`` naming the family (and ``"r"``).
        - ``"mixture_of_gaussians"``: the keywords of :meth:`from_mixture_of_gaussians`;
          ``"banded_matrix_factorization"``: those of :meth:`from_banded_matrix_factorization`;
          ``"random_allocation"``: ``{"noise"}`` (a family name as above, with ``"r"`` for subbotin, or
          ``"discrete_laplace"`` / ``"discrete_gaussian"``) and the keywords of :meth:`random_allocation`.

        Parameters
        ----------
        spec : dict
            The description.

        Returns
        -------
        PLD

        Raises
        ------
        ValueError
            If the description is malformed (unknown fields, no mechanism, a bad value).
        TypeError
            If a value has the wrong type.

        Examples
        --------
        >>> p = PLD.from_spec({"noise": "gaussian", "scale": 2.0, "count": 4})
        >>> iv, g = p.epsilon(1e-5), PLD.from_gdp(1.0).epsilon(1e-5)
        >>> abs(iv.upper - g.upper) < 1e-3
        True
        """
        return _from_spec(cls, spec)

    @classmethod
    def random_allocation(cls, noise: Any, *, scale: Any, steps: Any, participations: Any = 1,
                          sensitivity: Any = 1.0, neighbours: str = "add_remove") -> PLD:
        """The PLD of one pass of random allocation: each record takes part in exactly ``participations``
        of ``steps`` steps, the subset uniform, every step adding ``scale * X`` to its batch's sum.

        With one participation the pass's likelihood ratio is the mean of ``steps`` independent copies
        of one step's ratio under the null (Feldman and Shenfeld 2025); its law is bracketed in the
        convex order by two chains of convolutions on a geometric grid, one spreading each atom onto the
        grid points around it (dominating), one contracting each cell to its mean (dominated), so both
        ends are certified (``docs/pld.md``, "Random allocation"). With ``participations`` = k > 1 the
        upper end is the composition of k one-participation passes over blocks of about steps / k steps
        (Feldman and Shenfeld 2025) and the lower end is, for the Gaussian, the Gaussian mechanism on the
        sum of all outputs (shift k d / sqrt(steps); for the discrete Gaussian the same statistic, its
        law by an exact circular convolution), for the other families the event that the k steps fall
        one in each block (0 below epsilon ~ log(1 / alpha), ``docs/pld.md``): certified,
        but not tight (k = steps is the exact composition). Compose epochs with :meth:`self_compose`;
        calibrate the scale with :meth:`calibrate_random_allocation`.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, "discrete_laplace" or "discrete_gaussian"
            The unit-scale noise family (Logistic and Subbotin_r through their cdf and tails: the single
            step is cut where its loss grows by 0.005), or a discrete family on the integers by name
            (the laws of :meth:`from_discrete_laplace` and :meth:`from_discrete_gaussian`; the step's
            likelihood ratio has exact atoms, and k = steps is that mechanism composed exactly).
        scale : float
            Noise scale (> 0): sigma for the Gaussian and the discrete Gaussian, b for the Laplace, t of
            a = e^{-1/t} for the discrete Laplace, the family's scale otherwise.
        steps : int
            Number of steps t of the pass (>= 1).
        participations : int, optional
            Number k of steps each record takes part in (1 <= k <= t).
        sensitivity : float or int, optional
            Sensitivity of one record's contribution to a step (> 0; l2 for the Gaussian, l1 for the
            Laplace; an integer D in [1, 1e6] for the discrete families).
        neighbours : {"add_remove", "substitution"}, optional
            ``"substitution"``: the record's contribution is replaced by another of norm <= sensitivity
            in the same steps. Upper end: the k steps revealed, each of shift 2 sensitivity (no
            amplification; exact for k = steps); lower end: the add/remove pass's (the replacement may
            contribute nothing). Certified, loose for k < steps.

        Returns
        -------
        PLD
            Both neighbour orders are kept and the worse one is reported.

        Raises
        ------
        TypeError
            If ``noise`` is not one of the families above, or ``steps`` / ``participations`` is not an
            integer.
        ValueError
            If ``scale`` or ``sensitivity`` is not finite and > 0 (or not an integer in [1, 1e6] for a
            discrete family), sensitivity / scale > 10, ``steps`` < 1, or ``participations`` is outside
            [1, steps].

        References
        ----------
        Feldman and Shenfeld 2025; Blackwell 1953.

        Examples
        --------
        With one step, random allocation is the Gaussian mechanism:

        >>> from pydp_core.noise import Gaussian
        >>> a = PLD.random_allocation(Gaussian(), scale=1.0, steps=1).epsilon(1e-5)
        >>> g = PLD.from_noise(Gaussian(), scale=1.0).epsilon(1e-5)
        >>> bool(a.lower <= g.upper and g.lower <= a.upper)
        True
        """
        from .allocation import allocation_terms

        return cls(allocation_terms(noise, scale=scale, steps=steps, participations=participations,
                                    sensitivity=sensitivity, neighbours=neighbours))

    @classmethod
    def calibrate_random_allocation(cls, noise: Any, *, epsilon: Any, delta: Any, steps: Any,
                                    participations: Any = 1, sensitivity: Any = 1.0, epochs: Any = 1,
                                    rtol: float = 1e-3, certificate: bool = False) -> Any:
        """The smallest noise scale at which ``epochs`` passes of random allocation are (epsilon, delta)-DP.

        The PLD is :meth:`random_allocation` composed ``epochs`` times; the scale returned passes for
        certain (the certified upper end of delta(epsilon) is <= ``delta``) or the call raises, and with
        ``certificate=True`` the result is a :class:`~pydp_core.accounting.pld.calibration.ScaleCalibration`
        whose ``scale_bounds`` bracket the exact minimal scale (its lower end fails for certain); its
        ``value_step`` and ``delta_bounds`` are those of the chains the scale passed on (loss step 0.02,
        or those of :meth:`random_allocation` when the coarse bracket was wider than ``rtol``).

        With 1 < ``participations`` < ``steps`` the lower end of :meth:`random_allocation` is loose and
        cannot narrow the bracket, so the scale is searched on the certified upper end alone (on loss step
        0.02 chains, each scale on its automatic grid): the returned scale passes, and one smaller by at
        most the factor 1 + rtol / 4 fails on that upper end. For the Gaussian the search is bracketed
        without building a PLD: below by the scale at which the sum of all outputs (a Gaussian mechanism
        of shift k sensitivity / (scale sqrt(steps)) per pass) alone misses the target, above by the
        composition of the k steps without amplification; regula falsi on log(-log delta) then needs
        about ten evaluations. ``scale_bounds.lower`` is that sum statistic's scale where the PLD's lower
        end confirms it fails (for certain), else 0; the bracket is then wider than ``rtol`` and a
        ``RuntimeWarning`` says so. The scale is certified either way.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, "discrete_laplace" or "discrete_gaussian"
            The unit-scale noise family, as in :meth:`random_allocation`.
        epsilon, delta : float
            The target: epsilon > 0, delta in (0, 1).
        steps, participations, sensitivity
            As in :meth:`random_allocation`.
        epochs : int, optional
            The number of passes composed (>= 1).
        rtol : float, optional
            Relative width of the bracket on the minimal scale, in (0, 0.5).
        certificate : bool, optional
            Return the scale with its certificate.

        Returns
        -------
        float or ScaleCalibration

        Raises
        ------
        ValueError
            For an argument out of range, or when no scale the random-allocation PLD is built for
            (sensitivity / scale <= 10) meets the target from above.

        References
        ----------
        Feldman and Shenfeld 2025.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> s = PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=1e-5, steps=100, epochs=5)
        >>> pld = PLD.random_allocation(Gaussian(), scale=s, steps=100).self_compose(5)
        >>> bool(pld.delta(1.0).upper <= 1e-5)
        True
        """
        from .allocation import calibrate_allocation

        return calibrate_allocation(cls, noise, epsilon=epsilon, delta=delta, steps=steps,
                                    participations=participations, sensitivity=sensitivity, epochs=epochs,
                                    rtol=rtol, certificate=certificate)

    @classmethod
    def fixed_size(cls, noise: Any, *, scale: Any, batch_size: Any, dataset_size: Any, sensitivity: Any = 1.0,
                   neighbours: str = "add_remove", replacement: bool = False) -> PLD:
        """The PLD of one step on a batch of ``batch_size`` records drawn without replacement from ``dataset_size``.

        Under add/remove and under substitution neighbours the worst pair is the Poisson pair at rate
        q = batch_size / dataset_size with shift 2 d, d = sensitivity / scale: the differing record, when
        in the batch, displaces another record (proof and the dataset attaining it: ``docs/pld.md``,
        "Training batch samplers"). Exact, so both ends are tight. Compose steps with :meth:`self_compose`.

        With ``replacement`` (b independent uniform draws; Gaussian noise, substitution only) the record is
        drawn M ~ Bin(b, 1/n) times: the upper end reveals M (the Gaussian mechanism at shift 2 M d, no
        amplification of epsilon), the lower end is the mixture of Gaussians sum_m P(M = m) N(2 m d) against
        N(0) that the dataset with every other record at the replacement attains. Certified, not tight.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, "discrete_laplace" or "discrete_gaussian"
            The unit-scale noise family, as in :meth:`random_allocation`.
        scale : float
            Noise scale (> 0).
        batch_size, dataset_size : int
            b and n (1 <= b <= n; b < n under add/remove, where the smaller neighbour has n - 1 records).
        sensitivity : float, optional
            Norm bound of one record's contribution (> 0).
        neighbours : {"add_remove", "substitution"}, optional
            The neighbouring relation.
        replacement : bool, optional
            Draw with replacement (substitution and Gaussian noise only).

        Returns
        -------
        PLD

        Raises
        ------
        TypeError
            If ``noise`` is not one of the four families (Gaussian with ``replacement``), or a size is not
            an integer.
        ValueError
            If a size is out of range, or ``scale`` / ``sensitivity`` is not finite and > 0.

        References
        ----------
        Balle, Barthe and Gaboardi 2018; Zhu, Dong and Wang 2022.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> a = PLD.fixed_size(Gaussian(), scale=2.0, batch_size=10, dataset_size=1000).epsilon(1e-5)
        >>> b = PLD.from_noise(Gaussian(), scale=2.0, sensitivity=2.0, sampling_rate=0.01).epsilon(1e-5)
        >>> a == b
        True
        """
        from .batches import fixed_size_term

        return cls([(fixed_size_term(noise, scale=scale, batch_size=batch_size, dataset_size=dataset_size,
                                     sensitivity=sensitivity, neighbours=neighbours, replacement=replacement), 1)])

    @classmethod
    def truncated_poisson(cls, noise: Any, *, scale: Any, sampling_rate: Any, dataset_size: Any,
                          max_batch_size: Any, sensitivity: Any = 1.0) -> PLD:
        """The PLD of one step of Poisson sampling cut to at most ``max_batch_size`` records (add/remove).

        Each of the ``dataset_size`` records is sampled with probability ``sampling_rate``; a sample of
        more than B = ``max_batch_size`` records is replaced by a uniform B-subset of it (Ganesh 2025).
        Upper end: revealing whether the other records' count K reaches B, the step is the Poisson pair
        with probability P(K < B) and a fixed-size batch (:meth:`fixed_size`'s pair) otherwise; lower
        end: the dataset whose other records contribute 0, exactly the Poisson pair at rate
        q E[min(1, B / (K + 1))] (``docs/pld.md``, "Training batch samplers"). With B >= n it is Poisson
        sampling. The interval is tight when truncation is rare, as it is in practice.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, "discrete_laplace" or "discrete_gaussian"
            The unit-scale noise family, as in :meth:`random_allocation`.
        scale : float
            Noise scale (> 0).
        sampling_rate : float
            Poisson rate q in [0, 1].
        dataset_size, max_batch_size : int
            n >= 1 and B >= 1. n is the size of the dataset that holds the differing record (as in
            dp-accounting): the neighbour with one record more than a dataset of m records is covered by
            ``dataset_size=m + 1``, the one with one fewer by ``dataset_size=m``.
        sensitivity : float, optional
            Norm bound of one record's contribution (> 0).

        Returns
        -------
        PLD
            Add/remove neighbours; both orders are kept and the worse one is reported.

        Raises
        ------
        TypeError, ValueError
            On a bad family, a non-integer size, or a value out of range (naming the argument).

        References
        ----------
        Ganesh 2025; Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha and Zhang 2024.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> t = PLD.truncated_poisson(Gaussian(), scale=1.0, sampling_rate=0.01, dataset_size=10_000,
        ...                           max_batch_size=150).self_compose(1000).epsilon(1e-5)
        >>> p = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(1000).epsilon(1e-5)
        >>> bool(t.lower <= p.upper and p.lower <= t.upper and t.upper - t.lower < 5e-3)
        True
        """
        from .batches import truncated_poisson_term

        return cls([(truncated_poisson_term(noise, scale=scale, sampling_rate=sampling_rate, dataset_size=dataset_size,
                                            max_batch_size=max_batch_size, sensitivity=sensitivity), 1)])

    @classmethod
    def balls_in_bins(cls, noise: Any, *, scale: Any, bins: Any, epochs: Any = 1, sensitivity: Any = 1.0,
                      reassign: bool = False) -> PLD:
        """The PLD of balls-in-bins batches: each record in one of ``bins`` bins, uniformly and independently,
        the bins used in turn for ``epochs`` cycles (``bins * epochs`` steps).

        The record's outputs are those of one bin in every cycle, so the release is random allocation
        with one participation in ``bins`` steps at sensitivity sqrt(epochs) * ``sensitivity`` (the
        record's bin's outputs summed over the cycles are sufficient): certified on both sides
        (:meth:`random_allocation`; Chua et al. 2024, Feldman and Shenfeld 2025). With ``reassign``
        the bins are drawn anew every epoch (Chua et al.'s balls-and-bins): ``epochs`` independent passes.

        Parameters
        ----------
        noise : Gaussian
            The unit-scale noise family.
        scale : float
            Noise standard deviation (> 0).
        bins : int
            Batches per cycle (>= 1).
        epochs : int, optional
            Cycles over the bins (>= 1), each bin keeping its records.
        sensitivity : float, optional
            l2 norm bound of one record's contribution (> 0).
        reassign : bool, optional
            New bins every epoch (True) or the same bins in every cycle (False, jax_privacy's
            ``BallsInBinsSampling``).

        Returns
        -------
        PLD
            Add/remove neighbours.

        Raises
        ------
        TypeError
            If ``noise`` is not Gaussian(), or ``bins`` / ``epochs`` is not an integer.
        ValueError
            If a value is out of range.

        References
        ----------
        Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha and Zhang 2024; Feldman and Shenfeld 2025.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> b = PLD.balls_in_bins(Gaussian(), scale=2.0, bins=1, epochs=4).epsilon(1e-5)
        >>> g = PLD.from_gdp(1.0).epsilon(1e-5)
        >>> bool(b.lower <= g.upper and g.lower <= b.upper)
        True
        """
        from .batches import balls_in_bins_terms

        return cls(balls_in_bins_terms(noise, scale=scale, bins=bins, epochs=epochs, sensitivity=sensitivity,
                                       reassign=reassign))

    @classmethod
    def b_min_sep(cls, noise: Any, *, scale: Any, steps: Any, separation: Any, sampling_rate: Any,
                  warm_start: bool = True, sensitivity: Any = 1.0) -> PLD:
        """Certified bounds for one pass of b-min-separation sampling (Dong and Ganesh 2026), Gaussian noise.

        Each record that has not taken part in the last ``separation`` - 1 steps joins the batch with
        probability ``sampling_rate``. Upper end: at most ceil(steps / separation) steps hold a record,
        so GDP(sqrt(ceil(steps / separation)) sensitivity / scale) (no amplification by the sampling);
        lower end: the sum of all outputs on a dataset that attains it, a mixture of Gaussians over the
        exact law of the number of participations (``docs/pld.md``, "Training batch samplers").
        Certified, not tight: the interval says how far apart the two ends are.

        Parameters
        ----------
        noise : Gaussian
            The unit-scale noise family.
        scale : float
            Noise standard deviation (> 0).
        steps : int
            Steps T of the pass (1 <= T <= 1e5).
        separation : int
            b >= 1 (b = 1 is Poisson sampling, for which :meth:`from_noise` is tight).
        sampling_rate : float
            p in [0, 1].
        warm_start : bool, optional
            Start the sampler's chain in its stationary law (every step the same expected batch size), or
            with every record eligible.
        sensitivity : float, optional
            l2 norm bound of one record's contribution (> 0).

        Returns
        -------
        PLD
            Add/remove neighbours; only one pass (its bounds do not compose per step).

        Raises
        ------
        TypeError, ValueError
            On a bad family or argument (naming it).

        References
        ----------
        Dong and Ganesh 2026; Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Thakurta and Xu 2023.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> iv = PLD.b_min_sep(Gaussian(), scale=1.0, steps=100, separation=10, sampling_rate=0.1).epsilon(1e-5)
        >>> bool(0.0 < iv.lower < iv.upper)
        True
        """
        from .batches import min_sep_terms

        return cls(min_sep_terms(noise, scale=scale, steps=steps, separation=separation, sampling_rate=sampling_rate,
                                 warm_start=warm_start, sensitivity=sensitivity))

    @classmethod
    def calibrate_sampler(cls, sampler: str, noise: Any, *, epsilon: Any, delta: Any, count: Any = 1,
                          rtol: float = 1e-3, certificate: bool = False, **parameters: Any) -> Any:
        """The smallest noise scale at which a batch sampler's certified upper bound meets (epsilon, delta).

        The PLD is ``getattr(PLD, sampler)(noise, scale=s, **parameters).self_compose(count)``: one step of
        ``"fixed_size"`` or ``"truncated_poisson"``, or one pass of ``"balls_in_bins"``, ``"b_min_sep"`` or
        ``"random_allocation"``, composed ``count`` times. The search is :meth:`calibrate`'s: the returned
        scale passes on a certified grid, and the certificate brackets the exact minimal scale of the
        bound (for ``"b_min_sep"``, of its loose upper end).

        Parameters
        ----------
        sampler : str
            One of the constructor names above.
        noise : NoiseFamily
            The unit-scale family the constructor takes.
        epsilon : float
            Target epsilon > 0.
        delta : float
            Target delta in (0, 1).
        count : int, optional
            Compositions of the step or pass (>= 1).
        rtol : float, optional
            Relative width of the certified bracket, in (0, 0.5).
        certificate : bool, optional
            Return a :class:`ScaleCalibration` instead of the scale.
        **parameters
            The constructor's other keyword arguments (not ``scale``).

        Returns
        -------
        float or ScaleCalibration

        Raises
        ------
        TypeError, ValueError
            On an unknown sampler, a ``scale`` among the parameters, or a bad argument.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> c = PLD.calibrate_sampler("balls_in_bins", Gaussian(), epsilon=2.0, delta=1e-6, bins=10, epochs=10,
        ...                           certificate=True)
        >>> p = PLD.balls_in_bins(Gaussian(), scale=c.scale, bins=10, epochs=10)
        >>> bool(p.with_discretization(value_step=c.value_step).delta(2.0).upper <= 1e-6)
        True
        """
        from .batches import calibrate_sampler

        return calibrate_sampler(cls, sampler, noise, epsilon=epsilon, delta=delta, count=count, rtol=rtol,
                                 certificate=certificate, **parameters)

    @classmethod
    def from_randomized_response(cls, *, epsilon: Any) -> PLD:
        """Binary randomized response with P(truth) = e^eps / (1 + e^eps): the PLD of pure eps-DP."""
        return cls.from_approx_dp(epsilon=epsilon, delta=0.0)

    @classmethod
    def identity(cls) -> PLD:
        """The PLD of a mechanism that reveals nothing (L = 0): the neutral element of composition."""
        return cls([(_mech.identity_term(), 1)])

    @classmethod
    def composition(cls, plds: Iterable[PLD]) -> PLD:
        """The composition of a non-empty collection of PLDs."""
        if isinstance(plds, (str, bytes)) or not isinstance(plds, Iterable):
            raise TypeError(f"plds must be an iterable of PLD objects, got {type(plds).__name__}")
        items = list(plds)
        if not items:
            raise ValueError("plds must not be empty: there is nothing to compose")
        for p in items:
            if not isinstance(p, PLD):
                raise TypeError(f"plds must contain PLD objects, got {type(p).__name__}")
        out = items[0]
        for p in items[1:]:
            out = out.compose(p)
        return out

    @classmethod
    def calibrate(cls, noise: Any, *, epsilon: Any, delta: Any, sensitivity: Any = 1.0, steps: Any = 1,
                  sampling_rate: Any = 1.0, sampling: str = "poisson", neighbours: str = "add_remove",
                  rtol: float = 1e-3, certificate: bool = False) -> Any:
        """The smallest noise scale whose composed upper bound meets (epsilon, delta), to relative ``rtol``.

        The returned scale s passes: the certified upper bound of delta(epsilon) of
        ``from_noise(noise, scale=s, ...).self_compose(steps)`` is <= ``delta`` (on the loss grid the
        search used, which may be finer than the automatic one). The search also finds a scale that fails
        for certain (its certified lower delta(epsilon) exceeds ``delta``), so the exact minimal scale
        lies between the two. It brackets by doubling, finds both boundaries by safeguarded regula falsi
        on log(-log delta) against log scale, and refines the loss grid (up to 256 times) while the
        bracket is wider than ``rtol`` and each refinement narrows the delta interval (docs/pld.md,
        "Calibration"). A composition whose loss is narrow against the automatic grid (small
        sensitivity / scale, small epsilon) is thus still calibrated to ``rtol``; composed deltas below
        ~1e-12, which the FFT's rounding limits, give a wider bracket.

        Parameters
        ----------
        noise : Gaussian, Laplace, Logistic, Subbotin, Truncated or LogConcaveFamily
            The unit-scale noise family (as in :meth:`from_noise`).
        epsilon : float
            Target epsilon > 0.
        delta : float
            Target delta in (0, 1).
        sensitivity : float, optional
            Sensitivity of the query (> 0).
        steps : int, optional
            Number of compositions (each with Poisson sampling at ``sampling_rate``).
        sampling_rate : float, optional
            Sampling rate q in (0, 1].
        sampling, neighbours : str, optional
            The sampling scheme and neighbouring relation, as in :meth:`from_noise`.
        rtol : float, optional
            Relative width of the certified bracket on the exact minimal scale, in [1e-6, 0.5) (reached
            unless the loss grid cannot be refined further; the bracket says how close the answer is).
        certificate : bool, optional
            Return a :class:`ScaleCalibration` (the scale, the certified bracket on the exact minimal
            scale, the loss grid step and delta(epsilon) there) instead of the scale alone.

        Returns
        -------
        float or ScaleCalibration
            The scale; never one whose certified delta(epsilon) exceeds the target.

        Raises
        ------
        ValueError
            On out-of-range arguments, if no scale below 1e12 * sensitivity meets the target, or if
            larger scales stop lowering the certified delta (a composition of too many steps for the loss
            grid to resolve: the message names ``steps``), or if ``sampling_rate`` alone meets the target
            (1 - (1 - sampling_rate)^steps <= delta: any scale does).

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> from pydp_core import minimal_scale
        >>> c = PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, steps=16, certificate=True)
        >>> exact = float(minimal_scale(Gaussian(), epsilon=1.0, delta=1e-5, sensitivity=4.0))
        >>> bool(c.scale_bounds.lower <= exact <= c.scale <= exact * 1.001)
        True
        """
        return _calibrate(cls, noise, epsilon=epsilon, delta=delta, sensitivity=sensitivity, steps=steps,
                          sampling_rate=sampling_rate, sampling=sampling, neighbours=neighbours, rtol=rtol,
                          certificate=certificate)

    # ----- mixtures of Gaussians and banded matrix factorization (:mod:`.mixture`) -------------------
    @classmethod
    def from_mixture_of_gaussians(cls, *, sigma: Any, sensitivities: Any, probabilities: Any) -> PLD:
        """The PLD of the mixture-of-Gaussians mechanism (MMCC; Choquette-Choo et al. 2023), both orders.

        The Gaussian mechanism with noise ``sigma`` whose sensitivity is ``sensitivities[i]`` with
        probability ``probabilities[i]``: under add/remove neighbours the pair
        P = sum_i p_i N(c_i, sigma^2) vs Q = N(0, sigma^2) (remove) and its reverse (add). The loss is
        monotone in the output, so each order is discretised from exact normal masses between the points
        where the loss crosses the grid (docs/pld.md, "Mixtures of Gaussians"); the worse order is reported.

        Parameters
        ----------
        sigma : float
            Standard deviation of the Gaussian noise (> 0).
        sensitivities : array_like
            The sensitivities c_i >= 0.
        probabilities : array_like
            Their probabilities p_i in [0, 1], summing to 1 (within 1e-9; then normalised).

        Returns
        -------
        PLD

        Raises
        ------
        TypeError
            If ``sensitivities`` or ``probabilities`` is not a sequence of numbers.
        ValueError
            If ``sigma`` is not finite and > 0, the sequences are empty, of different lengths, contain
            NaN, a negative sensitivity, a probability outside [0, 1], or the probabilities do not sum to 1.

        References
        ----------
        Choquette-Choo, Ganesh, Steinke and Thakurta 2023.

        Examples
        --------
        >>> from pydp_core.noise import Gaussian
        >>> mog = PLD.from_mixture_of_gaussians(sigma=1.0, sensitivities=[0.0, 1.0], probabilities=[0.9, 0.1])
        >>> poisson = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.1)
        >>> a, b = mog.epsilon(1e-5), poisson.epsilon(1e-5)
        >>> bool(a.lower <= b.upper and b.lower <= a.upper)
        True
        """
        from .mixture import mixture_term

        return cls([(mixture_term(sigma=sigma, sensitivities=sensitivities, probabilities=probabilities), 1)])

    @classmethod
    def mixture_of_gaussians(cls, *, sigma: Any, sensitivities: Any, probabilities: Any) -> PLD:
        """The same as :meth:`from_mixture_of_gaussians`."""
        return cls.from_mixture_of_gaussians(sigma=sigma, sensitivities=sensitivities, probabilities=probabilities)

    @classmethod
    def from_banded_matrix_factorization(cls, *, sigma: Any, bands: Any, column_sensitivities: Any,
                                         sampling_rate: Any, participations: Any = None) -> PLD:
        """The PLD of b-banded matrix factorization with cyclic Poisson sampling (one pass over the steps).

        The records are split into ``bands`` groups; at step i group (i mod b) is eligible and each of its
        records joins with probability ``sampling_rate``; the release is C x + sigma Z with C b-banded lower
        triangular. A record's participations are b steps apart and touch disjoint rows of C, so the
        release is the composition of Poisson-sampled Gaussians, one per participation j, with sensitivity
        ``column_sensitivities[j]`` = ||C e_j||_2 (Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Thakurta
        and Xu 2023, Theorem 1).

        Parameters
        ----------
        sigma : float
            Standard deviation of the noise Z (> 0).
        bands : int
            The band count b >= 1 (C[i, j] = 0 unless 0 <= i - j < b).
        column_sensitivities : array_like
            ||C e_j||_2 for each step j (times the clipping norm), >= 0.
        sampling_rate : float
            The Poisson rate q in [0, 1] within an eligible group.
        participations : sequence of int, optional
            The 0-based steps at which the record's group is eligible (at least ``bands`` apart). None:
            every group of the cyclic pattern, dominated by the largest column sensitivity at each
            participation index.

        Returns
        -------
        PLD

        Raises
        ------
        ValueError
            If a parameter is out of range, or participations are closer than ``bands`` steps.

        References
        ----------
        Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Thakurta and Xu 2023.

        Examples
        --------
        A 1-banded (diagonal) C with unit columns is DP-SGD with Poisson sampling:

        >>> from pydp_core.noise import Gaussian
        >>> mf = PLD.from_banded_matrix_factorization(sigma=1.0, bands=1, column_sensitivities=[1.0] * 100,
        ...                                           sampling_rate=0.01)
        >>> sgd = PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(100)
        >>> bool(abs(mf.epsilon(1e-5).upper - sgd.epsilon(1e-5).upper) < 1e-9)
        True
        """
        from .mixture import banded_terms

        return cls(banded_terms(sigma=sigma, bands=bands, column_sensitivities=column_sensitivities,
                                sampling_rate=sampling_rate, participations=participations))

    # ----- composition ----------------------------------------------------------------------------------
    def self_compose(self, k: Any) -> PLD:
        """The k-fold composition of this PLD with itself (k an integer >= 1)."""
        k = _count(k)
        return PLD([(m, c * k) for m, c in self._terms], value_step=self._value_step, tail_mass=self._tail_mass)

    def compose(self, other: PLD) -> PLD:
        """The composition of this PLD with ``other`` (independent mechanisms, same neighbours)."""
        if not isinstance(other, PLD):
            raise TypeError(f"other must be a PLD, not {type(other).__name__}")
        step = self._value_step if self._value_step is not None else other._value_step
        return PLD(self._terms + other._terms, value_step=step, tail_mass=min(self._tail_mass, other._tail_mass))

    def with_discretization(self, *, value_step: Any = None, tail_mass: Any = _grid._TAIL_MASS) -> PLD:
        """A copy that uses grid step ``value_step`` (None: automatic) and truncation ``tail_mass``.

        Finer steps narrow the intervals (the error is second order in the step); the automatic step is
        0.006 steps^-0.45, at most 0.005, finer for a narrow composed loss (see :attr:`value_step`, which
        also says when a given step is lowered slightly to put a Laplace's largest loss on the grid).
        """
        step = None if value_step is None else _scalar(value_step, "value_step", check_positive)
        if step is not None and step > 1.0:
            raise ValueError(f"value_step must be <= 1 (a coarser grid cannot resolve the loss), got {step}")
        tail = _scalar(tail_mass, "tail_mass", check_positive)
        if not tail < 1e-3:
            raise ValueError(f"tail_mass must lie in (0, 1e-3), got {tail}")
        return PLD(self._terms, value_step=step, tail_mass=tail)

    @property
    def steps(self) -> int:
        """Number of composed mechanisms."""
        return sum(c for _, c in self._terms)

    @property
    def value_step(self) -> float:
        """Grid step of the loss discretisation used for this composition.

        Automatic: 0.006 steps^-0.45 (at most 0.005), which keeps the interval of DP-SGD-like
        compositions (standard deviation of the composed loss about 1) within ~1e-4 in epsilon; scaled
        by 2 sigma where the composed loss has a standard deviation sigma < 1/2 (a small sensitivity /
        scale ratio, as in calibrations to a small epsilon, is then resolved as finely, relative to
        its spread, as a DP-SGD composition); refined to give at least 2^8 points across a narrow
        composed loss window, and widened where the window would need more than 2^21 points (a wide
        composed loss needs no finer absolute step).

        With Laplace noise under add/remove neighbours (one shift and rate in the composition), the
        step (automatic or given) is lowered by less than a factor n / (n + 1), n the number of steps up
        to the largest loss, so that a grid point lies a relative 2^-46 below that loss: its atom then
        fills a cell alone, and the optimistic side keeps it (instead of merging it down by up to a step).
        A given step larger than that loss (n = 0, as at a huge noise scale) is kept as given; the
        automatic step is then lowered to the loss.
        """
        if self._auto_step is None:
            step = self._value_step if self._value_step is not None else self._automatic_step()
            self._auto_step = _grid._below_atom(step, self._terms, given=self._value_step is not None)
        return self._auto_step

    def _automatic_step(self) -> float:
        return _grid._automatic_step(self._terms, self._tail_mass)

    # ----- evaluation -----------------------------------------------------------------------------------
    def _orders(self) -> tuple[Any, ...]:
        """The neighbour orders to bound: remove (True) and add (False), or one if they coincide."""
        return (True,) if all(m.symmetric for m, _ in self._terms) else (True, False)

    def _order_bounds(self, orders: Sequence[bool], h: float) -> list[Any]:
        counts = [c for _, c in self._terms]
        per_mech_tail = self._tail_mass / max(1, self.steps)
        try:
            directions = [[m.discretise(remove, h, per_mech_tail, self.steps > 1) for m, _ in self._terms]
                          for remove in orders]
            return list(_acc.pld_compose(directions, counts, h, self._tail_mass))
        except (ValueError, MemoryError) as exc:
            # The kernels refuse a grid of more than 2^25 points (or one whose size overflows): say which
            # parameters set the range, since the automatic step is no parameter the user chose.
            if not ("value_step is too small" in str(exc) or "max_size" in str(exc) or isinstance(exc, MemoryError)):
                raise
            raise ValueError(
                f"the privacy losses of this PLD ({self.steps} composed steps) span a range that no loss grid of "
                f"step {h:.3g} covers within 2^25 points: use a larger noise scale or fewer steps, or set a coarser "
                "value_step with with_discretization (at most 1)") from exc

    def _fine_bounds(self, orders: Sequence[bool]) -> list[Any]:
        missing = [r for r in orders if r not in self._fine]
        if missing:
            self._fine.update(zip(missing, self._order_bounds(missing, self.value_step)))
        return [self._fine[r] for r in orders]

    def _compute(self) -> list[Any]:
        if self._bounds is None:
            self._bounds = self._fine_bounds(self._orders())
        assert self._bounds is not None
        return self._bounds

    def _check_width(self, iv: Interval, tolerance: Any) -> Interval:
        return _curves._check_width(iv, tolerance, self.value_step)

    def delta(self, epsilon: Any, *, tolerance: Any = None) -> Interval:
        """Certified bounds on delta(epsilon) = sup over neighbours of E_P[(1 - e^{eps - L})_+] + P(L = inf).

        Parameters
        ----------
        epsilon : float or array_like
            epsilon >= 0.
        tolerance : float, optional
            Largest acceptable width of the interval.

        Returns
        -------
        Interval
            ``lower <= delta(epsilon) <= upper`` (floats for a scalar input, arrays otherwise).

        Raises
        ------
        ValueError
            If epsilon is negative or NaN, or if the interval is wider than ``tolerance`` (the
            discretisation is too coarse: the message names ``value_step``).
        """
        eps = check_epsilon(epsilon, "epsilon")
        flat = np.ascontiguousarray(eps, dtype=np.float64).reshape(-1)
        lo, up = self._combine(lambda b: b.delta(flat))
        return self._check_width(_shape(lo, up, eps, epsilon), tolerance)

    def epsilon(self, delta: Any, *, tolerance: Any = None) -> Interval:
        """Certified bounds on the smallest epsilon >= 0 with delta(epsilon) <= ``delta``.

        Parameters
        ----------
        delta : float or array_like
            delta in [0, 1].
        tolerance : float, optional
            Largest acceptable width of the interval.

        Returns
        -------
        Interval
            ``lower <= epsilon(delta) <= upper``; ``upper`` is inf where the pessimistic bound cannot reach
            ``delta`` (delta below the truncated mass, or 0 for mechanisms without pure DP).

        Raises
        ------
        ValueError
            If delta is outside [0, 1] or NaN, or if the interval is wider than ``tolerance`` (the
            discretisation is too coarse: the message names ``value_step``).

        Examples
        --------
        >>> from pydp_core.accounting.pld import PLD
        >>> iv = PLD.from_gdp(1.0).self_compose(4).epsilon(1e-5)
        >>> round(iv.lower, 3), round(iv.upper, 3)
        (9.997, 9.997)
        """
        dl = check_delta(delta, "delta", allow_one=True)
        flat = np.ascontiguousarray(dl, dtype=np.float64).reshape(-1)
        lo, up = self._combine(lambda b: b.epsilon(flat))
        return self._check_width(_shape(lo, up, dl, delta), tolerance)

    def tradeoff(self, alpha: Any) -> Interval:
        """Certified bounds on the trade-off function beta(alpha) (Dong, Roth and Su 2022).

        beta(alpha) is the smallest type II error of a test between neighbouring outputs at type I error
        ``alpha``, over both neighbour orders; the mechanism is f-DP with f = beta. Computed by
        Neyman-Pearson duality from the certified privacy profiles of both orders of the pair.

        Parameters
        ----------
        alpha : float or array_like
            Type I error in [0, 1].

        Returns
        -------
        Interval
            ``lower <= beta(alpha) <= upper``.
        """
        a = check_probability(alpha, "alpha")
        flat = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        lo, up = _curves._tradeoff(self._compute(), flat)
        return _shape(lo, up, a, alpha)

    def roc(self, fpr: Any) -> Interval:
        """Certified bounds on the ROC curve of the most powerful membership test: power = 1 - beta(fpr).

        The true-positive rate a test between neighbouring outputs can reach at false-positive rate
        ``fpr`` (the complement of :meth:`tradeoff`; for mu-GDP it is Phi(mu + Phi^-1(fpr)), as in
        :func:`pydp_core.accounting.gaussian.roc`).

        Parameters
        ----------
        fpr : float or array_like
            False-positive rates in [0, 1].

        Returns
        -------
        Interval
            ``lower <= power(fpr) <= upper`` (floats for a scalar input, arrays otherwise).

        Raises
        ------
        ValueError
            If ``fpr`` is outside [0, 1] or NaN.

        Examples
        --------
        >>> from pydp_core.accounting import gaussian
        >>> iv = PLD.from_gdp(1.0).roc(0.05)
        >>> iv.lower <= gaussian.roc(0.05, 1.0) <= iv.upper
        True
        """
        check_probability(fpr, "fpr")
        b = self.tradeoff(fpr)
        return Interval(1.0 - b.upper, 1.0 - b.lower)

    def mu(self, *, delta_floor: Any = 1e-10) -> Interval:
        """A certified bracket of the smallest mu such that the mechanism is mu-GDP above ``delta_floor``.

        The quantity bracketed is mu* = inf{mu : delta(eps) <= max(delta_mu(eps), delta_floor) for every
        eps >= 0}, delta_mu the mu-GDP privacy profile (Dong, Roth and Su 2022) and delta the worse
        neighbour order of this PLD. (Every discretised PLD keeps a tiny mass at +inf, its truncated
        tails, which no GDP profile covers as eps grows; the floor states where the comparison stops. For
        a Gaussian mechanism of parameter mu, mu* = mu for every floor.) On a grid
        0 = e_0 < ... < e_n, with upper delta(e_n) <= delta_floor:

        - upper: the smallest mu with upper delta(e_j) <= max(delta_mu(e_{j+1}), delta_floor) for all j
          (both profiles decrease, so this covers each [e_j, e_{j+1}]; beyond e_n delta <= delta_floor),
          or, second order in the step, the upper profile's chord in x = e^eps below the tangent of
          delta_mu at e_{j+1} (both profiles are convex in x);
        - lower: the largest mu for which some e_j has lower delta(e_j) > max(delta_mu(e_j), delta_floor)
          (a witness that mu fails).

        Parameters
        ----------
        delta_floor : float, optional
            delta below which the GDP profile is not required to dominate, in (0, 0.01).

        Returns
        -------
        Interval
            ``lower <= mu* <= upper``; ``upper`` is inf if the pessimistic profile never falls to
            ``delta_floor``.

        Raises
        ------
        ValueError
            If ``delta_floor`` is outside (0, 0.01).

        Examples
        --------
        >>> iv = PLD.from_gdp(1.5).self_compose(4).mu()
        >>> iv.lower <= 3.0 <= iv.upper and iv.upper - iv.lower < 1e-2
        True
        """
        return _curves._mu(self, delta_floor)

    # ----- conversions to budgets ---------------------------------------------------------------------------
    def to_approx_dp(self, delta: Any) -> ApproxDP:
        """The certified (epsilon, delta)-DP guarantee: epsilon the upper end of :meth:`epsilon`.

        Parameters
        ----------
        delta : float
            delta in (0, 1).

        Returns
        -------
        ApproxDP
            ``ApproxDP(epsilon(delta).upper, delta)``.

        Raises
        ------
        ValueError
            If ``delta`` is outside (0, 1), or no finite epsilon is certified at it (delta below the
            truncated mass of the discretisation).

        Examples
        --------
        >>> PLD.from_gdp(1.0).to_approx_dp(1e-5)
        ApproxDP(epsilon=4.377..., delta=1e-05)
        """
        from ..budgets import ApproxDP

        dl = _scalar(delta, "delta", lambda v, n: check_delta(v, n, allow_zero=False))
        eps = self.epsilon(dl).upper
        if not math.isfinite(eps):
            raise ValueError(f"no finite epsilon is certified at delta = {dl:g}: delta is below the discretisation's "
                             "truncated mass")
        return ApproxDP(eps, dl)

    def approx_dp_profile(self, delta: Any) -> list[Any]:
        """The certified (epsilon, delta)-DP guarantees at several deltas (a privacy profile as budgets).

        Parameters
        ----------
        delta : array_like
            deltas in (0, 1).

        Returns
        -------
        list of ApproxDP
            One :meth:`to_approx_dp` per delta, in order; deltas with no finite certified epsilon are
            left out.

        Raises
        ------
        ValueError
            If a delta is outside (0, 1).

        Examples
        --------
        >>> [round(b.epsilon, 2) for b in PLD.from_gdp(1.0).approx_dp_profile([1e-3, 1e-6])]
        [3.14, 4.89]
        """
        from ..budgets import ApproxDP

        dl = np.asarray(check_delta(delta, "delta", allow_zero=False), dtype=float).reshape(-1)
        eps = np.asarray(self.epsilon(dl).upper).reshape(-1)
        return [ApproxDP(float(e), float(d)) for e, d in zip(eps, dl) if math.isfinite(e)]

    def to_gdp(self, *, delta_floor: Any = 1e-10) -> GDP:
        """The certified GDP guarantee: mu the upper end of :meth:`mu` (see there for ``delta_floor``).

        Parameters
        ----------
        delta_floor : float, optional
            delta below which GDP(mu) is not required to dominate, in (0, 0.01).

        Returns
        -------
        GDP
            ``GDP(mu(delta_floor=...).upper)``: the mechanism's privacy profile lies below that of GDP(mu)
            wherever the latter is at least ``delta_floor``.

        Raises
        ------
        ValueError
            If no finite mu is certified.

        Examples
        --------
        >>> round(PLD.from_gdp(0.5).self_compose(4).to_gdp().mu, 2)
        1.0
        """
        from ..budgets import GDP

        m = self.mu(delta_floor=delta_floor).upper
        if not math.isfinite(m):
            raise ValueError("no finite GDP mu is certified: the pessimistic profile stays above delta_floor")
        return GDP(m)

    def _combine(self, query: Callable[..., Any]) -> tuple[Any, ...]:
        """Bounds on the maximum over the neighbour orders of ``query``: (lower, upper) arrays.

        The maximum of the truths lies between the maximum of any lower bounds and the maximum of any
        upper bounds, one per order. With two orders, both are first bounded on the screening grid
        (``_SCREEN`` times coarser); an order whose coarse upper bound nowhere exceeds the largest coarse
        lower bound cannot attain the maximum beyond that bound, and keeps its coarse bounds. The others
        are bounded on the grid ``value_step`` too, and each keeps the intersection of its two intervals
        (both hold). So every end is at least as tight as with all orders on ``value_step``, and the
        result depends on the query alone (not on which orders earlier queries refined).
        """
        orders = self._orders()
        if len(orders) == 1 or self.value_step * _grid._SCREEN > _grid._SCREEN_MAX_STEP:
            return _merge([query(b) for b in self._compute()])
        if self._screen is None:
            self._screen = self._order_bounds(orders, self.value_step * _grid._SCREEN)
        coarse = [query(b) for b in self._screen]
        best_lower = np.maximum.reduce([lo for lo, _ in coarse])
        need = [bool(np.any(up > best_lower)) for _, up in coarse]
        fine = iter(self._fine_bounds([r for r, n in zip(orders, need) if n]))
        parts = []
        for (lo, up), n in zip(coarse, need):
            if n:
                lo_f, up_f = query(next(fine))
                lo, up = np.maximum(lo, lo_f), np.minimum(up, up_f)
            parts.append((lo, up))
        return _merge(parts)

    def __repr__(self) -> str:
        return f"PLD(mechanisms={len(self._terms)}, steps={self.steps})"
