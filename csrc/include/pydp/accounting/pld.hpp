// Certified privacy-loss distributions (PLDs): a pessimistic and an optimistic discretisation of the
// loss L = log(dP/dQ) under P on the grid l_i = i h, composed by FFT, queried as intervals.
//
// delta(eps) = E_P[(1 - e^{eps - L})_+] + P(L = +inf). With Z = e^{-L} this is E_P[phi(e^eps Z)] with
// phi(z) = (1 - z)_+ convex and decreasing, and under composition Z is a product of independent factors.
// Hence (proofs in docs/pld.md):
//   * raising a loss (rounding up, moving mass to +inf) raises delta; lowering or dropping mass lowers it;
//   * a mean-preserving spread of one factor Z_i (same P-mass, same Q-mass = E_P[Z]) raises delta and a
//     mean-preserving contraction lowers it (Jensen, conditioning on the other factors).
// Per grid cell (g_i, g_{i+1}] we take the exact P- and Q-masses of the mechanism (from log-space tails).
//   pessimistic: each cell's mass is split between g_i and g_{i+1} preserving both masses (the
//     connect-the-dots of Doroshenko et al. 2022, which equals spreading every point of the cell);
//     P(L <= g_0) goes up to g_0 and P(L > g_n) to +inf.
//   optimistic: each cell is first contracted to its conditional atom (Jensen), then neighbouring atoms
//     are merged onto the grid point between them (merges are contractions); the last remainder is
//     merged with mass below it; P(L <= g_0) is dropped and P(L > g_n) rounds down to g_n.
// Both errors are second order in h per factor. Composition: one FFT per distinct mechanism (pessimistic
// in the real part, optimistic in the imaginary part), pointwise powers, one inverse FFT. The mass the
// circular convolution folds into the window is bounded by Chernoff with the exact discrete MGF and
// accounted on each side (added for the upper bound, subtracted for the lower), and so is a proven bound
// on the FFT's rounding (circular_compose). Long compositions run in
// two levels: blocks of ~256 copies on the fine grid, regridded (spread / merge again) to a coarser grid
// and composed there. Checked in tests/test_pld.py against mpmath, exact GDP and the peers.
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pydp/accounting/fft.hpp"
#include "pydp/noise/families.hpp"

namespace pydp::accounting::pld {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr long kMaxPoints = 1L << 25;  // grid points of one discretisation or window

// One discretised side: P-mass p[i] at loss (offset + i) h, and P-mass at +inf.
struct Side {
    long offset = 0;
    std::vector<double> p;
    double inf = 0.0;
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
inline Cell make_cell(long start, long width, double h, double p, double qrel) noexcept {
    const double wh = static_cast<double>(width) * h;
    if (!(qrel > kTinyMass && p > kTinyMass && qrel < kInf)) return {start, width, p, 0.0, wh};
    const double off = std::min(std::max(std::log(p / qrel), 0.0), wh);
    return {start, width, p, off, off};
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
    std::vector<double> pm(static_cast<std::size_t>(hi - lo + 1), 0.0), qrel(pm.size(), 0.0);
    for (std::size_t j = 0; j < loss.size(); ++j) {
        const std::size_t c = static_cast<std::size_t>(cell[j] - lo);
        pm[c] += p[j];
        qrel[c] += q[j] * std::exp(static_cast<double>(cell[j]) * h);
    }
    std::vector<Cell> cells;
    for (std::size_t c = 0; c < pm.size(); ++c) {
        if (pm[c] > 0.0) cells.push_back(make_cell(lo + static_cast<long>(c), 1, h, pm[c], qrel[c]));
    }
    return from_cells(lo, hi - lo + 1, h, cells, 0.0, 0.0, inf_p);
}

// ----- noise mechanisms -------------------------------------------------------------------------------
// Output X = f(x) in standardised units (x / scale), shift d = sensitivity / scale, Poisson sampling
// rate q. With g(x) = log f(x - d) / f(x) nondecreasing (log-concavity):
//   remove: P = (1-q) f + q f(. - d), Q = f, L = log(1 - q + q e^{g(x)}), nondecreasing in x;
//   add:    P = f, Q = (1-q) f + q f(. - d), L = -log(1 - q + q e^{g(x)}), nonincreasing in x.
// Substitution of one record whose contribution has norm <= d (docs/pld.md, "Neighbouring relations"):
//   replace: P = (1-q) f + q f(. - d), Q = (1-q) f + q f(. + d),
//            L = l_q(g(x)) - l_q(-g(x + d)) with l_q(r) = log(1 - q + q e^r), nondecreasing in x (g is, and
//            -g(x + d) is nonincreasing); L(-x) = -L(x), so the reversed pair has the same PLD.
enum class Relation { remove, add, replace };

struct Tails {
    double p_le, p_gt, q_le, q_gt;  // P(L <= l), P(L > l), Q(L <= l), Q(L > l)
};

class NoiseLoss {
public:
    NoiseLoss(const noise::Family& fam, double d, double q, Relation rel)
        : fam_(fam), d_(d), q_(q), remove_(rel == Relation::remove), replace_(rel == Relation::replace) {
        if (!(d > 0.0) || !std::isfinite(d)) throw std::invalid_argument("sensitivity / scale must be finite and > 0");
        if (!(q > 0.0 && q <= 1.0)) throw std::invalid_argument("sampling_rate must lie in (0, 1]");
        if (fam.truncated()) throw std::invalid_argument("truncated families are not supported by the PLD engine");
        if (replace_ && fam_.kind() == noise::Kind::Laplace) replace_max_ = replace_loss(d_);
    }
    NoiseLoss(const noise::Family& fam, double d, double q, bool remove)
        : NoiseLoss(fam, d, q, remove ? Relation::remove : Relation::add) {}

    Tails tails(double l) const noexcept {
        if (replace_) {
            const double xs = replace_sup_le(l);
            const auto [f0, s0] = cdf_sf(xs);
            const auto [fm, sm] = cdf_sf(xs - d_);  // the shifted component of P
            const auto [fp, sp] = cdf_sf(xs + d_);  // the shifted component of Q
            return {(1.0 - q_) * f0 + q_ * fm, (1.0 - q_) * s0 + q_ * sm, (1.0 - q_) * f0 + q_ * fp, (1.0 - q_) * s0 + q_ * sp};
        }
        if (remove_) {
            const double xs = sup_le(rho(l));
            const auto [f0, s0] = cdf_sf(xs);
            const auto [f1, s1] = cdf_sf(xs - d_);
            if (q_ == 1.0) return {f1, s1, f0, s0};
            return {(1.0 - q_) * f0 + q_ * f1, (1.0 - q_) * s0 + q_ * s1, f0, s0};
        }
        const double xi = inf_ge(rho(-l));
        const auto [f0, s0] = cdf_sf(xi);
        const auto [f1, s1] = cdf_sf(xi - d_);
        if (q_ == 1.0) return {s0, f0, s1, f1};
        return {s0, f0, (1.0 - q_) * s0 + q_ * s1, (1.0 - q_) * f0 + q_ * f1};
    }

    // Grid window [ilo, ihi] with P(L <= g_ilo) <= tail and P(L > g_ihi) <= tail, then the cells. Blocks
    // of kBlock grid steps whose P-mass is at most `thin` stay one cell: their (spread or contraction)
    // error is second order in the block width but weighted by that tiny mass, so the tails cost a
    // fraction of the tail evaluations (thin = 0: every cell one grid step, for deep-tail queries).
    TwoSided discretise(double h, double tail, double thin) const {
        const double l_hi = search([&](double l) { return tails(l).p_gt <= tail; }, true);
        const double l_lo = search([&](double l) { return tails(l).p_le <= tail; }, false);
        long ilo = static_cast<long>(std::floor(l_lo / h)), ihi = static_cast<long>(std::ceil(l_hi / h));
        if (ihi <= ilo) ihi = ilo + 1;
        if (ihi - ilo + 1 > kMaxPoints) throw std::domain_error("value_step is too small for this mechanism's loss range");
        constexpr long kBlock = 64;
        const auto at = [&](long i) { return tails(static_cast<double>(i) * h); };
        std::vector<Cell> cells;
        Tails left = at(ilo);
        const Tails first = left;
        for (long b0 = ilo; b0 < ihi; b0 += kBlock) {
            const long b1 = std::min(b0 + kBlock, ihi);
            const Tails right = at(b1);
            const double pmass = mass_between(left, right, true);
            if (pmass <= thin || b1 - b0 == 1) {
                add_cell(cells, b0, b1 - b0, h, left, right);
            } else {
                Tails a = left;
                for (long i = b0; i < b1; ++i) {
                    const Tails c = i + 1 == b1 ? right : at(i + 1);
                    add_cell(cells, i, 1, h, a, c);
                    a = c;
                }
            }
            left = right;
        }
        return from_cells(ilo, ihi - ilo, h, cells, first.p_le, left.p_gt, 0.0);
    }

private:
    // P- (or Q-) mass of (l_a, l_b]: the difference of the smaller tail, so that tiny cell masses keep
    // their relative precision.
    static double mass_between(const Tails& a, const Tails& b, bool p) noexcept {
        const double v = p ? (b.p_le <= 0.5 ? b.p_le - a.p_le : a.p_gt - b.p_gt) : (b.q_le <= 0.5 ? b.q_le - a.q_le : a.q_gt - b.q_gt);
        return std::max(v, 0.0);
    }
    static void add_cell(std::vector<Cell>& cells, long start, long width, double h, const Tails& a, const Tails& b) {
        const double pm = mass_between(a, b, true);
        if (!(pm > 0.0)) return;
        const double qm = mass_between(a, b, false);
        const double g = static_cast<double>(start) * h, wh = static_cast<double>(width) * h;
        if (!(qm > kTinyMass && pm > kTinyMass)) {
            cells.push_back({start, width, pm, 0.0, wh});
            return;
        }
        // off = log(pm / qm) - g, formed without e^{g} (losses can exceed the double range of e^l).
        const double off = std::min(std::max(std::log(pm / qm) - g, 0.0), wh);
        cells.push_back({start, width, pm, off, off});
    }
    // (P(X <= x), P(X > x)) from one log-space tail: the smaller one, the other as its complement.
    std::pair<double, double> cdf_sf(double x) const noexcept {
        if (x == -kInf) return {0.0, 1.0};
        if (x == kInf) return {1.0, 0.0};
        if (x >= 0.0) {
            const double ls = fam_.logsf(x);
            return {-std::expm1(ls), std::exp(ls)};
        }
        const double lc = fam_.logcdf(x);
        return {std::exp(lc), -std::expm1(lc)};
    }
    // g(x) = log f(x - d) - log f(x) = psi(x) - psi(x - d), nondecreasing; psi_diff is accurate for
    // x >= d/2, and g(x) = -g(d - x).
    double g(double x) const noexcept { return x >= 0.5 * d_ ? fam_.psi_diff(x, d_) : -fam_.psi_diff(d_ - x, d_); }
    // l_q(r) = log(1 - q + q e^r).
    double ell(double r) const noexcept {
        if (q_ == 1.0) return r;
        if (r > 30.0) return r + std::log(q_) + std::log1p((1.0 - q_) / q_ * std::exp(-r));
        return std::log1p(q_ * std::expm1(r));
    }
    double replace_loss(double x) const noexcept { return ell(g(x)) - ell(-g(x + d_)); }
    // sup{x : L(x) <= l} for the substitution pair: bracketing by doubling steps from 0, then regula falsi
    // (Illinois) with bisection whenever a step fails to halve the bracket, to adjacent doubles. The
    // Laplace's loss is constant outside [-d, d] (atoms at +-replace_max_), elsewhere L increases strictly.
    double replace_sup_le(double l) const noexcept {
        double lo, hi, flo, fhi;  // L(lo) <= l < L(hi); f = L - l
        if (fam_.kind() == noise::Kind::Laplace) {
            if (l >= replace_max_) return kInf;
            if (l < -replace_max_) return -kInf;
            lo = -d_;
            hi = d_;
        } else {
            const double f0 = replace_loss(0.0) - l;
            double step = 1.0;
            if (f0 <= 0.0) {
                lo = 0.0;
                hi = step;
                while (!(replace_loss(hi) > l)) {
                    lo = hi;
                    step *= 2.0;
                    hi = lo + step;
                    if (!std::isfinite(hi)) return kInf;  // L saturates below l (bounded families)
                }
            } else {
                hi = 0.0;
                lo = -step;
                while (!(replace_loss(lo) <= l)) {
                    hi = lo;
                    step *= 2.0;
                    lo = hi - step;
                    if (!std::isfinite(lo)) return -kInf;
                }
            }
        }
        flo = replace_loss(lo) - l;
        fhi = replace_loss(hi) - l;
        int side = 0;
        for (int it = 0; it < 300; ++it) {
            const double mid = 0.5 * (lo + hi);
            if (!(mid > lo && mid < hi)) break;  // adjacent doubles
            const double width = hi - lo;
            double x = (flo < 0.0 && fhi > 0.0) ? lo - flo * width / (fhi - flo) : mid;
            if (!(x > lo && x < hi)) x = mid;
            const double fx = replace_loss(x) - l;
            if (fx <= 0.0) {
                lo = x;
                flo = fx;
                if (side == -1) fhi *= 0.5;  // Illinois: the other end stayed twice
                side = -1;
            } else {
                hi = x;
                fhi = fx;
                if (side == 1) flo *= 0.5;
                side = 1;
            }
            if (hi - lo > 0.5 * width) {  // too slow a step: bisect once
                const double m = 0.5 * (lo + hi);
                const double fm = replace_loss(m) - l;
                if (fm <= 0.0) {
                    lo = m;
                    flo = fm;
                } else {
                    hi = m;
                    fhi = fm;
                }
                side = 0;
            }
        }
        return lo;
    }
    // g(x) <= rho  <=>  L <= l (remove) with rho = log((e^l - 1 + q) / q); -inf when e^l <= 1 - q.
    double rho(double l) const noexcept {
        if (q_ == 1.0) return l;
        if (l > 30.0) return l + std::log1p(-(1.0 - q_) * std::exp(-l)) - std::log(q_);
        const double v = std::expm1(l) + q_;
        return v > 0.0 ? std::log(v) - std::log(q_) : -kInf;
    }
    double ginv(double r) const noexcept {  // g strictly increasing (all families but the Laplace)
        return r >= 0.0 ? fam_.threshold(d_, r) : d_ - fam_.threshold(d_, -r);
    }
    double sup_le(double r) const noexcept {  // sup{x : g(x) <= r}
        if (r == -kInf) return -kInf;
        if (fam_.kind() == noise::Kind::Laplace) return r < -d_ ? -kInf : r >= d_ ? kInf : 0.5 * (r + d_);
        return ginv(r);
    }
    double inf_ge(double r) const noexcept {  // inf{x : g(x) >= r}
        if (r == -kInf) return -kInf;
        if (fam_.kind() == noise::Kind::Laplace) return r <= -d_ ? -kInf : r > d_ ? kInf : 0.5 * (r + d_);
        return ginv(r);
    }
    // Loss where ok() switches: upper = true finds a small l with ok(l) (ok monotone true above),
    // upper = false a large l with ok(l) (ok monotone true below). The bracket grows from 0 by doubling
    // steps in the direction of the switch, so distributions far from 0 are found too.
    template <class Ok>
    static double search(Ok ok, bool upper) {
        const double toward_ok = upper ? 1.0 : -1.0;
        double good, bad, step;
        int grow = 0;
        if (ok(0.0)) {  // the switch lies on the failing side of 0
            good = 0.0;
            step = -toward_ok;
            bad = step;
            while (ok(bad)) {
                good = bad;
                step *= 2.0;
                bad = good + step;
                if (++grow > 1100) throw std::domain_error("the loss distribution's tails could not be bracketed");
            }
        } else {
            bad = 0.0;
            step = toward_ok;
            good = step;
            while (!ok(good)) {
                bad = good;
                step *= 2.0;
                good = bad + step;
                if (++grow > 1100) throw std::domain_error("the loss distribution's tails could not be bracketed");
            }
        }
        for (int it = 0; it < 200 && std::fabs(good - bad) > 1e-9 * (1.0 + std::fabs(good)); ++it) {
            const double mid = 0.5 * (good + bad);
            (ok(mid) ? good : bad) = mid;
        }
        return good;
    }

    noise::Family fam_;
    double d_, q_;
    bool remove_, replace_;
    double replace_max_ = kInf;  // the Laplace's largest loss under substitution
};

// ----- composition --------------------------------------------------------------------------------------
struct Component {
    const TwoSided* pld;
    long count;
};

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

struct Composed {
    Side pess, opt;
    double h = 0.0;                      // grid step of the result
    double tau_low = 0.0, tau_up = 0.0;  // pessimistic side: mass below / above the window
    double tau_opt = 0.0;                // optimistic side: mass outside the window
    double fp = 0.0;                     // bound on the FFT's rounding of any tail sum (added to pess's top)
    double fp_opt = 0.0;                 // optimistic side: the same plus the mass of negative entries
};

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

// FFT plans by length, owned by one composition (the two levels often share a length).
// Buffers of circular_compose, kept across the compositions of one query (fresh multi-megabyte
// allocations cost page faults comparable to a transform).
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
struct Scratch {
    std::vector<fft::cplx> buf;
    std::vector<std::vector<fft::cplx>> w;
    std::unique_ptr<FreqState[]> state;  // uninitialised beyond what the first part writes
    std::size_t state_size = 0;
};

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
                    const double xf = M_PI * static_cast<double>(fm) / static_cast<double>(N);
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
    double lo = kInf, hi = -kInf;
    for (std::size_t o = 0; o < n_out; ++o) {
        cgfs.emplace_back(tp, counts[o]);
        const auto [l, r] = window(cgfs.back(), std::log(tail));
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
        out.tau_low = std::exp(cgf.log_tail(true, below, false));
        out.tau_up = std::exp(cgf.log_tail(true, above, true));
        out.tau_opt = std::exp(cgf.log_tail(false, below, false)) + std::exp(cgf.log_tail(false, above, true));
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

// ----- queries ------------------------------------------------------------------------------------------
// delta(eps) = sum_i p_i (1 - e^{eps - l_i})_+ + inf, in O(1) per query from suffix sums; p may hold one
// negative atom (the optimistic side's aliasing allowance), so the search for epsilon uses the running
// minimum of delta over the grid, which gives inf{eps : delta(eps) <= target} either way.
class Profile {
public:
    // sign = +1 for an upper bound, -1 for a lower bound: the rounding of A_j - e^{eps - l_j} C_j (a few
    // ulps of its terms) is added or subtracted.
    // Queries have eps >= 0, where losses <= 0 weigh nothing: only the grid points l_j > 0 are kept (and
    // the mass below the window, extra_low, counts only if the window starts above 0).
    Profile(const Side& s, double h, double extra_low, double extra_inf, double neg_top, double sign)
        : h_(h), decay_(std::exp(-h)), offset_(std::max(s.offset, 1L)), inf_(s.inf + extra_inf) {
        const std::size_t skip = static_cast<std::size_t>(std::min<long>(offset_ - s.offset, static_cast<long>(s.p.size())));
        const std::size_t n = s.p.size() - skip;
        A_.assign(n + 1, 0.0);
        C_.assign(n + 1, 0.0);
        for (std::size_t j = n; j-- > 0;) {
            double pj = s.p[skip + j];
            if (j == 0 && skip == 0) pj += extra_low;
            if (j + 1 == n) pj -= neg_top;
            A_[j] = A_[j + 1] + pj;
            C_[j] = pj + decay_ * C_[j + 1];
        }
        constexpr double kRound = 64.0 * std::numeric_limits<double>::epsilon();
        for (std::size_t j = 0; j < n; ++j) A_[j] += sign * kRound * (std::fabs(A_[j]) + std::fabs(C_[j]) + std::fabs(inf_));
        run_min_.assign(n, 0.0);
        double m = kInf;
        for (std::size_t j = 0; j < n; ++j) {
            m = std::min(m, at_grid(j));
            run_min_[j] = m;
        }
    }

    double delta(double eps) const noexcept {
        const std::size_t n = run_min_.size();
        const double x = eps / h_ - static_cast<double>(offset_);  // eps in grid units from l_0
        double j;
        if (x <= 0.0) j = 0.0;
        else j = std::ceil(x);
        if (j >= static_cast<double>(n)) return std::max(inf_, 0.0);
        const std::size_t k = static_cast<std::size_t>(j);
        const double v = A_[k] + inf_ - std::exp(eps - l(k)) * C_[k];
        return std::max(v, 0.0);
    }

    // inf{eps >= 0 : delta(eps) <= target}.
    double epsilon(double target) const noexcept {
        const std::size_t n = run_min_.size();
        if (n == 0 || run_min_[n - 1] > target) return inf_ <= target ? (n ? l(n - 1) : 0.0) : kInf;
        const std::size_t j = static_cast<std::size_t>(std::lower_bound(run_min_.begin(), run_min_.end(), target, std::greater<double>()) - run_min_.begin());
        // First crossing lies in (l_{j-1}, l_j] (j = 0: at or below l_0): A_j + inf - e^{eps - l_j} C_j = target.
        // If the left side is already <= target at the cell's lower end (num <= 0), that end is it.
        const double lower_end = j > 0 ? l(j - 1) : 0.0;
        const double num = A_[j] + inf_ - target;
        double eps = lower_end;
        if (num > 0.0) eps = C_[j] > 0.0 ? l(j) + std::log(num / C_[j]) : l(j);
        eps = std::min(std::max(eps, lower_end), l(j));
        return std::max(eps, 0.0);
    }

    // Calls visit(eps, delta(eps)) at every eps >= 0 where a function of the form a - b delta(eps) - c e^eps
    // or e^{-eps} (a - delta(eps)) can attain its supremum: in each cell (l_{j-1}, l_j] delta is
    // max(0, A_j + inf - C_j e^{eps - l_j}), so such a function is monotone there except where the clamp
    // at 0 starts; the candidates are 0, the grid points, the zero of each cell, and +inf's limit l_top.
    template <class Visit>
    void sup_candidates(Visit visit) const {
        visit(0.0, delta(0.0));
        const std::size_t n = run_min_.size();
        for (std::size_t j = 0; j < n; ++j) {
            const double lj = l(j), lo = j ? l(j - 1) : 0.0;
            visit(lj, std::max(at_grid(j), 0.0));
            const double num = A_[j] + inf_;
            if (C_[j] > 0.0 && num > 0.0) {
                const double z = lj + std::log(num / C_[j]);  // A_j + inf - C_j e^{z - l_j} = 0
                if (z > lo && z < lj && z > 0.0) visit(z, 0.0);
            }
        }
    }

private:
    double l(std::size_t j) const noexcept { return static_cast<double>(offset_ + static_cast<long>(j)) * h_; }
    double at_grid(std::size_t j) const noexcept {  // delta(l_j)
        return A_[j + 1] + inf_ - decay_ * C_[j + 1];
    }

    double h_, decay_;
    long offset_;
    double inf_;
    std::vector<double> A_, C_, run_min_;
};

// The trade-off function (Dong, Roth and Su 2022) of the pair whose profile is pq, with qp the profile of
// the reversed pair: beta(alpha) = sup_{eps >= 0} max(0, 1 - delta_pq(eps) - e^eps alpha,
// e^{-eps} (1 - delta_qp(eps) - alpha)), by Neyman-Pearson duality (the second term is the first one at
// -eps, rewritten with delta_pq(-eps) = 1 - e^{-eps} + e^{-eps} delta_qp(eps)). It decreases in delta, so
// upper profiles give a lower bound on beta and lower profiles an upper bound; the supremum over the
// candidate points is exact for each piecewise profile.
inline double tradeoff(const Profile& pq, const Profile& qp, double alpha) {
    double best = 0.0;
    pq.sup_candidates([&](double e, double d) { best = std::max(best, 1.0 - d - std::exp(e) * alpha); });
    qp.sup_candidates([&](double e, double d) { best = std::max(best, std::exp(-e) * (1.0 - d - alpha)); });
    return std::min(best, 1.0 - alpha);
}

// Upper and lower profiles of one composed direction.
struct Bounds {
    Profile upper, lower;
    explicit Bounds(const Composed& c)
        : upper(c.pess, c.h, c.tau_low, c.tau_up, 0.0, 1.0), lower(c.opt, c.h, 0.0, 0.0, c.tau_opt + c.fp_opt, -1.0) {}
};

}  // namespace pydp::accounting::pld
