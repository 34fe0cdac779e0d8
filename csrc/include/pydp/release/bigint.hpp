// A minimal unsigned big integer for the exact slow paths of the discrete Laplace sampler (geometric.hpp and
// ExpRatio in samplers.hpp):
// products, division by a 64-bit word, sums and differences, word shifts and comparison.
// Little-endian 64-bit limbs, no leading zero limbs (zero has none).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pydp/release/bits.hpp"

namespace pydp::release {

class BigUInt {
public:
    explicit BigUInt(u64 v = 0) {
        if (v != 0) limb_.push_back(v);
    }
    // 2^(64 words)
    static BigUInt power_of_word(std::size_t words) {
        BigUInt r(1);
        r.shift_words(words);
        return r;
    }
    bool is_zero() const noexcept { return limb_.empty(); }

    // *this *= m
    void mul(u64 m) {
        if (m == 0) {
            limb_.clear();
            return;
        }
        u64 carry = 0;
        for (u64& l : limb_) {
            const u128 p = static_cast<u128>(l) * m + carry;
            l = static_cast<u64>(p);
            carry = static_cast<u64>(p >> 64);
        }
        if (carry != 0) limb_.push_back(carry);
    }

    // the product a * b
    static BigUInt product(const BigUInt& a, const BigUInt& b) {
        BigUInt r;
        if (a.is_zero() || b.is_zero()) return r;
        r.limb_.assign(a.limb_.size() + b.limb_.size(), 0);
        for (std::size_t i = 0; i < a.limb_.size(); ++i) {
            u64 carry = 0;
            for (std::size_t j = 0; j < b.limb_.size(); ++j) {
                const u128 p = static_cast<u128>(a.limb_[i]) * b.limb_[j] + r.limb_[i + j] + carry;
                r.limb_[i + j] = static_cast<u64>(p);
                carry = static_cast<u64>(p >> 64);
            }
            r.limb_[i + b.limb_.size()] = carry;
        }
        r.trim();
        return r;
    }

    // *this = floor(*this / m) for m >= 1; returns the remainder
    u64 div(u64 m) {
        u64 rem = 0;
        for (std::size_t i = limb_.size(); i-- > 0;) {
            const u128 cur = (static_cast<u128>(rem) << 64) | limb_[i];
            limb_[i] = static_cast<u64>(cur / m);
            rem = static_cast<u64>(cur % m);
        }
        trim();
        return rem;
    }

    // *this *= m (128 bits)
    void mul(u128 m) {
        if ((m >> 64) == 0) {
            mul(static_cast<u64>(m));
            return;
        }
        BigUInt high = *this;
        mul(static_cast<u64>(m));
        high.mul(static_cast<u64>(m >> 64));
        high.shift_words(1);
        add(high);
    }
    static BigUInt from(u128 v) {
        BigUInt r(static_cast<u64>(v));
        if ((v >> 64) != 0) {
            r.limb_.resize(1);
            r.limb_.push_back(static_cast<u64>(v >> 64));
        }
        return r;
    }

    // *this = floor(*this / m) for 1 <= m < 2^127, bit by bit (slow paths only); returns the remainder
    u128 div(u128 m) {
        if ((m >> 64) == 0) return div(static_cast<u64>(m));
        u128 rem = 0;
        for (std::size_t i = limb_.size(); i-- > 0;) {
            u64 q = 0;
            for (int bit = 63; bit >= 0; --bit) {
                rem = (rem << 1) | ((limb_[i] >> bit) & 1u);  // rem < m < 2^127: no overflow
                q <<= 1;
                if (rem >= m) {
                    rem -= m;
                    q |= 1u;
                }
            }
            limb_[i] = q;
        }
        trim();
        return rem;
    }

    // bit i (0 = least significant) and the number of bits
    bool bit(std::size_t i) const noexcept { return i / 64 < limb_.size() && ((limb_[i / 64] >> (i % 64)) & 1u); }
    std::size_t bit_length() const noexcept {
        if (is_zero()) return 0;
        std::size_t n = 64 * limb_.size();
        for (u64 top = limb_.back(); (top >> 63) == 0; top <<= 1) --n;
        return n;
    }

    // *this *= 2^(64 words)
    void shift_words(std::size_t words) {
        if (!is_zero()) limb_.insert(limb_.begin(), words, u64{0});
    }

    // *this = floor(*this / 2^(64 words)), or the ceiling when `up`
    void drop_words(std::size_t words, bool up) {
        const std::size_t k = std::min(words, limb_.size());
        const bool inexact = std::any_of(limb_.begin(), limb_.begin() + static_cast<std::ptrdiff_t>(k), [](u64 l) { return l != 0; });
        limb_.erase(limb_.begin(), limb_.begin() + static_cast<std::ptrdiff_t>(k));
        if (up && inexact) add(BigUInt(1));
    }

    // *this += o
    void add(const BigUInt& o) {
        if (limb_.size() < o.limb_.size()) limb_.resize(o.limb_.size(), 0);
        u64 carry = 0;
        for (std::size_t i = 0; i < limb_.size(); ++i) {
            const u128 s = static_cast<u128>(limb_[i]) + (i < o.limb_.size() ? o.limb_[i] : 0) + carry;
            limb_[i] = static_cast<u64>(s);
            carry = static_cast<u64>(s >> 64);
        }
        if (carry != 0) limb_.push_back(carry);
    }

    // *this -= o, for o <= *this
    void subtract(const BigUInt& o) noexcept {
        u64 borrow = 0;
        for (std::size_t i = 0; i < limb_.size(); ++i) {
            const u64 b = i < o.limb_.size() ? o.limb_[i] : 0;
            const u64 d = limb_[i] - b;
            const u64 nb = static_cast<u64>(limb_[i] < b) | static_cast<u64>(d < borrow);
            limb_[i] = d - borrow;
            borrow = nb;
        }
        trim();
    }

    // -1, 0, 1 as *this <, ==, > o
    int compare(const BigUInt& o) const noexcept {
        if (limb_.size() != o.limb_.size()) return limb_.size() < o.limb_.size() ? -1 : 1;
        for (std::size_t i = limb_.size(); i-- > 0;)
            if (limb_[i] != o.limb_[i]) return limb_[i] < o.limb_[i] ? -1 : 1;
        return 0;
    }

    // decimal digits (tests)
    std::string to_string() const {
        if (is_zero()) return "0";
        BigUInt v = *this;
        std::string out;
        while (!v.is_zero()) {
            u64 chunk = v.div(u64{10000000000000000000ULL});  // 10^19
            for (int i = 0; i < 19 && (chunk != 0 || !v.is_zero()); ++i) {
                out.push_back(static_cast<char>('0' + chunk % 10));
                chunk /= 10;
            }
        }
        return std::string(out.rbegin(), out.rend());
    }

private:
    void trim() noexcept {
        while (!limb_.empty() && limb_.back() == 0) limb_.pop_back();
    }
    std::vector<u64> limb_;
};

}  // namespace pydp::release
