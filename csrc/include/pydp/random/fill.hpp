// Bulk draws by name: one validated description of a bulk sampling call (the family, its parameters and
// the rules they must satisfy) and the dispatch to the tiled samplers of samplers.hpp. The Python binding
// (csrc/bind_random.cpp) and the C ABI (csrc/capi.cpp) both go through BulkDraw, so a seeded generator
// gives the same values through either.
//
// Usage: `BulkDraw d = BulkDraw::normal(loc, scale);` (throws std::invalid_argument for bad parameters),
// `ChunkPlan p = plan_chunks(gen, n);` (moves gen: one thread), then `d.fill(gen, p, threads, out)`
// (reads gen only; may run without the Python GIL). Output: out[i] = loc + scale * X_i as float64 or
// float32, identical for every thread count.
#pragma once
#include <cmath>
#include <stdexcept>
#include <string>

#include "pydp/random/samplers.hpp"

namespace pydp::random {

inline void check_finite(double v, const char* name) {
    if (!std::isfinite(v)) throw std::invalid_argument(std::string(name) + " must be finite");
}
inline void check_scale(double v, const char* name) {
    if (!(v >= 0.0) || !std::isfinite(v)) throw std::invalid_argument(std::string(name) + " must be finite and >= 0");
}

class BulkDraw {
public:
    enum class Dist { Normal, Laplace, Logistic, Exponential, Uniform, Gamma, Subbotin };

    static BulkDraw normal(double loc, double scale) { return affine(Dist::Normal, loc, scale); }
    static BulkDraw laplace(double loc, double scale) { return affine(Dist::Laplace, loc, scale); }
    static BulkDraw logistic(double loc, double scale) { return affine(Dist::Logistic, loc, scale); }
    static BulkDraw exponential(double scale) { return affine(Dist::Exponential, 0.0, scale); }
    // Uniform on [low, high): low + (high - low) U.
    static BulkDraw uniform(double low, double high) {
        check_finite(low, "low");
        check_finite(high, "high");
        check_finite(high - low, "high - low");
        return BulkDraw(Dist::Uniform, low, high - low, 0.0);
    }
    static BulkDraw gamma(double shape, double scale) {
        (void)GammaSampler{shape};  // validates the shape
        BulkDraw d = affine(Dist::Gamma, 0.0, scale);
        d.shape_ = shape;
        return d;
    }
    static BulkDraw subbotin(double r, double loc, double scale) {
        (void)SubbotinSampler{r};  // validates r
        BulkDraw d = affine(Dist::Subbotin, loc, scale);
        d.shape_ = r;
        return d;
    }

    Dist dist() const noexcept { return dist_; }

    template <class T>
    void fill(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out) const {
        switch (dist_) {
            case Dist::Normal: return fill_tiled(gen, plan, threads, out, loc_, scale_, NormalTile{});
            case Dist::Laplace: return fill_tiled(gen, plan, threads, out, loc_, scale_, ExpTile<true>{});
            case Dist::Logistic: return fill_tiled(gen, plan, threads, out, loc_, scale_, LogisticTile{});
            case Dist::Exponential: return fill_tiled(gen, plan, threads, out, loc_, scale_, ExpTile<false>{});
            case Dist::Uniform: return fill_tiled(gen, plan, threads, out, loc_, scale_, UniformTile{});
            case Dist::Gamma: {
                const GammaSampler s(shape_);
                return fill_tiled(gen, plan, threads, out, loc_, scale_, GammaTile<GammaSampler>{s});
            }
            case Dist::Subbotin: {
                // r = 1 and r = 2 are the Laplace and normal distributions: their samplers serve them.
                if (shape_ == 1.0) return fill_tiled(gen, plan, threads, out, loc_, scale_, ExpTile<true>{});
                if (shape_ == 2.0) return fill_tiled(gen, plan, threads, out, loc_, scale_, NormalTile{});
                const SubbotinSampler s(shape_);
                return fill_tiled(gen, plan, threads, out, loc_, scale_, GammaTile<SubbotinSampler>{s});
            }
        }
    }

private:
    BulkDraw(Dist dist, double loc, double scale, double shape) : dist_(dist), loc_(loc), scale_(scale), shape_(shape) {}
    static BulkDraw affine(Dist dist, double loc, double scale) {
        check_finite(loc, "loc");
        check_scale(scale, "scale");
        return BulkDraw(dist, loc, scale, 0.0);
    }
    Dist dist_;
    double loc_, scale_, shape_;
};

}  // namespace pydp::random
