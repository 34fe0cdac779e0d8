// Exact (eps, delta) analysis of additive symmetric log-concave noise (Vinterbo 2022, Lemma 1 and 2).
//
// q(d) + s X is (eps, delta)-DP iff delta >= S((t - D)/s) - e^eps S(t/s) with the threshold
// t = sup{z : psi(z/s) - psi((z - D)/s) <= eps}. By Lemma 2 everything depends on d = D/s only, so we
// work in standardised units: u = t/s and the shift d. With A = S(u - d) and B = S(u),
//   delta = A * (-expm1(x)),   x = eps + log B - log A.
// When u - d > 0 we form x from the Mills ratios R = S/f instead, x = (eps - L(u)) + log R(u) - log R(u-d),
// where L(u) = eps at the threshold: the huge tail exponents cancel analytically, not numerically.
//
// Derivatives used by the solvers (envelope theorem at the optimal threshold):
//   d delta / d log d = d f(u - d),     d delta / d eps = -e^eps B.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "pydp/noise/families.hpp"

namespace pydp::calibration {

using noise::Family;
using noise::Kind;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct ProfilePoint {
    double log_delta;  // log of the smallest delta; -inf for delta = 0
    double log_a;      // log S(u - d): log of the first term
    double x;          // eps + log B - log A (<= 0); -inf when B = 0
    double u;          // the (possibly capped) threshold
};

// The profile in standardised units: shift d = D / s > 0, eps >= 0.
inline ProfilePoint profile_std(const Family& f, double eps, double d) noexcept {
    if (!(d > 0.0)) return {-kInf, 0.0, -kInf, kInf};
    if (f.kind() == Kind::Laplace && !f.truncated()) {  // closed form (Theorem 3): 1 - e^{(eps - d)/2}
        if (eps >= d) return {-kInf, 0.0, -kInf, kInf};
        const double u = 0.5 * (eps + d);
        return {std::log(-std::expm1(0.5 * (eps - d))), f.logsf(u - d), eps + f.logsf(u) - f.logsf(u - d), u};
    }
    double u = f.threshold(d, eps);
    if (f.truncated() && u >= f.bound()) {
        // t = a s (Remark 1): delta = S_T(A - d), the mass of the shifted noise beyond the support.
        const double la = f.logsf(f.bound() - d);
        return {la, la, -kInf, f.bound()};
    }
    if (std::isinf(u)) return {-kInf, 0.0, -kInf, kInf};
    const double la = f.logsf(u - d);
    double x;
    if (u - d > 0.0 && f.kind() != Kind::Laplace) {
        x = (eps - f.psi_diff(u, d)) + f.log_mills(u) - f.log_mills(u - d);
        if (f.truncated()) {
            const double ls_bound = f.base_logsf(f.bound());
            x += std::log(-std::expm1(ls_bound - f.base_logsf(u))) -
                 std::log(-std::expm1(ls_bound - f.base_logsf(u - d)));
        }
    } else {
        x = eps + f.logsf(u) - la;
    }
    if (!(x < 0.0)) return {-kInf, la, x, u};  // delta = 0 to working precision
    return {la + std::log(-std::expm1(x)), la, x, u};
}

// log delta(eps, scale, sensitivity).
inline double log_privacy_profile(const Family& f, double eps, double scale, double sensitivity) noexcept {
    return profile_std(f, eps, sensitivity / scale).log_delta;
}

enum Status : int { kOk = 0, kNoFiniteScale = 1, kVerifyFailed = 2, kNoConvergence = 3 };

// The smallest standardised shift-inverse: the largest d with log delta(eps, d) <= log_target - margin,
// found by safeguarded Newton on v = log d (log delta is increasing in d). Returns d (> 0) or a status.
struct ShiftResult {
    double d;
    int status;
};

inline ShiftResult max_shift(const Family& f, double eps, double log_target) noexcept {
    // Fast exact paths (Theorem 3, Theorem 4).
    if (!f.truncated() && f.kind() == Kind::Laplace) {
        const double delta = std::exp(log_target);
        return {eps - 2.0 * std::log1p(-delta), kOk};
    }
    if (!f.truncated() && f.kind() == Kind::Logistic) {
        const double delta = std::exp(log_target);
        // 2 log((e^{eps/2} + sqrt(delta (e^eps + delta - 1))) / (1 - delta)), rearranged to avoid overflow.
        const double inner = delta * (1.0 - (1.0 - delta) * std::exp(-eps));
        return {eps + 2.0 * std::log1p(std::sqrt(std::max(inner, 0.0))) - 2.0 * std::log1p(-delta), kOk};
    }
    if (log_target == -kInf) return {0.0, kNoFiniteScale};
    auto g = [&](double v, double* slope) {
        const double d = std::exp(v);
        const ProfilePoint p = profile_std(f, eps, d);
        if (slope) {
            // d log delta / d log d = d f(u - d) / delta
            *slope = p.log_delta == -kInf ? 0.0 : std::exp(std::log(d) + f.logpdf(p.u - d) - p.log_delta);
        }
        return p.log_delta - log_target;
    };
    // Starting point: the classic Gaussian calibration, d = eps / sqrt(2 log(1.25 / delta)), or the
    // total-variation slope when eps = 0.
    const double lt = std::min(log_target, std::log(0.5));
    double v = eps > 0.0 ? std::log(eps) - 0.5 * std::log(2.0 * (std::log(1.25) - lt)) : lt + 0.9189385332046727;
    double lo = -kInf, hi = kInf;
    double slope = 0.0, slope_lo = 0.0, g_lo = -kInf;
    double gv = g(v, &slope);
    for (int i = 0; i < 400; ++i) {  // bracket the root: g(lo) <= 0 < g(hi)
        if (gv <= 0.0) { lo = v; g_lo = gv; slope_lo = slope; } else { hi = v; }
        if (std::isfinite(lo) && std::isfinite(hi)) break;
        double step = gv <= 0.0 ? 1.0 : -1.0;
        if (std::isfinite(gv) && slope > 0.0) step = std::clamp(-gv / slope * 1.1, -8.0, 8.0);
        if (step == 0.0) step = gv <= 0.0 ? 1e-12 : -1e-12;
        v += step;
        if (v > 700.0 || v < -700.0) return {0.0, kNoFiniteScale};
        gv = g(v, &slope);
    }
    if (!(std::isfinite(lo) && std::isfinite(hi))) return {0.0, kNoConvergence};
    // Safeguarded Newton from the private side; lo always satisfies g <= 0.
    v = lo; gv = g_lo; slope = slope_lo;
    for (int it = 0; it < 200; ++it) {
        if (hi - lo <= 2e-15 * std::max(1.0, std::fabs(lo))) break;
        double next = (std::isfinite(gv) && slope > 0.0) ? v - gv / slope : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        double s_next;
        const double gn = g(next, &s_next);
        v = next; gv = gn; slope = s_next;
        if (gn <= 0.0) {
            lo = next;
            if (gn > -1e-13) {  // converged from below: close the bracket with a tiny step up
                const double probe = std::min(hi, next + 4e-15 * std::max(1.0, std::fabs(next)));
                if (g(probe, nullptr) > 0.0) { hi = probe; break; }
            }
        } else {
            hi = next;
        }
    }
    return {std::exp(lo), kOk};
}

// The minimal scale s (>= the exact one, within 1e-12 relative) for (eps, delta); verified.
inline ShiftResult minimal_scale(const Family& f, double eps, double delta, double sensitivity) noexcept {
    if (delta == 0.0) {
        if (!f.mlr_bounded() || f.truncated() || eps == 0.0) return {0.0, kNoFiniteScale};
        double s = sensitivity / eps;  // t = inf: (eps, 0)-DP iff D / s <= eps, i.e. s * eps >= D exactly.
        // fma gives the sign of s * eps - D exactly; the rounded quotient D / s can hide D / s > eps.
        while (std::fma(s, eps, -sensitivity) < 0.0) s = std::nextafter(s, kInf);
        return {s, kOk};
    }
    const double log_target = std::log(delta);
    constexpr double margin = 1e-12;  // relative safety margin on delta against rounding in log delta
    const ShiftResult r = max_shift(f, eps, log_target - margin);
    if (r.status != kOk) return r;
    if (!(r.d > 0.0) || !std::isfinite(r.d)) return {0.0, kNoFiniteScale};
    double s = sensitivity / r.d;
    // The exact shift D / s must not exceed the verified shift r.d: s * r.d >= D exactly (fma sign).
    while (std::fma(s, r.d, -sensitivity) < 0.0) s = std::nextafter(s, kInf);
    // Verify, nudging up by ulps if the division rounded the wrong way.
    for (int i = 0; i < 64; ++i) {
        if (log_privacy_profile(f, eps, s, sensitivity) <= log_target) return {s, kOk};
        s = std::nextafter(s, kInf) * (1.0 + 1e-15 * i);
    }
    return {s, kVerifyFailed};
}

// The smallest eps >= 0 with delta(eps) <= delta at this scale (eps rounded up: conservative).
// Returns +inf when no finite eps reaches delta (bounded support with mass beyond it).
inline double epsilon_for_delta(const Family& f, double delta, double scale, double sensitivity) noexcept {
    const double d = sensitivity / scale;
    if (!(d > 0.0)) return 0.0;
    if (delta >= 1.0) return 0.0;
    if (!f.truncated() && f.kind() == Kind::Laplace) {
        const double e = d + 2.0 * std::log1p(-delta);  // invert Theorem 3
        if (e <= 0.0) return 0.0;
        double eps = e;
        while (profile_std(f, eps, d).log_delta > std::log(delta)) eps = std::nextafter(eps, kInf);
        return eps;
    }
    const double log_target = delta > 0.0 ? std::log(delta) : -kInf;
    auto g = [&](double eps, double* slope) {
        const ProfilePoint p = profile_std(f, eps, d);
        if (slope) {  // d log delta / d eps = -e^x / (-expm1(x))
            *slope = (p.log_delta == -kInf || p.x == -kInf) ? 0.0 : -std::exp(p.x) / (-std::expm1(p.x));
        }
        return p.log_delta - log_target;
    };
    double slope;
    if (g(0.0, nullptr) <= 0.0) return 0.0;
    if (delta == 0.0) {
        if (f.mlr_bounded() && !f.truncated()) return d;  // delta(eps) = 0 iff eps >= d
        return kInf;
    }
    double lo = 0.0, hi;
    if (f.mlr_bounded() && !f.truncated()) {
        hi = d;
    } else {
        hi = std::max(1e-300, d * std::sqrt(2.0 * std::max(0.0, -log_target)) + 0.5 * d * d);
        int guard = 0;
        while (g(hi, nullptr) > 0.0) {
            lo = hi;
            hi = 2.0 * hi + 1.0;
            if (++guard > 200 || !std::isfinite(hi)) return kInf;
        }
    }
    double e = hi;
    double ge = g(e, &slope);
    for (int it = 0; it < 300; ++it) {
        if (hi - lo <= 1e-15 * hi) break;
        double next = (std::isfinite(ge) && slope < 0.0) ? e - ge / slope : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        const double gn = g(next, &slope);
        if (gn <= 0.0) hi = next; else lo = next;
        e = next;
        ge = gn;
        if (gn <= 0.0 && gn > -1e-13) {
            const double probe = std::max(lo, next * (1.0 - 4e-15));
            if (g(probe, nullptr) > 0.0) { lo = probe; break; }
        }
    }
    return hi;
}

}  // namespace pydp::calibration
