"""
special functions
"""
from __future__ import annotations

import typing

import numpy
import numpy.typing

__all__: list[str] = ['erfcx', 'incgamma', 'incgamma_q_inv_log', 'lgamma1p', 'log_ndtr', 'ndtr', 'ndtri']
def erfcx(x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def incgamma(a: typing.SupportsFloat | typing.SupportsIndex, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], which: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def incgamma_q_inv_log(a: typing.SupportsFloat | typing.SupportsIndex, log_q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def lgamma1p(a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def log_ndtr(x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def ndtr(x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def ndtri(p: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
