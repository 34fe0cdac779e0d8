// The privacy loss of additive noise mechanisms and their discretisation onto the PLD grid (NoiseLoss):
// a log-concave noise family (noise/families.hpp) at standardised shift d = sensitivity / scale, under
// add, remove or substitution of one record, with Poisson sampling rate q.
//
// What it computes: the four tails P(L <= l), P(L > l), Q(L <= l), Q(L > l) of the loss L = log(dP/dQ)
// at any l, from the family's log-space tails at the point where the (monotone) loss crosses l, and from
// them the exact P- and Q-mass of every grid cell, handed to from_cells (pld_grid.hpp). The grid window
// is found by bracketing the tails; cells whose P-mass is at most `thin` are merged into blocks of 64 grid
// steps (their second-order error is weighted by that tiny mass).
// Why it is exact: log-concavity makes g(x) = log f(x - d) / f(x) nondecreasing, so the loss is monotone
// in x and each tail of L is one tail of the noise at one point; that point is a closed form (the
// Laplace, Gaussian and Logistic thresholds), the Subbotin threshold solver's, or (substitution) a
// bracketed root found to adjacent doubles. Every mass is formed as the difference of the smaller tail,
// keeping its relative precision.
// How it is checked: tests/accounting/test_pld.py and tests/accounting/test_pld_sampling.py (single mechanisms, sampled and
// under substitution, against 30-digit mpmath integrals and dp-accounting), csrc/tests/test_pld.cpp (the
// Laplace's two-sided bounds against its closed-form pure-DP profile).
#pragma once
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pydp/accounting/pld_grid.hpp"
#include "pydp/noise/families.hpp"

namespace pydp::accounting::pld {

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
        TwoSided out = from_cells(ilo, ihi - ilo, h, cells, first.p_le, left.p_gt, 0.0);
        out.pess.log_err = out.opt.log_err = tail_log_err();
        return out;
    }

    // Relative error of the tails, per u |log tail| (Side::log_err): the point where a tail is taken is
    // exact to a few (<= 4) ulps (the closed-form thresholds, solvers run to adjacent doubles), which
    // moves log T(x) by |x d log T / dx| <= r |log T| (asymptotically, for a tail ~ exp(-x^r / r)) times
    // that rounding, and the log-space tail itself is exact to a few ulps of |log T|; 4 r + 8 covers both
    // with room. Every sum of cells telescopes to a difference of two computed tails, so the bound holds
    // for the masses above and below every loss (mixtures under sampling: the weights only lower |log|).
    double tail_log_err() const noexcept { return 4.0 * fam_.r() + 8.0; }

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
        // Bisection to a tolerance relative to the bracket's values: the loss range of a mechanism of
        // shift d has width ~ d, down to d ~ 1e-300 at a huge scale, so an absolute tolerance would leave
        // a window of ~1e-9 / h grid points. Halving from the first bracket (width <= 2^1100) down to that
        // relative tolerance, or to adjacent doubles near 0, takes at most ~1100 + 1075 steps.
        for (int it = 0; it < 2200 && std::fabs(good - bad) > 1e-9 * std::max(std::fabs(good), std::fabs(bad)); ++it) {
            const double mid = 0.5 * (good + bad);
            if (!(mid != good && mid != bad)) break;  // adjacent doubles
            (ok(mid) ? good : bad) = mid;
        }
        return good;
    }

    noise::Family fam_;
    double d_, q_;
    bool remove_, replace_;
    double replace_max_ = kInf;  // the Laplace's largest loss under substitution
};

}  // namespace pydp::accounting::pld
