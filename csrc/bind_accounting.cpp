// Bindings for the accounting area (kernels in csrc/include/pydp/accounting/conversions.hpp).
#include "bind_util.hpp"
#include "pydp/accounting/conversions.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace acc = pydp::accounting;
using pydp::noise::Family;
using pydp::noise::Kind;

namespace {
// Second line of defence (the Python layer checks first): reject out-of-domain inputs before any work.
template <class Pred>
void require_all(const darray& a, Pred ok, const char* message) {
    const double* p = a.data();
    for (py::ssize_t i = 0; i < a.size(); ++i) {
        if (!ok(p[i])) throw std::invalid_argument(message);
    }
}

bool mu_ok(double u) { return u >= 0.0; }
bool delta_closed_ok(double d) { return d >= 0.0 && d <= 1.0; }
bool delta_open_ok(double d) { return d > 0.0 && d < 1.0; }
bool alpha_ok(double a) { return a > 1.0; }
bool rho_ok(double r) { return r >= 0.0; }

}  // namespace

void register_accounting(py::module_ m) {
    m.doc() = "accounting kernels: exact GDP profile and RDP -> (eps, delta) conversions";
    py::enum_<acc::RdpMethod>(m, "RdpMethod", "the RDP -> (epsilon, delta) conversions (Mironov 2017; Asoodeh et al. 2021; Balle et al. 2020)")
        .value("mironov", acc::RdpMethod::Mironov)
        .value("asoodeh", acc::RdpMethod::Asoodeh)
        .value("balle2020", acc::RdpMethod::Balle2020);
    m.def("gdp_epsilon", [](const darray& mu, const darray& delta, long t) {
        require_all(mu, mu_ok, "mu must be >= 0 and not NaN");
        require_all(delta, delta_closed_ok, "delta must lie in [0, 1]");
        const Family g = Family::make(Kind::Gaussian);
        return map2(mu, delta, t, [&g](double u, double d) { return acc::gdp_epsilon(g, u, d); });
    }, py::arg("mu"), py::arg("delta"), py::arg("threads") = 0);
    m.def("gdp_log_delta", [](const darray& mu, const darray& eps, long t) {
        require_all(mu, mu_ok, "mu must be >= 0 and not NaN");
        require_all(eps, rho_ok, "epsilon must be >= 0 and not NaN");
        const Family g = Family::make(Kind::Gaussian);
        return map2(mu, eps, t, [&g](double u, double e) { return acc::gdp_log_delta(g, u, e); });
    }, py::arg("mu"), py::arg("epsilon"), py::arg("threads") = 0);
    m.def("pure_dp_mu", [](const darray& eps, long t) {
        require_all(eps, rho_ok, "epsilon must be >= 0 and not NaN");
        return map1(eps, t, [](double e) { return acc::pure_dp_mu(e); });
    }, py::arg("epsilon"), py::arg("threads") = 0,
       "mu of the GDP bound of epsilon-DP, -2 Phi^-1(1 / (1 + e^epsilon)), rounded up (Dong, Roth and Su 2022)");
    m.def("rdp_to_epsilon", [](const darray& alpha, const darray& rho, const darray& delta, acc::RdpMethod meth, long t) {
        require_all(alpha, alpha_ok, "alpha must be > 1");
        require_all(rho, rho_ok, "rho must be >= 0 and not NaN");
        require_all(delta, delta_open_ok, "delta must lie in (0, 1)");
        return map3(alpha, rho, delta, t, [meth](double a, double r, double d) { return acc::rdp_to_epsilon(a, r, d, meth); });
    }, py::arg("alpha"), py::arg("rho"), py::arg("delta"), py::arg("method"), py::arg("threads") = 0);
    // Scalar fast paths (no array allocation) for optimisers calling one value at a time.
    m.def("gdp_epsilon_scalar", [](double mu, double delta) {
        if (!mu_ok(mu)) throw std::invalid_argument("mu must be >= 0 and not NaN");
        if (!delta_closed_ok(delta)) throw std::invalid_argument("delta must lie in [0, 1]");
        static const Family g = Family::make(Kind::Gaussian);
        return acc::gdp_epsilon(g, mu, delta);
    }, py::arg("mu"), py::arg("delta"));
    m.def("rdp_to_epsilon_scalar", [](double alpha, double rho, double delta, acc::RdpMethod method) {
        if (!alpha_ok(alpha)) throw std::invalid_argument("alpha must be > 1");
        if (!rho_ok(rho)) throw std::invalid_argument("rho must be >= 0 and not NaN");
        if (!delta_open_ok(delta)) throw std::invalid_argument("delta must lie in (0, 1)");
        return acc::rdp_to_epsilon(alpha, rho, delta, method);
    }, py::arg("alpha"), py::arg("rho"), py::arg("delta"), py::arg("method"));
}
}  // namespace pydp_bind
