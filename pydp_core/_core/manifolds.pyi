"""
manifolds kernels: geodesics, radial samplers, Monte Carlo counts
"""
from __future__ import annotations

from .random import Generator
import numpy
import numpy.typing
import typing
__all__: list[str] = ['Geometry', 'RadialKind', 'circle_dist', 'dist', 'exp_log', 'mc_fractions', 'sample', 'wrap_angle']
class Geometry:
    """
    the model spaces
    
    Members:
    
      sphere
    
      hyperbolic
    
      euclidean
    
      circle
    """
    __members__: typing.ClassVar[dict[str, Geometry]]
    circle: typing.ClassVar[Geometry]
    euclidean: typing.ClassVar[Geometry]
    hyperbolic: typing.ClassVar[Geometry]
    sphere: typing.ClassVar[Geometry]
    @typing.overload
    def __eq__(self, other: Geometry) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Geometry) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class RadialKind:
    """
    the factor S(t)^(d-1) of a radial law: sin, sinh, t, or none (circle)
    
    Members:
    
      sin
    
      sinh
    
      linear
    
      none
    """
    __members__: typing.ClassVar[dict[str, RadialKind]]
    linear: typing.ClassVar[RadialKind]
    none: typing.ClassVar[RadialKind]
    sin: typing.ClassVar[RadialKind]
    sinh: typing.ClassVar[RadialKind]
    @typing.overload
    def __eq__(self, other: RadialKind) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: RadialKind) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
def circle_dist(a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def dist(geo: Geometry, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], y: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], atol: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def exp_log(geo: Geometry, which: typing.SupportsInt | typing.SupportsIndex, p: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], v: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], atol: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def mc_fractions(losses: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], thresholds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def sample(geo: Geometry, kind: RadialKind, k: typing.SupportsFloat | typing.SupportsIndex, sigma: typing.SupportsFloat | typing.SupportsIndex, laplace: bool, tmax: typing.SupportsFloat | typing.SupportsIndex, mode: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, p: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], basis: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], size: typing.SupportsInt | typing.SupportsIndex, gen: Generator, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def wrap_angle(a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
