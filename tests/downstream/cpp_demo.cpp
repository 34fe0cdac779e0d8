// Uses the header-only C++ kernels of an installed pydp_core: prints `name value` lines.
#include <cstdint>
#include <cstdio>

#include "pydp/accounting/conversions.hpp"
#include "pydp/calibration/profile.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/version.hpp"

int main() {
    using pydp::noise::Family;
    using pydp::noise::Kind;
    namespace cal = pydp::calibration;
    std::printf("version %s %d\n", PYDP_VERSION_STRING, PYDP_VERSION_NUMBER);
    const Family gauss = Family::make(Kind::Gaussian);
    const cal::MinimalScale m = cal::minimal_scale(gauss, 1.0, 1e-5, 1.0);
    if (m.status != cal::kOk) return 1;
    std::printf("gaussian_scale %.17g\n", m.scale);
    std::printf("gaussian_log_delta %.17g\n", cal::log_privacy_profile(gauss, 1.0, m.scale, 1.0));
    std::printf("subbotin3_scale %.17g\n", cal::minimal_scale(Family::make(Kind::Subbotin, 3.0), 0.5, 1e-8, 2.0).scale);
    std::printf("gaussian_epsilon %.17g\n", pydp::accounting::epsilon_for_delta(gauss, 1e-6, 2.0, 1.0));
    unsigned char key[32];
    for (int i = 0; i < 32; ++i) key[i] = static_cast<unsigned char>(i);
    pydp::random::Generator gen(key, 0);
    for (int i = 0; i < 3; ++i) std::printf("word %llu\n", static_cast<unsigned long long>(gen.next_u64()));
    return 0;
}
