// Exact per-group sums of quantized row terms for differentially private aggregation (docs/aggregate.md,
// exact sums; the numpy reference is pydp_core/aggregation/aggregations.py: quantized_terms, limb_sums,
// limbs_to_totals, on_grid). A row's term t (x, x - m or (x - m)^2 - b of its clamped value x) is clipped
// to [-b, b] and rounded to the integer q = rint(t 2^-e_gamma), |q| <= 2^52; per group the three 18-bit
// limbs of q + 2^52 are summed in int64 (exact for fewer than 2^45 rows), so partial sums of disjoint row
// sets add up exactly. The release then needs the exact total, rounded to the grid 2^e_grid (ties to even).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pydp/parallel.hpp"

namespace pydp::aggregation {

enum class Term : int { Sum = 0, CentredSum = 1, CentredSquares = 2 };
inline constexpr int kLimbBits = 18;

// One term of a column: its kind, its bound b and its unit 2^e_gamma.
struct TermSpec {
    Term term;
    double b;
    int e_gamma;
};

// For each term j: limbs[(3 j + k) n_groups + groups[i]] += limb k of q + 2^52 for the term of
// values[rows[i]] clamped to [lo, hi]; limbs must hold zeros on entry. The arithmetic is numpy's, operation
// by operation (no contraction). The column's values are gathered once for all its terms, prefetched ahead.
inline void component_limbs_serial(const std::int64_t* groups, const double* values, const std::int64_t* rows,
                                   std::size_t m, double lo, double hi, const TermSpec* terms, std::size_t nterms,
                                   std::size_t n_groups, std::int64_t* limbs) {
    const double mid = (lo + hi) / 2.0;
    const std::uint64_t mask = (std::uint64_t{1} << kLimbBits) - 1;
    constexpr std::size_t kAhead = 16;
    for (std::size_t i = 0; i < m; ++i) {
#if defined(__GNUC__) || defined(__clang__)
        if (i + kAhead < m) __builtin_prefetch(values + rows[i + kAhead]);
#endif
        const std::int64_t g = groups[i];
        if (g < 0 || static_cast<std::size_t>(g) >= n_groups) throw std::invalid_argument("group code out of range");
        const double x = std::min(std::max(values[rows[i]], lo), hi);
        const double d = x - mid;
        for (std::size_t j = 0; j < nterms; ++j) {
            const double b = terms[j].b;
            double t = terms[j].term == Term::Sum ? x : terms[j].term == Term::CentredSum ? d : d * d - b;
            t = std::min(std::max(t, -b), b);
            const double q = std::nearbyint(std::ldexp(t, -terms[j].e_gamma));
            if (!(std::fabs(q) <= 4503599627370496.0)) throw std::invalid_argument("a term exceeds 2^52 units");
            const std::uint64_t u = static_cast<std::uint64_t>(static_cast<std::int64_t>(q) + (std::int64_t{1} << 52));
            std::int64_t* out = limbs + 3 * j * n_groups + static_cast<std::size_t>(g);
            for (int k = 0; k < 3; ++k) out[static_cast<std::size_t>(k) * n_groups] += static_cast<std::int64_t>((u >> (kLimbBits * k)) & mask);
        }
    }
}

// component_limbs_serial over contiguous row ranges in parallel, each into its own limb array, added up
// after (integer sums: the result does not depend on the thread count).
inline void component_limbs(const std::int64_t* groups, const double* values, const std::int64_t* rows, std::size_t m,
                            double lo, double hi, const TermSpec* terms, std::size_t nterms, std::size_t n_groups,
                            std::int64_t* limbs, unsigned threads) {
    if (!(lo <= hi)) throw std::invalid_argument("bounds: low <= high");
    for (std::size_t j = 0; j < nterms; ++j)
        if (!(terms[j].b >= 0.0)) throw std::invalid_argument("term bounds must be >= 0");
    const std::size_t width = 3 * nterms * n_groups;
    const unsigned nt = std::max(1u, std::min(threads, 64u));
    const std::size_t span = std::max<std::size_t>(std::size_t{1} << 18, (m + nt - 1) / nt);
    const std::size_t nranges = m == 0 ? 0 : (m + span - 1) / span;
    if (nranges <= 1) {
        component_limbs_serial(groups, values, rows, m, lo, hi, terms, nterms, n_groups, limbs);
        return;
    }
    std::vector<std::vector<std::int64_t>> part(nranges - 1, std::vector<std::int64_t>(width, 0));
    parallel_chunks(m, span, nt, [&](std::size_t c, std::size_t i0, std::size_t i1) {
        std::int64_t* out = c == 0 ? limbs : part[c - 1].data();
        component_limbs_serial(groups + i0, values, rows + i0, i1 - i0, lo, hi, terms, nterms, n_groups, out);
    });
    for (const auto& p : part)
        for (std::size_t w = 0; w < width; ++w) limbs[w] += p[w];
}

// out[g] = the exact total l0 + l1 2^18 + l2 2^36 - rows 2^52 (units 2^e_gamma) rounded to the grid 2^e_grid,
// ties to even, as a double; |index| > 2^52 grid steps is an error.
inline void limbs_on_grid(const std::int64_t* l0, const std::int64_t* l1, const std::int64_t* l2, const std::int64_t* rows,
                          std::size_t n, int e_gamma, int e_grid, double* out) {
    __extension__ typedef __int128 i128;
    const i128 max_index = static_cast<i128>(1) << 52;
    const int shift = e_grid - e_gamma;
    for (std::size_t g = 0; g < n; ++g) {
        const i128 total = static_cast<i128>(l0[g]) + (static_cast<i128>(l1[g]) << kLimbBits) +
                           (static_cast<i128>(l2[g]) << (2 * kLimbBits)) - (static_cast<i128>(rows[g]) << 52);
        i128 idx;
        bool too_big = false;
        if (shift <= 0) {
            const i128 mag = total < 0 ? -total : total;
            too_big = total != 0 && (-shift > 52 || mag > (max_index >> -shift));
            idx = too_big ? 0 : total * (static_cast<i128>(1) << -shift);
        } else if (shift > 100) {  // |total| < 2^100: |total 2^-shift| < 1/2 rounds to 0
            idx = 0;
        } else {
            idx = total >> shift;  // floor (arithmetic shift)
            const i128 rem = total - idx * (static_cast<i128>(1) << shift);
            const i128 half = static_cast<i128>(1) << (shift - 1);
            if (rem > half || (rem == half && (idx & 1) != 0)) idx += 1;
        }
        if (too_big || idx > max_index || idx < -max_index)
            throw std::invalid_argument("a group's sum exceeds 2**52 steps of its release grid: use narrower bounds or fewer rows");
        out[g] = std::ldexp(static_cast<double>(static_cast<std::int64_t>(idx)), e_grid);
    }
}

}  // namespace pydp::aggregation
