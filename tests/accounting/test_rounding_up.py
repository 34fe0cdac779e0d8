"""Composed and derived privacy parameters are rounded up, never to nearest: each result of
``pydp_core.accounting.rounding`` is the smallest double at or above the exact value (checked in rational
arithmetic), and composition and advanced composition return parameters at or above a 50-digit reference."""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pydp_core as dp
from pydp_core.accounting import rounding
from pydp_core.accounting.composition import advanced_composition

finite = st.floats(min_value=0.0, max_value=1e30, allow_nan=False, allow_infinity=False)


def _is_smallest_above(result: float, exact: Fraction) -> bool:
    return Fraction(result) >= exact and (result == 0.0 or Fraction(math.nextafter(result, -math.inf)) < exact)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, min_size=1, max_size=8))
def test_sum_up_is_the_smallest_double_above_the_sum(values):
    assert _is_smallest_above(rounding.sum_up(values), sum(map(Fraction, values), Fraction(0)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1e150), min_size=1, max_size=8))
def test_norm_up_is_the_smallest_double_above_the_norm(values):
    result = rounding.norm_up(values)
    square = sum((Fraction(v) ** 2 for v in values), Fraction(0))
    assert Fraction(result) ** 2 >= square
    assert result == 0.0 or Fraction(math.nextafter(result, 0.0)) ** 2 < square


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.0, max_value=1e300), st.floats(min_value=1e-300, max_value=1e300))
def test_ratio_up_is_the_smallest_double_above_the_quotient(num, den):
    result = rounding.ratio_up(num, den)
    if math.isfinite(result) and result > 0.0 and num / den > 2.0 ** -1022:  # normal range: one double
        assert _is_smallest_above(result, Fraction(num) / Fraction(den))
    elif math.isfinite(result):
        assert Fraction(result) >= Fraction(num) / Fraction(den)
    else:
        assert Fraction(num) / Fraction(den) > Fraction(1.7976931348623157e308)


def test_the_cases_that_round_to_nearest_downward_are_rounded_up():
    # Each of these is below the exact value when rounded to nearest (fsum, hypot): the old results.
    down = [(a, b) for a in (0.1, 0.3, 0.7, 1.1) for b in (0.2, 0.6, 0.9, 1e-17)
            if Fraction(math.fsum([a, b])) < Fraction(a) + Fraction(b)]
    assert down, "the grid should hold a sum that rounds down to nearest"
    for a, b in down:
        assert dp.compose([dp.PureDP(a), dp.PureDP(b)]).epsilon > math.fsum([a, b])
    assert dp.compose([dp.GDP(0.3), dp.GDP(0.4)]).mu == math.nextafter(0.5, 1.0)  # 0.3^2 + 0.4^2 > 1/4 in doubles
    assert rounding.up(Fraction(1, 3)) == math.nextafter(1 / 3, 1.0)
    assert rounding.up(Fraction(10) ** 400) == math.inf


@pytest.mark.parametrize("eps, k, delta, delta_prime", [
    (0.1, 100, 1e-8, 1e-6), (1e-3, 10**6, 1e-12, 1e-9), (0.5, 7, 0.0, 0.3), (2.0, 3, 1e-3, 1e-300),
])
def test_advanced_composition_is_never_below_its_formula(eps, k, delta, delta_prime):
    mpmath.mp.dps = 50
    e = mpmath.mpf(eps)
    exact_eps = e * mpmath.sqrt(2 * k * mpmath.log(1 / mpmath.mpf(delta_prime))) + k * e * mpmath.expm1(e)
    exact_delta = min(mpmath.mpf(1), k * mpmath.mpf(delta) + mpmath.mpf(delta_prime))
    out = advanced_composition(dp.ApproxDP(eps, delta), k, delta_prime=delta_prime)
    assert mpmath.mpf(out.epsilon) >= exact_eps
    assert mpmath.mpf(out.epsilon) <= exact_eps * (1 + mpmath.mpf(2) ** -47)
    assert mpmath.mpf(out.delta) >= exact_delta
    assert Fraction(out.delta) == min(Fraction(1), rounding.up(k * Fraction(delta) + Fraction(delta_prime)))


@pytest.mark.parametrize("eps, delta, rate", [(1.0, 1e-6, 0.01), (1e-8, 1e-12, 0.3), (30.0, 0.1, 1e-6), (0.7, 0.3, 0.999)])
def test_subsampled_approx_dp_is_never_below_its_formula(eps, delta, rate):
    from pydp_core.accounting.subsampling import subsample

    mpmath.mp.dps = 50
    out = subsample(dp.ApproxDP(eps, delta), rate)
    exact_eps = mpmath.log1p(mpmath.mpf(rate) * mpmath.expm1(mpmath.mpf(eps)))
    assert exact_eps <= mpmath.mpf(out.epsilon) <= exact_eps * (1 + mpmath.mpf(2) ** -49)
    assert Fraction(out.delta) >= Fraction(rate) * Fraction(delta)
    assert Fraction(math.nextafter(out.delta, 0.0)) < Fraction(rate) * Fraction(delta)
