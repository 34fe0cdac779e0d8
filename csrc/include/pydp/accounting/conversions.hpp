// Conversions between privacy definitions that sit in optimisers' inner loops (papers 003 and 004).
//
// - gdp_epsilon / gdp_log_delta: the exact privacy profile of the Gaussian mechanism, i.e. of mu-GDP
//   (Balle and Wang 2018; paper 004 Corollary 14). delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu),
//   evaluated and inverted in log space by the calibration core (csrc/include/pydp/calibration/profile.hpp):
//   psi = mu is the standardised shift D / sigma. Just below the total variation (eps -> 0, where that
//   equation is ill-conditioned) gdp_epsilon switches to a well-conditioned form (see below).
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
#include "pydp/special/quadrature.hpp"

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
        constexpr double kPi = 3.14159265358979323846, kSqrtPiOver2 = 1.25331413731550025121;
        const double h = 0.5 * eps, h2 = h * h;
        const double t = 1.0 + h2 * (-1.0 / 3 + h2 * (2.0 / 15 + h2 * (-17.0 / 315 + h2 * (62.0 / 2835))));
        const double w = h2 * t * t;  // z^2
        const double ser = 1.0 + w * (kPi / 12 + w * (7 * kPi * kPi / 480 + w * (127 * kPi * kPi * kPi / 40320 +
                                      w * (4369 * kPi * kPi * kPi * kPi / 5806080))));
        return std::nextafter(kSqrtPiOver2 * eps * t * ser * kUp, kInf);
    }
    if (eps >= 1e250) return std::nextafter(2.0 * std::sqrt(2.0) * std::sqrt(eps) * kUp, kInf);
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

// ---- epsilon just below the total variation -------------------------------------------------------
// As delta -> TV = delta(0) = erf(mu / (2 sqrt 2)), eps -> 0 and the problem is ill-conditioned in the
// form delta(eps) = target: the condition number delta / (eps |delta'|) grows like 1 / eps, so the
// digits of delta lost to rounding cost that many digits of eps. Written instead as
//   g(eps) = TV - delta(eps) = r := TV - target,
//   g(eps) = 2 phi(m) int_0^a e^{-s^2/2} sinh(m s) ds + expm1(eps) Phi(-m - a),   m = mu/2, a = eps/mu,
// (the two end slivers that separate TV from the central probability, folded by symmetry into one
// positive integrand), every term is positive and g is well conditioned (g ~ eps Phi(-m)). The only
// cancellation left is in r, which is formed exactly from TV in double-double arithmetic.

struct DD {
    double hi, lo;
};
inline DD quick_two_sum(double a, double b) noexcept {
    const double s = a + b;
    return {s, b - (s - a)};
}
inline DD two_sum(double a, double b) noexcept {
    const double s = a + b;
    const double bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
}
inline DD dd_add(DD a, DD b) noexcept {
    const DD s = two_sum(a.hi, b.hi);
    return quick_two_sum(s.hi, s.lo + a.lo + b.lo);
}
inline DD dd_mul(DD a, DD b) noexcept {
    const double p = a.hi * b.hi;
    const double e = std::fma(a.hi, b.hi, -p);
    return quick_two_sum(p, e + (a.hi * b.lo + a.lo * b.hi));
}
inline DD dd_div(DD a, double b) noexcept {
    const double q = a.hi / b;
    const double p = q * b;
    const double e = std::fma(q, b, -p);
    return quick_two_sum(q, ((a.hi - p) - e + a.lo) / b);
}

// erf(mu / (2 sqrt 2)) in double-double by its Taylor series. For mu <= 8 (argument <= 2.83) the largest
// term is below 1e3, so at most 3 of the ~32 digits are lost to the alternating signs; <= 110 terms.
inline DD total_variation_dd(double mu) noexcept {
    const DD c{0.3535533905932738, -2.4168233283632284e-17};  // 1 / (2 sqrt 2)
    const DD two_over_sqrt_pi{1.1283791670955126, 1.533545961316588e-17};
    const DD x = dd_mul(DD{mu, 0.0}, c);
    const DD x2 = dd_mul(x, x);
    DD term = x;  // x^(2n+1) / n!
    DD sum = x;
    for (int n = 1; n < 200; ++n) {
        term = dd_div(dd_mul(term, x2), static_cast<double>(n));
        DD t = dd_div(term, static_cast<double>(2 * n + 1));
        if (n % 2) t = DD{-t.hi, -t.lo};
        sum = dd_add(sum, t);
        if (std::fabs(t.hi) < 1e-34 * sum.hi) break;
    }
    return dd_mul(sum, two_over_sqrt_pi);
}

// g(eps) = TV - delta(eps) and g'(eps) = e^eps Phi(-m - a), for mu <= 8 and a = eps / mu <= 1.
inline double gap_below_tv(double mu, double eps, double* slope) noexcept {
    const double m = 0.5 * mu, a = eps / mu;
    // int_0^a e^{-s^2/2} sinh(m s) ds by 10-point Gauss-Legendre
    const double s = special::gauss_legendre10([m](double u) { return std::exp(-0.5 * u * u) * std::sinh(m * u); }, 0.0, a);
    const double phi_m = 0.39894228040143267794 * std::exp(-0.5 * m * m);
    const double pc = special::ndtr(-m - a);
    if (slope) *slope = std::exp(eps) * pc;
    return 2.0 * phi_m * s + std::expm1(eps) * pc;
}

// The exact epsilon of mu-GDP at delta, rounded up (the exact delta at the returned eps does not exceed
// delta); 0 for mu = 0; +inf for delta = 0 and mu > 0. The log-space solver of the calibration core
// gives the answer (conservatively, see epsilon_for_delta) except where the problem is ill-conditioned
// (cond > 1e3: delta just below the total variation, mu <= 8); there Newton on g(eps) = r above recovers
// full relative accuracy. Its answer is certified by g(eps) >= r_up (1 + 1e-13): r_up bounds r from
// above (the double-double total variation is good to ~1e-30 absolute) and 1e-13 covers the rounding
// of g (every term positive; quadrature and ndtr to a few ulps).
inline double gdp_epsilon(const noise::Family& gauss, double mu, double delta) noexcept {
    if (!(mu >= 0.0) || !(delta >= 0.0) || !(delta <= 1.0)) return kNaN;
    if (mu == 0.0 || delta >= 1.0) return 0.0;
    if (std::isinf(mu)) return kInf;
    const double eps = calibration::epsilon_for_delta(gauss, delta, 1.0, mu);
    if (!(mu <= 8.0) || !(eps <= 0.5 * mu)) return eps;
    if (eps > 0.0 && delta < 1e-3 * eps * std::exp(eps) * special::ndtr(-0.5 * mu - eps / mu)) return eps;
    const DD tv = total_variation_dd(mu);
    const DD rr = dd_add(tv, DD{-delta, 0.0});
    const double r_up = (rr.hi + rr.lo) + 1e-28 * tv.hi;
    if (!(r_up > 0.0)) return 0.0;  // delta >= TV: (0, delta)-DP
    const double r = r_up * (1.0 + 1e-13);  // the gap to certify
    double slope = 0.0;
    gap_below_tv(mu, 0.0, &slope);
    double e = eps > 0.0 ? eps : r / slope;
    for (int it = 0; it < 20; ++it) {
        if (!(e / mu <= 1.0)) return eps;
        const double g = gap_below_tv(mu, e, &slope);
        const double next = e - (g - r) / slope;
        const bool done = std::fabs(next - e) <= 2e-16 * e;
        e = next > 0.0 ? next : 0.5 * e;
        if (done) break;
    }
    // round up until g(e) >= r, i.e. delta(e) <= delta with the margin
    for (int i = 0; i < 64; ++i) {
        if (!(e / mu <= 1.0)) return eps;
        if (gap_below_tv(mu, e, nullptr) >= r) return std::min(e, eps);
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

// The smallest epsilon (rounded up) with delta(epsilon) <= delta for noise `f` at this scale: the entry
// point of the bindings (Python and C). The untruncated Gaussian goes through the exact GDP epsilon
// (mu = D / s rounded up), which adds a well-conditioned form just below the total variation, where
// eps -> 0; the other families use calibration::epsilon_for_delta.
inline double epsilon_for_delta(const noise::Family& f, double delta, double scale, double sensitivity) noexcept {
    if (f.kind() == noise::Kind::Gaussian && !f.truncated())
        return gdp_epsilon(f, calibration::shift_up(sensitivity, scale), delta);
    return calibration::epsilon_for_delta(f, delta, scale, sensitivity);
}

}  // namespace pydp::accounting
