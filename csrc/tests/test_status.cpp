// Tests of the error convention (csrc/include/pydp/status.hpp): pydp::current_failure maps each kind of
// exception the kernels throw to its Status and keeps its message; status_text describes every Status
// once and an unknown code as such.
// Built by CMake (PYDP_BUILD_TESTS) and run by ctest; the exit status is the number of failures.
#include <cstring>
#include <new>
#include <stdexcept>

#include "pydp/status.hpp"

#include "check.hpp"

namespace {
using pydp::Status;

template <class Throw>
pydp::Failure failure_of(Throw&& t) {
    try {
        t();
    } catch (...) {
        return pydp::current_failure();
    }
    return {Status::ok, ""};
}

bool same(const char* a, const char* b) { return std::strcmp(a, b) == 0; }

void mapping() {
    pydp::Failure f = failure_of([] { throw std::invalid_argument("epsilon: bad"); });
    CHECK(f.status == Status::invalid && same(f.message, "epsilon: bad"));
    f = failure_of([] { throw std::domain_error("r < 1"); });
    CHECK(f.status == Status::invalid && same(f.message, "r < 1"));
    f = failure_of([] { throw std::length_error("stream exhausted"); });
    CHECK(f.status == Status::exhausted && same(f.message, "stream exhausted"));
    f = failure_of([] { throw std::overflow_error("2^62"); });
    CHECK(f.status == Status::range && same(f.message, "2^62"));
    f = failure_of([] { throw std::bad_alloc(); });
    CHECK(f.status == Status::no_memory && same(f.message, "out of memory"));
    f = failure_of([] { throw std::logic_error("misuse"); });
    CHECK(f.status == Status::internal && same(f.message, "misuse"));
    f = failure_of([] { throw 42; });
    CHECK(f.status == Status::internal && same(f.message, "unknown C++ exception"));
}

void texts() {
    for (int i = 0; i <= 11; ++i) {
        CHECK(!same(pydp::status_text(static_cast<Status>(i)), "unknown error code"));
        for (int j = 0; j < i; ++j)
            CHECK(!same(pydp::status_text(static_cast<Status>(i)), pydp::status_text(static_cast<Status>(j))));
    }
    CHECK(same(pydp::status_text(static_cast<Status>(12)), "unknown error code"));
    CHECK(same(pydp::status_text(Status::ok), "success"));
}
}  // namespace

int main() {
    mapping();
    texts();
    return pydp_test::report();
}
