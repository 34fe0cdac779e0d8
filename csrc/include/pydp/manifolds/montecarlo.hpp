// Counting for Algorithm 2 (Monte Carlo mu): for each batch j and each threshold c_k = 2 sigma^2 eps_k,
// the fraction of the batch's loss values L_ij = d(eta', y_ij)^2 - d(eta, y_ij)^2 that are >= c_k.
// One sort per batch and one binary search per threshold: O(n log n + n_eps log n) per batch instead of
// the paper's n x n_eps double loop. Pure C++17, no state.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace pydp::manifolds {

// values: n entries (copied and sorted); thresholds: n_eps entries (any order); out[k] = #{v >= c_k} / n.
inline void fraction_at_least(const double* values, std::size_t n, const double* thresholds, std::size_t n_eps,
                              double* out) {
    std::vector<double> v(values, values + n);
    std::sort(v.begin(), v.end());
    const double dn = static_cast<double>(n);
    for (std::size_t k = 0; k < n_eps; ++k) {
        const auto it = std::lower_bound(v.begin(), v.end(), thresholds[k]);
        out[k] = n ? static_cast<double>(v.end() - it) / dn : 0.0;
    }
}

}  // namespace pydp::manifolds
