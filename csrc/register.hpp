// One registration function per area; each is defined in csrc/bind_<area>.cpp.
#pragma once
#include <pybind11/pybind11.h>

namespace pydp_bind {
void register_special(pybind11::module_ m);
void register_noise(pybind11::module_ m);
void register_calibration(pybind11::module_ m);
void register_random(pybind11::module_ m);
void register_accounting(pybind11::module_ m);
void register_manifolds(pybind11::module_ m);
void register_release(pybind11::module_ m);
void register_aggregation(pybind11::module_ m);
}  // namespace pydp_bind
