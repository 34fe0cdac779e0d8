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
// epsilon_for_delta inverts the profile in log space; for the untruncated Gaussian just below the total
// variation, where that is ill-conditioned, it solves a well-conditioned form in double-double instead.
// Checked against mpmath in tests/ (the calibration reference suite, the Gaussian profile down to
// delta = 1e-300) and by csrc/tests/test_kernels.cpp (monotone profiles, the Laplace's pure-DP scale).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "pydp/noise/families.hpp"
#include "pydp/status.hpp"
#include "pydp/special/constants.hpp"
#include "pydp/special/double_double.hpp"
#include "pydp/special/logexp.hpp"
#include "pydp/special/normal.hpp"
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
    double x;          // eps + log B - log A (<= 0); -inf when B = 0
    double u;          // the (possibly capped) threshold
    bool approx = false;  // evaluated with precise = false where the precise form differs
};

// The Gaussian profile (Balle and Wang 2018, Theorem 8) with what the Gaussian solver needs. With
// a1 = eps/d - d/2, a2 = eps/d + d/2 and Phi(-a) = erfcx(a / sqrt 2) e^{-a^2/2} / 2,
//   delta = Phi(-a1) - e^eps Phi(-a2) = Phi(-a1) m,   m = 1 - e^x = 1 - erfcx(t2) / erfcx(t1),
// t_i = a_i / sqrt 2 (a2^2 - a1^2 = 2 eps exactly, so the huge exponents cancel analytically), and
//   L' = d log delta / d log d = d phi(a1) / delta = d / (R(a1) m),   R(a1) = sqrt(pi/2) erfcx(t1),
//   L'' = L' (1 + a1 a2 - L')   (d delta / d d = phi(a1); d a1 / d log d = -a2).
// m is formed without cancellation: from the continued fractions of erfcx in the deep tail (t1 >= 6),
// from the Taylor series of erfcx(t1 + h) / erfcx(t1) for a small shift h = d / sqrt 2, from the two
// erfcx values otherwise (m >= ~0.02 there), and from log_ndtr where a1 <= 0 and h > 0.05 (|x| > ~0.05).
// x = log1p(-m) is formed only when asked (kWantX).
struct GaussianPoint {
    double log_delta;  // -inf for delta = 0 to working precision
    double x;          // eps + log B - log A; NaN unless asked for
    double slope;      // L' (0 where delta = 0)
    double a1, a2;
};

template <bool kWantX>
inline GaussianPoint gaussian_point(double eps, double d) noexcept {
    using namespace special;
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    const double q = eps / d, a1 = q - 0.5 * d, a2 = q + 0.5 * d;
    const double t1 = a1 * kSqrt1_2, h = d * kSqrt1_2;
    if (a1 > 1e150) return {-kInf, -kInf, 0.0, a1, a2};  // delta underflows far below the double range
    double log_em, m, x = kNaN;  // log_em = log(erfcx(t1) m / 2) = log delta + a1^2 / 2; m = 1 - e^x
    double r;                    // R(a1), the Mills ratio
    if (t1 >= 6.0) {
        // Deep tail: erfcx(t) = (1/sqrt(pi)) / K(t), K(t) = t + (1/2)/(t + 1/(t + (3/2)/(t + ...))) (the
        // continued fraction of erfcx_nonneg), run for t1 and t2 = t1 + h together with the difference
        // D = K(t2) - K(t1) by its own recursion D_{k-1} = h - c_k D_k / (K_k(t1) K_k(t2)), every term
        // positive. Then m = 1 - K(t1) / K(t2) = D / (K(t1) + D). The term counts reach 4e-17 relative in
        // K and in D for any shift (checked against mpmath); fewer are needed as t1 grows.
        const double t2 = t1 + h;
        const int terms = t1 < 10.0 ? (t1 < 7.0 ? 16 : t1 < 8.0 ? 14 : t1 < 9.0 ? 12 : 11)
                                    : t1 < 14.0 ? (t1 < 12.0 ? 10 : 9)
                                    : t1 < 25.0 ? (t1 < 18.0 ? 8 : 7) : t1 < 40.0 ? 6 : 5;
        double k1 = t1, k2 = t2, diff = h;
        for (int k = terms; k >= 1; --k) {
            const double c = 0.5 * k;
            diff = h - c * diff / (k1 * k2);
            k1 = t1 + c / k1;
            k2 = t2 + c / k2;
        }
        const double kd = k1 + diff;
        m = diff / kd;
        r = kSqrt1_2 / k1;
        log_em = std::log(0.5 * kInvSqrtPi * m / k1);
        if (kWantX) x = -std::log1p(diff / k1);
    } else if (a1 > 0.0 || h <= 0.05) {
        // a1 <= 0 means eps <= d^2 / 2, so t1 >= -h / 2 >= -0.025 here: erfcx(t1) = e^{t1^2} erfc(t1) directly.
        const double e1 = t1 >= 0.0 ? erfcx_nonneg(t1) : std::exp(t1 * t1) * std::erfc(t1);
        r = kSqrtPiOver2 * e1;
        if (h <= 0.01 * std::max(t1, 0.0) + 0.05) {
            // erfcx(t1 + h) / erfcx(t1) - 1 = sum_{n >= 1} p_n h^n with p_0 = 1, p_1 = (log erfcx)'(t1) =
            // 2 t1 - 2 / (sqrt(pi) erfcx(t1)) and (n + 1) p_{n+1} = 2 t1 p_n + 2 p_{n-1} (from erfcx' =
            // 2 t erfcx - 2/sqrt(pi)). For t1 >= 0 the terms alternate and shrink by about h / max(t1, 1)
            // <= 0.06, so the first dominates; 10 terms reach 1e-16 (relative error <= 4e-14 against mpmath,
            // from the rounding of p_1 near t1 = 6). For t1 in [-h/2, 0), |p_1| ~ 2 / sqrt(pi) and h <= 0.05.
            constexpr double kInv[11] = {0.0, 1.0, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9, 1.0 / 10};  // 1 / n
            const double b1 = 2.0 * t1 * h, b2 = 2.0 * h * h;
            double q0 = 1.0, q1 = (2.0 * t1 - 2.0 * kInvSqrtPi / e1) * h, sum = q1;
            for (int n = 1; n < 10; ++n) {
                const double q2 = (b1 * q1 + b2 * q0) * kInv[n + 1];
                q0 = q1;
                q1 = q2;
                sum += q2;
            }
            m = -sum;
            if (kWantX) x = std::log1p(sum);
        } else {
            const double e2 = erfcx_nonneg(a2 * kSqrt1_2);
            m = (e1 - e2) / e1;
            if (kWantX) x = std::log(e2 / e1);
        }
        log_em = std::log(0.5 * e1 * m);
    } else {
        // a1 <= 0 with h > 0.05: both tails are moderate, |x| > ~0.05; log_ndtr is accurate there.
        const double la = log_ndtr(-a1);
        const double xx = eps + log_ndtr(-a2) - la;
        if (kWantX) x = xx;
        if (!(xx < 0.0)) return {-kInf, x, 0.0, a1, a2};
        const double ld = la + special::log1mexp(xx);
        return {ld, x, std::exp(std::log(d) + log_npdf(a1) - ld), a1, a2};
    }
    if (!(m > 0.0)) return {-kInf, x, 0.0, a1, a2};
    // e^{-a1^2 / 2} with a1 to about 2^-100 relative: the exact a1 = a1 + a1_lo, where a1_lo gathers the
    // remainder of eps / d (fma) and the rounding of q - d/2 (two-sum). Otherwise the rounding of a1 alone
    // would cost a1^2 2^-53 relative in delta (3e-13 at delta = 1e-300).
    const double a1_lo = std::fma(-q, d, eps) / d + two_sum(q, -0.5 * d).lo;
    const auto [hi, lo] = two_prod(a1, a1);
    return {log_em - 0.5 * hi - (0.5 * lo + a1 * a1_lo), x, d / (r * m), a1, a2};
}

inline ProfilePoint gaussian_profile(double eps, double d) noexcept {
    const GaussianPoint p = gaussian_point<true>(eps, d);
    return {p.log_delta, p.x, p.a2};
}

// The profile in standardised units: shift d = D / s > 0, eps >= 0.
inline ProfilePoint profile_std(const Family& f, double eps, double d, bool precise = true) noexcept {
    if (!(d > 0.0)) return {-kInf, -kInf, kInf};
    if (f.kind() == Kind::Laplace && !f.truncated()) {  // closed form (Theorem 3): 1 - e^{(eps - d)/2}
        if (eps >= d) return {-kInf, -kInf, kInf};
        const double u = 0.5 * (eps + d);
        return {special::log1mexp(0.5 * (eps - d)), eps + f.logsf(u) - f.logsf(u - d), u};
    }
    if (f.kind() == Kind::Gaussian && !f.truncated()) return gaussian_profile(eps, d);
    double u = f.threshold(d, eps);
    if (f.truncated() && u >= f.bound()) {
        // t = a s (Remark 1): delta = S_T(A - d), the mass of the shifted noise beyond the support.
        const double la = f.logsf(f.bound() - d);
        return {la, -kInf, f.bound()};
    }
    if (std::isinf(u)) return {-kInf, -kInf, kInf};
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
            x += special::log1mexp(ls_bound - f.base_logsf(u)) - special::log1mexp(ls_bound - la);
            la += special::log1mexp(ls_bound - la) - f.log_mass();
        }
    } else {
        // u - d <= 0 < u: delta = P(u - d < X <= u) - expm1(eps) S(u) = C(u) + C(d - u) - expm1(eps) S(u)
        // with C(y) = P(0 < X <= y): no cancellation between two tail values close to 1/2.
        const double lsu = f.base_logsf(u);
        const double su = std::exp(lsu);
        // log expm1(eps) without overflow (eps up to the double range)
        const double log_em1 = special::logexpm1(eps, 1.0);
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
        if (!(delta > 0.0)) return {-kInf, -kInf, u};
        if (delta > 0.5 && !f.truncated()) {
            // 1 - delta = S(d - u) + e^eps S(u): log delta from it keeps its relative accuracy as delta -> 1.
            const double rest = std::exp(f.base_logsf(d - u)) + std::exp(eps + lsu);
            return {std::log1p(-rest), std::log1p(-delta / a_lin), u};
        }
        return {std::log(delta), std::log1p(-delta / a_lin), u};
    }
    if (!(x < 0.0)) return {-kInf, x, u, approx};  // delta = 0 to working precision
    return {la + special::log1mexp(x), x, u, approx};
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

// A bound on the rounding error of a log delta evaluation beyond the fixed margin: 8 kappa 2^-53, with
// kappa = d f(u - d) / delta + eps e^eps S(u) / delta the relative condition number of delta in (d, eps)
// (internal roundings of quantities of that size cost that much; the reference suite measures ~3 kappa
// 2^-53 where kappa is large, e.g. 1.5e5 for Subbotin(1.003) at delta = 1e-100).
inline double profile_rounding(const Family& f, double eps, double d, const ProfilePoint& p) noexcept {
    if (p.log_delta == -kInf || !std::isfinite(p.u)) return 0.0;
    const double kd = std::exp(std::log(d) + f.logpdf(p.u - d) - p.log_delta);
    const double ke = p.x == -kInf ? 0.0 : eps * std::exp(p.x) / (-std::expm1(p.x));
    return 8.0 * 0x1p-53 * (std::isfinite(kd) ? kd : 0.0) + 8.0 * 0x1p-53 * (std::isfinite(ke) ? ke : 0.0);
}

// A calibration's outcome: the library's Status (pydp/status.hpp), one of these five.
using pydp::Status;
inline constexpr Status kOk = Status::ok;
inline constexpr Status kNoFiniteScale = Status::no_finite_scale;
inline constexpr Status kVerifyFailed = Status::verify_failed;
inline constexpr Status kNoConvergence = Status::no_convergence;
inline constexpr Status kScaleOverflow = Status::scale_overflow;

// The safety margin on log delta that the solvers demand of the library's own evaluation, so that the
// exact delta meets the target despite rounding: 1e-12 relative on delta, and 1e-12 relative on 1 - delta
// as delta -> 1 (where log delta ~ -(1 - delta) carries the information and a fixed margin would swamp it).
inline double log_delta_margin(double log_target) noexcept {
    return 1e-12 * std::min(1.0, -2.0 * log_target);
}

// The largest standardised shift d = D / s with log delta(eps, d) <= log_target, found by safeguarded
// Newton on v = log d (log delta is increasing in d). `shift` is d (> 0) when status == kOk, else 0.
struct MaxShift {
    double shift;
    Status status;
};

// A calibrated noise scale: `scale` is the verified minimal scale s when status == kOk, else 0.
struct MinimalScale {
    double scale;
    Status status;
};

inline MaxShift max_shift(const Family& f, double eps, double log_target) noexcept {
    // Fast exact paths (Theorem 3, Theorem 4).
    // log(1 - delta) from log delta directly: as delta -> 1 the margin below log delta is finer than the
    // spacing of the doubles near 1, so delta itself must not be formed.
    if (!f.truncated() && f.kind() == Kind::Laplace) return {eps - 2.0 * special::log1mexp(log_target), kOk};
    if (!f.truncated() && f.kind() == Kind::Logistic) {
        const double delta = std::exp(log_target);
        // 2 log((e^{eps/2} + sqrt(delta (e^eps + delta - 1))) / (1 - delta)), rearranged to avoid overflow.
        // sqrt(delta (1 - (1 - delta) e^-eps)) as a product of square roots: delta^2 underflows below 1e-154.
        const double inner = delta * std::exp(-eps) - std::expm1(-eps);
        return {eps + 2.0 * std::log1p(std::sqrt(delta) * std::sqrt(std::max(inner, 0.0))) - 2.0 * special::log1mexp(log_target), kOk};
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
        return p.log_delta + profile_rounding(f, eps, d, p) - log_target;  // aim where the verification holds
    };
    // Starting point: the classic Gaussian calibration, d = eps / sqrt(2 log(1.25 / delta)), or the
    // total-variation slope when eps = 0.
    const double lt = std::min(log_target, std::log(0.5));
    double v = eps > 0.0 ? std::log(eps) - 0.5 * std::log(2.0 * (std::log(1.25) - lt)) : lt + 0.9189385332046727;
    // Safeguarded Newton on v = log d: keep the bracket g(lo) <= 0 < g(hi), fall back to bisection (or
    // unit steps before a bracket exists), and finish only with lo verified private and hi within ~1e-14.
    double lo = -kInf, hi = kInf, slope = 0.0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            if (!std::isfinite(lo)) break;
            precise = true;
            v = lo;
            lo = -kInf;
            // The fast root is within ~1e-12 of the precise one: hi + 1e-6 still bounds the search (should it
            // not, the answer stays verified private, only less tight).
            hi = hi + 1e-6;
        }
        double gv = g(v, &slope);
        int slow = 0;  // consecutive Newton moves shorter than 1% of a finite bracket
        for (int it = 0; it < 400; ++it) {
            if (gv <= 0.0) lo = std::max(lo, v); else hi = std::min(hi, v);
            const double tol = 4e-15 * std::max(1.0, std::fabs(v));
            if (hi - lo <= 2.0 * tol) break;
            double next;
            const bool newton_ok = std::isfinite(gv) && slope > 0.0 && std::isfinite(slope);
            const double step = newton_ok ? -gv / slope : 0.0;
            // A step below tol far from the root (|g| > 1e-3) is a log delta too steep for Newton's model
            // (a threshold far out in a heavy tail): moving by tol would crawl, so step as without a slope
            // (a unit step, or bisection inside a bracket).
            if (newton_ok && (std::fabs(step) > tol || std::fabs(gv) <= 1e-3)) {
                if (std::fabs(step) <= tol) next = gv <= 0.0 ? v + tol : v - tol;  // straddle the root
                else next = v + std::clamp(step, -8.0, 8.0);
            } else {
                next = v + (gv <= 0.0 ? 1.0 : -1.0);
            }
            if (!(next > lo && next < hi)) {
                if (std::isfinite(lo) && std::isfinite(hi)) next = 0.5 * (lo + hi);
                else next = std::isfinite(lo) ? lo + 1.0 : hi - 1.0;
            }
            // Where log delta bends sharply (a threshold far out in a heavy tail, e.g. Subbotin r ~ 1 with eps
            // just above the shift) Newton crawls from the convex side: after 4 short moves while log delta is
            // still far from the target (near it Newton converges quadratically), bisect.
            slow = std::isfinite(hi - lo) && std::fabs(next - v) < 0.01 * (hi - lo) && std::fabs(gv) > 1e-3 ? slow + 1 : 0;
            if (slow >= 4) {
                next = 0.5 * (lo + hi);
                slow = 0;
            }
            // The shift below e^-745 is below every double (the scale D / d overflows with it); above
            // e^700 the solver has left its range.
            if (next < -745.0) return {0.0, kScaleOverflow};
            if (next > 700.0) return {0.0, kNoConvergence};
            v = next;
            gv = g(v, &slope);
        }
        if (!approx_seen) break;  // the fast evaluations were exact: no precise pass needed
    }
    if (!std::isfinite(lo)) return {0.0, kNoConvergence};
    return {std::exp(lo), kOk};
}

// Starting point for the Gaussian shift d (lt = log delta <= log(1/2)). With a = a1 = eps/d - d/2,
// d = 2 eps / (sqrt(a^2 + 2 eps) + a) and a2 = a + d = sqrt(a^2 + 2 eps), exactly
// delta = phi(a1) (R(a1) - R(a2)) (e^eps phi(a2) = phi(a1)), R the Mills ratio. First a ~ -Phi^{-1}(delta)
// (A&S 26.2.23); then, for a > 2, two Newton steps on that equation with R replaced by its continued-
// fraction convergent r(a) = (a^4 + 9 a^2 + 8) / (a (a^4 + 10 a^2 + 15)) (relative error 2.8e-5 at a = 4,
// 7e-8 at a = 8), whose difference r(a1) - r(a2) = d Q / (den(a1) den(a2)) is free of cancellation:
// with p = a1 a2 and q = a1^2 + a2^2,
//   Q = p^4 - p^3 + 9 p^2 q + 67 p^2 + 8 q^2 - 7 p q + 80 q - 55 p + 120   (every negative term dominated
// for a > 2), and d/da log(R(a1) - R(a2)) - a = -d / (a2 (R(a1) - R(a2))) from R' = a R - 1.
// On the benchmark grid this leaves ~1e-8 relative in d (median), 1e-5 for delta in [1e-8, 1e-3].
inline double gaussian_start(double eps, double lt) noexcept {
    const double t = std::sqrt(-2.0 * lt);
    double a = t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
    double a2 = std::sqrt(a * a + 2.0 * eps), d = a > 0.0 ? 2.0 * eps / (a2 + a) : a2 - a;
    bool model = a > 2.0;
    for (int k = 0; k < 2 && model; ++k) {
        const double p = a * a2, q = a * a + a2 * a2, p2 = p * p;
        const double big_q = p2 * (p2 - p + 9.0 * q + 67.0) + q * (8.0 * q - 7.0 * p + 80.0) - 55.0 * p + 120.0;
        const double den = a * (a * a * (a * a + 10.0) + 15.0) * a2 * (a2 * a2 * (a2 * a2 + 10.0) + 15.0);
        const double ratio = big_q / den;  // (r(a1) - r(a2)) / d
        const double f = std::log(d * ratio) - 0.5 * a * a - special::kLogSqrt2Pi - lt;
        const double next = a + f * a2 * ratio;  // f' = -d / (a2 (r(a1) - r(a2))) = -1 / (a2 ratio)
        model = next > 2.0;
        if (!model) break;  // outside the tail model (e.g. eps << d^2, where a1 ~ 0)
        a = next;
        a2 = std::sqrt(a * a + 2.0 * eps);
        d = 2.0 * eps / (a2 + a);
    }
    // delta(d) <= TV(d) = 2 Phi(d/2) - 1 <= d phi(0), so the root has d >= delta sqrt(2 pi): the answer
    // when eps -> 0, and a floor wherever the tail model was not used (a1 ~ 0 defeats it).
    // 2.5066282746310002 is sqrt(2 pi) rounded down (one ulp below the nearest double): a floor must not
    // exceed the root.
    if (!model) d = std::max(d, std::exp(lt) * 2.5066282746310002);
    return std::isfinite(d) && d > 0.0 ? d : 1.0;
}

// The Gaussian minimal scale for log delta <= log_target (the margin already subtracted): Halley's
// iteration on the shift d, with the analytic L' and L'' of gaussian_point (in d: step d N / (1 + N (a1 a2
// - L') / 2), N the Newton step in log d), aimed at the middle of the acceptance window
// [d* (1 - 2 tol), d*]. Each iterate stands for the scale s = D / d and is evaluated at exactly the shift
// log_privacy_profile uses for s (shift_up(D, s)), so the scale returned is one at which the library's own
// evaluation of the condition was made and held: no separate verification pass. A bracket [lo, hi]
// (lo private, hi not) is kept; a step leaving it bisects (geometrically), and before a bracket exists
// the shift moves by factors of e, so the iteration cannot fail open.
inline MinimalScale gaussian_minimal_scale(double eps, double log_target, double sensitivity) noexcept {
    if (log_target == -kInf) return {0.0, kNoFiniteScale};
    constexpr double tol = 5e-15;
    using special::kE;
    double d = gaussian_start(eps, std::min(log_target, std::log(0.5)));
    double lo = 0.0, hi = kInf, s_lo = 0.0;  // lo = 0: no private point yet
    for (int it = 0; it < 400; ++it) {
        const double s = sensitivity / d;
        if (!(s <= std::numeric_limits<double>::max())) return {0.0, kScaleOverflow};
        if (!(d > 1e-304 && d < 1e304) || !(s > 0.0)) return {0.0, kNoConvergence};  // the solver's range
        const GaussianPoint p = gaussian_point<false>(eps, shift_up(sensitivity, s));
        const double g = p.log_delta - log_target;
        const bool slope_ok = p.slope > 0.0 && p.slope <= std::numeric_limits<double>::max();
        if (g <= 0.0) {
            if (d > lo) {
                lo = d;
                s_lo = s;
            }
            if (slope_ok && -g <= 2.0 * tol * p.slope) return {s, kOk};  // within 2 tol below the root
        } else {
            hi = std::min(hi, d);
        }
        if (lo > 0.0 && hi < kInf && hi - lo <= 2.0 * tol * hi) return {s_lo, kOk};
        double next;
        if (slope_ok && std::isfinite(g)) {
            const double r0 = g + tol * p.slope;  // aim at g = -tol L', i.e. log d* - tol
            double step = -r0 / p.slope;           // Newton, in log d
            if (std::fabs(step) < 0.5) {
                // Root of the cubic Taylor model r0 + L' (x + A x^2 + B x^3) = 0 of log delta in x = change
                // of log d, by series reversion: x = N - A N^2 + (2 A^2 - B) N^3 + O(N^4), N the Newton step;
                // fourth order, so a start 1e-4 off lands inside the window. With b = 1 + a1 a2,
                // A = L2 / (2 L') = (b - L') / 2 and B = L3 / (6 L') = (b^2 - a1^2 - a2^2 - 3 L2 - L'^2) / 6,
                // L2 = L' (b - L') and L3 the second and third derivatives (d delta / d log d = d phi(a1),
                // d (a1 a2) / d log d = -(a1^2 + a2^2)).
                const double y1 = p.slope, b = 1.0 + p.a1 * p.a2;
                const double ca = 0.5 * (b - y1);
                const double cb = (b * b - p.a1 * p.a1 - p.a2 * p.a2 - 3.0 * y1 * (b - y1) - y1 * y1) * (1.0 / 6);
                const double corr = step * step * (step * (2.0 * ca * ca - cb) - ca);
                if (std::fabs(corr) <= 0.5 * std::fabs(step)) step += corr;  // else keep Newton's step
                next = std::fabs(step) < 1e-3 ? d + d * (step * (1.0 + step * (0.5 + step * (1.0 / 6 + step * (1.0 / 24)))))
                                              : d * std::exp(step);
            } else {
                next = d * std::exp(std::clamp(step, -8.0, 8.0));
            }
        } else {
            next = g <= 0.0 ? d * kE : d / kE;
        }
        if (!(next > lo && next < hi)) {
            if (lo > 0.0 && hi < kInf) next = std::sqrt(lo) * std::sqrt(hi);
            else next = lo > 0.0 ? lo * kE : hi / kE;
        }
        d = next;
    }
    if (lo > 0.0) return {s_lo, kOk};
    return {0.0, kNoConvergence};
}

// The minimal scale s (>= the exact one, within 1e-12 relative) for (eps, delta); verified: the condition
// log_privacy_profile(f, eps, s, D) <= log delta - margin holds at the returned s (the Gaussian solver
// accepts only scales where it evaluated exactly that; the others are re-evaluated below).
inline MinimalScale minimal_scale(const Family& f, double eps, double delta, double sensitivity) noexcept {
    eps = std::min(eps, eps_cap(f));  // conservative beyond the evaluated range
    if (delta == 0.0) {
        if (!f.mlr_bounded() || f.truncated() || eps == 0.0) return {0.0, kNoFiniteScale};
        double s = sensitivity / eps;  // t = inf: (eps, 0)-DP iff D / s <= eps, i.e. s * eps >= D exactly.
        // fma gives the sign of s * eps - D exactly; the rounded quotient D / s can hide D / s > eps.
        while (std::fma(s, eps, -sensitivity) < 0.0) s = std::nextafter(s, kInf);
        if (!std::isfinite(s)) return {0.0, kScaleOverflow};
        return {s, kOk};
    }
    const double log_target = std::log(delta);
    const double margin = log_delta_margin(log_target);
    if (f.kind() == Kind::Gaussian && !f.truncated()) return gaussian_minimal_scale(eps, log_target - margin, sensitivity);
    const MaxShift r = max_shift(f, eps, log_target - margin);
    if (r.status != kOk) return {0.0, r.status};
    if (!(r.shift > 0.0)) return {0.0, kScaleOverflow};  // the shift underflowed: s = D / d is beyond the doubles
    if (!std::isfinite(r.shift)) return {0.0, kNoFiniteScale};
    double s = sensitivity / r.shift;
    if (!std::isfinite(s)) return {0.0, kScaleOverflow};
    // The exact shift D / s must not exceed the verified shift r.shift: s * r.shift >= D exactly (fma sign).
    while (std::fma(s, r.shift, -sensitivity) < 0.0) s = std::nextafter(s, kInf);
    // Verify, with the rounding bound of the evaluation, nudging up by ulps if the division rounded the
    // wrong way or the condition is steep (the same evaluation as log_privacy_profile).
    for (int i = 0; i < 64; ++i) {
        const double d = shift_up(sensitivity, s);
        const ProfilePoint p = profile_std(f, eps, d);
        if (p.log_delta + profile_rounding(f, eps, d, p) <= log_target - 0.5 * margin) return {s, kOk};
        s = std::nextafter(s, kInf) * (1.0 + 1e-15 * i);
        if (!std::isfinite(s)) return {0.0, kScaleOverflow};
    }
    return {s, kVerifyFailed};
}

namespace detail {
// The smallest eps >= 0 with delta(eps) <= delta at the standardised shift d, rounded up: the exact delta
// at the returned eps does not exceed delta. The solver accepts an eps only where the library's own log
// delta is below log delta by log_delta_margin (which covers its rounding); so just below the total
// variation delta(0), where eps -> 0 and the equation is ill-conditioned, the answer may exceed the exact
// eps by the margin divided by |d log delta / d eps|, but it is never below it.
// Returns +inf when no finite eps reaches delta (bounded support with mass beyond it).
inline double epsilon_log_space(const Family& f, double delta, double d) noexcept {
    if (!(d > 0.0)) return 0.0;
    if (delta >= 1.0) return 0.0;
    if (!f.truncated() && f.kind() == Kind::Laplace) {
        // Theorem 3 inverted, eps = d + 2 log(1 - delta) (exactly d at delta = 0), plus a bound on its
        // rounding: log1p within 1 ulp and one addition, covered by 2^-50 |2 log(1 - delta)| + 2^-51 |eps|.
        if (delta == 0.0) return d;
        const double l2 = 2.0 * std::log1p(-delta), e0 = d + l2;
        const double e = e0 + (0x1p-50 * -l2 + 0x1p-51 * std::fabs(e0));
        return e > 0.0 ? std::nextafter(e, kInf) : 0.0;
    }
    const double log_target = delta > 0.0 ? std::log(delta) - log_delta_margin(std::log(delta)) : -kInf;
    auto g = [&](double eps, double* slope) {
        const ProfilePoint p = profile_std(f, eps, d);
        if (slope) {  // d log delta / d eps = -e^x / (-expm1(x))
            *slope = (p.log_delta == -kInf || p.x == -kInf) ? 0.0 : -std::exp(p.x) / (-std::expm1(p.x));
        }
        return p.log_delta + profile_rounding(f, eps, d, p) - log_target;
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

// ---- the Gaussian's epsilon just below the total variation ----------------------------------------
// As delta -> TV = delta(0) = erf(mu / (2 sqrt 2)) (mu = d, the standardised shift), eps -> 0 and the
// problem is ill-conditioned in the form delta(eps) = target: the condition number delta / (eps |delta'|)
// grows like 1 / eps, so the digits of delta lost to rounding cost that many digits of eps. Written instead as
//   g(eps) = TV - delta(eps) = r := TV - target,
//   g(eps) = 2 phi(m) int_0^a e^{-s^2/2} sinh(m s) ds + expm1(eps) Phi(-m - a),   m = mu/2, a = eps/mu,
// (the two end slivers that separate TV from the central probability, folded by symmetry into one
// positive integrand), every term is positive and g is well conditioned (g ~ eps Phi(-m)). The only
// cancellation left is in r, which is formed exactly from TV in double-double arithmetic.

// erf(mu / (2 sqrt 2)) in double-double by its Taylor series. For mu <= 8 (argument <= 2.83) the largest
// term is below 1e3, so at most 3 of the ~32 digits are lost to the alternating signs; <= 110 terms.
inline special::DD gaussian_total_variation_dd(double mu) noexcept {
    using special::DD;
    const DD c{0.3535533905932738, -2.4168233283632284e-17};  // 1 / (2 sqrt 2)
    const DD two_over_sqrt_pi{1.1283791670955126, 1.533545961316588e-17};
    const DD x = special::dd_mul(DD{mu, 0.0}, c);
    const DD x2 = special::dd_mul(x, x);
    DD term = x;  // x^(2n+1) / n!
    DD sum = x;
    for (int n = 1; n < 200; ++n) {
        term = special::dd_div(special::dd_mul(term, x2), static_cast<double>(n));
        DD t = special::dd_div(term, static_cast<double>(2 * n + 1));
        if (n % 2) t = DD{-t.hi, -t.lo};
        sum = special::dd_add(sum, t);
        if (std::fabs(t.hi) < 1e-34 * sum.hi) break;
    }
    return special::dd_mul(sum, two_over_sqrt_pi);
}

// g(eps) = TV - delta(eps) and g'(eps) = e^eps Phi(-m - a), for mu <= 8 and a = eps / mu <= 1.
inline double gaussian_gap_below_tv(double mu, double eps, double* slope) noexcept {
    const double m = 0.5 * mu, a = eps / mu;
    // int_0^a e^{-s^2/2} sinh(m s) ds by 10-point Gauss-Legendre
    const double s = special::gauss_legendre10([m](double u) { return std::exp(-0.5 * u * u) * std::sinh(m * u); }, 0.0, a);
    const double phi_m = special::kInvSqrt2Pi * std::exp(-0.5 * m * m);
    const double pc = special::ndtr(-m - a);
    if (slope) *slope = std::exp(eps) * pc;
    return 2.0 * phi_m * s + std::expm1(eps) * pc;
}

// The exact epsilon of the untruncated Gaussian (mu-GDP, mu = d) at delta, rounded up; NaN outside the
// domain, 0 for mu = 0, +inf for delta = 0 and mu > 0. The log-space solver gives the answer
// (conservatively, see epsilon_log_space) except where the problem is ill-conditioned (cond > 1e3: delta
// just below the total variation, mu <= 8); there Newton on g(eps) = r above recovers full relative
// accuracy. Its answer is certified by g(eps) >= r_up (1 + 1e-13): r_up bounds r from above (the
// double-double total variation is good to ~1e-30 absolute) and 1e-13 covers the rounding of g (every
// term positive; quadrature and ndtr to a few ulps).
inline double gaussian_epsilon(const Family& gauss, double mu, double delta) noexcept {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    if (!(mu >= 0.0) || !(delta >= 0.0) || !(delta <= 1.0)) return kNaN;
    if (mu == 0.0 || delta >= 1.0) return 0.0;
    if (std::isinf(mu)) return kInf;
    const double eps = epsilon_log_space(gauss, delta, mu);
    if (!(mu <= 8.0) || !(eps <= 0.5 * mu)) return eps;
    if (eps > 0.0 && delta < 1e-3 * eps * std::exp(eps) * special::ndtr(-0.5 * mu - eps / mu)) return eps;
    const special::DD tv = gaussian_total_variation_dd(mu);
    const special::DD rr = special::dd_add(tv, special::DD{-delta, 0.0});
    const double r_up = (rr.hi + rr.lo) + 1e-28 * tv.hi;
    if (!(r_up > 0.0)) return 0.0;  // delta >= TV: (0, delta)-DP
    const double r = r_up * (1.0 + 1e-13);  // the gap to certify
    double slope = 0.0;
    gaussian_gap_below_tv(mu, 0.0, &slope);
    double e = eps > 0.0 ? eps : r / slope;
    for (int it = 0; it < 20; ++it) {
        if (!(e / mu <= 1.0)) return eps;
        const double g = gaussian_gap_below_tv(mu, e, &slope);
        const double next = e - (g - r) / slope;
        const bool done = std::fabs(next - e) <= 2e-16 * e;
        e = next > 0.0 ? next : 0.5 * e;
        if (done) break;
    }
    // round up until g(e) >= r, i.e. delta(e) <= delta with the margin
    for (int i = 0; i < 64; ++i) {
        if (!(e / mu <= 1.0)) return eps;
        if (gaussian_gap_below_tv(mu, e, nullptr) >= r) return std::min(e, eps);
        e = std::nextafter(e, kInf) * (1.0 + 1e-16 * i);
    }
    return eps;
}
}  // namespace detail

// The smallest eps >= 0 with delta(eps) <= delta for noise f at this scale and sensitivity, rounded up
// (the exact delta at the returned eps does not exceed delta); +inf when no finite eps reaches delta. The
// one entry point of the bindings (Python and C) and of the accounting layer's GDP epsilon. Evaluated at
// the shift D / s rounded up. For the untruncated Gaussian with refine_near_tv (the default), just below
// the total variation, where eps -> 0 and the log-space solver is only conservative, the well-conditioned
// form above gives the exact eps to full relative accuracy (detail::gaussian_epsilon); refine_near_tv =
// false gives the log-space solver's answer for every family (never below the exact eps, possibly above
// it by the solver's margin there).
inline double epsilon_for_delta(const Family& f, double delta, double scale, double sensitivity,
                                bool refine_near_tv = true) noexcept {
    const double d = shift_up(sensitivity, scale);
    if (refine_near_tv && f.kind() == Kind::Gaussian && !f.truncated()) return detail::gaussian_epsilon(f, d, delta);
    return detail::epsilon_log_space(f, delta, d);
}

}  // namespace pydp::calibration
