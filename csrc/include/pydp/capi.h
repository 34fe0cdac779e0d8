/* pydp_core C ABI: exact calibration, the keyed ChaCha20 generator and the bulk samplers, for C and for
 * bindings in other languages (Rust, Go, Java, ...). Documented in docs/cpp.md.
 *
 * Link: with CMake, `find_package(pydp_core CONFIG)` and `target_link_libraries(app pydp_core::capi)`;
 * by hand, `cc -std=c99 app.c -I<include dir> <lib dir>/libpydp_capi.a -lstdc++ -lm -lpthread`
 * (the library is written in C++17; its C++ runtime must be linked).
 *
 * Conventions: every function returns an int error code (PYDP_OK = 0 on success) and writes its result
 * through a pointer argument, which is left untouched on failure. No C++ exception crosses this ABI.
 * Arguments are checked: NULL pointers, NaN, infinities and out-of-range values are errors, never a
 * crash or a silent NaN. pydp_strerror names each code.
 *
 * Thread safety: the calibration functions are pure and may be called from any thread. A pydp_rng must
 * not be used from two threads at once (give each thread its own: pydp_rng_spawn); the bulk samplers
 * themselves run on `threads` worker threads (0 = all cores) and give the same output for every count.
 */
#ifndef PYDP_CAPI_H
#define PYDP_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error codes --------------------------------------------------------------------------------- */
enum {
    PYDP_OK = 0,
    PYDP_ERR_NULL = 1,            /* a required pointer argument is NULL */
    PYDP_ERR_INVALID = 2,         /* an argument is NaN, infinite, out of range or unknown */
    PYDP_ERR_NO_FINITE_SCALE = 3, /* no finite noise scale reaches (epsilon, delta) (e.g. delta = 0, Gaussian) */
    PYDP_ERR_VERIFY_FAILED = 4,   /* the computed scale failed its own verification: nothing returned */
    PYDP_ERR_NO_CONVERGENCE = 5,  /* the root finder did not converge: nothing returned */
    PYDP_ERR_EXHAUSTED = 6,       /* the random stream's counter space is used up */
    PYDP_ERR_NO_MEMORY = 7,       /* allocation failed */
    PYDP_ERR_ENTROPY = 8,         /* the operating system's entropy source failed */
    PYDP_ERR_INTERNAL = 9,        /* any other failure (a bug: please report it) */
    PYDP_ERR_SCALE_OVERFLOW = 10  /* the minimal noise scale exceeds the double range: nothing returned */
};

/* A static, human-readable description of an error code. */
const char* pydp_strerror(int code);
/* The library's version, e.g. "0.1.0" (the same as pydp/version.hpp and the Python package). */
const char* pydp_version(void);

/* ---- noise families ------------------------------------------------------------------------------ */
/* Standard symmetric log-concave families (Vinterbo 2022). For PYDP_SUBBOTIN the order r >= 1 is
 * required (r = 1 is the Laplace, r = 2 the Gaussian); for the other families r is ignored. */
enum { PYDP_LAPLACE = 0, PYDP_GAUSSIAN = 1, PYDP_LOGISTIC = 2, PYDP_SUBBOTIN = 3 };

/* ---- calibration (exact (epsilon, delta) analysis of q(d) + scale * X) ---------------------------- */
/* The verified minimal scale for (epsilon, delta)-DP at this sensitivity: never below the exact minimum,
 * above it by about 1e-12 relative at most. epsilon >= 0 finite, 0 <= delta < 1, sensitivity > 0 finite.
 * delta = 0 has a finite answer for the Laplace and Logistic families only (PYDP_ERR_NO_FINITE_SCALE). */
int pydp_minimal_scale(int family, double r, double epsilon, double delta, double sensitivity, double* scale);

/* The smallest delta for which q(d) + scale * X is (epsilon, delta)-DP (the privacy profile), and its
 * natural logarithm (finite where delta underflows; -inf for delta = 0). epsilon >= 0 (may be +inf),
 * scale > 0, sensitivity > 0, both finite. */
int pydp_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity, double* delta);
int pydp_log_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity,
                             double* log_delta);

/* The smallest epsilon with privacy_profile(epsilon) <= delta, rounded up; +inf where no finite epsilon
 * reaches delta (delta = 0 with an MLR-unbounded family). 0 <= delta < 1. */
int pydp_epsilon_for_delta(int family, double r, double delta, double scale, double sensitivity, double* epsilon);

/* ---- the keyed ChaCha20 generator ---------------------------------------------------------------- */
/* A generator is (32-byte key, 64-bit stream id, block counter); its output is the ChaCha20 keystream of
 * (key, nonce = stream id) read as little-endian 64-bit words (the same stream as pydp_core's Python
 * Random and numpy BitGenerator for the same key). A key from pydp_rng_new_os is secret and random: use
 * it for releases. A key you choose makes a reproducible stream: for tests and simulations only. */
typedef struct pydp_rng pydp_rng;

/* A generator with a fresh 256-bit key from the operating system's entropy (getrandom or /dev/urandom). */
int pydp_rng_new_os(pydp_rng** out);
/* A generator for (key, stream). stream must not be 2^64 - 1 (reserved for key derivation). */
int pydp_rng_new(const uint8_t key[32], uint64_t stream, pydp_rng** out);
/* The independent generator for task or partition i (a ChaCha20-derived key; same as Random.stream(i)). */
int pydp_rng_spawn(const pydp_rng* rng, uint64_t i, pydp_rng** out);
/* Frees a generator (NULL is allowed). */
void pydp_rng_free(pydp_rng* rng);

/* The next n 64-bit words of the stream, in order. */
int pydp_rng_fill_u64(pydp_rng* rng, uint64_t* out, size_t n);

/* ---- bulk samplers -------------------------------------------------------------------------------- */
/* Fill out[0..n) (float64), with the same values as pydp_core.Random's samplers of the same name for the
 * same generator state: the call reserves fresh chunks of the stream, so two calls never share words.
 * threads: worker threads, 0 = all cores (the output does not depend on it). loc finite; scale finite
 * and >= 0. */
int pydp_rng_normal(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads);
int pydp_rng_laplace(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads);
int pydp_rng_logistic(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads);
/* Subbotin_r: loc + scale * X, X of density exp(-|x|^r / r) / C(r), r >= 1 finite. */
int pydp_rng_subbotin(pydp_rng* rng, double r, double loc, double scale, double* out, size_t n, unsigned threads);
int pydp_rng_exponential(pydp_rng* rng, double scale, double* out, size_t n, unsigned threads);
/* Uniform on [low, high); high - low finite. */
int pydp_rng_uniform(pydp_rng* rng, double low, double high, double* out, size_t n, unsigned threads);
/* Gamma(shape, scale), shape > 0 finite. */
int pydp_rng_gamma(pydp_rng* rng, double shape, double scale, double* out, size_t n, unsigned threads);

#ifdef __cplusplus
}
#endif

#endif /* PYDP_CAPI_H */
