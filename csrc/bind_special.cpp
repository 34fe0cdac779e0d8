// Bindings for the special functions (kernels in csrc/include/pydp/special/).
#include "bind_util.hpp"
#include "pydp/special/igamma.hpp"
#include "pydp/special/normal.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace sp = pydp::special;

void register_special(py::module_ m) {
    m.doc() = "special functions";
    m.def("ndtr", [](const darray& x, long t) { return map1(x, t, sp::ndtr); }, py::arg("x"), py::arg("threads") = 0);
    m.def("log_ndtr", [](const darray& x, long t) { return map1(x, t, sp::log_ndtr); }, py::arg("x"), py::arg("threads") = 0);
    m.def("ndtri", [](const darray& x, long t) { return map1(x, t, sp::ndtri); }, py::arg("p"), py::arg("threads") = 0);
    m.def("erfcx", [](const darray& x, long t) {
        return map1(x, t, [](double v) { return v >= 0.0 ? sp::erfcx_nonneg(v) : 2.0 * std::exp(v * v) - sp::erfcx_nonneg(-v); });
    }, py::arg("x"), py::arg("threads") = 0);
    m.def("lgamma1p", [](const darray& x, long t) { return map1(x, t, sp::lgamma1p); }, py::arg("a"), py::arg("threads") = 0);
    // which: 0 = P, 1 = Q, 2 = log P, 3 = log Q
    m.def("incgamma", [](double a, const darray& x, int which, long t) {
        if (!(a > 0.0 && a <= 1.0)) throw std::invalid_argument("a must lie in (0, 1]");
        if (which < 0 || which > 3) throw std::invalid_argument("which must be 0 (P), 1 (Q), 2 (log P) or 3 (log Q)");
        return map1(x, t, [a, which](double v) {
            if (std::isnan(v)) return v;
            const sp::IncGamma g = sp::incgamma(a, v);
            return which == 0 ? g.p : which == 1 ? g.q : which == 2 ? g.log_p : g.log_q;
        });
    }, py::arg("a"), py::arg("x"), py::arg("which"), py::arg("threads") = 0);
    m.def("incgamma_q_inv_log", [](double a, const darray& lq, long t) {
        if (!(a > 0.0 && a <= 1.0)) throw std::invalid_argument("a must lie in (0, 1]");
        return map1(lq, t, [a](double v) { return sp::incgamma_q_inv_log(a, v); });
    }, py::arg("a"), py::arg("log_q"), py::arg("threads") = 0);
}
}  // namespace pydp_bind
