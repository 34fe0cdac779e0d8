"""
aggregate kernels: per-person contribution bounding, keyed per-group noise
"""
from __future__ import annotations

from .random import Generator
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['bound_contributions', 'component_limbs', 'keyed_gaussian_integers', 'keyed_gaussian_release', 'keyed_laplace_integers', 'keyed_laplace_release', 'keyed_words', 'limbs_on_grid']
def bound_contributions(person: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], person_hash: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], group: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], group_hash: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], values: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64]], bounds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], content_seed: typing.SupportsInt | typing.SupportsIndex, max_partitions: typing.SupportsInt | typing.SupportsIndex, max_contributions: typing.SupportsInt | typing.SupportsIndex, keys: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], threads: typing.SupportsInt | typing.SupportsIndex, bucket_persons: typing.SupportsInt | typing.SupportsIndex = -1) -> tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.uint8]]:
    """
    (kept row indices, increasing; kept (person, group) pairs per group; groups with rows); see pydp/aggregation/bounding.hpp
    """
def component_limbs(groups: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], values: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rows: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], lo: typing.SupportsFloat | typing.SupportsIndex, hi: typing.SupportsFloat | typing.SupportsIndex, terms: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], b: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], e_gamma: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], n_groups: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int64]:
    """
    (3 terms, n_groups) int64 limb sums of the quantized terms of values[rows] (see pydp/aggregation/exact_sums.hpp)
    """
def keyed_gaussian_integers(gen: Generator, streams: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], x: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int64]:
    """
    x[j] + discrete Gaussian(sigma^2 = s/d) noise from gen.spawn(streams[j]) (see pydp/aggregation/keyed_noise.hpp)
    """
def keyed_gaussian_release(gen: Generator, streams: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, grid_exponent: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    the grid release of x[j] with discrete Gaussian(sigma^2 = s/d) noise of gen.spawn(streams[j])
    """
def keyed_laplace_integers(gen: Generator, streams: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], x: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int64]:
    """
    x[j] + discrete Laplace(t = s/d) noise from gen.spawn(streams[j]) (see pydp/aggregation/keyed_noise.hpp)
    """
def keyed_laplace_release(gen: Generator, streams: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], s: typing.SupportsInt | typing.SupportsIndex, d: typing.SupportsInt | typing.SupportsIndex, grid_exponent: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    the grid release of x[j] with discrete Laplace(t = s/d) noise of gen.spawn(streams[j])
    """
def keyed_words(gen: Generator, streams: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], words: typing.SupportsInt | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint64]:
    """
    row j: the first `words` 64-bit words of gen.spawn(streams[j]) (see pydp/aggregation/keyed_noise.hpp)
    """
def limbs_on_grid(l0: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], l1: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], l2: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], rows: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], e_gamma: typing.SupportsInt | typing.SupportsIndex, e_grid: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    the exact group totals of limb sums rounded to the grid 2**e_grid (see pydp/aggregation/exact_sums.hpp)
    """
