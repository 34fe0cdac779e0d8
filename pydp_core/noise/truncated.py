"""A noise family restricted to a bounded interval and renormalised."""
from __future__ import annotations

import math
from typing import Any

from .._core import noise as _cnoise
from .._validation import check_positive_scalar
from .families import Laplace, NoiseFamily  # noqa: F401 (Laplace: the Examples)


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
        if not isinstance(base, NoiseFamily) or base.spec_name is None:
            raise TypeError("base must be Laplace(), Gaussian(), Logistic() or Subbotin(r)")
        self.base = base
        self.bound = check_positive_scalar(bound, "bound")
        self._kernel = _cnoise.Family(base.kernel.kind, base.kernel.r, self.bound)
        self._variance: float | None = None

    @property
    def variance(self) -> float:
        """Var(X) of the truncated unit-scale family (integrated numerically once, then cached).

        For a bound beyond the median of ``|X|`` the variance is the base variance less the tails,
        ``(Var(base) - 2 int_b^inf x^2 f) / (1 - 2 S(b))``, which keeps every digit as the bound grows (the
        tails vanish); below it, ``b^2 int_0^1 u^2 f(b u) du / int_0^1 f(b u) du`` in the scaled variable,
        which neither underflows nor cancels as the bound shrinks.
        """
        if self._variance is None:
            from scipy import integrate

            base, b = self.base, self.bound
            log_tail = float(base.logsf(b))
            if log_tail < math.log(0.25):
                tail = 0.0
                if log_tail > -745.0:
                    tail, _ = integrate.quad(lambda t: (b + t) ** 2 * float(base.pdf(b + t)), 0.0, math.inf, limit=200)
                self._variance = (base.variance - 2.0 * tail) / -math.expm1(math.log(2.0) + log_tail)
            else:
                num, _ = integrate.quad(lambda u: u * u * float(base.pdf(b * u)), 0.0, 1.0, limit=200)
                den, _ = integrate.quad(lambda u: float(base.pdf(b * u)), 0.0, 1.0, limit=200)
                self._variance = b * b * (num / den)
        return self._variance

    @property
    def mlr_bounded(self) -> bool:
        """Whether the base family's likelihood ratio of shifted copies is bounded."""
        return self.base.mlr_bounded

    @property
    def identity(self) -> tuple[Any, ...]:
        return ("Truncated", self.base.identity, self.bound)

    def __repr__(self) -> str:
        return f"Truncated({self.base!r}, bound={self.bound:g})"

