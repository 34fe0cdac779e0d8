// Scalar samplers on top of pydp::random::Generator and their bulk (chunked, multi-threaded) forms.
//
// Each sampler takes its randomness only from the generator passed in, so a chunk generator makes the
// output a function of (key, stream, chunk index, position in chunk). Conventions follow numpy:
// loc + scale * X for a standard variate X.
//
// * normal: ziggurat (ziggurat.hpp).
// * laplace: sign * exponential, the exponential by ziggurat and the sign from an unused bit of its word.
// * logistic: inversion, |X| = log1p(2 (1 - u) / u) for u uniform on (0, 1) and an independent sign.
// * gamma(shape): Marsaglia and Tsang (2000); for shape < 1, Gamma(shape + 1) * U^(1 / shape).
// * subbotin(r): X = sign * (r G)^(1/r) with G ~ Gamma(1/r) (SPEC-NOTES). With the boost
//   G = Gamma(1/r + 1) * U^r, this is X = sign * U * (r d v)^(1/r), with d v the Marsaglia-Tsang draw of
//   Gamma(1/r + 1): the power U^r never has to be formed, so nothing underflows for large r.
// * arsinh_normal(A, sigma): A * asinh(sigma Z / A) (the tCDP mechanism of paper 003).
// * sphere(d): a normal vector divided by its norm.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "pydp/random/bulk.hpp"
#include "pydp/random/generator.hpp"

namespace pydp::random {

inline double laplace(Generator& g) {
    const std::uint64_t w = g.next_u64();
    const double x = ziggurat_exponential_from(g, w);  // uses bits 0-7 and 11-63 of w
    return ((w >> 8) & 1) ? -x : x;
}

inline double logistic(Generator& g) {
    const std::uint64_t w = g.next_u64();
    const double u = (static_cast<double>(w >> 12) + 0.5) * 0x1.0p-52;  // (0, 1), exact
    const double x = std::log1p(2.0 * (1.0 - u) / u);                   // P(|X| > t) = 2 / (1 + e^t)
    return (w & 1) ? -x : x;
}

// Marsaglia-Tsang state for Gamma(alpha) with alpha >= 1.
struct GammaMT {
    double d, c;
    explicit GammaMT(double alpha) : d(alpha - 1.0 / 3.0), c(1.0 / std::sqrt(9.0 * (alpha - 1.0 / 3.0))) {}
    // Returns v with d * v ~ Gamma(alpha).
    double draw_v(Generator& g) const {
        for (;;) {
            const double z = g.normal();
            double v = 1.0 + c * z;
            if (v <= 0.0) continue;
            v = v * v * v;
            const double u = g.uniform_open();
            const double z2 = z * z;
            if (u < 1.0 - 0.0331 * z2 * z2) return v;
            if (std::log(u) < 0.5 * z2 + d * (1.0 - v + std::log(v))) return v;
        }
    }
};

class GammaSampler {
public:
    explicit GammaSampler(double shape) : boost_(shape < 1.0), inv_shape_(1.0 / shape), mt_(shape < 1.0 ? shape + 1.0 : shape) {
        if (!(shape > 0.0) || !std::isfinite(shape)) throw std::invalid_argument("gamma shape must be finite and > 0");
    }
    double operator()(Generator& g) const {
        const double x = mt_.d * mt_.draw_v(g);
        if (!boost_) return x;
        return x * std::pow(g.uniform_open(), inv_shape_);
    }

private:
    bool boost_;
    double inv_shape_;
    GammaMT mt_;
};

class SubbotinSampler {
public:
    explicit SubbotinSampler(double r) : r_(r), inv_r_(1.0 / r), mt_(1.0 / r + 1.0) {
        if (!(r >= 1.0) || !std::isfinite(r)) throw std::invalid_argument("subbotin order r must be finite and >= 1");
        rd_ = r * mt_.d;
    }
    double operator()(Generator& g) const {
        if (r_ == 1.0) return laplace(g);
        if (r_ == 2.0) return g.normal();
        const double v = mt_.draw_v(g);
        const std::uint64_t w = g.next_u64();
        const double u = static_cast<double>(w >> 11) * 0x1.0p-53;
        const double x = u * std::pow(rd_ * v, inv_r_);
        return (w & 1) ? -x : x;
    }
    double r() const noexcept { return r_; }

private:
    double r_, inv_r_, rd_ = 0.0;
    GammaMT mt_;
};

// Unit vector uniform on S^{d-1}, written to out[0..d). The norm is taken of the stored (rounded)
// coordinates, so float outputs have unit norm in their own precision too.
template <class T>
inline void sphere_direction(Generator& g, T* out, std::size_t d) {
    for (;;) {
        double ss = 0.0;
        for (std::size_t j = 0; j < d; ++j) {
            out[j] = static_cast<T>(g.normal());
            ss += static_cast<double>(out[j]) * static_cast<double>(out[j]);
        }
        if (!(ss > 0.0)) continue;  // probability ~ 0; redraw rather than divide by zero
        const double inv = 1.0 / std::sqrt(ss);
        for (std::size_t j = 0; j < d; ++j) out[j] = static_cast<T>(static_cast<double>(out[j]) * inv);
        return;
    }
}

// ---- bulk forms: out[i] = T(f(chunk generator)) for i in [0, n), chunk by chunk ----------------------
template <class T, class F>
void fill(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, const F& f) {
    run_chunks(gen, plan, threads, [&](Generator& g, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) out[i] = static_cast<T>(f(g));
    });
}

// Rows of directions: out is n x d; chunks are counted in rows (plan made with rows_per_chunk(d)).
inline std::size_t sphere_rows_per_chunk(std::size_t d) {
    const std::size_t r = kFillChunk / (d == 0 ? 1 : d);
    return r == 0 ? 1 : r;
}

template <class T>
void fill_sphere(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, std::size_t d) {
    run_chunks(gen, plan, threads, [&](Generator& g, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) sphere_direction(g, out + i * d, d);
    });
}

}  // namespace pydp::random
