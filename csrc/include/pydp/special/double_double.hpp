// Double-double arithmetic: a value held as an unevaluated sum hi + lo of two doubles with |lo| <= ulp(hi)/2,
// about 106 bits of significand, for the few places where a result must be formed from a difference of
// nearly equal numbers (the gap below the Gaussian total variation in calibration/profile.hpp) or an
// exact square must be split (x^2 = hi + lo in special/normal.hpp).
//
// Why it is exact where it says so: two_sum (Knuth) and quick_two_sum (Dekker, |a| >= |b|) return the
// rounded sum and its rounding error exactly; two_prod returns the rounded product and its error exactly
// with one fma. dd_add, dd_mul and dd_div build on them (the "sloppy" add and the standard multiply and
// divide by a double of Hida, Li and Bailey's QD library, written here from the textbook algorithms):
// relative error a few times 2^-104. The fma must be a true fused multiply-add (std::fma is, in software
// if the CPU has none); the build turns off FMA contraction of ordinary expressions (-ffp-contract=off),
// which would otherwise break the error-free transformations.
//
// Checked by csrc/tests/test_special.cpp (two_sum and two_prod on cases with known exact errors,
// 3 (1/3) = 1 to 1e-31, the double-double total variation against 50-digit mpmath values to 1e-29) and
// through tests/ (the epsilon of mu-GDP just below the total variation against mpmath). No pybind11, no
// state.
#pragma once
#include <cmath>

namespace pydp::special {

struct DD {
    double hi, lo;
};

// a + b exactly as hi + lo, for |a| >= |b| (or a = 0).
inline DD quick_two_sum(double a, double b) noexcept {
    const double s = a + b;
    return {s, b - (s - a)};
}

// a + b exactly as hi + lo, any order.
inline DD two_sum(double a, double b) noexcept {
    const double s = a + b;
    const double bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
}

// a * b exactly as hi + lo (barring underflow of lo).
inline DD two_prod(double a, double b) noexcept {
    const double p = a * b;
    return {p, std::fma(a, b, -p)};
}

inline DD dd_add(DD a, DD b) noexcept {
    const DD s = two_sum(a.hi, b.hi);
    return quick_two_sum(s.hi, s.lo + a.lo + b.lo);
}

inline DD dd_mul(DD a, DD b) noexcept {
    const DD p = two_prod(a.hi, b.hi);
    return quick_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

inline DD dd_div(DD a, double b) noexcept {
    const double q = a.hi / b;
    const DD p = two_prod(q, b);
    return quick_two_sum(q, ((a.hi - p.hi) - p.lo + a.lo) / b);
}

}  // namespace pydp::special
