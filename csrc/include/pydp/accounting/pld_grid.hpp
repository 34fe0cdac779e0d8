// The grid of a certified privacy-loss distribution (PLD) and the two discretisations of one mechanism
// onto it: Side (P-mass at the losses (offset + i) h and at +inf), TwoSided (a pessimistic and an
// optimistic Side), and their construction from exact cell masses (from_cells) or from a finite list of
// atoms (from_atoms).
//
// What it computes: per loss cell (g_i, g_{i+1}] the exact P- and Q-masses of the mechanism go in.
//   pessimistic: each cell's mass is split between g_i and g_{i+1} preserving both masses (the
//     connect-the-dots of Doroshenko et al. 2022, which equals spreading every point of the cell);
//     P(L <= g_0) goes up to g_0 and P(L > g_n) to +inf.
//   optimistic: each cell is first contracted to its conditional atom (Jensen), then neighbouring atoms
//     are merged onto the grid point between them (merges are contractions); the last remainder is
//     merged with mass below it; P(L <= g_0) is dropped and P(L > g_n) rounds down to g_n.
// Why it is certified: delta(eps) = E_P[phi(e^eps Z)] with Z = e^{-L} and phi(z) = (1 - z)_+ convex and
// decreasing, so a mean-preserving spread of Z (same P- and Q-mass) raises delta and a contraction lowers
// it, as does raising or lowering a loss; every step above is one of these, so the pessimistic side's
// delta is an upper and the optimistic side's a lower bound, also after composition (proofs in
// docs/pld.md, "The grid and the cells", "Pessimistic discretisation", "Optimistic discretisation").
// How it is checked: tests/accounting/test_pld.py (single mechanisms against mpmath), tests/accounting/test_pld_families.py
// (atom lists of the discrete Gaussian against its exact profile) and csrc/tests/test_pld.cpp
// (both sides keep the mass; a two-point mechanism's sides against its exact delta).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

namespace pydp::accounting::pld {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr long kMaxPoints = 1L << 25;  // grid points of one discretisation or window

// One discretised side: P-mass p[i] at loss (offset + i) h, and P-mass at +inf. log_err bounds the error
// of masses formed from tails evaluated in log space: each P-mass m above (or below) a loss, and each
// Q-mass, is exact to a relative log_err u |log m| (u = 2^-53), since exp of a log with an absolute error
// of c u |log m| has that relative error (0: the masses were given, exact up to rounding).
struct Side {
    long offset = 0;
    std::vector<double> p;
    double inf = 0.0;
    double log_err = 0.0;
};

struct TwoSided {
    Side pess, opt;
};

// ----- from cell masses ---------------------------------------------------------------------------------
// A loss cell (g_start, g_{start+width}] with P-mass p whose conditional atom (the loss l* with
// Q-mass = p e^{-l*}) lies between off_lo and off_hi above g_start (equal when it is known; when a mass
// has underflowed, the pessimistic side takes the top of the cell and the optimistic side its bottom).
struct Cell {
    long start, width;
    double p, off_lo, off_hi;
};

// Masses below this are too close to the subnormal range for their ratio to place the atom.
inline constexpr double kTinyMass = 1e-290;

// The cell from its P-mass and its Q-mass relative to the cell's start (qrel = Q e^{g_start}); the offset
// log(p / qrel) is clamped to the cell against rounding.
// slack > 0 widens the placement to [off - slack, off + slack] (clamped to the cell): an absolute
// error bound of the computed offset where the masses carry rounding.
inline Cell make_cell(long start, long width, double h, double p, double qrel, double slack = 0.0) noexcept {
    const double wh = static_cast<double>(width) * h;
    if (!(qrel > kTinyMass && p > kTinyMass && qrel < kInf)) return {start, width, p, 0.0, wh};
    const double off = std::log(p / qrel);
    return {start, width, p, std::min(std::max(off - slack, 0.0), wh), std::min(std::max(off + slack, 0.0), wh)};
}

// The grid spans indices [i0, i0 + n]; cells are sorted, disjoint and inside it. below: P(L <= g_i0);
// above_p: P(g_{i0+n} < L < inf); inf_p: P(L = +inf).
inline TwoSided from_cells(long i0, long n, double h, const std::vector<Cell>& cells, double below, double above_p,
                           double inf_p) {
    TwoSided out;
    out.pess.offset = out.opt.offset = i0;
    out.pess.p.assign(static_cast<std::size_t>(n + 1), 0.0);
    out.opt.p.assign(static_cast<std::size_t>(n + 1), 0.0);
    out.pess.p[0] = below;
    out.pess.inf = above_p + inf_p;
    out.opt.p[static_cast<std::size_t>(n)] = above_p;
    out.opt.inf = inf_p;
    std::vector<double>& pp = out.pess.p;
    std::vector<double>& op = out.opt.p;
    // Optimistic merge state: a carry of P-mass pc with Q-mass times e^{g_T} equal to rc (position <= g_T),
    // T the grid index (relative to i0) the carry is waiting to be merged onto.
    bool have = false;
    long T = 0;
    double pc = 0.0, rc = 0.0;
    long last_width = 0;  // -expm1(-wh) for the last width seen (most cells are one step wide)
    double span_q = 0.0;
    for (const Cell& c : cells) {
        const double pa = c.p;
        if (!(pa > 0.0)) continue;
        const long i = c.start - i0, e = i + c.width;
        const double wh = static_cast<double>(c.width) * h;
        const double off = c.off_lo;  // the optimistic side places the atom as low as it may lie
        if (c.width != last_width) {
            last_width = c.width;
            span_q = -std::expm1(-wh);
        }
        // Pessimistic: split between the cell's ends keeping P- and Q-mass (connect-the-dots).
        const double b = pa * (-std::expm1(-c.off_hi)) / span_q;
        pp[static_cast<std::size_t>(e)] += b;
        pp[static_cast<std::size_t>(i)] += pa - b;
        // Optimistic: merge onto the grid point the carry waits for.
        if (!have) {
            have = true;
            T = e;
            pc = pa;
            rc = pa * std::exp(wh - off);
            continue;
        }
        const double shift = static_cast<double>(T - i) * h - off;  // g_T - position of the atom (<= 0)
        const double ra = pa * std::exp(shift);
        const double ea = ra - pa, ec = rc - pc;  // excesses q e^{g_T} - p: carry >= 0, atom <= 0
        if (ec + ea <= 0.0) {
            const double f = ea < 0.0 ? std::min(std::max(ec / -ea, 0.0), 1.0) : 0.0;
            op[static_cast<std::size_t>(T)] += pc + f * pa;
            T = e;
            pc = (1.0 - f) * pa;
            rc = pc * std::exp(wh - off);
        } else {
            pc += pa;
            rc += ra;
        }
    }
    if (have && pc > 0.0) {
        // The last carry has nothing above it to merge with. Its position is g_T + log(pc / rc); t is the
        // grid point at or below it. Merge it with mass already emitted below t so that the merge lands on
        // t (a contraction again; for a large top atom, as the Laplace's at L = d, plain rounding down
        // would be a first-order loss).
        const long t = std::max(0L, T + static_cast<long>(std::floor(std::log(pc / rc) / h + 1e-9)));
        double deficit = pc - rc * std::exp(static_cast<double>(t - T) * h);  // p - Q e^{g_t} of the carry
        for (long j = t - 1; j >= 0 && deficit > 0.0; --j) {
            const double gain = std::expm1(static_cast<double>(t - j) * h);  // excess per unit mass at g_j
            const double take = std::min(op[static_cast<std::size_t>(j)], deficit / gain);
            op[static_cast<std::size_t>(j)] -= take;
            op[static_cast<std::size_t>(t)] += take;
            deficit -= take * gain;
        }
        // Whatever could not be balanced rounds down with the carry (always allowed: it lowers losses).
        op[static_cast<std::size_t>(t)] += pc;
    }
    return out;
}

// Atoms (loss l_j, P-mass p_j, Q-mass q_j) grouped into the cells l in (g_i, g_{i+1}]. Finite losses only;
// P-mass at +inf goes in inf_p. Exact for mechanisms with finitely many outcomes.
inline TwoSided from_atoms(const std::vector<double>& loss, const std::vector<double>& p, const std::vector<double>& q,
                           double inf_p, double h) {
    if (loss.empty()) {
        TwoSided t;
        t.pess.p.assign(1, 0.0);
        t.opt.p.assign(1, 0.0);
        t.pess.inf = t.opt.inf = inf_p;
        return t;
    }
    long lo = std::numeric_limits<long>::max(), hi = std::numeric_limits<long>::min();
    std::vector<long> cell(loss.size());
    for (std::size_t j = 0; j < loss.size(); ++j) {
        cell[j] = static_cast<long>(std::ceil(loss[j] / h)) - 1;  // l in (g_c, g_{c+1}]
        lo = std::min(lo, cell[j]);
        hi = std::max(hi, cell[j]);
    }
    if (hi - lo + 2 > kMaxPoints) throw std::domain_error("value_step is too small for the range of the losses");
    // P-mass and Q-mass relative to the cell start, Q e^{g_c} = sum q_j e^{g_c} = sum p_j e^{-(l_j - g_c)}.
    std::vector<double> pm(static_cast<std::size_t>(hi - lo + 1), 0.0), qrel(pm.size(), 0.0), n(pm.size(), 0.0);
    for (std::size_t j = 0; j < loss.size(); ++j) {
        const std::size_t c = static_cast<std::size_t>(cell[j] - lo);
        pm[c] += p[j];
        qrel[c] += q[j] * std::exp(static_cast<double>(cell[j]) * h);
        n[c] += 1.0;
    }
    // The offset log(pm / qrel) of a cell is exact only to the masses' rounding: a few ulps of each given
    // mass (formed by exp of a log), n ulps of each n-term sum, 2 ulps of each factor e^{g_c} q_j, one of
    // the ratio and u |off| <= u h of the log, so within (2 n + 16) u + 2 u h. (The offset is relative
    // to the double g_c, the loss every later step gives that grid point.) Near loss 0 (a mechanism that
    // barely differs, as a discrete Laplace of scale 1e300) that is far larger than the offset itself,
    // and the pessimistic side must place the atom at its upper end.
    constexpr double u = 0x1p-53;
    std::vector<Cell> cells;
    for (std::size_t c = 0; c < pm.size(); ++c) {
        if (!(pm[c] > 0.0)) continue;
        const long start = lo + static_cast<long>(c);
        const double slack = (2.0 * n[c] + 16.0 + 2.0 * h) * u;
        cells.push_back(make_cell(start, 1, h, pm[c], qrel[c], slack));
    }
    return from_cells(lo, hi - lo + 1, h, cells, 0.0, 0.0, inf_p);
}

}  // namespace pydp::accounting::pld
