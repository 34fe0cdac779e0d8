// Complex radix-2 FFT (iterative, decimation in time) with per-stage twiddle tables, for the
// privacy-loss-distribution engine (pld.hpp). No external dependency.
//
// Plan(n) precomputes the bit-reversal order and, for each stage of half-length m, the m twiddles
// w_{2m}^j = exp(-2 pi i j / (2m)) stored contiguously (n - 1 values in all), so every butterfly loop
// reads its twiddles with unit stride. The twiddles of the largest stage are formed as products of a
// coarse and a fine table of cos/sin values (|error| ~ 2 ulp), and each smaller stage takes every other
// twiddle of the next larger one, so no error accumulates along a recurrence.
// forward() computes X[k] = sum_j x[j] w_n^{jk}; inverse() the unnormalised conjugate transform
// (divide by n for the inverse DFT). Tested through the compositions of tests/test_pld.py (exact GDP).
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace pydp::accounting::fft {

using cplx = std::complex<double>;

class Plan {
public:
    explicit Plan(std::size_t n) : n_(n) {
        if (n < 2 || (n & (n - 1)) != 0) throw std::invalid_argument("FFT length must be a power of two >= 2");
        rev_.resize(n);
        int bits = 0;
        while ((std::size_t(1) << bits) < n) ++bits;
        rev_[0] = 0;
        for (std::size_t i = 1; i < n; ++i) rev_[i] = (rev_[i >> 1] >> 1) | ((i & 1u) << (bits - 1));
        tw_.assign(n, cplx(1.0, 0.0));  // tw_[m + j], 0 <= j < m, for each stage half-length m
        const std::size_t half = n / 2;
        // Largest stage: w_n^j for j < n/2 as coarse[j / B] * fine[j % B].
        std::size_t B = 1;
        while (B * B < half) B <<= 1;
        std::vector<cplx> fine(B), coarse(half / B + 1);
        const double two_pi_n = -2.0 * M_PI / static_cast<double>(n);
        for (std::size_t j = 0; j < B; ++j) fine[j] = std::polar(1.0, two_pi_n * static_cast<double>(j));
        for (std::size_t a = 0; a < coarse.size(); ++a) coarse[a] = std::polar(1.0, two_pi_n * static_cast<double>(a * B));
        for (std::size_t j = 0; j < half; ++j) tw_[half + j] = coarse[j / B] * fine[j % B];
        for (std::size_t m = half / 2; m >= 1; m /= 2) {
            for (std::size_t j = 0; j < m; ++j) tw_[m + j] = tw_[2 * m + 2 * j];
        }
    }

    std::size_t size() const noexcept { return n_; }

    void forward(cplx* x) const noexcept { run(x); }
    void inverse(cplx* x) const noexcept {
        for (std::size_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
        run(x);
        for (std::size_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
    }

private:
    void run(cplx* x) const noexcept {
        for (std::size_t i = 0; i < n_; ++i) {
            if (i < rev_[i]) std::swap(x[i], x[rev_[i]]);
        }
        // Stages whose butterfly groups fit in a cache-sized block run block by block (one pass over
        // memory for all of them); the remaining stages sweep the whole array.
        const std::size_t block = std::min<std::size_t>(n_, 2048);
        for (std::size_t b = 0; b < n_; b += block) {
            cplx* xb = x + b;
            for (std::size_t i = 0; i < block; i += 2) {  // stage m = 1: trivial twiddle
                const cplx a = xb[i], c = xb[i + 1];
                xb[i] = a + c;
                xb[i + 1] = a - c;
            }
            for (std::size_t m = 2; m < block; m *= 2) stage(xb, block, m);
        }
        std::size_t m = block;
        for (; 4 * m <= n_; m *= 4) stage_pair(x, m);
        if (m < n_) stage(x, n_, m);
    }

    static void butterfly(cplx* lo, cplx* hi, cplx w) noexcept {
        // Written out: std::complex operator* checks for inf/NaN and is several times slower.
        const double wr = w.real(), wi = w.imag();
        const double hr = hi->real(), him = hi->imag();
        const double tr = wr * hr - wi * him, ti = wr * him + wi * hr;
        const double lr = lo->real(), li = lo->imag();
        *lo = cplx(lr + tr, li + ti);
        *hi = cplx(lr - tr, li - ti);
    }

    // Stages of half-length m and 2m together (one sweep over memory instead of two): within each group
    // of 4m values, the two length-2m butterflies of stage m, then the length-4m butterflies of stage 2m.
    void stage_pair(cplx* x, std::size_t m) const noexcept {
        const cplx* w1 = tw_.data() + m;
        const cplx* w2 = tw_.data() + 2 * m;
        for (std::size_t s = 0; s < n_; s += 4 * m) {
            cplx* a = x + s;
            cplx* b = a + m;
            cplx* c = b + m;
            cplx* d = c + m;
            for (std::size_t j = 0; j < m; ++j) {
                butterfly(a + j, b + j, w1[j]);
                butterfly(c + j, d + j, w1[j]);
                butterfly(a + j, c + j, w2[j]);
                butterfly(b + j, d + j, w2[j + m]);
            }
        }
    }

    // All butterflies of half-length m over x[0, len).
    void stage(cplx* x, std::size_t len, std::size_t m) const noexcept {
        const cplx* w = tw_.data() + m;
        for (std::size_t s = 0; s < len; s += 2 * m) {
            cplx* lo = x + s;
            cplx* hi = lo + m;
            for (std::size_t j = 0; j < m; ++j) butterfly(lo + j, hi + j, w[j]);
        }
    }

    std::size_t n_;
    std::vector<std::size_t> rev_;
    std::vector<cplx> tw_;
};

}  // namespace pydp::accounting::fft
