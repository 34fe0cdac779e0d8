// Tests of the certified PLD engine (csrc/include/pydp/accounting/pld*.hpp) against closed forms:
// - randomized response (two atoms at +-eps0 on the grid, so the discretisation is exact): its k-fold
//   composition has the binomial profile delta(eps) = sum_j C(k,j) p^j (1-p)^(k-j) (1 - e^{eps - L_j})_+;
//   the interval must contain it, be narrow, and show pure k eps0-DP; its Chernoff tails bound the
//   binomial tails; the circular FFT composition equals the direct convolution within its bound;
// - the Laplace mechanism: one step has delta(eps) = 1 - e^{(eps - d)/2} for eps < d (and 0 beyond);
//   k steps are pure (k d)-DP;
// - the Gaussian mechanism: k steps at shift d are exactly mu-GDP with mu = sqrt(k) d.
// Built by CMake (PYDP_BUILD_TESTS) and run by ctest; the exit status is the number of failures.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include "pydp/accounting/conversions.hpp"
#include "pydp/accounting/pld.hpp"
#include "pydp/noise/families.hpp"

#include "check.hpp"

namespace {
namespace pld = pydp::accounting::pld;
using pydp::noise::Family;
using pydp::noise::Kind;

constexpr double kTail = 1e-15;

// The side's total mass (finite part and +inf).
double total(const pld::Side& s) {
    double m = s.inf;
    for (double v : s.p) m += v;
    return m;
}

// True when the certified interval [lo, up] contains x, up to a relative slack for the reference's own
// rounding.
bool contains(double lo, double up, double x, double slack = 1e-12) {
    return lo <= x + slack * std::fabs(x) + 1e-300 && x <= up + slack * std::fabs(x) + 1e-300;
}

// Randomized response with eps0 = 64 h: P = (p, 1 - p), Q = (1 - p, p), p = e^eps0 / (1 + e^eps0).
struct RandomizedResponse {
    double h = 0x1p-7, eps0 = 64 * 0x1p-7, p = std::exp(eps0) / (1.0 + std::exp(eps0));
    pld::TwoSided sides = pld::from_atoms({eps0, -eps0}, {p, 1.0 - p}, {1.0 - p, p}, 0.0, h);

    // P(B = j) for B ~ Binomial(k, p), and the loss of j ones among k: eps0 (2 j - k).
    double pmf(int k, int j) const {
        const double log_c = std::lgamma(k + 1.0) - std::lgamma(j + 1.0) - std::lgamma(k - j + 1.0);
        return std::exp(log_c + j * std::log(p) + (k - j) * std::log1p(-p));
    }
    double loss(int k, int j) const { return eps0 * (2 * j - k); }
    double delta(int k, double eps) const {
        double d = 0.0;
        for (int j = 0; j <= k; ++j) d += pmf(k, j) * std::max(0.0, -std::expm1(eps - loss(k, j)));
        return d;
    }
};

void grid_sides_keep_the_mass() {
    const RandomizedResponse rr;
    CHECK_NEAR(total(rr.sides.pess), 1.0, 1e-15);
    CHECK_NEAR(total(rr.sides.opt), 1.0, 1e-15);
    // The atoms lie on grid points: both sides equal the mechanism (pessimistic and optimistic agree).
    const pld::Composed one = pld::compose({{&rr.sides, 1}}, rr.h, kTail);
    const pld::Bounds b(one);
    for (double eps : {0.0, 0.1, 0.25, 0.49}) {
        const double exact = rr.delta(1, eps);
        CHECK(contains(b.lower.delta(eps), b.upper.delta(eps), exact));
        CHECK_NEAR(b.upper.delta(eps), b.lower.delta(eps), 1e-12);  // the suffix sums' rounding allowance
    }
    // The Laplace: the pessimistic side keeps all mass, the optimistic side drops at most the two tails.
    const pld::NoiseLoss lap(Family::make(Kind::Laplace), 1.0, 1.0, pld::Relation::remove);
    const pld::TwoSided s = lap.discretise(0x1p-10, kTail, 0.0);
    CHECK_NEAR(total(s.pess), 1.0, 1e-13);
    CHECK(total(s.opt) <= 1.0 + 1e-13 && total(s.opt) >= 1.0 - 2 * kTail - 1e-13);
}

void randomized_response_k_fold_is_binomial() {
    const RandomizedResponse rr;
    for (int k : {2, 10, 37}) {
        const pld::Composed c = pld::compose({{&rr.sides, k}}, rr.h, kTail);
        const pld::Bounds b(c);
        for (double eps : {0.0, 0.3, 1.0, 2.5, 0.5 * k * rr.eps0}) {
            const double exact = rr.delta(k, eps);
            const double lo = b.lower.delta(eps), up = b.upper.delta(eps);
            CHECK(contains(lo, up, exact));
            CHECK(up - lo <= 1e-9);
        }
        // Pure (k eps0)-DP: nothing lies above the largest loss but the FFT's rounding bound (~1e-11)
        // and the Chernoff-bounded mass outside the window.
        CHECK(b.upper.delta(k * rr.eps0) <= 1e-10);
        CHECK(b.upper.epsilon(1e-9) <= k * rr.eps0 + 1e-12);
        // epsilon inverts delta: delta at the returned upper epsilon meets the target.
        const double e = b.upper.epsilon(1e-3);
        CHECK(b.upper.delta(e) <= 1e-3 * (1.0 + 1e-9));
        CHECK(rr.delta(k, e) <= 1e-3 * (1.0 + 1e-9));
    }
}

void chernoff_bounds_the_binomial_tails() {
    const RandomizedResponse rr;
    const int k = 10;
    const pld::MgfTable t = pld::mgf_table(rr.sides, rr.h);
    const pld::Cgf cgf({&t}, {k});
    for (int j0 = 5; j0 <= k; ++j0) {  // P(S >= loss(k, j0)) = P(B >= j0)
        double up = 0.0, down = 0.0;
        for (int j = j0; j <= k; ++j) up += rr.pmf(k, j);
        for (int j = 0; j <= k - j0; ++j) down += rr.pmf(k, j);
        CHECK(std::exp(cgf.log_tail(true, rr.loss(k, j0), true)) >= up * (1.0 - 1e-12));
        CHECK(std::exp(cgf.log_tail(true, rr.loss(k, k - j0), false)) >= down * (1.0 - 1e-12));
    }
}

void circular_compose_matches_direct_convolution() {
    const pld::NoiseLoss lap(Family::make(Kind::Laplace), 1.0, 1.0, pld::Relation::remove);
    const pld::TwoSided s = lap.discretise(0x1p-6, kTail, 0.0);
    CHECK(s.pess.offset == s.opt.offset);
    const std::size_t n = s.pess.p.size();
    std::vector<double> conv(2 * n - 1, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) conv[i + j] += s.pess.p[i] * s.pess.p[j];
    std::size_t N = 2;
    while (N < 2 * n) N <<= 1;
    pld::Plans plans;
    const std::vector<pld::Circular> out = pld::circular_compose({&s}, {{2}}, plans.get(N), plans.scratch);
    CHECK(out.size() == 1 && out[0].A == 2 * s.pess.offset);
    CHECK(out[0].tail > 0.0 && out[0].tail < 1e-10);
    double worst = 0.0;
    for (std::size_t i = 0; i < N; ++i) {
        const double ref = i < conv.size() ? conv[i] : 0.0;
        worst = std::max(worst, std::fabs(out[0].w[i].real() - ref));
    }
    CHECK(worst <= out[0].tail);
}

void laplace_profile_and_pure_dp() {
    const double d = 1.0, h = 0x1p-10;
    const pld::NoiseLoss lap(Family::make(Kind::Laplace), d, 1.0, pld::Relation::remove);
    const pld::TwoSided s = lap.discretise(h, kTail, 0.0);
    const pld::Composed one = pld::compose({{&s, 1}}, h, kTail);
    const pld::Bounds b(one);
    for (double eps : {0.0, 0.25, 0.5, 0.9, 0.999}) {
        const double exact = -std::expm1(0.5 * (eps - d));
        CHECK(contains(b.lower.delta(eps), b.upper.delta(eps), exact));
        // Second order in h away from the atom at L = d (next to it the optimistic merge costs more).
        if (eps <= 0.9) CHECK(b.upper.delta(eps) - b.lower.delta(eps) <= 1e-6);
    }
    CHECK(b.upper.delta(d) <= 1e-12);
    const int k = 5;
    const pld::Composed c = pld::compose({{&s, k}}, h, kTail);
    const pld::Bounds bk(c);
    CHECK(bk.upper.delta(k * d) <= 1e-10);
    CHECK(bk.upper.epsilon(1e-9) <= k * d + 1e-12);
}

void gaussian_k_fold_is_gdp() {
    const Family gauss = Family::make(Kind::Gaussian);
    const double h = 1e-3;
    for (const auto& [k, d] : {std::pair<int, double>{4, 0.5}, {100, 0.1}, {3000, 0.02}}) {
        const double mu = std::sqrt(static_cast<double>(k)) * d;
        const pld::NoiseLoss g(gauss, d, 1.0, pld::Relation::remove);
        const pld::TwoSided s = g.discretise(h, kTail, k > 1 ? 1e-9 : 0.0);
        const pld::Composed c = pld::compose({{&s, k}}, h, kTail);
        const pld::Bounds b(c);
        for (double eps : {0.0, 0.5 * mu, mu, 2.0 * mu}) {
            const double exact = std::exp(pydp::accounting::gdp_log_delta(gauss, mu, eps));
            CHECK(contains(b.lower.delta(eps), b.upper.delta(eps), exact, 1e-9));
        }
        for (double delta : {1e-3, 1e-6, 1e-10}) {
            const double exact = pydp::accounting::gdp_epsilon(gauss, mu, delta);
            CHECK(contains(b.lower.epsilon(delta), b.upper.epsilon(delta), exact, 1e-9));
            CHECK(b.upper.epsilon(delta) - b.lower.epsilon(delta) <= 1e-2 * exact);
        }
    }
}
}  // namespace

int main() {
    grid_sides_keep_the_mass();
    randomized_response_k_fold_is_binomial();
    chernoff_bounds_the_binomial_tails();
    circular_compose_matches_direct_convolution();
    laplace_profile_and_pure_dp();
    gaussian_k_fold_is_gdp();
    return pydp_test::report();
}
