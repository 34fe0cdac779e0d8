// Release plans on the power-of-two grid g = 2^e: the grid choice, the rounding charge, and the vector
// plans of the discrete Laplace (l1 or l_inf sensitivity) and discrete Gaussian (l2) over m coordinates
// (pydp_core.release.calibrate_laplace_release / calibrate_gaussian_release with dimension = m > 1, and
// the C ABI's pydp_release_calibrate_*_vector call these same functions, so the plans cannot diverge).
//
// - grid_exponent: e = floor(log2(min(scale, ref))) - grid_bits, raised so that one unit of scale spans
//   at most 2^max_bits grid steps.
// - Rounding moves each coordinate by at most half a step, so a neighbouring pair whose difference has
//   norm <= D = sensitivity / g gives integer shift vectors of l1 norm <= floor(D) + m (l1 ball),
//   <= m * grid_shift(D) (l_inf box: each coordinate at most floor(D) + 1, Lemma 1 of docs/release.md),
//   and l2 norm <= D + sqrt(m) (l2 ball). The product of discrete Laplace laws of parameter t is then
//   pure (k / t)-DP (Canonne, Kamath and Steinke 2020), decided here in exact integer arithmetic, and the
//   product of discrete Gaussians of variance sigma2 is K^2 / (2 sigma2)-zCDP (the same paper, the
//   multivariate discrete Gaussian), converted to (epsilon, delta) by the certified accounting::zcdp_log_delta.
// - Each plan is the smallest integer parameter that passes its check, and parameter - 1 is checked to
//   fail; any other outcome is a status, never a plan.
// Checked in tests/release (the plans against an independent Fraction computation and mpmath) and in
// tests/embedding (C and ctypes clients, bit-identical plans and releases).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "pydp/accounting/conversions.hpp"
#include "pydp/calibration/profile.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/release/samplers.hpp"

namespace pydp::release {

// e of the grid, false when the grid would leave the range a float64 grid can serve.
inline bool grid_exponent(double scale, double ref, int grid_bits, int max_bits, int* e) noexcept {
    int lm = 0, ls = 0;
    std::frexp(std::min(scale, ref), &lm);
    std::frexp(scale, &ls);
    const int out = std::max(lm - 1 - grid_bits, ls - 1 - std::max(grid_bits, max_bits));
    if (!std::isfinite(scale) || !(scale > 0.0) || out < -1074 + 53 || out > 970 - 53) return false;
    *e = out;
    return true;
}

// The largest |rint(a) - rint(b)| over |a - b| <= D = sensitivity / 2^e (ties to even): floor(D) + 1,
// except D itself when D is an even integer. D must be below 2^63.
inline std::uint64_t grid_shift(double sensitivity, int e) noexcept {
    const double d = std::ldexp(sensitivity, -e);  // exact
    const double f = std::floor(d);
    if (d == f && std::fmod(f, 2.0) == 0.0) return static_cast<std::uint64_t>(f);
    return static_cast<std::uint64_t>(f) + 1;
}

__extension__ typedef unsigned __int128 u128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet

// k / t <= eps, decided exactly (k, t >= 1 integers, eps >= 0 finite): k * 2^-x <= m * t for eps = m 2^x.
inline bool ratio_at_most(std::uint64_t k, std::uint64_t t, double eps) noexcept {
    if (eps == 0.0) return false;
    int x2 = 0;
    const double f = std::frexp(eps, &x2);  // eps = f 2^x2, f in [0.5, 1)
    const auto m = static_cast<u128>(std::ldexp(f, 53));
    const int x = x2 - 53;
    const u128 rhs = m * t;  // < 2^117
    if (x >= 0) return x >= 12 || static_cast<u128>(k) <= (rhs << x);  // 2^(52 + 12) > k
    const int sh = -x;
    if (sh >= 128 || (static_cast<u128>(k) >> (128 - sh)) != 0) return false;  // k 2^sh >= 2^128
    return (static_cast<u128>(k) << sh) <= rhs;
}

// ceil(k / eps) exactly (k >= 1, eps > 0 finite), or 0 when it is at least 2^64.
inline std::uint64_t ceil_ratio(std::uint64_t k, double eps) noexcept {
    int x2 = 0;
    const double f = std::frexp(eps, &x2);
    const auto m = static_cast<u128>(std::ldexp(f, 53));  // eps = m 2^x, 2^52 <= m < 2^53
    const int x = x2 - 53;
    u128 q = 0;
    if (x >= 0) {
        if (x >= 75) return 1;  // m 2^x >= 2^127 > k
        const u128 den = m << x;
        q = (static_cast<u128>(k) + den - 1) / den;
    } else {
        const int sh = -x;
        if (sh >= 128 || (static_cast<u128>(k) >> (128 - sh)) != 0) return 0;  // k 2^sh / m >= 2^74
        const u128 num = static_cast<u128>(k) << sh;
        q = (num + m - 1) / m;
    }
    return q >> 64 ? 0 : static_cast<std::uint64_t>(q);
}

// TableTooLong: a lattice table would exceed its size limit (the lattice plans' bindings).
enum class PlanStatus : int { Ok = 0, Invalid = 1, NoFiniteScale = 2, ScaleOverflow = 3, VerifyFailed = 4, TableTooLong = 5 };
enum class VectorNorm : int { L1 = 0, Linf = 1, L2 = 2 };

// A plan (num / den the noise parameter: t or sigma2 in grid steps, den = 1) or the reason there is none.
struct GridPlan {
    PlanStatus status = PlanStatus::Ok;
    const char* message = "";
    std::uint64_t num = 0, den = 1;
    int grid_exponent = 0;
    std::uint64_t shift = 0;
    double delta_achieved = 0.0;
};

inline GridPlan plan_failure(PlanStatus s, const char* msg) noexcept {
    GridPlan p;
    p.status = s;
    p.message = msg;
    return p;
}

// The grid steps per unit of scale of the discrete Laplace (t below 2^39) and Gaussian (sigma below 2^31).
inline constexpr int kLaplaceMaxBits = 38;
inline constexpr int kGaussMaxBits = 30;
// The largest number of coordinates of one vector plan.
inline constexpr std::uint64_t kMaxDimension = std::uint64_t{1} << 40;
// The relative margin on delta of every check.
inline constexpr double kPlanDeltaMargin = 1e-12;

// The discrete Laplace plan of one vector of m >= 2 coordinates with l1 or l_inf sensitivity: pure
// (k / t)-DP with k the rounding-charged l1 bound of the integer shift, t = ceil(k / epsilon). The grid
// resolves min(sensitivity / m, scale) (l1) or min(sensitivity, scale) (l_inf) with grid_bits bits, so
// the m extra steps cost at most 2^-grid_bits of the sensitivity. Arguments as checked by the callers:
// epsilon > 0 finite, sensitivity > 0 finite, grid_bits in [0, 30], 2 <= m <= kMaxDimension.
inline GridPlan laplace_vector_plan(double epsilon, double sensitivity, int grid_bits, std::uint64_t m,
                                    VectorNorm norm) noexcept {
    if (!(epsilon > 0.0) || !std::isfinite(epsilon))
        return plan_failure(PlanStatus::Invalid, "epsilon must be finite and > 0 for a vector plan");
    if (!(sensitivity > 0.0) || !std::isfinite(sensitivity))
        return plan_failure(PlanStatus::Invalid, "sensitivity must be finite and > 0");
    if (grid_bits < 0 || grid_bits > 30) return plan_failure(PlanStatus::Invalid, "grid_bits must lie in [0, 30]");
    if (m < 2 || m > kMaxDimension) return plan_failure(PlanStatus::Invalid, "dimension must lie in [2, 2^40]");
    if (norm != VectorNorm::L1 && norm != VectorNorm::Linf)
        return plan_failure(PlanStatus::Invalid, "norm must be l1 or linf for a discrete Laplace vector plan");
    const double md = static_cast<double>(m);  // exact: m <= 2^40
    const bool l1 = norm == VectorNorm::L1;
    GridPlan p;
    const double scale = l1 ? sensitivity / epsilon : md * sensitivity / epsilon;
    if (!grid_exponent(scale, l1 ? sensitivity / md : sensitivity, grid_bits, kLaplaceMaxBits, &p.grid_exponent))
        return plan_failure(PlanStatus::Invalid, "the noise scale is outside the range a float64 grid can serve");
    const double d = std::ldexp(sensitivity, -p.grid_exponent);  // D, exact
    if (!(d < 0x1p62)) return plan_failure(PlanStatus::ScaleOverflow, "the sensitivity spans 2^62 grid steps or more");
    const u128 k = l1 ? static_cast<u128>(std::floor(d)) + m
                      : static_cast<u128>(grid_shift(sensitivity, p.grid_exponent)) * m;
    if (k >> 63) return plan_failure(PlanStatus::ScaleOverflow, "the shift bound k reaches 2^63 grid steps");
    p.shift = static_cast<std::uint64_t>(k);
    const std::uint64_t t = ceil_ratio(p.shift, epsilon);
    if (t == 0 || t >= kMaxLaplaceT)
        return plan_failure(PlanStatus::ScaleOverflow, "discrete Laplace calibration: t would exceed 2^40");
    if (!ratio_at_most(p.shift, t, epsilon) || (t > 1 && ratio_at_most(p.shift, t - 1, epsilon)))
        return plan_failure(PlanStatus::VerifyFailed, "discrete Laplace calibration could not be verified");
    p.num = t;
    return p;
}

// The discrete Gaussian plan of one vector of m >= 2 coordinates with l2 sensitivity: the smallest
// integer sigma2 (grid steps squared) with zcdp_log_delta(K^2 / (2 sigma2), epsilon) <= log delta +
// log(1 - margin), K = ceil(D + sqrt(m)) rounded up. The grid comes from the continuous Gaussian scale
// s0 (calibration::minimal_scale) and resolves min(s0, sensitivity / sqrt(m)) with grid_bits bits.
// Arguments: epsilon >= 0 finite, delta in (0, 1), sensitivity > 0 finite, grid_bits in [0, 30],
// 2 <= m <= kMaxDimension.
inline GridPlan gaussian_vector_plan(double epsilon, double delta, double sensitivity, int grid_bits,
                                     std::uint64_t m) noexcept {
    if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) return plan_failure(PlanStatus::Invalid, "epsilon must be finite and >= 0");
    if (!(delta > 0.0) || !(delta < 1.0))
        return plan_failure(PlanStatus::Invalid, "delta must lie in (0, 1) for a discrete Gaussian vector plan");
    if (!(sensitivity > 0.0) || !std::isfinite(sensitivity))
        return plan_failure(PlanStatus::Invalid, "sensitivity must be finite and > 0");
    if (grid_bits < 0 || grid_bits > 30) return plan_failure(PlanStatus::Invalid, "grid_bits must lie in [0, 30]");
    if (m < 2 || m > kMaxDimension) return plan_failure(PlanStatus::Invalid, "dimension must lie in [2, 2^40]");
    const calibration::MinimalScale cont =
        calibration::minimal_scale(noise::Family::make(noise::Kind::Gaussian), epsilon, delta, sensitivity);
    if (cont.status == calibration::kNoFiniteScale)
        return plan_failure(PlanStatus::NoFiniteScale, "no finite noise scale reaches (epsilon, delta)");
    if (cont.status == calibration::kScaleOverflow)
        return plan_failure(PlanStatus::ScaleOverflow, "the minimal noise scale exceeds the double range");
    if (cont.status != calibration::kOk)
        return plan_failure(PlanStatus::VerifyFailed, "the continuous Gaussian scale could not be verified");
    const double s0 = cont.scale;
    const double root_m = std::sqrt(static_cast<double>(m));
    GridPlan p;
    if (!grid_exponent(s0, sensitivity / root_m, grid_bits, kGaussMaxBits, &p.grid_exponent))
        return plan_failure(PlanStatus::Invalid, "the noise scale is outside the range a float64 grid can serve");
    const double k = std::ceil(std::nextafter(std::ldexp(sensitivity, -p.grid_exponent) + root_m, HUGE_VAL));
    if (!(k < 0x1p62)) return plan_failure(PlanStatus::ScaleOverflow, "the sensitivity spans 2^62 grid steps or more");
    const double log_target = std::log(delta) + std::log1p(-kPlanDeltaMargin);
    auto log_delta = [&](std::uint64_t n) {
        return accounting::zcdp_log_delta(k * k / (2.0 * static_cast<double>(n)), epsilon).log_delta;
    };
    auto ok = [&](std::uint64_t n) { return log_delta(n) <= log_target; };
    auto to_param = [](double v) {  // a bracket end in [0, 2^62]
        return v >= 0x1p62 ? kMaxParam : (v >= 1.0 ? static_cast<std::uint64_t>(v) : std::uint64_t{0});
    };
    const double guess = std::pow(s0 / sensitivity * k, 2.0);  // the continuous scale for K, grid steps squared
    std::uint64_t lo = std::max<std::uint64_t>(1, to_param(guess * 0.5));
    while (lo > 1 && ok(lo)) lo /= 2;
    std::uint64_t hi = 1;
    if (!(lo == 1 && ok(1))) {  // lo fails
        hi = std::max(lo + 1, to_param(guess * 2.0));
        while (!ok(hi)) {
            if (hi > kMaxParam / 2)
                return plan_failure(PlanStatus::ScaleOverflow,
                                    "discrete Gaussian calibration: sigma2 would exceed 2^62 grid steps squared");
            hi *= 2;
        }
        while (hi - lo > 1) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            (ok(mid) ? hi : lo) = mid;
        }
    }
    if (!ok(hi) || (hi > 1 && ok(hi - 1)) || hi > kMaxParam)
        return plan_failure(PlanStatus::VerifyFailed, "discrete Gaussian calibration could not be verified");
    p.num = hi;
    p.shift = static_cast<std::uint64_t>(k);
    p.delta_achieved = std::exp(log_delta(hi));
    return p;
}

}  // namespace pydp::release
