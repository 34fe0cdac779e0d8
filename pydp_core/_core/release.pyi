"""
exact discrete noise (Canonne, Kamath, Steinke 2020) and its privacy profiles
"""
from __future__ import annotations

from .random import Generator
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['CHUNK', 'LATTICE_AUTO_GRID_BITS', 'LATTICE_AUTO_GRID_SLACK', 'LATTICE_COARSER_GRID_BITS', 'LATTICE_STABLE_GRID_BITS', 'LATTICE_STABLE_TABLE_ENTRIES', 'LatticeTable', 'MAX_LAPLACE_T', 'MAX_PARAM', 'MAX_TABLE_HALF', 'dgauss_log_cdf', 'dgauss_log_delta', 'dgauss_log_normaliser', 'discrete_gaussian', 'discrete_laplace', 'dlaplace_log_cdf', 'dlaplace_log_delta', 'gaussian_proposal_t', 'gaussian_vector_plan', 'laplace_vector_plan', 'lattice_grid', 'lattice_plan', 'lattice_smallest_passing', 'lattice_table', 'release_gaussian', 'release_laplace']
class LatticeTable:
    """
    The integer weight table of a lattice noise law (table.hpp).
    """
    def __init__(self, kind: typing.SupportsInt | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, weight_bits: typing.SupportsInt | typing.SupportsIndex, max_half: typing.SupportsInt | typing.SupportsIndex, tail_bits: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        tail_bits > 0 (Logistic, integer scale): the table stops at the last weight >= 2^(P - tail_bits) and an exact geometric tail of ratio exp(-1/scale) follows (pure epsilon-DP).
        """
    def _draw_words(self, words: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], size: typing.SupportsInt | typing.SupportsIndex, timing_stable: bool = False) -> tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64]]:
        ...
    def _from_uniform(self, u: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], guided: bool) -> numpy.typing.NDArray[numpy.int64]:
        ...
    def _time_draws(self, gen: Generator, size: typing.SupportsInt | typing.SupportsIndex, timing_stable: bool = False) -> tuple[typing.Any, ...]:
        """
        Bench hook: (values, ns) of n single-value draws.
        """
    def log_delta(self, epsilon: typing.SupportsFloat | typing.SupportsIndex, shift: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        An upper bound on log delta(epsilon) for the integer shift.
        """
    def log_ratio_bound(self, shift: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        A certified upper bound on max_y log(P(y) / P(y + shift)) (a table with a geometric tail).
        """
    def release(self, gen: Generator, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], grid_exponent: typing.SupportsInt | typing.SupportsIndex, low: typing.SupportsFloat | typing.SupportsIndex, high: typing.SupportsFloat | typing.SupportsIndex, timing_stable: bool = False, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def sample(self, gen: Generator, size: typing.SupportsInt | typing.SupportsIndex, timing_stable: bool = False, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.int64]:
        ...
    def weights(self) -> numpy.typing.NDArray[numpy.uint64]:
        """
        W(0), ..., W(K).
        """
    @property
    def half_size(self) -> int:
        ...
    @property
    def has_tail(self) -> bool:
        ...
    @property
    def search_steps(self) -> int:
        ...
    @property
    def tail_weight(self) -> int:
        """
        W_t: P(Y = K + 1 + g) = W_t (1 - q) q^g / total, q = exp(-1/scale) (0: no tail).
        """
    @property
    def total(self) -> int:
        ...
def _discrete_gaussian_exact(gen: Generator, num: typing.SupportsInt | typing.SupportsIndex, den: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.int64]:
    """
    Test hook: discrete_gaussian with every trial decided by exact comparisons (same law, same bits).
    """
def _discrete_laplace_exact(gen: Generator, s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.int64]:
    """
    Test hook: discrete_laplace with every magnitude found by exact comparisons (same law, same bits).
    """
def _exp_neg_bracket(p_hi: typing.SupportsInt | typing.SupportsIndex, p_lo: typing.SupportsInt | typing.SupportsIndex, q: typing.SupportsInt | typing.SupportsIndex, words: typing.SupportsInt | typing.SupportsIndex) -> tuple[str, str]:
    """
    Test hook: decimal strings lo, hi with lo <= 2^(64 words) exp(-p/q) <= hi, p = p_hi 2^64 + p_lo.
    """
def _exp_ratio_words(words: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], u: typing.SupportsInt | typing.SupportsIndex, s: typing.SupportsInt | typing.SupportsIndex) -> bool:
    """
    Test hook: the Bernoulli(exp(-u/s)) trial of the CKS geometric stage on given words (W = 0.words[0], then the bits of words[1:], least significant first).
    """
def _geometric_exact(words: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex) -> tuple[int, int]:
    """
    Test hook: (X, the fast path's answer or -1) of the exact geometric for W = 0.words[0] words[1] ... (each word most significant first; the reader takes 16 words at a time).
    """
def _time_gaussian_draws(gen: Generator, num: typing.SupportsInt | typing.SupportsIndex, den: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex) -> tuple[typing.Any, ...]:
    """
    Bench hook: (values, ns) of n single-value draws.
    """
def _time_laplace_draws(gen: Generator, s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex) -> tuple[typing.Any, ...]:
    """
    Bench hook: (values, ns) of n single-value draws.
    """
def dgauss_log_cdf(m: typing.SupportsFloat | typing.SupportsIndex, sigma2: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def dgauss_log_delta(epsilon: typing.SupportsFloat | typing.SupportsIndex, sigma2: typing.SupportsFloat | typing.SupportsIndex, shift: typing.SupportsFloat | typing.SupportsIndex, direct: bool = False) -> float:
    ...
def dgauss_log_normaliser(sigma2: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def discrete_gaussian(gen: Generator, num: typing.SupportsInt | typing.SupportsIndex, den: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.int64]:
    """
    n integers from the discrete Gaussian law with sigma^2 = num/den: P(y) ~ exp(-y^2 / (2 sigma^2)).
    """
def discrete_laplace(gen: Generator, s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.int64]:
    """
    n integers from the discrete Laplace law with t = s/d: P(y) ~ exp(-|y| / t).
    """
def dlaplace_log_cdf(m: typing.SupportsFloat | typing.SupportsIndex, inv_t: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def dlaplace_log_delta(epsilon: typing.SupportsFloat | typing.SupportsIndex, inv_t: typing.SupportsFloat | typing.SupportsIndex, shift: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def gaussian_proposal_t(num: typing.SupportsInt | typing.SupportsIndex, den: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    The discrete Laplace proposal parameter t used for sigma^2 = num/den.
    """
def gaussian_vector_plan(epsilon: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex, sensitivity: typing.SupportsFloat | typing.SupportsIndex, grid_bits: typing.SupportsInt | typing.SupportsIndex, dimension: typing.SupportsInt | typing.SupportsIndex) -> tuple[int, str, int, int, int, float]:
    ...
def laplace_vector_plan(epsilon: typing.SupportsFloat | typing.SupportsIndex, sensitivity: typing.SupportsFloat | typing.SupportsIndex, grid_bits: typing.SupportsInt | typing.SupportsIndex, dimension: typing.SupportsInt | typing.SupportsIndex, norm: typing.SupportsInt | typing.SupportsIndex) -> tuple[int, str, int, int, int, float]:
    ...
def lattice_grid(kind: typing.SupportsInt | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, sensitivity: typing.SupportsFloat | typing.SupportsIndex, grid_bits: typing.SupportsInt | typing.SupportsIndex, s0: typing.SupportsFloat | typing.SupportsIndex, refine: bool) -> tuple[typing.Any, ...]:
    """
    (ok, grid_exponent, shift) of the lattice plans' grid for the continuous scale s0 (refine: a finer grid for small epsilon, within the table budget).
    """
def lattice_plan(kind: typing.SupportsInt | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, epsilon: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex, sensitivity: typing.SupportsFloat | typing.SupportsIndex, grid_bits: typing.SupportsInt | typing.SupportsIndex, timing_stable: bool, tail: bool, s0: typing.SupportsFloat | typing.SupportsIndex) -> tuple[typing.Any, ...]:
    """
    (status, message, s, weight_bits, grid_exponent, shift, delta_achieved, epsilon_achieved, table).
    """
def lattice_smallest_passing(kind: typing.SupportsInt | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, start: typing.SupportsFloat | typing.SupportsIndex, tail: bool, excess: collections.abc.Callable[..., typing.Any]) -> tuple[typing.Any, ...]:
    """
    (status, message, s): the search of lattice_plan with excess(table) <= 0 passing (lattice_plan.hpp).
    """
def lattice_table(kind: typing.SupportsInt | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, s: typing.SupportsInt | typing.SupportsIndex, tail: bool) -> tuple[typing.Any, ...]:
    """
    (status, message, table, weight_bits): the table of the integer scale s with the largest weight bits P <= 62 whose total stays below 2^63.
    """
def release_gaussian(gen: Generator, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], num: typing.SupportsInt | typing.SupportsIndex, den: typing.SupportsInt | typing.SupportsIndex, grid_exponent: typing.SupportsInt | typing.SupportsIndex, low: typing.SupportsFloat | typing.SupportsIndex = ..., high: typing.SupportsFloat | typing.SupportsIndex = ..., threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
def release_laplace(gen: Generator, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, grid_exponent: typing.SupportsInt | typing.SupportsIndex, low: typing.SupportsFloat | typing.SupportsIndex = ..., high: typing.SupportsFloat | typing.SupportsIndex = ..., threads: typing.SupportsInt | typing.SupportsIndex = 0) -> numpy.typing.NDArray[numpy.float64]:
    ...
CHUNK: int = 4096
LATTICE_AUTO_GRID_BITS: int = 16
LATTICE_AUTO_GRID_SLACK: float = 0.001
LATTICE_COARSER_GRID_BITS: tuple[typing.Any, ...] = (12, 8, 4)
LATTICE_STABLE_GRID_BITS: tuple[typing.Any, ...] = (8, 7, 6, 5, 4, 3, 2, 1, 0)
LATTICE_STABLE_TABLE_ENTRIES: int = 1536
MAX_LAPLACE_T: int = 1099511627776
MAX_PARAM: int = 4611686018427387904
MAX_TABLE_HALF: int = 16777216
