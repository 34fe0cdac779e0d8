"""
accounting kernels: exact GDP profile and RDP -> (eps, delta) conversions
"""
from __future__ import annotations

from .noise import Family
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['PldBounds', 'PldDiscrete', 'RdpMethod', 'gdp_epsilon', 'gdp_epsilon_scalar', 'gdp_log_delta', 'pld_allocation_convolve', 'pld_atoms', 'pld_circular', 'pld_compose', 'pld_noise', 'pld_sides', 'pld_tradeoff', 'pld_window', 'pure_dp_mu', 'rdp_to_epsilon', 'rdp_to_epsilon_scalar', 'zcdp_log_delta']
class RdpMethod:
    """
    the RDP -> (epsilon, delta) conversions (Mironov 2017; Asoodeh et al. 2021; Balle et al. 2020)
    
    Members:
    
      mironov
    
      asoodeh
    
      balle2020
    """
    __members__: typing.ClassVar[dict[str, RdpMethod]]
    asoodeh: typing.ClassVar[RdpMethod]
    balle2020: typing.ClassVar[RdpMethod]
    mironov: typing.ClassVar[RdpMethod]
    @typing.overload
    def __eq__(self, other: RdpMethod) -> bool:
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
    def __ne__(self, other: RdpMethod) -> bool:
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
class PldDiscrete:
    """
    a pessimistic and an optimistic discretisation of one PLD
    """
    @property
    def opt_inf(self) -> float:
        ...
    @property
    def opt_offset(self) -> int:
        ...
    @property
    def opt_pmf(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def pess_inf(self) -> float:
        ...
    @property
    def pess_offset(self) -> int:
        ...
    @property
    def pess_pmf(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
class PldBounds:
    """
    upper and lower privacy profiles of one composed direction
    """
    def delta(self, epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[typing.Any, ...]:
        ...
    def epsilon(self, delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[typing.Any, ...]:
        ...
def gdp_epsilon(mu: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def gdp_epsilon_scalar(mu: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def gdp_log_delta(mu: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def pld_allocation_convolve(va: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], wa: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], vb: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], wb: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], ma: typing.SupportsFloat | typing.SupportsIndex, mb: typing.SupportsFloat | typing.SupportsIndex, grid: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], spread: bool) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
    """
    the law of (ma A + mb B) / (ma + mb) on a sorted grid: spread onto the grid points (mean kept) or the mass and first moment of each cell
    """
def pld_atoms(loss: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], p: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], inf_mass: typing.SupportsFloat | typing.SupportsIndex, value_step: typing.SupportsFloat | typing.SupportsIndex) -> PldDiscrete:
    ...
def pld_circular(pess: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64]], opt: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64]], counts: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], n: typing.SupportsInt | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], float]:
    """
    circular composition of pmfs (offset 0) by FFT: (pessimistic, optimistic, rounding bound of any sum of consecutive entries)
    """
def pld_compose(directions: collections.abc.Sequence[collections.abc.Sequence[PldDiscrete]], counts: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], value_step: typing.SupportsFloat | typing.SupportsIndex, tail_mass: typing.SupportsFloat | typing.SupportsIndex) -> list[PldBounds]:
    """
    one composition per neighbour order (each a list of discretised mechanisms, with shared counts)
    """
def pld_noise(family: Family, shift: typing.SupportsFloat | typing.SupportsIndex, sampling_rate: typing.SupportsFloat | typing.SupportsIndex, remove: bool, value_step: typing.SupportsFloat | typing.SupportsIndex, tail_mass: typing.SupportsFloat | typing.SupportsIndex, thin: typing.SupportsFloat | typing.SupportsIndex = 0.0, substitution: bool = False) -> PldDiscrete:
    """
    one discretised order of additive noise at shift d: remove / add (Poisson sampling, add/remove neighbours) or, with substitution, the replace-one pair (1-q) f + q f(. - d) vs (1-q) f + q f(. + d)
    """
def pld_sides(pessimistic: PldDiscrete, optimistic: PldDiscrete) -> PldDiscrete:
    """
    the pessimistic side of one discretisation with the optimistic side of another (both on one grid)
    """
def pld_tradeoff(pq: PldBounds, qp: PldBounds, alpha: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[typing.Any, ...]:
    ...
def pld_window(parts: collections.abc.Sequence[PldDiscrete], counts: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], value_step: typing.SupportsFloat | typing.SupportsIndex, tail_mass: typing.SupportsFloat | typing.SupportsIndex) -> tuple[float, float]:
    ...
def pure_dp_mu(epsilon: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    """
    mu of the GDP bound of epsilon-DP, -2 Phi^-1(1 / (1 + e^epsilon)), rounded up (Dong, Roth and Su 2022)
    """
def rdp_to_epsilon(alpha: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rho: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], delta: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], method: RdpMethod, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def rdp_to_epsilon_scalar(alpha: typing.SupportsFloat | typing.SupportsIndex, rho: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex, method: RdpMethod) -> float:
    ...
def zcdp_log_delta(rho: typing.SupportsFloat | typing.SupportsIndex, epsilon: typing.SupportsFloat | typing.SupportsIndex) -> tuple[float, float, float]:
    """
    (log delta rounded up, alpha, alpha - 1) of rho-zCDP at epsilon.
    """
