"""Mechanisms and noise checks shared by the columnar-data, CLI, Spark and Dask tests."""
from __future__ import annotations

import numpy as np
from scipy import stats

import pydp_core

from .stats import ALPHA, assert_ks


def laplace(epsilon: float = 1.0, sensitivity: float = 1.0):
    """A Laplace mechanism of the noise engine (pure DP)."""
    return pydp_core.LaplaceMechanism(epsilon=epsilon, delta=0.0, sensitivity=sensitivity)


def gaussian(epsilon: float = 1.0, delta: float = 1e-6, sensitivity: float = 1.0):
    return pydp_core.GaussianMechanism(epsilon=epsilon, delta=delta, sensitivity=sensitivity)


def noise_cdf(mechanism):
    """CDF of the mechanism's noise: its family at its scale."""
    fam = pydp_core.Laplace() if type(mechanism).__name__.startswith("Laplace") else pydp_core.Gaussian()
    scale = float(mechanism.scale)
    return lambda x: np.asarray(fam.cdf(np.asarray(x) / scale))


def assert_noise_distribution(noise: np.ndarray, mechanism) -> None:
    """KS test at ALPHA of the noise against the mechanism's noise law."""
    assert_ks(noise, noise_cdf(mechanism))


def assert_uncorrelated(a: np.ndarray, b: np.ndarray) -> None:
    """Pearson correlation of two equal-length noise samples is zero at ALPHA (|z| < 4.9)."""
    r = np.corrcoef(a, b)[0, 1]
    z = np.arctanh(r) * np.sqrt(len(a) - 3)
    assert abs(z) < stats.norm.isf(ALPHA / 2), f"correlation {r:.4g} (z = {z:.3g})"
