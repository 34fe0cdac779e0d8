// Exact geometric variates by inversion: X = floor(t E) with E = -ln W, W uniform on (0, 1) and
// t = s/d rational, so that P(X >= x) = P(W <= exp(-x/t)) = exp(-x d / s) exactly (X is geometric with
// ratio exp(-1/t), the magnitude law of the discrete Laplace).
//
// W is an infinite-precision uniform whose 64-bit words are revealed lazily (most significant first). The
// fast path takes the first word U, computes ln U in floating point and brackets t E between two reals
// with a generous rounding margin; when both ends have the same floor, that floor is X, whatever the
// exact value of W (every W in [U, U + 1) / 2^64 maps into the bracket; the bracket is the one of the
// vectorised pass, random/tiles.hpp, used here on one value). Otherwise (probability about t 2^-41 per
// draw, plus 2^-48 for U < 2^16) the candidate range is searched by exact comparisons
// "W <= exp(-b d / s)", made with integer brackets of 2^(64 J) exp(-b d / s) (Taylor series with bounded
// truncation and rounding, big integers) against W's words, revealing further words of W and raising J
// until the comparison is decided. The output is therefore an exact function of W: the floating point
// only decides which integers must be checked, never the answer.
//
// Error budget of the floating-point brackets (the fast one, and `candidates` for the exact search, which
// also serves W below 2^-64 k; c = 64 ln 2, L = ln w <= 44.4): the log within 2 ulp
// (2^-46; det_log is tested to 2 ulp, glibc's log to 1), the conversion of w to double 2^-53, the
// constant c and the subtraction c - L 2^-48 each: about 2^-45 in all, against a margin of 2^-42
// (2^-42 (k + 1) for later words, where c grows). t = s/d and the products carry a relative error below
// 5 2^-53, covered by the factors (1 -+ 2^-48).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pydp/release/bigint.hpp"
#include "pydp/release/bits.hpp"
#include "pydp/random/tiles.hpp"

namespace pydp::release {

// Integer brackets lo <= 2^(64 J) exp(-p/q) <= hi, for a big integer p >= 0 and 1 <= q < 2^127.
struct Bracket {
    BigUInt lo, hi;
};

namespace detail {

// 2^(64 J) exp(-r/q) for 0 <= r <= q < 2^127: the alternating Taylor series with terms
// floor(T_{k-1} r / (q k)) (each within k units of the true term, which is non-increasing for k >= 1); the
// series stops at the first zero term N, whose true value is below N units, so the error is below
// N^2/2 + N <= (N + 1)^2.
inline Bracket exp_neg_fraction(u128 r, u128 q, std::size_t J) {
    BigUInt term = BigUInt::power_of_word(J), pos = term, neg;
    u64 k = 1;
    for (;; ++k) {
        term.mul(r);
        term.div(q);
        term.div(k);
        if (term.is_zero()) break;
        (k % 2 ? neg : pos).add(term);
    }
    const BigUInt err((k + 1) * (k + 1));
    pos.subtract(neg);  // the sum is at least exp(-1) 2^(64 J) - err > 0
    Bracket b{pos, pos};
    b.lo.subtract(err);
    b.hi.add(err);
    return b;
}

// The product of two brackets, scaled back by 2^(64 J) (floor below, ceiling above).
inline Bracket bracket_product(const Bracket& a, const Bracket& b, std::size_t J) {
    Bracket r{BigUInt::product(a.lo, b.lo), BigUInt::product(a.hi, b.hi)};
    r.lo.drop_words(J, false);
    r.hi.drop_words(J, true);
    return r;
}

}  // namespace detail

// lo <= 2^(64 J) exp(-p/q) <= hi: exp(-1)^m by squaring times exp(-(p mod q)/q), with m = floor(p/q).
inline Bracket exp_neg_bracket(const BigUInt& p, u128 q, std::size_t J) {
    BigUInt m = p;
    const u128 r = m.div(q);
    Bracket out = detail::exp_neg_fraction(r, q, J);
    Bracket base = detail::exp_neg_fraction(1, 1, J);
    const std::size_t bits = m.bit_length();
    for (std::size_t i = 0; i < bits; ++i) {
        if (m.bit(i)) out = detail::bracket_product(out, base, J);
        if (i + 1 < bits) base = detail::bracket_product(base, base, J);
    }
    return out;
}

// A uniform W in (0, 1) whose words are revealed on demand.
template <class Source>
class LazyUniform {
public:
    LazyUniform(BitReader<Source>& br, u64 first) : br_(br), words_{first} {}
    u64 word(std::size_t i) {
        while (words_.size() <= i) words_.push_back(br_.word());
        return words_[i];
    }

    // W <= exp(-p/q)? (W = exp(-p/q) has probability 0.)
    bool at_most_exp_neg(const BigUInt& p, u128 q) {
        for (std::size_t J = 3;; J *= 2) {
            const Bracket b = exp_neg_bracket(p, q, J);
            // The first i words of W give W 2^(64 J) in [A, A + 2^(64 (J - i))].
            BigUInt A;
            for (std::size_t i = 0; i < J; ++i) {
                A.shift_words(1);
                A.add(BigUInt(word(i)));
                BigUInt upper = A;
                upper.add(BigUInt(1));
                BigUInt a_full = A, up_full = upper;
                a_full.shift_words(J - 1 - i);
                up_full.shift_words(J - 1 - i);
                if (up_full.compare(b.lo) <= 0) return true;   // W < (A + 1) / 2^(64 (i + 1)) <= exp(-p/q)
                if (a_full.compare(b.hi) >= 0) return false;   // W >= A / 2^(64 (i + 1)) >= exp(-p/q)
            }
        }
    }

private:
    BitReader<Source>& br_;
    std::vector<u64> words_;
};

// X = floor((s/d) E) for E = -ln W. ForceExact: search a widened candidate range by exact comparisons
// even when the fast path is decided (tests: the two give the same X for the same random words).
class ExactGeometric {
public:
    ExactGeometric(u64 s, u64 d) : s_(s), d_(d), t_(static_cast<double>(s) / static_cast<double>(d)) {}

    template <bool ForceExact = false, class Source>
    u64 operator()(BitReader<Source>& br) const {
        const u64 U = br.word();
        const std::int64_t x = ForceExact ? -1 : fast_answer(U);
        return x >= 0 ? static_cast<u64>(x) : exact(br, U, ForceExact);
    }
    double t() const noexcept { return t_; }
    // The fast path's answer for first word U, or -1 when it defers to the exact comparisons: the bracket
    // of the vectorised pass (random/tiles.hpp, geometric_fast_body) on one value.
    std::int64_t fast_answer(u64 U) const {
        const std::uint32_t pair[2] = {static_cast<std::uint32_t>(U), static_cast<std::uint32_t>(U >> 32)};
        std::int64_t x;
        unsigned char ok;
        random::detail::geometric_fast_body(pair, t_, &x, &ok, 1);
        return ok ? x : -1;
    }

    // X for the W whose first word is U, by exact comparisons over the candidate range (widened by two
    // on each side when `widen`); further words of W come from br.
    template <class Source>
    u64 exact(BitReader<Source>& br, u64 U, bool widen) const {
        LazyUniform<Source> W(br, U);
        std::size_t k = 0;
        while (W.word(k) == 0) ++k;  // W < 2^-(64 k): find its first non-zero word
        u64 lo, hi;
        const u64 w = W.word(k);
        candidates(w, k, lo, hi);
        if (widen) {
            lo = lo >= 2 ? lo - 2 : 0;
            hi = hi + 2;
        }
        // X >= b iff W <= exp(-b d / s); the largest such b in [lo, hi] (X >= lo holds).
        while (lo < hi) {
            const u64 mid = lo + (hi - lo + 1) / 2;
            if (W.at_most_exp_neg(BigUInt::from(static_cast<u128>(mid) * d_), s_)) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }

private:
    // For W in [w, w + 1) / 2^(64 (k + 1)), w >= 1: integers lo <= X <= hi.
    void candidates(u64 w, std::size_t k, u64& lo, u64& hi) const {
        const double L = std::log(static_cast<double>(w));
        const double c = 0x1.62e42fefa39efp-1 * 64.0 * static_cast<double>(k + 1);  // 64 (k + 1) ln 2
        const double margin = 0x1p-42 * static_cast<double>(k + 1);  // see the error budget above
        const double e_lo = c - L - 1.0 / static_cast<double>(w) - margin;  // ln(w + 1) <= ln w + 1 / w
        const double e_hi = c - L + margin;
        const double x_lo = e_lo > 0.0 ? t_ * e_lo * (1.0 - 0x1p-48) : 0.0;
        const double x_hi = t_ * e_hi * (1.0 + 0x1p-48);
        if (!(x_lo < kLimit)) throw std::overflow_error("discrete Laplace: |noise| reached 2^62");
        // floor of a non-negative double below 2^62: truncation (no rounding-mode dependent floor needed)
        lo = static_cast<u64>(static_cast<std::int64_t>(x_lo));
        hi = x_hi < kLimit ? static_cast<u64>(static_cast<std::int64_t>(x_hi)) : static_cast<u64>(kLimit);
    }

    static constexpr double kLimit = 4611686018427387904.0;  // 2^62
    u64 s_, d_;
    double t_;
};

}  // namespace pydp::release
