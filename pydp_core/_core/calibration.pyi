"""
exact (epsilon, delta) profile and calibration
"""
from __future__ import annotations

from .noise import Family
import numpy
import numpy.typing
import typing
__all__: list[str] = ['Status', 'epsilon_for_delta', 'log_privacy_profile', 'minimal_scale']
class Status:
    """
    why minimal_scale found no scale (its second output)
    
    Members:
    
      ok
    
      no_finite_scale
    
      verify_failed
    
      no_convergence
    
      scale_overflow
    """
    __members__: typing.ClassVar[dict[str, Status]]
    no_convergence: typing.ClassVar[Status]
    no_finite_scale: typing.ClassVar[Status]
    ok: typing.ClassVar[Status]
    scale_overflow: typing.ClassVar[Status]
    verify_failed: typing.ClassVar[Status]
    @typing.overload
    def __eq__(self, other: Status) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.SupportsInt | typing.SupportsIndex) -> bool:
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
    def __ne__(self, other: Status) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.SupportsInt | typing.SupportsIndex) -> bool:
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
def epsilon_for_delta(family: Family, delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], scale: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sensitivity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def log_privacy_profile(family: Family, epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], scale: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sensitivity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def minimal_scale(family: Family, epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sensitivity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.int32]]:
    ...
