// Ziggurat samplers for the standard normal and the standard exponential (Marsaglia and Tsang 2000),
// 256 layers, written for a 64-bit generator: one word w supplies the layer (bits 0-7), a sign bit
// (bit 8, normal only; the Laplace sampler uses it for its own sign) and a 53-bit uniform (bits 11-63),
// so the layer index and the abscissa never share bits.
//
// Layers: X[0] > X[1] = R > X[2] > ... > X[256] = 0 with equal areas V: layer i >= 1 is the rectangle
// [0, X[i]] x [f(X[i]), f(X[i+1])]; layer 0 is the base rectangle [0, R] x [0, f(R)] plus the tail
// beyond R, drawn as a rectangle of width X[0] = V / f(R). A point x = u X[i] with x < X[i+1] lies under
// the curve (about 99% of draws); otherwise layer 0 samples the tail exactly and the other layers test
// the wedge against f. The tables are built once from R (the value that closes the recursion at 0) and
// are immutable afterwards.
#pragma once
#include <cmath>
#include <cstdint>

namespace pydp::random {

// An integer below 2^63 as a double, through the signed conversion (a single instruction on x86-64;
// the unsigned 64-bit conversion is a branchy sequence without AVX-512).
inline double small_to_double(std::uint64_t k) noexcept { return static_cast<double>(static_cast<std::int64_t>(k)); }

namespace detail {

struct ZigTable {
    double w[256];         // X[i] * 2^-53: abscissa of a 53-bit integer in layer i
    std::uint64_t k[256];  // accept at once if the 53-bit integer is below k[i] (x < X[i+1])
    double f[257];         // f(X[i]), with f(X[256]) = f(0) = 1
    double closure;        // f(X[255]) + V / X[255] - 1: how well R closes the recursion (tests)
};

// f(x) = exp(-x^2/2) (normal) or exp(-x) (exponential); tail area beyond R is T.
template <bool Normal>
ZigTable build_zig_table() {
    ZigTable t{};
    using ld = long double;
    const ld R = Normal ? 3.6541528853610087963519472518L : 7.6971174701310497140446280481L;
    auto f = [](ld x) -> ld { return Normal ? std::exp(-x * x / 2) : std::exp(-x); };
    auto finv = [](ld y) -> ld { return Normal ? std::sqrt(-2 * std::log(y)) : -std::log(y); };
    const ld tail = Normal ? std::sqrt(std::acos(ld(-1)) / 2) * std::erfc(R / std::sqrt(ld(2))) : std::exp(-R);
    const ld V = R * f(R) + tail;
    ld X[257];
    X[0] = V / f(R);
    X[1] = R;
    for (int i = 1; i < 255; ++i) X[i + 1] = finv(f(X[i]) + V / X[i]);
    X[256] = 0;
    t.closure = static_cast<double>(f(X[255]) + V / X[255] - 1);
    for (int i = 0; i < 256; ++i) {
        t.w[i] = static_cast<double>(X[i] * 0x1.0p-53L);
        t.k[i] = static_cast<std::uint64_t>(std::floor(X[i + 1] / X[i] * 0x1.0p53L));
        t.f[i] = static_cast<double>(f(X[i]));
    }
    t.f[256] = 1.0;
    return t;
}

}  // namespace detail

inline const detail::ZigTable& normal_table() {
    static const detail::ZigTable t = detail::build_zig_table<true>();
    return t;
}
inline const detail::ZigTable& exponential_table() {
    static const detail::ZigTable t = detail::build_zig_table<false>();
    return t;
}

constexpr double kZigNormalR = 3.6541528853610088;
constexpr double kZigExpR = 7.6971174701310497;

// |Z| for a standard normal Z from the word w (bits 0-7 and 11-63) and, after a rejection, further words
// of g. The sign of Z is bit 8 of w, which this never reads (so it is independent of |Z|).
template <class G>
inline double ziggurat_normal_abs(G& g, std::uint64_t w) {
    const detail::ZigTable& t = normal_table();
    for (;;) {
        const unsigned i = static_cast<unsigned>(w & 0xff);
        const std::uint64_t k = w >> 11;
        const double x = small_to_double(k) * t.w[i];
        if (k < t.k[i]) return x;
        if (i == 0) {
            // Tail beyond R (Marsaglia 1964): x = R + a with density prop. to exp(-R a - a^2/2).
            for (;;) {
                const double a = -std::log(g.uniform_open()) / kZigNormalR;
                const double b = -std::log(g.uniform_open());
                if (2 * b > a * a) return kZigNormalR + a;
            }
        }
        const double y = t.f[i] + g.uniform() * (t.f[i + 1] - t.f[i]);
        if (y < std::exp(-0.5 * x * x)) return x;
        w = g.next_u64();
    }
}

template <class G>
inline double ziggurat_normal(G& g) {
    const std::uint64_t w = g.next_u64();
    const double x = ziggurat_normal_abs(g, w);
    return ((w >> 8) & 1) ? -x : x;
}

// Standard exponential from the word w (bits 0-7 and 11-63; bits 8-10 are left to the caller).
template <class G>
inline double ziggurat_exponential_from(G& g, std::uint64_t w) {
    const detail::ZigTable& t = exponential_table();
    double shift = 0.0;
    for (;;) {
        const unsigned i = static_cast<unsigned>(w & 0xff);
        const std::uint64_t k = w >> 11;
        const double x = small_to_double(k) * t.w[i];
        if (k < t.k[i]) return shift + x;
        if (i == 0) {
            shift += kZigExpR;  // memoryless tail: R + another exponential
        } else {
            const double y = t.f[i] + g.uniform() * (t.f[i + 1] - t.f[i]);
            if (y < std::exp(-x)) return shift + x;
        }
        w = g.next_u64();
    }
}

template <class G>
inline double ziggurat_exponential(G& g) {
    return ziggurat_exponential_from(g, g.next_u64());
}

}  // namespace pydp::random
