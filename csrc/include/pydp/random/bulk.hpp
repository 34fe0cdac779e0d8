// Bulk sampling with fixed chunks: the result depends on the generator's key, stream and position and
// on the output size, never on the number of threads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "pydp/parallel.hpp"
#include "pydp/random/generator.hpp"

namespace pydp::random {

// Items per chunk of bulk output. Part of the stream layout: changing it changes seeded outputs.
constexpr std::size_t kFillChunk = 16384;

// Parallel bulk work in two steps: plan_chunks reserves the chunks (it moves `gen`: call it from one
// thread, with the GIL held in a binding); run_chunks then calls fn(chunk_generator, begin, end) for
// every fixed chunk [begin, end) of [0, n) on `threads` threads. run_chunks reads only the immutable key
// and stream of `gen`, so it may run with the GIL released.
struct ChunkPlan {
    std::uint64_t first = 0;
    std::size_t n = 0, chunk = kFillChunk;
};

inline ChunkPlan plan_chunks(Generator& gen, std::size_t n, std::size_t chunk = kFillChunk) {
    ChunkPlan p;
    p.n = n;
    p.chunk = chunk == 0 ? 1 : chunk;
    if (n > 0) p.first = gen.reserve_chunks((n + p.chunk - 1) / p.chunk);
    return p;
}

// Runs fn(chunk_generator, begin, end) over a plan from plan_chunks; touches `gen` read-only.
template <class Fn>
void run_chunks(const Generator& gen, const ChunkPlan& p, unsigned threads, Fn&& fn) {
    pydp::parallel_chunks(p.n, p.chunk, threads, [&](std::size_t c, std::size_t b, std::size_t e) {
        Generator g = gen.chunk(p.first + c);
        fn(g, b, e);
    });
}

}  // namespace pydp::random
