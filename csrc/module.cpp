// The extension module: registration only. Kernels live in csrc/include/pydp/, glue in bind_<area>.cpp.
#include "pydp/parallel.hpp"
#include "bind_util.hpp"
#include "register.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "pydp_core compiled core (private: import pydp_core instead)";
    m.attr("__version__") = PYDP_VERSION;
    pydp_bind::register_error_translator();  // the one translation of C++ exceptions (bind_util.hpp)
    m.attr("MAX_THREADS") = pydp::kMaxThreads;  // the one thread cap (pydp/parallel.hpp)
    pydp_bind::register_special(m.def_submodule("special"));
    pydp_bind::register_noise(m.def_submodule("noise"));
    pydp_bind::register_calibration(m.def_submodule("calibration"));
    pydp_bind::register_random(m.def_submodule("random"));
    pydp_bind::register_accounting(m.def_submodule("accounting"));
    pydp_bind::register_manifolds(m.def_submodule("manifolds"));
    pydp_bind::register_release(m.def_submodule("release"));
    pydp_bind::register_aggregation(m.def_submodule("aggregation"));
}
