// Bindings for the noise families (kernels in csrc/include/pydp/noise/families.hpp).
#include "bind_util.hpp"
#include "pydp/noise/families.hpp"
#include "register.hpp"

namespace pydp_bind {
using pydp::noise::Family;
using pydp::noise::Kind;

void register_noise(py::module_ m) {
    m.doc() = "standard symmetric log-concave noise families";
    py::enum_<Kind>(m, "Kind")
        .value("Laplace", Kind::Laplace)
        .value("Gaussian", Kind::Gaussian)
        .value("Logistic", Kind::Logistic)
        .value("Subbotin", Kind::Subbotin);
    py::class_<Family>(m, "Family")
        .def(py::init([](Kind kind, double r, double bound) { return Family::make(kind, r, bound); }),
             py::arg("kind"), py::arg("r") = 0.0, py::arg("bound") = std::numeric_limits<double>::infinity())
        .def_property_readonly("kind", &Family::kind)
        .def_property_readonly("r", &Family::r)
        .def_property_readonly("bound", &Family::bound)
        .def_property_readonly("mlr_bounded", &Family::mlr_bounded)
        .def_property_readonly("variance", &Family::variance)
        .def("logpdf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.logpdf(v); }); }, py::arg("x"), py::arg("threads") = 0)
        .def("pdf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.pdf(v); }); }, py::arg("x"), py::arg("threads") = 0)
        .def("cdf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.cdf(v); }); }, py::arg("x"), py::arg("threads") = 0)
        .def("sf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.sf(v); }); }, py::arg("x"), py::arg("threads") = 0)
        .def("logcdf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.logcdf(v); }); }, py::arg("x"), py::arg("threads") = 0)
        .def("logsf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.logsf(v); }); }, py::arg("x"), py::arg("threads") = 0)
        .def("ppf", [](const Family& f, const darray& x, long t) { return map1(x, t, [&f](double v) { return f.ppf(v); }); }, py::arg("q"), py::arg("threads") = 0)
        .def("threshold", &Family::threshold, py::arg("d"), py::arg("epsilon"))
        .def("psi_diff", &Family::psi_diff, py::arg("u"), py::arg("d"));
}
}  // namespace pydp_bind
