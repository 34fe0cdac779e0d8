"""
standard symmetric log-concave noise families
"""
from __future__ import annotations

import typing

import numpy
import numpy.typing

__all__: list[str] = ['Family', 'Kind']
class Kind:
    """
    Members:
    
      Laplace
    
      Gaussian
    
      Logistic
    
      Subbotin
    """
    Gaussian: typing.ClassVar[Kind]
    Laplace: typing.ClassVar[Kind]
    Logistic: typing.ClassVar[Kind]
    Subbotin: typing.ClassVar[Kind]
    __members__: typing.ClassVar[dict[str, Kind]]
    @typing.overload
    def __eq__(self, other: Kind) -> bool:
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
    def __ne__(self, other: Kind) -> bool:
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
class Family:
    def __init__(self, kind: Kind, r: typing.SupportsFloat | typing.SupportsIndex = 0.0, bound: typing.SupportsFloat | typing.SupportsIndex = ...) -> None:
        ...
    def cdf(self, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def logcdf(self, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def logpdf(self, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def logsf(self, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def pdf(self, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def ppf(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def psi_diff(self, u: typing.SupportsFloat | typing.SupportsIndex, d: typing.SupportsFloat | typing.SupportsIndex) -> float:
        ...
    def sf(self, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def threshold(self, d: typing.SupportsFloat | typing.SupportsIndex, epsilon: typing.SupportsFloat | typing.SupportsIndex) -> float:
        ...
    @property
    def bound(self) -> float:
        ...
    @property
    def kind(self) -> Kind:
        ...
    @property
    def mlr_bounded(self) -> bool:
        ...
    @property
    def r(self) -> float:
        ...
    @property
    def variance(self) -> float:
        ...
