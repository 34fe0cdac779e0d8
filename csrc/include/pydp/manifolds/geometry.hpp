// Geodesic geometry of the constant-curvature model spaces, one point per row of length n.
//
// - Circle: points are angles (any finite real, read modulo 2 pi); outputs are reduced to [-pi, pi].
// - Sphere S^d: unit vectors in R^(d+1). Distance atan2(|x| |r|, x.y) with r the part of y orthogonal
//   to x, projected twice (accurate for nearly equal and nearly antipodal points, unlike arccos of a dot
//   product, and exact for the directions of the given rows).
// - Hyperbolic H^d, hyperboloid model {x : -x0^2 + |xs|^2 = -1, x0 > 0} in R^(d+1). The spatial part xs
//   carries the point; x0 is checked by the caller and recomputed as sqrt(1 + |xs|^2) here, so the result
//   is the exact distance between the points with those spatial coordinates. With D = xs - ys,
//   W = |xs ^ ys| = |xs ^ D| (wedge norm) and s = sinh^2(d / 2):
//       s = (|D|^2 + W^2) / (2 + 2 x0 y0 + 2 xs.ys),
//   a ratio of sums of non-negative terms when xs.ys >= 0; when xs.ys < 0 and cosh d = x0 y0 - xs.ys >= 2
//   the point pair is far apart and acosh of that (cancellation-free) sum is used instead.
// No pybind11 here; the bindings validate shapes. Pure functions, no state.
#pragma once
#include <cmath>
#include <cstddef>

#include "pydp/special/constants.hpp"

namespace pydp::manifolds {

using special::kPi;
using special::kTwoPiHi;  // double(2 pi)
using special::kTwoPiLo;  // 2 pi - kTwoPiHi

// ---------------------------------------------------------------------------------------------------
// Circle
// ---------------------------------------------------------------------------------------------------
// x reduced to [-pi, pi] with 2 pi split in two parts (Cody-Waite), so large multiples cost no digits.
inline double wrap_angle(double x) noexcept {
    if (x >= -kPi && x <= kPi) return x;
    const double k = std::nearbyint(x / kTwoPiHi);
    double r = std::fma(-k, kTwoPiHi, x);
    r = std::fma(-k, kTwoPiLo, r);
    if (r > kPi) r -= kTwoPiHi;  // rounding at the boundary
    if (r < -kPi) r += kTwoPiHi;
    return r;
}

inline double circle_dist(double a, double b) noexcept { return std::fabs(wrap_angle(b - a)); }

// ---------------------------------------------------------------------------------------------------
// Small vector helpers
// ---------------------------------------------------------------------------------------------------
inline double dot(const double* a, const double* b, std::size_t n) noexcept {
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

inline double norm(const double* a, std::size_t n) noexcept {
    // Scaled only when needed: sphere rows have norm ~1, hyperbolic rows stay far below overflow.
    return std::sqrt(dot(a, a, n));
}

// |a ^ b|^2 = sum_{i<j} (a_i b_j - a_j b_i)^2, without the cancellation of |a|^2 |b|^2 - (a.b)^2.
inline double wedge2(const double* a, const double* b, std::size_t n) noexcept {
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const double m = std::fma(a[i], b[j], -a[j] * b[i]);
            s += m * m;
        }
    return s;
}

// ---------------------------------------------------------------------------------------------------
// Sphere S^(n-1) in R^n
// ---------------------------------------------------------------------------------------------------
inline bool sphere_on(const double* x, std::size_t n, double atol) noexcept {
    const double r = norm(x, n);
    return std::isfinite(r) && std::fabs(r - 1.0) <= atol;
}

// |p.v| small relative to |v|: v is tangent at p.
inline bool sphere_tangent(const double* p, const double* v, std::size_t n, double atol) noexcept {
    const double pv = dot(p, v, n), nv = norm(v, n);
    return std::isfinite(nv) && std::fabs(pv) <= atol * (nv > 1.0 ? nv : 1.0);
}

// The angle between x and y (scale-free, so rows within atol of the sphere are read as their
// directions): r = y - c x with c = x.y / |x|^2 (fma), then a second projection removes the x-component
// that the rounding of c leaves behind, so |r| = |y| sin(theta) to a few ulp even when theta is 1e-12 or
// pi - 1e-12; theta = atan2(|x| |r|, x.y). `sums` (optional) receives |x|^2 and |y|^2 for the checks.
// N > 0: the row length is a compile-time constant (unrolled loops); N = 0: runtime length n.
template <std::size_t N>
inline double sphere_dist_n(const double* x, const double* y, std::size_t n, double* sums) noexcept {
    const std::size_t m = N ? N : n;
    double xx = 0.0, yy = 0.0, xy = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
        xx += x[i] * x[i];
        yy += y[i] * y[i];
        xy += x[i] * y[i];
    }
    if (sums) {
        sums[0] = xx;
        sums[1] = yy;
    }
    const double inv = 1.0 / xx;
    const double c = xy * inv;
    double xr = 0.0, rr = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
        const double ri = std::fma(-c, x[i], y[i]);
        xr += x[i] * ri;
        rr += ri * ri;
    }
    // The rounding of c leaves a component eps x in r, which adds (eps |x|)^2 to |r|^2: negligible unless
    // |r| is tiny (theta or pi - theta below ~1e-4); then a second projection removes it.
    if (rr < 1e-8 * xx * yy) {
        const double c2 = xr * inv;
        rr = 0.0;
        for (std::size_t i = 0; i < m; ++i) {
            const double ri = std::fma(-c2, x[i], std::fma(-c, x[i], y[i]));
            rr += ri * ri;
        }
    }
    return std::atan2(std::sqrt(xx * rr), xy);
}

inline double sphere_dist(const double* x, const double* y, std::size_t n, double* sums = nullptr) noexcept {
    switch (n) {
        case 2: return sphere_dist_n<2>(x, y, n, sums);
        case 3: return sphere_dist_n<3>(x, y, n, sums);
        case 4: return sphere_dist_n<4>(x, y, n, sums);
        default: return sphere_dist_n<0>(x, y, n, sums);
    }
}

inline bool unit_norm2(double r2, double atol) noexcept {
    // |sqrt(r2) - 1| <= atol without the square root: (r2 - 1) / (sqrt(r2) + 1), bounded below by 1
    return std::isfinite(r2) && std::fabs(r2 - 1.0) <= atol * (1.0 + std::sqrt(r2));
}

// exp_p(v) = cos|v| p + sin|v| v / |v| (v projected on the tangent space first); result renormalised.
inline void sphere_exp(const double* p, const double* v, double* out, std::size_t n) noexcept {
    const double pv = dot(p, v, n);
    double t2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double w = v[i] - pv * p[i];
        t2 += w * w;
    }
    const double t = std::sqrt(t2);
    const double c = std::cos(t), sc = t < 1e-8 ? 1.0 - t2 / 6.0 : std::sin(t) / t;
    double r2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = c * p[i] + sc * (v[i] - pv * p[i]);
        r2 += out[i] * out[i];
    }
    const double ir = 1.0 / std::sqrt(r2);
    for (std::size_t i = 0; i < n; ++i) out[i] *= ir;
}

// log_p(q) = theta w / |w|, w the tangent part of q at p; formed from q - p (theta < pi/2) or q + p
// (theta >= pi/2) so that neither end loses digits. Returns false at the cut locus (q = -p).
inline bool sphere_log(const double* p, const double* q, double* out, std::size_t n) noexcept {
    const double theta = sphere_dist(p, q, n);
    const double h = 0.5 * theta;
    double w2 = 0.0;
    if (theta < 0.5 * kPi) {
        const double k = 2.0 * std::sin(h) * std::sin(h);  // 1 - cos theta
        for (std::size_t i = 0; i < n; ++i) out[i] = (q[i] - p[i]) + k * p[i];
    } else {
        const double k = 2.0 * std::cos(h) * std::cos(h);  // 1 + cos theta
        for (std::size_t i = 0; i < n; ++i) out[i] = (q[i] + p[i]) - k * p[i];
    }
    const double pw = dot(p, out, n);  // remove the residual normal part
    for (std::size_t i = 0; i < n; ++i) {
        out[i] -= pw * p[i];
        w2 += out[i] * out[i];
    }
    if (theta == 0.0) {
        for (std::size_t i = 0; i < n; ++i) out[i] = 0.0;
        return true;
    }
    const double wn = std::sqrt(w2);
    if (!(wn > 0.0)) return false;
    const double f = theta / wn;
    for (std::size_t i = 0; i < n; ++i) out[i] *= f;
    return true;
}

// ---------------------------------------------------------------------------------------------------
// Hyperbolic space H^(n-1), hyperboloid model in R^n (x[0] the time coordinate)
// ---------------------------------------------------------------------------------------------------
inline double hyp_time(const double* xs, std::size_t m) noexcept { return std::sqrt(1.0 + dot(xs, xs, m)); }

inline bool hyp_on(const double* x, std::size_t n, double atol) noexcept {
    if (!(x[0] > 0.0) || !std::isfinite(x[0])) return false;
    const double t = hyp_time(x + 1, n - 1);
    return std::isfinite(t) && std::fabs(x[0] - t) <= atol * t;
}

inline double minkowski(const double* a, const double* b, std::size_t n) noexcept {
    return -a[0] * b[0] + dot(a + 1, b + 1, n - 1);
}

// <p, v>_L small relative to the Euclidean size of p and v.
inline bool hyp_tangent(const double* p, const double* v, std::size_t n, double atol) noexcept {
    const double nv = norm(v, n), np = norm(p, n);
    return std::isfinite(nv) && std::fabs(minkowski(p, v, n)) <= atol * np * (nv > 1.0 ? nv : 1.0);
}

inline double hyp_dist(const double* x, const double* y, std::size_t n) noexcept {
    const std::size_t m = n - 1;
    const double* xs = x + 1;
    const double* ys = y + 1;
    const double x0 = hyp_time(xs, m), y0 = hyp_time(ys, m);
    const double xy = dot(xs, ys, m);
    if (xy < 0.0) {
        const double ch = x0 * y0 - xy;  // cosh d, a sum of positive terms
        if (ch >= 2.0) return std::log(ch + std::sqrt((ch - 1.0) * (ch + 1.0)));
    }
    double d2 = 0.0, w2 = 0.0;
    for (std::size_t i = 0; i < m; ++i) d2 += (xs[i] - ys[i]) * (xs[i] - ys[i]);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = i + 1; j < m; ++j) {
            const double di = xs[i] - ys[i], dj = xs[j] - ys[j];
            const double w = std::fma(xs[i], dj, -xs[j] * di);
            w2 += w * w;
        }
    const double s = (d2 + w2) / (2.0 + 2.0 * (x0 * y0 + xy));
    return 2.0 * std::asinh(std::sqrt(s));
}

// Writes the point with spatial part xs (length m) and its recomputed time coordinate.
inline void hyp_complete(double* x, std::size_t n) noexcept { x[0] = hyp_time(x + 1, n - 1); }

// Squared Minkowski norm of the tangent vector at p with spatial part ws (its time part being
// ps.ws / p0): (|ws|^2 + |ps ^ ws|^2) / p0^2, a sum of squares (no light-cone cancellation).
inline double hyp_tangent_norm2(const double* ps, double p0, const double* ws, std::size_t m) noexcept {
    return (dot(ws, ws, m) + wedge2(ps, ws, m)) / (p0 * p0);
}

// exp_p(v) = cosh|v|_L p + sinh|v|_L v / |v|_L. The spatial part of v defines the tangent vector
// (the caller has checked that v is tangent); the result's time coordinate is recomputed.
inline void hyp_exp(const double* p, const double* v, double* out, std::size_t n) noexcept {
    const std::size_t m = n - 1;
    const double p0 = hyp_time(p + 1, m);
    const double t2 = hyp_tangent_norm2(p + 1, p0, v + 1, m);
    const double t = std::sqrt(t2);
    const double ch = std::cosh(t), sh = t < 1e-8 ? 1.0 + t2 / 6.0 : std::sinh(t) / t;
    for (std::size_t i = 1; i < n; ++i) out[i] = ch * p[i] + sh * v[i];
    hyp_complete(out, n);
}

// log_p(q) = d / sinh d * ((q - p) - 2 sinh^2(d/2) p), formed from q - p; the time part follows from
// tangency, <p, out>_L = 0.
inline void hyp_log(const double* p, const double* q, double* out, std::size_t n) noexcept {
    const std::size_t m = n - 1;
    const double d = hyp_dist(p, q, n);
    const double p0 = hyp_time(p + 1, m);
    const double sh = std::sinh(0.5 * d);
    const double k = 2.0 * sh * sh;
    const double f = d < 1e-8 ? 1.0 - d * d / 6.0 : d / std::sinh(d);
    for (std::size_t i = 1; i < n; ++i) out[i] = f * ((q[i] - p[i]) - k * p[i]);
    out[0] = dot(p + 1, out + 1, m) / p0;
}

}  // namespace pydp::manifolds
