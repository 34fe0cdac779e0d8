// Composition of certified PLDs: compose() takes mechanisms with counts and returns both sides of their
// composition on a window of the grid, with the masses that lie outside it.
//
// What it computes: compose_on_grid sizes a power-of-two window from the Chernoff tails
// (pld_chernoff.hpp), cut to the composed support (a bounded loss, as at a huge noise scale, then needs
// no window beyond it and leaves no mass outside), runs circular_compose (pld_circular.hpp) and unwraps the result: the pessimistic
// side gets the rounding bound on its top entry and records the Chernoff-bounded masses below and above
// the window (tau_low, tau_up: added to its lowest atom and to +inf by the queries and by regridding);
// the optimistic side records what its top must lose (tau_opt, fp_opt: the outside masses, the rounding
// bound, the negative entries raised to 0). Mechanisms composed at least kTwoLevel = 2048 times go in
// two levels: blocks of k1 <= 256 copies on the fine grid, regridded (spread or merged again,
// pld_grid.hpp) to a grid R = 8 times coarser and composed there, so long compositions need R times
// fewer points (the second level's error ~ k h^2 / 4).
// Why it is certified: aliasing and truncation only move mass upward (pessimistic) or remove it
// (optimistic) by proven bounds, and regridding is again a spread or a contraction, so the two sides stay
// an upper and a lower bound on the exact composition's delta (docs/pld.md, "Composition by FFT and the
// wrap-around", "Two-level composition").
// How it is checked: tests/accounting/test_pld.py (k-fold Gaussian against exact GDP from k = 2 to 10^6, two-level
// splits with prime and power-of-two k, heterogeneous compositions, three-fold against nested
// integrals) and csrc/tests/test_pld.cpp (k-fold randomized response against its binomial closed form,
// k-fold Laplace at its pure-DP epsilon, k-fold Gaussian against exact GDP).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pydp/accounting/fft.hpp"
#include "pydp/accounting/pld_chernoff.hpp"
#include "pydp/accounting/pld_circular.hpp"
#include "pydp/accounting/pld_grid.hpp"

namespace pydp::accounting::pld {

struct Component {
    const TwoSided* pld;
    long count;
};

struct Composed {
    Side pess, opt;
    double h = 0.0;                      // grid step of the result
    double tau_low = 0.0, tau_up = 0.0;  // pessimistic side: mass below / above the window
    double tau_opt = 0.0;                // optimistic side: mass outside the window
    double fp = 0.0;                     // bound on the FFT's rounding of any tail sum (added to pess's top)
    double fp_opt = 0.0;                 // optimistic side: the same plus the mass of negative entries
};

// Total mass of one side (finite part plus +inf) rounded up (up = true) or down: the n-term sum has
// relative error <= (n + 1) u.
inline double side_mass(const Side& s, bool up) noexcept {
    double m = s.inf;
    for (double v : s.p) m += v;
    const double slack = static_cast<double>(s.p.size() + 2) * fft::Plan::kUnit;
    return up ? m * (1.0 + slack) : m * (1.0 - slack);
}

// Mass at +inf of a composition of measures with totals m_j and +inf masses inf_j (counts k_j):
// prod m_j^k_j - prod (m_j - inf_j)^k_j = prod m_j^k_j (1 - prod (1 - inf_j / m_j)^k_j). With all m_j >= 1
// (upper = true) this is at most prod m_j^k_j (1 - prod (1 - inf_j)^k_j); with all m_j <= 1 at least
// that. `mass` holds m_j (clamped to >= 1 or <= 1 by the caller).
inline double composed_inf(const std::vector<double>& inf, const std::vector<double>& mass, const std::vector<long>& counts) {
    double keep = 1.0, scale = 1.0;
    for (std::size_t j = 0; j < inf.size(); ++j) {
        const double k = static_cast<double>(counts[j]);
        keep *= std::pow(1.0 - inf[j], k);
        scale *= std::pow(mass[j], k);
    }
    return scale * (1.0 - keep);
}

// Grid indices [lo, hi] of the finite support of a composition, per side ([0] pessimistic, [1]
// optimistic): the sums of count times the lowest and highest index of nonzero mass of each part. Formed
// in long double and widened by one index beyond its rounding (a wider support only keeps more of the
// Chernoff window), clamped to +-2^62; a side with no finite mass gets the empty range [2^62, -2^62].
struct Support {
    long lo[2], hi[2];
};

inline Support composed_support(const std::vector<const TwoSided*>& parts, const std::vector<long>& counts) {
    long double lo[2] = {0.0L, 0.0L}, hi[2] = {0.0L, 0.0L};
    bool empty[2] = {false, false};
    for (std::size_t j = 0; j < parts.size(); ++j) {
        if (counts[j] <= 0) continue;
        const long double k = static_cast<long double>(counts[j]);
        for (int side = 0; side < 2; ++side) {
            const Side& s = side ? parts[j]->opt : parts[j]->pess;
            std::size_t a = 0, b = s.p.size();
            while (a < b && !(s.p[a] > 0.0)) ++a;
            while (b > a && !(s.p[b - 1] > 0.0)) --b;
            if (a == b) {  // no finite mass: the composition has none either
                empty[side] = true;
                continue;
            }
            lo[side] += k * static_cast<long double>(s.offset + static_cast<long>(a));
            hi[side] += k * static_cast<long double>(s.offset + static_cast<long>(b) - 1);
        }
    }
    constexpr long double kCap = 4611686018427387904.0L;  // 2^62
    Support out{};
    for (int side = 0; side < 2; ++side) {
        const long double l = empty[side] ? kCap : lo[side] - 1.0L - 1e-15L * std::fabs(lo[side]);
        const long double r = empty[side] ? -kCap : hi[side] + 1.0L + 1e-15L * std::fabs(hi[side]);
        out.lo[side] = static_cast<long>(std::floor(std::clamp(l, -kCap, kCap)));
        out.hi[side] = static_cast<long>(std::ceil(std::clamp(r, -kCap, kCap)));
    }
    return out;
}

// Several compositions of the same parts on one grid, each on a window covering its Chernoff window.
// The mass outside the window is bounded by Chernoff with the exact discrete MGF. The rounding bound of
// the tail sums is added to the pessimistic side's top entry here; on the optimistic side the callers
// remove it (fp_opt) from the top, like the aliased mass.
inline std::vector<Composed> compose_on_grid(const std::vector<const TwoSided*>& parts,
                                             const std::vector<std::vector<long>>& counts, double h, double tail,
                                             Plans& plans) {
    const std::size_t n_out = counts.size();
    std::vector<MgfTable> tables;
    tables.reserve(parts.size());
    for (const TwoSided* p : parts) tables.push_back(mgf_table(*p, h));
    std::vector<const MgfTable*> tp;
    for (const MgfTable& t : tables) tp.push_back(&t);
    std::vector<Cgf> cgfs;
    std::vector<Support> supports;
    double lo = kInf, hi = -kInf;
    for (std::size_t o = 0; o < n_out; ++o) {
        cgfs.emplace_back(tp, counts[o]);
        supports.push_back(composed_support(parts, counts[o]));
        const Support& sup = supports.back();
        auto [l, r] = window(cgfs.back(), std::log(tail));
        // The Chernoff window never needs to reach past the composed support: no mass lies beyond it.
        const long s_lo = std::min(sup.lo[0], sup.lo[1]), s_hi = std::max(sup.hi[0], sup.hi[1]);
        if (s_lo <= s_hi) {  // some finite mass
            l = std::max(l, static_cast<double>(s_lo) * h);
            r = std::min(r, static_cast<double>(s_hi) * h);
        }
        lo = std::min(lo, l);
        hi = std::max(hi, r);
    }
    long width = 1;  // each part's pmfs must fit in the transform without wrapping
    for (const TwoSided* p : parts) width = std::max(width, width_of(*p));
    const long w0 = static_cast<long>(std::floor(lo / h));
    const long need = std::max(static_cast<long>(std::ceil(hi / h)) - w0 + 1, width);
    if (need > kMaxPoints) throw std::domain_error("value_step is too small for the composed loss range");
    std::size_t N = 2;
    while (static_cast<long>(N) < need) N <<= 1;
    const fft::Plan& plan = plans.get(N);
    const std::vector<Circular> circ = circular_compose(parts, counts, plan, plans.scratch);
    for (const Circular& c : circ) {
        // The rounding bound grows with the number of products in the powers; past ~2^50 of them it is
        // not finite, and no certified interval can be formed from the transform.
        if (!std::isfinite(c.tail)) {
            throw std::domain_error("a composition of this many steps (k) has no finite bound on its FFT rounding: "
                                    "use fewer steps");
        }
    }
    std::vector<double> mass_pess(parts.size()), mass_opt(parts.size()), inf_pess(parts.size()), inf_opt(parts.size());
    for (std::size_t j = 0; j < parts.size(); ++j) {
        mass_pess[j] = std::max(side_mass(parts[j]->pess, true), 1.0);
        mass_opt[j] = std::min(side_mass(parts[j]->opt, false), 1.0);
        inf_pess[j] = parts[j]->pess.inf;
        inf_opt[j] = parts[j]->opt.inf;
    }
    std::vector<Composed> outs(n_out);
    const long nl = static_cast<long>(N);
    for (std::size_t o = 0; o < n_out; ++o) {
        Composed& out = outs[o];
        out.h = h;
        out.pess.offset = out.opt.offset = w0;
        out.pess.p.assign(N, 0.0);
        out.opt.p.assign(N, 0.0);
        out.pess.inf = composed_inf(inf_pess, mass_pess, counts[o]);
        out.opt.inf = composed_inf(inf_opt, mass_opt, counts[o]);
        // A product of masses has the sum of their relative errors, and |log| of a product of masses
        // <= 1 is the sum of theirs: the largest coefficient carries over.
        for (const TwoSided* p : parts) {
            out.pess.log_err = std::max(out.pess.log_err, p->pess.log_err);
            out.opt.log_err = std::max(out.opt.log_err, p->opt.log_err);
        }
        // Negative entries are raised to 0: a raise of the pessimistic side; on the optimistic side the
        // raised mass is removed from the top with the rounding bound.
        double neg = 0.0;
        long pos = (((w0 - circ[o].A) % nl) + nl) % nl;
        for (long I = 0; I < nl; ++I, pos = (pos + 1) & (nl - 1)) {
            const fft::cplx v = circ[o].w[static_cast<std::size_t>(pos)];
            out.pess.p[static_cast<std::size_t>(I)] = std::max(v.real(), 0.0);
            out.opt.p[static_cast<std::size_t>(I)] = std::max(v.imag(), 0.0);
            neg += std::max(-v.imag(), 0.0);
        }
        // Pessimistic: the rounding bound of the tail sums joins the window's top entry (every upper set of
        // the window contains it, so the result dominates the exact circular result in every upper set).
        out.fp = circ[o].tail;
        out.pess.p.back() += out.fp;
        out.fp_opt = circ[o].tail + neg * (1.0 + static_cast<double>(N) * fft::Plan::kUnit);
        // Mass of the linear convolution outside the window [w0, w0 + N - 1].
        const double below = static_cast<double>(w0 - 1) * h, above = static_cast<double>(w0 + nl) * h;
        const Cgf& cgf = cgfs[o];
        // A side whose composed support lies inside the window on one end leaves no mass beyond that end.
        const Support& sup = supports[o];
        const long top = w0 + nl - 1;
        out.tau_low = sup.lo[0] >= w0 ? 0.0 : std::exp(cgf.log_tail(true, below, false));
        out.tau_up = sup.hi[0] <= top ? 0.0 : std::exp(cgf.log_tail(true, above, true));
        out.tau_opt = (sup.lo[1] >= w0 ? 0.0 : std::exp(cgf.log_tail(false, below, false))) +
                      (sup.hi[1] <= top ? 0.0 : std::exp(cgf.log_tail(false, above, true)));
    }
    return outs;
}

// One composition on one grid; a single mechanism taken once needs no transform.
inline Composed compose_on_grid(const std::vector<Component>& comps, double h, double tail, Plans& plans) {
    if (comps.size() == 1 && comps[0].count == 1) {
        Composed out;
        out.h = h;
        out.pess = comps[0].pld->pess;
        out.opt = comps[0].pld->opt;
        return out;
    }
    std::vector<const TwoSided*> parts;
    std::vector<long> counts;
    for (const Component& c : comps) {
        parts.push_back(c.pld);
        counts.push_back(c.count);
    }
    return compose_on_grid(parts, {counts}, h, tail, plans)[0];
}

// ----- two-level composition ------------------------------------------------------------------------------
inline long floor_div(long a, long b) noexcept { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One side regridded to the step R h: each fine atom l_i goes to the coarse cell (G_C, G_{C+1}] holding
// it, and from_cells spreads (pessimistic) or merges (optimistic) the cells onto the coarse grid.
inline TwoSided regrid_side(const Side& s, const std::vector<double>& p, double h, long R) {
    const double H = static_cast<double>(R) * h;
    std::vector<double> decay(static_cast<std::size_t>(R) + 1);  // e^{-u h} for u = 0..R
    for (long u = 0; u <= R; ++u) decay[static_cast<std::size_t>(u)] = std::exp(-static_cast<double>(u) * h);
    std::vector<Cell> cells;
    long lo = std::numeric_limits<long>::max(), hi = std::numeric_limits<long>::min();
    for (std::size_t i = 0; i < p.size();) {
        const long I = s.offset + static_cast<long>(i);
        const long C = floor_div(I - 1, R);  // I h in (C H, (C + 1) H]
        double pm = 0.0, qrel = 0.0;
        for (; i < p.size() && floor_div(s.offset + static_cast<long>(i) - 1, R) == C; ++i) {
            if (!(p[i] > 0.0)) continue;
            pm += p[i];
            qrel += p[i] * decay[static_cast<std::size_t>(s.offset + static_cast<long>(i) - C * R)];
        }
        if (pm > 0.0) {
            cells.push_back(make_cell(C, 1, H, pm, qrel));
            lo = std::min(lo, C);
            hi = std::max(hi, C + 1);
        }
    }
    if (cells.empty()) {
        lo = floor_div(s.offset, R);
        hi = lo + 1;
    }
    return from_cells(lo, hi - lo, H, cells, 0.0, 0.0, s.inf);
}

// Both sides of a composed (or single) PLD on the step R h. Pessimistic: the Chernoff-bounded mass below
// the window joins its lowest atom, the mass above goes to +inf. Optimistic: that much mass and the
// rounding bound are removed from the top (c_circ minus its top tau has no more mass above any x than
// the true pmf, so the result is dominated by it).
inline TwoSided regrid(Side pess, double low_extra, double inf_extra, Side opt, double drop, double h, long R) {
    if (!pess.p.empty()) pess.p[0] += low_extra;
    for (std::size_t j = opt.p.size(); j-- > 0 && drop > 0.0;) {
        const double take = std::min(opt.p[j], drop);
        opt.p[j] -= take;
        drop -= take;
    }
    pess.inf += inf_extra;
    TwoSided out;
    out.pess = regrid_side(pess, pess.p, h, R).pess;
    out.opt = regrid_side(opt, opt.p, h, R).opt;
    out.pess.log_err = pess.log_err;
    out.opt.log_err = opt.log_err;
    return out;
}

inline TwoSided regrid(Composed&& c, long R) {
    return regrid(std::move(c.pess), c.tau_low, c.tau_up, std::move(c.opt), c.tau_opt + c.fp_opt, c.h, R);
}

// Mechanisms composed at least kTwoLevel times are composed in two levels: k1 ~ kBlockSteps copies on the
// fine grid (whose step sets the per-mechanism discretisation error, ~ k h^2), the result regridded to
// R h with R = sqrt(k1) / 2 (one more spread or contraction per block: error ~ k2 (R h)^2 = k h^2 / 4),
// and the blocks composed on the coarse grid, whose window needs R times fewer points.
inline constexpr long kTwoLevel = 2048;
inline constexpr long kBlockSteps = 256;

// k = k1 k2 with k1 <= kBlockSteps and k2 within 25% of its least value, if k has such a divisor k2
// (then one block size suffices); 0 otherwise.
inline long exact_blocks(long k) noexcept {
    const long least = (k + kBlockSteps - 1) / kBlockSteps;
    for (long k2 = least; k2 <= least + least / 4; ++k2) {
        if (k % k2 == 0) return k2;
    }
    return 0;
}

inline Composed compose(const std::vector<Component>& comps, double h, double tail, Plans& plans) {
    if (comps.empty()) throw std::invalid_argument("nothing to compose");
    long kmax = 0;
    for (const Component& c : comps) {
        if (c.count < 1) throw std::invalid_argument("counts must be >= 1");
        kmax = std::max(kmax, c.count);
    }
    if (kmax < kTwoLevel) return compose_on_grid(comps, h, tail, plans);
    const long R = std::max(1L, static_cast<long>(std::sqrt(static_cast<double>(kBlockSteps)) / 2.0));
    std::vector<TwoSided> coarse;
    std::vector<long> counts;
    coarse.reserve(2 * comps.size());
    for (const Component& c : comps) {
        if (c.count < kTwoLevel) {
            coarse.push_back(regrid(c.pld->pess, 0.0, 0.0, c.pld->opt, 0.0, h, R));
            counts.push_back(c.count);
            continue;
        }
        // k = r (k1 + 1) + (k2 - r) k1 with k2 blocks: both block sizes from one forward transform.
        const long exact = exact_blocks(c.count);
        const long k2 = exact ? exact : (c.count + kBlockSteps - 1) / kBlockSteps, k1 = c.count / k2, r = c.count - k1 * k2;
        const double t = tail / static_cast<double>(k2 + 1);  // the blocks' tails compose k2 times
        std::vector<std::vector<long>> powers{{k1}};
        if (r > 0) powers.push_back({k1 + 1});
        std::vector<Composed> blocks = compose_on_grid({c.pld}, powers, h, t, plans);
        coarse.push_back(regrid(std::move(blocks[0]), R));
        counts.push_back(k2 - r);
        if (r > 0) {
            coarse.push_back(regrid(std::move(blocks[1]), R));
            counts.push_back(r);
        }
    }
    std::vector<Component> next;
    for (std::size_t i = 0; i < coarse.size(); ++i) next.push_back({&coarse[i], counts[i]});
    return compose_on_grid(next, static_cast<double>(R) * h, tail, plans);
}

inline Composed compose(const std::vector<Component>& comps, double h, double tail) {
    Plans plans;
    return compose(comps, h, tail, plans);
}

}  // namespace pydp::accounting::pld
