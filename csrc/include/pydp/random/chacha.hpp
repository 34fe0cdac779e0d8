// The ChaCha20 block function (Bernstein 2008; RFC 8439 Section 2.3) with a 64-bit block counter and a
// 64-bit nonce (the original layout: state words 12-13 hold the counter, 14-15 the nonce).
//
// chacha20_blocks(key, counter, nonce, out, nblocks) writes the keystream blocks counter, counter + 1,
// ... (64 bytes each, as 16 little-endian 32-bit words per block) to out. A portable scalar version is
// always available; on x86-64 with GCC or Clang, AVX2 (8 blocks at a time) and AVX-512F (16 blocks at a
// time) versions are compiled with function-level target attributes and chosen once at run time from
// the CPU's features, so the library needs no -march flag. Every version writes the same words.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pydp/cpu.hpp"

namespace pydp::random {

constexpr std::size_t kBlockWords = 16;  // 32-bit words in one 64-byte ChaCha block

namespace detail {

constexpr std::uint32_t kSigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};  // "expand 32-byte k"

inline std::uint32_t rotl32(std::uint32_t v, int c) noexcept { return (v << c) | (v >> (32 - c)); }

inline void quarter_round(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d) noexcept {
    a += b; d ^= a; d = rotl32(d, 16);
    c += d; b ^= c; b = rotl32(b, 12);
    a += b; d ^= a; d = rotl32(d, 8);
    c += d; b ^= c; b = rotl32(b, 7);
}

inline void init_state(std::uint32_t s[16], const std::uint32_t key[8], std::uint64_t counter, std::uint64_t nonce) noexcept {
    for (int i = 0; i < 4; ++i) s[i] = kSigma[i];
    for (int i = 0; i < 8; ++i) s[4 + i] = key[i];
    s[12] = static_cast<std::uint32_t>(counter);
    s[13] = static_cast<std::uint32_t>(counter >> 32);
    s[14] = static_cast<std::uint32_t>(nonce);
    s[15] = static_cast<std::uint32_t>(nonce >> 32);
}

inline void blocks_scalar(const std::uint32_t key[8], std::uint64_t counter, std::uint64_t nonce, std::uint32_t* out,
                          std::size_t nblocks) noexcept {
    for (std::size_t b = 0; b < nblocks; ++b) {
        std::uint32_t in[16], x[16];
        init_state(in, key, counter + b, nonce);
        std::memcpy(x, in, sizeof x);
        for (int r = 0; r < 10; ++r) {
            quarter_round(x[0], x[4], x[8], x[12]);
            quarter_round(x[1], x[5], x[9], x[13]);
            quarter_round(x[2], x[6], x[10], x[14]);
            quarter_round(x[3], x[7], x[11], x[15]);
            quarter_round(x[0], x[5], x[10], x[15]);
            quarter_round(x[1], x[6], x[11], x[12]);
            quarter_round(x[2], x[7], x[8], x[13]);
            quarter_round(x[3], x[4], x[9], x[14]);
        }
        for (int i = 0; i < 16; ++i) out[b * kBlockWords + i] = x[i] + in[i];
    }
}

#ifdef PYDP_X86_DISPATCH
// GCC 12's AVX-512 intrinsics initialise a placeholder with itself (`__Y = __Y`, GCC bug 105593), which
// -Wuninitialized reports in the code that inlines them: silenced here so that users can build with -Werror.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Word-sliced SIMD: register w holds state word w of L consecutive blocks (one block per 32-bit lane).
// After the rounds the lanes are transposed back to the block-by-block keystream order.

#define PYDP_QR8(a, b, c, d)                                                                             \
    a = _mm256_add_epi32(a, b); d = _mm256_xor_si256(d, a); d = _mm256_shuffle_epi8(d, rot16);       \
    c = _mm256_add_epi32(c, d); b = _mm256_xor_si256(b, c);                                           \
    b = _mm256_or_si256(_mm256_slli_epi32(b, 12), _mm256_srli_epi32(b, 20));                          \
    a = _mm256_add_epi32(a, b); d = _mm256_xor_si256(d, a); d = _mm256_shuffle_epi8(d, rot8);         \
    c = _mm256_add_epi32(c, d); b = _mm256_xor_si256(b, c);                                           \
    b = _mm256_or_si256(_mm256_slli_epi32(b, 7), _mm256_srli_epi32(b, 25));

__attribute__((target("avx2"))) inline void blocks8_avx2(const std::uint32_t key[8], std::uint64_t counter,
                                                         std::uint64_t nonce, std::uint32_t* out) noexcept {
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                                           2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
                                          3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    alignas(32) std::uint32_t lo[8], hi[8];
    for (int j = 0; j < 8; ++j) {
        const std::uint64_t c = counter + static_cast<std::uint64_t>(j);
        lo[j] = static_cast<std::uint32_t>(c);
        hi[j] = static_cast<std::uint32_t>(c >> 32);
    }
    __m256i in[16];
    for (int i = 0; i < 4; ++i) in[i] = _mm256_set1_epi32(static_cast<int>(kSigma[i]));
    for (int i = 0; i < 8; ++i) in[4 + i] = _mm256_set1_epi32(static_cast<int>(key[i]));
    in[12] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
    in[13] = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi));
    in[14] = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(nonce)));
    in[15] = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(nonce >> 32)));
    __m256i x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3], x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
    __m256i x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11], x12 = in[12], x13 = in[13], x14 = in[14],
            x15 = in[15];
    for (int r = 0; r < 10; ++r) {
        PYDP_QR8(x0, x4, x8, x12) PYDP_QR8(x1, x5, x9, x13) PYDP_QR8(x2, x6, x10, x14) PYDP_QR8(x3, x7, x11, x15)
        PYDP_QR8(x0, x5, x10, x15) PYDP_QR8(x1, x6, x11, x12) PYDP_QR8(x2, x7, x8, x13) PYDP_QR8(x3, x4, x9, x14)
    }
    __m256i x[16] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15};
    for (int i = 0; i < 16; ++i) x[i] = _mm256_add_epi32(x[i], in[i]);
    // Transpose two 8x8 word matrices (words 0-7 and 8-15) from word-major to block-major order.
    for (int half = 0; half < 2; ++half) {
        __m256i* y = x + 8 * half;
        const __m256i t0 = _mm256_unpacklo_epi32(y[0], y[1]), t1 = _mm256_unpackhi_epi32(y[0], y[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(y[2], y[3]), t3 = _mm256_unpackhi_epi32(y[2], y[3]);
        const __m256i t4 = _mm256_unpacklo_epi32(y[4], y[5]), t5 = _mm256_unpackhi_epi32(y[4], y[5]);
        const __m256i t6 = _mm256_unpacklo_epi32(y[6], y[7]), t7 = _mm256_unpackhi_epi32(y[6], y[7]);
        const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
        const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
        const __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
        const __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
        // u0 = block 0 words 0-3 | block 4 words 0-3 (low 128: blocks 0..3 order: u0,u1,u2,u3)
        const __m256i b[8] = {
            _mm256_permute2x128_si256(u0, u4, 0x20), _mm256_permute2x128_si256(u1, u5, 0x20),
            _mm256_permute2x128_si256(u2, u6, 0x20), _mm256_permute2x128_si256(u3, u7, 0x20),
            _mm256_permute2x128_si256(u0, u4, 0x31), _mm256_permute2x128_si256(u1, u5, 0x31),
            _mm256_permute2x128_si256(u2, u6, 0x31), _mm256_permute2x128_si256(u3, u7, 0x31)};
        for (int blk = 0; blk < 8; ++blk)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + blk * kBlockWords + 8 * half), b[blk]);
    }
}
#undef PYDP_QR8

#define PYDP_QR16(a, b, c, d)                                                                      \
    a = _mm512_add_epi32(a, b); d = _mm512_xor_si512(d, a); d = _mm512_rol_epi32(d, 16);        \
    c = _mm512_add_epi32(c, d); b = _mm512_xor_si512(b, c); b = _mm512_rol_epi32(b, 12);        \
    a = _mm512_add_epi32(a, b); d = _mm512_xor_si512(d, a); d = _mm512_rol_epi32(d, 8);         \
    c = _mm512_add_epi32(c, d); b = _mm512_xor_si512(b, c); b = _mm512_rol_epi32(b, 7);

__attribute__((target("avx512f"))) inline void blocks16_avx512(const std::uint32_t key[8], std::uint64_t counter,
                                                              std::uint64_t nonce, std::uint32_t* out) noexcept {
    alignas(64) std::uint32_t lo[16], hi[16];
    for (int j = 0; j < 16; ++j) {
        const std::uint64_t c = counter + static_cast<std::uint64_t>(j);
        lo[j] = static_cast<std::uint32_t>(c);
        hi[j] = static_cast<std::uint32_t>(c >> 32);
    }
    __m512i in[16];
    for (int i = 0; i < 4; ++i) in[i] = _mm512_set1_epi32(static_cast<int>(kSigma[i]));
    for (int i = 0; i < 8; ++i) in[4 + i] = _mm512_set1_epi32(static_cast<int>(key[i]));
    in[12] = _mm512_load_si512(lo);
    in[13] = _mm512_load_si512(hi);
    in[14] = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(nonce)));
    in[15] = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(nonce >> 32)));
    __m512i x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3], x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
    __m512i x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11], x12 = in[12], x13 = in[13], x14 = in[14],
            x15 = in[15];
    for (int r = 0; r < 10; ++r) {
        PYDP_QR16(x0, x4, x8, x12) PYDP_QR16(x1, x5, x9, x13) PYDP_QR16(x2, x6, x10, x14) PYDP_QR16(x3, x7, x11, x15)
        PYDP_QR16(x0, x5, x10, x15) PYDP_QR16(x1, x6, x11, x12) PYDP_QR16(x2, x7, x8, x13) PYDP_QR16(x3, x4, x9, x14)
    }
    __m512i x[16] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15};
    for (int i = 0; i < 16; ++i) x[i] = _mm512_add_epi32(x[i], in[i]);
    // 16x16 transpose: 4 stages of lane interleaving (32-bit, 64-bit, 128-bit, 256-bit granularity).
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(x[i], x[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
    }
    // t[2k] holds (w2k, w2k+1) pairs for lanes {0,1 | 4,5 | 8,9 | 12,13}; t[2k+1] for lanes {2,3 | ...}.
    __m512i u[16];
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    // u[4g + j] (j = 0..3) holds words 4g..4g+3 of block j + 4q in 128-bit lane q (q = 0..3).
    // Gather, for every block, its four 128-bit pieces (one per word group g).
    __m512i v[16];
    for (int j = 0; j < 4; ++j) {
        // mix groups (0,1) and (2,3): v holds [g0 q0, g0 q2, g1 q0, g1 q2] style interleavings.
        const __m512i a01lo = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x88);   // g0:q0,q2 | g1:q0,q2
        const __m512i a01hi = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xdd);   // g0:q1,q3 | g1:q1,q3
        const __m512i a23lo = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x88);
        const __m512i a23hi = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xdd);
        v[j] = _mm512_shuffle_i32x4(a01lo, a23lo, 0x88);        // g0q0 g1q0 g2q0 g3q0 -> block j
        v[8 + j] = _mm512_shuffle_i32x4(a01lo, a23lo, 0xdd);    // q2 -> block j + 8
        v[4 + j] = _mm512_shuffle_i32x4(a01hi, a23hi, 0x88);    // q1 -> block j + 4
        v[12 + j] = _mm512_shuffle_i32x4(a01hi, a23hi, 0xdd);   // q3 -> block j + 12
    }
    for (int blk = 0; blk < 16; ++blk) _mm512_storeu_si512(out + blk * kBlockWords, v[blk]);
}
#undef PYDP_QR16

using BlocksFn = void (*)(const std::uint32_t*, std::uint64_t, std::uint64_t, std::uint32_t*, std::size_t) noexcept;

__attribute__((target("avx2"))) inline void blocks_avx2(const std::uint32_t* key, std::uint64_t counter,
                                                        std::uint64_t nonce, std::uint32_t* out,
                                                        std::size_t nblocks) noexcept {
    std::size_t b = 0;
    for (; b + 8 <= nblocks; b += 8) blocks8_avx2(key, counter + b, nonce, out + b * kBlockWords);
    if (b < nblocks) blocks_scalar(key, counter + b, nonce, out + b * kBlockWords, nblocks - b);
}

__attribute__((target("avx512f"))) inline void blocks_avx512(const std::uint32_t* key, std::uint64_t counter,
                                                            std::uint64_t nonce, std::uint32_t* out,
                                                            std::size_t nblocks) noexcept {
    std::size_t b = 0;
    for (; b + 16 <= nblocks; b += 16) blocks16_avx512(key, counter + b, nonce, out + b * kBlockWords);
    if (b < nblocks) blocks_scalar(key, counter + b, nonce, out + b * kBlockWords, nblocks - b);
}

inline void blocks_portable(const std::uint32_t* key, std::uint64_t counter, std::uint64_t nonce, std::uint32_t* out,
                            std::size_t nblocks) noexcept {
    blocks_scalar(key, counter, nonce, out, nblocks);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // PYDP_X86_DISPATCH

}  // namespace detail

// Implementations that can be forced (tests compare them word for word): the levels of pydp/cpu.hpp.
using ChaChaImpl = cpu::Isa;

inline bool chacha_impl_available(ChaChaImpl impl) noexcept { return cpu::isa_available(impl); }

inline ChaChaImpl chacha_best_impl() noexcept { return cpu::best_isa(); }

// Keystream blocks counter .. counter + nblocks - 1 into out (16 * nblocks words). The caller ensures
// that impl is available (chacha_impl_available); Auto picks the fastest one.
inline void chacha20_blocks(const std::uint32_t key[8], std::uint64_t counter, std::uint64_t nonce, std::uint32_t* out,
                            std::size_t nblocks, ChaChaImpl impl = ChaChaImpl::Auto) noexcept {
    if (impl == ChaChaImpl::Auto) impl = chacha_best_impl();
#ifdef PYDP_X86_DISPATCH
    if (impl == ChaChaImpl::AVX512) return detail::blocks_avx512(key, counter, nonce, out, nblocks);
    if (impl == ChaChaImpl::AVX2) return detail::blocks_avx2(key, counter, nonce, out, nblocks);
#endif
    detail::blocks_scalar(key, counter, nonce, out, nblocks);
}

// Little-endian key bytes to words.
inline void key_from_bytes(const unsigned char bytes[32], std::uint32_t key[8]) noexcept {
    for (int i = 0; i < 8; ++i)
        key[i] = static_cast<std::uint32_t>(bytes[4 * i]) | (static_cast<std::uint32_t>(bytes[4 * i + 1]) << 8) |
                 (static_cast<std::uint32_t>(bytes[4 * i + 2]) << 16) | (static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24);
}

}  // namespace pydp::random
