"""
manifolds kernels: geodesics, radial samplers, Monte Carlo counts
"""
from __future__ import annotations

from .random import Generator
import numpy
import numpy.typing
import typing
__all__: list[str] = ['circle_dist', 'dist', 'exp_log', 'mc_fractions', 'sample', 'wrap_angle']
def circle_dist(a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def dist(geo: typing.SupportsInt | typing.SupportsIndex, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], y: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], atol: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def exp_log(geo: typing.SupportsInt | typing.SupportsIndex, which: typing.SupportsInt | typing.SupportsIndex, p: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], v: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], atol: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def mc_fractions(losses: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], thresholds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def sample(geo: typing.SupportsInt | typing.SupportsIndex, kind: typing.SupportsInt | typing.SupportsIndex, k: typing.SupportsFloat | typing.SupportsIndex, sigma: typing.SupportsFloat | typing.SupportsIndex, laplace: bool, tmax: typing.SupportsFloat | typing.SupportsIndex, mode: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, p: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], basis: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], size: typing.SupportsInt | typing.SupportsIndex, gen: Generator, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def wrap_angle(a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
