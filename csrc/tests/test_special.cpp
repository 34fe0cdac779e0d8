// Tests of the shared special-function helpers (csrc/include/pydp/special/constants.hpp, logexp.hpp,
// double_double.hpp):
// - the constants agree with each other (2 pi split, roots and logarithms of pi) to a few ulps;
// - log1pexp, logexpm1, log1mexp and log_add_exp against direct evaluation where that is safe, on both
//   sides of each switch point, without overflow far beyond it, and at -inf;
// - the error-free transformations on cases with known exact results, 3 (1/3) = 1 in double-double to
//   1e-31, and the Gaussian total variation erf(mu / (2 sqrt 2)) in double-double against 50-digit mpmath
//   values (hi + lo) to 1e-29.
// Built by CMake (PYDP_BUILD_TESTS) and run by ctest; the exit status is the number of failures.
#include <cmath>
#include <initializer_list>
#include <limits>

#include "pydp/calibration/profile.hpp"
#include "pydp/special/constants.hpp"
#include "pydp/special/double_double.hpp"
#include "pydp/special/logexp.hpp"

#include "check.hpp"

namespace {
namespace sp = pydp::special;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU = 0x1p-53;  // unit roundoff

void constants() {
    const long double two_pi = static_cast<long double>(sp::kTwoPiHi) + static_cast<long double>(sp::kTwoPiLo);
    CHECK(std::fabs(static_cast<double>(two_pi - 2.0L * sp::kPiLong)) <= 1e-18);
    CHECK(sp::kTwoPiHi == 2.0 * sp::kPi);
    CHECK(static_cast<double>(sp::kPiLong) == sp::kPi);
    CHECK_NEAR(sp::kSqrt2 * sp::kSqrt1_2, 1.0, 2 * kU);
    CHECK_NEAR(sp::kSqrtPiOver2 * sp::kSqrtPiOver2, sp::kPi / 2.0, 4 * kU);
    CHECK_NEAR(sp::kInvSqrt2Pi * sp::kInvSqrt2Pi * 2.0 * sp::kPi, 1.0, 4 * kU);
    CHECK_NEAR(sp::kInvSqrtPi * sp::kInvSqrtPi * sp::kPi, 1.0, 4 * kU);
    CHECK_NEAR(sp::kLogSqrt2Pi, 0.5 * std::log(2.0 * sp::kPi), 2 * kU);
    CHECK_NEAR(sp::kLogSqrtPiOver2, 0.5 * std::log(0.5 * sp::kPi), 2 * kU);
    CHECK_NEAR(sp::kLn2, std::log(2.0), kU);
    CHECK_NEAR(sp::kE, std::exp(1.0), 4 * kU);
}

void logexp() {
    // References in long double (11 more bits), in the form that is accurate for each argument.
    for (double t : {-40.0, -5.0, -1e-3, 0.0, 1e-3, 0.7, 5.0, 35.0}) {
        const long double tl = t;
        const double ref = static_cast<double>(t > 0.0 ? tl + std::log1p(std::exp(-tl)) : std::log1p(std::exp(tl)));
        CHECK_NEAR(sp::log1pexp(t), ref, 4 * kU * std::fabs(ref));
    }
    CHECK(sp::log1pexp(800.0) == 800.0);                          // e^800 overflows; the value does not
    CHECK_NEAR(sp::log1pexp(-700.0), std::exp(-700.0), 1e-320);  // e^-700 ~ 1e-304
    for (double z : {0.05, 0.7, 1.0, 1.5, 20.0, 30.0, 31.0, 300.0}) {
        const double direct = std::log(std::expm1(z));
        const double tol = 8 * kU * std::fabs(direct) + 1e-300;
        CHECK_NEAR(sp::logexpm1(z), direct, tol);       // switch at 30
        CHECK_NEAR(sp::logexpm1(z, 1.0), direct, tol);  // switch at 1
    }
    CHECK_NEAR(sp::logexpm1(1000.0), 1000.0, 0.0);
    for (double x : {-1e-20, -1e-5, -0.5, -sp::kLn2, -0.75, -5.0, -40.0}) {
        const long double xl = x;
        const double ref = static_cast<double>(x > -0.5 ? std::log(-std::expm1(xl)) : std::log1p(-std::exp(xl)));
        CHECK_NEAR(sp::log1mexp(x), ref, 4 * kU * std::fabs(ref));
    }
    CHECK_NEAR(sp::log1mexp(-800.0), -std::exp(-800.0), 0.0);
    CHECK(sp::log_add_exp(3.0, -kInf) == 3.0 && sp::log_add_exp(-kInf, -2.0) == -2.0);
    CHECK(sp::log_add_exp(-kInf, -kInf) == -kInf);
    CHECK_NEAR(sp::log_add_exp(1000.0, 1000.0), 1000.0 + sp::kLn2, 2 * kU * 1000.0);
    CHECK(sp::log_add_exp(1.0, 2.0) == sp::log_add_exp(2.0, 1.0));
    CHECK_NEAR(sp::log_add_exp(1.0, 2.0), std::log(std::exp(1.0) + std::exp(2.0)), 4 * kU * 2.3);
}

void double_double() {
    const sp::DD s = sp::two_sum(0x1p-60, 1.0);
    CHECK(s.hi == 1.0 && s.lo == 0x1p-60);
    const sp::DD q = sp::quick_two_sum(1.0, -0x1p-60);
    CHECK(q.hi == 1.0 && q.lo == -0x1p-60);
    // (1 + 2^-30)(1 + 2^-31) = 1 + 2^-30 + 2^-31 + 2^-61: the last term is the product's rounding error.
    const sp::DD p = sp::two_prod(1.0 + 0x1p-30, 1.0 + 0x1p-31);
    CHECK(p.hi == 1.0 + 0x1p-30 + 0x1p-31 && p.lo == 0x1p-61);
    const sp::DD third = sp::dd_div(sp::DD{1.0, 0.0}, 3.0);
    const sp::DD one = sp::dd_mul(third, sp::DD{3.0, 0.0});
    CHECK_NEAR(one.hi - 1.0 + one.lo, 0.0, 1e-31);
    const sp::DD sum = sp::dd_add(third, sp::DD{-third.hi, 0.0});
    CHECK(sum.hi == third.lo);
    // erf(mu / (2 sqrt 2)) = hi + lo, 50-digit mpmath values split into two doubles.
    const double mu[4] = {0.5, 1.0, 5.0, 8.0};
    const double hi[4] = {0.19741265136584746, 0.3829249225480262, 0.9875806693484477, 0.9999366575163338};
    const double lo[4] = {-9.503162478247243e-18, 2.6373594679859223e-17, 4.79669446698184e-17, 1.145665984522538e-19};
    for (int i = 0; i < 4; ++i) {
        const sp::DD tv = pydp::calibration::detail::gaussian_total_variation_dd(mu[i]);
        CHECK_NEAR((tv.hi - hi[i]) + (tv.lo - lo[i]), 0.0, 1e-29);  // the solver allows 1e-28
    }
}
}  // namespace

int main() {
    constants();
    logexp();
    double_double();
    return pydp_test::report();
}
