"""Gaussian differential privacy on Riemannian manifolds (Jiang et al., NeurIPS 2023).

Model spaces of constant curvature, their Riemannian Gaussian (and Laplace) distributions, the exact
privacy parameter mu of the Riemannian Gaussian mechanism, Algorithm 2 of Jiang et al. (Monte Carlo) with a
confidence interval, and the private Frechet mean of Section 5.

Manifolds (all methods batched over leading array dimensions, hot loops in C++):

- :class:`Euclidean` ``(d)``: points of shape ``(..., d)``;
- :class:`Circle` ``()``: points are angles (shape ``(...)``), read modulo 2 pi, returned in [-pi, pi];
- :class:`Sphere` ``(d)``: unit vectors of shape ``(..., d + 1)``; distance 2 atan2(|x - y|, |x + y|);
- :class:`Hyperbolic` ``(d)``: the hyperboloid model, shape ``(..., d + 1)`` with the time coordinate
  first; distances from a cancellation-free form (see ``csrc/include/pydp/manifolds/geometry.hpp``).

The privacy parameter (derived in docs/manifolds.md): the mechanism is mu-GDP iff delta(eps) <= delta_mu(eps)
for all eps >= 0, delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). On the circle delta(eps)
is the corrected closed form of Corollary 3.2.1; on S^d and H^d (d >= 2) the integrals of Theorem 4.1
reduce by symmetry to one-dimensional integrals of a regularised incomplete beta function, evaluated
here by Gauss-Legendre quadrature between the kinks. mu is the supremum over eps of the mu solving
delta_mu(eps) = delta(eps): a grid over eps, then a bounded Brent refinement of the maximiser.

Randomness: ``rng=None`` draws from a fresh :class:`pydp_core.Random` (ChaCha20 keyed from the operating
system's entropy: the choice for releases); a seeded ``pydp_core.Random(seed)`` or a
``numpy.random.Generator`` (which keys a ChaCha20 stream, :func:`pydp_core.as_random`) gives reproducible
simulations, not for releases. Samplers run in C++ in fixed chunks: the output for a seed does not depend
on the number of threads.
"""
from __future__ import annotations

from .frechet import (
    PrivateFrechetMean,
    frechet_mean,
    frechet_mean_sensitivity,
    private_frechet_mean,
)
from .montecarlo import MonteCarloMu
from .mu import epsilon_to_mu, gdp_mu, gdp_sigma, mu_to_epsilon
from .profile import privacy_profile
from .sampling import RiemannianGaussian, RiemannianLaplace
from .spaces import Circle, Euclidean, Hyperbolic, Manifold, Sphere

__all__ = [
    "Manifold",
    "Euclidean",
    "Circle",
    "Sphere",
    "Hyperbolic",
    "RiemannianGaussian",
    "RiemannianLaplace",
    "gdp_mu",
    "gdp_sigma",
    "privacy_profile",
    "MonteCarloMu",
    "frechet_mean",
    "frechet_mean_sensitivity",
    "private_frechet_mean",
    "PrivateFrechetMean",
    "epsilon_to_mu",
    "mu_to_epsilon",
]
