// Exact samplers for the Riemannian Gaussian and Laplace distributions on the model spaces.
//
// On a space of constant curvature the distance t = d(eta, Y) has density proportional to
//     exp(-t^2 / (2 sigma^2))  or  exp(-t / sigma),   times S(t)^k,  k = dim - 1,
// with S = sin on the sphere (t <= pi), sinh on hyperbolic space, S(t) = t on R^d; the direction of Y
// seen from eta is uniform and independent of t. Every such log-density is concave (log sin, log sinh
// and log t are concave), so t is drawn exactly by rejection from a fixed piecewise-exponential envelope
// built once: 128 boxes of equal width around the mode (upper and lower step functions, a generalised
// ziggurat: most draws are accepted by the lower step without evaluating the density) and tangent lines
// outside them (Gilks-Wild without the adaptation), pieces chosen by a Walker alias table.
// Then Y = exp_eta(t u) with u a uniform unit tangent vector.
//
// Pure C++17; templated on the generator (anything with uniform_open(), normal(), next_u64()).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "pydp/manifolds/geometry.hpp"
#include "pydp/special/constants.hpp"

namespace pydp::manifolds {

enum class RadialKind : int { Sin = 0, Sinh = 1, Linear = 2, None = 3 };
enum class Geometry : int { Sphere = 0, Hyperbolic = 1, Euclidean = 2, Circle = 3 };

struct RadialDensity {
    RadialKind kind = RadialKind::None;
    double k = 0.0;      // exponent of S(t): dim - 1
    double sigma = 1.0;  // rate
    bool laplace = false;
    double tmax = std::numeric_limits<double>::infinity();

    double log_s(double t) const noexcept {
        switch (kind) {
            case RadialKind::Sin: return std::log(std::sin(t));
            case RadialKind::Sinh: return t + std::log(-std::expm1(-2.0 * t)) - special::kLn2;
            case RadialKind::Linear: return std::log(t);
            default: return 0.0;
        }
    }
    double dlog_s(double t) const noexcept {
        switch (kind) {
            case RadialKind::Sin: return 1.0 / std::tan(t);
            case RadialKind::Sinh: return 1.0 / std::tanh(t);
            case RadialKind::Linear: return 1.0 / t;
            default: return 0.0;
        }
    }
    double logf(double t) const noexcept {
        const double base = laplace ? -t / sigma : -0.5 * (t / sigma) * (t / sigma);
        return k == 0.0 ? base : base + k * log_s(t);
    }
    double dlogf(double t) const noexcept {
        const double base = laplace ? -1.0 / sigma : -t / (sigma * sigma);
        return k == 0.0 ? base : base + k * dlog_s(t);
    }
};

class RadialSampler {
public:
    // mode: the maximiser of logf on [0, tmax]; scale: a length over which logf drops by O(1).
    RadialSampler(const RadialDensity& f, double mode, double scale) : f_(f) {
        if (!(f.sigma > 0.0) || !(scale > 0.0) || !(mode >= 0.0)) throw std::invalid_argument("bad radial density");
        // k >= 0 keeps the log-density concave, which the envelope relies on
        if (!(f.k >= 0.0 && std::isfinite(f.k)) || !(f.tmax > 0.0)) throw std::invalid_argument("bad radial density: needs k >= 0, tmax > 0");
        if (std::isfinite(f.tmax)) scale = std::min(scale, f.tmax / 8.0);  // keep tangent points inside
        build_tangents(mode, scale);
        gref_ = f.logf(mode);
        if (!std::isfinite(gref_)) gref_ = *std::max_element(g_.begin(), g_.end());
        // core [a, b] around the mode: kBoxes boxes of equal width (upper = max, lower = min of the
        // unimodal density on the box); outside it, the tangent-line envelope
        const double a = std::max(0.0, mode - 8.0 * scale);
        const double b = std::min(f.tmax, mode + 8.0 * scale);
        const double w = (b - a) / kBoxes;
        for (std::size_t i = 0; i < kBoxes && w > 0.0; ++i) {
            const double l = a + w * static_cast<double>(i), r = i + 1 == kBoxes ? b : l + w;
            const double fl = f.logf(l), fr = f.logf(r);
            const double up = (mode >= l && mode <= r) ? f.logf(mode) : std::max(fl, fr);
            Piece p;
            p.box = true;
            p.l = l;
            p.r = r;
            p.up = std::exp(up - gref_);
            p.lo = std::exp(std::min(fl, fr) - gref_);  // 0 where logf = -inf (t = 0 on S^d, H^d)
            p.mass = p.up * (r - l);
            add(p);
        }
        for (std::size_t i = 0; i < x_.size(); ++i) {  // tails: tangent pieces clipped to [0, a] and [b, tmax]
            add_tangent(i, z_[i], std::min(z_[i + 1], a));
            add_tangent(i, std::max(z_[i], b), z_[i + 1]);
        }
        build_alias();
    }

    template <class Rng>
    double operator()(Rng& rng) const {
        const double nn = static_cast<double>(pieces_.size());
        for (;;) {
            // Walker alias: one 53-bit uniform gives the column and the coin
            const double u = rng.uniform() * nn;
            const std::size_t col = std::min(static_cast<std::size_t>(u), pieces_.size() - 1);
            const std::size_t i = (u - static_cast<double>(col)) < prob_[col] ? col : alias_[col];
            const Piece& p = pieces_[i];
            if (p.box) {
                const double t = p.l + (p.r - p.l) * rng.uniform_open();
                const double v = rng.uniform_open() * p.up;
                if (v <= p.lo) return t;  // squeeze: no logf needed
                if (v <= std::exp(f_.logf(t) - gref_)) return t;
            } else {
                const double t = draw_in_piece(p, rng.uniform_open());
                if (-rng.exponential() <= f_.logf(t) - (p.g + p.lam * (t - p.x))) return t;
            }
        }
    }

    // Total mass of the envelope relative to exp(logf(mode)): the acceptance rate is Z / this.
    double envelope_mass() const noexcept { return total_; }

private:
    static constexpr std::size_t kBoxes = 128;

    struct Piece {
        bool box = false;
        double l = 0, r = 0, mass = 0;
        double up = 0, lo = 0;                // boxes (relative to exp(gref))
        double lam = 0, x = 0, g = 0, em = 0;  // tangent pieces: envelope g + lam (t - x)
    };

    void build_tangents(double mode, double scale) {
        static const double offsets[] = {-3.0, -2.0, -1.2, -0.6, -0.2, 0.2, 0.6, 1.2, 2.0, 3.0, 4.5, 7.0, 10.0};
        for (double c : offsets) {
            const double x = mode + c * scale;
            if (x > 0.0 && x < f_.tmax * (1.0 - 1e-12) && std::isfinite(f_.logf(x))) x_.push_back(x);
        }
        if (x_.empty()) throw std::invalid_argument("radial density: no tangent points");
        const std::size_t m = x_.size();
        for (double x : x_) {
            g_.push_back(f_.logf(x));
            s_.push_back(f_.dlogf(x));
        }
        if (!std::isfinite(f_.tmax) && !(s_.back() < 0.0)) throw std::invalid_argument("radial density: envelope not integrable");
        // breakpoints z_0 = 0 < z_1 < ... < z_m = tmax between consecutive tangents
        z_.assign(m + 1, 0.0);
        z_[m] = f_.tmax;
        for (std::size_t i = 0; i + 1 < m; ++i) {
            const double ds = s_[i] - s_[i + 1];
            double z = 0.5 * (x_[i] + x_[i + 1]);
            if (ds > 1e-12 * (std::fabs(s_[i]) + std::fabs(s_[i + 1]) + 1e-300))
                z = (g_[i + 1] - g_[i] - s_[i + 1] * x_[i + 1] + s_[i] * x_[i]) / ds;
            z_[i + 1] = std::min(std::max(z, x_[i]), x_[i + 1]);
        }
    }

    void add(const Piece& p) {
        if (!(p.mass > 0.0)) return;
        if (!std::isfinite(p.mass)) throw std::invalid_argument("radial density: bad envelope");
        pieces_.push_back(p);
    }

    void add_tangent(std::size_t i, double l, double r) {
        if (!(r > l)) return;
        Piece p;
        p.l = l;
        p.r = r;
        p.lam = s_[i];
        p.x = x_[i];
        p.g = g_[i];
        const double w = r - l, lam = p.lam;
        const double hl = p.g + lam * (l - p.x) - gref_;
        if (!std::isfinite(r)) {
            p.mass = std::exp(hl) / (-lam);
        } else if (std::fabs(lam) * w < 1e-12) {
            p.mass = std::exp(hl) * w;
        } else if (lam > 0.0) {
            p.em = -std::expm1(-lam * w);
            p.mass = std::exp(p.g + lam * (r - p.x) - gref_) * p.em / lam;
        } else {
            p.em = -std::expm1(lam * w);
            p.mass = std::exp(hl) * p.em / (-lam);
        }
        add(p);
    }

    void build_alias() {
        const std::size_t n = pieces_.size();
        if (n == 0) throw std::invalid_argument("radial density: empty envelope");
        total_ = 0.0;
        for (const Piece& p : pieces_) total_ += p.mass;
        prob_.assign(n, 0.0);
        alias_.assign(n, 0);
        std::vector<double> q(n);
        std::vector<std::size_t> small, large;
        for (std::size_t i = 0; i < n; ++i) {
            q[i] = pieces_[i].mass * static_cast<double>(n) / total_;
            (q[i] < 1.0 ? small : large).push_back(i);
        }
        while (!small.empty() && !large.empty()) {
            const std::size_t s = small.back(), l = large.back();
            small.pop_back();
            prob_[s] = q[s];
            alias_[s] = l;
            q[l] = (q[l] + q[s]) - 1.0;
            if (q[l] < 1.0) {
                large.pop_back();
                small.push_back(l);
            }
        }
        for (std::size_t i : large) { prob_[i] = 1.0; alias_[i] = i; }
        for (std::size_t i : small) { prob_[i] = 1.0; alias_[i] = i; }  // rounding leftovers
    }

    // Inverse CDF of the density proportional to exp(lam t) on [l, r].
    static double draw_in_piece(const Piece& p, double v) noexcept {
        const double l = p.l, r = p.r, lam = p.lam, w = r - l;
        double t;
        if (!std::isfinite(r)) {
            t = l + std::log(v) / lam;
        } else if (std::fabs(lam) * w < 1e-12) {
            t = l + v * w;
        } else if (lam > 0.0) {
            t = r + std::log1p(-(1.0 - v) * p.em) / lam;
        } else {
            t = l + std::log1p(-(1.0 - v) * p.em) / lam;
        }
        return std::min(std::max(t, l), r);
    }

    RadialDensity f_;
    std::vector<double> x_, g_, s_, z_;
    std::vector<Piece> pieces_;
    std::vector<double> prob_;
    std::vector<std::size_t> alias_;
    double gref_ = 0.0, total_ = 0.0;
};

// The codes and shapes sample_point relies on, checked once per batch by its callers (std::invalid_argument
// otherwise; sample_point itself stays check-free in the inner loop): a known geometry and radial kind, and
// a footpoint of n coordinates with a tangent basis of d columns, 1 <= d <= n (the circle: n = 1).
// With d = 0 the direction loop would never find a nonzero vector.
inline Geometry geometry_from_code(int code) {
    if (code < 0 || code > 3) throw std::invalid_argument("geometry code must be 0 (sphere), 1 (hyperbolic), 2 (Euclidean) or 3 (circle)");
    return static_cast<Geometry>(code);
}
inline RadialKind radial_kind_from_code(int code) {
    if (code < 0 || code > 3) throw std::invalid_argument("radial kind code must be 0 (sin), 1 (sinh), 2 (linear) or 3 (none)");
    return static_cast<RadialKind>(code);
}
inline void check_sample_dims(Geometry geo, std::size_t n, std::size_t d) {
    if (geo == Geometry::Circle) {
        if (n != 1) throw std::invalid_argument("the circle's footpoint is one angle");
        return;
    }
    if (!(d >= 1 && d <= n)) throw std::invalid_argument("the tangent basis needs between 1 and n columns for a footpoint of n coordinates");
}

// One point of exp_p(t u): p the footpoint (n coordinates), basis an n x d row-major matrix whose columns
// are an orthonormal basis of T_p M (for the circle n = d = 1 and the "basis" is unused); see
// check_sample_dims for the preconditions.
template <class Rng>
void sample_point(Geometry geo, const RadialSampler& radial, const double* p, const double* basis, std::size_t n,
                  std::size_t d, Rng& rng, double* out, double* scratch) {
    const double t = radial(rng);
    if (geo == Geometry::Circle) {
        const double sgn = (rng.next_u64() >> 63) ? 1.0 : -1.0;
        out[0] = wrap_angle(p[0] + sgn * t);
        return;
    }
    // uniform direction u in R^d
    double* u = scratch;
    if (d == 1) {
        u[0] = (rng.next_u64() >> 63) ? 1.0 : -1.0;
    } else if (d == 2) {
        // uniform angle without trigonometry: a point in the unit disc by rejection from the square
        // (two 32-bit halves of one word), then (x^2 - y^2, 2xy) / (x^2 + y^2) = (cos 2a, sin 2a).
        double x, y, r2;
        do {
            const std::uint64_t w = rng.next_u64();
            x = (static_cast<double>(w >> 32) + 0.5) * 0x1.0p-31 - 1.0;
            y = (static_cast<double>(w & 0xffffffffu) + 0.5) * 0x1.0p-31 - 1.0;
            r2 = x * x + y * y;
        } while (!(r2 <= 1.0) || !(r2 > 0.0));
        u[0] = (x * x - y * y) / r2;
        u[1] = 2.0 * x * y / r2;
    } else {
        double r2 = 0.0;
        do {
            r2 = 0.0;
            for (std::size_t j = 0; j < d; ++j) {
                u[j] = rng.normal();
                r2 += u[j] * u[j];
            }
        } while (!(r2 > 0.0));
        const double ir = 1.0 / std::sqrt(r2);
        for (std::size_t j = 0; j < d; ++j) u[j] *= ir;
    }
    double a = 0.0, b = 0.0;
    switch (geo) {
        case Geometry::Sphere: a = std::cos(t); b = std::sin(t); break;
        case Geometry::Hyperbolic: a = std::cosh(t); b = std::sinh(t); break;
        default: a = 1.0; b = t; break;
    }
    for (std::size_t i = 0; i < n; ++i) {
        double dir = 0.0;
        const double* row = basis + i * d;
        for (std::size_t j = 0; j < d; ++j) dir += row[j] * u[j];
        out[i] = a * p[i] + b * dir;
    }
    if (geo == Geometry::Hyperbolic) hyp_complete(out, n);
}

}  // namespace pydp::manifolds
