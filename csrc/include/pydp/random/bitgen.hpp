// numpy's C-level bit generator interface over pydp::random::Generator (the keyed ChaCha20 stream).
//
// numpy.random.Generator draws its variates through a `bitgen_t` (numpy/random/bitgen.h): a state pointer
// and four callbacks. NumpyBitGen reproduces that struct's layout, so numpy can use it through a
// PyCapsule named "BitGenerator" without pydp_core including numpy's headers. The callbacks read a
// buffer of kBlocks = 32 ChaCha20 blocks (256 64-bit words), refilled from the generator
// (Generator::take_blocks) with the fastest ChaCha implementation for the CPU; the words are those of
// Generator::next_u64 for the same key and position:
//   next_uint64 = next_raw: the next 64-bit word (little-endian pair of keystream words);
//   next_uint32: numpy's convention, the low then the high half of one 64-bit word;
//   next_double: (next_uint64 >> 11) * 2^-53, as Generator::uniform and numpy's own bit generators.
// Not thread-safe: numpy serialises access with the Python object's `lock`. The callbacks never throw:
// a (key, stream) pair holds 2^64 blocks (2^70 bytes); if that were ever exhausted they abort the
// process rather than repeat keystream.
#pragma once
#include <cstdint>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>

#include "pydp/random/generator.hpp"

namespace pydp::random {

struct NumpyBitGen {  // the layout of numpy's bitgen_t
    void* state;
    std::uint64_t (*next_uint64)(void* st);
    std::uint32_t (*next_uint32)(void* st);
    double (*next_double)(void* st);
    std::uint64_t (*next_raw)(void* st);
};

class BitGenState {
    // The generator throws only when its stream is exhausted (after 2^70 bytes): stop rather than wrap
    // around to keystream already used.
    template <class F>
    static auto guard(F f) noexcept -> decltype(f()) {
        try {
            return f();
        } catch (...) {
            std::abort();
        }
    }

public:
    explicit BitGenState(const Generator& gen) : gen_(gen) {
        iface_.state = this;
        iface_.next_uint64 = &next_uint64;
        iface_.next_uint32 = &next_uint32;
        iface_.next_double = &next_double;
        iface_.next_raw = &next_uint64;
    }
    BitGenState(const BitGenState&) = delete;  // iface_.state points at this object
    BitGenState& operator=(const BitGenState&) = delete;

    NumpyBitGen* interface() noexcept { return &iface_; }
    const Generator& generator() const noexcept { return gen_; }
    // The pending high half of numpy's next_uint32 convention.
    bool has_uint32() const noexcept { return has_uint32_; }
    std::uint32_t uinteger() const noexcept { return uinteger_; }

    // The next 64-bit word: word *word (0-7) of keystream block *block.
    void position(std::uint64_t* block, unsigned* word) const noexcept {
        if (idx_ == kWords) {
            *block = gen_.block_counter();
            *word = 0;
        } else {
            *block = gen_.block_counter() - kBlocks + idx_ / 8;
            *word = static_cast<unsigned>(idx_ % 8);
        }
    }

    // Moves to word `word` (0-7) of block `block` of `gen`'s (key, stream), with numpy's pending half-word.
    void set(const Generator& gen, std::uint64_t block, unsigned word, bool has_uint32, std::uint32_t uinteger) {
        if (word >= 8) throw std::invalid_argument("word must lie in 0..7");
        Generator g = gen;
        g.seek(block);
        if (word > 0) g.take_blocks(buf_, kBlocks);  // may throw: nothing is changed then
        gen_ = g;
        idx_ = word > 0 ? word : kWords;
        has_uint32_ = has_uint32;
        uinteger_ = uinteger;
    }

    std::uint64_t u64() noexcept {
        if (idx_ == kWords) refill();
        const std::uint64_t w = static_cast<std::uint64_t>(buf_[2 * idx_]) | (static_cast<std::uint64_t>(buf_[2 * idx_ + 1]) << 32);
        ++idx_;
        return w;
    }

private:
    static constexpr std::size_t kBlocks = 32;
    static constexpr std::size_t kWords = kBlocks * kBlockWords / 2;

    void refill() noexcept {
        guard([this] { gen_.take_blocks(buf_, kBlocks); });
        idx_ = 0;
    }

    static std::uint64_t next_uint64(void* st) noexcept { return static_cast<BitGenState*>(st)->u64(); }
    static std::uint32_t next_uint32(void* st) noexcept {
        BitGenState* s = static_cast<BitGenState*>(st);
        if (s->has_uint32_) {
            s->has_uint32_ = false;
            return s->uinteger_;
        }
        const std::uint64_t w = s->u64();
        s->has_uint32_ = true;
        s->uinteger_ = static_cast<std::uint32_t>(w >> 32);
        return static_cast<std::uint32_t>(w);
    }
    static double next_double(void* st) noexcept {
        return small_to_double(static_cast<BitGenState*>(st)->u64() >> 11) * 0x1.0p-53;  // Generator::uniform
    }

    Generator gen_;
    std::size_t idx_ = kWords;  // next 64-bit word of buf_
    alignas(64) std::uint32_t buf_[kBlocks * kBlockWords];
    NumpyBitGen iface_{};
    bool has_uint32_ = false;
    std::uint32_t uinteger_ = 0;
};

}  // namespace pydp::random
