// Shared glue for the bindings: contiguous float64 arrays in, same-shaped arrays out, elementwise work
// with the GIL released and split into fixed chunks (results do not depend on the thread count).
// The Python layer validates and broadcasts first; these helpers re-check shapes as a second line.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "pydp/parallel.hpp"
#include "pydp/status.hpp"

namespace pydp_bind {

namespace py = pybind11;
using darray = py::array_t<double, py::array::c_style | py::array::forcecast>;

inline std::vector<py::ssize_t> shape_of(const darray& a) {
    return std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim());
}

inline void require_same_shape(const darray& a, const darray& b, const char* name) {
    if (shape_of(a) != shape_of(b)) throw std::invalid_argument(std::string(name) + ": shape mismatch after broadcasting");
}

// The one translation of the kernels' exceptions into Python exceptions, registered once for the module
// (csrc/module.cpp): the exception's Status (pydp::current_failure, pydp/status.hpp) chooses the type,
// its what() is the message. pybind11's own exceptions (py::value_error, error_already_set, ...) pass
// through to pybind11's translation.
inline PyObject* python_type(pydp::Status s) noexcept {
    switch (s) {
        case pydp::Status::range: return PyExc_OverflowError;
        case pydp::Status::no_memory: return PyExc_MemoryError;
        case pydp::Status::internal: return PyExc_RuntimeError;
        default: return PyExc_ValueError;
    }
}

inline void register_error_translator() {
    py::register_local_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const py::builtin_exception&) {
            throw;
        } catch (const py::error_already_set&) {
            throw;
        } catch (const std::exception& e) {
            PyErr_SetString(python_type(pydp::current_failure().status), e.what());
        }
    });
}

// The thread cap (pydp/parallel.hpp); the Python layer rejects larger counts first.
constexpr long kMaxThreads = static_cast<long>(pydp::kMaxThreads);

inline unsigned resolve_threads(long threads) {
    if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0 = all cores)");
    return threads == 0 ? pydp::hardware_threads() : static_cast<unsigned>(std::min(threads, kMaxThreads));
}

// The largest single output a binding allocates: a count from the caller (size=, n=, nblocks=) above it is
// refused before any allocation, with the size computed without overflow.
constexpr std::uint64_t kMaxOutputBytes = std::uint64_t{1} << 40;  // 1 TiB

// count1 * count2 elements of item_bytes each, checked: both counts >= 0 and the bytes within
// kMaxOutputBytes; otherwise std::invalid_argument naming the argument. Returns the element count.
inline std::size_t checked_elements(long long count1, long long count2, std::size_t item_bytes, const char* name) {
    if (count1 < 0 || count2 < 0) throw std::invalid_argument(std::string(name) + " must be >= 0");
    const std::uint64_t a = static_cast<std::uint64_t>(count1), b = static_cast<std::uint64_t>(count2);
    const std::uint64_t cap = kMaxOutputBytes / item_bytes;
    if (a != 0 && b > cap / a)
        throw std::invalid_argument(std::string(name) + " = " + std::to_string(count1) + " asks for more than the 1 TiB "
                                    "limit of one output (" + std::to_string(b) + " x " + std::to_string(item_bytes) + " bytes each)");
    return static_cast<std::size_t>(a * b);
}

constexpr std::size_t kChunk = 4096;

// out[i] = fn(x[i]) elementwise, GIL released.
template <class F>
darray map1(const darray& x, long threads, F fn) {
    darray out(shape_of(x));
    const double* in = x.data();
    double* o = out.mutable_data();
    const std::size_t n = static_cast<std::size_t>(x.size());
    const unsigned nt = resolve_threads(threads);
    {
        py::gil_scoped_release release;
        pydp::parallel_chunks(n, kChunk, nt, [&](std::size_t, std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) o[i] = fn(in[i]);
        });
    }
    return out;
}

// out[i] = fn(a[i], b[i]) elementwise, GIL released; the arrays share one shape.
template <class F>
darray map2(const darray& a, const darray& b, long threads, F fn) {
    require_same_shape(a, b, "arguments");
    darray out(shape_of(a));
    const double *pa = a.data(), *pb = b.data();
    double* o = out.mutable_data();
    const std::size_t n = static_cast<std::size_t>(a.size());
    const unsigned nt = resolve_threads(threads);
    {
        py::gil_scoped_release release;
        pydp::parallel_chunks(n, 256, nt, [&](std::size_t, std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) o[i] = fn(pa[i], pb[i]);
        });
    }
    return out;
}

// out[i] = fn(a[i], b[i], c[i]) elementwise, GIL released; the arrays share one shape.
template <class F>
darray map3(const darray& a, const darray& b, const darray& c, long threads, F fn) {
    require_same_shape(a, b, "arguments");
    require_same_shape(a, c, "arguments");
    darray out(shape_of(a));
    const double *pa = a.data(), *pb = b.data(), *pc = c.data();
    double* o = out.mutable_data();
    const std::size_t n = static_cast<std::size_t>(a.size());
    const unsigned nt = resolve_threads(threads);
    {
        py::gil_scoped_release release;
        pydp::parallel_chunks(n, 64, nt, [&](std::size_t, std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) o[i] = fn(pa[i], pb[i], pc[i]);
        });
    }
    return out;
}

}  // namespace pydp_bind
