// Standard normal distribution in log space: erfcx, ndtr, log_ndtr, ndtri, and the log Mills ratio.
//
// Everything in the lower tail goes through erfcx(t) = exp(t^2) erfc(t), which is smooth and of moderate
// size, while the large factor exp(-x^2/2) is formed from an exact split x^2 = hi + lo (fma). So Phi(x)
// keeps a few-ulp relative accuracy down to the underflow threshold and log Phi(x) down to x = -1e150;
// the rounding of t = -x/sqrt(2) hardly matters because d log erfcx / d log t is about -1.
// Tested against mpmath in tests/special/test_special.py.
#pragma once
#include <cmath>
#include <limits>

#include "pydp/special/constants.hpp"
#include "pydp/special/double_double.hpp"
#include "pydp/special/logexp.hpp"

namespace pydp::special {

// erfcx(t) = exp(t^2) erfc(t) for t >= 0.
inline double erfcx_nonneg(double t) noexcept {
    if (t >= 6.0) {
        // Continued fraction erfc(t) = exp(-t^2)/sqrt(pi) / (t + (1/2)/(t + 1/(t + (3/2)/(t + ...)))),
        // evaluated backwards. Checked against mpmath: 16 terms reach 1e-17 at t = 6, 12 at t >= 8.
        const int terms = t >= 8.0 ? 12 : 16;
        double tail = t;
        for (int k = terms; k >= 1; --k) tail = t + (0.5 * k) / tail;
        return kInvSqrtPi / tail;
    }
    const DD sq = two_prod(t, t);
    return std::exp(sq.hi) * (1.0 + sq.lo) * std::erfc(t);  // exp(lo) = 1 + lo to double precision
}

inline double ndtr(double x) noexcept;

// log Phi(x).
inline double log_ndtr(double x) noexcept {
    if (std::isnan(x)) return x;
    if (x >= -1.0) return std::log1p(-ndtr(-x));
    if (x < -1e150) return -std::numeric_limits<double>::infinity();
    const auto [hi, lo] = two_prod(x, x);
    return std::log(0.5 * erfcx_nonneg(-x * kSqrt1_2)) - 0.5 * hi - 0.5 * lo;
}

// Phi(x), the standard normal CDF.
inline double ndtr(double x) noexcept {
    if (std::isnan(x)) return x;
    if (x >= -1.0) {
        if (x <= 1.0) return 0.5 * std::erfc(-x * kSqrt1_2);
        if (x > 40.0) return 1.0;  // 1 - Phi(x) < 2^-53 / 2 (and x = +inf would give inf * 0 below)
        const auto [hi, lo] = two_prod(x, x);
        return 1.0 - 0.5 * erfcx_nonneg(x * kSqrt1_2) * std::exp(-0.5 * hi) * (1.0 - 0.5 * lo);
    }
    if (x < -37.5) return x < -40.0 ? 0.0 : std::exp(log_ndtr(x));  // subnormal range
    const auto [hi, lo] = two_prod(x, x);
    return 0.5 * erfcx_nonneg(-x * kSqrt1_2) * std::exp(-0.5 * hi) * (1.0 - 0.5 * lo);
}

// log phi(x), the log density.
inline double log_npdf(double x) noexcept { return -0.5 * x * x - kLogSqrt2Pi; }

// log of the Mills ratio R(y) = (1 - Phi(y)) / phi(y) for y >= 0, without forming the tiny tail.
inline double log_mills_normal(double y) noexcept {
    return kLogSqrtPiOver2 + std::log(erfcx_nonneg(y * kSqrt1_2));
}

// The x <= 0 with log Phi(x) = log_q, log_q <= log(1/2); log_q may lie far below the double range of q.
inline double ndtri_lower_log(double log_q) noexcept {
    // Abramowitz & Stegun 26.2.23 (absolute error < 4.5e-4) as the starting point, then Newton.
    const double t = kSqrt2 * std::sqrt(-log_q);
    double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                         (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
    for (int i = 0; i < 30; ++i) {
        const double lp = log_ndtr(x);
        // d log Phi / dx = phi / Phi: 1 / R(-x) by the Mills ratio for x < -1, where log phi - log Phi
        // would cancel two values of size x^2 / 2
        const double slope = x < -1.0 ? std::exp(-log_mills_normal(-x)) : std::exp(log_npdf(x) - lp);
        const double step = (lp - log_q) / slope;
        x -= step;
        if (x > 0.0) x = 0.0;
        if (std::fabs(step) <= 2e-16 * std::fabs(x) + 1e-300) break;
    }
    return x;
}

// Phi^{-1}(p); -inf at 0, +inf at 1, NaN outside [0, 1].
inline double ndtri(double p) noexcept {
    if (!(p >= 0.0 && p <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
    if (p == 0.0) return -std::numeric_limits<double>::infinity();
    if (p == 1.0) return std::numeric_limits<double>::infinity();
    if (p == 0.5) return 0.0;
    if (p < 0.5) return ndtri_lower_log(std::log(p));
    return -ndtri_lower_log(std::log1p(-p));  // 1 - p is exact for p >= 1/2
}

}  // namespace pydp::special
