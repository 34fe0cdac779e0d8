"""The certified rounding bound of the PLD engine's FFT composition (csrc/include/pydp/accounting/pld.hpp,
``circular_compose``; derivation in docs/pld.md, "Floating point").

``pld_circular`` returns the circular composition of pmfs computed by FFT with a bound on the rounding
error of every sum of consecutive (circular) entries. The references are exact circular convolutions:
mpmath at 50 digits for the small cases, long double (64-bit significand, its own error ~1e-19 per
entry, far below the bounds ~1e-13) for the larger ones.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from pydp_core import _core

_acc = _core.accounting


def _exact_longdouble(parts, counts, n):
    cur = np.zeros(n, dtype=np.longdouble)
    cur[0] = 1
    for a, k in zip(parts, counts):
        for _ in range(k):
            nxt = np.zeros(n, dtype=np.longdouble)
            for i, v in enumerate(a):
                if v:
                    nxt += np.roll(cur, i) * np.longdouble(v)
            cur = nxt
    return cur


def _exact_mpmath(parts, counts, n):
    with mpmath.workdps(50):
        cur = [mpmath.mpf(0)] * n
        cur[0] = mpmath.mpf(1)
        for a, k in zip(parts, counts):
            for _ in range(k):
                nxt = [mpmath.mpf(0)] * n
                for i, v in enumerate(a):
                    if v:
                        v = mpmath.mpf(float(v))
                        for j in range(n):
                            nxt[(i + j) % n] += v * cur[j]
                cur = nxt
        return cur


def _worst_run_error(computed, exact):
    """Largest |sum of a circular run of consecutive entries of (computed - exact)| (long double)."""
    d = computed.astype(np.longdouble) - exact
    return max(float(np.max(np.abs(np.cumsum(np.roll(d, r))))) for r in range(d.size))


def _worst_run_error_mp(computed, exact):
    """The same with a 50-digit mpmath reference."""
    n = len(exact)
    with mpmath.workdps(50):
        diff = [mpmath.mpf(float(c)) - e for c, e in zip(computed, exact)]
        worst = mpmath.mpf(0)
        for r in range(n):
            s = mpmath.mpf(0)
            for t in range(n):
                s += diff[(r + t) % n]
                worst = max(worst, abs(s))
        return float(worst)


def _pmf(rng, length, power):
    a = rng.random(length) ** power
    return a / a.sum()


@pytest.mark.parametrize("n, k, length", [(16, 3, 5), (32, 2, 12)])
def test_bound_covers_mpmath_convolution(n, k, length):
    rng = np.random.default_rng(n + k)
    a = _pmf(rng, length, 3.0)
    b = a * 0.999
    re, im, bound = _acc.pld_circular([a], [b], [k], n)
    worst = max(_worst_run_error_mp(re, _exact_mpmath([a], [k], n)), _worst_run_error_mp(im, _exact_mpmath([b], [k], n)))
    assert 0.0 < worst <= bound
    assert bound < 1e-12


@pytest.mark.parametrize("n, counts, lengths", [(256, (5,), (40,)), (1024, (20,), (30,)), (4096, (100,), (50,)),
                                                 (512, (3, 7), (20, 60)), (256, (1,), (200,))])
def test_bound_covers_longdouble_convolution(n, counts, lengths):
    rng = np.random.default_rng(n)
    pess = [_pmf(rng, m, 4.0) for m in lengths]
    # The optimistic pmfs: other shapes, and sub-probability (as after dropped mass).
    opt = [_pmf(rng, m, 1.0) * 0.99 for m in lengths]
    re, im, bound = _acc.pld_circular(pess, opt, list(counts), n)
    worst = max(_worst_run_error(re, _exact_longdouble(pess, counts, n)),
                _worst_run_error(im, _exact_longdouble(opt, counts, n)))
    assert 0.0 < worst <= bound
    # A worst-case bound, but not a vacuous one: within ~1e4 of the observed error here.
    assert bound < 1e4 * worst + 1e-13


def test_bound_with_wide_dynamic_range():
    # Masses from 1 to 1e-300: the small ones are below the bound, which must still hold for all runs.
    n = 128
    a = np.array([10.0 ** (-300 * i / 39) for i in range(40)])
    a /= a.sum()
    re, im, bound = _acc.pld_circular([a], [a], [6], n)
    exact = _exact_longdouble([a], [6], n)
    assert _worst_run_error(re, exact) <= bound
    assert _worst_run_error(im, exact) <= bound


def test_bound_bad_input():
    a = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="power of two"):
        _acc.pld_circular([a], [a], [2], 12)
    with pytest.raises(ValueError, match="one length"):
        _acc.pld_circular([a], [], [2], 16)
    with pytest.raises(ValueError, match="longer than the transform"):
        _acc.pld_circular([np.full(8, 0.125)], [a], [2], 4)
