// Exact samplers for the discrete Laplace and discrete Gaussian distributions on the integers
// (Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
// Algorithms 1-3), on any bit source with `std::uint64_t next_u64()`.
//
//   discrete Laplace, t = s/d:        P(Y = y) proportional to exp(-|y| / t)
//   discrete Gaussian, sigma^2 = n/m: P(Y = y) proportional to exp(-y^2 / (2 sigma^2))
//
// The parameters are exact rationals of 64-bit integers and all arithmetic is on integers (64, 128 and,
// on a rare slow path, 256 bits). The samplers are exact: the only departures from the target law are
// (a) an std::overflow_error when |Y| would reach 2^62, whose probability is below exp(-2^21) for every
// parameter accepted here, and (b) a loop counter that saturates at 2^64 - 1 Bernoulli(exp(-1)) successes
// in a row (probability exp(-2^64)). Neither can be observed in practice; both are stated for honesty.
//
// Timing: the number of random bits consumed, and so the time, depends on the noise drawn (rejection
// sampling), not on any data. See docs/discrete.md for what is and is not constant-time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pydp/discrete/bits.hpp"
#include "pydp/parallel.hpp"

namespace pydp::discrete {

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

// Bernoulli(exp(-(whole + frac/q))): `whole` Bernoulli(exp(-1)) trials, then the fractional part.
template <class Source, class U>
bool bernoulli_exp_split(BitReader<Source>& br, u64 whole, U frac, U q) {
    for (u64 i = 0; i < whole; ++i)
        if (!bernoulli_exp_one(br)) return false;
    return bernoulli_exp_fraction(br, frac, q);
}

// Bernoulli(exp(-p/q)), 64-bit p >= 0, 1 <= q < 2^63.
template <class Source>
bool bernoulli_exp(BitReader<Source>& br, u64 p, u64 q) {
    return bernoulli_exp_split(br, p / q, p % q, q);
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
// Discrete Laplace, t = s/d (CKS Algorithm 2).
// ---------------------------------------------------------------------------------------------------
class DiscreteLaplace {
public:
    DiscreteLaplace(u64 s, u64 d) : s_(s), d_(d) {
        if (s == 0 || d == 0 || s > kMaxParam || d > kMaxParam)
            throw std::invalid_argument("discrete Laplace: t = s/d needs 1 <= s, d <= 2^62");
        if (s / d >= kMaxLaplaceT) throw std::invalid_argument("discrete Laplace: t = s/d must be below 2^40");
    }
    u64 s() const noexcept { return s_; }
    u64 d() const noexcept { return d_; }

    template <class Source>
    i64 operator()(BitReader<Source>& br) const {
        for (;;) {
            u64 u;
            if (log2_s_ >= 0) {
                // s = 2^j: U is j random bits and Bernoulli(exp(-U/2^j)) compares fresh j-bit words with U.
                u = log2_s_ == 0 ? 0 : br.bits(log2_s_);
                if (!bernoulli_exp_dyadic(br, u)) continue;
            } else {
                u = s_ == 1 ? 0 : br.uniform_below(s_);
                if (!bernoulli_exp_fraction(br, u, s_)) continue;
            }
            u64 v = 0;
            while (v != ~u64{0} && bernoulli_exp_one(br)) ++v;
            const u128 x = static_cast<u128>(s_) * v + u;
            const u128 y = d_ == 1 ? x : x / d_;
            const bool negative = br.bit();
            if (negative && y == 0) continue;
            if (y >= kMaxAbsNoise) throw std::overflow_error("discrete Laplace: |noise| reached 2^62");
            return negative ? -static_cast<i64>(y) : static_cast<i64>(y);
        }
    }

private:
    // Algorithm 1 for gamma = u / 2^j: Bernoulli(u / (2^j K)) = Bernoulli(1/K) and [j fresh bits < u].
    template <class Source>
    bool bernoulli_exp_dyadic(BitReader<Source>& br, u64 u) const {
        if (u == 0) return true;
        u64 k = 1;
        for (;;) {
            if (k > 1 && !br.bernoulli(u64{1}, k)) break;
            if (!(br.bits(log2_s_) < u)) break;
            ++k;
        }
        return (k & 1u) != 0;
    }
    static int log2_if_power(u64 s) noexcept {
        if ((s & (s - 1)) != 0) return -1;
        int j = 0;
        while ((u64{1} << j) != s) ++j;
        return j;
    }
    u64 s_, d_;
    int log2_s_ = d_ == 1 ? log2_if_power(s_) : -1;  // j when t = 2^j exactly, else -1
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
    }
    u64 n() const noexcept { return n_; }
    u64 m() const noexcept { return m_; }
    u64 t() const noexcept { return t_; }

    template <class Source>
    i64 operator()(BitReader<Source>& br) const {
        for (;;) {
            const i64 y = laplace_(br);
            const u64 ay = static_cast<u64>(y < 0 ? -y : y);
            const u128 prod = static_cast<u128>(tm_) * ay;  // < 2^125
            const u128 a = prod >= n_ ? prod - n_ : n_ - prod;
            if (bernoulli_exp_square(br, a, b_)) return y;
        }
    }

private:
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
};

// ---------------------------------------------------------------------------------------------------
// Batches. Values [c * kNoiseChunk, (c + 1) * kNoiseChunk) come from the stream make_source(c), so the
// output is bit-identical for every thread count. make_source must be safe to call from any thread.
// ---------------------------------------------------------------------------------------------------
template <class Sampler, class MakeSource>
void fill_noise(const Sampler& sampler, i64* out, std::size_t n, unsigned threads, MakeSource&& make_source) {
    parallel_chunks(n, kNoiseChunk, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
        auto source = make_source(c);
        BitReader<decltype(source)> br(source);
        for (std::size_t i = begin; i < end; ++i) out[i] = sampler(br);
    });
}

}  // namespace pydp::discrete
