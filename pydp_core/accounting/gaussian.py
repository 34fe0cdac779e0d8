"""Deprecated: this module is now :mod:`pydp_core.accounting.gdp`.

Every name still resolves here, with a :class:`DeprecationWarning`. Three functions were renamed after
what they compute (their old names were those of their own parameters): ``psi`` is
:func:`~pydp_core.accounting.gdp.gdp_mu`, ``epsilon`` is :func:`~pydp_core.accounting.gdp.gdp_epsilon`
and ``delta`` is :func:`~pydp_core.accounting.gdp.gdp_delta`; the others kept their names.

The warning is for users: a caller inside pydp_core is not warned (tests/packaging/test_layers.py forbids such
callers instead, so that the library never depends on its own deprecated names).
"""
from __future__ import annotations

import sys as _sys
import warnings as _warnings
from typing import TYPE_CHECKING, Any

from . import gdp as _gdp

if TYPE_CHECKING:  # what type checkers see; at run time every name goes through __getattr__ (and warns)
    from .gdp import *  # noqa: F403
    from .gdp import gdp_delta as delta  # noqa: F401
    from .gdp import gdp_epsilon as epsilon  # noqa: F401
    from .gdp import gdp_mu as psi  # noqa: F401

#: Old name -> new name, for the functions that were renamed.
_RENAMED = {"psi": "gdp_mu", "epsilon": "gdp_epsilon", "delta": "gdp_delta"}


def __getattr__(name: str) -> Any:
    new = _RENAMED.get(name, name)
    if new not in _gdp.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _sys._getframe(1).f_globals.get("__name__", "").startswith("pydp_core."):
        _warnings.warn(
            f"pydp_core.accounting.gaussian.{name} is deprecated: use pydp_core.accounting.gdp.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
    return getattr(_gdp, new)


def __dir__() -> list[str]:
    return sorted(set(_gdp.__all__) | set(_RENAMED))
