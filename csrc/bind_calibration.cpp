// Bindings for exact calibration (kernels in csrc/include/pydp/calibration/profile.hpp).
#include "bind_util.hpp"
#include "pydp/calibration/profile.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace cal = pydp::calibration;
using pydp::noise::Family;

void register_calibration(py::module_ m) {
    m.doc() = "exact (epsilon, delta) profile and calibration";
    py::enum_<cal::Status>(m, "Status", "why minimal_scale found no scale (its codes, negated, in the output)")
        .value("ok", cal::kOk)
        .value("no_finite_scale", cal::kNoFiniteScale)
        .value("verify_failed", cal::kVerifyFailed)
        .value("no_convergence", cal::kNoConvergence)
        .value("scale_overflow", cal::kScaleOverflow);
    m.def("log_privacy_profile", [](const Family& f, const darray& eps, const darray& scale, const darray& sens, long t) {
        return map3(eps, scale, sens, t, [&f](double e, double s, double d) { return cal::log_privacy_profile(f, e, s, d); });
    }, py::arg("family"), py::arg("epsilon"), py::arg("scale"), py::arg("sensitivity"), py::arg("threads") = 0);
    m.def("epsilon_for_delta", [](const Family& f, const darray& delta, const darray& scale, const darray& sens, long t) {
        return map3(delta, scale, sens, t, [&f](double dl, double s, double d) { return pydp::calibration::epsilon_for_delta(f, dl, s, d); });
    }, py::arg("family"), py::arg("delta"), py::arg("scale"), py::arg("sensitivity"), py::arg("threads") = 0);
    // Returns the verified minimal scale, or minus a Status code (the enum above) where none exists: one
    // float array keeps the vectorised call free of a second output.
    m.def("minimal_scale", [](const Family& f, const darray& eps, const darray& delta, const darray& sens, long t) {
        return map3(eps, delta, sens, t, [&f](double e, double dl, double d) {
            const cal::MinimalScale r = cal::minimal_scale(f, e, dl, d);
            return r.status == cal::kOk ? r.scale : -static_cast<double>(r.status);
        });
    }, py::arg("family"), py::arg("epsilon"), py::arg("delta"), py::arg("sensitivity"), py::arg("threads") = 0);
}
}  // namespace pydp_bind
