// Kernel tests that need no Python: the headers under csrc/include/pydp/ compiled on their own, as an
// embedding C++ project would use them: the ChaCha20 block, the CPU dispatch, thread-independent chunks,
// normal tails, calibration profiles, and the FFT's AVX2 butterflies. Built by CMake (PYDP_BUILD_TESTS)
// and run by ctest, which tests/packaging/test_cpp_kernels.py drives. Each CHECK prints the failing expression;
// the exit status is the number of failures.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "pydp/accounting/fft.hpp"
#include "pydp/calibration/profile.hpp"
#include "pydp/cpu.hpp"
#include "pydp/release/table.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/chacha.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/special/constants.hpp"
#include "pydp/special/normal.hpp"

#include "check.hpp"

namespace {

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
// The AVX2 butterfly loops of the PLD engine's FFT compute bit for bit what the scalar butterflies
// compute (the rounding bound of docs/pld.md assumes the scalar operations): every kind of stage and of
// stage pair, on random data with random unit twiddles, against the scalar formulas written out here.
void fft_avx2_matches_scalar() {
#ifdef PYDP_X86_DISPATCH
    if (!pydp::cpu::isa_available(pydp::cpu::Isa::AVX2)) return;
    using pydp::accounting::fft::cplx;
    std::uint64_t state = 88172645463325252ull;
    const auto uniform = [&state] {  // xorshift64, in [-1, 1)
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return static_cast<double>(state >> 11) * 0x1p-52 - 1.0;
    };
    const auto dit = [](cplx& lo, cplx& hi, cplx w, bool conj) {
        const double wr = w.real(), wi = conj ? -w.imag() : w.imag();
        const double tr = wr * hi.real() - wi * hi.imag(), ti = wr * hi.imag() + wi * hi.real();
        const cplx l = lo;
        lo = cplx(l.real() + tr, l.imag() + ti);
        hi = cplx(l.real() - tr, l.imag() - ti);
    };
    const auto dif = [](cplx& lo, cplx& hi, cplx w) {
        const double dr = lo.real() - hi.real(), di = lo.imag() - hi.imag();
        lo = cplx(lo.real() + hi.real(), lo.imag() + hi.imag());
        hi = cplx(w.real() * dr - w.imag() * di, w.real() * di + w.imag() * dr);
    };
    const std::size_t n = 64;
    for (std::size_t m = 2; m <= n / 2; m *= 2) {
        for (int kind = 0; kind < 3; ++kind) {
            std::vector<cplx> w(3 * m), a(n), b;
            for (cplx& v : w) {
                const double t = pydp::special::kPi * uniform();
                v = cplx(std::cos(t), std::sin(t));
            }
            for (cplx& v : a) v = cplx(uniform(), uniform());
            b = a;  // one stage of half-length m
            pydp::accounting::fft::avx2::stage(b.data(), n, m, w.data(), kind);
            std::vector<cplx> r = a;
            for (std::size_t s = 0; s < n; s += 2 * m) {
                for (std::size_t j = 0; j < m; ++j) {
                    if (kind == 2) dif(r[s + j], r[s + m + j], w[j]);
                    else dit(r[s + j], r[s + m + j], w[j], kind == 1);
                }
            }
            CHECK(r == b);
            if (4 * m > n) continue;
            b = a;  // stages m and 2m together (twiddles w[0, m) and w[m, 3m))
            pydp::accounting::fft::avx2::stage_pair(b.data(), n, m, w.data(), w.data() + m, kind);
            r = a;
            for (std::size_t s = 0; s < n; s += 4 * m) {
                for (std::size_t j = 0; j < m; ++j) {
                    cplx &p = r[s + j], &q = r[s + m + j], &u = r[s + 2 * m + j], &v = r[s + 3 * m + j];
                    if (kind == 2) {
                        dif(p, u, w[m + j]);
                        dif(q, v, w[2 * m + j]);
                        dif(p, q, w[j]);
                        dif(u, v, w[j]);
                    } else {
                        dit(p, q, w[j], kind == 1);
                        dit(u, v, w[j], kind == 1);
                        dit(p, u, w[m + j], kind == 1);
                        dit(q, v, w[2 * m + j], kind == 1);
                    }
                }
            }
            CHECK(r == b);
        }
    }
#endif
}
// The lattice table (discrete/table.hpp): symmetric non-increasing weights, the inversion hits each y
// exactly W(|y|) times over all U in [0, T) of a small table, the profile is 0 for a shift the table
// cannot reach beyond, and monotone in the shift.
void lattice_table_inversion_and_profile() {
    using pydp::release::LatticeKind;
    using pydp::release::LatticeTable;
    const LatticeTable t(LatticeKind::Subbotin, 2.5, 2.0, 6, 1000);  // W(0) = 64, a handful of entries
    const std::int64_t K = static_cast<std::int64_t>(t.half_size());
    CHECK(K >= 2 && t.weight(0) == 64);
    for (std::int64_t y = 1; y <= K + 1; ++y) CHECK(t.weight(y) <= t.weight(y - 1) && t.weight(-y) == t.weight(y));
    std::vector<std::uint64_t> hits(static_cast<std::size_t>(2 * K + 1), 0);
    for (std::uint64_t U = 0; U < t.total(); ++U) {
        std::int64_t y = 0;
        unsigned it = 0;
        t.fill_from_uniform(&U, &y, 1, &it);
        CHECK(it == t.search_steps());
        if (y >= -K && y <= K) ++hits[static_cast<std::size_t>(y + K)];
        else CHECK(false);
    }
    for (std::int64_t y = -K; y <= K; ++y) CHECK(hits[static_cast<std::size_t>(y + K)] == t.weight(y));
    CHECK(LatticeTable::uniform_stable(~0ull, ~0ull, ~0ull, t.total()) == t.total() - 1);
    CHECK(LatticeTable::uniform_stable(0, 0, 0, t.total()) == 0);
    double prev = -1e300;
    for (std::uint64_t k = 1; k <= 6; ++k) {
        const double ld = t.log_delta(0.5, k);
        CHECK(ld >= prev && ld <= 0.0);
        prev = ld;
    }
}
// The Logistic table with a geometric tail: non-increasing at the junction (W_t (1 - q) <= W(K)), the tail
// reached by about its share of the draws (values beyond K), and the log-ratio bound at least k/s, close to
// it, and non-decreasing in the shift.
void lattice_table_geometric_tail() {
    using pydp::release::LatticeKind;
    using pydp::release::LatticeTable;
    const LatticeTable t(LatticeKind::Logistic, 1.0, 50.0, 40, 1u << 20, 12);
    const std::int64_t K = static_cast<std::int64_t>(t.half_size());
    CHECK(t.has_tail() && K == 485);
    CHECK(t.weight(K) >= (1ull << 28) && t.tail_weight() <= 50 * t.weight(K));
    double prev = 0.0;
    for (std::uint64_t k = 1; k <= 60; ++k) {
        const double b = t.log_ratio_bound(k);
        CHECK(b >= static_cast<double>(k) / 50.0 && b <= static_cast<double>(k) / 50.0 + 1e-9);
        CHECK(b >= prev);
        prev = b;
    }
    const unsigned char key[32] = {7};
    pydp::random::Generator src(key, 0);
    std::vector<std::int64_t> out(1u << 20);
    t.fill(src, out.data(), out.size(), false);
    std::size_t beyond = 0;
    for (std::int64_t v : out) beyond += v > K || v < -K;
    // expected share 2 W_t / T, about 2^-13 here: 127 of 2^20 values (the band is beyond 5.5 sigma)
    CHECK(beyond >= 65 && beyond <= 190);
}
}  // namespace

int main() {
    chacha_rfc8439_block();
    cpu_levels_are_consistent();
    parallel_chunks_do_not_depend_on_threads();
    normal_tails();
    calibration_profile_properties();
    fft_avx2_matches_scalar();
    lattice_table_inversion_and_profile();
    lattice_table_geometric_tail();
    return pydp_test::report();
}
