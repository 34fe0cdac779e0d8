"""
pydp_core compiled core (private: import pydp_core instead)
"""
from __future__ import annotations
from . import special
from . import noise
from . import calibration
from . import random
from . import accounting
from . import manifolds
from . import release
from . import aggregation
__all__: list[str] = ['MAX_THREADS', 'accounting', 'aggregation', 'calibration', 'manifolds', 'noise', 'random', 'release', 'special']
MAX_THREADS: int = 4096
__version__: str = '0.1.0'
