// Fixed Gauss-Legendre rules.
#pragma once

namespace pydp::special {

// 10-point Gauss-Legendre on [-1, 1]: the five positive nodes and their weights (the rule is symmetric).
inline constexpr double kGL10Nodes[5] = {0.14887433898163122, 0.4333953941292472, 0.6794095682990244,
                                          0.8650633666889845, 0.9739065285171717};
inline constexpr double kGL10Weights[5] = {0.2955242247147528, 0.2692667193099965, 0.219086362515982,
                                            0.1494513491505804, 0.06667134430868814};

// int_a^b g(y) dy by the 10-point rule (exact for polynomials of degree 19).
template <class G>
double gauss_legendre10(G g, double a, double b) {
    const double h = 0.5 * (b - a), m = 0.5 * (a + b);
    double s = 0.0;
    for (int i = 0; i < 5; ++i) s += kGL10Weights[i] * (g(m - h * kGL10Nodes[i]) + g(m + h * kGL10Nodes[i]));
    return s * h;
}

// int_a^{a + len} g(y) dy, with the interval given by its start and its exact length (the nodes may
// round, the length does not: what matters when the interval is short compared with |a|).
template <class G>
double gauss_legendre10_len(G g, double a, double len) {
    const double h = 0.5 * len, m = a + h;
    double s = 0.0;
    for (int i = 0; i < 5; ++i) s += kGL10Weights[i] * (g(m - h * kGL10Nodes[i]) + g(m + h * kGL10Nodes[i]));
    return s * h;
}

}  // namespace pydp::special
