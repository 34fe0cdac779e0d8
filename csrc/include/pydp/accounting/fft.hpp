// Complex radix-2 FFT (iterative, decimation in time) with per-stage twiddle tables, for the
// privacy-loss-distribution engine (pld.hpp). No external dependency.
//
// Plan(n) precomputes the bit-reversal order and, for each stage of half-length m, the m twiddles
// w_{2m}^j = exp(-2 pi i j / (2m)) stored contiguously (n - 1 values in all), so every butterfly loop
// reads its twiddles with unit stride. The twiddles of the largest stage are products of a coarse and a
// fine table of long-double cos/sin values, formed in long double and rounded once (|error| <= ~0.5 ulp
// per component, measured into twiddle_error()); each smaller stage takes every other twiddle of the
// next larger one, so no error accumulates along a recurrence.
// forward() computes X[k] = sum_j x[j] w_n^{jk}; inverse() the unnormalised conjugate transform
// (divide by n for the inverse DFT).
//
// Rounding (proof in docs/pld.md, "Floating point"): with u = 2^-53, mu >= |w_computed - w| for every
// twiddle and eta = mu + (1 + mu) sqrt(2) gamma_2 (gamma_2 = 2u / (1 - 2u)), every output of either
// transform satisfies |X_computed[k] - X[k]| <= e_L sum_j |x[j]| with e_L = ((1 + eta)(1 + u))^L - 1,
// L = log2 n (componentwise bound by induction over the L butterfly stages; Higham 2002, ch. 24, gives
// the normwise version). twiddle_error() is mu, measured at construction; error_factor() is e_L. Checked in tests/accounting/test_pld.py against exact
// convolutions.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pydp/cpu.hpp"
#include "pydp/special/constants.hpp"

namespace pydp::accounting::fft {

using cplx = std::complex<double>;

#ifdef PYDP_X86_DISPATCH
// AVX2 versions of the butterfly loops (two butterflies per vector, for half-lengths m >= 2). They
// perform the scalar code's IEEE operations on the same operands in the same order (each product and
// each sum rounded once, no FMA), so they compute bit for bit what it computes; only speed differs.
namespace avx2 {
// w h for interleaved complex pairs: (wr hr - wi hi, wr hi + wi hr), w conjugated if conj.
__attribute__((target("avx2"), always_inline)) inline __m256d cmul(__m256d w, __m256d h, bool conj) {
    const __m256d wr = _mm256_movedup_pd(w);
    __m256d wi = _mm256_permute_pd(w, 0xF);
    if (conj) wi = _mm256_xor_pd(wi, _mm256_set1_pd(-0.0));
    return _mm256_addsub_pd(_mm256_mul_pd(wr, h), _mm256_mul_pd(wi, _mm256_permute_pd(h, 0x5)));
}
__attribute__((target("avx2"), always_inline)) inline void dit(double* lo, double* hi, __m256d w, bool conj) {
    const __m256d l = _mm256_loadu_pd(lo), t = cmul(w, _mm256_loadu_pd(hi), conj);
    _mm256_storeu_pd(lo, _mm256_add_pd(l, t));
    _mm256_storeu_pd(hi, _mm256_sub_pd(l, t));
}
__attribute__((target("avx2"), always_inline)) inline void dif(double* lo, double* hi, __m256d w) {
    const __m256d a = _mm256_loadu_pd(lo), b = _mm256_loadu_pd(hi);
    _mm256_storeu_pd(lo, _mm256_add_pd(a, b));
    _mm256_storeu_pd(hi, cmul(w, _mm256_sub_pd(a, b), false));
}
// One stage of half-length m over x[0, len): decimation in time (conjugated or not) or in frequency.
__attribute__((target("avx2"))) inline void stage(cplx* x, std::size_t len, std::size_t m, const cplx* w, int kind) {
    double* d = reinterpret_cast<double*>(x);
    const double* wd = reinterpret_cast<const double*>(w);
    for (std::size_t s = 0; s < len; s += 2 * m) {
        double* lo = d + 2 * s;
        double* hi = lo + 2 * m;
        for (std::size_t j = 0; j < m; j += 2) {
            const __m256d wj = _mm256_loadu_pd(wd + 2 * j);
            if (kind == 2) dif(lo + 2 * j, hi + 2 * j, wj);
            else dit(lo + 2 * j, hi + 2 * j, wj, kind == 1);
        }
    }
}
// Stages of half-length m and 2m together, as Plan::quad.
__attribute__((target("avx2"))) inline void stage_pair(cplx* x, std::size_t n, std::size_t m, const cplx* w1, const cplx* w2, int kind) {
    const double* w1d = reinterpret_cast<const double*>(w1);
    const double* w2d = reinterpret_cast<const double*>(w2);
    for (std::size_t s = 0; s < n; s += 4 * m) {
        double* a = reinterpret_cast<double*>(x + s);
        double* b = a + 2 * m;
        double* c = b + 2 * m;
        double* e = c + 2 * m;
        for (std::size_t j = 0; j < 2 * m; j += 4) {
            const __m256d v1 = _mm256_loadu_pd(w1d + j), v2 = _mm256_loadu_pd(w2d + j), v3 = _mm256_loadu_pd(w2d + 2 * m + j);
            if (kind == 2) {
                dif(a + j, c + j, v2);
                dif(b + j, e + j, v3);
                dif(a + j, b + j, v1);
                dif(c + j, e + j, v1);
            } else {
                dit(a + j, b + j, v1, kind == 1);
                dit(c + j, e + j, v1, kind == 1);
                dit(a + j, c + j, v2, kind == 1);
                dit(b + j, e + j, v3, kind == 1);
            }
        }
    }
}
}  // namespace avx2
#endif

class Plan {
public:
    explicit Plan(std::size_t n) : n_(n) {
        if (n < 2 || (n & (n - 1)) != 0) throw std::invalid_argument("FFT length must be a power of two >= 2");
        rev_.resize(n);
        int bits = 0;
        while ((std::size_t(1) << bits) < n) ++bits;
        rev_[0] = 0;
        for (std::size_t i = 1; i < n; ++i) rev_[i] = static_cast<std::uint32_t>((rev_[i >> 1] >> 1) | ((i & 1u) << (bits - 1)));
        tw_.assign(n, cplx(1.0, 0.0));  // tw_[m + j], 0 <= j < m, for each stage half-length m
        const std::size_t half = n / 2;
        // Largest stage: w_n^j for j < n/2 as coarse[j / B] * fine[j % B], formed in long double (64-bit
        // significand) and rounded once to double. The long-double value deviates from w_n^j by at most
        // kRefSlack = 64 * 2^-63 (angles, cosl/sinl and one product, each a few 2^-64), so
        // mu = max_j |twiddle_j - value_j| + kRefSlack bounds the twiddles' error; the first term is
        // measured exactly (long double holds the difference of the two values).
        std::size_t B = 1;
        while (B * B < half) B <<= 1;
        using lcplx = std::pair<long double, long double>;
        std::vector<lcplx> fine(B), coarse(half / B + 1);
        const long double two_pi_n = -2.0L * special::kPiLong / static_cast<long double>(n);
        for (std::size_t j = 0; j < B; ++j) {
            const long double t = two_pi_n * static_cast<long double>(j);
            fine[j] = {std::cos(t), std::sin(t)};
        }
        for (std::size_t a = 0; a < coarse.size(); ++a) {
            const long double t = two_pi_n * static_cast<long double>(a * B);
            coarse[a] = {std::cos(t), std::sin(t)};
        }
        constexpr long double kRefSlack = 64.0L * LDBL_EPSILON;
        long double worst = 0.0L;
        // The first octant j <= n/8 (all of j < n/2 when n < 8); the rest follows exactly from the
        // symmetries w^{n/4 - j} = -i conj(w^j) and w^{j + n/4} = -i w^j (swaps and sign changes).
        const std::size_t oct = n >= 8 ? n / 8 + 1 : half;
        for (std::size_t j = 0; j < oct; ++j) {
            const lcplx& c = coarse[j / B];
            const lcplx& f = fine[j % B];
            const long double re = c.first * f.first - c.second * f.second, im = c.first * f.second + c.second * f.first;
            tw_[half + j] = cplx(static_cast<double>(re), static_cast<double>(im));
            const long double dr = static_cast<long double>(tw_[half + j].real()) - re;
            const long double di = static_cast<long double>(tw_[half + j].imag()) - im;
            worst = std::max(worst, std::max(std::fabs(dr), std::fabs(di)));
        }
        if (n >= 8) {
            const std::size_t q = n / 4;
            for (std::size_t j = oct; j <= q; ++j) tw_[half + j] = cplx(-tw_[half + q - j].imag(), -tw_[half + q - j].real());
            for (std::size_t j = q + 1; j < half; ++j) tw_[half + j] = cplx(tw_[half + j - q].imag(), -tw_[half + j - q].real());
        }
        mu_ = static_cast<double>(std::sqrt(2.0L) * worst + kRefSlack) * (1.0 + 1e-6);
        for (std::size_t m = half / 2; m >= 1; m /= 2) {
            for (std::size_t j = 0; j < m; ++j) tw_[m + j] = tw_[2 * m + 2 * j];
        }
    }

    std::size_t size() const noexcept { return n_; }

    static constexpr double kUnit = DBL_EPSILON / 2.0;  // unit roundoff u
    // sqrt(2) gamma_2: relative error bound of one complex multiplication (Higham 2002, Lemma 3.5).
    static constexpr double kSqrt2Gamma2 = special::kSqrt2 * (2.0 * kUnit / (1.0 - 2.0 * kUnit)) * (1.0 + 1e-15);

    // mu: bound on |computed twiddle - exact twiddle|.
    double twiddle_error() const noexcept { return mu_; }

    // e_L: |computed - exact| <= e_L sum_j |x_j| for every output of forward() or inverse().
    double error_factor() const noexcept {
        const double eta = mu_ + (1.0 + mu_) * kSqrt2Gamma2;
        int L = 0;
        while ((std::size_t(1) << L) < n_) ++L;
        // (1 + eta)^L (1 + u)^L - 1 through log1p/expm1; the factor 1 + 1e-6 covers their rounding.
        return std::expm1(static_cast<double>(L) * (std::log1p(eta) + std::log1p(kUnit))) * (1.0 + 1e-6);
    }

    void forward(cplx* x) const noexcept { run(x); }
    void inverse(cplx* x) const noexcept {
        bit_reverse(x);
        dit_stages<true>(x);
    }

    // The same transforms without the bit-reversal permutation, for convolutions: forward_bitrev()
    // (decimation in frequency) leaves X[k] at position bitrev(k); inverse_from_bitrev() (decimation in
    // time, conjugate twiddles) takes its input in that order and returns the unnormalised inverse in
    // natural order. The butterflies are the same operations in another order, so error_factor() bounds
    // them too. In bit-reversed order the partner N - k of the frequency at position p in
    // [2^j, 2^{j+1}) sits at 3 * 2^j - 1 - p (positions 0 and 1 hold k = 0 and N/2).
    void forward_bitrev(cplx* x) const noexcept {
        const std::size_t block = std::min<std::size_t>(n_, 2048);
        std::size_t m = n_ / 2;
        for (; m >= 2 * block; m /= 4) dif_stage_pair(x, m / 2);
        if (m >= block) {
            dif_stage(x, n_, m);
            m /= 2;
        }
        for (std::size_t b = 0; b < n_; b += block) {
            for (std::size_t mm = std::min(m, block / 2); mm >= 1; mm /= 2) dif_stage(x + b, block, mm);
        }
    }
    void inverse_from_bitrev(cplx* x) const noexcept { dit_stages<true>(x); }
    std::size_t bitrev(std::size_t p) const noexcept { return rev_[p]; }
    // The twiddle w_n^t (within twiddle_error() of the exact value) for 0 <= t < n.
    cplx twiddle(std::size_t t) const noexcept {
        const std::size_t half = n_ / 2;
        return t < half ? tw_[half + t] : -tw_[t];  // w^{t} = -w^{t - n/2}; tw_[half + t - half] = tw_[t]
    }

private:
    void run(cplx* x) const noexcept {
        bit_reverse(x);
        dit_stages<false>(x);
    }

    void bit_reverse(cplx* x) const noexcept {
        for (std::size_t i = 0; i < n_; ++i) {
            if (i < rev_[i]) std::swap(x[i], x[rev_[i]]);
        }
    }

    // Decimation-in-time stages on bit-reversed input, twiddles conjugated for the inverse. Stages whose
    // butterfly groups fit in a cache-sized block run block by block (one pass over memory for all of
    // them); the remaining stages sweep the whole array, two at a time.
    template <bool Conj>
    void dit_stages(cplx* x) const noexcept {
        const std::size_t block = std::min<std::size_t>(n_, 2048);
        for (std::size_t b = 0; b < n_; b += block) {
            for (std::size_t m = 1; m < block; m *= 2) stage<Conj>(x + b, block, m);
        }
        std::size_t m = block;
        for (; 4 * m <= n_; m *= 4) stage_pair<Conj>(x, m);
        if (m < n_) stage<Conj>(x, n_, m);
    }

    // (a, b) -> (a + w b, a - w b), w conjugated if Conj. Written out: std::complex operator* checks for
    // inf/NaN and is several times slower.
    template <bool Conj>
    static void butterfly(cplx* lo, cplx* hi, cplx w) noexcept {
        const double wr = w.real(), wi = Conj ? -w.imag() : w.imag();
        const double hr = hi->real(), him = hi->imag();
        const double tr = wr * hr - wi * him, ti = wr * him + wi * hr;
        const double lr = lo->real(), li = lo->imag();
        *lo = cplx(lr + tr, li + ti);
        *hi = cplx(lr - tr, li - ti);
    }

    // Decimation in frequency: (a, b) -> (a + b, (a - b) w).
    static void dif_butterfly(cplx* lo, cplx* hi, cplx w) noexcept {
        const double ar = lo->real(), ai = lo->imag(), br = hi->real(), bi = hi->imag();
        const double dr = ar - br, di = ai - bi;
        const double wr = w.real(), wi = w.imag();
        *lo = cplx(ar + br, ai + bi);
        *hi = cplx(wr * dr - wi * di, wr * di + wi * dr);
    }

    // All butterflies of half-length m over x[0, len).
    template <bool Conj>
    void stage(cplx* x, std::size_t len, std::size_t m) const noexcept {
        const cplx* w = tw_.data() + m;
#ifdef PYDP_X86_DISPATCH
        if (avx2_ && m >= 2) return avx2::stage(x, len, m, w, Conj ? 1 : 0);
#endif
        for (std::size_t s = 0; s < len; s += 2 * m) {
            cplx* lo = x + s;
            cplx* hi = lo + m;
            for (std::size_t j = 0; j < m; ++j) butterfly<Conj>(lo + j, hi + j, w[j]);
        }
    }
    void dif_stage(cplx* x, std::size_t len, std::size_t m) const noexcept {
        const cplx* w = tw_.data() + m;
#ifdef PYDP_X86_DISPATCH
        if (avx2_ && m >= 2) return avx2::stage(x, len, m, w, 2);
#endif
        for (std::size_t s = 0; s < len; s += 2 * m) {
            cplx* lo = x + s;
            cplx* hi = lo + m;
            for (std::size_t j = 0; j < m; ++j) dif_butterfly(lo + j, hi + j, w[j]);
        }
    }

    // Stages of half-length m and 2m together (one sweep over memory instead of two), within each group
    // of 4m values a, b, c, d (quarters): decimation in time does stage m then 2m, decimation in frequency
    // stage 2m then m.
    template <int Kind>  // 0: DIT, 1: DIT conjugated, 2: DIF
    void quad(cplx* a, std::size_t m, const cplx* w1, const cplx* w2) const noexcept {
        cplx* b = a + m;
        cplx* c = b + m;
        cplx* d = c + m;
        for (std::size_t j = 0; j < m; ++j) {
            if constexpr (Kind == 2) {
                dif_butterfly(a + j, c + j, w2[j]);
                dif_butterfly(b + j, d + j, w2[j + m]);
                dif_butterfly(a + j, b + j, w1[j]);
                dif_butterfly(c + j, d + j, w1[j]);
            } else {
                butterfly<Kind == 1>(a + j, b + j, w1[j]);
                butterfly<Kind == 1>(c + j, d + j, w1[j]);
                butterfly<Kind == 1>(a + j, c + j, w2[j]);
                butterfly<Kind == 1>(b + j, d + j, w2[j + m]);
            }
        }
    }
    template <bool Conj>
    void stage_pair(cplx* x, std::size_t m) const noexcept {
#ifdef PYDP_X86_DISPATCH
        if (avx2_ && m >= 2) return avx2::stage_pair(x, n_, m, tw_.data() + m, tw_.data() + 2 * m, Conj ? 1 : 0);
#endif
        for (std::size_t s = 0; s < n_; s += 4 * m) quad<Conj ? 1 : 0>(x + s, m, tw_.data() + m, tw_.data() + 2 * m);
    }
    void dif_stage_pair(cplx* x, std::size_t m) const noexcept {
#ifdef PYDP_X86_DISPATCH
        if (avx2_ && m >= 2) return avx2::stage_pair(x, n_, m, tw_.data() + m, tw_.data() + 2 * m, 2);
#endif
        for (std::size_t s = 0; s < n_; s += 4 * m) quad<2>(x + s, m, tw_.data() + m, tw_.data() + 2 * m);
    }

    std::size_t n_;
#ifdef PYDP_X86_DISPATCH
    bool avx2_ = cpu::isa_available(cpu::Isa::AVX2);  // the butterfly loops' AVX2 versions may run
#endif
    double mu_ = 0.0;
    std::vector<std::uint32_t> rev_;  // n <= 2^32
    std::vector<cplx> tw_;
};

}  // namespace pydp::accounting::fft
