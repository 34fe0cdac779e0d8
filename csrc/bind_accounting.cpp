// Bindings for the accounting area (kernels in csrc/include/pydp/accounting/).
#include "register.hpp"

namespace py = pybind11;

namespace pydp_bind {
void register_accounting(py::module_ m) {
    m.doc() = "accounting kernels";
}
}  // namespace pydp_bind
