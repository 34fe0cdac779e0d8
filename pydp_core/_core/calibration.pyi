"""
exact (epsilon, delta) profile and calibration
"""
from __future__ import annotations

from .noise import Family
import numpy
import numpy.typing
import typing
__all__: list[str] = ['epsilon_for_delta', 'log_privacy_profile', 'minimal_scale']
def epsilon_for_delta(family: Family, delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], scale: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sensitivity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def log_privacy_profile(family: Family, epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], scale: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sensitivity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def minimal_scale(family: Family, epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sensitivity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
