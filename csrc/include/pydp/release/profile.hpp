// Exact privacy profiles of the discrete Laplace and discrete Gaussian mechanisms on the integers.
//
// For an integer shift k >= 1 (the sensitivity in grid steps) and a noise law P on Z, the mechanism is
// (epsilon, delta)-DP for that shift iff delta >= sum_y max(0, P(y) - e^eps P(y - k)) (the hockey-stick
// divergence; both distributions are symmetric and log-concave, so the shift -k gives the same value and
// the profile increases with k). Every term of the sum below is non-negative, so nothing cancels.
//
// discrete Laplace, P(y) = (1 - q)/(1 + q) q^|y|, q = exp(-1/t). The privacy loss of y is
// L(y) = (|y - k| - |y|)/t; it exceeds eps on y <= m with m = ceil((k - eps t)/2) - 1, and
//     delta = [-expm1(eps - (k - m)/t) - q expm1(-m/t)] / (1 + q)     (0 when eps >= k/t),
// a sum of two non-negative terms (closed form; derivation in docs/release.md).
//
// discrete Gaussian, P(y) = exp(-y^2 / (2 s2)) / Z. L(y) = (k^2 - 2 k y)/(2 s2) exceeds eps on y <= m,
// m the largest integer below k/2 - eps s2 / k, and delta = sum_{y <= m} P(y) (-expm1(eps - L(y))),
// summed term by term in log-scaled form until the remaining tail is below e^-46 of the sum, or, for
// large s2, by the Euler-Maclaurin formula around the continuous integral. The normaliser is
// Z = sqrt(2 pi s2) (1 + 2 sum_j exp(-2 pi^2 s2 j^2)) (Poisson summation), summed directly for small s2.
// Cost: at most about 5e4 terms (2e6 in a corner, see dgauss_log_sum). Tested against 50-digit mpmath
// in tests/release/test_discrete_profile.py.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "pydp/special/constants.hpp"
#include "pydp/special/logexp.hpp"
#include "pydp/special/normal.hpp"

namespace pydp::release {

using special::kPi;
inline constexpr double kLogTailCut = -46.0;  // stop when the remaining tail is below e^-46 of the sum

// ---------------------------------------------------------------------------------------------------
// Discrete Laplace
// ---------------------------------------------------------------------------------------------------
// log delta(eps) for the discrete Laplace with parameter t = 1 / inv_t and integer shift k >= 1.
inline double dlaplace_log_delta(double eps, double inv_t, double k) {
    if (!(inv_t > 0) || !(k >= 1) || !(eps >= 0) || std::isinf(inv_t))
        throw std::invalid_argument("dlaplace_log_delta: needs eps >= 0, t > 0, k >= 1");
    const double loss_max = k * inv_t;  // the largest privacy loss, k/t
    if (eps >= loss_max) return -std::numeric_limits<double>::infinity();
    // m = ceil((k - eps t)/2) - 1 >= 0 (largest integer strictly below (k - eps t)/2)
    const double half = 0.5 * (k - eps / inv_t);
    double m = std::ceil(half) - 1.0;
    if (m < 0) m = 0;
    const double a = -std::expm1(eps - (k - m) * inv_t);   // >= 0 since (k - m)/t >= eps
    const double b = -std::expm1(-m * inv_t);               // >= 0, 0 when m = 0
    const double log_q = -inv_t;
    double lsum;
    if (b == 0) lsum = std::log(a);
    else lsum = special::log_add_exp(std::log(a), log_q + std::log(b));
    return lsum - special::log1pexp(log_q);
}

// log P(Y <= m) for the discrete Laplace with parameter t = 1/inv_t.
inline double dlaplace_log_cdf(double m, double inv_t) {
    // P(Y <= m) = q^(-m) / (1 + q) for m < 0; 1 - q^(m+1)/(1 + q) for m >= 0.
    const double log1q = special::log1pexp(-inv_t);
    if (m < 0) return m * inv_t - log1q;
    return std::log1p(-std::exp(-(m + 1) * inv_t - log1q));
}

// ---------------------------------------------------------------------------------------------------
// Discrete Gaussian
// ---------------------------------------------------------------------------------------------------
// log Z, Z = sum_y exp(-y^2 / (2 s2)).
inline double dgauss_log_normaliser(double s2) {
    if (!(s2 > 0) || std::isinf(s2)) throw std::invalid_argument("dgauss: sigma^2 must be positive and finite");
    if (s2 >= 1.0) {
        // Poisson summation: Z = sqrt(2 pi s2) * (1 + 2 sum_j exp(-2 pi^2 s2 j^2)); terms fall below 1e-17 by j = 3.
        double corr = 0;
        for (int j = 1; j <= 4; ++j) corr += std::exp(-2.0 * kPi * kPi * s2 * j * j);
        return 0.5 * std::log(2.0 * kPi * s2) + std::log1p(2.0 * corr);
    }
    double z = 1.0;  // y = 0
    for (int y = 1; y < 64; ++y) {
        const double term = std::exp(-0.5 * y * y / s2);
        z += 2.0 * term;
        if (term < 1e-20 * z) break;
    }
    return std::log(z);
}

// The largest y worth summing: terms above y = sqrt(1400 s2) have a Gaussian factor below e^-700, against
// a y = 0 term of at least 1 - e^{-k / s2} (L(0) - eps >= k / s2 when m >= 1): dropping them changes
// nothing in double precision, bounds the work, and the sum starts where its first factor is still a
// normal double.
inline double dgauss_top(double s2) noexcept { return std::floor(std::sqrt(1400.0 * s2)); }

// log sum_{y <= m} exp(-y^2/(2 s2)) * w(y), where w(y) = -expm1(eps - (k^2 - 2 k y)/(2 s2)) if k > 0
// (the hockey-stick weight, in (0, 1]) and w = 1 if k == 0. Terms are scaled by exp(-y0^2/(2 s2)),
// y0 = min(m, 0), the largest Gaussian factor on y <= m, and summed from y = m downwards; the caller
// keeps m <= sqrt(1400 s2), so the first factor is at least e^-700 (no underflow before the bulk of the
// sum). The Gaussian factor and exp(eps - L(y)) follow exact two-term recurrences, re-anchored with exp()
// every 32 steps (so their relative error stays below 1e-14); w is formed as 1 - exp(eps - L) only where
// that exponential is below 1/2, and by expm1 elsewhere (no cancellation). The loop stops once y <= 0 and
// a geometric bound on the rest is below e^-46 of the sum (checked every 32 terms), or once the Gaussian
// factor has underflowed on y <= 0 (every later term is smaller).
inline double dgauss_log_weighted_sum(double s2, double m, double eps, double k) {
    const double neg_inf = -std::numeric_limits<double>::infinity();
    m = std::fmin(m, dgauss_top(s2));
    const double inv2s2 = 0.5 / s2;
    const double y0 = m < 0 ? m : 0.0;
    const double ref = -y0 * y0 * inv2s2;
    const double slope = k * 2.0 * inv2s2;  // L(y - 1) - L(y) = k / s2
    double acc = 0.0;
    double g = 0, ratio = 0, v = 0, v_step = 0;
    const double ratio_step = std::exp(-2.0 * inv2s2);
    const double y_stop = -9.0e15;
    std::int64_t since = 0;
    for (double y = m; y > y_stop; y -= 1.0, ++since) {
        if (since % 32 == 0) {  // re-anchor the recurrences exactly: g = exp(-(y^2 - y0^2) / (2 s2))
            g = std::exp(-(y - y0) * (y + y0) * inv2s2);
            ratio = std::exp((2.0 * y - 1.0) * inv2s2);  // g(y - 1) / g(y)
            if (k > 0) {
                v = std::exp(eps - (k * k - 2.0 * k * y) * inv2s2);
                v_step = std::exp(-slope);
            }
        }
        double term = g;
        if (k > 0) {
            const double w = v < 0.5 ? 1.0 - v : -std::expm1(eps - (k * k - 2.0 * k * y) * inv2s2);
            term = w > 0 ? g * w : 0.0;  // w <= 0 only at the boundary L(y) = eps (rounding): contributes 0
            v *= v_step;
        }
        acc += term;
        if (y <= 0 && g == 0) break;
        if (since % 32 == 31 && y <= 0 && acc > 0) {
            // rest <= g(y) r / (1 - r) with r = exp(-(2|y| + 1)/(2 s2)) the decreasing ratio of successive terms
            const double lr = -(2.0 * std::fabs(y) + 1.0) * inv2s2;
            const double log_rest = std::log(g) + lr - std::log(-std::expm1(lr));
            if (log_rest < std::log(acc) + kLogTailCut) break;
        }
        g *= ratio;
        ratio *= ratio_step;
    }
    if (acc == 0) return neg_inf;
    return ref + std::log(acc);
}

// The same sum by the midpoint Euler-Maclaurin formula, for large s2. With G(x) = exp(-x^2/(2 s2)),
// h(x) = G(x) - e^eps G(x - k) (so that h(y) = G(y) w(y); k = 0: h = G) and b = m + 1/2,
//     sum_{y <= m} h(y) = int_{-inf}^b h + sum_{j=1..4} c_j h^(2j-1)(b) + R,
// c_j = B_2j(1/2)/(2j)! = -1/24, 7/5760, -31/967680, 127/154828800, with
// int_{-inf}^b h = sqrt(2 pi s2) [Phi(b/s) - e^eps Phi((b - k)/s)] formed in log space (no cancellation:
// it is the continuous hockey-stick integral, largest at the threshold c, and b is within 1/2 of c) and
// G^(n)(x) = (-1/s)^n He_n(x/s) G(x). The corrections scale like (max(|b|, s)/s2)^(2j); the caller uses
// this form only for s2 >= 2^20 and |b| <= s2/1024, where the first omitted term is below 1e-24 of the sum.
// Returns NaN if the corrected sum is not positive (then the caller sums directly).
inline double dgauss_log_weighted_sum_em(double s2, double m, double eps, double k) {
    const double s = std::sqrt(s2);
    const double b = m + 0.5;
    const double la = special::log_ndtr(b / s);
    double log_int;
    if (k > 0) {
        const double lb = special::log_ndtr((b - k) / s);
        const double x = eps + lb - la;
        if (!(x < 0)) return std::numeric_limits<double>::quiet_NaN();
        log_int = la + special::log1mexp(x);
    } else {
        log_int = la;
    }
    log_int += 0.5 * std::log(2.0 * kPi * s2);
    static constexpr double c[4] = {-1.0 / 24.0, 7.0 / 5760.0, -31.0 / 967680.0, 127.0 / 154828800.0};
    // He_n at z1 = b/s and z2 = (b - k)/s, n = 0..7
    const double z1 = b / s, z2 = (b - k) / s;
    double h1[8], h2[8];
    h1[0] = 1.0; h1[1] = z1; h2[0] = 1.0; h2[1] = z2;
    for (int n = 1; n < 7; ++n) {
        h1[n + 1] = z1 * h1[n] - n * h1[n - 1];
        h2[n + 1] = z2 * h2[n] - n * h2[n - 1];
    }
    const double r1 = std::exp(-0.5 * z1 * z1 - log_int);                        // G(b) / I
    const double r2 = k > 0 ? std::exp(eps - 0.5 * z2 * z2 - log_int) : 0.0;     // e^eps G(b - k) / I
    double corr = 0.0, spow = 1.0 / s;  // (1/s)^(2j-1)
    for (int j = 1; j <= 4; ++j) {
        const int n = 2 * j - 1;
        corr += c[j - 1] * (-spow) * (h1[n] * r1 - h2[n] * r2);  // (-1/s)^n with n odd
        spow /= s2;
    }
    if (!(corr > -1.0)) return std::numeric_limits<double>::quiet_NaN();
    return log_int + std::log1p(corr);
}

// Chooses between the two: Euler-Maclaurin for s2 >= 2^20 and |m + 1/2| <= s2/1024, else the direct
// sum, whose length is then at most about 50 sqrt(s2) <= 5e4 (s2 < 2^20), 46 s2/|m| <= 5e4 (m < 0) or
// 50 sqrt(s2) <= 2e6 (0 < s2/1024 < m <= dgauss_top(s2) ~ 37.4 sqrt(s2), only for s2 < 1.5e9).
inline double dgauss_log_sum(double s2, double m, double eps, double k) {
    m = std::fmin(m, dgauss_top(s2));
    if (s2 >= 1048576.0 && std::fabs(m + 0.5) <= s2 / 1024.0) {
        const double v = dgauss_log_weighted_sum_em(s2, m, eps, k);
        if (!std::isnan(v)) return v;
    }
    return dgauss_log_weighted_sum(s2, m, eps, k);
}

// log P(Y <= m) for the discrete Gaussian with variance parameter s2.
inline double dgauss_log_cdf(double m, double s2) {
    const double lz = dgauss_log_normaliser(s2);
    if (m < 0) return dgauss_log_sum(s2, m, 0.0, 0.0) - lz;
    // P(Y <= m) = 1 - P(Y <= -(m + 1)) by symmetry
    return std::log1p(-std::exp(dgauss_log_sum(s2, -(m + 1), 0.0, 0.0) - lz));
}

// log delta(eps) for the discrete Gaussian with variance parameter s2 and integer shift k >= 1.
// direct = true forces the term-by-term sum (for tests of the Euler-Maclaurin form).
inline double dgauss_log_delta(double eps, double s2, double k, bool direct = false) {
    if (!(k >= 1) || !(eps >= 0)) throw std::invalid_argument("dgauss_log_delta: needs eps >= 0, k >= 1");
    const double lz = dgauss_log_normaliser(s2);
    if (std::isinf(eps)) return -std::numeric_limits<double>::infinity();
    const double c = 0.5 * k - eps * s2 / k;  // L(y) > eps iff y < c
    double m = std::ceil(c) - 1.0;
    if (m < -4.0e15) return -std::numeric_limits<double>::infinity();
    return (direct ? dgauss_log_weighted_sum(s2, m, eps, k) : dgauss_log_sum(s2, m, eps, k)) - lz;
}

}  // namespace pydp::release
