// Tests of the geodesic geometry of the model spaces (csrc/include/pydp/manifolds/geometry.hpp):
// - the exponential map walks along a geodesic at unit speed: d(p, exp_p(t u)) = t for a unit tangent u
//   (sphere: t up to just below pi; hyperbolic space: t from 1e-9 to 7), log_p inverts exp_p, and
//   distances add along the geodesic, d(p, a) + d(a, b) = d(p, b) for a, b on it in that order;
// - the circle's angle reduction against 50-digit references (mpmath: x - 2 pi round(x / 2 pi)).
// Built by CMake (PYDP_BUILD_TESTS) and run by ctest; the exit status is the number of failures.
#include <cmath>
#include <cstddef>
#include <initializer_list>

#include "pydp/manifolds/geometry.hpp"
#include "pydp/special/constants.hpp"

#include "check.hpp"

namespace {
namespace mf = pydp::manifolds;
using pydp::special::kPi;

void sphere_geodesics() {
    const double p[3] = {1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0};
    const double s5 = std::sqrt(5.0);
    const double u[3] = {2.0 / s5, -1.0 / s5, 0.0};  // unit, orthogonal to p
    double prev[3] = {p[0], p[1], p[2]};
    double prev_t = 0.0;
    for (double t : {1e-9, 1e-3, 0.7, 2.0, 3.1, kPi - 1e-6}) {
        const double v[3] = {t * u[0], t * u[1], t * u[2]};
        double q[3], w[3];
        mf::sphere_exp(p, v, q, 3);
        // The points themselves are rounded (a few 1e-17 per coordinate): that much absolute error.
        CHECK_NEAR(mf::sphere_dist(p, q, 3), t, 1e-15 + 4e-15 * t);
        CHECK_NEAR(mf::sphere_dist(q, p, 3), t, 1e-15 + 4e-15 * t);
        CHECK(mf::sphere_log(p, q, w, 3));
        // Near the cut locus the direction of log_p(q) is ill-conditioned (1 / sin t); its length is not.
        const double tol = (t < 3.0 ? 1e-14 : 1e-8) * t + 1e-15;
        for (int i = 0; i < 3; ++i) CHECK_NEAR(w[i], v[i], tol);
        CHECK_NEAR(mf::sphere_dist(p, prev, 3) + mf::sphere_dist(prev, q, 3), t, 1e-14 * t + 1e-15);
        CHECK_NEAR(mf::sphere_dist(prev, q, 3), t - prev_t, 1e-14 * t + 1e-15);
        for (int i = 0; i < 3; ++i) prev[i] = q[i];
        prev_t = t;
    }
    const double a[3] = {-p[0], -p[1], -p[2]};
    CHECK_NEAR(mf::sphere_dist(p, a, 3), kPi, 4e-16);
}

void hyperbolic_geodesics() {
    double p[3] = {0.0, 0.3, -1.2};
    mf::hyp_complete(p, 3);
    // A tangent vector at p: spatial part ws, time part ps.ws / p0 (Minkowski-orthogonal to p).
    const double ws[2] = {0.8, 0.5};
    const double norm = std::sqrt(mf::hyp_tangent_norm2(p + 1, p[0], ws, 2));
    const double u[3] = {(p[1] * ws[0] + p[2] * ws[1]) / p[0] / norm, ws[0] / norm, ws[1] / norm};
    double prev[3] = {p[0], p[1], p[2]};
    double prev_t = 0.0;
    for (double t : {1e-9, 1e-3, 0.5, 2.0, 5.0, 7.0}) {
        const double v[3] = {t * u[0], t * u[1], t * u[2]};
        double q[3], w[3];
        mf::hyp_exp(p, v, q, 3);
        CHECK_NEAR(mf::hyp_dist(p, q, 3), t, 1e-15 + 1e-14 * t);
        CHECK_NEAR(mf::hyp_dist(q, p, 3), t, 1e-15 + 1e-14 * t);
        mf::hyp_log(p, q, w, 3);
        for (int i = 0; i < 3; ++i) CHECK_NEAR(w[i], v[i], 1e-15 + 1e-13 * t);
        CHECK_NEAR(mf::hyp_dist(prev, q, 3), t - prev_t, 1e-15 + 1e-13 * t);
        for (int i = 0; i < 3; ++i) prev[i] = q[i];
        prev_t = t;
    }
}

void circle_reduction() {
    // x - 2 pi round(x / (2 pi)) to 50 digits (mpmath), rounded to double.
    const double x[4] = {1e10, -7.5, 1e5, 4.0};
    const double ref[4] = {-0.5092310721657348, -1.2168146928204135, 3.1058362368812196, -2.2831853071795867};
    for (int i = 0; i < 4; ++i) CHECK_NEAR(mf::wrap_angle(x[i]), ref[i], 4.5e-16);
    for (double a : {-3.0, 0.0, 1.0, 3.1}) {
        for (double b : {-3.1, 0.5, 2.0, 100.0}) {
            CHECK(mf::circle_dist(a, b) == mf::circle_dist(b, a));
            CHECK(mf::circle_dist(a, b) >= 0.0 && mf::circle_dist(a, b) <= kPi);
        }
    }
}
}  // namespace

int main() {
    sphere_geodesics();
    hyperbolic_geodesics();
    circle_reduction();
    return pydp_test::report();
}
