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

// The exact epsilon of mu-GDP at delta (rounded up); 0 for mu = 0; +inf for delta = 0 and mu > 0.
inline double gdp_epsilon(const noise::Family& gauss, double mu, double delta) noexcept {
    if (!(mu >= 0.0) || !(delta >= 0.0) || !(delta <= 1.0)) return kNaN;
    if (mu == 0.0 || delta >= 1.0) return 0.0;
    if (std::isinf(mu)) return kInf;
    return calibration::epsilon_for_delta(gauss, delta, 1.0, mu);
}

// log delta of mu-GDP at eps (-inf where delta = 0).
inline double gdp_log_delta(const noise::Family& gauss, double mu, double eps) noexcept {
    if (!(mu >= 0.0) || !(eps >= 0.0)) return kNaN;
    if (mu == 0.0 || std::isinf(eps)) return -kInf;
    if (std::isinf(mu)) return 0.0;
    return calibration::profile_std(gauss, eps, mu).log_delta;
}

}  // namespace pydp::accounting
