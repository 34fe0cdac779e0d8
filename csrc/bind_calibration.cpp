// Bindings for exact calibration (kernels in csrc/include/pydp/calibration/profile.hpp).
#include "bind_util.hpp"
#include "pydp/calibration/profile.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace cal = pydp::calibration;
using pydp::noise::Family;

void register_calibration(py::module_ m) {
    m.doc() = "exact (epsilon, delta) profile and calibration";
    py::enum_<cal::Status>(m, "Status", "why minimal_scale found no scale (its second output)")
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
    // Returns (scale, status): the verified minimal scale where status is ok, else 0 and the Status code
    // (the enum above) that says why no scale was found.
    m.def("minimal_scale", [](const Family& f, const darray& eps, const darray& delta, const darray& sens, long t) {
        require_same_shape(eps, delta, "arguments");
        require_same_shape(eps, sens, "arguments");
        darray scale(shape_of(eps));
        py::array_t<int32_t> status(shape_of(eps));
        const double *pe = eps.data(), *pd = delta.data(), *ps = sens.data();
        double* out = scale.mutable_data();
        int32_t* code = status.mutable_data();
        const unsigned nt = resolve_threads(t);
        {
            py::gil_scoped_release release;
            pydp::parallel_chunks(static_cast<std::size_t>(eps.size()), 64, nt, [&](std::size_t, std::size_t lo, std::size_t hi) {
                for (std::size_t i = lo; i < hi; ++i) {
                    const cal::MinimalScale r = cal::minimal_scale(f, pe[i], pd[i], ps[i]);
                    out[i] = r.status == cal::kOk ? r.scale : 0.0;
                    code[i] = static_cast<int32_t>(r.status);
                }
            });
        }
        return std::make_pair(scale, status);
    }, py::arg("family"), py::arg("epsilon"), py::arg("delta"), py::arg("sensitivity"), py::arg("threads") = 0);
}
}  // namespace pydp_bind
