// Logarithms of sums and differences of exponentials, formed without overflow or cancellation:
//   log1pexp(t)     = log(1 + e^t),
//   logexpm1(z)     = log(e^z - 1) for z > 0,
//   log1mexp(x)     = log(1 - e^x) for x <= 0,
//   log_add_exp(a, b) = log(e^a + e^b).
//
// Why they are accurate: each uses, on each side of a switch point, the form in which no intermediate
// overflows and no two nearly equal numbers are subtracted. log(1 + e^t) = t + log1p(e^-t) for t > 0 (e^t
// would overflow; e^-t <= 1 is exact enough for log1p); log(e^z - 1) = z + log1p(-e^-z) for large z;
// log(1 - e^x) = log(-expm1(x)) near 0 and log1p(-e^x) below -log 2 (Maechler 2012), so the result keeps
// its relative accuracy at both ends; log_add_exp factors out the larger exponent. Every branch is within a
// few ulps; the switch points only choose between forms of equal accuracy, so logexpm1 takes its switch
// point as a parameter where callers historically chose different ones (their results stay bit for bit
// what they were).
//
// Checked by csrc/tests/test_special.cpp (against direct evaluation where that is safe, on both sides of
// each switch point, and at the infinities), and through their users against the mpmath references in
// tests/ (log_ndtr, the incomplete gamma, the privacy profiles, the RDP conversions). No pybind11, no state.
#pragma once
#include <cmath>
#include <limits>

#include "pydp/special/constants.hpp"

namespace pydp::special {

// log(1 + e^t) without overflow.
inline double log1pexp(double t) noexcept { return t > 0.0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// log(e^z - 1) for z > 0: z + log1p(-e^-z) above `split`, log(expm1(z)) at or below it (both accurate for
// z >= ~0.7; expm1 overflows beyond ~709.78, so split must lie below that).
inline double logexpm1(double z, double split = 30.0) noexcept {
    return z > split ? z + std::log1p(-std::exp(-z)) : std::log(std::expm1(z));
}

// log(1 - e^x) for x <= 0 (Maechler 2012): log(-expm1(x)) near 0, log1p(-exp(x)) below -log 2, so the
// result keeps its relative accuracy at both ends (1 - e^x close to 1 included).
inline double log1mexp(double x) noexcept { return x > -kLn2 ? std::log(-std::expm1(x)) : std::log1p(-std::exp(x)); }

// log(e^a + e^b) without overflow; -inf terms drop out.
inline double log_add_exp(double a, double b) noexcept {
    if (a == -std::numeric_limits<double>::infinity()) return b;
    if (b == -std::numeric_limits<double>::infinity()) return a;
    return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

}  // namespace pydp::special
