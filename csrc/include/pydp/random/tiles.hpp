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
#include <algorithm>
#include <cmath>
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
PYDP_ALWAYS_INLINE void zig_fast_one(const std::uint32_t* words, double* x, std::uint64_t* rej, std::size_t j,
                                     const ZigTable& t) noexcept {
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

template <bool Signed>
PYDP_ALWAYS_INLINE void zig_fast_body(const std::uint32_t* words, double* x, std::uint64_t* rej, std::size_t m,
                                      const ZigTable& t) noexcept {
    for (std::size_t j = 0; j < m; ++j) zig_fast_one<Signed>(words, x, rej, j, t);
}

PYDP_ALWAYS_INLINE void uniform_body(const std::uint32_t* words, double* x, std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j)
        x[j] = static_cast<double>(static_cast<std::int64_t>(word_at(words, j) >> 11)) * 0x1.0p-53;
}

template <class T>
PYDP_ALWAYS_INLINE void affine_body(const double* x, T* out, std::size_t m, double loc, double scale) noexcept {
    for (std::size_t j = 0; j < m; ++j) out[j] = static_cast<T>(loc + scale * x[j]);
}

// log and exp written out with plain arithmetic (no libm), so that the scalar and vector variants give
// the same bits; used on the Subbotin path only. det_log: finite normal x > 0, about 1 ulp.
// det_exp: |y| <= 700 (clamped), about 1 ulp.
PYDP_ALWAYS_INLINE double det_log(double x) noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    // x = 2^e * m with m in [sqrt(1/2), sqrt(2)): subtract the bits of sqrt(1/2), shift arithmetically.
    const std::int64_t e = static_cast<std::int64_t>(bits - 0x3fe6a09e667f3bcdULL) >> 52;
    const std::uint64_t mbits = bits - (static_cast<std::uint64_t>(e) << 52);
    double m;
    std::memcpy(&m, &mbits, sizeof m);
    const double f = m - 1.0;
    const double s = f / (2.0 + f);  // log m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| < 0.1716
    const double s2 = s * s;
    const double p = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13 +
                     s2 * (1.0 / 15 + s2 * (1.0 / 17 + s2 * (1.0 / 19 + s2 * (1.0 / 21 + s2 * (1.0 / 23)))))))))));
    const double ed = static_cast<double>(e);
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    return ed * ln2_hi + (2.0 * s + (2.0 * s * p + ed * ln2_lo));
}

PYDP_ALWAYS_INLINE double det_exp(double y) noexcept {
    y = y < -700.0 ? -700.0 : (y > 700.0 ? 700.0 : y);
    const double shifter = 0x1.8p52;
    const double t = y * 0x1.71547652b82fep0 + shifter;  // k = nearest integer to y / ln 2
    const double kd = t - shifter;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    const double r = (y - kd * ln2_hi) - kd * ln2_lo;  // |r| <= ln(2) / 2
    const double p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 +
                     r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800 +
                     r * (1.0 / 39916800 + r * (1.0 / 479001600 + r * (1.0 / 6227020800.0)))))))))))));
    std::uint64_t tb, pb;
    std::memcpy(&tb, &t, sizeof tb);
    std::memcpy(&pb, &p, sizeof pb);
    const std::uint64_t k = tb - 0x4338000000000000ULL;  // two's complement k in the low bits of t
    pb += k << 52;
    double out;
    std::memcpy(&out, &pb, sizeof out);
    return out;
}

// Logistic by inversion: |X| = log1p(2 (1 - u) / u) for u = (k + 1/2) 2^-52 (k: bits 12-63 of word j),
// sign from bit 0. log1p(t) = log(y) + (t - (y - 1)) / y with y = fl(1 + t): the second term restores
// the rounding error of y to first order (branch-free, so the loop vectorises).
PYDP_ALWAYS_INLINE void logistic_body(const std::uint32_t* words, double* x, std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j) {
        const std::uint64_t w = word_at(words, j);
        const double u = (static_cast<double>(static_cast<std::int64_t>(w >> 12)) + 0.5) * 0x1.0p-52;
        const double t = 2.0 * (1.0 - u) / u;
        const double y = 1.0 + t;
        double out = det_log(y) + (t - (y - 1.0)) / y;  // log(1 + t) = log y + log(1 + e / y), e the rounding of y
        std::uint64_t bits;
        std::memcpy(&bits, &out, sizeof bits);
        bits ^= (w & 1) << 63;
        std::memcpy(&out, &bits, sizeof out);
        x[j] = out;
    }
}

// Marsaglia-Tsang, first pass over a tile: t = 1 + c z (the sampler keeps t; v = t^3) and the squeeze
// test with the uniform from word j of wu; fail[j] = 1 where the value needs the exact (log) test or a
// restart (bytes, so the loop vectorises).
PYDP_ALWAYS_INLINE void mt_squeeze_body(const double* z, const std::uint32_t* wu, double c, double* t,
                                        unsigned char* fail, std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j) {
        const double u = (static_cast<double>(static_cast<std::int64_t>(word_at(wu, j) >> 12)) + 0.5) * 0x1.0p-52;
        const double tj = 1.0 + c * z[j];
        const double z2 = z[j] * z[j];
        t[j] = tj;
        const bool ok = (tj > 0.0) & (u < 1.0 - 0.0331 * (z2 * z2));
        fail[j] = static_cast<unsigned char>(!ok);
    }
}

// Marsaglia-Tsang, exact test for the values that failed the squeeze (compacted): with v = t^3, accept
// iff t > 0 and log u < z^2 / 2 + d (1 - v + log v). ok[k] = 1 on acceptance. (t = fl(1 + fl(c z)) is 0
// or at least about 2^-54, so t > 0 implies a normal v > 0.)
PYDP_ALWAYS_INLINE void mt_logtest_body(const double* z, const double* u, const double* t, double d,
                                        unsigned char* ok, std::size_t n) noexcept {
    for (std::size_t k = 0; k < n; ++k) {
        const double v = t[k] * t[k] * t[k];
        const double sv = t[k] > 0.0 ? v : 1.0;  // a select: log is taken of a positive number only
        const double rhs = 0.5 * (z[k] * z[k]) + d * (1.0 - v + det_log(sv));
        ok[k] = static_cast<unsigned char>((t[k] > 0.0) & (det_log(u[k]) < rhs));
    }
}

// The uniform factor U and the sign of a Subbotin value, from word j of wf: out = sign * U * y.
PYDP_ALWAYS_INLINE double signed_uniform_times(std::uint64_t w, double y) noexcept {
    const double u = static_cast<double>(static_cast<std::int64_t>(w >> 11)) * 0x1.0p-53;
    double out = u * y;
    std::uint64_t bits;
    std::memcpy(&bits, &out, sizeof bits);
    bits ^= (w & 1) << 63;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

// Subbotin, last pass: x = sign * U * (r d v)^(1/r) = sign * U * exp((log(r d) + log v) / r), v = t^3.
PYDP_ALWAYS_INLINE void subbotin_finish_body(const double* t, const std::uint32_t* wf, double log_rd, double inv_r,
                                             double* x, std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j)
        x[j] = signed_uniform_times(word_at(wf, j), det_exp((log_rd + det_log(t[j] * t[j] * t[j])) * inv_r));
}

// Subbotin, last pass without exp and log when 3/r is 1, 2 or 1/2 (r = 3, 1.5, 6):
// (r d v)^(1/r) = (r d)^(1/r) t^(3/r), so x = sign * U * k * t^(3/r) with k = (r d)^(1/r). Only correctly
// rounded operations (products, sqrt), so every instruction set gives the same bits.
PYDP_ALWAYS_INLINE void subbotin_finish_pow_body(const double* t, const std::uint32_t* wf, double k, int power,
                                                 double* x, std::size_t m) noexcept {
    if (power == 1) {
        for (std::size_t j = 0; j < m; ++j) x[j] = signed_uniform_times(word_at(wf, j), k * t[j]);
    } else if (power == 2) {
        for (std::size_t j = 0; j < m; ++j) x[j] = signed_uniform_times(word_at(wf, j), k * (t[j] * t[j]));
    } else {  // power 0 stands for 1/2
        for (std::size_t j = 0; j < m; ++j) x[j] = signed_uniform_times(word_at(wf, j), k * __builtin_sqrt(t[j]));
    }
}

// Exact geometric X = floor(t (-ln W)) (pydp/release/geometric.hpp), fast pass over a tile: for W in
// [U, U + 1) / 2^64 (U = word j) a bracket of t (-ln W) with the margins of ExactGeometric::candidates;
// x[j] = the floor of its lower end, ok[j] = 1 when both ends have that floor (and U >= 2^16). Values
// with ok[j] = 0 are decided exactly by the caller. U enters as w = 2 double((U >> 1) | 2^10), within
// [U - 1, U + 2048] and never below 2048 (no select, so the loop vectorises under -ftrapping-math):
// W 2^64 lies in [w - 2048, w + 2], and ln of that in [ln w - 4096 / w, ln w + 4096 / w] for w >= 4096.
// Rounding and det_log's error lie far inside the 2^-42 margin (see geometric.hpp). t < 2^40 (the
// sampler's limit) keeps t (-ln W) below 2^46.
//
// neg_log_bounds: -ln W for W in [U, U + 1) / 2^64 lies in [e - spread, e + spread] (U >= 2^16).
PYDP_ALWAYS_INLINE void neg_log_bounds(std::uint64_t u, double& e, double& spread) noexcept {
    const double c = 0x1.62e42fefa39efp-1 * 64.0;  // 64 ln 2
    const double w = 2.0 * static_cast<double>(static_cast<std::int64_t>((u >> 1) | 1024));
    const double L = det_log(w);
    e = c - L;
    spread = 4096.0 / w + 0x1p-42;
}

PYDP_ALWAYS_INLINE void geometric_fast_body(const std::uint32_t* words, double t, std::int64_t* x, unsigned char* ok,
                                            std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j) {
        const std::uint64_t u = word_at(words, j);
        double e, spread;
        neg_log_bounds(u, e, spread);
        const std::int64_t lo = static_cast<std::int64_t>(t * (e - spread) * (1.0 - 0x1p-48));  // floor when >= 0
        const std::int64_t hi = static_cast<std::int64_t>(t * (e + spread) * (1.0 + 0x1p-48));
        x[j] = lo;
        ok[j] = static_cast<unsigned char>((u >= 65536) & (lo == hi) & (lo >= 0));
    }
}

// The acceptance trials of the discrete Gaussian over a tile (pydp/release/samplers.hpp): proposal y[j]
// is accepted iff W <= exp(-gamma), gamma = (tm |y| - n)^2 / b, for the W whose first word is word j.
// acc[j] = 1: accepted for certain; amb[j] = 1: not decided here (the caller compares exactly). In double:
// a = |tm |y| - n| within err_a = 2^-50 (tm |y| + n) (the conversions of tm, |y| and n, the product and
// the difference: below 5 2^-53 of that sum), gamma within (2 a err_a + err_a^2) / b and 2^-49 relative.
PYDP_ALWAYS_INLINE void gauss_accept_body(const std::int64_t* y, const std::uint32_t* words, double tm, double n,
                                          double inv_b, unsigned char* acc, unsigned char* amb, std::size_t m) noexcept {
    for (std::size_t j = 0; j < m; ++j) {
        const std::uint64_t u = word_at(words, j);
        double e, spread;
        neg_log_bounds(u, e, spread);
        const double ay = static_cast<double>(y[j] < 0 ? -y[j] : y[j]);
        const double p = tm * ay;
        const double d = p - n;
        const double a = d < 0.0 ? -d : d;
        const double err_a = 0x1p-50 * (p + n);
        const double gamma = a * a * inv_b;
        const double slack = (2.0 * a * err_a + err_a * err_a) * inv_b * (1.0 + 0x1p-50) + gamma * 0x1p-49;
        const bool yes = (e - spread) >= gamma + slack;  // -ln W > gamma: W < exp(-gamma)
        const bool no = (e + spread) < gamma - slack;    // -ln W < gamma: W > exp(-gamma)
        acc[j] = static_cast<unsigned char>(yes);
        amb[j] = static_cast<unsigned char>(!(yes | no) | (u < 65536));
    }
}

// The combine loop of the discrete release (pydp/release/release.hpp): out = (rint(clamp(x) 2^-e) + noise) 2^e
// with the range flags (bit 0: an input not finite or beyond 2^52 grid steps; bit 1: an output index beyond
// 2^53) or-ed into the return value. No data-dependent branch; rint as (|s| + 2^52) - 2^52 with the sign
// put back (round half to even, exact for |s| <= 2^52), so the loop vectorises on every instruction set.
PYDP_ALWAYS_INLINE unsigned release_combine_body(const double* x, const std::int64_t* noise, double low, double high,
                                                 double down, double up, double* out, std::size_t m) noexcept {
    const double max_finite = 1.7976931348623157e308, max_index = 4503599627370496.0, two52 = 4503599627370496.0;
    const std::int64_t max_out = std::int64_t{1} << 53;
    std::uint64_t bad = 0;  // 64-bit lanes throughout, so the loop vectorises
    for (std::size_t j = 0; j < m; ++j) {
        const double v = x[j];
        const double clamped = std::min(std::max(v, low), high);  // NaN stays NaN (flagged below)
        const double scaled = clamped * down;                     // exact: a power of two
        const double a = std::fabs(scaled);
        const bool in_range = (std::fabs(v) <= max_finite) & (a <= max_index);
        const double safe = in_range ? a : 0.0;
        const std::int64_t mag = static_cast<std::int64_t>((safe + two52) - two52);  // rint(|s|)
        const std::int64_t sgn = scaled < 0.0 ? -1 : 1;
        const std::int64_t idx = sgn * mag + noise[j];
        bad |= static_cast<std::uint64_t>(!in_range) | (static_cast<std::uint64_t>((idx > max_out) | (idx < -max_out)) << 1);
        out[j] = static_cast<double>(idx) * up;
    }
    return static_cast<unsigned>(bad);
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
    }                                                                                                     \
    attr inline void logistic_##suffix(const std::uint32_t* w, double* x, std::size_t m) noexcept {        \
        logistic_body(w, x, m);                                                                           \
    }                                                                                                     \
    attr inline void mt_squeeze_##suffix(const double* z, const std::uint32_t* wu, double c, double* v,    \
                                         unsigned char* f, std::size_t m) noexcept {                      \
        mt_squeeze_body(z, wu, c, v, f, m);                                                               \
    }                                                                                                     \
    attr inline void mt_logtest_##suffix(const double* z, const double* u, const double* v, double d,      \
                                         unsigned char* ok, std::size_t n) noexcept {                     \
        mt_logtest_body(z, u, v, d, ok, n);                                                               \
    }                                                                                                     \
    attr inline void subbotin_finish_##suffix(const double* v, const std::uint32_t* wf, double lrd, double ir, \
                                              double* x, std::size_t m) noexcept {                        \
        subbotin_finish_body(v, wf, lrd, ir, x, m);                                                       \
    }                                                                                                     \
    attr inline void subbotin_finish_pow_##suffix(const double* t, const std::uint32_t* wf, double k, int p, \
                                                  double* x, std::size_t m) noexcept {                    \
        subbotin_finish_pow_body(t, wf, k, p, x, m);                                                      \
    }                                                                                                     \
    attr inline unsigned release_combine_##suffix(const double* x, const std::int64_t* y, double lo, double hi,  \
                                                  double dn, double up, double* o, std::size_t m) noexcept {  \
        return release_combine_body(x, y, lo, hi, dn, up, o, m);                                           \
    }                                                                                                     \
    attr inline void gauss_accept_##suffix(const std::int64_t* y, const std::uint32_t* w, double tm, double n,   \
                                           double ib, unsigned char* acc, unsigned char* amb, std::size_t m) noexcept { \
        gauss_accept_body(y, w, tm, n, ib, acc, amb, m);                                                  \
    }                                                                                                     \
    attr inline void geometric_fast_##suffix(const std::uint32_t* w, double t, std::int64_t* x, unsigned char* ok, \
                                             std::size_t m) noexcept {                                    \
        geometric_fast_body(w, t, x, ok, m);                                                              \
    }

PYDP_TILE_VARIANTS(scalar, )
#ifdef PYDP_X86_DISPATCH
// See chacha.hpp: GCC 12's AVX-512 intrinsics trip -Wuninitialized (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
PYDP_TILE_VARIANTS(avx2, __attribute__((target("avx2"))))
PYDP_TILE_VARIANTS(avx512, __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))))

// The ziggurat fast path written with AVX-512 intrinsics (the compiler does not vectorise the table
// lookups under generic tuning): the same operations as zig_fast_body, eight words at a time. x86 is
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
        // Table lookups by scalar loads: on this project's machine (a KVM Ice Lake) vgatherqpd is slower
        // than eight plain loads (microcode mitigations make gathers slow on many recent Intel CPUs).
        alignas(64) std::uint64_t idx[8];
        alignas(64) double wv[8];
        alignas(64) std::uint64_t kv[8];
        _mm512_store_si512(idx, i);
        for (int q = 0; q < 8; ++q) {
            wv[q] = t.w[idx[q]];
            kv[q] = t.k[idx[q]];
        }
        const __m512d wt = _mm512_load_pd(wv);
        const __m512i kt = _mm512_load_si512(kv);
        __m512d v = _mm512_mul_pd(_mm512_cvtepi64_pd(k), wt);
        if (Signed) {
            const __m512i sb = _mm512_slli_epi64(_mm512_and_si512(w, bit8), 55);
            v = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(v), sb));
        }
        _mm512_storeu_pd(x + j, v);
        const __mmask8 r = _mm512_cmpge_epu64_mask(k, kt);
        rej[j / 64] |= static_cast<std::uint64_t>(r) << (j % 64);
    }
    for (; j < m; ++j) zig_fast_one<Signed>(words, x, rej, j, t);  // the last m % 8 values
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) inline void zig_fast_signed_avx512i(
    const std::uint32_t* w, double* x, std::uint64_t* r, std::size_t m, const ZigTable& t) noexcept {
    zig_fast_avx512_intr<true>(w, x, r, m, t);
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) inline void zig_fast_unsigned_avx512i(
    const std::uint32_t* w, double* x, std::uint64_t* r, std::size_t m, const ZigTable& t) noexcept {
    zig_fast_avx512_intr<false>(w, x, r, m, t);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
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
    void (*logistic)(const std::uint32_t*, double*, std::size_t) noexcept;
    void (*mt_squeeze)(const double*, const std::uint32_t*, double, double*, unsigned char*, std::size_t) noexcept;
    void (*mt_logtest)(const double*, const double*, const double*, double, unsigned char*, std::size_t) noexcept;
    void (*subbotin_finish)(const double*, const std::uint32_t*, double, double, double*, std::size_t) noexcept;
    void (*subbotin_finish_pow)(const double*, const std::uint32_t*, double, int, double*, std::size_t) noexcept;
    void (*geometric_fast)(const std::uint32_t*, double, std::int64_t*, unsigned char*, std::size_t) noexcept;
    void (*gauss_accept)(const std::int64_t*, const std::uint32_t*, double, double, double, unsigned char*,
                         unsigned char*, std::size_t) noexcept;
    unsigned (*release_combine)(const double*, const std::int64_t*, double, double, double, double, double*,
                                std::size_t) noexcept;

    template <class T>
    void affine(const double* x, T* out, std::size_t m, double loc, double scale) const noexcept {
        if constexpr (sizeof(T) == sizeof(double)) affine_f64(x, out, m, loc, scale);
        else affine_f32(x, out, m, loc, scale);
    }
};

// Same selector as the cipher: Scalar / AVX2 / AVX512 / Auto (the best available).
inline TileOps tile_ops(ChaChaImpl isa) noexcept {
    if (isa == ChaChaImpl::Auto) isa = chacha_best_impl();
#ifdef PYDP_X86_DISPATCH
    if (isa == ChaChaImpl::AVX512 && cpu::isa_available(cpu::Isa::AVX512))
        return {detail::zig_fast_signed_avx512i, detail::zig_fast_unsigned_avx512i, detail::uniform_avx512,
                detail::affine_f64_avx512, detail::affine_f32_avx512, detail::logistic_avx512, detail::mt_squeeze_avx512, detail::mt_logtest_avx512,
                detail::subbotin_finish_avx512, detail::subbotin_finish_pow_avx512, detail::geometric_fast_avx512, detail::gauss_accept_avx512, detail::release_combine_avx512};
    if (isa == ChaChaImpl::AVX2 || isa == ChaChaImpl::AVX512)
        return {detail::zig_fast_signed_avx2, detail::zig_fast_unsigned_avx2, detail::uniform_avx2,
                detail::affine_f64_avx2, detail::affine_f32_avx2, detail::logistic_avx2, detail::mt_squeeze_avx2, detail::mt_logtest_avx2,
                detail::subbotin_finish_avx2, detail::subbotin_finish_pow_avx2, detail::geometric_fast_avx2, detail::gauss_accept_avx2, detail::release_combine_avx2};
#endif
    return {detail::zig_fast_signed_scalar, detail::zig_fast_unsigned_scalar, detail::uniform_scalar,
            detail::affine_f64_scalar, detail::affine_f32_scalar, detail::logistic_scalar, detail::mt_squeeze_scalar, detail::mt_logtest_scalar,
            detail::subbotin_finish_scalar, detail::subbotin_finish_pow_scalar, detail::geometric_fast_scalar, detail::gauss_accept_scalar, detail::release_combine_scalar};
}

}  // namespace pydp::random
