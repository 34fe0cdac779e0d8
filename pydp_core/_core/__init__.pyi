"""
pydp_core compiled core (private: import pydp_core instead)
"""
from __future__ import annotations

from . import accounting, calibration, discrete, manifolds, noise, random, special

__all__: list[str] = ['accounting', 'calibration', 'discrete', 'manifolds', 'noise', 'random', 'special']
__version__: str = '0.1.0'
