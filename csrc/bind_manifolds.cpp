// Bindings for the manifolds area (kernels in csrc/include/pydp/manifolds/).
#include "register.hpp"

namespace py = pybind11;

namespace pydp_bind {
void register_manifolds(py::module_ m) {
    m.doc() = "manifolds kernels";
}
}  // namespace pydp_bind
