// Keyed per-group noise for differentially private aggregation (docs/aggregate.md, section 3). Item j's
// noise is the first value drawn from the stream base.spawn(streams[j]) (one reserved chunk), exactly
// what pydp_core.Random(key).stream(streams[j]) hands a one-value sampler call: the noise of a group is
// a function of the key and the group's stream id only, never of the other groups, their order or the
// thread count. The samplers and the grid release are those of pydp/discrete (exact integer noise).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>

#include "pydp/discrete/release.hpp"
#include "pydp/discrete/samplers.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/generator.hpp"

namespace pydp::aggregate {

inline constexpr std::size_t kGroupChunk = 256;  // groups per work item

// out[j] = x[j] + Y_j with Y_j the first draw of base.spawn(streams[j]); |x[j]| < 2^62.
template <class Sampler>
void keyed_integer_noise(const Sampler& sampler, const random::Generator& base, const std::uint64_t* streams,
                         const std::int64_t* x, std::int64_t* out, std::size_t n, unsigned threads) {
    parallel_chunks(n, kGroupChunk, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t j = begin; j < end; ++j) {
            random::Generator g = base.spawn(streams[j]);
            random::Generator source = g.chunk(g.reserve_chunks(1));
            std::int64_t y = 0;
            discrete::fill_chunk(sampler, source, &y, 1);
            out[j] = x[j] + y;
        }
    });
}

// out[j] = (rint(x[j] / g) + Y_j) g on the grid g = 2^grid_exponent (discrete::release_on_grid, one value).
template <class Sampler>
void keyed_grid_release(const Sampler& sampler, const random::Generator& base, const std::uint64_t* streams,
                        const double* x, double* out, std::size_t n, int grid_exponent, unsigned threads) {
    const double inf = std::numeric_limits<double>::infinity();
    parallel_chunks(n, kGroupChunk, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t j = begin; j < end; ++j) {
            random::Generator g = base.spawn(streams[j]);
            const std::uint64_t first = g.reserve_chunks(1);
            discrete::release_on_grid(sampler, x + j, out + j, 1, grid_exponent, -inf, inf, 1,
                                      [&](std::size_t c) { return g.chunk(first + c); });
        }
    });
}

}  // namespace pydp::aggregate
