// Circular convolution powers of PLDs by FFT with a proven bound on the rounding (circular_compose): the
// kernel of every composition. Output o composes counts[o][j] copies of part j; each part is transformed
// once (pessimistic pmf in the real part, optimistic in the imaginary part), raised to each count at each
// frequency by binary exponentiation, multiplied in, and transformed back.
//
// Why it is certified: the FFT's error per frequency is at most e_L ||x||_1 (fft.hpp); through the
// powers and products it propagates to at most V + theta U per frequency and side (a telescoping product
// bound with U = prod M_j^{k_j}, V = U sum_j k_j E_j / M_j), and an error spectrum changes any sum of
// consecutive output entries by at most sum_f S_f min(1, 1 / (N sin(pi f' / N))) plus the inverse
// transform's own rounding. That bound (Circular::tail) is what the callers add to the pessimistic side
// and remove from the optimistic one. The lowest frequencies, where the amplification by k is largest,
// are recomputed as direct sums in long double within a fixed work budget, with their own (smaller)
// error bound. Derivation in docs/pld.md, "Floating point" and "A certified bound on the FFT's rounding".
// How it is checked: tests/accounting/test_pld_fft.py (the bound covers exact mpmath and long-double circular
// convolutions, also with a wide dynamic range), csrc/tests/test_kernels.cpp (the AVX2 butterflies equal
// the scalar ones bit for bit) and csrc/tests/test_pld.cpp (two-fold composition against a direct
// convolution).
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstddef>
#include <deque>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pydp/accounting/fft.hpp"
#include "pydp/accounting/pld_grid.hpp"
#include "pydp/special/constants.hpp"

namespace pydp::accounting::pld {

// z^k for |z| <= 1 by binary exponentiation (no transcendental calls; relative error <= (1 + sqrt(2)
// gamma_2)^{k-1} - 1, one complex product per factor of the unfolded product tree);
// r2_min = e^{-1490 / k}: below it |z|^k underflows and 0 is returned at once.
inline std::complex<double> ipow(std::complex<double> z, long k, double r2_min) noexcept {
    if (k == 1) return z;
    if (std::norm(z) < r2_min) return 0.0;
    double br = z.real(), bi = z.imag(), rr = 1.0, ri = 0.0;
    for (unsigned long e = static_cast<unsigned long>(k); e != 0; e >>= 1) {
        if (e & 1u) {
            const double t = rr * br - ri * bi;
            ri = rr * bi + ri * br;
            rr = t;
        }
        const double t = br * br - bi * bi;
        bi = 2.0 * br * bi;
        br = t;
    }
    return {rr, ri};
}

// Per output and pair of frequencies of circular_compose: the running products of the two spectra and
// the terms U, V (per side) and R of their error bound.
struct FreqState {
    fft::cplx px{1.0, 0.0}, py{1.0, 0.0};
    double U[2] = {1.0, 1.0}, V[2] = {0.0, 0.0}, R = 0.0;
};
// One pair of frequencies of one part in circular_compose: both separated spectra, their error bounds and
// modulus bounds, the frequency, and whether it was recomputed in long double.
struct PairSpectra {
    fft::cplx x, y;
    double Ex, Ey, mx, my;
    std::size_t fq;
    bool acc;
};
// Buffers of circular_compose, kept across the compositions of one query (fresh multi-megabyte
// allocations cost page faults comparable to a transform).
struct Scratch {
    std::vector<fft::cplx> buf;
    std::vector<std::vector<fft::cplx>> w;
    std::unique_ptr<FreqState[]> state;  // uninitialised beyond what the first part writes
    std::size_t state_size = 0;
};

// FFT plans by length, owned by one composition (the two levels often share a length).
class Plans {
public:
    Scratch scratch;

    const fft::Plan& get(std::size_t n) {
        for (const fft::Plan& p : plans_) {
            if (p.size() == n) return p;
        }
        plans_.emplace_back(n);
        return plans_.back();
    }

private:
    std::deque<fft::Plan> plans_;
};

// r^k for r >= 0, k >= 0 by binary exponentiation. Relative error <= (k - 1) u until the result
// underflows (the callers' safety factor and their 1e-290 per frequency cover both).
inline double rpow(double r, long k) noexcept {
    if (k == 1) return r;
    double base = r, acc = 1.0;
    for (unsigned long e = static_cast<unsigned long>(k); e != 0; e >>= 1) {
        if (e & 1u) acc *= base;
        base *= base;
    }
    return acc;
}

// z^k by binary exponentiation in long double (64-bit significand), rounded to double: before the final
// rounding the relative error is <= (1 + 3 * 2^-64)^{k-1} - 1 (sqrt(2) gamma_2 of long double per
// product). kLdRatio expresses one such product in units of a double product's sqrt(2) gamma_2 (with 1%
// to spare for (1 + a)^k <= (1 + b)^{k a / b} with a < b).
inline constexpr double kLdRatio = 1.01 * 3.0 * (LDBL_EPSILON / 2.0) / fft::Plan::kSqrt2Gamma2;

inline std::complex<double> ipow_ld(std::complex<double> z, long k) noexcept {
    long double br = z.real(), bi = z.imag(), rr = 1.0L, ri = 0.0L;
    for (unsigned long e = static_cast<unsigned long>(k); e != 0; e >>= 1) {
        if (e & 1u) {
            const long double t = rr * br - ri * bi;
            ri = rr * bi + ri * br;
            rr = t;
        }
        const long double t = br * br - bi * bi;
        bi = 2.0L * br * bi;
        br = t;
    }
    return {static_cast<double>(rr), static_cast<double>(ri)};
}

// Circular compositions of the same parts by FFT: output o composes counts[o][j] copies of part j (0
// allowed). Each part is transformed once; each output has its own products and inverse transform.
// Output o's entry i holds the composed pessimistic (real part) and optimistic (imaginary part) mass at
// grid index A + i modulo N.
//
// Certified rounding (derivation in docs/pld.md, "Floating point"). Part j is packed as x = a + i b
// (pessimistic pmf a, optimistic b); its computed spectra (separated by Hermitian symmetry) differ from
// the exact ones by at most E_j = (e_L + u (1 + e_L)) ||x||_1 at every frequency (fft.hpp). With
// M_j >= |computed| + E_j >= both moduli, |X^k - Y^k| <= k M^{k-1} |X - Y| and a telescoping product give,
// per frequency and side, |prod computed^k - prod exact^k| <= V + theta U with U = prod_j M_j^{k_j},
// V = U sum_j k_j E_j / M_j and theta the relative rounding of the products (one complex product per
// factor: (1 + sqrt(2) gamma_2)^{sum k_j + parts} - 1); packing both sides adds u (|Y_p| + |Y_o|). Call
// S_f the sum of these bounds at frequency f. An error spectrum D gives the entries e = IDFT(D), and any
// run of consecutive (circular) entries sums to (1/N) sum_f D_f G_f with |G_f| <= min(N, 1/sin(pi f'/N)),
// f' = min(f, N - f), and sin x >= x - x^3/6; the inverse transform's own rounding is at most
// e_L sum_f |W_f| / N per entry. So every sum of consecutive entries of either side is off by at most
//   tail = sum_f S_f min(1, 1 / (N sin(pi f' / N))) + e_L sum_f |W_f|,
// the bound the callers move to +inf (pessimistic) or remove from the top (optimistic).
//
// Grid points spanned by both sides of a part.
inline long width_of(const TwoSided& p) noexcept {
    const long a = std::min(p.pess.offset, p.opt.offset);
    const long e = std::max(p.pess.offset + static_cast<long>(p.pess.p.size()), p.opt.offset + static_cast<long>(p.opt.p.size()));
    return e - a;
}

struct Circular {
    const fft::cplx* w = nullptr;  // N entries in the Scratch passed to circular_compose
    long A = 0;
    double tail = 0.0;  // bound on the rounding error of any sum of consecutive entries, either side
};

inline std::vector<Circular> circular_compose(const std::vector<const TwoSided*>& parts,
                                              const std::vector<std::vector<long>>& counts, const fft::Plan& plan,
                                              Scratch& ws) {
    constexpr double u = fft::Plan::kUnit;
    const std::size_t n_out = counts.size(), N = plan.size();
    const double eL = plan.error_factor();
    std::vector<fft::cplx>& buf = ws.buf;
    buf.resize(N);
    // The spectra of real pmfs are Hermitian: only the frequencies 0..N/2 are raised and multiplied, the
    // others are their conjugates (exactly, in both the computed and the exact values).
    const std::size_t H = N / 2 + 1;
    // Per output and pair of frequencies, while parts remain: the running products and the U, V and R of
    // the error bound (below). The last part finishes each pair at once (a single part needs no state).
    if (parts.size() > 1 && ws.state_size < n_out * H) {
        ws.state.reset(new FreqState[n_out * H]);
        ws.state_size = n_out * H;
    }
    // The last part writes output 0's spectrum over its own (each pair is read before it is written).
    ws.w.resize(n_out);
    for (std::size_t o = 1; o < n_out; ++o) ws.w[o].resize(N);
    std::vector<fft::cplx*> w(n_out);
    w[0] = buf.data();
    for (std::size_t o = 1; o < n_out; ++o) w[o] = ws.w[o].data();
    std::vector<double> spec(n_out, 0.0), wsum(n_out, 0.0);
    // theta = (1 + sqrt(2) gamma_2)^R - 1 for the last R seen, per output (R takes few distinct values).
    const double lg = std::log1p(fft::Plan::kSqrt2Gamma2);
    std::vector<double> last_R(n_out, -1.0), last_theta(n_out, 0.0);
    std::vector<Circular> outs(n_out);
    for (std::size_t j = 0; j < parts.size(); ++j) {
        const bool first = j == 0, last = j + 1 == parts.size();
        const Side& sp = parts[j]->pess;
        const Side& so = parts[j]->opt;
        const long a = std::min(sp.offset, so.offset);
        if (width_of(*parts[j]) > static_cast<long>(N)) throw std::invalid_argument("a part is longer than the transform");
        std::fill(buf.begin(), buf.end(), fft::cplx(0.0, 0.0));
        for (std::size_t i = 0; i < sp.p.size(); ++i) buf[static_cast<std::size_t>(sp.offset - a) + i].real(sp.p[i]);
        for (std::size_t i = 0; i < so.p.size(); ++i) buf[static_cast<std::size_t>(so.offset - a) + i].imag(so.p[i]);
        // norm1 >= sum_i |x_i|: each |x_i| <= sqrt(re^2 + im^2) (1 + 4u) + 2e-154 (relative error 3u, or
        // an underflowed square: absolute error below 2e-154), the sum within (n + 1) u.
        double norm1 = 0.0;
        const std::size_t used = static_cast<std::size_t>(width_of(*parts[j]));
        for (std::size_t i = 0; i < used; ++i) norm1 += std::sqrt(buf[i].real() * buf[i].real() + buf[i].imag() * buf[i].imag());
        norm1 = norm1 * (1.0 + static_cast<double>(used + 8) * u) + static_cast<double>(used) * 2e-154;
        const double E = (eL + u * (1.0 + eL)) * norm1 * (1.0 + 1e-6);
        // The lowest frequencies, where |X|^k is largest and the bound's amplification by k bites, are
        // recomputed as direct sums accumulated in long double (within a work budget, over all parts, of
        // N log2(N) / 32 long-double products): |error| <= mu ||a||_1 (twiddles) + 2 d 2^-64 ||a||_1 (products
        // and sums in long double, d roundings per term, both components) + u |X| (rounding to double).
        double norm_a = 0.0, norm_b = 0.0;
        for (double v : sp.p) norm_a += std::fabs(v);
        for (double v : so.p) norm_b += std::fabs(v);
        const double norm_ab = std::max(norm_a, norm_b) * (1.0 + static_cast<double>(used + 4) * u);
        // Summed in blocks of 64 terms, then the block sums: at most 64 + used / 64 + 2 roundings per term.
        const double sum_depth = 64.0 + static_cast<double>(used) / 64.0 + 2.0;
        const double E_acc = (plan.twiddle_error() * (1.0 + u) + u * (1.0 + plan.twiddle_error()) +
                              2.0 * sum_depth * (LDBL_EPSILON / 2.0)) * norm_ab * (1.0 + 1e-6);
        std::size_t levels = 0;
        while ((std::size_t(1) << levels) < N) ++levels;
        const std::size_t f_acc = E_acc < E ? std::min<std::size_t>(N / 2, N * levels / (32 * parts.size() * std::max<std::size_t>(used, 1))) : 0;
        const auto accurate = [&](std::size_t fq, fft::cplx& xa, fft::cplx& ya) {
            long double ar = 0.0L, ai = 0.0L, br = 0.0L, bi = 0.0L;
            std::size_t t = 0;
            for (std::size_t i0 = 0; i0 < used; i0 += 64) {
                long double sar = 0.0L, sai = 0.0L, sbr = 0.0L, sbi = 0.0L;
                for (std::size_t i = i0; i < std::min(used, i0 + 64); ++i, t = (t + fq) & (N - 1)) {
                    const fft::cplx wt = plan.twiddle(t);
                    const long double va = buf[i].real(), vb = buf[i].imag();  // before the transform: see below
                    sar += va * static_cast<long double>(wt.real());
                    sai += va * static_cast<long double>(wt.imag());
                    sbr += vb * static_cast<long double>(wt.real());
                    sbi += vb * static_cast<long double>(wt.imag());
                }
                ar += sar;
                ai += sai;
                br += sbr;
                bi += sbi;
            }
            xa = fft::cplx(static_cast<double>(ar), static_cast<double>(ai));
            ya = fft::cplx(static_cast<double>(br), static_cast<double>(bi));
        };
        // The low spectra are needed before forward_bitrev overwrites the pmfs.
        std::vector<std::pair<fft::cplx, fft::cplx>> low;
        if (f_acc > 0) {
            low.resize(2 * f_acc + 1);
            for (std::size_t fq = 0; fq <= f_acc; ++fq) {
                accurate(fq, low[fq].first, low[fq].second);
                if (fq > 0 && fq < N - f_acc) accurate(N - fq, low[f_acc + fq].first, low[f_acc + fq].second);
            }
        }
        plan.forward_bitrev(buf.data());
        // Per output: below r2_min, |z|^k underflows (ipow returns 0); below r_cut, M^k and M^{k-1} are
        // below e^{-690} (rpow returns 0).
        std::vector<double> r2_min(n_out), r_cut(n_out);
        for (std::size_t o = 0; o < n_out; ++o) {
            outs[o].A += counts[o][j] * a;
            const double k = static_cast<double>(std::max(counts[o][j], 2L));
            r2_min[o] = std::exp(-1490.0 / k);
            r_cut[o] = std::exp(-690.0 / (k - 1.0));
        }
        // Per pair of frequencies (k, N - k) at the positions (p, pp) of the bit-reversed spectrum: (0, 0),
        // (1, 1) and, for p in the first half of each [2^b, 2^{b+1}), (p, 3 * 2^b - 1 - p). Separate the
        // two real spectra (Hermitian symmetry), raise them to each output's count (an output whose count
        // is the previous one's plus one takes one more multiplication) and multiply them in.
        const auto prepare = [&](std::size_t p, std::size_t pp) {
            PairSpectra q;
            const fft::cplx z = buf[p], zc = std::conj(buf[pp]);
            q.x = 0.5 * (z + zc);
            q.y = fft::cplx(0.0, -0.5) * (z - zc);
            q.Ex = q.Ey = E;
            q.fq = plan.bitrev(p);
            q.acc = f_acc > 0 && std::min(q.fq, N - q.fq) <= f_acc;
            if (q.acc) {
                const std::size_t slot = q.fq <= f_acc ? q.fq : f_acc + (N - q.fq);
                q.x = low[slot].first;
                q.y = low[slot].second;
                q.Ex = q.Ey = E_acc;
            }
            // Bounds on both moduli (computed and exact); sqrt(re^2 + im^2) has relative error <= 3u (an
            // underflowed square errs by < 1e-150 absolute, far below E).
            q.mx = std::sqrt(q.x.real() * q.x.real() + q.x.imag() * q.x.imag()) * (1.0 + 4.0 * u) + q.Ex;
            q.my = std::sqrt(q.y.real() * q.y.real() + q.y.imag() * q.y.imag()) * (1.0 + 4.0 * u) + q.Ey;
            return q;
        };
        const auto pair = [&](std::size_t f, std::size_t p, std::size_t pp, const PairSpectra& q) {
            const fft::cplx x = q.x, y = q.y;
            const double Ex = q.Ex, Ey = q.Ey, mx = q.mx, my = q.my;
            const std::size_t fq = q.fq;
            const bool acc = q.acc;
            long k_prev = 0;
            fft::cplx xk, yk;
            for (std::size_t o = 0; o < n_out; ++o) {
                FreqState st = first ? FreqState{} : ws.state[o * H + f];
                const long k = counts[o][j];
                if (k != 0) {
                    for (int side = 0; side < 2; ++side) {
                        const double m = side ? my : mx;
                        double& uf = st.U[side];
                        double& vf = st.V[side];
                        if (uf == 0.0 && vf == 0.0) continue;  // stays 0 (underflowed: within the 1e-290)
                        if (k > 1 && m < r_cut[o]) {  // M^k, M^{k-1} < e^{-690}: covered by the 1e-290 per frequency
                            uf = 0.0;
                            vf = 0.0;
                            continue;
                        }
                        const double mk1 = rpow(m, k - 1), mk = mk1 * m;
                        vf = vf * mk + uf * static_cast<double>(k) * (side ? Ey : Ex) * mk1;
                        uf *= mk;
                    }
                    if (st.px != 0.0 || st.py != 0.0) {  // else nothing is left to multiply
                        if (acc) {  // the power in long double: k - 1 products of relative error <= 3 * 2^-64
                            xk = ipow_ld(x, k);
                            yk = ipow_ld(y, k);
                            st.R += 2.0 + static_cast<double>(k) * kLdRatio;  // + rounding to double, the product below
                            k_prev = 0;
                        } else {
                            st.R += static_cast<double>(k);  // k - 1 products in the power, one below
                            if (k_prev > 0 && k == k_prev + 1) {
                                xk *= x;
                                yk *= y;
                            } else {
                                xk = ipow(x, k, r2_min[o]);
                                yk = ipow(y, k, r2_min[o]);
                            }
                            k_prev = k;
                        }
                        st.px = first ? xk : st.px * xk;
                        st.py = first ? yk : st.py * yk;
                    }
                }
                if (!last) {
                    ws.state[o * H + f] = st;
                    continue;
                }
                // The pair's share of the bound on the sums of consecutive entries (below).
                if (st.R != last_R[o]) {
                    last_R[o] = st.R;
                    last_theta[o] = std::expm1(st.R * lg) * (1.0 + 1e-6);
                }
                const double theta = last_theta[o];
                const double s_f = st.V[0] + st.V[1] + (theta + u * (1.0 + theta)) * (st.U[0] + st.U[1]) + 1e-290;
                const fft::cplx wa = st.px + fft::cplx(0.0, 1.0) * st.py;
                w[o][p] = wa;
                double wf = std::fabs(wa.real()) + std::fabs(wa.imag());  // >= |W_f|
                // Weight min(1, 1 / (N sin(pi fm / N))) of the pair's frequencies, with sin x >= x - x^3 / 6
                // (x = pi fm / N <= pi / 2); 1 (an upper bound) where only the 1e-290 remains.
                const std::size_t fm = std::min(fq, N - fq);
                double weight = 1.0;
                if (fm != 0 && s_f > 1e-290) {
                    const double xf = special::kPi * static_cast<double>(fm) / static_cast<double>(N);
                    weight = std::min(1.0, 1.0 / (static_cast<double>(N) * (xf - xf * xf * xf / 6.0)));
                }
                if (pp != p) {
                    const fft::cplx wb = std::conj(st.px) + fft::cplx(0.0, 1.0) * std::conj(st.py);
                    w[o][pp] = wb;
                    wf += std::fabs(wb.real()) + std::fabs(wb.imag());
                    spec[o] += 2.0 * s_f * weight;  // f and N - f
                } else {
                    spec[o] += s_f * weight;
                }
                wsum[o] += wf;
            }
        };
        const auto visit = [&](std::size_t f, std::size_t p, std::size_t pp) { pair(f, p, pp, prepare(p, pp)); };
        std::size_t f = 0;
        for (std::size_t p = 0; p < std::min<std::size_t>(N, 2); ++p) visit(f++, p, p);
        for (std::size_t base = 2; base < N; base *= 2) {
            for (std::size_t t = 0; t < base / 2; ++t) visit(f++, base + t, 2 * base - 1 - t);
        }
    }
    const double inv_n = 1.0 / static_cast<double>(N);
    for (std::size_t o = 0; o < n_out; ++o) {
        // Sums of N nonnegative terms (relative error <= N u) and the products in their terms (relative
        // <= (sum k_j + 8) u): the factor 1.001 covers both.
        outs[o].tail = (spec[o] + eL * wsum[o]) * 1.001;
        outs[o].w = w[o];
        plan.inverse_from_bitrev(w[o]);
        for (std::size_t i = 0; i < N; ++i) w[o][i] *= inv_n;  // a power of two: exact
    }
    return outs;
}

}  // namespace pydp::accounting::pld
