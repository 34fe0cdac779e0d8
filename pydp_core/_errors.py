"""The exception and warning classes that every layer may raise, so that the bottom layer (``_safety``)
need not import the accounting layer to emit them.

:class:`PrivacyWarning` is re-exported as ``pydp_core.PrivacyWarning`` and
``pydp_core.accounting.PrivacyWarning`` (the same class).
"""
from __future__ import annotations

__all__ = ["PrivacyWarning"]


class PrivacyWarning(UserWarning):
    """A formula was used outside the range its source proves it for (e.g. the classic Gaussian, eps >= 1)."""
