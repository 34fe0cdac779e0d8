"""Standard (unit-scale) symmetric log-concave noise families.

Each family is a density f = exp(-psi) with psi convex and even (Vinterbo 2022, Section 2):

- :class:`Laplace`: ``f(x) = exp(-|x|) / 2``, variance 2;
- :class:`Gaussian`: the standard normal, variance 1;
- :class:`Logistic`: f(x) = e^{-x} / (1 + e^{-x})^2, variance pi^2 / 3;
- :class:`Subbotin` (order r >= 1): ``f_r(x) = exp(-|x|^r / r) / C(r)``, C(r) = 2 Gamma(1/r) r^(1/r - 1),
  variance r^(2/r) Gamma(3/r) / Gamma(1/r). ``Subbotin(1)`` is the Laplace and ``Subbotin(2)`` the
  Gaussian family, and they give identical answers;
- :class:`Truncated`: any of the above restricted to (-bound, bound) and renormalised (the truncated
  Laplace of Geng et al. is ``Truncated(Laplace(), bound)``);
- :class:`LogConcaveFamily`: a user-defined family from its log-density and CDF (a slower, pure-Python
  path through scipy).

:func:`from_name` builds a standard family from its name (``"laplace"``, ``"subbotin"`` with ``r``, ...);
``family.kernel`` is the C++ object the compiled kernels take.

All methods accept scalars or arrays and return the same; the work runs in C++ with the GIL released.
A family is a noise *shape*; the scale enters in :mod:`pydp_core.calibration` and the mechanisms.
"""
from __future__ import annotations

from .families import NAMES, Gaussian, Laplace, Logistic, NoiseFamily, Subbotin, from_name
from .logconcave import LogConcaveFamily
from .truncated import Truncated

__all__ = ["NoiseFamily", "Laplace", "Gaussian", "Logistic", "Subbotin", "Truncated", "LogConcaveFamily", "NAMES",
           "from_name"]
