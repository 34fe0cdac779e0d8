// Vectorisable fast paths of the bulk samplers, compiled for several instruction sets.
//
// A bulk kernel processes its chunk in tiles of up to kTile values. Value j of a tile owns fixed words
// of the chunk's primary stream; the fast path (the ziggurat's "inside the rectangle" test, ~99% of
// values) is a branch-free loop over those words that the compiler vectorises. Values that fail it are
// finished afterwards, in index order, by the scalar slow path with words from the chunk's extra stream.
// The output therefore does not depend on the instruction set: each variant below runs the same
// integer operations and the same correctly rounded multiplications (no FMA contraction: the project
// builds with -ffp-contract=off), and tests compare them bit for bit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pydp/random/chacha.hpp"
#include "pydp/random/ziggurat.hpp"

namespace pydp::random {

constexpr std::size_t kTile = 256;

namespace detail {

#if defined(__GNUC__) || defined(__clang__)
#define PYDP_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PYDP_ALWAYS_INLINE inline
#endif

inline std::uint64_t word_at(const std::uint32_t* b, std::size_t j) noexcept {
    return static_cast<std::uint64_t>(b[2 * j]) | (static_cast<std::uint64_t>(b[2 * j + 1]) << 32);
}

// Rejection flags of a tile: bit j of the bitmask (kTile / 64 words).
constexpr std::size_t kMaskWords = 256 / 64;

// Ziggurat fast path on words[0..m): x[j] = +-k * W[i], and bit j of rej set where the point may lie
// outside the density (the slow path then finishes value j). Sign from bit 8 when Signed.
template <bool Signed>
PYDP_ALWAYS_INLINE void zig_fast_body(const std::uint32_t* words, double* x, std::uint64_t* rej, std::size_t m,
                                      const ZigTable& t) noexcept {
    for (std::size_t j = 0; j < m; ++j) {
        const std::uint64_t w = word_at(words, j);
        const std::uint64_t i = w & 0xff;
        const std::uint64_t k = w >> 11;
        double v = static_cast<double>(static_cast<std::int64_t>(k)) * t.w[i];
        if (Signed) {  // flip the IEEE sign bit with bit 8 of w (branch-free; the same as -v)
            std::uint64_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            bits ^= (w & 0x100) << 55;
            std::memcpy(&v, &bits, sizeof v);
        }
        x[j] = v;
        rej[j / 64] |= static_cast<std::uint64_t>(k >= t.k[i]) << (j % 64);
    }
}

PYDP_ALWAYS_INLINE void uniform_body(const std::uint32_t* words, double* x, std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j)
        x[j] = static_cast<double>(static_cast<std::int64_t>(word_at(words, j) >> 11)) * 0x1.0p-53;
}

template <class T>
PYDP_ALWAYS_INLINE void affine_body(const double* x, T* out, std::size_t m, double loc, double scale) noexcept {
    for (std::size_t j = 0; j < m; ++j) out[j] = static_cast<T>(loc + scale * x[j]);
}

#define PYDP_TILE_VARIANTS(suffix, attr)                                                                   \
    attr inline void zig_fast_signed_##suffix(const std::uint32_t* w, double* x, std::uint64_t* r, std::size_t m, \
                                              const ZigTable& t) noexcept {                              \
        zig_fast_body<true>(w, x, r, m, t);                                                               \
    }                                                                                                     \
    attr inline void zig_fast_unsigned_##suffix(const std::uint32_t* w, double* x, std::uint64_t* r, std::size_t m, \
                                                const ZigTable& t) noexcept {                            \
        zig_fast_body<false>(w, x, r, m, t);                                                              \
    }                                                                                                     \
    attr inline void uniform_##suffix(const std::uint32_t* w, double* x, std::size_t m) noexcept {         \
        uniform_body(w, x, m);                                                                            \
    }                                                                                                     \
    attr inline void affine_f64_##suffix(const double* x, double* o, std::size_t m, double l, double s) noexcept { \
        affine_body(x, o, m, l, s);                                                                       \
    }                                                                                                     \
    attr inline void affine_f32_##suffix(const double* x, float* o, std::size_t m, double l, double s) noexcept { \
        affine_body(x, o, m, l, s);                                                                       \
    }

PYDP_TILE_VARIANTS(scalar, )
#ifdef PYDP_CHACHA_X86
PYDP_TILE_VARIANTS(avx2, __attribute__((target("avx2"))))
PYDP_TILE_VARIANTS(avx512, __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))))

// The ziggurat fast path written with AVX-512 intrinsics (the compiler does not vectorise the table
// gathers under generic tuning): the same operations as zig_fast_body, eight words at a time. x86 is
// little-endian, so a pair of keystream words is the 64-bit word word_at() builds.
template <bool Signed>
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) inline void zig_fast_avx512_intr(
    const std::uint32_t* words, double* x, std::uint64_t* rej, std::size_t m, const ZigTable& t) noexcept {
    const __m512i low8 = _mm512_set1_epi64(0xff);
    const __m512i bit8 = _mm512_set1_epi64(0x100);
    std::size_t j = 0;
    for (; j + 8 <= m; j += 8) {
        const __m512i w = _mm512_loadu_si512(words + 2 * j);
        const __m512i i = _mm512_and_si512(w, low8);
        const __m512i k = _mm512_srli_epi64(w, 11);
        const __m512d wt = _mm512_i64gather_pd(i, t.w, 8);
        const __m512i kt = _mm512_i64gather_epi64(i, reinterpret_cast<const long long*>(t.k), 8);
        __m512d v = _mm512_mul_pd(_mm512_cvtepi64_pd(k), wt);
        if (Signed) {
            const __m512i sb = _mm512_slli_epi64(_mm512_and_si512(w, bit8), 55);
            v = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(v), sb));
        }
        _mm512_storeu_pd(x + j, v);
        const __mmask8 r = _mm512_cmpge_epu64_mask(k, kt);
        rej[j / 64] |= static_cast<std::uint64_t>(r) << (j % 64);
    }
    for (; j < m; ++j) {  // the last m % 8 values, as in zig_fast_body
        const std::uint64_t w = word_at(words, j);
        const std::uint64_t i = w & 0xff;
        const std::uint64_t k = w >> 11;
        double v = static_cast<double>(static_cast<std::int64_t>(k)) * t.w[i];
        if (Signed) {
            std::uint64_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            bits ^= (w & 0x100) << 55;
            std::memcpy(&v, &bits, sizeof v);
        }
        x[j] = v;
        rej[j / 64] |= static_cast<std::uint64_t>(k >= t.k[i]) << (j % 64);
    }
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) inline void zig_fast_signed_avx512i(
    const std::uint32_t* w, double* x, std::uint64_t* r, std::size_t m, const ZigTable& t) noexcept {
    zig_fast_avx512_intr<true>(w, x, r, m, t);
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) inline void zig_fast_unsigned_avx512i(
    const std::uint32_t* w, double* x, std::uint64_t* r, std::size_t m, const ZigTable& t) noexcept {
    zig_fast_avx512_intr<false>(w, x, r, m, t);
}
#endif
#undef PYDP_TILE_VARIANTS

}  // namespace detail

// The tile functions for one instruction set.
struct TileOps {
    void (*zig_signed)(const std::uint32_t*, double*, std::uint64_t*, std::size_t, const detail::ZigTable&) noexcept;
    void (*zig_unsigned)(const std::uint32_t*, double*, std::uint64_t*, std::size_t, const detail::ZigTable&) noexcept;
    void (*uniform)(const std::uint32_t*, double*, std::size_t) noexcept;
    void (*affine_f64)(const double*, double*, std::size_t, double, double) noexcept;
    void (*affine_f32)(const double*, float*, std::size_t, double, double) noexcept;

    template <class T>
    void affine(const double* x, T* out, std::size_t m, double loc, double scale) const noexcept {
        if constexpr (sizeof(T) == sizeof(double)) affine_f64(x, out, m, loc, scale);
        else affine_f32(x, out, m, loc, scale);
    }
};

// Same selector as the cipher: Scalar / AVX2 / AVX512 / Auto (the best available).
inline TileOps tile_ops(ChaChaImpl isa) noexcept {
    if (isa == ChaChaImpl::Auto) isa = chacha_best_impl();
#ifdef PYDP_CHACHA_X86
    if (isa == ChaChaImpl::AVX512 && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw"))
        return {detail::zig_fast_signed_avx512i, detail::zig_fast_unsigned_avx512i, detail::uniform_avx512,
                detail::affine_f64_avx512, detail::affine_f32_avx512};
    if (isa == ChaChaImpl::AVX2 || isa == ChaChaImpl::AVX512)
        return {detail::zig_fast_signed_avx2, detail::zig_fast_unsigned_avx2, detail::uniform_avx2,
                detail::affine_f64_avx2, detail::affine_f32_avx2};
#endif
    return {detail::zig_fast_signed_scalar, detail::zig_fast_unsigned_scalar, detail::uniform_scalar,
            detail::affine_f64_scalar, detail::affine_f32_scalar};
}

}  // namespace pydp::random
