"""Precomputed 45-digit references for the slowest mpmath computations of the calibration tests.

The exact minimal scales, epsilon-for-delta values and thresholds of the grids below are root finds in
70-digit arithmetic (tests/support/mpref.py); computing them on every run costs about a minute. They are
computed once by ``tools/precompute-references`` into ``tests/data/calibration_references.json`` (the
pattern of scipy's ``_precompute``), and read from there. ``tests/calibration/test_reference_data.py``
checks that the file covers exactly these grids and that a sample of its values is still what the
reference computes, so a change of the reference or of a grid cannot leave stale values behind.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import mpmath as mp

from . import mpref as R

PATH = Path(__file__).resolve().parent.parent / "data" / "calibration_references.json"
DIGITS = 45

#: The grid of test_minimal_scale_against_reference and test_epsilon_for_delta_against_reference.
FAMILY_KEYS = [("Laplace",), ("Logistic",), ("Gaussian",)] + [("Subbotin", r) for r in (1.001, 1.5, 3.0, 7.0, 20.0)]
EPSILONS = [1e-3, 0.1, 1.0, 20.0, 1000.0]
DELTAS = [0.5, 1e-6, 1e-15, 1e-300]
#: Orders and sensitivities between the grid points (test_minimal_scale_more_orders_and_sensitivities).
MORE_ORDERS = [1.25, 2.5, 4.0, 11.0, 16.0]
MORE_POINTS = [(0.05, 1e-4, 1.0), (3.0, 1e-30, 0.01), (0.5, 1e-100, 250.0), (12.0, 0.1, 1e-3)]
#: The points of the closed forms (Laplace and Logistic, sensitivity 1).
CLOSED_POINTS = [(e, d) for e in (1e-3, 0.05, 1.0, 5.0, 20.0, 700.0, 1000.0) for d in (0.4, 1e-4, 1e-12, 1e-40, 1e-300)]
#: epsilon_for_delta at these deltas and scales (sensitivity 1).
EFD_DELTAS = (0.3, 1e-6, 1e-15, 1e-300)
EFD_SCALES = (0.05, 1.0, 30.0)


def minimal_scale_points() -> list[tuple]:
    pts = [(k, e, d, 1.0) for k in FAMILY_KEYS for e in EPSILONS for d in DELTAS]
    pts += [(("Subbotin", r), e, d, s) for r in MORE_ORDERS for e, d, s in MORE_POINTS]
    pts += [(k, e, d, 1.0) for k in (("Laplace",), ("Logistic",)) for e, d in CLOSED_POINTS]
    return list(dict.fromkeys(pts))


def epsilon_for_delta_points() -> list[tuple]:
    return [(k, d, s, 1.0) for k in FAMILY_KEYS for d in EFD_DELTAS for s in EFD_SCALES]


#: The thresholds of test_library_threshold_against_reference (d, eps; none where the MLR-bounded
#: families have u = inf, eps >= d).
THRESHOLD_KEYS = [("Logistic",)] + [("Subbotin", r) for r in (1.001, 1.5, 3.0, 7.0, 20.0)]
THRESHOLD_SHIFTS = (1e-4, 0.01, 0.5, 1.0, 3.0)
THRESHOLD_EPSILONS = (1e-3, 0.1, 0.4, 2.0, 20.0)
#: The hockey-stick quadratures of test_lemma1_against_hockey_stick_quadrature.
HOCKEY_KEYS = [("Laplace",), ("Logistic",), ("Gaussian",), ("Subbotin", 3.0), ("Truncated", ("Laplace",), 4.0),
               ("Truncated", ("Subbotin", 1.5), 6.0)]
HOCKEY_POINTS = [(0.5, 1.0), (0.1, 3.0), (1.0, 0.7), (2.0, 0.4)]


def threshold_points() -> list[tuple]:
    return [(k, e, d) for k in THRESHOLD_KEYS for d in THRESHOLD_SHIFTS for e in THRESHOLD_EPSILONS
            if not (k[0] == "Logistic" and e >= d)]


def hockey_stick_points() -> list[tuple]:
    return [(k, e, s) for k in HOCKEY_KEYS for e, s in HOCKEY_POINTS]


def _threshold(key: tuple, eps: float, d: float) -> mp.mpf:
    """The untruncated threshold u of mpref.threshold at (eps, d), in 60 digits."""
    with mp.workdps(60):
        return R.threshold(R.family(key), R.X(eps), R.X(d), capped=False)


#: name -> (the reference function, its argument tuples).
TABLES = {
    "minimal_scale": (R.minimal_scale, minimal_scale_points),
    "epsilon_for_delta": (R.epsilon_for_delta, epsilon_for_delta_points),
    "threshold": (_threshold, threshold_points),
    "hockey_stick": (R.hockey_stick, hockey_stick_points),
}
#: How many values of each table test_reference_data.py recomputes (the quadratures are the slow ones).
SAMPLE = {"minimal_scale": 6, "epsilon_for_delta": 6, "threshold": 6, "hockey_stick": 2}


def entry_key(args: tuple) -> str:
    return repr(args)


def compute(name: str, args: tuple) -> str:
    """The reference value of ``name`` at ``args`` as a decimal string of DIGITS digits."""
    fn = TABLES[name][0]
    with mp.workdps(60):
        return mp.nstr(fn(*args), DIGITS, strip_zeros=False)


@functools.cache
def table(name: str) -> dict[str, str]:
    with open(PATH, encoding="utf-8") as fh:
        return json.load(fh)["tables"][name]


def value(name: str, *args) -> mp.mpf:
    """The reference of ``name`` at ``args``: precomputed for the points of the grids above (the file
    covers them all: tests/calibration/test_reference_data.py), computed now for any other point."""
    text = table(name).get(entry_key(args))
    return TABLES[name][0](*args) if text is None else mp.mpf(text)
