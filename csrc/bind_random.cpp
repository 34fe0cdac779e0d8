// Bindings for the random area (kernels in csrc/include/pydp/random/).
#include "register.hpp"

namespace py = pybind11;

namespace pydp_bind {
void register_random(py::module_ m) {
    m.doc() = "random kernels";
}
}  // namespace pydp_bind
