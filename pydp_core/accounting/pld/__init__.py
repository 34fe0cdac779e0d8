"""Certified privacy-loss distributions (PLDs) and their composition.

A :class:`PLD` describes a mechanism (or a composition of mechanisms) through the distribution of its
privacy loss L = log(dP/dQ) under P, for both orders of each neighbouring pair. Every query returns an
:class:`Interval` that contains the true value: the lower end comes from an optimistic discretisation
(dominated by the true PLD), the upper end from a pessimistic one (dominating it), with the truncated
tails and the FFT's wrap-around accounted for on each side. The construction and the proofs are in
``docs/pld.md``: the pessimistic side is the connect-the-dots discretisation of Doroshenko et al. (2022);
the optimistic side contracts each loss cell to its conditional atom and merges neighbouring atoms onto
the grid. Both are second order in the grid step, so k-fold compositions stay tight for k up to 1e6.

A PLD is lazy: constructors and composition record the mechanisms and their multiplicities; the first
query chooses the grid for the whole composition, discretises each distinct mechanism once, and
composes them in the Fourier domain (one forward FFT per distinct mechanism, pointwise powers, one
inverse FFT). The kernels run in C++ (``csrc/include/pydp/accounting/pld.hpp``) with the GIL released.

Neighbouring relation: add/remove of one record. For each mechanism both orders are computed ("remove":
P is the output distribution with the record, Q without it; "add": the reverse), every mechanism of a
composition takes the same order, and the result is the worse of the two orders.

The package, one subject per module:

- :mod:`.core`: the :class:`PLD` class (composition, queries, conversions to budgets);
- :mod:`.interval`: :class:`Interval`, the certified interval every query returns;
- :mod:`.mechanisms`: the mechanisms a PLD composes, built from noise families, approx DP, randomized
  response and the discrete Laplace; :mod:`.sided`: the atom-list mechanisms (the discrete Gaussian, any
  log-concave density);
- :mod:`.mixture`: mixtures of Gaussians (MMCC) and banded matrix factorization under cyclic Poisson
  sampling; :mod:`.shuffle`: certified lower and upper bounds for shuffled batches;
- :mod:`.grid`: the grid and truncation policy;
- :mod:`.curves`: the trade-off function and the certified GDP parameter;
- :mod:`.spec`: PLDs from JSON descriptions;
- :mod:`.calibration`: the calibration of a noise scale (:class:`ScaleCalibration` and its root solver);
  :mod:`.box`: the exact calibration of iid noise on a box-bounded vector query (:func:`calibrate_box`,
  re-exported by :mod:`pydp_core.calibration`).
"""
from __future__ import annotations

from .box import BoxCalibration, box_pld, calibrate_box
from .calibration import ScaleCalibration
from .core import PLD
from .interval import Interval

__all__ = ["PLD", "Interval", "ScaleCalibration", "box_pld", "calibrate_box", "BoxCalibration"]
