from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

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

class Manifold:
    dim: int
    curvature: float
    injectivity_radius: float
    atol: float
    point_size: int
    def check_point(self, x: ArrayLike, name: str = ...) -> np.ndarray: ...
    def dist(self, x: ArrayLike, y: ArrayLike) -> Any: ...
    def exp(self, p: ArrayLike, v: ArrayLike) -> Any: ...
    def log(self, p: ArrayLike, q: ArrayLike) -> Any: ...

class Euclidean(Manifold):
    def __init__(self, d: int = ...) -> None: ...

class Circle(Manifold):
    def __init__(self) -> None: ...

class Sphere(Manifold):
    def __init__(self, d: int = ..., atol: float = ...) -> None: ...

class Hyperbolic(Manifold):
    def __init__(self, d: int = ..., atol: float = ...) -> None: ...
    def origin(self) -> np.ndarray: ...

class _RiemannianRadial:
    manifold: Manifold
    sigma: float
    footpoint: np.ndarray
    def __init__(self, manifold: Manifold, footpoint: ArrayLike, sigma: float) -> None: ...
    @property
    def log_normalizer(self) -> float: ...
    def logpdf(self, y: ArrayLike) -> Any: ...
    def radial_cdf(self, t: ArrayLike) -> np.ndarray: ...
    def sample(self, size: Optional[int | tuple[int, ...]] = ..., rng: Any = ...) -> np.ndarray: ...
    def sample_mh(self, size: Optional[int] = ..., rng: Any = ..., *, steps: int = ...,
                  proposal_scale: Optional[float] = ...) -> np.ndarray: ...

class RiemannianGaussian(_RiemannianRadial): ...
class RiemannianLaplace(_RiemannianRadial): ...

@dataclass(frozen=True)
class MonteCarloMu:
    mu: float
    stderr: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int
    m: int
    n_eps: int
    eps_max: float
    @property
    def confidence_interval(self) -> tuple[float, float]: ...

def privacy_profile(manifold: Manifold, epsilon: ArrayLike, sigma: float, sensitivity: float = ...) -> Any: ...
def gdp_mu(manifold: Manifold, sigma: float, sensitivity: float = ..., method: str = ..., *, n: int = ...,
           m: int = ..., n_eps: int = ..., eps_max: Optional[float] = ..., rng: Any = ...,
           confidence: float = ..., progress: Optional[bool] = ..., threads: Optional[int] = ...) -> Any: ...
def gdp_sigma(manifold: Manifold, mu: float, sensitivity: float = ...) -> float: ...
def epsilon_to_mu(epsilon: float) -> float: ...
def mu_to_epsilon(mu: float) -> float: ...
def frechet_mean(manifold: Manifold, points: ArrayLike, *, tol: float = ..., max_iter: int = ...) -> Any: ...
def frechet_mean_sensitivity(radius: float, n: int, kappa: float = ...) -> float: ...

@dataclass(frozen=True)
class PrivateFrechetMean:
    release: Any
    mechanism: str
    sigma: float
    mu: float
    epsilon: Optional[float]
    sensitivity: float

def private_frechet_mean(manifold: Manifold, points: ArrayLike, radius: float, mu: Optional[float] = ..., *,
                         sigma: Optional[float] = ..., mechanism: str = ..., rng: Any = ...) -> PrivateFrechetMean: ...
