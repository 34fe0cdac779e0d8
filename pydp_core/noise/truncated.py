"""A noise family restricted to a bounded interval and renormalised."""
from __future__ import annotations

from typing import Any, Tuple

from .. import _core
from .._validation import check_positive_scalar
from .families import Gaussian, Laplace, Logistic, NoiseFamily, Subbotin


class Truncated(NoiseFamily):
    """``base`` restricted to (-bound, bound) and renormalised (in the base family's units).

    Bounded support changes the privacy analysis (Vinterbo 2022, Lemma 1 with a < inf): the mechanism
    can never reach delta = 0, and shifts of 2 * bound or more are not private for any delta < 1. The
    truncated Laplace of Geng et al. (2020) is ``Truncated(Laplace(), bound)``.

    Parameters
    ----------
    base : Laplace, Gaussian, Logistic or Subbotin
        The family to truncate.
    bound : float
        The half-width a of the support (-a, a), > 0 and finite, in the base family's units.

    Examples
    --------
    >>> t = Truncated(Laplace(), 5.0)
    >>> t.support_bound
    5.0
    >>> t.sf(5.0)
    0.0
    >>> t.variance
    1.76257207827...
    """

    def __init__(self, base: NoiseFamily, bound: float) -> None:
        if not isinstance(base, (Laplace, Gaussian, Logistic, Subbotin)):
            raise TypeError("base must be Laplace(), Gaussian(), Logistic() or Subbotin(r)")
        self.base = base
        self.bound = check_positive_scalar(bound, "bound")
        kind = base._family.kind
        r = base.r if isinstance(base, Subbotin) else 0.0
        self._family = _core.noise.Family(kind, r, self.bound)
        self._variance: float | None = None

    @property
    def variance(self) -> float:
        """Var(X) of the truncated unit-scale family (integrated numerically once, then cached)."""
        if self._variance is None:
            from scipy import integrate

            mass, _ = integrate.quad(lambda x: x * x * self.pdf(float(x)), 0.0, self.bound, limit=200)
            self._variance = 2.0 * mass
        return self._variance

    @property
    def mlr_bounded(self) -> bool:
        """Whether the base family's likelihood ratio of shifted copies is bounded."""
        return self.base.mlr_bounded

    def _key(self) -> Tuple[Any, ...]:
        return ("Truncated", self.base._key(), self.bound)

    def __repr__(self) -> str:
        return f"Truncated({self.base!r}, bound={self.bound:g})"

