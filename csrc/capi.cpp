// The C ABI (csrc/include/pydp/capi.h) over the C++ kernels. Every entry point checks its arguments
// with the same rules as the Python API (pydp_core/_validation.py), runs the kernel inside a catch-all
// guard, and returns an error code: no C++ exception crosses the ABI.
#include "pydp/capi.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "pydp/calibration/profile.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/fill.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/version.hpp"

struct pydp_rng {
    pydp::random::Generator gen;
};

namespace {

using pydp::noise::Family;
using pydp::noise::Kind;
namespace cal = pydp::calibration;

// Runs fn() and maps every exception to an error code.
template <class Fn>
int guarded(Fn&& fn) noexcept {
    try {
        return fn();
    } catch (const std::bad_alloc&) {
        return PYDP_ERR_NO_MEMORY;
    } catch (const std::length_error&) {
        return PYDP_ERR_EXHAUSTED;
    } catch (const std::invalid_argument&) {
        return PYDP_ERR_INVALID;
    } catch (const std::domain_error&) {
        return PYDP_ERR_INVALID;
    } catch (...) {
        return PYDP_ERR_INTERNAL;
    }
}

bool make_family(int family, double r, Family* out) {
    switch (family) {
        case PYDP_LAPLACE: *out = Family::make(Kind::Laplace); return true;
        case PYDP_GAUSSIAN: *out = Family::make(Kind::Gaussian); return true;
        case PYDP_LOGISTIC: *out = Family::make(Kind::Logistic); return true;
        case PYDP_SUBBOTIN:
            if (!(r >= 1.0) || !std::isfinite(r)) return false;
            *out = Family::make(Kind::Subbotin, r);
            return true;
        default: return false;
    }
}

bool epsilon_ok(double eps, bool allow_inf) { return eps >= 0.0 && (allow_inf || std::isfinite(eps)); }
bool delta_ok(double delta) { return delta >= 0.0 && delta < 1.0; }
bool positive_ok(double v) { return v > 0.0 && std::isfinite(v); }

int status_code(cal::Status s) {
    switch (s) {
        case cal::kOk: return PYDP_OK;
        case cal::kNoFiniteScale: return PYDP_ERR_NO_FINITE_SCALE;
        case cal::kVerifyFailed: return PYDP_ERR_VERIFY_FAILED;
        case cal::kNoConvergence: return PYDP_ERR_NO_CONVERGENCE;
        case cal::kScaleOverflow: return PYDP_ERR_SCALE_OVERFLOW;
    }
    return PYDP_ERR_INTERNAL;
}

int log_profile(int family, double r, double eps, double scale, double sens, double* out) {
    Family f;
    if (!make_family(family, r, &f) || !epsilon_ok(eps, true) || !positive_ok(scale) || !positive_ok(sens))
        return PYDP_ERR_INVALID;
    *out = std::isinf(eps) ? -cal::kInf : cal::log_privacy_profile(f, eps, scale, sens);
    return PYDP_OK;
}

// Reads 32 bytes from the operating system's entropy source.
bool os_entropy(unsigned char key[32]) {
#if defined(__linux__) && defined(SYS_getrandom)
    std::size_t got = 0;
    while (got < 32) {
        const long n = syscall(SYS_getrandom, key + got, 32 - got, 0);
        if (n > 0) got += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else break;
    }
    if (got == 32) return true;
#endif
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::size_t got2 = 0;
    while (got2 < 32) {
        const ssize_t n = read(fd, key + got2, 32 - got2);
        if (n > 0) got2 += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else break;
    }
    close(fd);
    return got2 == 32;
}

int new_rng(const unsigned char key[32], std::uint64_t stream, pydp_rng** out) {
    *out = new pydp_rng{pydp::random::Generator(key, stream)};
    return PYDP_OK;
}

// Reserves the chunks and fills out[0..n) with a bulk draw.
int bulk(pydp_rng* rng, double* out, std::size_t n, unsigned threads, const pydp::random::BulkDraw& draw) {
    const unsigned nt = threads == 0 ? pydp::hardware_threads() : threads;
    const pydp::random::ChunkPlan plan = pydp::random::plan_chunks(rng->gen, n);
    draw.fill(rng->gen, plan, nt, out);
    return PYDP_OK;
}

template <class MakeDraw>
int sample(pydp_rng* rng, double* out, std::size_t n, unsigned threads, MakeDraw&& make) noexcept {
    if (!rng || (!out && n > 0)) return PYDP_ERR_NULL;
    return guarded([&]() -> int { return bulk(rng, out, n, threads, make()); });
}

}  // namespace

extern "C" {

const char* pydp_strerror(int code) {
    switch (code) {
        case PYDP_OK: return "success";
        case PYDP_ERR_NULL: return "a required pointer argument is NULL";
        case PYDP_ERR_INVALID: return "an argument is NaN, infinite, out of range or unknown";
        case PYDP_ERR_NO_FINITE_SCALE: return "no finite noise scale reaches (epsilon, delta)";
        case PYDP_ERR_VERIFY_FAILED: return "the computed scale failed its own verification";
        case PYDP_ERR_NO_CONVERGENCE: return "the root finder did not converge";
        case PYDP_ERR_EXHAUSTED: return "the random stream is exhausted";
        case PYDP_ERR_NO_MEMORY: return "out of memory";
        case PYDP_ERR_ENTROPY: return "the operating system's entropy source failed";
        case PYDP_ERR_INTERNAL: return "internal error";
        case PYDP_ERR_SCALE_OVERFLOW: return "the minimal noise scale exceeds the double range";
        default: return "unknown error code";
    }
}

const char* pydp_version(void) { return PYDP_VERSION_STRING; }

int pydp_minimal_scale(int family, double r, double epsilon, double delta, double sensitivity, double* scale) {
    if (!scale) return PYDP_ERR_NULL;
    return guarded([&]() -> int {
        Family f;
        if (!make_family(family, r, &f) || !epsilon_ok(epsilon, false) || !delta_ok(delta) || !positive_ok(sensitivity))
            return PYDP_ERR_INVALID;
        const cal::MinimalScale m = cal::minimal_scale(f, epsilon, delta, sensitivity);
        if (m.status != cal::kOk) return status_code(m.status);
        *scale = m.scale;
        return PYDP_OK;
    });
}

int pydp_log_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity, double* log_delta) {
    if (!log_delta) return PYDP_ERR_NULL;
    return guarded([&]() -> int { return log_profile(family, r, epsilon, scale, sensitivity, log_delta); });
}

int pydp_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity, double* delta) {
    if (!delta) return PYDP_ERR_NULL;
    return guarded([&]() -> int {
        double ld = 0.0;
        const int rc = log_profile(family, r, epsilon, scale, sensitivity, &ld);
        if (rc == PYDP_OK) *delta = std::exp(ld);
        return rc;
    });
}

int pydp_epsilon_for_delta(int family, double r, double delta, double scale, double sensitivity, double* epsilon) {
    if (!epsilon) return PYDP_ERR_NULL;
    return guarded([&]() -> int {
        Family f;
        if (!make_family(family, r, &f) || !delta_ok(delta) || !positive_ok(scale) || !positive_ok(sensitivity))
            return PYDP_ERR_INVALID;
        *epsilon = pydp::calibration::epsilon_for_delta(f, delta, scale, sensitivity);
        return PYDP_OK;
    });
}

int pydp_rng_new_os(pydp_rng** out) {
    if (!out) return PYDP_ERR_NULL;
    return guarded([&]() -> int {
        unsigned char key[32];
        if (!os_entropy(key)) return PYDP_ERR_ENTROPY;
        return new_rng(key, 0, out);
    });
}

int pydp_rng_new(const uint8_t key[32], uint64_t stream, pydp_rng** out) {
    if (!key || !out) return PYDP_ERR_NULL;
    return guarded([&]() -> int { return new_rng(key, stream, out); });
}

int pydp_rng_spawn(const pydp_rng* rng, uint64_t i, pydp_rng** out) {
    if (!rng || !out) return PYDP_ERR_NULL;
    if (i == ~std::uint64_t{0}) return PYDP_ERR_INVALID;  // the same range as Random.stream(i)
    return guarded([&]() -> int {
        *out = new pydp_rng{rng->gen.spawn(i)};
        return PYDP_OK;
    });
}

void pydp_rng_free(pydp_rng* rng) { delete rng; }

int pydp_rng_fill_u64(pydp_rng* rng, uint64_t* out, size_t n) {
    if (!rng || (!out && n > 0)) return PYDP_ERR_NULL;
    return guarded([&]() -> int {
        rng->gen.fill_u64(out, n);
        return PYDP_OK;
    });
}

int pydp_rng_normal(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::normal(loc, scale); });
}
int pydp_rng_laplace(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::laplace(loc, scale); });
}
int pydp_rng_logistic(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::logistic(loc, scale); });
}
int pydp_rng_subbotin(pydp_rng* rng, double r, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::subbotin(r, loc, scale); });
}
int pydp_rng_exponential(pydp_rng* rng, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::exponential(scale); });
}
int pydp_rng_uniform(pydp_rng* rng, double low, double high, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::uniform(low, high); });
}
int pydp_rng_gamma(pydp_rng* rng, double shape, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::gamma(shape, scale); });
}

}  // extern "C"
