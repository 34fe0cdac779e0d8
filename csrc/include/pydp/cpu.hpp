// The one place where the library asks the CPU what it can run.
//
// The kernels are compiled without -march flags: their AVX2 and AVX-512 variants carry function-level
// target attributes and are chosen at run time through isa_available() / best_isa(). The features are
// read once (function-local constants) and never change afterwards. Every variant computes bit for bit
// what the scalar code computes (no FMA contraction, see CMakeLists.txt), so the choice affects speed only.
#pragma once

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define PYDP_X86_DISPATCH 1
#include <immintrin.h>
#endif

namespace pydp::cpu {

// Instruction-set levels; Auto asks for the best one available.
enum class Isa { Auto = 0, Scalar = 1, AVX2 = 2, AVX512 = 3 };

struct Features {
    bool avx2 = false, fma = false, avx512f = false, avx512dq = false, avx512vl = false, avx512bw = false;
};

inline const Features& features() noexcept {
    static const Features f = [] {
        Features r;
#ifdef PYDP_X86_DISPATCH
        __builtin_cpu_init();
        r.avx2 = __builtin_cpu_supports("avx2");
        r.fma = __builtin_cpu_supports("fma");
        r.avx512f = __builtin_cpu_supports("avx512f");
        r.avx512dq = __builtin_cpu_supports("avx512dq");
        r.avx512vl = __builtin_cpu_supports("avx512vl");
        r.avx512bw = __builtin_cpu_supports("avx512bw");
#endif
        return r;
    }();
    return f;
}

// True if every kernel variant of level `isa` can run here (AVX-512 needs F, DQ, VL and BW).
inline bool isa_available(Isa isa) noexcept {
    const Features& f = features();
    switch (isa) {
        case Isa::Auto:
        case Isa::Scalar: return true;
        case Isa::AVX2: return f.avx2 && f.fma;
        case Isa::AVX512: return f.avx512f && f.avx512dq && f.avx512vl && f.avx512bw;
    }
    return false;
}

// The best level available on this CPU (decided once).
inline Isa best_isa() noexcept {
    static const Isa best = isa_available(Isa::AVX512) ? Isa::AVX512 : isa_available(Isa::AVX2) ? Isa::AVX2 : Isa::Scalar;
    return best;
}

}  // namespace pydp::cpu
