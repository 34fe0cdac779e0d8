// Conversions between privacy definitions that sit in optimisers' inner loops (Kaissis et al. 2023,
// section 6; Variants of DP 2019).
//
// - gdp_epsilon / gdp_log_delta: the exact privacy profile of the Gaussian mechanism, i.e. of mu-GDP
//   (Balle and Wang 2018; Kaissis et al. 2023, Corollary 14). delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu),
//   evaluated and inverted in log space by the calibration core (csrc/include/pydp/calibration/profile.hpp):
//   psi = mu is the standardised shift D / sigma. Just below the total variation (eps -> 0, where that
//   equation is ill-conditioned) calibration::epsilon_for_delta switches to a well-conditioned form.
// - rdp_to_epsilon: the three (alpha, rho)-RDP -> (eps, delta)-DP conversions of Kaissis et al. 2023:
//     Mironov (Corollary 11):    eps = rho + log(1/delta) / (alpha - 1)
//     Asoodeh (Corollary 12):    eps = rho + log(1 - delta)                               if alpha delta >= 1
//                                eps = min{rho - log(delta / zeta) / (alpha - 1),
//                                          log(1 + (e^{(alpha-1) rho} - 1) / (alpha delta)) / (alpha - 1)}  else,
//                                zeta = (1/alpha) (1 - 1/alpha)^(alpha - 1)
//     Balle et al. 2020 (Corollary 13): eps = rho + log((alpha-1)/alpha) - (log delta + log alpha) / (alpha - 1)
//   The second case of the Asoodeh conversion holds for 0 < alpha delta < 1 (the paper's equation (6.5)
//   states alpha delta >= 1 for both; the correction is derived in docs/accounting.md). Results are
//   clamped at 0 ((eps, delta)-DP for eps < 0 implies (0, delta)-DP). Every term is formed without
//   overflow: log(e^z - 1) = z + log(-expm1(-z)) and log(1 + e^t) = t + log1p(e^-t) for t > 0
//   (special/logexp.hpp).
// - pure_dp_mu: the smallest mu with eps-DP => mu-GDP (Dong, Roth and Su 2022), rounded up.
// - zcdp_log_delta: the (eps, delta) of rho-zCDP (Canonne, Kamath and Steinke 2020),
//   log delta = min over alpha > 1 of g(alpha) = (alpha - 1)(alpha rho - eps) - log(alpha - 1) + alpha log(1 - 1/alpha),
//   certified: every alpha gives a valid delta, so the minimiser only needs to be close; the value at
//   the returned alpha is rounded up by a bound on its floating-point error (see the function).
// Checked in tests/ against mpmath references (the Gaussian profile down to delta = 1e-300) and by
// hypothesis over mu, delta and alpha (every RDP route of the Gaussian gives at least the exact eps).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "pydp/calibration/profile.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/special/constants.hpp"
#include "pydp/special/logexp.hpp"
#include "pydp/special/normal.hpp"

namespace pydp::accounting {

enum class RdpMethod : int { Mironov = 0, Asoodeh = 1, Balle2020 = 2 };

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

using special::log1pexp;
using special::logexpm1;

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

// ---- pure DP -> GDP ---------------------------------------------------------------------------------
// eps-DP implies mu-GDP with mu = -2 Phi^{-1}(1 / (1 + e^eps)) = 2 sqrt 2 erfinv(tanh(eps / 2)), the
// smallest such mu (Dong, Roth and Su 2022), rounded up (never below the exact mu):
// - eps < 0.05: mu = sqrt(pi/2) eps T(h) S(z^2) with h = eps/2, T = tanh(h)/h and z = h T, S the erfinv
//   series (sqrt(pi)/2)(z + pi z^3/12 + 7 pi^2 z^5/480 + 127 pi^3 z^7/40320 + 4369 pi^4 z^9/5806080) / z;
//   the first omitted terms are below 1e-17 relative, the rounding a few ulps, so mu (1 + 2^-50) rounded
//   up once more covers both (a subnormal eps included: mu >= eps never underflows).
// - eps >= 1e250: Phi(-x) <= phi(x)/x gives x^2/2 <= -log p for x = mu/2 >= 1, so 2 sqrt(2 eps) (1 + 2^-50)
//   bounds mu from above and is within 1e-240 of it.
// - otherwise Newton on log Phi(-mu/2) = log p, p = 1/(1 + e^eps) in log space (special::ndtri_lower_log),
//   then mu is raised until log Phi(-mu/2) <= log p - 2^-49 |log p| (log Phi decreases in mu; the margin
//   covers the rounding of both sides).
inline double pure_dp_mu(double eps) noexcept {
    if (!(eps >= 0.0)) return kNaN;
    if (eps == 0.0) return 0.0;
    if (std::isinf(eps)) return kInf;
    constexpr double kUp = 1.0 + 0x1p-50;
    if (eps < 0.05) {
        using special::kPi;
        using special::kSqrtPiOver2;
        const double h = 0.5 * eps, h2 = h * h;
        const double t = 1.0 + h2 * (-1.0 / 3 + h2 * (2.0 / 15 + h2 * (-17.0 / 315 + h2 * (62.0 / 2835))));
        const double w = h2 * t * t;  // z^2
        const double ser = 1.0 + w * (kPi / 12 + w * (7 * kPi * kPi / 480 + w * (127 * kPi * kPi * kPi / 40320 +
                                      w * (4369 * kPi * kPi * kPi * kPi / 5806080))));
        return std::nextafter(kSqrtPiOver2 * eps * t * ser * kUp, kInf);
    }
    if (eps >= 1e250) return std::nextafter(2.0 * special::kSqrt2 * std::sqrt(eps) * kUp, kInf);
    const double log_p = -log1pexp(eps);
    double mu = -2.0 * special::ndtri_lower_log(log_p);
    const double target = log_p - 0x1p-49 * std::fabs(log_p);
    double step = 0x1p-52 * mu;
    for (int i = 0; i < 200 && special::log_ndtr(-0.5 * mu) > target; ++i) {
        mu += step;
        step *= 2.0;
    }
    return mu;
}

// The exact epsilon of mu-GDP at delta, rounded up (the exact delta at the returned eps does not exceed
// delta); NaN outside the domain, 0 for mu = 0, +inf for delta = 0 and mu > 0. The Gaussian's
// calibration::epsilon_for_delta at scale 1 and sensitivity mu (exact for every mu: shift_up(mu, 1) = mu),
// which is well conditioned just below the total variation too.
inline double gdp_epsilon(const noise::Family& gauss, double mu, double delta) noexcept {
    return calibration::epsilon_for_delta(gauss, delta, 1.0, mu);
}

// log delta of mu-GDP at eps (-inf where delta = 0).
inline double gdp_log_delta(const noise::Family& gauss, double mu, double eps) noexcept {
    if (!(mu >= 0.0) || !(eps >= 0.0)) return kNaN;
    if (mu == 0.0 || std::isinf(eps)) return -kInf;
    if (std::isinf(mu)) return 0.0;
    return calibration::profile_std(gauss, eps, mu).log_delta;
}

// The result of zcdp_log_delta: log_delta >= g(alpha) (exactly, for the real number alpha = 1 + am1 with am1
// the double alpha_minus_1), and alpha = 1 + am1 rounded to nearest.
struct ZcdpDelta {
    double log_delta;
    double alpha;
    double alpha_minus_1;
};

// g'(alpha) = (2 alpha - 1) rho - eps + log(1 - 1/alpha) is increasing (g'' = 2 rho + 1 / (alpha (alpha - 1))
// > 0: g is convex), so its root in x = log(alpha - 1) is found by bisection to adjacent doubles over
// [-700, 700] (an end point where the root lies beyond it: any alpha is valid). At am1 = e^x (a double)
// g is evaluated as T1 + T2 + T3 with T1 = am1 ((1 + am1) rho - eps), T2 = -log(am1) and
// T3 = -(1 + am1) log1p(1 / am1) (= alpha log(1 - 1/alpha), without cancellation). Each term has a
// relative error of a few units u = 2^-53 (the library's exp, log and log1p are within 1 ulp; T1's inner
// difference contributes at most 3u ((1 + am1) rho + eps) am1), so 16u (|am1| ((1 + am1) rho + eps) +
// |T2| + |T3|) + 2^-1000 bounds the error of the sum with room to spare; that bound is added and the
// sum rounded up. log delta is clamped at 0 (delta <= 1 holds always) and at -DBL_MAX below (where g
// overflows to -inf, its value is below -DBL_MAX). rho > 0 finite and eps >= 0 finite; NaN otherwise.
inline ZcdpDelta zcdp_log_delta(double rho, double eps) noexcept {
    if (!(rho > 0.0) || !std::isfinite(rho) || !(eps >= 0.0) || !std::isfinite(eps)) return {kNaN, kNaN, kNaN};
    auto slope = [&](double x) { return (1.0 + 2.0 * std::exp(x)) * rho - eps - std::log1p(std::exp(-x)); };
    double lo = -700.0, hi = 700.0, x = 0.0;
    if (slope(lo) >= 0.0) {
        x = lo;
    } else if (slope(hi) <= 0.0) {
        x = hi;
    } else {
        for (int i = 0; i < 200; ++i) {  // 200 halvings of [-700, 700] reach adjacent doubles
            const double mid = 0.5 * (lo + hi);
            if (mid <= lo || mid >= hi) break;
            (slope(mid) < 0.0 ? lo : hi) = mid;
        }
        x = 0.5 * (lo + hi);
    }
    const double am1 = std::exp(x);
    const double a = 1.0 + am1;
    const double t1 = am1 * (a * rho - eps);
    const double t2 = -std::log(am1);
    const double t3 = -a * std::log1p(1.0 / am1);
    const double sum = t1 + t2 + t3;
    constexpr double kMaxDouble = std::numeric_limits<double>::max();
    if (sum == -kInf || (std::isnan(sum) && t1 == -kInf)) return {-kMaxDouble, a, am1};
    const double err = 16.0 * 0x1p-53 * (am1 * (a * rho + eps) + std::fabs(t2) + std::fabs(t3)) + 0x1p-1000;
    const double up = std::nextafter(sum + err, kInf);
    if (!std::isfinite(up)) return {up > 0.0 ? 0.0 : -kMaxDouble, a, am1};
    return {std::max(std::min(up, 0.0), -kMaxDouble), a, am1};
}

// calibration::epsilon_for_delta under the name the accounting layer has exported to C++ users.
using calibration::epsilon_for_delta;

}  // namespace pydp::accounting
