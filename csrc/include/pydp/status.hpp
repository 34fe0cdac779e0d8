// The one error convention of the C++ core: a Status code for every way a call can fail, and the one
// mapping from the exceptions the kernels throw to (code, message).
//
// Kernels report a bad argument or an impossible request by throwing a standard exception (the kind says
// which failure it is), and a calibration that finds no scale by returning a Status (its result carries
// it, so that vectorised callers keep going). Both consumers read failures through this header only: the
// Python bindings (one exception translator, csrc/bind_util.hpp) and the C ABI (csrc/capi.cpp, whose
// pydp_status codes equal these values: static_asserts there tie the two lists together).
//
//   exception                          Status          Python
//   std::invalid_argument, domain_error invalid        ValueError
//   std::length_error                  exhausted       ValueError  (a counter or size limit was reached)
//   std::overflow_error                range           OverflowError
//   std::bad_alloc                     no_memory       MemoryError
//   any other std::exception           internal        RuntimeError
//   anything else                      internal        RuntimeError
#pragma once
#include <exception>
#include <new>
#include <stdexcept>

namespace pydp {

// Scoped by the namespace status_codes (write pydp::Status::invalid), yet an unscoped enum: a Status
// converts to its int code, as the C ABI's pydp_status and the Python binding of the calibration's
// Status (which compares equal to the int) expect.
namespace status_codes {
enum Status : int {
    ok = 0,
    null_argument = 1,    // a required pointer argument is NULL (C ABI only)
    invalid = 2,          // an argument is NaN, infinite, out of range or unknown
    no_finite_scale = 3,  // no finite noise scale reaches (epsilon, delta)
    verify_failed = 4,    // the computed scale failed its own verification
    no_convergence = 5,   // the root finder did not converge
    exhausted = 6,        // a random stream's counter space (or another size limit) is used up
    no_memory = 7,        // allocation failed
    entropy = 8,          // the operating system's entropy source failed
    internal = 9,         // any other failure (a bug)
    scale_overflow = 10,  // the minimal noise scale exceeds the double range
    range = 11,           // a noisy value left the exactly representable range
};
}  // namespace status_codes
using status_codes::Status;

// A static description of a status (pydp_strerror of the C ABI).
inline const char* status_text(Status s) noexcept {
    switch (s) {
        case Status::ok: return "success";
        case Status::null_argument: return "a required pointer argument is NULL";
        case Status::invalid: return "an argument is NaN, infinite, out of range or unknown";
        case Status::no_finite_scale: return "no finite noise scale reaches (epsilon, delta)";
        case Status::verify_failed: return "the computed scale failed its own verification";
        case Status::no_convergence: return "the root finder did not converge";
        case Status::exhausted: return "the random stream is exhausted";
        case Status::no_memory: return "out of memory";
        case Status::entropy: return "the operating system's entropy source failed";
        case Status::internal: return "internal error";
        case Status::scale_overflow: return "the minimal noise scale exceeds the double range";
        case Status::range: return "a noisy value left the exactly representable range";
    }
    return "unknown error code";
}

// What a caught exception stands for. The message is the exception's what(), except for std::bad_alloc
// (whose what() names no cause) and non-standard exceptions, which get a fixed text.
struct Failure {
    Status status;
    const char* message;  // valid while the exception is alive (inside the catch block)
};

// The Failure of the exception being handled: call it inside a catch block only.
inline Failure current_failure() noexcept {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        return {Status::no_memory, status_text(Status::no_memory)};
    } catch (const std::length_error& e) {
        return {Status::exhausted, e.what()};
    } catch (const std::invalid_argument& e) {
        return {Status::invalid, e.what()};
    } catch (const std::domain_error& e) {
        return {Status::invalid, e.what()};
    } catch (const std::overflow_error& e) {
        return {Status::range, e.what()};
    } catch (const std::exception& e) {
        return {Status::internal, e.what()};
    } catch (...) {
        return {Status::internal, "unknown C++ exception"};
    }
}

}  // namespace pydp
