// Exact samplers for the Riemannian Gaussian and Laplace distributions on the model spaces.
//
// On a space of constant curvature the distance t = d(eta, Y) has density proportional to
//     exp(-t^2 / (2 sigma^2))  or  exp(-t / sigma),   times S(t)^k,  k = dim - 1,
// with S = sin on the sphere (t <= pi), sinh on hyperbolic space, S(t) = t on R^d; the direction of Y
// seen from eta is uniform and independent of t. Every such log-density is concave (log sin, log sinh
// and log t are concave), so t is drawn exactly by rejection from a fixed piecewise-exponential envelope
// made of tangent lines (Gilks-Wild without the adaptation): the envelope is built once, each proposal
// costs three uniforms, and acceptance is above 90% with the twelve tangents used here.
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
            case RadialKind::Sinh: return t + std::log(-std::expm1(-2.0 * t)) - kLn2;
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

    static constexpr double kLn2 = 0.69314718055994530942;
};

class RadialSampler {
public:
    // mode: the maximiser of logf on [0, tmax]; scale: a length over which logf drops by O(1).
    RadialSampler(const RadialDensity& f, double mode, double scale) : f_(f) {
        if (!(f.sigma > 0.0) || !(scale > 0.0) || !(mode >= 0.0)) throw std::invalid_argument("bad radial density");
        static const double offsets[] = {-3.0, -2.0, -1.2, -0.6, -0.2, 0.2, 0.6, 1.2, 2.0, 3.0, 4.5, 7.0};
        for (double c : offsets) {
            const double x = mode + c * scale;
            if (x > 0.0 && x < f.tmax * (1.0 - 1e-12) && std::isfinite(f.logf(x))) x_.push_back(x);
        }
        if (x_.empty()) throw std::invalid_argument("radial density: no tangent points");
        const std::size_t m = x_.size();
        for (double x : x_) {
            g_.push_back(f.logf(x));
            s_.push_back(f.dlogf(x));
        }
        if (!std::isfinite(f.tmax) && !(s_.back() < 0.0)) throw std::invalid_argument("radial density: envelope not integrable");
        // breakpoints z_0 = 0 < z_1 < ... < z_m = tmax between consecutive tangents
        z_.assign(m + 1, 0.0);
        z_[m] = f.tmax;
        for (std::size_t i = 0; i + 1 < m; ++i) {
            const double ds = s_[i] - s_[i + 1];
            double z = 0.5 * (x_[i] + x_[i + 1]);
            if (ds > 1e-12 * (std::fabs(s_[i]) + std::fabs(s_[i + 1]) + 1e-300))
                z = (g_[i + 1] - g_[i] - s_[i + 1] * x_[i + 1] + s_[i] * x_[i]) / ds;
            z_[i + 1] = std::min(std::max(z, x_[i]), x_[i + 1]);
        }
        gref_ = *std::max_element(g_.begin(), g_.end());
        em_.assign(m, 0.0);
        for (std::size_t i = 0; i < m; ++i) {
            const double w = z_[i + 1] - z_[i];
            if (std::isfinite(w)) em_[i] = -std::expm1(-std::fabs(s_[i]) * w);  // 1 - e^{-|lam| w}
        }
        cum_.assign(m, 0.0);
        double total = 0.0;
        for (std::size_t i = 0; i < m; ++i) {
            total += piece_mass(i);
            cum_[i] = total;
        }
        total_ = total;
        if (!(total > 0.0) || !std::isfinite(total)) throw std::invalid_argument("radial density: bad envelope");
    }

    double envelope(std::size_t i, double t) const noexcept { return g_[i] + s_[i] * (t - x_[i]); }

    // Lower bound of logf at t from the chords between tangent points (-inf outside them).
    double squeeze(std::size_t i, double t) const noexcept {
        if ((t < x_[i] && i == 0) || (t >= x_[i] && i + 1 >= x_.size())) return -std::numeric_limits<double>::infinity();
        const std::size_t c = t < x_[i] ? i - 1 : i;
        return g_[c] + (g_[c + 1] - g_[c]) * ((t - x_[c]) / (x_[c + 1] - x_[c]));
    }

    template <class Rng>
    double operator()(Rng& rng) const {
        for (;;) {
            const double u = rng.uniform_open() * total_;
            std::size_t i = 0;
            while (i + 1 < cum_.size() && u >= cum_[i]) ++i;
            const double t = draw_in_piece(i, rng.uniform_open());
            const double lv = -rng.exponential();  // log of a uniform
            const double h = envelope(i, t);
            if (lv <= squeeze(i, t) - h) return t;  // squeeze: no log sin needed
            if (lv <= f_.logf(t) - h) return t;
        }
    }

    // Expected proposals per accepted draw is total / Z; exposed for the tests of the envelope.
    double envelope_mass() const noexcept { return total_; }
    double reference_log() const noexcept { return gref_; }

private:
    double piece_mass(std::size_t i) const {
        const double l = z_[i], r = z_[i + 1], lam = s_[i], w = r - l;
        if (!(w > 0.0)) return 0.0;
        if (!std::isfinite(r)) return std::exp(envelope(i, l) - gref_) / (-lam);
        if (std::fabs(lam) * w < 1e-12) return std::exp(envelope(i, l) - gref_) * w;
        if (lam > 0.0) return std::exp(envelope(i, r) - gref_) * (-std::expm1(-lam * w)) / lam;
        return std::exp(envelope(i, l) - gref_) * (-std::expm1(lam * w)) / (-lam);
    }

    // Inverse CDF of the density proportional to exp(lam t) on [l, r].
    double draw_in_piece(std::size_t i, double v) const noexcept {
        const double l = z_[i], r = z_[i + 1], lam = s_[i], w = r - l;
        double t;
        if (!std::isfinite(r)) {
            t = l + std::log(v) / lam;
        } else if (std::fabs(lam) * w < 1e-12) {
            t = l + v * w;
        } else if (lam > 0.0) {
            t = r + std::log1p(-(1.0 - v) * em_[i]) / lam;
        } else {
            t = l + std::log1p(-(1.0 - v) * em_[i]) / lam;
        }
        return std::min(std::max(t, l), r);
    }

    RadialDensity f_;
    std::vector<double> x_, g_, s_, z_, cum_, em_;
    double gref_ = 0.0, total_ = 0.0;
};

// One point of exp_p(t u): p the footpoint (n coordinates), basis an n x d row-major matrix whose columns
// are an orthonormal basis of T_p M (for the circle n = d = 1 and the "basis" is unused).
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
