// Bindings for the discrete area (kernels in csrc/include/pydp/discrete/).
#include "register.hpp"

namespace py = pybind11;

namespace pydp_bind {
void register_discrete(py::module_ m) {
    m.doc() = "discrete kernels";
}
}  // namespace pydp_bind
