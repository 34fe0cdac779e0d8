// pydp::random::Generator: a counter-based cryptographically secure generator (ChaCha20 keystream).
//
// A generator is (key, stream id, block counter). Its output is the ChaCha20 keystream of (key, nonce =
// stream id) from the current block on, read as little-endian 64-bit words. Nothing else is hidden in
// the state, so any position of any stream can be reached directly:
//
// * The 64-bit block counter is split into a 40-bit chunk index and a 24-bit block offset: chunk c owns
//   blocks [c * 2^24, (c + 1) * 2^24), i.e. 2^27 64-bit words. `chunk(c)` returns a generator confined to
//   chunk c (it throws std::length_error rather than run into chunk c + 1).
// * Parallel bulk work: `first = gen.reserve_chunks(k)` hands out chunks first .. first + k - 1, which the
//   generator itself will never use, and moves `gen` past them. Work item i then draws from
//   `gen.chunk(first + i)`: the result depends on the seed and the item index only, never on the
//   number of threads or the order in which items run.
// * Sequential use (next_u64, uniform, normal on `gen` itself) walks through the blocks from the current
//   position; it may cross chunk boundaries (a sequential generator is never confined).
// * `spawn(i)` derives an independent generator for task or partition i: its key is a ChaCha20 output
//   block of (key, the reserved stream kDeriveStream), so child keys are pseudorandom functions of
//   (key, stream id, i); different i give unrelated keys.
//
// * Fork safety: a generator keyed from OS entropy (`secure = true`) records the process id that owns
//   its key. `ensure_owner()` in another process (a fork copied it) takes a fresh key from the OS
//   (getentropy), restarts the stream and drops the buffered words, so parent and children never draw
//   the same words. It runs at the start of every bulk call (reserve_chunks) and of fill_u64, once per
//   call rather than per block (getpid is a system call); the Python layer also calls it for every
//   secure generator right after os.fork. Keyed generators (seeded streams, and streams spawned from
//   them) keep their determinism: a forked copy continues the same stream. Copies inherit the setting.
//
// Not thread-safe: one generator per thread (chunk/spawn copies are cheap). No global mutable state.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#if !defined(_WIN32)
#include <unistd.h>
#if defined(__APPLE__)
#include <sys/random.h>
#endif
#endif

#include "pydp/random/chacha.hpp"
#include "pydp/random/ziggurat.hpp"

namespace pydp::random {

class Generator {
public:
    static constexpr unsigned kChunkShift = 24;                        // blocks per chunk = 2^24
    static constexpr std::uint64_t kChunkBlocks = std::uint64_t{1} << kChunkShift;
    static constexpr std::uint64_t kMaxChunks = std::uint64_t{1} << (64 - kChunkShift);
    static constexpr std::uint64_t kDeriveStream = ~std::uint64_t{0};  // reserved nonce for key derivation
    static constexpr std::size_t kBufferBlocks = 16;                   // refill 16 blocks (1 KiB) at a time
    static constexpr std::size_t kBufferWords = kBufferBlocks * kBlockWords / 2;  // 64-bit words

    // key: 32 bytes; stream: any value except kDeriveStream. `impl` forces a ChaCha implementation
    // (tests); every implementation produces the same keystream.
    // `secure`: the key came from OS entropy and is re-drawn in a forked child (see the file header).
    Generator(const unsigned char key[32], std::uint64_t stream, ChaChaImpl impl = ChaChaImpl::Auto, bool secure = false)
        : stream_(stream), impl_(impl) {
        if (!chacha_impl_available(impl)) throw std::invalid_argument("ChaCha implementation not available on this CPU");
        if (stream == kDeriveStream) throw std::invalid_argument("stream id 2^64 - 1 is reserved");
        key_from_bytes(key, key_);
        if (secure) owner_ = current_pid();
    }

    // A secure generator copied into another process (fork) takes a fresh OS key there; no-op otherwise.
    void ensure_owner() {
        if (owner_ == 0 || owner_ == current_pid()) return;
        unsigned char key[32];
        os_entropy(key);
        key_from_bytes(key, key_);
        std::memset(key, 0, sizeof key);
        counter_ = limit_ == 0 ? 0 : counter_;  // a confined chunk keeps its range under the new key
        pos_ = kBufferWords;
        owner_ = current_pid();
    }
    bool secure() const noexcept { return owner_ != 0; }

    // ---- raw output -------------------------------------------------------------------------------
    std::uint64_t next_u64() {
        if (pos_ == kBufferWords) refill();
        const std::uint64_t w = static_cast<std::uint64_t>(buf_[2 * pos_]) | (static_cast<std::uint64_t>(buf_[2 * pos_ + 1]) << 32);
        ++pos_;
        return w;
    }
    std::uint32_t next_u32() { return static_cast<std::uint32_t>(next_u64() >> 32); }

    // Fill dst[0..n) with consecutive 64-bit words of the stream.
    void fill_u64(std::uint64_t* dst, std::size_t n) {
        ensure_owner();
        for (std::size_t i = 0; i < n; ++i) dst[i] = next_u64();
    }

    // Drops any buffered words, then writes the next nblocks keystream blocks (16 words each) to dst.
    void take_blocks(std::uint32_t* dst, std::size_t nblocks) {
        check_room(nblocks);
        chacha20_blocks(key_, counter_, stream_, dst, nblocks, impl_);
        counter_ += nblocks;
        pos_ = kBufferWords;
    }

    // take_blocks(dst, total) for a caller that reads only blocks [0, head) and [tail, total) of dst: those
    // are written (the same words), the blocks in between are skipped (left as they were in dst).
    void take_blocks_partial(std::uint32_t* dst, std::size_t total, std::size_t head, std::size_t tail) {
        if (head > tail || tail > total) throw std::logic_error("take_blocks_partial: need head <= tail <= total");
        check_room(total);
        if (head > 0) chacha20_blocks(key_, counter_, stream_, dst, head, impl_);
        if (tail < total) chacha20_blocks(key_, counter_ + tail, stream_, dst + kBlockWords * tail, total - tail, impl_);
        counter_ += total;
        pos_ = kBufferWords;
    }

    // Splits a chunk generator in two halves: this one keeps the lower half of its chunk, the returned
    // one is confined to the upper half (2^23 blocks each). Bulk kernels draw their fixed per-value words
    // from the lower half and the variable extra words of rejection steps from the upper half.
    Generator split_upper() {
        if (limit_ == 0 || limit_ - counter_ < 2) throw std::logic_error("split_upper needs a fresh chunk generator");
        const std::uint64_t mid = counter_ + (limit_ - counter_) / 2;
        Generator g(*this, Raw{});
        g.counter_ = mid;
        g.limit_ = limit_;
        g.pos_ = kBufferWords;
        limit_ = mid;
        return g;
    }

    ChaChaImpl impl() const noexcept { return impl_; }

    // ---- basic variates ---------------------------------------------------------------------------
    // 53-bit uniform on [0, 1): k * 2^-53, k uniform on {0, ..., 2^53 - 1}.
    double uniform() { return small_to_double(next_u64() >> 11) * 0x1.0p-53; }
    // Uniform on the open interval (0, 1): (k + 1/2) * 2^-52 with k on 52 bits (exact; never 0 or 1).
    double uniform_open() { return (small_to_double(next_u64() >> 12) + 0.5) * 0x1.0p-52; }
    // Standard normal (ziggurat, 256 layers); mostly one 64-bit word per variate.
    double normal() { return ziggurat_normal(*this); }
    // Standard exponential (ziggurat, 256 layers).
    double exponential() { return ziggurat_exponential(*this); }

    // ---- streams and chunks -----------------------------------------------------------------------
    // A generator confined to chunk c of this (key, stream): independent of this generator's position.
    Generator chunk(std::uint64_t c) const {
        if (c >= kMaxChunks) throw std::length_error("chunk index out of range (2^40 chunks per stream)");
        Generator g(*this, Raw{});
        g.counter_ = c << kChunkShift;
        g.limit_ = g.counter_ + kChunkBlocks;  // chunk kMaxChunks - 1 wraps limit_ to 0 = no limit
        g.pos_ = kBufferWords;
        return g;
    }

    // Reserve k fresh chunks for parallel work; returns the first index and moves this generator past them.
    std::uint64_t reserve_chunks(std::uint64_t k) {
        ensure_owner();
        const std::uint64_t first = (counter_ + kChunkBlocks - 1) >> kChunkShift;  // first chunk not yet touched
        if (counter_ > ~std::uint64_t{0} - kChunkBlocks || k > kMaxChunks - first - 1)
            throw std::length_error("random stream exhausted (2^40 chunks)");
        counter_ = (first + k) << kChunkShift;
        pos_ = kBufferWords;  // words already buffered are dropped, never reused
        return first;
    }

    // The independent generator for task/partition i (stream id 0 of a derived key).
    Generator spawn(std::uint64_t i) const {
        std::uint32_t mid[8];
        spawn_key(mid);
        return spawn_from(mid, i);
    }

    // spawn(i) in two steps, for callers that spawn many i: spawn_key writes the first derivation step
    // (a function of this generator's key and stream only), and spawn_from(mid, i) == spawn(i).
    void spawn_key(std::uint32_t mid[8]) const noexcept {
        std::uint32_t tmp[kBlockWords];
        // Mix in this generator's stream id first, then i: child key = PRF(PRF(key, stream), i).
        chacha20_blocks(key_, stream_, kDeriveStream, tmp, 1);
        std::memcpy(mid, tmp, 8 * sizeof(std::uint32_t));
    }
    Generator spawn_from(const std::uint32_t mid[8], std::uint64_t i) const {
        std::uint32_t tmp[kBlockWords];
        chacha20_blocks(mid, i, kDeriveStream, tmp, 1);
        Generator g(*this, Raw{});
        std::memcpy(g.key_, tmp, sizeof g.key_);
        g.stream_ = 0;
        g.counter_ = 0;
        g.limit_ = 0;
        g.pos_ = kBufferWords;
        return g;
    }

    // Moves an unconfined generator to the start of keystream block `block` (drops buffered words).
    void seek(std::uint64_t block) {
        if (limit_ != 0) throw std::logic_error("seek is for unconfined generators, not chunks");
        counter_ = block;
        pos_ = kBufferWords;
    }

    // ---- inspection -------------------------------------------------------------------------------
    std::uint64_t stream() const noexcept { return stream_; }
    // Next block to be generated (words already buffered come from earlier blocks).
    std::uint64_t block_counter() const noexcept { return counter_; }
    void key_bytes(unsigned char out[32]) const noexcept {
        for (int i = 0; i < 8; ++i)
            for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<unsigned char>(key_[i] >> (8 * b));
    }

private:
    struct Raw {};
    Generator(const Generator& other, Raw) : stream_(other.stream_), impl_(other.impl_), owner_(other.owner_) {
        std::memcpy(key_, other.key_, sizeof key_);
    }

#if defined(_WIN32)
    static long current_pid() noexcept { return 1; }  // no fork: a secure generator never re-keys
    static void os_entropy(unsigned char*) {}
#else
    static long current_pid() noexcept { return static_cast<long>(::getpid()); }
    static void os_entropy(unsigned char out[32]) {
        if (::getentropy(out, 32) != 0) throw std::runtime_error("cannot re-key the generator: no OS entropy");
    }
#endif

    void check_room(std::size_t nblocks) const {
        if (limit_ != 0 && (counter_ >= limit_ || limit_ - counter_ < nblocks))
            throw std::length_error("random chunk exhausted");
        if (limit_ == 0 && counter_ > ~std::uint64_t{0} - nblocks) throw std::length_error("random stream exhausted (2^64 blocks)");
    }

    void refill() {
        check_room(kBufferBlocks);
        chacha20_blocks(key_, counter_, stream_, buf_, kBufferBlocks, impl_);
        counter_ += kBufferBlocks;
        pos_ = 0;
    }

    std::uint32_t key_[8];
    std::uint64_t stream_;
    ChaChaImpl impl_ = ChaChaImpl::Auto;
    std::uint64_t counter_ = 0;
    std::uint64_t limit_ = 0;  // 0: unconfined; else one past the last usable block
    std::size_t pos_ = kBufferWords;
    long owner_ = 0;  // process owning an OS-entropy key; 0 for a keyed (reproducible) stream
    alignas(64) std::uint32_t buf_[kBufferBlocks * kBlockWords];  // keystream words; next_u64 pairs them
};

}  // namespace pydp::random
