"""
accounting kernels: exact GDP profile and RDP -> (eps, delta) conversions
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['gdp_epsilon', 'gdp_epsilon_scalar', 'gdp_log_delta', 'rdp_to_epsilon', 'rdp_to_epsilon_scalar']
def gdp_epsilon(mu: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def gdp_epsilon_scalar(mu: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def gdp_log_delta(mu: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def rdp_to_epsilon(alpha: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rho: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], method: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def rdp_to_epsilon_scalar(alpha: typing.SupportsFloat | typing.SupportsIndex, rho: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex, method: typing.SupportsInt | typing.SupportsIndex) -> float:
    ...
