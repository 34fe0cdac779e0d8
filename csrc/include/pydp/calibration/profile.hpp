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
#include "pydp/special/quadrature.hpp"

namespace pydp::calibration {

using noise::Family;
using noise::Kind;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The largest epsilon evaluated: beyond it the threshold residual eps - L(u) (absolute error ~ eps 2^-52)
// no longer resolves delta. Larger epsilons are evaluated at kEpsMax, which overstates delta (delta is
// decreasing in epsilon: conservative), and epsilon_for_delta returns +inf when the answer exceeds it.
inline constexpr double kEpsMax = 1e6;

// The cap applies to the families whose threshold is found numerically (Subbotin_r, r != 1, 2); the
// Laplace, Gaussian and Logistic thresholds are closed forms and stay exact at any epsilon.
inline double eps_cap(const Family& f) noexcept {
    return f.kind() == Kind::Subbotin ? kEpsMax : std::numeric_limits<double>::infinity();
}

struct ProfilePoint {
    double log_delta;  // log of the smallest delta; -inf for delta = 0
    double log_a;      // log S(u - d): log of the first term
    double x;          // eps + log B - log A (<= 0); -inf when B = 0
    double u;          // the (possibly capped) threshold
    bool approx = false;  // evaluated with precise = false where the precise form differs
};

// The Gaussian profile (Balle and Wang 2018, Theorem 8), sharing the two erfcx evaluations between the
// first term and the Mills-ratio form of x: with a1 = eps/d - d/2 and a2 = eps/d + d/2,
// delta = Phi(-a1) - e^eps Phi(-a2), Phi(-a) = erfcx(a / sqrt 2) e^{-a^2/2} / 2.
// precise = false skips the short-interval quadrature (relative error up to ~1e-16 / |x| in delta):
// the solvers iterate with it and finish with precise evaluations.
inline ProfilePoint gaussian_profile(double eps, double d, bool precise = true) noexcept {
    using namespace special;
    const double a1 = eps / d - 0.5 * d, a2 = eps / d + 0.5 * d;
    double la, x;
    bool approx = false;
    const double t1 = a1 * kSqrt1_2;
    if (t1 >= 6.0) {
        // Deep tail: erfcx(t) = (1/sqrt(pi)) / K(t), K(t) = t + (1/2)/(t + 1/(t + (3/2)/(t + ...))) (the
        // continued fraction of erfcx_nonneg), run for t1 and t2 = t1 + d / sqrt 2 together with the
        // difference D = K(t2) - K(t1) by its own recursion D_{k-1} = dt - c_k D_k / (K_k(t1) K_k(t2)),
        // every term positive. Then x = log(e2 / e1) = -log1p(D / K(t1)) with full relative accuracy
        // at any shift, for the price of the two erfcx evaluations.
        const double dt = d * kSqrt1_2, t2 = t1 + dt;
        const int terms = t1 >= 8.0 ? 12 : 16;
        double k1 = t1, k2 = t2, diff = dt;
        for (int k = terms; k >= 1; --k) {
            const double c = 0.5 * k;
            diff = dt - c * diff / (k1 * k2);
            k1 = t1 + c / k1;
            k2 = t2 + c / k2;
        }
        const double hi = a1 * a1, lo = std::fma(a1, a1, -hi);
        la = std::log(0.5 * kInvSqrtPi / k1) - 0.5 * hi - 0.5 * lo;
        x = -std::log1p(diff / k1);
    } else if (a1 > 0.0) {
        const double e1 = erfcx_nonneg(t1), e2 = erfcx_nonneg(a2 * kSqrt1_2);
        const double hi = a1 * a1, lo = std::fma(a1, a1, -hi);
        la = std::log(0.5 * e1) - 0.5 * hi - 0.5 * lo;
        // eps + log Phi(-a2) - log Phi(-a1) = eps - (a2^2 - a1^2)/2 + log(e2 / e1) = log(e2 / e1), since
        // a2^2 - a1^2 = 2 eps exactly; erfcx is insensitive to the rounding of a1 and a2. For a small
        // shift (d < a1 / 100) the ratio is close to 1: integrate (log R)'(y) = y - 1/R(y) over [a1, a2].
        if (d < 0.01 * a1 && precise) {
            x = special::gauss_legendre_len([](double y) { return y - std::exp(-log_mills_normal(y)); }, a1, d, d / a1);
        } else {
            x = std::log(e2 / e1);
            approx = d < 0.01 * a1;
        }
    } else {
        la = log_ndtr(-a1);
        x = eps + log_ndtr(-a2) - la;
    }
    if (!(x < 0.0)) return {-kInf, la, x, a2, approx};
    return {la + std::log(-std::expm1(x)), la, x, a2, approx};
}

// The profile in standardised units: shift d = D / s > 0, eps >= 0.
inline ProfilePoint profile_std(const Family& f, double eps, double d, bool precise = true) noexcept {
    if (!(d > 0.0)) return {-kInf, 0.0, -kInf, kInf};
    if (f.kind() == Kind::Laplace && !f.truncated()) {  // closed form (Theorem 3): 1 - e^{(eps - d)/2}
        if (eps >= d) return {-kInf, 0.0, -kInf, kInf};
        const double u = 0.5 * (eps + d);
        return {std::log(-std::expm1(0.5 * (eps - d))), f.logsf(u - d), eps + f.logsf(u) - f.logsf(u - d), u};
    }
    if (f.kind() == Kind::Gaussian && !f.truncated()) return gaussian_profile(eps, d, precise);
    double u = f.threshold(d, eps);
    if (f.truncated() && u >= f.bound()) {
        // t = a s (Remark 1): delta = S_T(A - d), the mass of the shifted noise beyond the support.
        const double la = f.logsf(f.bound() - d);
        return {la, la, -kInf, f.bound()};
    }
    if (std::isinf(u)) return {-kInf, 0.0, -kInf, kInf};
    bool approx = false;
    double la, x;
    if (u - d > 0.0 && f.kind() != Kind::Laplace) {
        double lr_ud, e_ud = 0.0;
        f.log_sf_mills(u - d, &la, &lr_ud, &e_ud);
        // log R(u) - log R(u - d): for a small shift the two logs nearly cancel, so integrate their
        // derivative psi' - 1/R over [u - d, u] instead (10-point Gauss-Legendre, error ~ (d / 8u)^20).
        double dlr;
        const bool short_shift = d < 0.25 * (u - d);
        bool quadrature = short_shift;
        if (f.kind() == Kind::Subbotin && d <= 0.5 * u) {
            // log R(u) - log R(u - d) = E(u) - E(u - d) + (r - 1) log1p(-d / u) with E = log(R psi')
            // small in the tail. Its rounding error is about 4e-16 (|E(u)| + |E(u - d)|); keep it unless
            // that is above 1e-14 of the result.
            const double eu = f.mills_excess(u), eud = e_ud;
            dlr = eu - eud + (f.r() - 1.0) * std::log1p(-d / u);
            // Near r = 1 the reference suite still found 6.5e-12 relative error in delta on this path
            // (r = 1.001, eps = 0.1, D/s = 0.1), so the quadrature serves r < 1.05 as well.
            quadrature = short_shift && (f.r() < 1.05 || 4e-16 * (std::fabs(eu) + std::fabs(eud)) > 1e-14 * std::fabs(dlr));
        } else {
            dlr = f.log_mills(u) - lr_ud;
        }
        approx = quadrature && !precise;
        if (quadrature && precise) {
            dlr = special::gauss_legendre_len([&f](double y) { return f.dlog_mills(y); }, u - d, d, d / (u - d));
        }
        x = (eps - f.psi_diff(u, d)) + dlr;
        if (f.truncated()) {
            const double ls_bound = f.base_logsf(f.bound());
            x += std::log(-std::expm1(ls_bound - f.base_logsf(u))) - std::log(-std::expm1(ls_bound - la));
            la += std::log(-std::expm1(ls_bound - la)) - f.log_mass();
        }
    } else {
        // u - d <= 0 < u: delta = P(u - d < X <= u) - expm1(eps) S(u) = C(u) + C(d - u) - expm1(eps) S(u)
        // with C(y) = P(0 < X <= y): no cancellation between two tail values close to 1/2.
        const double lsu = f.base_logsf(u);
        const double su = std::exp(lsu);
        // log expm1(eps) without overflow (eps up to the double range)
        const double log_em1 = eps > 1.0 ? eps + std::log1p(-std::exp(-eps)) : std::log(std::expm1(eps));
        double pos = f.central(u) + f.central(d - u);
        double neg = eps > 0.0 ? std::exp(log_em1 + lsu) : 0.0;
        double a_lin = 0.5 + f.central(d - u);
        if (f.truncated()) {
            const double sa = std::exp(f.base_logsf(f.bound())), m = std::exp(f.log_mass());
            neg = eps > 0.0 ? std::exp(log_em1 + lsu + std::log1p(-sa / su)) : 0.0;
            pos /= m;
            neg /= m;
            a_lin = (a_lin - sa) / m;
        }
        const double delta = pos - neg;
        la = std::log(a_lin);
        if (!(delta > 0.0)) return {-kInf, la, -kInf, u};
        return {std::log(delta), la, std::log1p(-delta / a_lin), u};
    }
    if (!(x < 0.0)) return {-kInf, la, x, u, approx};  // delta = 0 to working precision
    return {la + std::log(-std::expm1(x)), la, x, u, approx};
}

// log delta(eps, scale, sensitivity).
// D / s rounded up: the shift a conservative evaluation must use (delta and epsilon grow with it).
inline double shift_up(double sensitivity, double scale) noexcept {
    double d = sensitivity / scale;
    if (std::isfinite(d) && std::fma(d, scale, -sensitivity) < 0.0) d = std::nextafter(d, kInf);
    return d;
}

// log delta(eps, scale, sensitivity), evaluated at the shift D / s rounded up (never optimistic).
inline double log_privacy_profile(const Family& f, double eps, double scale, double sensitivity) noexcept {
    return profile_std(f, std::min(eps, eps_cap(f)), shift_up(sensitivity, scale)).log_delta;
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
        const double inner = delta * (delta * std::exp(-eps) - std::expm1(-eps));  // delta (1 - (1 - delta) e^-eps)
        return {eps + 2.0 * std::log1p(std::sqrt(std::max(inner, 0.0))) - 2.0 * std::log1p(-delta), kOk};
    }
    if (log_target == -kInf) return {0.0, kNoFiniteScale};
    bool precise = false;  // fast evaluations first, then a precise finish from the fast root
    bool approx_seen = false;
    auto g = [&](double v, double* slope) {
        const double d = std::exp(v);
        const ProfilePoint p = profile_std(f, eps, d, precise);
        approx_seen = approx_seen || p.approx;
        if (slope) {
            // d log delta / d log d = d f(u - d) / delta
            *slope = p.log_delta == -kInf ? 0.0 : std::exp(std::log(d) + f.logpdf(p.u - d) - p.log_delta);
        }
        return p.log_delta - log_target;
    };
    // Starting point: the classic Gaussian calibration, d = eps / sqrt(2 log(1.25 / delta)), or the
    // total-variation slope when eps = 0.
    const double lt = std::min(log_target, std::log(0.5));
    double v;
    if (f.kind() == Kind::Gaussian && !f.truncated()) {
        // delta ~ Phi(-(eps/d - d/2)): d = sqrt(z^2 + 2 eps) - z with z = -Phi^{-1}(delta) (A&S 26.2.23).
        const double t = std::sqrt(-2.0 * lt);
        const double z = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                                 (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
        double a = z, d0 = eps > 0.0 ? 2.0 * eps / (std::sqrt(a * a + 2.0 * eps) + a) : std::exp(lt) * 2.5066282746310002;
        // For large a1 = a: delta ~ phi(a) d / (a (a + d)); a few fixed-point steps on that asymptote.
        for (int k = 0; k < 3 && eps > 0.0 && a > 3.0; ++k) {
            const double rhs = -lt - special::kLogSqrt2Pi + std::log(d0) - std::log(a) - std::log(a + d0);
            if (!(rhs > 4.5)) break;
            a = std::sqrt(2.0 * rhs);
            d0 = 2.0 * eps / (std::sqrt(a * a + 2.0 * eps) + a);
        }
        v = std::log(d0);
    } else {
        v = eps > 0.0 ? std::log(eps) - 0.5 * std::log(2.0 * (std::log(1.25) - lt)) : lt + 0.9189385332046727;
    }
    // Safeguarded Newton on v = log d: keep the bracket g(lo) <= 0 < g(hi), fall back to bisection (or
    // unit steps before a bracket exists), and finish only with lo verified private and hi within ~1e-14.
    double lo = -kInf, hi = kInf, slope = 0.0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            if (!std::isfinite(lo)) break;
            precise = true;
            v = lo;
            lo = -kInf;
            hi = kInf;
        }
        double gv = g(v, &slope);
        for (int it = 0; it < 400; ++it) {
            if (gv <= 0.0) lo = std::max(lo, v); else hi = std::min(hi, v);
            const double tol = 4e-15 * std::max(1.0, std::fabs(v));
            if (hi - lo <= 2.0 * tol) break;
            double next;
            const bool newton_ok = std::isfinite(gv) && slope > 0.0 && std::isfinite(slope);
            if (newton_ok) {
                const double step = -gv / slope;
                if (std::fabs(step) <= tol) next = gv <= 0.0 ? v + tol : v - tol;  // straddle the root
                else next = v + std::clamp(step, -8.0, 8.0);
            } else {
                next = v + (gv <= 0.0 ? 1.0 : -1.0);
            }
            if (!(next > lo && next < hi)) {
                if (std::isfinite(lo) && std::isfinite(hi)) next = 0.5 * (lo + hi);
                else next = std::isfinite(lo) ? lo + 1.0 : hi - 1.0;
            }
            if (next > 700.0 || next < -700.0) return {0.0, kNoFiniteScale};
            v = next;
            gv = g(v, &slope);
        }
        if (!approx_seen) break;  // the fast evaluations were exact: no precise pass needed
    }
    if (!std::isfinite(lo)) return {0.0, kNoConvergence};
    return {std::exp(lo), kOk};
}

// The minimal scale s (>= the exact one, within 1e-12 relative) for (eps, delta); verified.
inline ShiftResult minimal_scale(const Family& f, double eps, double delta, double sensitivity) noexcept {
    eps = std::min(eps, eps_cap(f));  // conservative beyond the evaluated range
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
        if (log_privacy_profile(f, eps, s, sensitivity) <= log_target - 0.5 * margin) return {s, kOk};
        s = std::nextafter(s, kInf) * (1.0 + 1e-15 * i);
    }
    return {s, kVerifyFailed};
}

// The smallest eps >= 0 with delta(eps) <= delta at this scale (eps rounded up: conservative).
// Returns +inf when no finite eps reaches delta (bounded support with mass beyond it).
inline double epsilon_for_delta(const Family& f, double delta, double scale, double sensitivity) noexcept {
    const double d = shift_up(sensitivity, scale);
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
        const double cap = eps_cap(f);
        if (std::isfinite(cap) && g(cap, nullptr) > 0.0) return kInf;  // beyond the evaluated range
        hi = std::min(hi, cap);
        while (g(hi, nullptr) > 0.0) {
            lo = hi;
            hi = std::min(2.0 * hi + 1.0, cap);
            if (++guard > 2000 || !std::isfinite(hi)) return kInf;
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
    // Round up by a few ulps: the root is resolved to about 1e-16 relative, and the answer must not
    // fall below the exact epsilon.
    return hi * (1.0 + 4e-15) + 1e-300;
}

}  // namespace pydp::calibration
