// Queries on a composed PLD: delta(eps), epsilon(delta) and the trade-off function, each from the
// pessimistic side (an upper bound) and the optimistic side (a lower bound), so every answer is a
// certified interval.
//
// What it computes: Profile holds suffix sums A_j = sum_{i >= j} p_i and C_j = sum_{i >= j} p_i e^{-(l_i -
// l_j)} of one side (only the losses above 0 matter for eps >= 0), so that delta(eps) = A_j + inf -
// e^{eps - l_j} C_j in the cell of eps, O(1) per query; epsilon(delta) inverts it with a binary search on
// the running minimum over the grid (the optimistic side may hold one negative atom) and a closed form in
// the cell. tradeoff() evaluates beta(alpha) = sup_eps max(0, 1 - delta(eps) - e^eps alpha, ...) by
// Neyman-Pearson duality (Dong, Roth and Su 2022) at the finitely many candidate points where the
// supremum of a piecewise profile can lie.
// Why it is certified: delta(eps) is linear in the pmf with nonnegative weights, so the two sides' values
// bracket the exact one; the rounding of the suffix sums (formed in double-double: a few ulps of their
// terms) and the error of the log-space tails the masses come from (Side::log_err) are added on the upper
// and subtracted on the lower side; epsilon and beta are monotone in delta, so the bracket carries over.
// How it is checked: tests/accounting/test_pld.py (delta, epsilon and trade-off intervals contain exact GDP and
// mpmath references; upper never below lower; monotone in k, noise and sampling rate) and
// csrc/tests/test_pld.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "pydp/accounting/pld_compose.hpp"
#include "pydp/accounting/pld_grid.hpp"
#include "pydp/special/double_double.hpp"

namespace pydp::accounting::pld {

// delta(eps) = sum_i p_i (1 - e^{eps - l_i})_+ + inf, in O(1) per query from suffix sums; p may hold one
// negative atom (the optimistic side's aliasing allowance), so the search for epsilon uses the running
// minimum of delta over the grid, which gives inf{eps : delta(eps) <= target} either way.
class Profile {
public:
    // sign = +1 for an upper bound, -1 for a lower bound: the rounding of A_j - e^{eps - l_j} C_j (a few
    // ulps of its terms) and the error of the side's masses (Side::log_err) are added or subtracted.
    // Queries have eps >= 0, where losses <= 0 weigh nothing: only the grid points l_j > 0 are kept (and
    // the mass below the window, extra_low, counts only if the window starts above 0).
    Profile(const Side& s, double h, double extra_low, double extra_inf, double neg_top, double sign)
        : h_(h), decay_(std::exp(-h)), offset_(std::max(s.offset, 1L)), inf_(s.inf + extra_inf) {
        const std::size_t skip = static_cast<std::size_t>(std::min<long>(offset_ - s.offset, static_cast<long>(s.p.size())));
        const std::size_t n = s.p.size() - skip;
        A_.assign(n + 1, 0.0);
        C_.assign(n + 1, 0.0);
        // The suffix sums in double-double: a running double sum of n terms drifts by up to n ulps (and
        // does, systematically, over many small terms of one size), the recurrence C_j = p_j + e^{-h} C_{j+1}
        // by about 2 / h ulps; in double-double (e^{-h} as 1 + expm1(-h)) both are exact to a few ulps.
        const special::DD decay = special::quick_two_sum(1.0, std::expm1(-h));
        special::DD a{0.0, 0.0}, c{0.0, 0.0};
        for (std::size_t j = n; j-- > 0;) {
            double pj = s.p[skip + j];
            if (j == 0 && skip == 0) pj += extra_low;
            if (j + 1 == n) pj -= neg_top;
            a = special::dd_add(a, {pj, 0.0});
            c = special::dd_add({pj, 0.0}, special::dd_mul(decay, c));
            A_[j] = a.hi + a.lo;
            C_[j] = c.hi + c.lo;
        }
        constexpr double kRound = 64.0 * std::numeric_limits<double>::epsilon();
        const double err = s.log_err * 0.5 * std::numeric_limits<double>::epsilon();
        const auto mlogm = [](double m) { return m > 0.0 ? m * std::fabs(std::log(m)) : 0.0; };
        // m |log m| is unimodal on [0, 1] (peak 1/e at 1/e) and increasing above 1: its maximum over [a, b]
        // is at a, at b or at the point of [a, b] nearest 1/e.
        const auto max_mlogm = [&](double a, double b) {
            if (a > b) std::swap(a, b);
            return std::max({mlogm(a), mlogm(b), mlogm(std::min(std::max(1.0 / std::exp(1.0), a), b))});
        };
        // Point j - 1 of the profile (the grid point below l_0 for j = 0, when the side holds it): on the
        // cell (l_{j-1}, l_j] the profile interpolates its values at both ends, and the computed P-mass above
        // g_{j-1} (the tail whose error the value at l_{j-1} carries) lies between A_j and A_{j-1} (the cell
        // splits its mass between j - 1 and j); likewise the Q-mass. When nearly all the mass sits at or
        // below l_{j-1} (a nearly non-distinguishing pair: A_j ~ 0 while the tails are ~ 1/2), only the
        // bound at A_{j-1} covers the error of the tails.
        const std::vector<double> A0 = A_, C0 = C_;  // the sums before the allowances below
        double a_below = A0[0], c_below = C0[0];
        if (skip > 0 && n > 0) {
            a_below = A0[0] + s.p[skip - 1];
            c_below = s.p[skip - 1] + std::exp(-h) * C0[0];
        }
        for (std::size_t j = 0; j < n; ++j) {
            // The Q-mass above l_j is e^{-l_j} C_j (|log| = l_j - log C_j); above l_{j-1} it is
            // e^{-l_{j-1}} C_{j-1}, entering delta on the cell with the weight e^eps <= e^h e^{l_{j-1}}.
            const double cj = std::fabs(C_[j]);
            const double ap = std::fabs(j > 0 ? A0[j - 1] : a_below);
            const double cp = std::fabs(j > 0 ? C0[j - 1] : c_below);
            const double lj = l(j), lp = lj - h;
            const double qj = std::exp(-lj) * cj, qp = std::exp(-lp) * cp;
            const double q_at_j = cj > 0.0 ? cj * std::fabs(std::log(cj) - lj) : 0.0;
            const double q_at_p = cp > 0.0 ? std::exp(h) * cp * std::fabs(std::log(cp) - lp) : 0.0;
            double q_err = std::max(q_at_j, q_at_p);
            const double peak = 1.0 / std::exp(1.0);
            if (std::min(qj, qp) < peak && peak < std::max(qj, qp)) q_err = std::max(q_err, std::exp(lj) * peak);
            A_[j] += sign * (kRound * (std::fabs(A_[j]) + cj + std::fabs(inf_)) +
                             err * (max_mlogm(std::fabs(A_[j]), ap) + q_err + mlogm(std::fabs(inf_))));
        }
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
        if (j >= static_cast<double>(n)) return std::min(std::max(inf_, 0.0), 1.0);
        const std::size_t k = static_cast<std::size_t>(j);
        const double v = A_[k] + inf_ - std::exp(eps - l(k)) * C_[k];
        return std::min(std::max(v, 0.0), 1.0);  // delta <= 1 for every pair
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
