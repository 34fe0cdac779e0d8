// Fixed Gauss-Legendre rules.
#pragma once

namespace pydp::special {

// 10-point Gauss-Legendre on [-1, 1]: the five positive nodes and their weights (the rule is symmetric).
inline constexpr double kGL10Nodes[5] = {0.14887433898163122, 0.4333953941292472, 0.6794095682990244,
                                          0.8650633666889845, 0.9739065285171717};
inline constexpr double kGL10Weights[5] = {0.2955242247147528, 0.2692667193099965, 0.219086362515982,
                                            0.1494513491505804, 0.06667134430868814};

// int_a^{a + len} g(y) dy, with the interval given by its start and its exact length (the nodes may
// round, the length does not: what matters when the interval is short compared with |a|).
template <class G>
double gauss_legendre10_len(G g, double a, double len) {
    const double h = 0.5 * len, m = a + h;
    double s = 0.0;
    for (int i = 0; i < 5; ++i) s += kGL10Weights[i] * (g(m - h * kGL10Nodes[i]) + g(m + h * kGL10Nodes[i]));
    return s * h;
}

// int_a^b g(y) dy by the 10-point rule (exact for polynomials of degree 19).
template <class G>
double gauss_legendre10(G g, double a, double b) {
    return gauss_legendre10_len(g, a, b - a);
}

// int_a^{a + len} g(y) dy for a smooth g whose scale of variation is about |a|: rel = len / |a| picks
// the rule (3, 5 or 10 Gauss-Legendre points), keeping the error near (rel / 4)^(2n) below 1e-20.
template <class G>
double gauss_legendre_len(G g, double a, double len, double rel) {
    const double h = 0.5 * len, m = a + h;
    if (rel < 1e-4) {  // 3 points: nodes 0, +-sqrt(3/5); weights 8/9, 5/9
        const double x = 0.7745966692414834;
        return h * (0.8888888888888888 * g(m) + 0.5555555555555556 * (g(m - h * x) + g(m + h * x)));
    }
    if (rel < 1e-2) {  // 5 points
        const double x1 = 0.5384693101056831, x2 = 0.9061798459386640;
        return h * (0.5688888888888889 * g(m) + 0.4786286704993665 * (g(m - h * x1) + g(m + h * x1)) +
                    0.2369268850561891 * (g(m - h * x2) + g(m + h * x2)));
    }
    return gauss_legendre10_len(g, a, len);
}

}  // namespace pydp::special
