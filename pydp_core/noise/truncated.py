"""A noise family restricted to a bounded interval and renormalised.
"""
from __future__ import annotations

from .. import _core
from .._validation import check_positive
from .families import Gaussian, Laplace, Logistic, NoiseFamily, Subbotin


class Truncated(NoiseFamily):
    """``base`` restricted to (-bound, bound) and renormalised (in the base family's units).

    Bounded support changes the privacy analysis (Lemma 1 with a < inf): the mechanism can never reach
    delta = 0, and shifts of 2 * bound or more are not private for any delta < 1.
    """

    def __init__(self, base: NoiseFamily, bound: float) -> None:
        if not isinstance(base, (Laplace, Gaussian, Logistic, Subbotin)):
            raise TypeError("base must be Laplace(), Gaussian(), Logistic() or Subbotin(r)")
        b = check_positive(bound, "bound")
        if b.ndim != 0:
            raise TypeError("bound must be a scalar")
        self.base = base
        self.bound = float(b)
        kind = base._family.kind
        r = base.r if isinstance(base, Subbotin) else 0.0
        self._family = _core.noise.Family(kind, r, self.bound)
        self._variance: float | None = None

    @property
    def variance(self) -> float:
        if self._variance is None:
            from scipy import integrate

            mass, _ = integrate.quad(lambda x: x * x * float(self.pdf(x)), 0.0, self.bound, limit=200)
            self._variance = 2.0 * mass
        return self._variance

    @property
    def mlr_bounded(self) -> bool:
        return self.base.mlr_bounded

    def _key(self) -> tuple:
        return ("Truncated", self.base._key(), self.bound)

    def __repr__(self) -> str:
        return f"Truncated({self.base!r}, bound={self.bound:g})"

