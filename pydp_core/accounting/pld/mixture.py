"""Mixtures of Gaussians (MMCC) and the cyclic-Poisson reduction of banded matrix factorization.

The mixture-of-Gaussians mechanism releases x + sigma Z where the sensitivity is random: c_i with
probability p_i (c_i >= 0). Under add/remove neighbours its dominating pair is P = sum_i p_i N(c_i, sigma^2)
against Q = N(0, sigma^2) ("remove") and the reverse ("add") (Choquette-Choo, Ganesh, Steinke and
Thakurta 2023, MMCC). In units of sigma, with m_i = c_i / sigma, the remove loss

    L(z) = log sum_i p_i exp(m_i z - m_i^2 / 2)

is a log-sum-exp of nondecreasing affine functions, so it is nondecreasing in the output z, and the add
loss is -L(z). Both orders are discretised by the monotone-loss path of :mod:`.sided` (the output axis
cut where the loss crosses the grid points, each piece's P- and Q-masses from log-space normal tails with
error bounds, raised on the pessimistic side and lowered on the optimistic side; docs/pld.md, "Mixtures
of Gaussians").

The b-banded matrix mechanism with cyclic Poisson sampling (Choquette-Choo, Ganesh, McKenna, McMahan,
Rush, Thakurta and Xu 2023, Theorem 1): the records are split into b groups, group (i mod b) is eligible
at step i and each of its records joins with probability q. Column j of a b-banded lower-triangular C is
zero outside rows j..j+b-1, so a record's participations, which are at least b steps apart, touch
disjoint rows of C Z + noise: the release is the composition of independent Poisson-sampled Gaussians,
participation j with sensitivity ||C e_j||_2 (the column sensitivity) against noise sigma.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._validation import check_int, check_positive, check_probability
from ...noise import Gaussian
from . import mechanisms as _mech
from . import sided as _sided
from ._args import _scalar

_U = 2.0 ** -53
_GAUSS = Gaussian()


def _vector(values: Any, name: str) -> np.ndarray:
    """A non-empty 1-d float array without NaN (TypeError / ValueError naming ``name``)."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, not {type(values).__name__}")
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _components(sigma: Any, sensitivities: Any, probabilities: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked (m_i = c_i / sigma, p_i) with zero-probability components dropped, equal m merged, p sorted by m."""
    s = _scalar(sigma, "sigma", check_positive)
    c = _vector(sensitivities, "sensitivities")
    p = _vector(probabilities, "probabilities")
    if c.size != p.size:
        raise ValueError(f"sensitivities and probabilities must have the same length, got {c.size} and {p.size}")
    if np.any(c < 0.0):
        raise ValueError("sensitivities must be >= 0")
    if np.any(p < 0.0) or np.any(p > 1.0):
        raise ValueError("probabilities must lie in [0, 1]")
    total = float(np.sum(p))
    if not abs(total - 1.0) <= 1e-9:
        raise ValueError(f"probabilities must sum to 1, got {total!r}")
    m = c / s
    if not np.all(np.isfinite(m)):
        raise ValueError("sensitivities / sigma must be finite")
    keep = p > 0.0
    m, p = m[keep], p[keep] / total
    uniq, inv = np.unique(m, return_inverse=True)
    return uniq, np.bincount(inv, weights=p, minlength=uniq.size)


def _mixture(m: np.ndarray, w: np.ndarray) -> Any:
    """The two-order mechanism of the pair sum_i w_i N(m_i, 1) vs N(0, 1) (m sorted, >= 0, w > 0, sum 1)."""
    log_w = np.log(w)
    bias = log_w - 0.5 * m * m
    m_max = float(m[-1])

    def remove_loss(z: np.ndarray) -> np.ndarray:
        # log sum_i w_i exp(m_i z - m_i^2 / 2), stably.
        t = bias[:, None] + m[:, None] * z[None, :]
        top = np.max(t, axis=0)
        result: np.ndarray = top + np.log(np.sum(np.exp(t - top), axis=0))
        return result

    def build(remove: bool, h: float, tail: float) -> tuple[_sided.Atoms, _sided.Atoms]:
        sign = 1.0 if remove else -1.0

        def loss(z: np.ndarray) -> np.ndarray:
            return sign * remove_loss(np.asarray(z, dtype=float))

        def p_q_between(za: np.ndarray, zb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            # (P-mass, Q-mass, P-mass error bound) of the pieces (za, zb]: Q = N(0, 1), the mixture a
            # weighted sum of normal masses (its error: the components' and n + 1 roundings of the sum).
            f0, e0 = _sided._between(_sided._cdf_sf(_GAUSS, za), _sided._cdf_sf(_GAUSS, zb))
            mix = np.zeros_like(f0)
            err = np.zeros_like(f0)
            for mi, wi in zip(m, w):
                fi, ei = (f0, e0) if mi == 0.0 else _sided._between(_sided._cdf_sf(_GAUSS, za - mi),
                                                                  _sided._cdf_sf(_GAUSS, zb - mi))
                mix += wi * fi
                err += wi * ei
            err += (2.0 * m.size + 2.0) * _U * mix
            return (mix, f0, err) if remove else (f0, mix, e0)

        reach = _sided._quantile_reach(_GAUSS, tail)
        pess: list[Any] = []
        opt: list[Any] = []
        inf_pess = _sided._monotone_atoms(loss, p_q_between, -reach, m_max + reach, -math.inf, math.inf, sign, h,
                                          pess, opt)
        return _sided._join(pess, inf_pess), _sided._join(opt, 0.0)

    key = ("mixture_of_gaussians", m.tobytes(), w.tobytes())
    return _sided._Sided(key, build, False)


def mixture_term(*, sigma: Any, sensitivities: Any, probabilities: Any) -> Any:
    """The MMCC mixture of Gaussians (``PLD.from_mixture_of_gaussians``)."""
    m, w = _components(sigma, sensitivities, probabilities)
    if m[-1] == 0.0:
        return _mech.identity_term()  # every component has sensitivity 0: nothing is revealed
    if m.size == 1:
        return _mech.gdp_term(float(m[0]))  # a fixed sensitivity: the Gaussian mechanism
    return _mixture(m, w)


def banded_terms(*, sigma: Any, bands: Any, column_sensitivities: Any, sampling_rate: Any,
                 participations: Sequence[int] | None = None) -> list[Any]:
    """The (mechanism, count) terms of b-banded matrix factorization under cyclic Poisson sampling.

    ``participations`` (0-based steps, at least ``bands`` apart) are the steps at which one record's group
    is eligible; None takes every group of the cyclic pattern (steps g, g + b, g + 2b, ...) and bounds all
    of them at once: the k-th participation gets the largest column sensitivity among the groups' k-th
    columns (a Poisson-sampled Gaussian with a larger sensitivity dominates one with a smaller: the
    smaller pair is the larger one rescaled and blurred by independent Gaussian noise).
    """
    s = _scalar(sigma, "sigma", check_positive)
    b = check_int(bands, "bands", 1, 2**40)
    cols = _vector(column_sensitivities, "column_sensitivities")
    if np.any(cols < 0.0):
        raise ValueError("column_sensitivities must be >= 0")
    q = _scalar(sampling_rate, "sampling_rate", check_probability)
    n = cols.size
    if participations is None:
        k = -(-n // b)
        padded = np.zeros(k * b)
        padded[:n] = cols
        sens = padded.reshape(k, b).max(axis=1)  # row k: the k-th columns of the b groups
    else:
        steps = np.asarray([check_int(i, "participations", 0, n - 1) for i in participations], dtype=np.int64)
        if steps.size == 0:
            raise ValueError("participations must not be empty")
        steps.sort()
        if np.any(np.diff(steps) < b):
            raise ValueError(f"participations must be at least bands = {b} steps apart (cyclic Poisson sampling "
                             "over b groups); closer participations share rows of a b-banded factor")
        sens = cols[steps]
    sens = sens[sens > 0.0]
    if sens.size == 0 or q == 0.0:
        return [(_mech.identity_term(), 1)]
    uniq, counts = np.unique(sens, return_counts=True)
    return [(_mech.noise_term(_GAUSS, scale=s, sensitivity=float(c), sampling_rate=q, sampling="poisson",
                              neighbours="add_remove"), int(k)) for c, k in zip(uniq, counts)]
