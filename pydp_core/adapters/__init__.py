"""Adapters for other differential-privacy libraries (each needs its library; none is imported here).

- :mod:`pydp_core.adapters.dp_accounting`: dp-accounting's ``DpEvent`` trees accounted with pydp_core's
  certified PLDs, and a ``dp_accounting.PrivacyAccountant`` backed by them.
- :mod:`pydp_core.adapters.jax_privacy`: jax_privacy's batch-selection strategies (cyclic Poisson, random
  allocation, balls-in-bins) mapped to certified PLDs, by class name (jax_privacy itself is not imported).
- :mod:`pydp_core.adapters.opacus`: an Opacus accountant backed by the PLD, and secure Gaussian noise for
  DP-SGD on torch tensors from the ChaCha20 CSPRNG.

A missing library (for the modules that import one) is an ImportError naming the pydp_core extra that installs it (``peers``).
"""
from __future__ import annotations

__all__: list[str] = []
