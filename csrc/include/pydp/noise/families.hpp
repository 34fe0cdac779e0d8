// Standard (unit-scale) symmetric log-concave noise families: Laplace, Gaussian, Logistic, Subbotin_r
// (r >= 1), each optionally truncated to (-A, A). Density f = exp(-psi), psi convex and even.
//
// Subbotin_r: f_r(x) = exp(-|x|^r / r) / C(r), C(r) = 2 Gamma(1/r) r^(1/r - 1), and with a = 1/r,
// P(X > x) = Q(a, x^r / r) / 2 for x >= 0. Subbotin(1) is the Laplace and Subbotin(2) the Gaussian
// family: they dispatch to the same kernels, so they give identical answers.
// Truncation to (-A, A): f_T = f / M on (-A, A), M = 1 - 2 S(A), S_T(x) = (S(x) - S(A)) / M.
#pragma once
#include <cmath>
#include <limits>
#include <stdexcept>

#include "pydp/special/constants.hpp"
#include "pydp/special/igamma.hpp"
#include "pydp/special/logexp.hpp"
#include "pydp/special/normal.hpp"

namespace pydp::noise {

enum class Kind { Laplace = 0, Gaussian = 1, Logistic = 2, Subbotin = 3 };

class Family {
public:
    static Family make(Kind kind, double r = 0.0, double bound = std::numeric_limits<double>::infinity()) {
        Family f;
        if (kind == Kind::Subbotin) {
            if (!(r >= 1.0) || !std::isfinite(r)) throw std::domain_error("Subbotin order r must be finite and >= 1");
            if (r == 1.0) kind = Kind::Laplace;
            else if (r == 2.0) kind = Kind::Gaussian;
        }
        f.kind_ = kind;
        f.r_ = kind == Kind::Laplace ? 1.0 : kind == Kind::Gaussian ? 2.0 : r;
        if (kind == Kind::Subbotin) {
            f.a_ = 1.0 / f.r_;
            f.log_r_ = std::log(f.r_);
            f.lg1p_a_ = special::lgamma1p(f.a_);
            const double lgamma_a = f.lg1p_a_ - std::log(f.a_);
            f.log_c_ = special::kLn2 + lgamma_a + (f.a_ - 1.0) * f.log_r_;
        }
        if (!(bound > 0.0)) throw std::domain_error("truncation bound must be > 0");
        f.bound_ = bound;
        if (std::isfinite(bound)) {
            const double ls = f.base_logsf(bound);
            f.log_mass_ = std::log1p(-2.0 * std::exp(ls));
        }
        return f;
    }

    Kind kind() const noexcept { return kind_; }
    double r() const noexcept { return r_; }
    double bound() const noexcept { return bound_; }
    bool truncated() const noexcept { return std::isfinite(bound_); }
    double log_mass() const noexcept { return log_mass_; }  // log(1 - 2 S(bound)); 0 untruncated
    // MLR-bounded families (Laplace, Logistic) reach (eps, 0)-DP; the others need delta > 0.
    bool mlr_bounded() const noexcept { return kind_ == Kind::Laplace || kind_ == Kind::Logistic; }

    // ----- densities and tails -------------------------------------------------------------------
    double logpdf(double x) const noexcept {
        if (std::isnan(x)) return x;
        const double ax = std::fabs(x);
        if (truncated()) {
            if (ax >= bound_) return -inf();
            return base_logpdf(ax) - log_mass_;
        }
        return base_logpdf(ax);
    }
    double logsf(double x) const noexcept {
        if (std::isnan(x)) return x;
        if (!truncated()) return base_logsf(x);
        if (x <= -bound_) return 0.0;
        if (x >= bound_) return -inf();
        // x < 0: log(1 - S_T(-x)); the three-term form below cancels to ~1e-16 absolute there, which is
        // all of a log value of size S_T(-x) (it even turned positive next to -bound).
        if (x < 0.0) return std::log1p(-std::exp(logsf(-x)));
        const double ls = base_logsf(x), la = base_logsf(bound_);
        return ls + special::log1mexp(la - ls) - log_mass_;
    }
    double logcdf(double x) const noexcept { return logsf(-x); }
    double sf(double x) const noexcept {
        if (std::isnan(x)) return x;
        if (truncated() || x < 0.0) return std::exp(logsf(x));
        return base_sf_pos(x);
    }
    double cdf(double x) const noexcept {
        if (std::isnan(x)) return x;
        if (x > 0.0) return -std::expm1(logsf(x));
        return sf(-x);
    }
    double pdf(double x) const noexcept { return std::exp(logpdf(x)); }

    // Inverse CDF; NaN outside [0, 1].
    double ppf(double p) const noexcept {
        if (!(p >= 0.0 && p <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
        if (p == 0.5) return 0.0;
        const bool upper = p > 0.5;
        const double q = upper ? 1.0 - p : p;  // exact for p >= 1/2
        const double x = isf_lower_tail(q);     // >= 0, with P(X > x) = q
        return upper ? x : -x;
    }

    double variance() const noexcept {  // untruncated families only (the Python layer integrates truncations)
        switch (kind_) {
            case Kind::Laplace: return 2.0;
            case Kind::Gaussian: return 1.0;
            case Kind::Logistic: return special::kPi * special::kPi / 3.0;
            default: return std::exp(2.0 * a_ * log_r_ + std::lgamma(3.0 * a_) - std::lgamma(a_));
        }
    }

    // ----- pieces of the privacy condition (standardised units) ----------------------------------
    // L(u) = psi(u) - psi(u - d) for u >= d / 2, computed without cancellation.
    double psi_diff(double u, double d) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return std::fabs(u) - std::fabs(u - d);
            case Kind::Gaussian: return d * (u - 0.5 * d);
            case Kind::Logistic: {  // psi(x) = |x| + 2 log1p(e^{-|x|}); |u| - |u - d| is d exactly for u >= d
                const double v = std::fabs(u - d);
                if (u >= d) {  // log1p(e^-u) - log1p(e^-v) = log1p(e^-v expm1(-d) / (1 + e^-v)), v = u - d
                    const double ev = std::exp(-v);
                    return d + 2.0 * std::log1p(ev * std::expm1(-d) / (1.0 + ev));
                }
                return (2.0 * u - d) + 2.0 * (special::log1pexp(-u) - special::log1pexp(-v));
            }
            default: {  // (u^r - |u - d|^r) / r = -u^r expm1(r log(|u - d| / u)) / r, no cancellation
                const double rel = u >= d ? -d / u : (d - 2.0 * u) / u;  // |u - d| / u - 1
                return -std::exp(r_ * std::log(u)) * std::expm1(r_ * std::log1p(rel)) / r_;
            }
        }
    }

    // The threshold u = sup{z : psi(z) - psi(z - d) <= eps} of the untruncated family, z > d/2;
    // +inf when the sup is unbounded (MLR-bounded families with eps >= d).
    double threshold(double d, double eps) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return eps >= d ? inf() : 0.5 * (eps + d);
            case Kind::Gaussian: return eps / d + 0.5 * d;
            case Kind::Logistic:
                if (eps >= d) return inf();
                // cosh(u/2) = e^{eps/2} cosh((u - d)/2)  =>  e^u = expm1((eps+d)/2) / -expm1((eps-d)/2).
                // log expm1(h) = h + log1p(-e^-h) for h > 1: expm1 overflows once eps + d > 1419.6.
                return special::logexpm1(0.5 * (eps + d), 1.0) - special::log1mexp(0.5 * (eps - d));
            default: return subbotin_threshold(d, eps);
        }
    }

    // log of the Mills ratio S(y) / f(y) of the untruncated family for y >= 0; its tail factor cancels.
    double log_mills(double y) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return 0.0;
            case Kind::Gaussian: return special::log_mills_normal(y);
            case Kind::Logistic: return special::log1pexp(-y);  // (1 + e^y) / e^y
            default: {
                // log R = log_qs + log y - log r = log(z h) - (r - 1) log y
                return subbotin_gamma(y).log_xh - (r_ - 1.0) * std::log(y);
            }
        }
    }

    // psi'(y) for y > 0 (the hazard rate's leading term).
    double dpsi(double y) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return 1.0;
            case Kind::Gaussian: return y;
            case Kind::Logistic: return std::tanh(0.5 * y);  // (1 - e^-y) / (1 + e^-y)
            default: return std::exp((r_ - 1.0) * std::log(y));
        }
    }

    // (log R)'(y) = psi'(y) - 1/R(y) for y > 0, R the Mills ratio of the untruncated family.
    double dlog_mills(double y) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return 0.0;
            case Kind::Logistic: return -1.0 / (1.0 + std::exp(y));  // d/dy log1p(e^-y), no cancellation
            case Kind::Subbotin: return -dpsi(y) * std::expm1(-mills_excess(y));  // psi' (1 - 1/(R psi'))
            default: return dpsi(y) - std::exp(-log_mills(y));
        }
    }

    // E(y) = log(R(y) psi'(y)) for y > 0 (Subbotin: log(z h(z)), which tends to 0 in the tail).
    double mills_excess(double y) const noexcept {
        if (kind_ == Kind::Subbotin) return subbotin_gamma(y).log_xh;
        return log_mills(y) + std::log(dpsi(y));
    }

    // C(y) = P(0 < X <= y) = 1/2 - S(y) for y >= 0 of the untruncated family, accurate for small y.
    double central(double y) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return -0.5 * std::expm1(-y);
            case Kind::Gaussian: return 0.5 * std::erf(y * special::kSqrt1_2);
            case Kind::Logistic: return 0.5 * std::tanh(0.5 * y);
            default: return 0.5 * subbotin_gamma(y).p;
        }
    }

    // log S(y) and log R(y) = log(S(y) / f(y)) for y >= 0 together (one incomplete gamma evaluation).
    // For Subbotin, *excess (if given) receives E(y) = log(R(y) psi'(y)) from the same evaluation.
    void log_sf_mills(double y, double* log_sf, double* log_r, double* excess = nullptr) const noexcept {
        if (kind_ == Kind::Subbotin) {
            const special::IncGamma g = subbotin_gamma(y);
            *log_sf = g.log_q - special::kLn2;
            *log_r = g.log_xh - (r_ - 1.0) * std::log(y);
            if (excess) *excess = g.log_xh;
            return;
        }
        *log_sf = base_logsf(y);
        *log_r = log_mills(y);
    }

    double base_logsf(double x) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return x >= 0.0 ? -x - special::kLn2 : std::log1p(-0.5 * std::exp(x));
            case Kind::Gaussian: return special::log_ndtr(-x);
            case Kind::Logistic: return -special::log1pexp(x);
            default: {
                const special::IncGamma g = subbotin_gamma(std::fabs(x));
                return x >= 0.0 ? g.log_q - special::kLn2 : std::log1p(-0.5 * g.q);
            }
        }
    }

private:
    static constexpr double inf() noexcept { return std::numeric_limits<double>::infinity(); }

    double base_logpdf(double ax) const noexcept {
        switch (kind_) {
            case Kind::Laplace: return -ax - special::kLn2;
            case Kind::Gaussian: return special::log_npdf(ax);
            case Kind::Logistic: return -ax - 2.0 * special::log1pexp(-ax);
            default: return -std::pow(ax, r_) / r_ - log_c_;
        }
    }
    double base_sf_pos(double x) const noexcept {  // x >= 0
        switch (kind_) {
            case Kind::Laplace: return 0.5 * std::exp(-x);
            case Kind::Gaussian: return special::ndtr(-x);
            case Kind::Logistic: return 1.0 / (1.0 + std::exp(x));
            default: return 0.5 * subbotin_gamma(x).q;
        }
    }

    // x >= 0 with P(X > x) = q for q in [0, 1/2].
    double isf_lower_tail(double q) const noexcept {
        if (q == 0.0) return truncated() ? bound_ : inf();
        double log_q = std::log(q);
        if (truncated()) {  // S_T(x) = q  <=>  S(x) = q M + S(A)
            const double la = base_logsf(bound_);
            const double lq = log_q + log_mass_;
            log_q = special::log_add_exp(lq, la);
        }
        switch (kind_) {
            case Kind::Laplace: return -special::kLn2 - log_q;
            case Kind::Gaussian: return -special::ndtri_lower_log(log_q);
            case Kind::Logistic: return std::log1p(-std::exp(log_q)) - log_q;  // S(x) = 1 / (1 + e^x)
            default: {
                const double z = special::incgamma_q_inv_log(a_, log_q + special::kLn2);
                if (z < 1e-250) {  // x^r / r underflows near the median for large r: P = x r^-a / Gamma(1 + a)
                    const double log_p = special::log1mexp(log_q + special::kLn2);
                    return std::exp(log_p + special::lgamma1p(a_) + a_ * log_r_);
                }
                return std::pow(r_ * z, a_);
            }
        }
    }
    // P, Q (a = 1/r, z = |x|^r / r) at ax = |x|, without forming z where it would underflow (small |x|,
    // large r: Subbotin(50).sf(1e-8) was exactly 1/2). For z < 1e-250, P = z^a / Gamma(1 + a) to relative
    // 1e-250, and z^a = ax r^-a needs no power of ax.
    special::IncGamma subbotin_gamma(double ax) const noexcept {
        if (!(r_ * std::log(ax) - log_r_ < -575.0)) return special::incgamma(a_, std::pow(ax, r_) / r_, lg1p_a_, (r_ - 1.0) / r_);
        const double lza = std::log(ax) - a_ * log_r_;  // a log z
        const double lg1p = lg1p_a_;
        const double log_p = lza - lg1p;
        const double p = std::exp(log_p);
        const double log_q = std::log1p(-p);
        const double lqs = log_q - lza + (lg1p - std::log(a_));
        return {p, -std::expm1(log_p), log_p, log_q, lqs, lqs + lza * r_};  // log z = (a log z) r
    }
    double subbotin_threshold(double d, double eps) const noexcept {
        const double half = 0.5 * d;
        if (eps <= 0.0) return half;
        // L(u) = psi(u) - psi(u - d) increases from 0 at u = d/2 and L(u) ~ d (u - d/2)^(r-1), so in
        // w = log(u - d/2) the equation log L = log eps is nearly linear: safeguarded Newton on it.
        const double log_eps = std::log(eps);
        // Start: the large-u asymptote x = (eps/d)^(1/(r-1)) if it lies beyond d/2, else the slope at
        // d/2, L ~ 2 (d/2)^(r-1) x (which matters for r near 1).
        double w = (log_eps - std::log(d)) / (r_ - 1.0);
        if (!(w >= std::log(half))) w = log_eps - special::kLn2 - (r_ - 1.0) * std::log(half);
        double wlo = -std::numeric_limits<double>::infinity(), whi = inf();
        for (int it = 0; it < 200; ++it) {
            if (w > 709.0) return inf();
            const double x = std::exp(w), u = half + x;
            const double L = psi_diff(u, d);
            const double g = std::log(L) - log_eps;
            if (g == 0.0) return u;
            if (g < 0.0) wlo = w; else whi = w;
            double slope;  // L'(u) = u^(r-1) - sign(u - d) |u - d|^(r-1)
            if (u >= d) slope = -std::exp((r_ - 1.0) * std::log(u)) * std::expm1((r_ - 1.0) * std::log1p(-d / u));
            else slope = std::pow(u, r_ - 1.0) + std::pow(d - u, r_ - 1.0);
            double next = w - g * L / (slope * x);
            // Converged once the step moves u by no more than its own rounding.
            if (std::fabs(next - w) * x <= 4e-16 * u || std::fabs(next - w) <= 1e-15) return half + std::exp(std::max(next, w));
            if (!(next > wlo && next < whi) || !std::isfinite(next)) {
                if (std::isfinite(wlo) && std::isfinite(whi)) next = 0.5 * (wlo + whi);
                else next = std::isfinite(wlo) ? wlo + 4.0 : whi - 4.0;
            }
            w = next;
        }
        return half + std::exp(w);
    }

    Kind kind_ = Kind::Gaussian;
    double r_ = 2.0, a_ = 0.5, log_r_ = 0.0, log_c_ = 0.0, lg1p_a_ = 0.0;
    double bound_ = std::numeric_limits<double>::infinity();
    double log_mass_ = 0.0;
};

}  // namespace pydp::noise
