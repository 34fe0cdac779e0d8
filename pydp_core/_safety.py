"""The release-safety rules shared by the mechanisms, the release functions and the data front ends.

One rule in one place:

- :func:`check_release_rng`: a release draws from a secure generator; a seeded ``pydp_core.Random`` or
  any ``numpy.random.Generator`` is reproducible by whoever knows the seed, so it is refused unless the
  caller says the run is a simulation;
- :func:`check_release_delta`: delta >= 1/2 is refused (the mechanism that publishes the whole data
  set with probability 1/2 is (0, 1/2)-DP, so such a guarantee protects nobody), and delta above
  :data:`DELTA_CONFIRM` warns unless confirmed;
- :func:`privacy_warning`: the one place that emits :class:`~pydp_core.PrivacyWarning`.
"""
from __future__ import annotations

import warnings
from typing import Any

from ._errors import PrivacyWarning

#: delta above this level needs ``confirm_delta=True``. A delta of order 1/n allows a mechanism that
#: publishes one of n records in full ("name and shame", Dwork and Roth 2014, Section 2.3), so delta
#: should be well below 1/n; 1e-3 is 1/n for a data set of a thousand records, the smallest for which
#: the project's releases are meant, so larger values are flagged whatever n is.
DELTA_CONFIRM = 1e-3


def privacy_warning(message: str, stacklevel: int = 3) -> None:
    """Emit ``message`` as a :class:`~pydp_core.PrivacyWarning`."""
    warnings.warn(message, PrivacyWarning, stacklevel=stacklevel)


def is_reproducible(rng: Any) -> bool:
    """Whether ``rng`` is a seeded ``pydp_core.Random`` or a ``numpy.random.Generator``."""
    import numpy as np

    return isinstance(rng, np.random.Generator) or bool(getattr(rng, "seeded", False))


def check_release_rng(rng: Any, simulation: bool, name: str = "rng") -> None:
    """Refuse a reproducible generator in a release unless ``simulation`` is true.

    Raises
    ------
    ValueError
        If ``rng`` is seeded or a numpy generator and ``simulation`` is false.
    TypeError
        If ``simulation`` is not a bool.
    """
    if not isinstance(simulation, bool):
        raise TypeError(f"simulation must be True or False, not {type(simulation).__name__}")
    if not simulation and is_reproducible(rng):
        raise ValueError(
            f"{name} is a seeded or numpy generator: its noise can be reproduced by anyone who knows the seed, "
            "so the output is not private. Omit it for a release (a fresh secure generator is used), or pass "
            "simulation=True to say this run is a simulation"
        )


def check_release_delta(delta: float, confirm_delta: bool) -> None:
    """Refuse delta >= 1/2; warn for delta > :data:`DELTA_CONFIRM` unless ``confirm_delta``.

    Raises
    ------
    ValueError
        If delta >= 1/2.
    TypeError
        If ``confirm_delta`` is not a bool.
    """
    if not isinstance(confirm_delta, bool):
        raise TypeError(f"confirm_delta must be True or False, not {type(confirm_delta).__name__}")
    if delta >= 0.5:
        raise ValueError(
            f"delta must be < 1/2, got {delta!r}: with delta >= 1/2 publishing the whole data set with "
            "probability delta satisfies the guarantee, so it protects nobody"
        )
    if delta > DELTA_CONFIRM and not confirm_delta:
        privacy_warning(
            f"delta = {delta!r} is above {DELTA_CONFIRM:g}: a delta near 1/n lets a mechanism publish a whole "
            "record with that probability; use delta well below 1/n for n records, or pass confirm_delta=True",
            stacklevel=4,
        )
