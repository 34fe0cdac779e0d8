// Kernel tests that need no Python: the headers under csrc/include/pydp/ compiled on their own, as an
// embedding C++ project would use them. Built and run by tests/test_cpp_kernels.py (any C++17 compiler).
// Each CHECK prints the failing expression; the exit status is the number of failures.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "pydp/calibration/profile.hpp"
#include "pydp/cpu.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/chacha.hpp"
#include "pydp/special/normal.hpp"

namespace {
int failures = 0;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
            ++failures;                                                        \
        }                                                                      \
    } while (0)

// RFC 8439, Section 2.3.2: key 00 01 .. 1f, block counter 1, nonce 00 00 00 09 00 00 00 4a 00 00 00 00.
// The library's layout keeps a 64-bit counter in words 12-13 and a 64-bit nonce in words 14-15, so the
// RFC's (32-bit counter 1, 96-bit nonce) state is counter = 1 | (0x09000000 << 32), nonce = 0x4a000000.
void chacha_rfc8439_block() {
    std::uint32_t key[8];
    unsigned char bytes[32];
    for (int i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(i);
    pydp::random::key_from_bytes(bytes, key);
    const std::uint64_t counter = 1ull | (std::uint64_t{0x09000000u} << 32);
    const std::uint64_t nonce = 0x4a000000u;
    const std::uint32_t expect[16] = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033,
                                      0x9aaa2204, 0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                      0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
    for (auto impl : {pydp::cpu::Isa::Scalar, pydp::cpu::Isa::AVX2, pydp::cpu::Isa::AVX512}) {
        if (!pydp::cpu::isa_available(impl)) continue;
        std::uint32_t out[16 * 20];
        pydp::random::chacha20_blocks(key, counter, nonce, out, 20, impl);  // 20 blocks: the vector paths run
        for (int i = 0; i < 16; ++i) CHECK(out[i] == expect[i]);
        std::uint32_t ref[16 * 20];
        pydp::random::chacha20_blocks(key, counter, nonce, ref, 20, pydp::cpu::Isa::Scalar);
        for (int i = 0; i < 16 * 20; ++i) CHECK(out[i] == ref[i]);
    }
}

void cpu_levels_are_consistent() {
    using pydp::cpu::Isa;
    CHECK(pydp::cpu::isa_available(Isa::Scalar));
    CHECK(pydp::cpu::isa_available(pydp::cpu::best_isa()));
    if (pydp::cpu::isa_available(Isa::AVX512)) CHECK(pydp::cpu::best_isa() == Isa::AVX512);
}

void parallel_chunks_do_not_depend_on_threads() {
    const std::size_t n = 100003;
    std::vector<double> a(n), b(n);
    auto fill = [](std::vector<double>& v) {
        return [&v](std::size_t c, std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) v[i] = std::sin(static_cast<double>(i)) + static_cast<double>(c);
        };
    };
    pydp::parallel_chunks(n, 1000, 1, fill(a));
    pydp::parallel_chunks(n, 1000, 7, fill(b));
    CHECK(a == b);
}

void normal_tails() {
    using namespace pydp::special;
    // log Phi(-40) = -804.6084420137538 (mpmath, 30 digits)
    CHECK(std::fabs(log_ndtr(-40.0) - (-804.6084420137538)) < 1e-12 * 804.6);
    CHECK(std::fabs(ndtr(0.0) - 0.5) < 1e-16);
    for (double p : {1e-300, 1e-20, 0.01, 0.3, 0.5, 0.9}) CHECK(std::fabs(ndtr(ndtri(p)) - p) <= 1e-13 * p);
}

void calibration_profile_properties() {
    using pydp::noise::Family;
    using pydp::noise::Kind;
    const Family lap = Family::make(Kind::Laplace);
    // Laplace: pure eps-DP exactly at scale D / eps; at eps slightly below, delta > 0.
    CHECK(pydp::calibration::log_privacy_profile(lap, 1.0, 1.0, 1.0) == -pydp::calibration::kInf);
    CHECK(pydp::calibration::log_privacy_profile(lap, 0.999, 1.0, 1.0) > -pydp::calibration::kInf);
    // Every family: delta(eps) decreases in eps and increases with the sensitivity.
    for (const Family& f : {lap, Family::make(Kind::Gaussian), Family::make(Kind::Logistic), Family::make(Kind::Subbotin, 3.0)}) {
        double prev = 0.0;
        for (double eps = 0.0; eps <= 5.0; eps += 0.25) {
            const double ld = pydp::calibration::log_privacy_profile(f, eps, 1.0, 1.0);
            if (eps > 0.0) CHECK(ld <= prev);
            prev = ld;
        }
        CHECK(pydp::calibration::log_privacy_profile(f, 0.5, 1.0, 0.5) <= pydp::calibration::log_privacy_profile(f, 0.5, 1.0, 1.0));
    }
}
}  // namespace

int main() {
    chacha_rfc8439_block();
    cpu_levels_are_consistent();
    parallel_chunks_do_not_depend_on_threads();
    normal_tails();
    calibration_profile_properties();
    std::printf("%d failed\n", failures);
    return failures;
}
