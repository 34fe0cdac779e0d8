// Chernoff bounds on the tails of a composed privacy loss, from the exact moment generating functions of
// the discretised mechanisms: used to size the FFT window of a composition and to bound (and account for)
// the mass that falls outside it.
//
// What it computes: log M(t) = log sum_i p_i e^{t l_i} of each side of each mechanism on a fixed table of
// 29 t values (log-spaced in |t| from 1e-4 to 1e3, both signs; mgf_table), the cumulant generating
// function K(t) = sum_j k_j log M_j(t) of a composition (Cgf), the best tabulated bound on
// P(S >= a) or P(S <= a), and the window outside which either side has at most a given mass (window).
// Why it is certified: log P(S >= a) <= K(t) - t a for every t > 0 (and the mirror for t < 0), so any
// tabulated t gives a valid bound; each log M is computed relative to its largest term (no overflow) and
// raised by 1e-12 to cover the few-ulp roundings of the tabulated exponentials, so K is an upper bound.
// How it is checked: tests/accounting/test_pld.py (the composed intervals, whose aliasing and window masses come from
// here, contain exact GDP up to 10^6 compositions) and csrc/tests/test_pld.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "pydp/accounting/pld_grid.hpp"

namespace pydp::accounting::pld {

// log sum_i p_i e^{t l_i} of one side's finite part at t = +-t_value(i) for all i (-inf where it has no mass).
// Relative to the end where e^{t l} is largest, so no term overflows: the atom m steps from that end
// weighs e^{-|t| h m}, a block factor times a table of B powers; all t are summed in one pass over the
// pmf, the inner loop running over t (independent sums, which vectorise). The block factor of block b is
// e^{-|t| h B (b mod 64)} e^{-|t| h B 64 floor(b / 64)}, from two small tables; every factor is within a
// few ulps of its exact value (as a direct exp would be), and the result is raised by 1e-12 to cover
// these roundings, since callers need upper bounds on the moment generating function.
template <int NT>
void log_mgfs(const Side& s, double h, bool up, const double (&t)[NT], double (&out)[NT]) {
    const std::size_t n = s.p.size();
    constexpr std::size_t B = 64;
    double pw[B][NT], near[B][NT], far[NT], acc[NT], part[NT];
    for (std::size_t j = 0; j < B; ++j) {
        for (int i = 0; i < NT; ++i) {
            pw[j][i] = std::exp(-t[i] * h * static_cast<double>(j));
            near[j][i] = std::exp(-t[i] * h * static_cast<double>(B * j));
        }
    }
    for (int i = 0; i < NT; ++i) acc[i] = 0.0;
    for (std::size_t b0 = 0, b = 0; b0 < n; b0 += B, ++b) {
        if (b % B == 0) {
            for (int i = 0; i < NT; ++i) far[i] = std::exp(-t[i] * h * static_cast<double>(B * b));
        }
        const double* nb = near[b % B];
        if (nb[0] * far[0] == 0.0) break;  // the smallest t decays slowest
        const std::size_t e = std::min(n - b0, B);
        for (int i = 0; i < NT; ++i) part[i] = 0.0;
        for (std::size_t j = 0; j < e; ++j) {
            const double v = up ? s.p[n - 1 - b0 - j] : s.p[b0 + j];
            if (v == 0.0) continue;
            for (int i = 0; i < NT; ++i) part[i] += v * pw[j][i];
        }
        for (int i = 0; i < NT; ++i) acc[i] += nb[i] * far[i] * part[i];
    }
    const double end = n ? static_cast<double>(s.offset + (up ? static_cast<long>(n) - 1 : 0)) * h : 0.0;
    for (int i = 0; i < NT; ++i) out[i] = acc[i] > 0.0 ? (up ? t[i] : -t[i]) * end + std::log(acc[i]) + 1e-12 : -kInf;
}

// The cumulant generating function K(t) = sum_j k_j log M_j(t) of each side of a composition, tabulated
// on a fixed set of t (log-spaced in |t| from 1e-4 to 1e3, both signs). Chernoff bounds
// log P(S >= a) <= K(t) - t a (t > 0) and log P(S <= a) <= K(t) - t a (t < 0) hold for every t, so the
// best tabulated t gives a valid bound; each mechanism's table costs one pass per t over its pmf.
inline constexpr int kT = 29;
inline double t_value(int i) noexcept { return std::pow(10.0, -4.0 + 7.0 * i / (kT - 1)); }

struct MgfTable {
    double lm[2][2][kT];  // [pessimistic, optimistic][t > 0, t < 0][i]: log M(+-t_i)
};

inline MgfTable mgf_table(const TwoSided& s, double h) {
    MgfTable m;
    double t[kT];
    for (int i = 0; i < kT; ++i) t[i] = t_value(i);
    for (int side = 0; side < 2; ++side) {
        for (int sg = 0; sg < 2; ++sg) log_mgfs(side ? s.opt : s.pess, h, sg == 0, t, m.lm[side][sg]);
    }
    return m;
}

class Cgf {
public:
    Cgf(const std::vector<const MgfTable*>& tables, const std::vector<long>& counts) {
        for (int i = 0; i < kT; ++i) t_[i] = t_value(i);
        for (int side = 0; side < 2; ++side) {
            for (int sg = 0; sg < 2; ++sg) {
                for (int i = 0; i < kT; ++i) {
                    double k = 0.0;
                    for (std::size_t j = 0; j < tables.size(); ++j) {
                        if (counts[j] > 0) k += static_cast<double>(counts[j]) * tables[j]->lm[side][sg][i];
                    }
                    k_[side][sg][i] = k;
                }
            }
        }
    }
    // log of the Chernoff bound of P(S >= a) (upper) or P(S <= a) (lower) for the pessimistic or optimistic side.
    double log_tail(bool pess, double a, bool upper) const noexcept {
        double best = 0.0;
        for (int i = 0; i < kT; ++i) {
            const double t = upper ? t_[i] : -t_[i];
            best = std::min(best, k_[pess ? 0 : 1][upper ? 0 : 1][i] - t * a);
        }
        return best;
    }
    // Loss beyond which that bound is <= e^{log_tau}: the best over t of (K(t) - log_tau) / t.
    double edge(bool pess, double log_tau, bool upper) const noexcept {
        double best = upper ? kInf : -kInf;
        for (int i = 0; i < kT; ++i) {
            const double k = k_[pess ? 0 : 1][upper ? 0 : 1][i];
            if (upper) best = std::min(best, (k - log_tau) / t_[i]);
            else best = std::max(best, -(k - log_tau) / t_[i]);
        }
        return best;
    }

private:
    double t_[kT];
    double k_[2][2][kT];
};

// Losses [lo, hi] outside which either side of the composition has Chernoff-bounded mass <= e^{log_tau}.
inline std::pair<double, double> window(const Cgf& cgf, double log_tau) {
    double lo = kInf, hi = -kInf;
    for (bool side : {true, false}) {
        lo = std::min(lo, cgf.edge(side, log_tau, false));
        hi = std::max(hi, cgf.edge(side, log_tau, true));
    }
    return {lo, hi};
}

}  // namespace pydp::accounting::pld
