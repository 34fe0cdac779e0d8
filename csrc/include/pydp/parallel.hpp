// Deterministic fork-join over fixed chunks. Chunk boundaries depend only on the problem size and the
// chunk length, never on the thread count, so any per-chunk computation (including random streams keyed
// by chunk index) gives bit-identical results for every number of threads. No global state.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace pydp {

// The thread cap of every entry point (Python and C): more threads than this are never useful (the pool
// also falls back to the threads it can start), and the cap keeps counts exact in any integer type.
constexpr unsigned kMaxThreads = 4096;

inline unsigned hardware_threads() noexcept {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1u : n;
}

// The worker count for a requested count: 0 = all cores, and at most kMaxThreads.
inline unsigned cap_threads(unsigned requested) noexcept {
    return requested == 0 ? hardware_threads() : std::min(requested, kMaxThreads);
}

// Calls fn(chunk_index, begin, end) for every chunk [begin, end) of [0, n) of length `chunk`
// (the last one shorter). Work is handed out dynamically, but each chunk is processed by exactly one
// call, so results are independent of `threads`. The first exception thrown by fn is rethrown here.
// Threads the system refuses to start (a pids or memory limit) are not an error: the work runs on the
// threads that did start (at least this one), with the same result.
template <class F>
void parallel_chunks(std::size_t n, std::size_t chunk, unsigned threads, F&& fn) {
    if (n == 0) return;
    if (chunk == 0) chunk = 1;
    const std::size_t nchunks = (n + chunk - 1) / chunk;
    const unsigned nt = static_cast<unsigned>(std::min<std::size_t>(threads == 0 ? 1 : threads, nchunks));
    if (nt <= 1) {
        for (std::size_t c = 0; c < nchunks; ++c) fn(c, c * chunk, std::min(n, (c + 1) * chunk));
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::atomic_flag error_set = ATOMIC_FLAG_INIT;
    auto worker = [&]() {
        for (;;) {
            if (failed.load(std::memory_order_relaxed)) return;
            const std::size_t c = next.fetch_add(1, std::memory_order_relaxed);
            if (c >= nchunks) return;
            try {
                fn(c, c * chunk, std::min(n, (c + 1) * chunk));
            } catch (...) {
                if (!error_set.test_and_set()) error = std::current_exception();
                failed.store(true);
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    try {
        pool.reserve(nt - 1);
        for (unsigned i = 1; i < nt; ++i) pool.emplace_back(worker);
    } catch (const std::exception&) {
        // std::system_error (no thread resources) or std::bad_alloc: continue with the pool as started
    }
    worker();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace pydp
