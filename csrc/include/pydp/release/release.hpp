// The release kernel: round each value to the power-of-two grid g = 2^e, add exact integer noise in grid
// steps, and return (round(x / g) + Y) * g, which is exactly representable (checked).
//
// Order of work inside each fixed chunk of kNoiseChunk values: first all the noise is drawn (its time
// depends on the noise only), then the data are combined with it in a vectorised loop without
// data-dependent branches (random/tiles.hpp, release_combine: a clamp, a product with a constant power of
// two, rint, an integer add, the range flags or-ed together). The range checks cover the inputs (finite,
// |x / g| <= 2^52 after the clamp) and the outputs (|round(x / g) + Y| <= 2^53); an output error needs
// noise beyond 2^52 grid steps, an event of probability below exp(-2^14) for the parameters the Python
// layer chooses.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pydp/release/samplers.hpp"
#include "pydp/random/generator.hpp"

namespace pydp::release {

// The grid exponents a release accepts: g = 2^e with 2^-e and 2^(e + 53) both finite normal doubles.
constexpr int kMinGridExponent = -1021;
constexpr int kMaxGridExponent = 970;

// The per-chunk sources of one bulk call: n values reserve fresh chunks of `gen`, and chunk c of the batch
// reads the generator's chunk first + c, so the output depends only on the key and the position, never
// on the thread count.
struct ChunkSources {
    const random::Generator* gen;
    std::uint64_t first;
    random::Generator operator()(std::size_t c) const { return gen->chunk(first + c); }
};

inline ChunkSources reserve_sources(random::Generator& gen, std::size_t n) {
    const std::size_t nchunks = (n + kNoiseChunk - 1) / kNoiseChunk;
    return ChunkSources{&gen, nchunks ? gen.reserve_chunks(nchunks) : 0};
}

// Values are clamped to [low, high] first (pass -inf, inf for none); non-finite inputs are errors whatever
// the bounds.
template <class Sampler, class MakeSource>
void release_on_grid(const Sampler& sampler, const double* x, double* out, std::size_t n, int grid_exponent,
                     double low, double high, unsigned threads, MakeSource&& make_source) {
    if (!(low <= high)) throw std::invalid_argument("bounds must satisfy low <= high");
    // 2^-e and 2^e as doubles (both normal for the exponents the Python layer allows, |e| <= 1021 - 53); a
    // product with them rounds exactly as ldexp does (correctly rounded, so exact unless the result is
    // subnormal, where both round to nearest).
    if (grid_exponent < -1021 || grid_exponent > 1021) throw std::invalid_argument("grid exponent out of range [-1021, 1021]");
    const double down = std::ldexp(1.0, -grid_exponent), up = std::ldexp(1.0, grid_exponent);
    const random::TileOps ops = random::tile_ops(random::ChaChaImpl::Auto);  // the combine loop (tiles.hpp)
    std::vector<unsigned char> chunk_error((n + kNoiseChunk - 1) / kNoiseChunk, 0);
    parallel_chunks(n, kNoiseChunk, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
        auto source = make_source(c);
        i64 noise[kNoiseChunk];
        const std::size_t len = end - begin;
        fill_chunk(sampler, source, noise, len);
        const unsigned bad = ops.release_combine(x + begin, noise, low, high, down, up, out + begin, len);
        chunk_error[c] = static_cast<unsigned char>(bad);
    });
    unsigned bad = 0;
    for (unsigned char e : chunk_error) bad |= e;
    if (bad & 1u) throw std::invalid_argument("values must be finite and at most 2^52 grid steps in magnitude");
    if (bad & 2u) throw std::overflow_error("noisy value left the exactly representable grid range (2^53 steps)");
}

}  // namespace pydp::release
