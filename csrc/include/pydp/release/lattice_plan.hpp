// The calibration of the lattice releases (Subbotin_r and Logistic tables, table.hpp): the grid, the
// weight bits and the smallest integer scale s (grid steps) that meets (epsilon, delta), or, for the
// pure-DP Logistic (delta = 0, tables with the geometric tail), whose log-ratio bound at the charged shift
// is at most epsilon. pydp_core.release.calibrate_subbotin_release / calibrate_logistic_release and the
// C ABI's pydp_calibrate_lattice_release call these same functions, so the plans cannot diverge.
//
// - The grid: one unit of scale spans at most 2^(kLatticeMaxBits + 1) grid steps, or, while the
//   sensitivity spans fewer than 2^kMinShiftBits steps (small epsilon), up to a table of about
//   kTableBudget entries. The automatic grid is 16 bits, then coarser grids when the scale exceeds the
//   continuous one by kAutoGridSlack (the table's dynamic range binds); timing-stable: the finest of
//   kStableGridBits whose table has at most kStableTableEntries entries (first-level cache resident).
// - The search: a bracket from the continuous scale, then a safeguarded secant search (bisection when a
//   step does not halve the bracket); s is checked to pass and s - 1 to fail, else a status.
// docs/release.md, sections 4 and 6, has the proofs.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pydp/release/grid_plan.hpp"
#include "pydp/release/table.hpp"

namespace pydp::release {

constexpr int kLatticeMaxBits = 16;
constexpr double kTableBudget = 0x1p22;
constexpr double kMinShiftBits = 12.0;
// The timing-stable sampler's total-variation distance to the exact law: 2^-129 (log of it).
inline double log_stable_tv() noexcept { return std::log(0x1p-129); }
constexpr int kAutoGridBits = 16;
constexpr int kCoarserGridBits[] = {12, 8, 4};
constexpr double kAutoGridSlack = 1e-3;
constexpr int kStableGridBits[] = {8, 7, 6, 5, 4, 3, 2, 1, 0};
constexpr std::size_t kStableTableEntries = 1536;
// The pure-DP Logistic table stops at the last weight >= 2^(P - kLatticeTailBits); the geometric tail follows.
constexpr int kLatticeTailBits = 12;

struct Lattice {
    LatticeKind kind;
    double r;  // 1 for the Logistic
    bool timing_stable;
    bool tail = false;  // the pure-DP Logistic: tables with the geometric tail, calibrated at delta = 0
};

// The integral of w over (0, inf) in units of s: r^(1/r - 1) Gamma(1/r) (Subbotin), 2 (Logistic).
inline double lattice_mass_per_scale(const Lattice& L) {
    if (L.kind == LatticeKind::Logistic) return 2.0;
    int sign = 0;
    return std::exp((1.0 / L.r - 1.0) * std::log(L.r) + lgamma_r(1.0 / L.r, &sign));
}

// The grid's max_bits for a table of about kTableBudget entries at most.
inline int lattice_table_max_bits(const Lattice& L) {
    const double length = L.kind == LatticeKind::Logistic ? 31.0 : std::pow(31.0 * L.r, 1.0 / L.r);
    return std::max(kLatticeMaxBits, std::min(30, static_cast<int>(std::floor(std::log2(kTableBudget / length))) - 1));
}

// The table of the integer scale s with the largest weight bits P <= 62 whose total stays below 2^63
// (std::overflow_error when none does; std::length_error when the table would be too long).
struct BuiltTable {
    std::unique_ptr<LatticeTable> table;
    int bits;
};
inline BuiltTable build_lattice_table(const Lattice& L, std::uint64_t s) {
    const double est = 1.0 + 2.0 * static_cast<double>(s) * lattice_mass_per_scale(L) * 1.01 + 4.0;
    int bits = std::max(1, std::min(62, static_cast<int>(std::floor(62.0 - std::log2(est)))));
    const int least = L.tail ? kLatticeTailBits + 1 : 1;
    bits = std::max(bits, least);
    for (;;) {
        try {
            return {std::make_unique<LatticeTable>(L.kind, L.r, static_cast<double>(s), bits, kMaxTableHalf,
                                                   L.tail ? kLatticeTailBits : 0),
                    bits};
        } catch (const std::overflow_error&) {
            if (bits == least) throw;
            --bits;
        }
    }
}

// An upper bound on log delta(eps) of the table for the shift k, with the timing-stable charge
// (1 + e^eps) 2^-129 added.
inline double lattice_log_delta(const LatticeTable& t, double eps, std::uint64_t k, bool timing_stable) {
    const double ld = t.log_delta(eps, k);
    if (!timing_stable) return ld;
    const double inf = std::numeric_limits<double>::infinity();
    const double extra = eps < 700.0 ? std::log1p(std::exp(eps)) + log_stable_tv() : inf;
    return ld == -inf ? extra : std::max(ld, extra) + std::log1p(std::exp(-std::fabs(ld - extra)));
}

struct LatticePlan {
    PlanStatus status = PlanStatus::Ok;
    const char* message = "";
    std::uint64_t s = 0;
    int weight_bits = 0;
    int grid_exponent = 0;
    std::uint64_t shift = 0;
    double delta_achieved = 0.0;
    double epsilon_achieved = 0.0;  // the pure-DP Logistic's certified log-ratio bound at the shift
    std::unique_ptr<LatticeTable> table;  // the verified table of the plan

    double scale() const noexcept { return static_cast<double>(s) * std::ldexp(1.0, grid_exponent); }
};

inline LatticePlan lattice_failure(PlanStatus st, const char* msg) {
    LatticePlan p;
    p.status = st;
    p.message = msg;
    return p;
}

constexpr const char* kLatticeOverflowMessage = "lattice calibration: the scale would exceed 2^40 grid steps";
constexpr const char* kLatticeGridMessage = "the noise scale is outside the range a float64 grid can serve";

// The smallest integer s >= 1 with excess(s) <= 0 that the search verifies: a bracket from start, then a
// safeguarded secant search; 0 with *status set when it exceeds 2^40 or cannot be verified.
template <class Excess>
std::uint64_t smallest_passing(double start, Excess&& excess, PlanStatus* status) {
    std::vector<std::pair<std::uint64_t, double>> values;  // every evaluated (s, excess)
    auto f = [&](std::uint64_t s) {
        for (const auto& v : values)
            if (v.first == s) return v.second;
        const double x = excess(s);
        values.emplace_back(s, x);
        return x;
    };
    if (!(start <= 0x1p40)) {
        *status = PlanStatus::ScaleOverflow;
        return 0;
    }
    std::uint64_t s = start >= 1.0 ? static_cast<std::uint64_t>(start) : 1;
    std::uint64_t step = std::max<std::uint64_t>(1, s / 512), lo = 0, hi = 0;
    if (f(s) <= 0) {  // bracket [lo, hi]: lo fails (or is 0), hi passes
        hi = s;
        lo = hi > step ? hi - step : 0;
        while (lo > 0 && f(lo) <= 0) {
            hi = lo;
            step *= 2;
            lo = hi > step ? hi - step : 0;
        }
    } else {
        lo = s;
        hi = lo + step;
        while (f(hi) > 0) {
            lo = hi;
            step *= 2;
            hi = lo + step;
            if (hi > (std::uint64_t{1} << 40)) {
                *status = PlanStatus::ScaleOverflow;
                return 0;
            }
        }
    }
    bool secant = true;
    while (hi - lo > 1) {
        std::uint64_t t = lo + (hi - lo) / 2;
        if (secant && lo > 0) {
            const double flo = f(lo), fhi = f(hi);  // cached: already evaluated
            if (std::isfinite(flo) && std::isfinite(fhi)) {
                const double guess = std::nearbyint(static_cast<double>(lo) + static_cast<double>(hi - lo) * flo / (flo - fhi));
                t = static_cast<std::uint64_t>(std::min(std::max(guess, static_cast<double>(lo + 1)), static_cast<double>(hi - 1)));
            }
        }
        const std::uint64_t width = hi - lo;
        (f(t) <= 0 ? hi : lo) = t;
        secant = 2 * (hi - lo) <= width;  // fall back to bisection when the secant step did not halve
    }
    if (hi == 0 || !(f(hi) <= 0 && (hi == 1 || f(hi - 1) > 0))) {
        *status = PlanStatus::VerifyFailed;
        return 0;
    }
    return hi;
}

// The grid exponent e for the continuous scale s0 (refine: a finer grid for small epsilon, within the
// table budget); false outside the range a float64 grid serves.
inline bool lattice_grid(const Lattice& L, double sens, int grid_bits, double s0, bool refine, int* e) {
    if (!grid_exponent(s0, sens, grid_bits, kLatticeMaxBits, e)) return false;
    const double short_bits = kMinShiftBits - (std::log2(sens) - *e);
    if (short_bits > 0 && refine) {
        int e2 = 0;
        if (!grid_exponent(s0, sens, grid_bits, lattice_table_max_bits(L), &e2)) return false;
        *e = std::max(e2, *e - static_cast<int>(std::ceil(short_bits)));
    }
    return true;
}

// The plan on the grid of (grid_bits, refine) for the continuous scale s0. With L.tail a table passes when
// its log-ratio bound at the shift is at most eps, and the search starts at ceil(k / eps), which the deep
// tail alone needs.
inline LatticePlan lattice_plan_at(const Lattice& L, double eps, double delta, double sens, int grid_bits, double s0,
                                   bool refine) {
    int e = 0;
    if (!lattice_grid(L, sens, grid_bits, s0, refine, &e)) return lattice_failure(PlanStatus::Invalid, kLatticeGridMessage);
    const std::uint64_t k = grid_shift(sens, e);
    const double log_target = L.tail ? 0.0 : std::log(delta) + std::log1p(-kPlanDeltaMargin);
    auto excess = [&](std::uint64_t s) {
        const BuiltTable bt = build_lattice_table(L, s);
        return L.tail ? bt.table->log_ratio_bound(k) - eps : lattice_log_delta(*bt.table, eps, k, L.timing_stable) - log_target;
    };
    const double start = L.tail ? std::max(1.0, std::ceil(static_cast<double>(k) / eps))
                                : std::nearbyint(s0 / sens * static_cast<double>(k));  // ties to even, as Python's round
    PlanStatus st = PlanStatus::Ok;
    const std::uint64_t s = smallest_passing(start, excess, &st);
    if (st == PlanStatus::ScaleOverflow) return lattice_failure(st, kLatticeOverflowMessage);
    if (st != PlanStatus::Ok) return lattice_failure(st, "lattice calibration could not be verified");
    BuiltTable bt = build_lattice_table(L, s);
    LatticePlan p;
    p.s = s, p.weight_bits = bt.bits, p.grid_exponent = e, p.shift = k;
    p.delta_achieved = L.tail ? 0.0 : std::exp(lattice_log_delta(*bt.table, eps, k, L.timing_stable));
    if (L.tail) p.epsilon_achieved = bt.table->log_ratio_bound(k);
    p.table = std::move(bt.table);
    return p;
}

// The plan on the grid grid_bits asks for (-1: the automatic grid), for arguments already checked and the
// continuous scale s0 of the family at (eps, delta, sens). Tables too long throw std::length_error.
inline LatticePlan lattice_plan(const Lattice& L, double eps, double delta, double sens, int grid_bits, double s0) {
    if (grid_bits >= 0) return lattice_plan_at(L, eps, delta, sens, grid_bits, s0, true);
    if (L.tail)  // the automatic grid is 16 bits (no coarser grid: nothing truncates the pure law)
        return lattice_plan_at(L, eps, delta, sens, kAutoGridBits, s0, true);
    if (L.timing_stable) {
        for (int bits : kStableGridBits) {
            LatticePlan p = lattice_plan_at(L, eps, delta, sens, bits, s0, false);
            if (p.status != PlanStatus::Ok || p.table->half_size() + 1 <= kStableTableEntries) return p;
        }
        return lattice_failure(PlanStatus::VerifyFailed, "timing-stable lattice calibration: no grid keeps the table "
                                                         "within 1536 entries (give grid_bits to choose the grid)");
    }
    LatticePlan best = lattice_plan_at(L, eps, delta, sens, kAutoGridBits, s0, true);
    if (best.status == PlanStatus::Ok && best.scale() > s0 * (1.0 + kAutoGridSlack)) {
        for (int bits : kCoarserGridBits) {
            LatticePlan other = lattice_plan_at(L, eps, delta, sens, bits, s0, true);
            if (other.status != PlanStatus::Ok) return other;
            if (other.scale() < best.scale()) best = std::move(other);
        }
    }
    return best;
}

}  // namespace pydp::release
