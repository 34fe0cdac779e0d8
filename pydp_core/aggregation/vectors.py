"""Vector sums per group (``("vector_sum", norm, bound, size)``): each row's vector clipped to ``bound`` in the
``"l1"``, ``"l2"`` or ``"linf"`` norm on an integer grid, summed exactly, and released with exact keyed discrete
Laplace or discrete Gaussian noise per coordinate (``docs/aggregate.md``, section 13).

With ``C = bound = m 2**e`` (``m`` in [0.5, 1)), a row's coordinates are integers ``q_j`` in units of
``gamma = 2**(e - 20)``, checked in integer arithmetic: ``sum |q_j| <= B`` (l1), ``max |q_j| <= B`` (linf) or
``sum q_j**2 <= B2`` (l2), with ``B = floor(C / gamma)`` and ``B2 = floor((C / gamma)**2)``. So one row has
l1 norm at most ``S1`` (``B``, ``size B``, ``isqrt(size B2)``) and squared l2 norm at most ``S2`` (``B**2``,
``size B**2``, ``B2``), and one privacy unit changes the integer sums of all groups by at most ``Kp Kc S1``
in l1 norm and ``Kp Kc**2 S2`` in squared l2 norm (Lemma 1 and the triangle inequality).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..release.samplers import MAX_PARAM
from .aggregations import GaussianNoise, IntegerNoise, integer_laplace_t

NORMS = ("l1", "l2", "linf")
_RESOLUTION = 20  # gamma = 2**(e - 20): a row's coordinates are integers below 2**20
MAX_SIZE = 1 << 16


def vector_request(item: Any, name: str) -> tuple[str, float, int]:
    """``(norm, bound, size)`` of ``("vector_sum", norm, bound, size)``, checked (errors naming ``name``)."""
    if not (isinstance(item, (tuple, list)) and len(item) == 4 and item[0] == "vector_sum"):
        raise TypeError(f"{name}: a vector sum is asked as ('vector_sum', norm, bound, size), got {item!r}")
    _, norm, bound, size = item
    if norm not in NORMS:
        raise ValueError(f"{name}: the norm of a vector sum is one of {', '.join(NORMS)}, got {norm!r}")
    if isinstance(bound, bool) or not isinstance(bound, (int, float, np.integer, np.floating)) or \
            not (math.isfinite(float(bound)) and float(bound) > 0):
        raise ValueError(f"{name}: the bound of a vector sum must be a finite number > 0, got {bound!r}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= int(size) <= MAX_SIZE:
        raise ValueError(f"{name}: the size of a vector sum must be an integer in [1, {MAX_SIZE}], got {size!r}")
    return str(norm), float(bound), int(size)


def unit_exponent(bound: float) -> int:
    """``e - 20`` with ``bound = m 2**e``, ``m`` in [0.5, 1): the exponent of the unit ``gamma``."""
    return math.frexp(bound)[1] - _RESOLUTION


def norm_limits(norm: str, bound: float, size: int) -> tuple[int, int, int, int]:
    """``(B, B2, S1, S2)`` in units of gamma: the row limits and one row's l1 and squared l2 norm bounds."""
    c = Fraction(bound) / Fraction(2) ** unit_exponent(bound)
    b, b2 = math.floor(c), math.floor(c * c)
    if norm == "l1":
        return b, b2, b, b * b
    if norm == "linf":
        return b, b2, size * b, size * b * b
    return b, b2, math.isqrt(size * b2), b2


def clipped_units(x: np.ndarray, norm: str, bound: float) -> np.ndarray:
    """Each row of ``x`` (n, size) clipped to ``bound`` in ``norm`` as int64 coordinates in units of gamma, the
    limit of :func:`norm_limits` holding exactly (a function of each row alone)."""
    size = x.shape[1]
    b, b2, _, _ = norm_limits(norm, bound, size)
    e = unit_exponent(bound)
    if norm == "linf":
        clipped: np.ndarray = np.clip(np.rint(np.ldexp(np.clip(x, -bound, bound), -e)), -b, b).astype(np.int64)
        return clipped
    length = np.abs(x).sum(axis=1) if norm == "l1" else np.sqrt((x * x).sum(axis=1))
    scale = np.where(length > bound, bound / np.where(length > 0, length, 1.0), 1.0)
    q = np.clip(np.rint(np.ldexp(x * scale[:, None], -e)), -b, b).astype(np.int64)

    def over() -> np.ndarray:
        out: np.ndarray = (np.abs(q).sum(axis=1) > b) if norm == "l1" else ((q * q).sum(axis=1) > b2)
        return out

    bad = np.flatnonzero(over())
    while bad.size:  # rounding up overshot the limit: lower the largest coordinate by one unit
        j = np.argmax(np.abs(q[bad]), axis=1)
        q[bad, j] -= np.sign(q[bad, j])
        bad = bad[(np.abs(q[bad]).sum(axis=1) > b) if norm == "l1" else ((q[bad] * q[bad]).sum(axis=1) > b2)]
    result: np.ndarray = q
    return result


def vector_values(frame: Any, name: str, size: int) -> np.ndarray:
    """The (n, size) float64 vectors of a list column (pyarrow list or fixed-size list, or pandas sequences)."""
    col = frame.column(name)
    if frame.kind == "arrow":
        import pyarrow as pa

        arr = col.combine_chunks() if hasattr(col, "combine_chunks") else col
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type)):
            raise TypeError(f"aggregations: column {name!r} must hold lists of numbers for a vector sum (got {arr.type})")
        if arr.null_count:
            raise ValueError(f"aggregations: column {name!r} has missing values (null); drop or impute them first")
        lengths = np.asarray(arr.value_lengths()) if hasattr(arr, "value_lengths") else None
        if lengths is not None and (lengths != size).any():
            raise ValueError(f"aggregations: column {name!r} has vectors whose length is not the size {size}")
        flat = arr.flatten()
        if not (pa.types.is_integer(flat.type) or pa.types.is_floating(flat.type)) or flat.null_count:
            raise TypeError(f"aggregations: column {name!r} must hold lists of numbers without nulls")
        values = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float64)
    else:
        try:
            rows = [np.asarray(v, dtype=np.float64) for v in col.to_numpy(dtype=object)]
        except (TypeError, ValueError):
            raise TypeError(f"aggregations: column {name!r} must hold sequences of numbers for a vector sum") from None
        if any(r.ndim != 1 for r in rows):
            raise TypeError(f"aggregations: column {name!r} must hold sequences of numbers for a vector sum")
        if any(r.shape[0] != size for r in rows):
            raise ValueError(f"aggregations: column {name!r} has vectors whose length is not the size {size}")
        values = np.concatenate(rows) if rows else np.zeros(0)
    if values.size != frame.num_rows * size:
        raise ValueError(f"aggregations: column {name!r} has vectors whose length is not the size {size}")
    if not np.isfinite(values).all():
        raise ValueError(f"aggregations: column {name!r} has NaN or infinite coordinates")
    return values.reshape(frame.num_rows, size)


def row_hashes(x: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's float64 coordinates (``h = fmix(h ^ bits(v_j))``): the vector's part of the row
    content of the bounding, so that the kept rows do not depend on the row order."""
    from .bounding import fmix

    h = np.full(x.shape[0], 0x9E3779B97F4A7C15, dtype=np.uint64)
    bits = np.ascontiguousarray(x + 0.0).view(np.uint64)  # -0.0 as 0.0
    for j in range(x.shape[1]):
        h = fmix(h ^ bits[:, j])
    return h


def unit_sums(q: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """The exact int64 ``(n_groups, size)`` sums of the rows' integer coordinates per group."""
    return np.stack([np.bincount(groups, weights=q[:, j], minlength=n_groups) for j in range(q.shape[1])],
                    axis=1).astype(np.int64) if q.shape[1] else np.zeros((n_groups, 0), dtype=np.int64)


@dataclass(frozen=True)
class VectorPlan:
    """The calibrated noise of one vector sum (discrete Laplace per coordinate, or discrete Gaussian)."""

    aggregate: str
    norm: str
    bound: float
    size: int
    noise_of: IntegerNoise | GaussianNoise
    epsilon: float = 0.0
    rho: float = 0.0

    @property
    def components(self) -> dict[Any, Any]:
        return {"vector": self.noise_of}

    @property
    def noise(self) -> str:
        return "gaussian" if self.rho > 0 else "laplace"

    @property
    def rho_achieved(self) -> float:
        return self.noise_of.rho_achieved if isinstance(self.noise_of, GaussianNoise) else 0.0

    @property
    def unit(self) -> float:
        return math.ldexp(1.0, unit_exponent(self.bound))

    def release(self, sums: np.ndarray, stream_ids: np.ndarray, key: bytes) -> list[np.ndarray]:
        """Per group, the noisy vector ``(sum + Y) gamma``: independent keyed draws per group and coordinate."""
        from .bounding import subkey

        cols = [self.noise_of.draw(sums[:, j], stream_ids, subkey(key, f"coordinate\x00{j}")) for j in range(self.size)]
        out = np.ldexp(np.stack(cols, axis=1).astype(np.float64), unit_exponent(self.bound)) if cols else \
            np.zeros((sums.shape[0], 0))
        return list(out)

    def half_width(self, alpha: float) -> float:
        """The half-width of the box that holds the true vector (the sum of the clipped rows on the grid
        ``gamma``) with probability at least ``1 - alpha``: each coordinate's interval at level
        ``1 - alpha / size`` (union bound over the coordinates)."""
        return math.ldexp(self.noise_of.half_width(alpha / self.size), unit_exponent(self.bound))

    def describe(self, alpha: float | None = None) -> dict[Any, Any]:
        comp = self.noise_of.describe()
        g = self.unit
        comp.update(grid=g, scale=comp["scale"] * g, std=comp["std"] * g)
        out: dict[Any, Any] = {"aggregate": "vector_sum", "norm": self.norm, "bound": self.bound, "size": self.size,
                     "noise": self.noise, "unit": g, "components": {"vector": comp}}
        if alpha is not None:
            comp["ci_half_width"] = self.half_width(alpha)
        if self.rho > 0:
            out.update(rho=self.rho, rho_achieved=self.rho_achieved)
        else:
            out.update(epsilon=self.epsilon, delta=0.0)
        return out


def plan_vector(aggregate: str, *, norm: str, bound: float, size: int, epsilon: float = 0.0, rho: float = 0.0,
                max_partitions: int, max_contributions: int) -> VectorPlan:
    """Calibrate a vector sum for its share: ``epsilon`` (discrete Laplace with ``Kp Kc S1 / t <= epsilon``) or
    ``rho`` (discrete Gaussian with an integer ``sigma2``, ``Kp Kc**2 S2 / (2 sigma2) <= rho``), exact checks."""
    _, _, s1, s2 = norm_limits(norm, bound, size)
    kp, kc = max_partitions, max_contributions
    if rho > 0:
        l2sq = kp * kc * kc * s2
        exact = Fraction(l2sq) / (2 * Fraction(rho))
        sigma2 = Fraction(-((-exact.numerator) // exact.denominator))
        if not Fraction(l2sq) / (2 * sigma2) <= Fraction(rho) or sigma2 > MAX_PARAM:
            raise ValueError("the budget of a vector sum is too small for Gaussian noise")
        return VectorPlan(aggregate, norm, bound, size, GaussianNoise(rho, kc * math.isqrt(s2), l2sq, sigma2), rho=rho)
    t = integer_laplace_t(epsilon, kp * kc * s1)
    return VectorPlan(aggregate, norm, bound, size, IntegerNoise(epsilon, kc * s1, kp * kc * s1, t), epsilon=epsilon)

