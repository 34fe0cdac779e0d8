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
// a sum of two non-negative terms (closed form; derivation in docs/discrete.md).
//
// discrete Gaussian, P(y) = exp(-y^2 / (2 s2)) / Z. L(y) = (k^2 - 2 k y)/(2 s2) exceeds eps on y <= m,
// m the largest integer below k/2 - eps s2 / k, and delta = sum_{y <= m} P(y) (-expm1(eps - L(y))),
// summed term by term in log-scaled form until the remaining tail is below 2^-66 of the sum. The
// normaliser is Z = sqrt(2 pi s2) (1 + 2 sum_j exp(-2 pi^2 s2 j^2)) (Poisson summation), summed directly
// for small s2. Cost: about 10 sqrt(s2) terms. Tested against 50-digit mpmath in tests/test_discrete_profile.py.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace pydp::discrete {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kLogTailCut = -46.0;  // stop when the remaining tail is below e^-46 of the sum

// log(e^a + e^b) without overflow.
inline double log_add(double a, double b) noexcept {
    if (a == -std::numeric_limits<double>::infinity()) return b;
    if (b == -std::numeric_limits<double>::infinity()) return a;
    return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

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
    else lsum = log_add(std::log(a), log_q + std::log(b));
    return lsum - std::log1p(std::exp(log_q));
}

// log P(Y <= m) for the discrete Laplace with parameter t = 1/inv_t.
inline double dlaplace_log_cdf(double m, double inv_t) {
    // P(Y <= m) = q^(-m) / (1 + q) for m < 0; 1 - q^(m+1)/(1 + q) for m >= 0.
    const double log1q = std::log1p(std::exp(-inv_t));
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

// log sum_{y <= m} exp(-y^2/(2 s2)) * w(y), where w(y) = -expm1(eps - (k^2 - 2 k y)/(2 s2)) if k > 0
// (the hockey-stick weight) and w = 1 if k == 0. Terms are summed from y = m downwards, scaled by the
// largest so far, and the loop stops once y <= 0 and a geometric bound on the rest is below e^-46 of the sum.
inline double dgauss_log_weighted_sum(double s2, double m, double eps, double k) {
    const double neg_inf = -std::numeric_limits<double>::infinity();
    const double inv2s2 = 0.5 / s2;
    double ref = neg_inf;  // log of the scale
    double acc = 0.0;      // sum of exp(log term - ref)
    const double y_stop = -9.0e15;
    for (double y = m; y > y_stop; y -= 1.0) {
        const double lp = -y * y * inv2s2;
        double lt = lp;
        if (k > 0) {
            const double w = -std::expm1(eps - (k * k - 2.0 * k * y) * inv2s2);
            if (!(w > 0)) continue;  // y at the boundary L(y) = eps (rounding): contributes 0
            lt += std::log(w);
        }
        if (lt > ref) {
            acc = acc * std::exp(ref - lt) + 1.0;
            ref = lt;
        } else {
            acc += std::exp(lt - ref);
        }
        if (y <= 0) {
            // rest <= P(y) r / (1 - r) with r = exp(-(2|y| + 1)/(2 s2)) the decreasing ratio of successive terms
            const double lr = -(2.0 * std::fabs(y) + 1.0) * inv2s2;
            const double log_rest = lp + lr - std::log(-std::expm1(lr));
            if (log_rest < ref + std::log(acc) + kLogTailCut) break;
        }
    }
    if (acc == 0) return neg_inf;
    return ref + std::log(acc);
}

// log P(Y <= m) for the discrete Gaussian with variance parameter s2.
inline double dgauss_log_cdf(double m, double s2) {
    const double lz = dgauss_log_normaliser(s2);
    if (m < 0) return dgauss_log_weighted_sum(s2, m, 0.0, 0.0) - lz;
    // P(Y <= m) = 1 - P(Y <= -(m + 1)) by symmetry
    return std::log1p(-std::exp(dgauss_log_weighted_sum(s2, -(m + 1), 0.0, 0.0) - lz));
}

// log delta(eps) for the discrete Gaussian with variance parameter s2 and integer shift k >= 1.
inline double dgauss_log_delta(double eps, double s2, double k) {
    if (!(k >= 1) || !(eps >= 0)) throw std::invalid_argument("dgauss_log_delta: needs eps >= 0, k >= 1");
    const double lz = dgauss_log_normaliser(s2);
    if (std::isinf(eps)) return -std::numeric_limits<double>::infinity();
    const double c = 0.5 * k - eps * s2 / k;  // L(y) > eps iff y < c
    double m = std::ceil(c) - 1.0;
    if (m < -4.0e15) return -std::numeric_limits<double>::infinity();
    return dgauss_log_weighted_sum(s2, m, eps, k) - lz;
}

}  // namespace pydp::discrete
