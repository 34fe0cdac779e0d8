// Lattice noise given by an exact table of integer weights, for the Subbotin_r (r >= 1) and Logistic
// releases: the law of the noise Y on the integers is P(Y = y) = W(|y|) / T, T = W(0) + 2 sum_{y>=1} W(y),
// with W(0) = 2^P and, for 1 <= y <= K,
//
//   Subbotin_r, scale s (grid steps):  W(y) = min(W(y - 1), floor(2^P exp(-(y/s)^r / r)))
//   Logistic, scale s:                 W(y) = min(W(y - 1), floor(2^P 4u / (1 + u)^2)),  u = exp(-y/s)
//
// (the running minimum makes W non-increasing in |y| whatever the last bits of the libm results are),
// K the last y with W(y) >= 1 and W = 0 beyond. The table IS the law: the privacy profile is computed
// from these integers, so the floating point used to fill them decides which law is used, never whether
// the accounting matches it.
//
// Sampling is exact inversion in integers (Chen and Asau 1974 guide table in the exact mode, see fill_guided):
// U uniform on {0, ..., T - 1} (T < 2^63), then
//   U < W(0)                       -> y = 0
//   U - W(0) = V, V < S (S = T_+)  -> y = 1 + #{i : C(i) <= V},     C(i) = W(1) + ... + W(i + 1)
//   otherwise V - S as above, negated.
// In the timing-stable mode the search is branchless with a fixed number of steps (ceil(log2 K) + 1, a
// function of the table only),
// and runs in lockstep over blocks of values so that the table loads overlap. U comes from
//   * exact mode: Lemire's multiply-and-reject on 64-bit words (U exactly uniform; the number of words is
//     random, at least 1, and independent of the value drawn);
//   * timing-stable mode: always three words X (192 bits), U = floor(X T / 2^192). Each U then has
//     probability within 2^-192 of 1/T, a total variation distance below 2^-129 from the exact law,
//     charged to delta by the Python layer ((1 + e^eps) 2^-129).
//
// Profile (log_delta): for the shift k >= 1 and epsilon >= 0 an upper bound on
//   delta = sum_y max(0, W(y) - e^eps W(y - k)) / T
// over every y, including those where W(y - k) = 0 (the truncation is charged exactly). Every term is
// computed in 128-bit integers against a lower bound M 2^b <= e^eps (M a 53-bit integer), so each is an
// upper bound; the sum is exact in 192 bits and only the final division is in floating point, widened
// by a factor (1 + 2^-40). Only y < k/2 can contribute (for y >= k/2, |y| >= |y - k| so W(y) <= W(y - k)),
// and for a table that is symmetric and non-increasing in |y| the shift k is the worst of all shifts
// 1..k (docs/release.md, section 4, Lemma 3). Checked against 60-digit sums: tests/release/test_lattice_release.py.
//
// Geometric tail (Logistic, tail_bits = c > 0, pure epsilon-DP; docs/release.md, section 6): the table stops
// at K, the last y with W(y) >= 2^(P - c), and each side gets one more integer weight
//   W_t = min(floor(2^P w((K + 1)/s) / (1 - q)), s W(K)),   q = exp(-1/s), s a positive integer,
// whose mass is spread over K + 1 + G, G exactly geometric (P(G = g) = (1 - q) q^g): the law is
//   P(Y = y) = W(|y|) / T (|y| <= K),   W_t (1 - q) q^(|y| - K - 1) / T (|y| > K),   T = W(0) + 2 S + 2 W_t.
// W_t <= s W(K) with 1 - q < 1/s keeps P non-increasing in |y| at the junction. Sampling: U uniform on
// {0, ..., T - 1}; U < W(0) + 2 S is the table's inversion, the rest is the tail (W_t values each side) and
// G comes from ExactGeometric(s, 1) (geometric.hpp), an exact function of further random words.
// log_ratio_bound(k): a certified upper bound on max_y log(P(y) / P(y + k)) (see there).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "pydp/release/bits.hpp"
#include "pydp/release/geometric.hpp"
#include "pydp/release/samplers.hpp"

namespace pydp::release {

enum class LatticeKind : int { Subbotin = 0, Logistic = 1 };

// The largest table half-width the releases build (8 bytes per entry: 128 MiB).
inline constexpr std::size_t kMaxTableHalf = std::size_t{1} << 24;

// An allocator for the large search tables: a block of 2 MiB or more is aligned to 2 MiB and offered to the
// kernel for transparent huge pages (madvise), so that a random table access rarely misses the TLB. It
// changes where the entries live, never their values.
template <class T>
struct TableAllocator {
    using value_type = T;
    static constexpr std::size_t kHuge = std::size_t{1} << 21;
    TableAllocator() noexcept = default;
    template <class U>
    TableAllocator(const TableAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
        void* p = ::operator new(bytes, std::align_val_t{kHuge});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void)madvise(p, (bytes + kHuge - 1) & ~(kHuge - 1), MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < kHuge)
            ::operator delete(p);
        else
            ::operator delete(p, std::align_val_t{kHuge});
    }
    friend bool operator==(const TableAllocator&, const TableAllocator&) noexcept { return true; }
    friend bool operator!=(const TableAllocator&, const TableAllocator&) noexcept { return false; }
};

class LatticeTable {
public:
    static constexpr std::size_t kBlock = 16;  // values searched in lockstep (timing-stable mode)
    static constexpr std::size_t kSpan = 256;  // values searched together by the guide table (exact mode)

    // kind, order r (Subbotin only), scale s in grid steps, P = log2 W(0) in [1, 62], and the largest
    // half-width accepted (the table takes 8 bytes per entry).
    // tail_bits c > 0 (Logistic, integer s): the table stops at the last weight >= 2^(P - c) and the geometric
    // tail of the header follows; 0: no tail (the table ends where the weights reach 0).
    LatticeTable(LatticeKind kind, double r, double s, int weight_bits, std::size_t max_half, int tail_bits = 0)
        : w0_(0) {
        if (!(s > 0.0) || !std::isfinite(s)) throw std::invalid_argument("lattice table: the scale must be positive and finite");
        if (kind == LatticeKind::Subbotin && (!(r >= 1.0) || !std::isfinite(r)))
            throw std::invalid_argument("lattice table: r must be finite and >= 1");
        if (weight_bits < 1 || weight_bits > 62) throw std::invalid_argument("lattice table: weight bits must be in [1, 62]");
        if (tail_bits != 0) {
            if (kind != LatticeKind::Logistic) throw std::invalid_argument("lattice table: a geometric tail is for the Logistic only");
            if (tail_bits < 1 || tail_bits >= weight_bits)
                throw std::invalid_argument("lattice table: tail bits must be in [1, weight bits)");
            if (!(s >= 1.0) || s != std::floor(s) || s > 0x1p40)
                throw std::invalid_argument("lattice table: a geometric tail needs an integer scale in [1, 2^40]");
        }
        w0_ = u64{1} << weight_bits;
        const u64 cut = tail_bits ? u64{1} << (weight_bits - tail_bits) : 1;  // the smallest table weight
        const double top = std::ldexp(1.0, weight_bits);
        u128 sum = 0;  // S = W(1) + ... + W(K)
        u64 prev = w0_;
        for (std::size_t y = 1;; ++y) {
            const double x = static_cast<double>(y) / s;
            double w;
            if (kind == LatticeKind::Subbotin) {
                w = std::exp(-std::pow(x, r) / r);
            } else {
                const double u = std::exp(-x);
                w = 4.0 * u / ((1.0 + u) * (1.0 + u));
            }
            const double f = std::floor(w * top);  // w * 2^P is exact; w <= 1
            u64 wy = f >= top ? w0_ : static_cast<u64>(f);
            if (wy > prev) wy = prev;
            if (wy < cut) break;
            if (y > max_half) throw std::length_error("lattice table: the table would exceed its size limit");
            sum += wy;
            if (w0_ + 2 * sum >= (u128{1} << 63)) throw std::overflow_error("lattice table: total weight reached 2^63");
            cum_.push_back(static_cast<u64>(sum));
            prev = wy;
        }
        s_ = cum_.empty() ? 0 : cum_.back();
        total_ = w0_ + 2 * s_;
        if (tail_bits) {
            scale_ = static_cast<u64>(s);
            const double u = std::exp(-static_cast<double>(cum_.size() + 1) / s);
            const double w_next = std::ldexp(4.0 * u / ((1.0 + u) * (1.0 + u)), weight_bits);  // 2^P w((K + 1)/s)
            const double t = std::floor(w_next / -std::expm1(-1.0 / s));
            const u128 cap = static_cast<u128>(prev) * scale_;  // s W(K)
            u128 wt = t >= 0x1p100 ? cap : static_cast<u128>(t);  // t < 2^100 is exact in u128
            if (wt > cap) wt = cap;
            if (wt == 0) wt = 1;
            if (static_cast<u128>(total_) + 2 * wt >= (u128{1} << 63))
                throw std::overflow_error("lattice table: total weight reached 2^63");
            tail_ = static_cast<u64>(wt);
            total_ += 2 * tail_;
        }
        reject_below_ = (0 - total_) % total_;  // 2^64 mod T
        steps_ = 0;
        for (std::size_t n = cum_.size(); n > 1; n -= n / 2) ++steps_;
        build_guide();
    }

    std::size_t half_size() const noexcept { return cum_.size(); }
    bool has_tail() const noexcept { return tail_ != 0; }
    u64 tail_weight() const noexcept { return tail_; }
    u64 tail_scale() const noexcept { return scale_; }
    u64 total() const noexcept { return total_; }
    u64 weight(i64 y) const noexcept {
        const u64 a = static_cast<u64>(y < 0 ? -y : y);
        if (a == 0) return w0_;
        if (a > cum_.size()) return 0;
        return a == 1 ? cum_[0] : cum_[a - 1] - cum_[a - 2];
    }
    unsigned search_steps() const noexcept { return steps_ + (cum_.empty() ? 0u : 1u); }

    // An upper bound on log delta(eps) for the integer shift k (see the header); -inf when delta = 0.
    double log_delta(double eps, u64 k) const {
        if (!(eps >= 0.0) || !std::isfinite(eps)) throw std::invalid_argument("epsilon must be finite and >= 0");
        if (k == 0) throw std::invalid_argument("shift must be >= 1");
        if (has_tail()) throw std::invalid_argument("log_delta: the table has a geometric tail (use log_ratio_bound)");
        double e = std::exp(eps);
        for (int i = 0; i < 4; ++i) e = std::nextafter(e, 0.0);  // a lower bound on e^eps (libm exp: < 1 ulp)
        if (!(e >= 1.0)) e = 1.0;                                  // e^eps >= 1 exactly
        int ex = 0;
        const double m = std::frexp(e, &ex);
        const u64 M = static_cast<u64>(std::ldexp(m, 53));  // e = M 2^b, b = ex - 53 >= -52
        const int b = ex - 53;
        const int sh = b < 0 ? -b : 0;  // terms are summed in units of 2^-sh
        const i64 K = static_cast<i64>(cum_.size());
        // only y < k/2 (2y < k, so y <= (k - 1)/2) can contribute, and only y >= -K
        const u64 half_k = (k - 1) / 2;
        const i64 hi = half_k < static_cast<u64>(K) ? static_cast<i64>(half_k) : K;
        const i64 kk = static_cast<i64>(k < static_cast<u64>(2 * K + 2) ? k : static_cast<u64>(2 * K + 2));  // same W(y - k)
        u128 acc = 0;
        u64 carry = 0;
        for (i64 y = -K; y <= hi; ++y) {
            const u64 wy = weight(y);
            if (wy == 0) continue;
            const u64 wz = weight(y - kk);
            u128 term;
            if (wz == 0) {
                term = static_cast<u128>(wy) << sh;
            } else if (b > 10) {
                continue;  // M 2^b wz >= 2^52 2^11 > wy
            } else {
                const u128 lhs = static_cast<u128>(wy) << sh;
                const u128 rhs = (static_cast<u128>(M) * wz) << (b > 0 ? b : 0);
                if (lhs <= rhs) continue;
                term = lhs - rhs;
            }
            const u128 before = acc;
            acc += term;
            if (acc < before) ++carry;
        }
        if (acc == 0 && carry == 0) return -std::numeric_limits<double>::infinity();
        const double num = std::ldexp(static_cast<double>(carry), 128) +
                           std::ldexp(static_cast<double>(static_cast<u64>(acc >> 64)), 64) +
                           static_cast<double>(static_cast<u64>(acc));
        const double delta = std::ldexp(num, -sh) / static_cast<double>(total_);
        return std::log(delta) + std::log1p(0x1p-40);  // conversions, division and log: far below 2^-40
    }

    // A certified upper bound on max_y log(P(y) / P(y + k)) over every integer y, for a table with a
    // geometric tail and an integer shift k >= 1. With A(a) = W(a) (a <= K), W_t (1 - q) q^(a - K - 1)
    // (a > K), the ratio is A(|y|) / A(|y + k|) (T cancels). Where both |y|, |y + k| > K it is
    // q^(|y| - |y + k|) <= q^-k, attained for y > K: that value, k/s, is rounded up if inexact. Every other y has
    // -K - k <= y <= K and is enumerated: the log ratio is a sum of at most three terms, log of a ratio of
    // two integers (converted and divided in double: error below 3 2^-53 relative, so 2^-51 absolute after
    // the log), -+ log(1 - q) (log(-expm1(-1/s)): below 2^-50 (1 + |value|)) and -+ m/s (2^-52 relative),
    // and the sum adds two roundings; each computed value is raised by 2^-40 (1 + sum of |terms|), far
    // above these errors (and above libm errors of a few ulps). The result is the largest of all.
    double log_ratio_bound(u64 k) const {
        if (!has_tail()) throw std::invalid_argument("log_ratio_bound: the table has no geometric tail (finite support)");
        if (k == 0) throw std::invalid_argument("shift must be >= 1");
        if (k > (u64{1} << 40)) throw std::invalid_argument("shift must be at most 2^40");
        const double sd = static_cast<double>(scale_);
        const double inv_s = 1.0 / sd;
        const double l1q = std::log(-std::expm1(-inv_s));  // log(1 - q) < 0
        const double lwt = static_cast<double>(tail_);
        const i64 K = static_cast<i64>(cum_.size());
        // k/s, rounded up unless the division is exact (k, s < 2^53: the fma forms q s - k exactly)
        double best = static_cast<double>(k) / sd;
        if (std::fma(best, sd, -static_cast<double>(k)) < 0.0) best = std::nextafter(best, std::numeric_limits<double>::infinity());
        const i64 kk = static_cast<i64>(k);
        for (i64 y = -K - kk; y <= K; ++y) {
            const i64 a = y < 0 ? -y : y;
            const i64 z = y + kk;
            const i64 b = z < 0 ? -z : z;
            double t1, t2 = 0.0, t3 = 0.0;
            if (a <= K && b <= K) {
                t1 = std::log(static_cast<double>(weight(a)) / static_cast<double>(weight(b)));
            } else if (a <= K) {  // b in the tail: W(a) / (W_t (1 - q) q^(b - K - 1))
                t1 = std::log(static_cast<double>(weight(a)) / lwt);
                t2 = -l1q;
                t3 = static_cast<double>(b - K - 1) * inv_s;
            } else if (b <= K) {  // a in the tail
                t1 = std::log(lwt / static_cast<double>(weight(b)));
                t2 = l1q;
                t3 = -static_cast<double>(a - K - 1) * inv_s;
            } else {
                t1 = static_cast<double>(b - a) * inv_s;  // both in the tail: at most k/s, counted above
                if (t1 <= best) continue;
            }
            const double v = t1 + t2 + t3;
            const double up = v + 0x1p-40 * (1.0 + std::fabs(t1) + std::fabs(t2) + std::fabs(t3));
            if (up > best) best = up;
        }
        return best;
    }

    // Exact mode: U by multiply-and-reject (Lemire 2019).
    template <class Source>
    u64 uniform_exact(Source& src) const {
        u128 m = static_cast<u128>(src.next_u64()) * total_;
        u64 l = static_cast<u64>(m);
        while (l < reject_below_) {  // reject_below_ = 2^64 mod T < T: one rarely taken test
            m = static_cast<u128>(src.next_u64()) * total_;
            l = static_cast<u64>(m);
        }
        return static_cast<u64>(m >> 64);
    }
    // Timing-stable mode: U = floor(X T / 2^192) for three words X = x2 x1 x0 (x2 most significant).
    static u64 uniform_stable(u64 x2, u64 x1, u64 x0, u64 T) noexcept {
        const u128 p0 = static_cast<u128>(x0) * T;
        const u128 s1 = static_cast<u128>(x1) * T + static_cast<u128>(static_cast<u64>(p0 >> 64));
        const u128 s2 = static_cast<u128>(x2) * T + static_cast<u128>(static_cast<u64>(s1 >> 64));
        return static_cast<u64>(s2 >> 64);
    }

    // n values into out from src: timing-stable mode by the fixed-step search in lockstep over blocks of
    // kBlock values, exact mode through the guide table over spans of kSpan values (the same value for the
    // same U; the words are read in the same order either way: the uniforms one value after the other).
    template <class Source>
    void fill(Source& src, i64* out, std::size_t n, bool stable) const {
        if (has_tail()) {
            if (stable) throw std::invalid_argument("lattice table: a geometric tail has no timing-stable mode");
            fill_tailed(src, out, n);
            return;
        }
        if (stable) {
            u64 U[kBlock];
            for (std::size_t b0 = 0; b0 < n; b0 += kBlock) {
                const std::size_t len = n - b0 < kBlock ? n - b0 : kBlock;
                for (std::size_t i = 0; i < len; ++i) {
                    const u64 x2 = src.next_u64(), x1 = src.next_u64(), x0 = src.next_u64();
                    U[i] = uniform_stable(x2, x1, x0, total_);
                }
                fill_from_uniform(U, out + b0, len);
            }
            return;
        }
        u64 U[kSpan];
        for (std::size_t b0 = 0; b0 < n; b0 += kSpan) {
            const std::size_t len = n - b0 < kSpan ? n - b0 : kSpan;
            for (std::size_t i = 0; i < len; ++i) U[i] = uniform_exact(src);
            fill_guided(U, out + b0, len);
        }
    }

    // Exact mode with the geometric tail: U < W(0) + 2 S goes through the guide table as usual; a U in the
    // tail (W_t values a side: positive first) gives +-(K + 1 + G), G from the exact geometric. The words
    // are read block by block (kBlock values): the block's uniforms, then the geometric draws of its tail
    // values in order, a fixed order (the output depends on the words only); the table search, which reads
    // no words, runs afterwards over the whole span.
    template <class Source>
    void fill_tailed(Source& src, i64* out, std::size_t n) const {
        const ExactGeometric geo(scale_, 1);
        BitReader<Source> br(src);
        const u64 body = w0_ + 2 * s_;
        const u64 base = static_cast<u64>(cum_.size()) + 1;
        u64 U[kSpan];
        i64 tail_value[kSpan];
        for (std::size_t s0 = 0; s0 < n; s0 += kSpan) {
            const std::size_t span = n - s0 < kSpan ? n - s0 : kSpan;
            unsigned any_in_span = 0;
            for (std::size_t b0 = 0; b0 < span; b0 += kBlock) {
                const std::size_t len = span - b0 < kBlock ? span - b0 : kBlock;
                unsigned any = 0;
                for (std::size_t i = b0; i < b0 + len; ++i) {
                    const u64 u = uniform_exact(src);
                    const u64 t = u >= body ? u - body + 1 : 0;  // 1 + the offset in the tail, 0 in the body
                    U[i] = t ? 0 : u;
                    tail_value[i] = static_cast<i64>(t);
                    any |= t != 0;
                }
                any_in_span |= any;
                if (!any) continue;
                for (std::size_t i = b0; i < b0 + len; ++i) {
                    if (!tail_value[i]) continue;
                    const bool negative = static_cast<u64>(tail_value[i]) - 1 >= tail_;
                    const u64 g = geo(br);
                    if (g >= kMaxAbsNoise - base) throw std::overflow_error("lattice table: |noise| reached 2^62");
                    const i64 v = static_cast<i64>(base + g);
                    tail_value[i] = negative ? -v : v;  // nonzero: |v| > K
                }
            }
            fill_guided(U, out + s0, span);
            if (!any_in_span) continue;
            for (std::size_t i = 0; i < span; ++i)
                if (tail_value[i]) out[s0 + i] = tail_value[i];
        }
    }

    // The same map U -> value as fill_from_uniform (len <= kSpan), by the guide table: V's bucket
    // b = V >> gshift gives guide_[b] <= #{i : C(i) <= V} <= guide_[b + 1]. Its number of steps depends on
    // the value: exact mode only. The work goes in passes over all len values, each pass prefetching what
    // the next one reads, so that the cache misses of many values (large tables live beyond the L2 cache)
    // are in flight together rather than one after the other.
    void fill_guided(const u64* U, i64* out, std::size_t len) const noexcept {
        u64 V[kSpan];
        std::uint32_t lo[kSpan], hi[kSpan];
        unsigned char sign[kSpan];  // 0: y = 0, 1: y > 0, 2: y < 0
        const u64* c = cum_.data();
        const std::uint32_t* g = guide_.data();
        const bool empty = cum_.empty();
        for (std::size_t i = 0; i < len; ++i) {
            const u64 nz = static_cast<u64>(U[i] >= w0_);
            u64 v = U[i] - (w0_ & (0 - nz));
            const u64 neg = nz & static_cast<u64>(v >= s_);
            v -= s_ & (0 - neg);
            v &= 0 - nz;  // y = 0 (U < W(0), possibly >= S): search V = 0, the result is masked
            V[i] = v;
            sign[i] = static_cast<unsigned char>(nz + neg);
            if (!empty) __builtin_prefetch(g + (v >> gshift_));
        }
        if (!empty) {
            // Most buckets hold at most two entry boundaries (n = hi - lo <= 2): the count is then lo plus the
            // number of C(lo), C(lo + 1) below index hi that are <= V, found without branches (a load not
            // needed reads C(0), which stays in cache). Where n > 2 and both are <= V, a binary search over
            // [lo + 2, hi) finishes in a last pass.
            for (std::size_t i = 0; i < len; ++i) {
                const u64 b = V[i] >> gshift_;
                const std::uint32_t a = g[b], z = g[b + 1];
                lo[i] = a;
                hi[i] = z;
                const std::uint32_t m0 = 0u - static_cast<std::uint32_t>(z - a > 0);
                __builtin_prefetch(c + (a & m0));
            }
            unsigned wide = 0;
            for (std::size_t i = 0; i < len; ++i) {
                const std::uint32_t a = lo[i], n = hi[i] - a;
                const std::uint32_t m0 = 0u - static_cast<std::uint32_t>(n > 0), m1 = 0u - static_cast<std::uint32_t>(n > 1);
                const u64 c0 = c[a & m0], c1 = c[(a + 1) & m1];
                const std::uint32_t k0 = m0 & static_cast<std::uint32_t>(c0 <= V[i]);
                const std::uint32_t k1 = m1 & static_cast<std::uint32_t>(c1 <= V[i]);
                const std::uint32_t more = static_cast<std::uint32_t>(n > 2) & k1;
                const std::uint32_t at = a + k0 + k1;
                lo[i] = at;
                hi[i] = at + ((hi[i] - at) & (0u - more));  // hi where the search goes on, else at
                wide |= more;
            }
            if (wide) {
                for (std::size_t i = 0; i < len; ++i) {
                    std::uint32_t a = lo[i], z = hi[i];
                    while (a < z) {
                        const std::uint32_t mid = a + (z - a) / 2;
                        if (c[mid] <= V[i])
                            a = mid + 1;
                        else
                            z = mid;
                    }
                    lo[i] = a;
                }
            }
        } else {
            for (std::size_t i = 0; i < len; ++i) lo[i] = 0;
        }
        for (std::size_t i = 0; i < len; ++i) {
            const i64 a = static_cast<i64>(1 + static_cast<u64>(lo[i]));
            const i64 mask_nz = -static_cast<i64>(sign[i] != 0), mask_neg = -static_cast<i64>(sign[i] == 2);
            out[i] = ((a ^ mask_neg) - mask_neg) & mask_nz;
        }
    }

    // The values for given uniforms U[0..len) (len <= kBlock), the branchless search in lockstep:
    // #{i : C(i) <= V} by halving steps whose number depends on K only; iters (if given) gets that number.
    void fill_from_uniform(const u64* U, i64* out, std::size_t len, unsigned* iters = nullptr) const noexcept {
        u64 V[kBlock];
        u64 nz[kBlock], neg[kBlock];
        std::size_t pos[kBlock];
        for (std::size_t i = 0; i < len; ++i) {
            nz[i] = static_cast<u64>(U[i] >= w0_);
            V[i] = U[i] - (w0_ & (0 - nz[i]));
            neg[i] = nz[i] & static_cast<u64>(V[i] >= s_);
            V[i] -= s_ & (0 - neg[i]);
            pos[i] = 0;
        }
        const std::size_t K = cum_.size();
        if (K > 0) {
            const u64* c = cum_.data();
            std::size_t n = K;
            unsigned it = 0;
            while (n > 1) {
                const std::size_t half = n / 2;
                // A mask, not a conditional: no branch whose prediction could depend on the value.
                for (std::size_t i = 0; i < len; ++i)
                    pos[i] += half & (std::size_t{0} - static_cast<std::size_t>(c[pos[i] + half - 1] <= V[i]));
                n -= half;
                ++it;
            }
            for (std::size_t i = 0; i < len; ++i) pos[i] += static_cast<std::size_t>(c[pos[i]] <= V[i]);
            if (iters) *iters = it + 1;
        } else if (iters) {
            *iters = 0;
        }
        for (std::size_t i = 0; i < len; ++i) {
            const i64 a = static_cast<i64>(1 + pos[i]);
            const i64 mask_nz = -static_cast<i64>(nz[i]), mask_neg = -static_cast<i64>(neg[i]);
            out[i] = ((a ^ mask_neg) - mask_neg) & mask_nz;  // 0, a or -a without branches
        }
    }

private:
    // guide_[b] = #{i : C(i) <= b 2^gshift} for b = 0 .. (S - 1) >> gshift, and K once more at the end.
    // The bucket width 2^gshift is at most W(1) / 4 (so that most draws near the mode fall in a bucket
    // without an entry boundary and need no table access), with at most 2^kGuideBits buckets (4 bytes each).
    static constexpr unsigned kGuideBits = 21;
    void build_guide() {
        guide_.clear();
        gshift_ = 0;
        if (cum_.empty()) return;
        unsigned width = 0;  // bit length of S - 1 (V < S)
        for (u64 v = s_ - 1; v; v >>= 1) ++width;
        unsigned fine = 0;  // floor(log2(W(1) / 4))
        for (u64 v = cum_[0] >> 2; v > 1; v >>= 1) ++fine;
        gshift_ = width > kGuideBits && width - kGuideBits > fine ? width - kGuideBits : fine;
        const u64 buckets = ((s_ - 1) >> gshift_) + 1;
        guide_.resize(static_cast<std::size_t>(buckets) + 1);
        std::size_t pos = 0;
        for (u64 b = 0; b < buckets; ++b) {
            const u64 start = b << gshift_;
            while (pos < cum_.size() && cum_[pos] <= start) ++pos;
            guide_[static_cast<std::size_t>(b)] = static_cast<std::uint32_t>(pos);
        }
        guide_[static_cast<std::size_t>(buckets)] = static_cast<std::uint32_t>(cum_.size());
    }

    u64 w0_;
    u64 s_ = 0, total_ = 0, reject_below_ = 0;
    u64 tail_ = 0, scale_ = 0;  // W_t (0: no tail) and the integer scale s of the geometric tail
    unsigned steps_ = 0;
    unsigned gshift_ = 0;
    std::vector<u64, TableAllocator<u64>> cum_;  // C(i) = W(1) + ... + W(i + 1), i = 0 .. K - 1
    std::vector<std::uint32_t, TableAllocator<std::uint32_t>> guide_;
};

// The sampler handed to release_on_grid / fill_noise: a table and the mode.
struct TableSampler {
    const LatticeTable* table;
    bool stable;
};
template <class Source>
void fill_chunk(const TableSampler& sampler, Source& source, i64* out, std::size_t n) {
    sampler.table->fill(source, out, n, sampler.stable);
}

}  // namespace pydp::release
