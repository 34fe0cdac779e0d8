// Tests of the exact discrete Laplace and discrete Gaussian samplers (csrc/include/pydp/release/samplers.hpp)
// on the ChaCha20 generator, with fixed keys (every check is deterministic: no flaky statistics):
// - determinism: a (key, stream) gives the same values on every run and for every thread count, another
//   key other values, and the vectorised discrete Laplace equals its all-exact-comparisons path bit for bit;
// - moments: mean, second moment and P(Y = 0) of 200000 draws lie within 6 standard errors of the exact
//   values, the standard errors computed from the exact pmf (variance of Y, of Y^2, of the indicator).
// Built by CMake (PYDP_BUILD_TESTS) and run by ctest; the exit status is the number of failures.
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <cstdint>
#include <vector>

#include "pydp/release/samplers.hpp"
#include "pydp/random/generator.hpp"

#include "check.hpp"

namespace {
namespace rel = pydp::release;
using pydp::random::Generator;

constexpr std::size_t kDraws = 200000;

Generator make_generator(unsigned char first_byte) {
    unsigned char key[32];
    for (int i = 0; i < 32; ++i) key[i] = static_cast<unsigned char>(i);
    key[0] = first_byte;
    return Generator(key, 0);
}

template <class Sampler>
std::vector<std::int64_t> draws(const Sampler& s, const Generator& gen, std::size_t n, unsigned threads) {
    std::vector<std::int64_t> out(n);
    rel::fill_noise(s, out.data(), n, threads, [&gen](std::size_t c) { return gen.chunk(c); });
    return out;
}

// Exact moments of a symmetric pmf on Z proportional to w(|y|), summed until the terms vanish.
struct Moments {
    double p0, m2, m4;  // P(Y = 0), E[Y^2], E[Y^4]
};
template <class Weight>
Moments exact_moments(Weight w) {
    double z = w(0.0), s2 = 0.0, s4 = 0.0;
    for (double y = 1.0; y < 1e5; y += 1.0) {
        const double v = w(y);
        z += 2.0 * v;
        s2 += 2.0 * v * y * y;
        s4 += 2.0 * v * y * y * y * y;
        if (v < 1e-30 * z) break;
    }
    return {w(0.0) / z, s2 / z, s4 / z};
}

void check_moments(const std::vector<std::int64_t>& y, const Moments& m) {
    const double n = static_cast<double>(y.size());
    double s1 = 0.0, s2 = 0.0, zeros = 0.0;
    for (std::int64_t v : y) {
        const double x = static_cast<double>(v);
        s1 += x;
        s2 += x * x;
        zeros += v == 0;
    }
    CHECK_NEAR(s1 / n, 0.0, 6.0 * std::sqrt(m.m2 / n));
    CHECK_NEAR(s2 / n, m.m2, 6.0 * std::sqrt((m.m4 - m.m2 * m.m2) / n));
    CHECK_NEAR(zeros / n, m.p0, 6.0 * std::sqrt(m.p0 * (1.0 - m.p0) / n));
}

template <class Sampler>
void check_determinism(const Sampler& s) {
    const Generator gen = make_generator(0);
    const std::size_t n = 3 * rel::kNoiseChunk + 17;  // several chunks and a partial one
    const std::vector<std::int64_t> a = draws(s, gen, n, 1);
    CHECK(draws(s, gen, n, 1) == a);
    CHECK(draws(s, gen, n, 3) == a);
    CHECK(draws(s, make_generator(1), n, 1) != a);
    // A prefix of the output does not depend on how many values were asked for.
    const std::vector<std::int64_t> b = draws(s, gen, 100, 1);
    CHECK(std::vector<std::int64_t>(a.begin(), a.begin() + 100) == b);
}

void discrete_laplace() {
    const rel::DiscreteLaplace lap(7, 2);  // t = 3.5
    check_determinism(lap);
    const double t = 3.5;
    check_moments(draws(lap, make_generator(2), kDraws, 2), exact_moments([t](double y) { return std::exp(-y / t); }));
    // The vectorised fill and the all-exact-comparisons fill draw the same values from the same words.
    Generator g1 = make_generator(3).chunk(0), g2 = make_generator(3).chunk(0);
    std::vector<std::int64_t> fast(5000), exact(5000);
    lap.fill<false>(g1, fast.data(), fast.size());
    lap.fill<true>(g2, exact.data(), exact.size());
    CHECK(fast == exact);
}

void discrete_gaussian() {
    const rel::DiscreteGaussian gau(10, 3);  // sigma^2 = 10 / 3
    check_determinism(gau);
    const double s2 = 10.0 / 3.0;
    check_moments(draws(gau, make_generator(4), kDraws, 2),
                  exact_moments([s2](double y) { return std::exp(-y * y / (2.0 * s2)); }));
    // A large sigma^2 takes the same path at a larger proposal scale.
    const rel::DiscreteGaussian wide(1000000, 7);
    const double w2 = 1000000.0 / 7.0;
    check_moments(draws(wide, make_generator(5), kDraws / 4, 2),
                  exact_moments([w2](double y) { return std::exp(-y * y / (2.0 * w2)); }));
}
}  // namespace

int main() {
    discrete_laplace();
    discrete_gaussian();
    return pydp_test::report();
}
