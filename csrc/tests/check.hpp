// The check macros of the C++ kernel tests (csrc/tests/test_*.cpp): CHECK(cond) prints the failing
// expression and counts it; CHECK_NEAR(a, b, tol) also prints both values. Each test's main returns
// pydp_test::report(), which prints "<n> failed" and returns n (the exit status ctest reads).
#pragma once
#include <cmath>
#include <cstdio>

namespace pydp_test {
inline int failures = 0;

inline bool near(double a, double b, double tol) noexcept { return std::fabs(a - b) <= tol; }

inline int report() {
    std::printf("%d failed\n", failures);
    return failures;
}
}  // namespace pydp_test

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
            ++pydp_test::failures;                                               \
        }                                                                        \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                          \
    do {                                                                                               \
        const double check_a_ = (a), check_b_ = (b), check_t_ = (tol);                                 \
        if (!pydp_test::near(check_a_, check_b_, check_t_)) {                                          \
            std::printf("FAILED %s:%d: |%s - %s| <= %s: %.17g vs %.17g (tol %.3g)\n", __FILE__, __LINE__, \
                        #a, #b, #tol, check_a_, check_b_, check_t_);                                   \
            ++pydp_test::failures;                                                                     \
        }                                                                                              \
    } while (0)
