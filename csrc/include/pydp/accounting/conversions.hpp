// Conversions between privacy definitions that sit in optimisers' inner loops (papers 003 and 004).
//
// - gdp_epsilon / gdp_log_delta: the exact privacy profile of the Gaussian mechanism, i.e. of mu-GDP
//   (Balle and Wang 2018; paper 004 Corollary 14). delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu),
//   evaluated and inverted in log space by the calibration core (csrc/include/pydp/calibration/profile.hpp):
//   psi = mu is the standardised shift D / sigma.
// - rdp_to_epsilon: the three (alpha, rho)-RDP -> (eps, delta)-DP conversions of paper 004:
//     Mironov (Corollary 11):    eps = rho + log(1/delta) / (alpha - 1)
//     Asoodeh (Corollary 12):    eps = rho + log(1 - delta)                               if alpha delta >= 1
//                                eps = min{rho - log(delta / zeta) / (alpha - 1),
//                                          log(1 + (e^{(alpha-1) rho} - 1) / (alpha delta)) / (alpha - 1)}  else,
//                                zeta = (1/alpha) (1 - 1/alpha)^(alpha - 1)
//     Balle et al. 2020 (Corollary 13): eps = rho + log((alpha-1)/alpha) - (log delta + log alpha) / (alpha - 1)
//   SPEC-NOTES: equation (6.5)'s second case holds for 0 < alpha delta < 1. Results are clamped at 0
//   ((eps, delta)-DP for eps < 0 implies (0, delta)-DP). Every term is formed without overflow:
//   log(e^z - 1) = z + log(-expm1(-z)) and log(1 + e^t) = t + log1p(e^-t) for t > 0.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "pydp/calibration/profile.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/special/normal.hpp"

namespace pydp::accounting {

enum class RdpMethod : int { Mironov = 0, Asoodeh = 1, Balle2020 = 2 };

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// log(1 + e^t) without overflow.
inline double log1pexp(double t) noexcept { return t > 0.0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// log(e^z - 1) for z > 0.
inline double logexpm1(double z) noexcept { return z > 30.0 ? z + std::log1p(-std::exp(-z)) : std::log(std::expm1(z)); }

// eps such that (alpha, rho)-RDP implies (eps, delta)-DP; NaN for arguments outside the domain
// (alpha <= 1, rho < 0, delta outside (0, 1)); the Python layer rejects those first.
inline double rdp_to_epsilon(double alpha, double rho, double delta, RdpMethod method) noexcept {
    if (!(alpha > 1.0) || !(rho >= 0.0) || !(delta > 0.0) || !(delta < 1.0)) return kNaN;
    if (std::isinf(rho)) return kInf;
    if (std::isinf(alpha)) return std::max(rho + std::log1p(-delta), 0.0);  // pure DP: eps + log(1 - delta) is valid
    const double am1 = alpha - 1.0;
    const double log_delta = std::log(delta);
    const double log_alpha = std::log(alpha);
    double eps;
    switch (method) {
        case RdpMethod::Mironov:
            eps = rho - log_delta / am1;
            break;
        case RdpMethod::Balle2020:
            eps = rho + std::log1p(-1.0 / alpha) - (log_delta + log_alpha) / am1;
            break;
        case RdpMethod::Asoodeh:
        default: {
            const double log_ad = log_delta + log_alpha;
            if (log_ad >= 0.0) {
                eps = rho + std::log1p(-delta);
            } else {
                // log zeta = -log alpha + (alpha - 1) log(1 - 1/alpha)
                const double log_zeta = -log_alpha + am1 * std::log1p(-1.0 / alpha);
                const double first = rho - (log_delta - log_zeta) / am1;
                const double z = am1 * rho;
                const double second = z > 0.0 ? log1pexp(logexpm1(z) - log_ad) / am1 : 0.0;
                eps = std::min(first, second);
            }
            break;
        }
    }
    return eps > 0.0 ? eps : 0.0;
}

// Phi(hi) - Phi(lo) for a short interval near the centre (hi - lo <= 2, |lo|, |hi| <= 3) by 10-point
// Gauss-Legendre quadrature of the density: no cancellation, full relative precision (the integrand is
// entire and nearly polynomial over such an interval).
inline double normal_interval(double lo, double hi) noexcept {
    static constexpr double x[5] = {0.14887433898163122, 0.4333953941292472, 0.6794095682990244,
                                    0.8650633666889845, 0.9739065285171717};
    static constexpr double w[5] = {0.2955242247147528, 0.2692667193099965, 0.219086362515982,
                                    0.1494513491505804, 0.06667134430868814};
    const double m = 0.5 * (lo + hi), h = 0.5 * (hi - lo);
    double s = 0.0;
    for (int i = 0; i < 5; ++i) {
        const double a = m + h * x[i], b = m - h * x[i];
        s += w[i] * (std::exp(-0.5 * a * a) + std::exp(-0.5 * b * b));
    }
    return s * h * 0.39894228040143267794;  // 1 / sqrt(2 pi)
}

// delta_mu(eps) near the total variation (small mu, eps << mu): written as
// [Phi(b) - Phi(c)] - expm1(eps) Phi(c), b = mu/2 - eps/mu, c = -mu/2 - eps/mu, where the bracket is a
// short-interval integral (no cancellation) and the subtraction loses under one bit when the second term
// is at most half the first. Returns NaN outside that regime. The log-space profile, which is accurate
// in the tails, loses about log10(1/mu) digits to cancellation in log B - log A here, and that is what
// limits epsilon as delta approaches the total variation.
inline double gdp_delta_near_tv(double mu, double eps, double* slope) noexcept {
    const double a = eps / mu;
    if (!(mu <= 2.0) || !(a <= 1.0) || !(eps >= 0.0)) return kNaN;
    const double b = 0.5 * mu - a, c = -0.5 * mu - a;
    const double inner = normal_interval(c, b);
    const double pc = special::ndtr(c);
    const double t = std::expm1(eps) * pc;
    if (!(t <= 0.5 * inner)) return kNaN;
    if (slope) *slope = -std::exp(eps) * pc;  // d delta / d eps
    return inner - t;
}

// The exact epsilon of mu-GDP at delta (rounded up); 0 for mu = 0; +inf for delta = 0 and mu > 0.
// The log-space solver of the calibration core gives a first answer; where the problem is
// ill-conditioned (delta just below the total variation, so epsilon -> 0) Newton steps on the
// cancellation-free form above restore the relative accuracy of epsilon.
inline double gdp_epsilon(const noise::Family& gauss, double mu, double delta) noexcept {
    if (!(mu >= 0.0) || !(delta >= 0.0) || !(delta <= 1.0)) return kNaN;
    if (mu == 0.0 || delta >= 1.0) return 0.0;
    if (std::isinf(mu)) return kInf;
    double eps = calibration::epsilon_for_delta(gauss, delta, 1.0, mu);
    if (!(mu <= 2.0) || !(eps <= mu)) return eps;
    // refine only where the problem is ill-conditioned: cond = delta / (eps |d delta / d eps|) > 1e3
    if (eps > 0.0 && delta < 1e-3 * eps * std::exp(eps) * special::ndtr(-0.5 * mu - eps / mu)) return eps;
    double slope = 0.0;
    double d0 = gdp_delta_near_tv(mu, 0.0, &slope);
    if (std::isnan(d0)) return eps;
    if (d0 <= delta) return 0.0;  // the total variation is below delta: (0, delta)-DP
    double e = eps;
    for (int it = 0; it < 8; ++it) {
        const double d = gdp_delta_near_tv(mu, e, &slope);
        if (std::isnan(d) || !(slope < 0.0)) return eps;
        const double next = std::max(0.0, e - (d - delta) / slope);
        const bool done = std::fabs(next - e) <= 1e-16 * e;
        e = next;
        if (done) break;
    }
    // round up until the accurate form certifies delta(e) <= delta
    for (int i = 0; i < 64; ++i) {
        const double d = gdp_delta_near_tv(mu, e, &slope);
        if (std::isnan(d)) return eps;
        if (d <= delta) return e;
        e = std::nextafter(e, kInf) * (1.0 + 1e-16 * i);
    }
    return eps;
}

// log delta of mu-GDP at eps (-inf where delta = 0).
inline double gdp_log_delta(const noise::Family& gauss, double mu, double eps) noexcept {
    if (!(mu >= 0.0) || !(eps >= 0.0)) return kNaN;
    if (mu == 0.0 || std::isinf(eps)) return -kInf;
    if (std::isinf(mu)) return 0.0;
    return calibration::profile_std(gauss, eps, mu).log_delta;
}

}  // namespace pydp::accounting
