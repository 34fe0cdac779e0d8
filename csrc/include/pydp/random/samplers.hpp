// Samplers on top of pydp::random::Generator: scalar (sequential) forms and bulk (chunked, tiled,
// multi-threaded) forms. Conventions follow numpy: loc + scale * X for a standard variate X.
//
// * normal: ziggurat (ziggurat.hpp).
// * laplace: sign * exponential, the exponential by ziggurat and the sign from an unused bit of its word.
// * logistic: inversion, |X| = log1p(2 (1 - u) / u) for u uniform on (0, 1), and an independent sign.
// * gamma(shape): Marsaglia and Tsang (2000); for shape < 1, Gamma(shape + 1) * U^(1 / shape).
// * subbotin(r): X = sign * (r G)^(1/r) with G ~ Gamma(1/r) (the density ~ e^{-|x|^r / r} makes |X|^r / r
//   a Gamma(1/r) variate). With the boost
//   G = Gamma(1/r + 1) * U^r this is X = sign * U * (r d v)^(1/r), where d v is the Marsaglia-Tsang draw
//   of Gamma(1/r + 1): U^r is never formed, so nothing underflows for large r. With v = t^3 this is
//   (r d)^(1/r) t^(3/r): for r = 3, 1.5 and 6 a product or a sqrt, with no exp or log. r = 1 and r = 2 use
//   the Laplace and normal samplers (the same distributions).
// * arsinh_normal(A, sigma): A * asinh(sigma Z / A) (the tCDP mechanism of Bun et al. 2018).
// * sphere(d): a normal vector divided by its norm.
//
// Bulk layout (what a seeded stream's output is a function of): the output is cut into chunks of
// kFillChunk values (chunk c of a call uses generator chunk first + c); a chunk generator is split into
// a primary half and an extra half (Generator::split_upper); the chunk is processed in tiles of kTile
// values; value j of a tile takes its fixed words from the primary half (normal, laplace, exponential,
// uniform, logistic: word j of the tile; gamma and subbotin: words j, m + j and 2m + j of a 3m-word
// tile), and every rejection step draws from the extra half, in index order.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "pydp/random/bulk.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/random/tiles.hpp"

namespace pydp::random {

// ---- scalar samplers --------------------------------------------------------------------------------
inline double laplace_from(Generator& g, std::uint64_t w) {
    const double x = ziggurat_exponential_from(g, w);  // reads bits 0-7 and 11-63 of w only
    return ((w >> 8) & 1) ? -x : x;
}
inline double laplace(Generator& g) { return laplace_from(g, g.next_u64()); }

inline double logistic_from(std::uint64_t w) {
    const std::uint32_t pair[2] = {static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(w >> 32)};
    double x;
    detail::logistic_body(pair, &x, 1);  // the bulk sampler's formula, so both give the same bits
    return x;
}
inline double logistic(Generator& g) { return logistic_from(g.next_u64()); }

// Marsaglia-Tsang for Gamma(alpha), alpha >= 1: d v ~ Gamma(alpha) with v = t^3, t = 1 + c z. The
// samplers carry t (an accepted t > 0) and form v where they need it.
struct GammaMT {
    double d, c;
    explicit GammaMT(double alpha) : d(alpha - 1.0 / 3.0), c(1.0 / std::sqrt(9.0 * (alpha - 1.0 / 3.0))) {}
    // One attempt from a normal z and a uniform u in (0, 1); returns t > 0 on acceptance, 0 on rejection.
    double attempt(double z, double u) const {
        const double t = 1.0 + c * z;
        if (t <= 0.0) return 0.0;
        const double v = t * t * t;
        const double z2 = z * z;
        if (u < 1.0 - 0.0331 * (z2 * z2)) return t;
        if (detail::det_log(u) < 0.5 * z2 + d * (1.0 - v + detail::det_log(v))) return t;
        return 0.0;
    }
    double draw_t(Generator& g) const {
        for (;;) {
            const double z = g.normal();
            const double t = attempt(z, g.uniform_open());
            if (t > 0.0) return t;
        }
    }
};

inline double open_from(std::uint64_t w) { return (small_to_double(w >> 12) + 0.5) * 0x1.0p-52; }

class GammaSampler {
public:
    explicit GammaSampler(double shape)
        : boost_(shape < 1.0), inv_shape_(1.0 / shape), mt_(check(shape) < 1.0 ? shape + 1.0 : shape) {}
    // Gamma from an accepted t and the boost word w.
    double finish(double t, std::uint64_t w) const {
        const double x = mt_.d * (t * t * t);
        return boost_ ? x * std::pow(open_from(w), inv_shape_) : x;
    }
    double operator()(Generator& g) const { return finish(mt_.draw_t(g), g.next_u64()); }
    void finish_tile(const TileOps&, const double* t, const std::uint32_t* wf, double* x, std::size_t m) const {
        for (std::size_t j = 0; j < m; ++j) x[j] = finish(t[j], detail::word_at(wf, j));
    }
    const GammaMT& mt() const noexcept { return mt_; }

private:
    static double check(double shape) {
        if (!(shape > 0.0) || !std::isfinite(shape)) throw std::invalid_argument("gamma shape must be finite and > 0");
        return shape;
    }
    bool boost_;
    double inv_shape_;
    GammaMT mt_;
};

class SubbotinSampler {
public:
    explicit SubbotinSampler(double r)
        : r_(check(r)), inv_r_(1.0 / r), mt_(1.0 / r + 1.0), log_rd_(std::log(r * mt_.d)),
          power_(r == 3.0 ? 1 : r == 1.5 ? 2 : r == 6.0 ? 0 : -1), k_(std::pow(r * mt_.d, 1.0 / r)) {}
    // Subbotin from an accepted t and the word w (uniform factor and sign): (r d v)^(1/r) with v = t^3,
    // either exp((log(r d) + log v) / r) with the project's own exp and log (tiles.hpp) or, for
    // r = 3, 1.5 and 6, (r d)^(1/r) t^(3/r) by products and sqrt; so the scalar and vectorised forms agree
    // bit for bit.
    double finish(double t, std::uint64_t w) const {
        double out;
        std::uint32_t pair[2] = {static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(w >> 32)};
        if (power_ >= 0) detail::subbotin_finish_pow_body(&t, pair, k_, power_, &out, 1);
        else detail::subbotin_finish_body(&t, pair, log_rd_, inv_r_, &out, 1);
        return out;
    }
    void finish_tile(const TileOps& ops, const double* t, const std::uint32_t* wf, double* x, std::size_t m) const {
        if (power_ >= 0) ops.subbotin_finish_pow(t, wf, k_, power_, x, m);
        else ops.subbotin_finish(t, wf, log_rd_, inv_r_, x, m);
    }
    double operator()(Generator& g) const {
        if (r_ == 1.0) return laplace(g);
        if (r_ == 2.0) return g.normal();
        return finish(mt_.draw_t(g), g.next_u64());
    }
    double r() const noexcept { return r_; }
    const GammaMT& mt() const noexcept { return mt_; }

private:
    static double check(double r) {
        if (!(r >= 1.0) || !std::isfinite(r)) throw std::invalid_argument("subbotin order r must be finite and >= 1");
        return r;
    }
    double r_, inv_r_;
    GammaMT mt_;
    double log_rd_;
    int power_;  // 3/r when it is 1 or 2, 0 for 3/r = 1/2, -1 otherwise (the exp/log form)
    double k_;   // (r d)^(1/r)
};

// Calls fn(j) for every set bit j of the tile's rejection mask, in increasing order.
template <class Fn>
inline void for_each_rejected(const std::uint64_t* rej, Fn&& fn) {
    for (std::size_t q = 0; q < detail::kMaskWords; ++q)
        for (std::uint64_t bits = rej[q]; bits != 0; bits &= bits - 1)
            fn(64 * q + static_cast<std::size_t>(__builtin_ctzll(bits)));
}

// Unit vector uniform on S^{d-1} from the sequential stream of g, written to out[0..d). The norm is taken
// of the stored (rounded) coordinates, so float outputs have unit norm in their own precision too.
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

// Generic bulk form for any per-value sampler f(Generator&) -> double (sequential within each chunk; no
// vectorised fast path): out[i] = T(f(chunk generator)).
template <class T, class F>
void fill(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, const F& f) {
    run_chunks(gen, plan, threads, [&](Generator& g, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) out[i] = static_cast<T>(f(g));
    });
}

// ---- tile bodies: x[0..m) standard variates from the primary generator p and the extra generator e ----
struct NormalTile {
    void operator()(const TileOps& ops, Generator& p, Generator& e, double* x, std::size_t m) const {
        alignas(64) std::uint32_t words[2 * kTile];
        std::uint64_t rej[detail::kMaskWords] = {0, 0, 0, 0};
        p.take_blocks(words, (m + 7) / 8);
        ops.zig_signed(words, x, rej, m, normal_table());
        for_each_rejected(rej, [&](std::size_t j) {
            const std::uint64_t w = detail::word_at(words, j);
            const double a = ziggurat_normal_abs(e, w);
            x[j] = ((w >> 8) & 1) ? -a : a;
        });
    }
};

template <bool Signed>
struct ExpTile {  // Signed: Laplace
    void operator()(const TileOps& ops, Generator& p, Generator& e, double* x, std::size_t m) const {
        alignas(64) std::uint32_t words[2 * kTile];
        std::uint64_t rej[detail::kMaskWords] = {0, 0, 0, 0};
        p.take_blocks(words, (m + 7) / 8);
        if (Signed) ops.zig_signed(words, x, rej, m, exponential_table());
        else ops.zig_unsigned(words, x, rej, m, exponential_table());
        for_each_rejected(rej, [&](std::size_t j) {
            const std::uint64_t w = detail::word_at(words, j);
            x[j] = Signed ? laplace_from(e, w) : ziggurat_exponential_from(e, w);
        });
    }
};

struct UniformTile {
    void operator()(const TileOps& ops, Generator& p, Generator&, double* x, std::size_t m) const {
        alignas(64) std::uint32_t words[2 * kTile];
        p.take_blocks(words, (m + 7) / 8);
        ops.uniform(words, x, m);
    }
};

struct LogisticTile {
    void operator()(const TileOps& ops, Generator& p, Generator&, double* x, std::size_t m) const {
        alignas(64) std::uint32_t words[2 * kTile];
        p.take_blocks(words, (m + 7) / 8);
        ops.logistic(words, x, m);
    }
};

// Marsaglia-Tsang in tiles (arrays hold t, see GammaMT): words [0, m) give the normals, [m, 2m) the acceptance uniforms, [2m, 3m)
// the finishing words (boost / uniform factor and sign). The squeeze test runs vectorised; values that
// fail it take the exact log test, and a value rejected by that restarts from the extra stream.
template <class Sampler>
struct GammaTile {
    const Sampler& s;
    void operator()(const TileOps& ops, Generator& p, Generator& e, double* x, std::size_t m) const {
        alignas(64) std::uint32_t words[6 * kTile];
        std::uint64_t rej[detail::kMaskWords] = {0, 0, 0, 0};
        alignas(64) unsigned char fail[kTile];
        alignas(64) double z[kTile];
        alignas(64) double t[kTile];
        p.take_blocks(words, (3 * m + 7) / 8);
        ops.zig_signed(words, z, rej, m, normal_table());
        for_each_rejected(rej, [&](std::size_t j) {
            const std::uint64_t w = detail::word_at(words, j);
            const double a = ziggurat_normal_abs(e, w);
            z[j] = ((w >> 8) & 1) ? -a : a;
        });
        const GammaMT& mt = s.mt();
        const std::uint32_t* wu = words + 2 * m;
        const std::uint32_t* wf = words + 4 * m;
        ops.mt_squeeze(z, wu, mt.c, t, fail, m);
        // Values that failed the squeeze (about one in ten): compact them, run the exact test vectorised,
        // and restart the rejected ones from the extra stream, in index order.
        alignas(64) double zf[kTile], uf[kTile], tf[kTile];
        alignas(64) unsigned char okf[kTile];
        std::uint16_t idx[kTile];
        std::size_t nf = 0;
        for (std::size_t q = 0; q < m; q += 8) {  // skip eight clean values at a time
            std::uint64_t eight = 0;
            std::memcpy(&eight, fail + q, std::min<std::size_t>(8, m - q));
            if (eight == 0) continue;
            for (std::size_t j = q; j < std::min(q + 8, m); ++j)
                if (fail[j]) {
                    idx[nf] = static_cast<std::uint16_t>(j);
                    zf[nf] = z[j];
                    uf[nf] = open_from(detail::word_at(wu, j));
                    tf[nf] = t[j];
                    ++nf;
                }
        }
        ops.mt_logtest(zf, uf, tf, mt.d, okf, nf);
        for (std::size_t k = 0; k < nf; ++k)
            if (!okf[k]) t[idx[k]] = mt.draw_t(e);
        s.finish_tile(ops, t, wf, x, m);
    }
};
// Runs a tile body over the bulk plan; store(ops, x, out + begin, m) writes each tile's m values.
template <class T, class Body, class Store>
void fill_tiled_with(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, const Body& body,
                     const Store& store) {
    const TileOps ops = tile_ops(gen.impl());
    run_chunks(gen, plan, threads, [&](Generator& g, std::size_t b, std::size_t e) {
        Generator extra = g.split_upper();
        alignas(64) double x[kTile];
        for (std::size_t s = b; s < e; s += kTile) {
            const std::size_t m = std::min(kTile, e - s);
            body(ops, g, extra, x, m);
            store(ops, x, out + s, m);
        }
    });
}

// out = T(loc + scale * x). A float64 output is written in place (no copy through the tile buffer).
template <class T, class Body>
void fill_tiled(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, double loc, double scale,
                const Body& body) {
    if constexpr (std::is_same_v<T, double>) {
        const TileOps ops = tile_ops(gen.impl());
        const bool identity = loc == 0.0 && scale == 1.0;
        run_chunks(gen, plan, threads, [&](Generator& g, std::size_t b, std::size_t e) {
            Generator extra = g.split_upper();
            for (std::size_t s = b; s < e; s += kTile) {
                const std::size_t m = std::min(kTile, e - s);
                body(ops, g, extra, out + s, m);
                if (!identity) ops.affine(out + s, out + s, m, loc, scale);
            }
        });
    } else {
        fill_tiled_with(gen, plan, threads, out, body, [loc, scale](const TileOps& ops, const double* x, T* o, std::size_t m) {
            ops.affine(x, o, m, loc, scale);
        });
    }
}

// out = T(post(x)).
template <class T, class Body, class Post>
void fill_tiled_post(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, const Body& body,
                     const Post& post) {
    fill_tiled_with(gen, plan, threads, out, body, [&post](const TileOps&, const double* x, T* o, std::size_t m) {
        for (std::size_t j = 0; j < m; ++j) o[j] = static_cast<T>(post(x[j]));
    });
}

// ---- directions on the sphere -----------------------------------------------------------------------
inline std::size_t sphere_rows_per_chunk(std::size_t d) {
    const std::size_t r = kFillChunk / (d == 0 ? 1 : d);
    return r == 0 ? 1 : r;
}

// out is rows x d; the plan counts rows. Normals come in tiles (NormalTile) row-major over the chunk; a
// row whose stored norm is 0 (probability ~ 0) is redrawn from the extra stream.
template <class T>
void fill_sphere(const Generator& gen, const ChunkPlan& plan, unsigned threads, T* out, std::size_t d) {
    const TileOps ops = tile_ops(gen.impl());
    run_chunks(gen, plan, threads, [&](Generator& g, std::size_t rb, std::size_t re) {
        Generator extra = g.split_upper();
        const std::size_t n = (re - rb) * d;
        T* o = out + rb * d;
        alignas(64) double x[kTile];
        for (std::size_t s = 0; s < n; s += kTile) {
            const std::size_t m = std::min(kTile, n - s);
            NormalTile{}(ops, g, extra, x, m);
            for (std::size_t j = 0; j < m; ++j) o[s + j] = static_cast<T>(x[j]);
        }
        for (std::size_t r = 0; r < re - rb; ++r) {
            T* row = o + r * d;
            for (;;) {
                double ss = 0.0;
                for (std::size_t j = 0; j < d; ++j) ss += static_cast<double>(row[j]) * static_cast<double>(row[j]);
                if (ss > 0.0) {
                    const double inv = 1.0 / std::sqrt(ss);
                    for (std::size_t j = 0; j < d; ++j) row[j] = static_cast<T>(static_cast<double>(row[j]) * inv);
                    break;
                }
                for (std::size_t j = 0; j < d; ++j) row[j] = static_cast<T>(extra.normal());
            }
        }
    });
}

}  // namespace pydp::random
