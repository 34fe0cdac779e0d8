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
from . import discrete
from . import aggregate
__all__: list[str] = ['accounting', 'aggregate', 'calibration', 'discrete', 'manifolds', 'noise', 'random', 'special']
MAX_THREADS: int = 4096
__version__: str = '0.1.0'
