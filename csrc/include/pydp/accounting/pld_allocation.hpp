// Random allocation: one re-discretised convolution of two laws of a mean of likelihood ratios
// (docs/pld.md, "Random allocation"). The law of (ma A + mb B) / (ma + mb), A and B independent with
// atoms (va, wa) and (vb, wb), is put on a sorted grid either by a mean-preserving spread of every atom
// onto the two grid points around it (convex order up) or by the mass and first moment of every cell
// (contraction to the cell means, convex order down). For each atom of A the values over B increase, so
// the cell index is found by a forward walk: O(|A| |B| + |grid|) without searches.
#pragma once

#include <cstddef>
#include <vector>

namespace pydp {
namespace accounting {
namespace pld {

// spread = true: out_mass[c] receives the spread masses (out_moment untouched);
// spread = false: out_mass[c] and out_moment[c] receive the mass and first moment of cell [g_c, g_{c+1}).
// The grid must be sorted with grid.front() <= every value and grid.back() >= every value; values are
// sorted ascending in va and vb. Outputs have grid.size() entries, zero on entry.
inline void allocation_convolve(const double* va, const double* wa, std::size_t na, const double* vb,
                                const double* wb, std::size_t nb, double ma, double mb, const double* grid,
                                std::size_t ng, bool spread, double* out_mass, double* out_moment) {
    const double m = ma + mb;
    const double fa = ma / m, fb = mb / m;
    if (ng < 2) return;
    // Reciprocal cell widths, so the inner loop multiplies instead of dividing.
    std::vector<double> inv(ng - 1);
    for (std::size_t c = 0; c + 1 < ng; ++c) {
        const double width = grid[c + 1] - grid[c];
        inv[c] = width > 0.0 ? 1.0 / width : 0.0;
    }
    // A self-convolution (same atoms, equal weights) visits each unordered pair once, counted twice.
    const bool self = va == vb && wa == wb && na == nb && ma == mb;
    for (std::size_t i = 0; i < na; ++i) {
        const double a = fa * va[i], w_a = wa[i];
        if (!(w_a > 0.0)) continue;
        std::size_t c = 0;
        for (std::size_t j = self ? i : 0; j < nb; ++j) {
            const double z = a + fb * vb[j];
            while (c + 2 < ng && grid[c + 1] <= z) ++c;
            const double w = (self && j != i ? 2.0 : 1.0) * w_a * wb[j];
            if (spread) {
                double f = (z - grid[c]) * inv[c];
                f = f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
                const double up = f * w;
                out_mass[c] += w - up;
                out_mass[c + 1] += up;
            } else {
                out_mass[c] += w;
                out_moment[c] += w * z;
            }
        }
    }
}

}  // namespace pld
}  // namespace accounting
}  // namespace pydp
