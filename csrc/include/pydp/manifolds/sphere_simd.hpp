// Batched S^2 distances (rows of 3 doubles) four at a time with AVX2+FMA, chosen at run time; the same
// formula as sphere_dist in geometry.hpp (one projection, a second when the angle is tiny) with a
// vectorised atan2: reduction to |v| <= tan(pi/8) by swapping and atan(u) = pi/4 + atan((u-1)/(u+1)),
// then v * P(v^2), P the degree-10 Chebyshev fit of atan(sqrt(w))/sqrt(w) on [0, tan^2(pi/8)]
// (computed with mpmath at 40 digits; fit error 3.5e-17). Agrees with the scalar kernel to a few ulp.
#pragma once
#include <cmath>
#include <cstddef>

#include "pydp/manifolds/geometry.hpp"

#include "pydp/cpu.hpp"

namespace pydp::manifolds {

// bad[i] gets bit 0 (x) and bit 1 (y) for rows off the sphere, as in the scalar path.
inline void sphere3_dist_scalar(const double* x, const double* y, std::size_t b, std::size_t e, double atol,
                                double* out, unsigned char* bad) {
    for (std::size_t i = b; i < e; ++i) {
        double sums[2];
        out[i] = sphere_dist(x + 3 * i, y + 3 * i, 3, sums);
        bad[i] = static_cast<unsigned char>((unit_norm2(sums[0], atol) ? 0 : 1) | (unit_norm2(sums[1], atol) ? 0 : 2));
    }
}

#ifdef PYDP_X86_DISPATCH
namespace simd_detail {

__attribute__((target("avx2,fma"))) inline __m256d atan_reduced4(__m256d v) {
    static constexpr double c[11] = {0.021135373157693246, -0.04348052215716462, 0.056883492268090106,
                                     -0.06640233930429408, 0.07689953496306857,  -0.09090773074808414,
                                     0.11111106180455946,  -0.14285714180976467, 0.1999999999885511,
                                     -0.3333333333332844,  1.0};
    const __m256d w = _mm256_mul_pd(v, v);
    const __m256d w2 = _mm256_mul_pd(w, w);
    const __m256d w4 = _mm256_mul_pd(w2, w2);
    const __m256d p01 = _mm256_fmadd_pd(_mm256_set1_pd(c[0]), w, _mm256_set1_pd(c[1]));
    const __m256d p23 = _mm256_fmadd_pd(_mm256_set1_pd(c[2]), w, _mm256_set1_pd(c[3]));
    const __m256d p45 = _mm256_fmadd_pd(_mm256_set1_pd(c[4]), w, _mm256_set1_pd(c[5]));
    const __m256d p67 = _mm256_fmadd_pd(_mm256_set1_pd(c[6]), w, _mm256_set1_pd(c[7]));
    const __m256d p89 = _mm256_fmadd_pd(_mm256_set1_pd(c[8]), w, _mm256_set1_pd(c[9]));
    const __m256d q0 = _mm256_fmadd_pd(p01, w2, p23);
    const __m256d q1 = _mm256_fmadd_pd(p45, w2, p67);
    const __m256d q2 = _mm256_fmadd_pd(p89, w, _mm256_set1_pd(c[10]));
    // P(w) = w^3 (q0 w^4 + q1) + q2
    const __m256d p = _mm256_fmadd_pd(_mm256_fmadd_pd(q0, w4, q1), _mm256_mul_pd(w2, w), q2);
    return _mm256_mul_pd(v, p);
}

// atan2(s, c) for s >= 0.
__attribute__((target("avx2,fma"))) inline __m256d angle4(__m256d s, __m256d c) {
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d ac = _mm256_andnot_pd(sign, c);
    const __m256d swap = _mm256_cmp_pd(s, ac, _CMP_GT_OQ);
    const __m256d a = _mm256_blendv_pd(s, ac, swap), b = _mm256_blendv_pd(ac, s, swap);
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    const __m256d bpos = _mm256_cmp_pd(b, zero, _CMP_GT_OQ);
    const __m256d u = _mm256_and_pd(_mm256_div_pd(a, _mm256_blendv_pd(one, b, bpos)), bpos);
    const __m256d big = _mm256_cmp_pd(u, _mm256_set1_pd(0.41421356237309504880), _CMP_GT_OQ);
    const __m256d v = _mm256_blendv_pd(u, _mm256_div_pd(_mm256_sub_pd(u, one), _mm256_add_pd(u, one)), big);
    __m256d r = _mm256_add_pd(atan_reduced4(v), _mm256_and_pd(big, _mm256_set1_pd(0.78539816339744830962)));
    r = _mm256_blendv_pd(r, _mm256_sub_pd(_mm256_set1_pd(1.57079632679489661923), r), swap);
    const __m256d neg = _mm256_cmp_pd(c, zero, _CMP_LT_OQ);
    return _mm256_blendv_pd(r, _mm256_sub_pd(_mm256_set1_pd(kPi), r), neg);
}

// |r2 - 1| <= atol (1 + sqrt(r2)) and finite, as unit_norm2.
__attribute__((target("avx2,fma"))) inline int unit4(__m256d r2, double atol) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d dev = _mm256_andnot_pd(_mm256_set1_pd(-0.0), _mm256_sub_pd(r2, one));
    const __m256d lim = _mm256_mul_pd(_mm256_set1_pd(atol), _mm256_add_pd(one, _mm256_sqrt_pd(r2)));
    return _mm256_movemask_pd(_mm256_cmp_pd(dev, lim, _CMP_LE_OQ));  // false for NaN and inf
}

__attribute__((target("avx2,fma"))) inline void sphere3_dist_avx2(const double* x, const double* y, std::size_t b,
                                                                  std::size_t e, double atol, double* out,
                                                                  unsigned char* bad) {
    std::size_t i = b;
    for (; i + 4 <= e; i += 4) {
        const double* px = x + 3 * i;
        const double* py = y + 3 * i;
        const __m256d x0 = _mm256_setr_pd(px[0], px[3], px[6], px[9]);
        const __m256d x1 = _mm256_setr_pd(px[1], px[4], px[7], px[10]);
        const __m256d x2 = _mm256_setr_pd(px[2], px[5], px[8], px[11]);
        const __m256d y0 = _mm256_setr_pd(py[0], py[3], py[6], py[9]);
        const __m256d y1 = _mm256_setr_pd(py[1], py[4], py[7], py[10]);
        const __m256d y2 = _mm256_setr_pd(py[2], py[5], py[8], py[11]);
        const __m256d xx = _mm256_fmadd_pd(x2, x2, _mm256_fmadd_pd(x1, x1, _mm256_mul_pd(x0, x0)));
        const __m256d yy = _mm256_fmadd_pd(y2, y2, _mm256_fmadd_pd(y1, y1, _mm256_mul_pd(y0, y0)));
        const __m256d xy = _mm256_fmadd_pd(x2, y2, _mm256_fmadd_pd(x1, y1, _mm256_mul_pd(x0, y0)));
        const __m256d c = _mm256_div_pd(xy, xx);
        const __m256d r0 = _mm256_fnmadd_pd(c, x0, y0), r1 = _mm256_fnmadd_pd(c, x1, y1),
                      r2 = _mm256_fnmadd_pd(c, x2, y2);
        const __m256d rr = _mm256_fmadd_pd(r2, r2, _mm256_fmadd_pd(r1, r1, _mm256_mul_pd(r0, r0)));
        const __m256d tiny = _mm256_cmp_pd(rr, _mm256_mul_pd(_mm256_set1_pd(1e-8), _mm256_mul_pd(xx, yy)), _CMP_LT_OQ);
        const int okx = unit4(xx, atol), oky = unit4(yy, atol);
        if (_mm256_movemask_pd(tiny) != 0 || (okx & oky) != 0xF) {  // rare: tiny angles or bad rows
            sphere3_dist_scalar(x, y, i, i + 4, atol, out, bad);
            continue;
        }
        _mm256_storeu_pd(out + i, angle4(_mm256_sqrt_pd(_mm256_mul_pd(xx, rr)), xy));
        bad[i] = bad[i + 1] = bad[i + 2] = bad[i + 3] = 0;
    }
    sphere3_dist_scalar(x, y, i, e, atol, out, bad);
}

}  // namespace simd_detail
#endif

// Rows [b, e) of 3-coordinate points: AVX2 when the CPU has it (checked once), else scalar.
inline void sphere3_dist_rows(const double* x, const double* y, std::size_t b, std::size_t e, double atol,
                              double* out, unsigned char* bad) {
#ifdef PYDP_X86_DISPATCH
    if (cpu::isa_available(cpu::Isa::AVX2)) {
        simd_detail::sphere3_dist_avx2(x, y, b, e, atol, out, bad);
        return;
    }
#endif
    sphere3_dist_scalar(x, y, b, e, atol, out, bad);
}

}  // namespace pydp::manifolds
