"""The safe release of any noise family: each family to its exact release path, the others refused.

Laplace (and Subbotin(1)) go to :func:`~pydp_core.release.release_laplace`, Gaussian (and Subbotin(2)) to
:func:`~pydp_core.release.release_gaussian`, Subbotin_r for other r and Logistic to the lattice releases
(:mod:`pydp_core.release.lattice`; a vector query through :mod:`pydp_core.release.vector`); truncated
and user-defined families are refused.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from numpy.typing import ArrayLike

from .._arrays import accepts_arrays
from .._validation import as_float_array, check_epsilon_scalar
from ..noise import NoiseFamily
from .lattice import release_logistic, release_subbotin
from .plans import DEFAULT_GRID_BITS, SAFE_RELEASE_FAMILIES, ReleaseNotSupportedError, release_gaussian, release_laplace
from .vector import release_vector

__all__ = ["release_noise"]


@accepts_arrays("values", keep_float32=True)
def release_noise(
    noise: NoiseFamily,
    values: ArrayLike,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
    grid_bits: int = DEFAULT_GRID_BITS,
    vector: bool = False,
    timing_stable: bool = False,
    simulation: bool = False,
    confirm_delta: bool = False,
) -> Any:
    """The safe release for a noise family (the ``release=True`` path of the mechanisms).

    Laplace (and Subbotin(1)) goes to :func:`release_laplace`, Gaussian (and Subbotin(2)) to
    :func:`release_gaussian`, Subbotin_r for other r to :func:`~pydp_core.release.release_subbotin` and
    Logistic to :func:`~pydp_core.release.release_logistic` (both per value; delta > 0, except the
    Logistic, whose delta = 0 release is pure epsilon-DP through its geometric tail, docs/release.md,
    section 6; as a vector of m values it gets epsilon / m per coordinate); every other family is refused.

    Parameters
    ----------
    noise : NoiseFamily
        The noise family of the mechanism.
    values : float or array_like
        The true values.
    epsilon, delta, sensitivity : float
        The guarantee and the sensitivity.
    rng, bounds, grid_bits :
        As in :func:`release_laplace`. For the lattice families the default 16 selects their automatic
        grid (16 bits unless the table's weight range binds; see
        :func:`~pydp_core.release.calibrate_subbotin_release`).
    vector : bool, optional
        ``True``: ``values`` is one vector query (l1 sensitivity for the Laplace, l2 for the Gaussian,
        l_inf for the lattice families, :func:`~pydp_core.release.release_vector`); ``False`` (the
        default): the guarantee is per value.
    timing_stable : bool, optional
        Draw every value with a fixed amount of work (three random words and a fixed number of search
        steps, no branch on the value; docs/release.md, section 3): the lattice families in their
        timing-stable mode, and the Laplace and Gaussian through the lattice table of Subbotin(1) and
        Subbotin(2) (the floored table law instead of the exact discrete law; needs delta > 0, the
        truncation and the total-variation charge are in the plan's delta). Default False.
    simulation, confirm_delta : bool, optional
        As in :func:`release_laplace`.

    Returns
    -------
    float or numpy.ndarray
        The noisy values on the grid.

    Raises
    ------
    TypeError
        If ``noise`` is not a noise family, or another argument has the wrong type.
    ReleaseNotSupportedError
        For a family without a floating-point-safe release (for example a truncated family), and for
        Subbotin_r (r not 1 or 2) with ``delta = 0``.
    ValueError
        If a value or parameter is out of range.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import release
    >>> release.release_noise(dp.Laplace(), [1.0, 2.0], epsilon=1.0, delta=0.0, rng=dp.Random(7), simulation=True).shape
    (2,)
    >>> release.release_noise(dp.Truncated(dp.Laplace(), 2.0), 1.0, epsilon=1.0, delta=0.0)
    Traceback (most recent call last):
    ...
    pydp_core.release.plans.ReleaseNotSupportedError: release=True is not available for Truncated(...
    """
    if not isinstance(noise, NoiseFamily):
        raise TypeError(f"noise must be a pydp_core noise family, not {type(noise).__name__}")
    if not isinstance(timing_stable, bool):
        raise TypeError("timing_stable must be a bool")
    key = noise.identity
    if timing_stable and key in (("Laplace",), ("Gaussian",)):
        key = ("Subbotin", 1.0 if key == ("Laplace",) else 2.0)  # the table law: fixed work per value
    options = dict(epsilon=epsilon, delta=delta, sensitivity=sensitivity, rng=rng, bounds=bounds,
                   grid_bits=grid_bits, vector=vector, simulation=simulation, confirm_delta=confirm_delta)
    if key == ("Laplace",):
        return release_laplace(values, **options)
    if key == ("Gaussian",):
        return release_gaussian(values, **options)
    if key == ("Logistic",) and delta == 0:  # pure epsilon-DP: the table with its exact geometric tail
        return _release_pure_logistic(values, vector=vector, epsilon=epsilon, sensitivity=sensitivity, rng=rng,
                                      bounds=bounds, grid_bits=None if grid_bits == DEFAULT_GRID_BITS else grid_bits,
                                      timing_stable=timing_stable, simulation=simulation)
    if key[0] in ("Subbotin", "Logistic"):
        if delta == 0:
            raise ReleaseNotSupportedError(
                f"release=True is not available for {noise!r} noise with delta = 0: its lattice release "
                "needs delta > 0 (the table has finite support, so it cannot be pure epsilon-DP; "
                "docs/release.md, section 4); give delta > 0, or use Laplace or Logistic noise for delta = 0"
            )
        del options["vector"]
        options["timing_stable"] = timing_stable
        if grid_bits == DEFAULT_GRID_BITS:  # the lattice releases' automatic grid (16 bits unless it binds)
            options["grid_bits"] = None
        if vector:  # one vector query, l_inf sensitivity: the product-law calibration
            x = as_float_array(values, "values")
            out = release_vector(x.reshape(-1), noise, norm="linf", **options)
            return out.reshape(x.shape)
        if key[0] == "Subbotin":
            return release_subbotin(values, r=key[1], **options)
        return release_logistic(values, **options)
    raise ReleaseNotSupportedError(
        f"release=True is not available for {noise!r} noise: a floating-point-safe release exists only for "
        f"{', '.join(SAFE_RELEASE_FAMILIES)}, which use exact integer noise on a power-of-two grid. Use "
        "release=False for simulations only (floating-point noise is not differentially private against "
        "least-significant-bit attacks), or switch to one of these families for a release. See docs/release.md."
    )


def _release_pure_logistic(values: ArrayLike, *, vector: bool, epsilon: Any, **options: Any) -> Any:
    """The pure-DP Logistic release; a vector of m values with l_inf sensitivity D gets epsilon / m per
    coordinate (every rounded coordinate shift is at most the charged one and the privacy losses of
    independent coordinates add), rounded down so that m times it is at most epsilon exactly."""
    eps = check_epsilon_scalar(epsilon)
    if not vector:
        return release_logistic(values, epsilon=eps, delta=0.0, **options)
    x = as_float_array(values, "values")
    m = max(1, x.size)
    per = eps / m
    while per > 0 and Fraction(per) * m > Fraction(eps):
        per = math.nextafter(per, 0.0)
    return release_logistic(x, epsilon=per, delta=0.0, **options)
