// Mathematical constants shared by the kernels: pi and the roots and logarithms built from it, log 2,
// e, and the two-part split of 2 pi used for exact argument reduction.
//
// Each constant is written with 20 or more significant digits, so the compiler rounds it once to the
// nearest double (a correctly rounded literal, not a value computed at run time from another rounded
// constant); kPiLong carries pi to long double precision for the FFT's twiddle factors. The split
// kTwoPiHi + kTwoPiLo equals 2 pi to about 2^-106 relative (Cody-Waite: kTwoPiHi = double(2 pi), kTwoPiLo
// the double nearest to the remainder), so k * kTwoPiHi and k * kTwoPiLo subtracted by fma reduce
// large angles without losing digits (manifolds/geometry.hpp, wrap_angle).
//
// Checked against mpmath at 50 digits: each literal rounds to the double nearest to its exact value, and
// kTwoPiLo to the double nearest to 2 pi - kTwoPiHi. The functions built on them are tested against
// mpmath references in tests/ (special functions, privacy profiles, manifold distances). No pybind11,
// no state: embeddable as it is.
#pragma once

namespace pydp::special {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr long double kPiLong = 3.141592653589793238462643383279502884L;
inline constexpr double kTwoPiHi = 6.28318530717958623200;     // double(2 pi)
inline constexpr double kTwoPiLo = 2.44929359829470635446e-16;  // 2 pi - kTwoPiHi
inline constexpr double kSqrt2 = 1.4142135623730951;             // sqrt 2
inline constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1 / sqrt 2
inline constexpr double kSqrtPiOver2 = 1.25331413731550025121;  // sqrt(pi / 2)
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
inline constexpr double kInvSqrtPi = 0.56418958354775628695;    // 1 / sqrt(pi)
inline constexpr double kLogSqrt2Pi = 0.91893853320467274178;    // log sqrt(2 pi)
inline constexpr double kLogSqrtPiOver2 = 0.22579135264472743236;  // log sqrt(pi / 2)
inline constexpr double kLn2 = 0.69314718055994530942;          // log 2
inline constexpr double kE = 2.718281828459045;                  // e

}  // namespace pydp::special
