// Exact samplers for the discrete Laplace and discrete Gaussian distributions on the integers
// (Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
// Algorithms 1-3), on any bit source with `std::uint64_t next_u64()`.
//
//   discrete Laplace, t = s/d:        P(Y = y) proportional to exp(-|y| / t)
//   discrete Gaussian, sigma^2 = n/m: P(Y = y) proportional to exp(-y^2 / (2 sigma^2))
//
// The discrete Laplace draws its magnitude by exact inversion (geometric.hpp) for t < 2^32, and in bulk
// on a ChaCha generator the floating-point passes are vectorised (random/tiles.hpp); floating point only
// proposes answers, which exact integer comparisons settle whenever it cannot decide. The parameters are
// exact rationals of 64-bit integers, the decisions exact integer arithmetic (64 and 128 bits, big integers
// on rare slow paths). The samplers are exact: the only departures from the target law are
// (a) an std::overflow_error when |Y| would reach 2^62, whose probability is below exp(-2^21) for every
// parameter accepted here, and (b) a loop counter that saturates at 2^64 - 1 Bernoulli(exp(-1)) successes
// in a row (probability exp(-2^64)). Neither can be observed in practice; both are stated for honesty.
//
// Timing: the number of random bits consumed, and so the time, depends on the noise drawn (rejection
// sampling), not on any data. See docs/release.md for what is and is not constant-time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pydp/release/bigint.hpp"
#include "pydp/release/bits.hpp"
#include "pydp/release/geometric.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/random/tiles.hpp"

namespace pydp::release {

using i64 = std::int64_t;

inline constexpr u64 kMaxParam = u64{1} << 62;      // numerators and denominators of the parameters
inline constexpr u64 kMaxLaplaceT = u64{1} << 40;   // largest discrete Laplace t = s/d
inline constexpr u64 kMaxAbsNoise = u64{1} << 62;   // |Y| must stay below this (else overflow_error)
inline constexpr std::size_t kNoiseChunk = 4096;    // values per random stream (reproducibility contract)

// floor(sqrt(n)) for 64-bit n, exactly (integer Newton iteration).
inline u64 isqrt(u64 n) noexcept {
    if (n < 2) return n;
    u64 x = n;
    u64 y = (x + 1) / 2;
    while (y < x) {
        x = y;
        y = (x + n / x) / 2;
    }
    return x;
}

// ---------------------------------------------------------------------------------------------------
// Bernoulli(exp(-gamma)) for rational gamma >= 0 (CKS Algorithm 1).
// ---------------------------------------------------------------------------------------------------
// gamma = p/q in [0, 1]: K = 1, 2, ... while Bernoulli(gamma / K) succeeds; the result is "K odd".
// Bernoulli(p / (q K)) is drawn as Bernoulli(1/K) and Bernoulli(p/q), so q K never overflows.
template <class Source, class U>
bool bernoulli_exp_fraction(BitReader<Source>& br, U p, U q) {
    if (p == 0) return true;
    u64 k = 1;
    for (;;) {
        if (k > 1 && !br.bernoulli(u64{1}, k)) break;
        if (!br.bernoulli(p, q)) break;
        ++k;
    }
    return (k & 1u) != 0;
}

// Bernoulli(exp(-1)). Algorithm 1 with gamma = 1 runs the chain Bernoulli(1/2), Bernoulli(1/3), ... and
// answers "the first failure K is odd". The chain survives past n with probability 1/n!, so K has the law
// of min{n >= 2 : W > 1/n!} for one uniform W in (0, 1); we decide these comparisons from one 64-bit word
// U of W against T_n = floor(2^64 / n!), settling a tie U == T_n exactly with the next bits of W
// (Bernoulli(r_n / n!), r_n = 2^64 mod n!). Past n = 20 (probability 1/20! ~ 4e-19) the chain continues
// with fresh Bernoulli(1/n) trials, which is the same law by memorylessness of the chain.
namespace detail {
struct FactorialThresholds {
    u64 fact[21];
    u64 floor_[21];  // floor(2^64 / n!)
    u64 rem[21];     // 2^64 mod n!
    constexpr FactorialThresholds() : fact(), floor_(), rem() {
        u64 f = 1;
        for (int n = 1; n <= 20; ++n) {
            f *= static_cast<u64>(n);
            fact[n] = f;
            const u128 two64 = u128{1} << 64;
            floor_[n] = static_cast<u64>(two64 / f);
            rem[n] = static_cast<u64>(two64 % f);
        }
    }
};
inline constexpr FactorialThresholds kFactorial{};
}  // namespace detail

template <class Source>
bool bernoulli_exp_one(BitReader<Source>& br) {
    const u64 u = br.word();
    // W > 1/n! iff U > T_n, or U == T_n and the rest of W exceeds r_n/n! (W = 1/n! exactly has probability 0).
    for (int n = 2; n <= 20; ++n) {
        const u64 t = detail::kFactorial.floor_[n];
        bool above;
        if (u != t) above = u > t;
        else above = !br.bernoulli(detail::kFactorial.rem[n], detail::kFactorial.fact[n]);
        if (above) return (n & 1) != 0;
    }
    u64 k = 21;  // the chain survived Bernoulli(1/2) ... Bernoulli(1/20)
    while (br.bernoulli(u64{1}, k)) ++k;
    return (k & 1u) != 0;
}

// ---------------------------------------------------------------------------------------------------
// The geometric magnitude of CKS Algorithm 2 (used for t = s/d >= 2^32, where the inversion of
// geometric.hpp needs its exact slow path too often): X = floor((s V + U) / d) with U uniform on
// {0, ..., s - 1} kept with probability exp(-U/s) and V ~ Geometric(exp(-1)).
// ---------------------------------------------------------------------------------------------------
// Bernoulli(exp(-u/s)) for 0 <= u < s <= 2^62 from one uniform W: Algorithm 1 with gamma = u/s survives
// past step n with probability T_n = gamma^n / n!, a decreasing sequence, so its first failure K has the
// law of min{n >= 1 : W > T_n}, and the answer is "K odd" (1 - T_1 + T_2 - ... = exp(-gamma)). W's first
// 64 bits U are one word; lo_n <= 2^64 T_n <= hi_n are built from 64 x 64-bit products (bounds on
// 2^64 gamma from a reciprocal of s, on 2^64 gamma^n, and floor / ceil(2^64 / n!)). U >= hi_n decides
// W > T_n and U < lo_n decides W < T_n; otherwise (about 2^-62 per step) W is compared with T_n exactly:
// with A = 2^64 u^n and B = U s^n n! (big integers), B >= A: above; A - B >= s^n n!: below; else W's next
// bits against (A - B) / (s^n n!) by long division. (W = T_n has probability 0.)
namespace detail {
template <class Source>
bool above_threshold_exact(BitReader<Source>& br, u64 U, u64 u, u64 s, u64 n) {
    BigUInt q(1), a(1);
    for (u64 i = 1; i <= n; ++i) {
        q.mul(s);
        q.mul(i);
        a.mul(u);
    }
    a.shift_words(1);  // A = 2^64 u^n
    BigUInt b = q;
    b.mul(U);  // B = U s^n n!
    if (b.compare(a) >= 0) return true;  // W >= U / 2^64 >= T_n
    a.subtract(b);                       // R = A - B > 0: W > T_n iff W' > R / Q for W' = 2^64 W - U
    if (a.compare(q) >= 0) return false; // R / Q >= 1 > W'
    for (;;) {
        a.add(a);
        const bool digit = a.compare(q) >= 0;
        if (digit) a.subtract(q);
        const bool b1 = br.bit();
        if (b1 != digit) return b1;
        if (a.is_zero()) return true;  // R / Q's expansion ended; W' exceeds it
    }
}
inline u64 mul_hi(u64 a, u64 b) noexcept { return static_cast<u64>((static_cast<u128>(a) * b) >> 64); }
inline u64 mul_hi_up(u64 a, u64 b) noexcept {  // ceil(a b / 2^64)
    const u128 p = static_cast<u128>(a) * b;
    return static_cast<u64>(p >> 64) + (static_cast<u64>(p) != 0);
}
}  // namespace detail

class ExpRatio {
public:
    explicit ExpRatio(u64 s) : s_(s) {
        if (s == 0 || s > kMaxParam) throw std::invalid_argument("Bernoulli(exp(-u/s)) needs 1 <= s <= 2^62");
        while ((u64{2} << k_) <= s) ++k_;  // k = floor(log2 s)
        // inv = floor((2^(64+k) - 1) / s) < 2^64, and inv <= 2^(64+k) / s <= inv + 1.
        inv_ = static_cast<u64>(((u128{1} << (64 + k_)) - 1) / s);
    }

    template <class Source>
    bool operator()(BitReader<Source>& br, u64 u) const {
        if (u == 0) return true;
        const u64 U = br.word();
        // 2^64 u / s lies in [u inv / 2^k, u (inv + 1) / 2^k]; both ends below 2^64 - 1 as u <= s - 1.
        const u64 g_lo = static_cast<u64>((static_cast<u128>(u) * inv_) >> k_);
        const u128 up = static_cast<u128>(u) * inv_ + u;
        const u64 g_hi = static_cast<u64>(up >> k_) + ((up & ((u128{1} << k_) - 1)) != 0);
        u64 p_lo = g_lo, p_hi = g_hi;  // bounds on 2^64 gamma^n
        for (u64 n = 1;; ++n) {
            u64 lo = g_lo, hi = g_hi;
            if (n > 1) {
                p_lo = detail::mul_hi(p_lo, g_lo);
                p_hi = detail::mul_hi_up(p_hi, g_hi);
                lo = n <= 20 ? detail::mul_hi(p_lo, detail::kFactorial.floor_[n]) : 0;
                hi = n <= 20 ? detail::mul_hi_up(p_hi, detail::kFactorial.floor_[n] + (detail::kFactorial.rem[n] != 0))
                             : (p_hi != 0);  // ceil(2^64 / n!) = 1 past n = 20
            }
            bool above;
            if (U >= hi) above = true;       // W >= U / 2^64 >= T_n
            else if (U < lo) above = false;  // W < (U + 1) / 2^64 <= T_n
            else above = detail::above_threshold_exact(br, U, u, s_, n);
            if (above) return (n & 1u) != 0;
        }
    }

private:
    u64 s_;
    int k_ = 0;
    u64 inv_ = 0;
};

class CksGeometric {
public:
    CksGeometric(u64 s, u64 d) : s_(s), d_(d), accept_(s) {}
    template <class Source>
    u64 operator()(BitReader<Source>& br) const {
        for (;;) {
            const u64 u = s_ == 1 ? 0 : br.uniform_below(s_);
            if (!accept_(br, u)) continue;
            u64 v = 0;
            while (v != ~u64{0} && bernoulli_exp_one(br)) ++v;
            const u128 x = (static_cast<u128>(s_) * v + u) / d_;
            if (x >= kMaxAbsNoise) throw std::overflow_error("discrete Laplace: |noise| reached 2^62");
            return static_cast<u64>(x);
        }
    }

private:
    u64 s_, d_;
    ExpRatio accept_;
};

// Bernoulli(exp(-(whole + frac/q))): `whole` Bernoulli(exp(-1)) trials, then the fractional part.
template <class Source, class U>
bool bernoulli_exp_split(BitReader<Source>& br, u64 whole, U frac, U q) {
    for (u64 i = 0; i < whole; ++i)
        if (!bernoulli_exp_one(br)) return false;
    return bernoulli_exp_fraction(br, frac, q);
}

// ---------------------------------------------------------------------------------------------------
// 256-bit helpers for gamma = a^2 / b with a, b < 2^127 (slow path of the discrete Gaussian).
// ---------------------------------------------------------------------------------------------------
struct U256 {
    u128 hi, lo;
};

inline U256 mul_128(u128 a, u128 b) noexcept {
    const u128 mask = (u128{1} << 64) - 1;
    const u128 a0 = a & mask, a1 = a >> 64, b0 = b & mask, b1 = b >> 64;
    const u128 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const u128 mid = (p00 >> 64) + (p01 & mask) + (p10 & mask);
    const u128 lo = (p00 & mask) | (mid << 64);
    const u128 hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    return {hi, lo};
}

// floor(x / b) saturated at 2^64 - 1, and x mod b, for 1 <= b < 2^127.
inline void divmod_256(const U256& x, u128 b, u64& quotient, u128& remainder) noexcept {
    u128 r = 0;
    u64 q = 0;
    bool saturated = false;
    for (int i = 255; i >= 0; --i) {
        const u128 word = i >= 128 ? x.hi : x.lo;
        r = (r << 1) | ((word >> (i & 127)) & 1u);
        const bool digit = r >= b;
        if (digit) r -= b;
        if (!saturated) {
            if (q >> 63) saturated = true;
            else q = (q << 1) | (digit ? 1u : 0u);
        }
    }
    quotient = saturated ? ~u64{0} : q;
    remainder = r;
}

// Bernoulli(exp(-a^2 / b)), a < 2^127, 1 <= b < 2^127.
template <class Source>
bool bernoulli_exp_square(BitReader<Source>& br, u128 a, u128 b) {
    u64 whole;
    u128 frac;
    if ((a >> 64) == 0) {
        u128 a2 = a * a;
        whole = 0;
        while (a2 >= b && whole < 4) {  // the common cases gamma < 4: subtraction, no division
            a2 -= b;
            ++whole;
        }
        if (a2 >= b) {
            const u128 w = a2 / b;
            a2 -= w * b;
            const u128 total = w + whole;
            whole = (total >> 64) ? ~u64{0} : static_cast<u64>(total);  // saturates (see the file comment)
        }
        frac = a2;
    } else {
        divmod_256(mul_128(a, a), b, whole, frac);
    }
    return bernoulli_exp_split(br, whole, frac, b);
}

// ---------------------------------------------------------------------------------------------------
// Discrete Laplace, t = s/d: Y = +-X with X geometric with ratio exp(-1/t) and the draw "-0" rejected
// (CKS Algorithm 2). X is the exact inversion of geometric.hpp for t < 2^32 (vectorised in `fill`), and
// CKS's own geometric stage (CksGeometric) above, where the inversion would need its slow path too often.
// ---------------------------------------------------------------------------------------------------
class DiscreteLaplace {
public:
    DiscreteLaplace(u64 s, u64 d)
        : s_(check(s, d)), d_(d), inversion_(s / d < (u64{1} << 32)), inverse_(s, d), cks_(s, d) {}
    u64 s() const noexcept { return s_; }
    u64 d() const noexcept { return d_; }

    template <class Source>
    i64 operator()(BitReader<Source>& br) const {
        return draw<false>(br);
    }
    // ForceExact: every inversion decided by exact comparisons (tests compare it with the fast path).
    template <bool ForceExact, class Source>
    i64 draw(BitReader<Source>& br) const {
        for (;;) {
            const u64 x = inversion_ ? inverse_.template operator()<ForceExact>(br) : cks_(br);
            const bool negative = br.bit();
            if (negative && x == 0) continue;
            if (x >= kMaxAbsNoise) throw std::overflow_error("discrete Laplace: |noise| reached 2^62");
            return negative ? -static_cast<i64>(x) : static_cast<i64>(x);
        }
    }

    // n values into out from a chunk generator g, vectorised: each tile of kTile values takes kTile words
    // (the first words of their W) plus one sign word per 64 values from g's lower half, a fixed layout
    // (so value j's noise does not depend on n); the floating-point
    // pass decides almost every magnitude, and the rest, with any redraw of a "-0", take words from g's
    // upper half in index order. The output depends on the chunk's key and position only.
    template <bool ForceExact = false>
    void fill(random::Generator& g, i64* out, std::size_t n) const {
        if (!inversion_) {
            BitReader<random::Generator> br(g);
            for (std::size_t i = 0; i < n; ++i) out[i] = draw<ForceExact>(br);
            return;
        }
        const random::TileOps ops = random::tile_ops(g.impl());
        random::Generator extra_gen = g.split_upper();
        BitReader<random::Generator> extra(extra_gen);
        for (std::size_t s = 0; s < n; s += random::kTile)
            fill_tile<ForceExact>(ops, g, extra, out + s, std::min(random::kTile, n - s));
    }

    // One tile of m <= kTile values (inversion only): kTile words and kTile / 64 sign words from `primary`
    // (a fixed layout, so value j's noise never depends on m), the rest from `extra`.
    template <bool ForceExact = false>
    void fill_tile(const random::TileOps& ops, random::Generator& primary, BitReader<random::Generator>& extra, i64* out,
                   std::size_t m) const {
        constexpr std::size_t kTile = random::kTile;
        constexpr std::size_t kTileBlocks = (kTile + kTile / 64 + 7) / 8;  // 8 words per ChaCha block
        alignas(64) std::uint32_t words[16 * kTileBlocks];
        alignas(64) i64 x[kTile];
        alignas(64) unsigned char ok[kTile];
        if (m == kTile) {
            primary.take_blocks(words, kTileBlocks);
        } else {  // a partial tile reads the blocks of its m value words and the sign block only
            constexpr std::size_t kSignBlock = kTile / 8;
            static_assert(kTile % 8 == 0 && kTile / 64 <= 8, "the sign words lie in the block after the value words");
            primary.take_blocks_partial(words, kTileBlocks, (m + 7) / 8, kSignBlock);
        }
        ops.geometric_fast(words, inverse_.t(), x, ok, m);
        for (std::size_t j = 0; j < m; ++j) {
            const u64 mag = (!ForceExact && ok[j]) ? static_cast<u64>(x[j])
                                                   : inverse_.exact(extra, random::detail::word_at(words, j), ForceExact);
            const bool negative = (random::detail::word_at(words, kTile + j / 64) >> (j % 64)) & 1u;
            if (negative && mag == 0) out[j] = draw<ForceExact>(extra);
            else if (mag >= kMaxAbsNoise) throw std::overflow_error("discrete Laplace: |noise| reached 2^62");
            else out[j] = negative ? -static_cast<i64>(mag) : static_cast<i64>(mag);
        }
    }
    bool tiled() const noexcept { return inversion_; }

private:
    static u64 check(u64 s, u64 d) {
        if (s == 0 || d == 0 || s > kMaxParam || d > kMaxParam)
            throw std::invalid_argument("discrete Laplace: t = s/d needs 1 <= s, d <= 2^62");
        if (s / d >= kMaxLaplaceT) throw std::invalid_argument("discrete Laplace: t = s/d must be below 2^40");
        return s;
    }
    u64 s_, d_;
    bool inversion_;
    ExactGeometric inverse_;
    CksGeometric cks_;
};

// ---------------------------------------------------------------------------------------------------
// Discrete Gaussian, sigma^2 = n/m (CKS Algorithm 3): Y ~ DLap(t) accepted with probability
// exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(t m |Y| - n)^2 / (2 n m t^2)). The target pmf divided by
// the proposal pmf is proportional to exactly this factor for every t > 0 (CKS take t = floor(sigma) + 1);
// we take t the power of two nearest sigma. Bounds: t m <= 2 sigma m + m < 2^63, b = 2 n m t^2 < 2^127.
// ---------------------------------------------------------------------------------------------------
class DiscreteGaussian {
public:
    DiscreteGaussian(u64 n, u64 m) : n_(n), m_(m), t_(nearest_power_of_two(check(n, m), m)), laplace_(t_, 1) {
        tm_ = t_ * m_;  // <= sqrt(n m) + m < 2^63
        b_ = static_cast<u128>(n_) * m_ * 2 * t_ * t_;  // <= 8 n max(n, m) < 2^127
        inv_b_ = 1.0 / to_double(b_);
    }
    u64 n() const noexcept { return n_; }
    u64 m() const noexcept { return m_; }
    u64 t() const noexcept { return t_; }

    template <class Source>
    i64 operator()(BitReader<Source>& br) const {
        for (;;) {
            const i64 y = laplace_(br);
            if (accept(br, y)) return y;
        }
    }

    // n values from a chunk generator g, in tiles: kTile proposals from the discrete Laplace's vectorised
    // pass and kTile acceptance words, all from g's lower half (a fixed layout); the acceptance trial of
    // proposal y is W <= exp(-gamma(y)) for the uniform W whose first word is the proposal's acceptance
    // word: a vectorised floating-point bracket of -ln W against one of gamma decides it (tiles.hpp,
    // gauss_accept), and otherwise W is compared with exp(-gamma) exactly (geometric.hpp; further words of W
    // from g's upper half, in order). Value j
    // depends on the chunk's key and position only (a tile's unused proposals are dropped). ForceExact:
    // every trial by the exact comparison (tests: the same noise).
    template <bool ForceExact = false>
    void fill(random::Generator& g, i64* out, std::size_t n) const {
        if (!laplace_.tiled()) {
            BitReader<random::Generator> br(g);
            for (std::size_t i = 0; i < n; ++i) out[i] = (*this)(br);
            return;
        }
        const random::TileOps ops = random::tile_ops(g.impl());
        random::Generator extra_gen = g.split_upper();
        BitReader<random::Generator> extra(extra_gen);
        constexpr std::size_t kTile = random::kTile;
        alignas(64) i64 y[kTile];
        alignas(64) i64 kept[kTile + 1];
        alignas(64) std::uint32_t words[2 * kTile];
        alignas(64) unsigned char acc[kTile], amb[kTile];
        const double tm = static_cast<double>(tm_), nd = static_cast<double>(n_);
        std::size_t done = 0;
        while (done < n) {
            laplace_.fill_tile<ForceExact>(ops, g, extra, y, kTile);
            g.take_blocks(words, kTile / 8);
            ops.gauss_accept(y, words, tm, nd, inv_b_, acc, amb, kTile);
            // Keep the accepted proposals in order without a data-dependent branch (a store at every step,
            // the count advanced by the decision); the undecided ones (rare) take the exact comparison.
            std::size_t k = 0;
            const std::size_t want = n - done;
            for (std::size_t j = 0; j < kTile && k < want; ++j) {
                const bool ok = (ForceExact || amb[j]) ? exact_accept(extra, y[j], random::detail::word_at(words, j))
                                                       : acc[j] != 0;
                kept[k] = y[j];
                k += ok;
            }
            std::copy(kept, kept + k, out + done);
            done += k;
        }
    }

private:
    // |t m |y| - n|, so that gamma(y) = a^2 / b
    u128 shift_of(i64 y) const noexcept {
        const u64 ay = static_cast<u64>(y < 0 ? -y : y);
        const u128 prod = static_cast<u128>(tm_) * ay;  // < 2^125
        return prod >= n_ ? prod - n_ : n_ - prod;
    }
    // The acceptance trial of a proposal y with fresh bits: Bernoulli(exp(-(t m |y| - n)^2 / (2 n m t^2))).
    template <class Source>
    bool accept(BitReader<Source>& br, i64 y) const {
        return bernoulli_exp_square(br, shift_of(y), b_);
    }
    // The same trial as W <= exp(-gamma(y)) for the W whose first word is U, decided exactly (geometric.hpp;
    // further words of W from extra).
    bool exact_accept(BitReader<random::Generator>& extra, i64 y, u64 U) const {
        const u128 a = shift_of(y);
        LazyUniform<random::Generator> W(extra, U);
        BigUInt a2 = BigUInt::from(a);
        a2.mul(a);
        return W.at_most_exp_neg(a2, b_);
    }
    static double to_double(u128 v) noexcept {
        return static_cast<double>(static_cast<u64>(v >> 64)) * 0x1p64 + static_cast<double>(static_cast<u64>(v));
    }

    // The power of two nearest to sigma (ratio within [1/sqrt 2, sqrt 2]), at least 1. CKS use
    // t = floor(sigma) + 1, but the algorithm is exact for every t > 0; a power of two makes the discrete
    // Laplace proposal cheap, at an acceptance rate of at least 0.5 (0.6 to 0.76 at t = sigma).
    static u64 nearest_power_of_two(u64 n, u64 m) noexcept {
        const u64 f = isqrt(n / m);  // floor(sigma)
        if (f == 0) return 1;
        u64 p = 1;
        while (p <= f / 2) p <<= 1;  // largest power of two <= floor(sigma) <= sigma
        // sigma^2 > 2 p^2 iff n > 2 p^2 m  (128-bit: 2 p^2 m <= 2 (n/m) m < 2^63)
        return static_cast<u128>(n) > static_cast<u128>(p) * p * m * 2 ? 2 * p : p;
    }
    static u64 check(u64 n, u64 m) {
        if (n == 0 || m == 0 || n > kMaxParam || m > kMaxParam)
            throw std::invalid_argument("discrete Gaussian: sigma^2 = n/m needs 1 <= n, m <= 2^62");
        return n;
    }
    u64 n_, m_, t_;
    DiscreteLaplace laplace_;
    u64 tm_ = 0;
    u128 b_ = 0;
    double inv_b_ = 0.0;
};

// ---------------------------------------------------------------------------------------------------
// One chunk of values from one stream: value by value on a BitReader, or the discrete Laplace's tiled fill
// on a ChaCha generator.
// ---------------------------------------------------------------------------------------------------
template <class Sampler, class Source>
void fill_chunk(const Sampler& sampler, Source& source, i64* out, std::size_t n) {
    BitReader<Source> br(source);
    for (std::size_t i = 0; i < n; ++i) out[i] = sampler(br);
}
inline void fill_chunk(const DiscreteLaplace& sampler, random::Generator& source, i64* out, std::size_t n) {
    sampler.fill(source, out, n);
}
inline void fill_chunk(const DiscreteGaussian& sampler, random::Generator& source, i64* out, std::size_t n) {
    sampler.fill(source, out, n);
}

// ---------------------------------------------------------------------------------------------------
// Batches. Values [c * kNoiseChunk, (c + 1) * kNoiseChunk) come from the stream make_source(c), so the
// output is bit-identical for every thread count. make_source must be safe to call from any thread.
// ---------------------------------------------------------------------------------------------------
template <class Sampler, class MakeSource>
void fill_noise(const Sampler& sampler, i64* out, std::size_t n, unsigned threads, MakeSource&& make_source) {
    parallel_chunks(n, kNoiseChunk, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
        auto source = make_source(c);
        fill_chunk(sampler, source, out + begin, end - begin);
    });
}

}  // namespace pydp::release
