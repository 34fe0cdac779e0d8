// Keyed per-group noise for differentially private aggregation (docs/aggregate.md, section 3). Item j's
// noise is the first value drawn from the stream base.spawn(streams[j]) (one reserved chunk), exactly
// what pydp_core.Random(key).stream(streams[j]) hands a one-value sampler call: the noise of a group is
// a function of the key and the group's stream id only, never of the other groups, their order or the
// thread count. The samplers and the grid combination are those of pydp/release (exact integer noise);
// a one-value draw generates only the keystream blocks it reads (the first derivation step of spawn is
// shared by all groups).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "pydp/release/samplers.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/random/tiles.hpp"

namespace pydp::aggregation {

inline constexpr std::size_t kGroupChunk = 256;  // groups per work item

// noise[j - begin] = the first draw of base.spawn(streams[j]) for j in [begin, end).
template <class Sampler>
void keyed_draws(const Sampler& sampler, const random::Generator& base, const std::uint32_t mid[8],
                 const std::uint64_t* streams, std::size_t begin, std::size_t end, std::int64_t* noise) {
    for (std::size_t j = begin; j < end; ++j) {
        random::Generator g = base.spawn_from(mid, streams[j]);
        random::Generator source = g.chunk(g.reserve_chunks(1));
        pydp::release::fill_chunk(sampler, source, noise + (j - begin), 1);
    }
}

// out[j] = x[j] + Y_j with Y_j the first draw of base.spawn(streams[j]); |x[j]| < 2^62.
template <class Sampler>
void keyed_integer_noise(const Sampler& sampler, const random::Generator& base, const std::uint64_t* streams,
                         const std::int64_t* x, std::int64_t* out, std::size_t n, unsigned threads) {
    std::uint32_t mid[8];
    base.spawn_key(mid);
    parallel_chunks(n, kGroupChunk, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
        std::int64_t noise[kGroupChunk];
        keyed_draws(sampler, base, mid, streams, begin, end, noise);
        for (std::size_t j = begin; j < end; ++j) out[j] = x[j] + noise[j - begin];
    });
}

// out[j] = (rint(x[j] / g) + Y_j) g on the grid g = 2^grid_exponent, combined as pydp::release::release_on_grid
// combines one value with its noise (no bounds).
template <class Sampler>
void keyed_grid_release(const Sampler& sampler, const random::Generator& base, const std::uint64_t* streams,
                        const double* x, double* out, std::size_t n, int grid_exponent, unsigned threads) {
    if (grid_exponent < -1021 || grid_exponent > 1021) throw std::invalid_argument("grid exponent out of range [-1021, 1021]");
    const double inf = std::numeric_limits<double>::infinity();
    const double down = std::ldexp(1.0, -grid_exponent), up = std::ldexp(1.0, grid_exponent);
    const random::TileOps ops = random::tile_ops(random::ChaChaImpl::Auto);
    std::uint32_t mid[8];
    base.spawn_key(mid);
    std::vector<unsigned char> chunk_error((n + kGroupChunk - 1) / kGroupChunk, 0);
    parallel_chunks(n, kGroupChunk, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
        std::int64_t noise[kGroupChunk];
        keyed_draws(sampler, base, mid, streams, begin, end, noise);
        chunk_error[c] = static_cast<unsigned char>(ops.release_combine(x + begin, noise, -inf, inf, down, up, out + begin, end - begin));
    });
    unsigned bad = 0;
    for (unsigned char e : chunk_error) bad |= e;
    if (bad & 1u) throw std::invalid_argument("values must be finite and at most 2^52 grid steps in magnitude");
    if (bad & 2u) throw std::overflow_error("noisy value left the exactly representable grid range (2^53 steps)");
}

// out[j * words + w] = word w (w < words <= kMaxKeyedWords) of the sequential stream of base.spawn(streams[j]),
// the words its next_u64 returns first: per group, uniform bits that depend on the key and the group's
// stream id only (the optimal partition selection compares them with its release threshold).
inline constexpr std::size_t kMaxKeyedWords = 64;
inline void keyed_words(const random::Generator& base, const std::uint64_t* streams, std::size_t n, std::size_t words,
                        std::uint64_t* out, unsigned threads) {
    if (words == 0 || words > kMaxKeyedWords) throw std::invalid_argument("words must lie in [1, 64]");
    constexpr std::size_t kWordsPerBlock = random::kBlockWords / 2;
    const std::size_t nblocks = (words + kWordsPerBlock - 1) / kWordsPerBlock;
    std::uint32_t mid[8];
    base.spawn_key(mid);
    parallel_chunks(n, kGroupChunk, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
        std::uint32_t block[random::kBlockWords * (kMaxKeyedWords / kWordsPerBlock)];
        for (std::size_t j = begin; j < end; ++j) {
            random::Generator g = base.spawn_from(mid, streams[j]);
            g.take_blocks(block, nblocks);
            for (std::size_t w = 0; w < words; ++w)
                out[j * words + w] = static_cast<std::uint64_t>(block[2 * w]) | (static_cast<std::uint64_t>(block[2 * w + 1]) << 32);
        }
    });
}

}  // namespace pydp::aggregation
