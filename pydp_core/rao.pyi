from typing import Any, Callable, Optional

from .budgets import RaoDP
from .noise import NoiseFamily

__all__: list[str]

def normal_distance(mu1: Any, sigma1: Any, mu2: Any, sigma2: Any) -> Any: ...
def fisher_information(noise: NoiseFamily, scale: Any = ...) -> Any: ...
def location_distance(noise: NoiseFamily, loc1: Any, loc2: Any, scale: Any) -> float: ...
def theta(noise: NoiseFamily, scale: float, sensitivity: float = ...) -> RaoDP: ...
def calibrate(noise: NoiseFamily, theta: float, sensitivity: float = ..., dimension: int = ...) -> float: ...
def nonparametric_distance(
    pdf1: Callable[[float], float],
    pdf2: Callable[[float], float],
    lower: float = ...,
    upper: float = ...,
    *,
    points: Optional[list] = ...,
    epsabs: float = ...,
    epsrel: float = ...,
) -> float: ...
