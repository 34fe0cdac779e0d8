/* pydp_core C ABI: exact calibration, the keyed ChaCha20 generator and the bulk samplers, for C and for
 * bindings in other languages (Rust, Go, Java, ...). Documented in docs/cpp.md.
 *
 * Link: with CMake, `find_package(pydp_core CONFIG)` and `target_link_libraries(app pydp_core::capi)`
 * (static) or `pydp_core::capi_shared`; by hand, `cc -std=c99 app.c -I<include dir> <lib dir>/libpydp_capi.a
 * -lstdc++ -lm -lpthread` (the library is written in C++17; its C++ runtime must be linked) or
 * `cc -std=c99 app.c -I<include dir> -L<lib dir> -l:libpydp_capi.so.1 -Wl,-rpath,<lib dir>`. From Python,
 * pydp_core.get_include() and pydp_core.get_library_dir() give the two directories of an installed wheel.
 *
 * Conventions: every function returns a pydp_status (PYDP_OK = 0 on success) and writes its result
 * through a pointer argument, which is left untouched on failure. No C++ exception crosses this ABI.
 * Arguments are checked: NULL pointers, NaN, infinities, out-of-range values and sizes above
 * PYDP_MAX_ELEMENTS are errors, never a crash or a silent NaN. pydp_strerror names each code;
 * pydp_last_error() gives the message of the calling thread's last call (which argument, which check).
 *
 * Thread safety: the calibration and PLD query functions may be called from any thread (a pydp_pld is
 * immutable; its cached composition is guarded). A pydp_rng must not be used from two threads at once
 * (give each thread its own: pydp_rng_spawn); the bulk functions run on `threads` worker threads (0 = all
 * cores, at most PYDP_MAX_THREADS: the one thread cap of the library) and give the same output for
 * every count.
 *
 * Versions: pydp_version() is the library's release; PYDP_ABI_VERSION (the shared library's soname,
 * libpydp_capi.so.<ABI>) changes only when an existing declaration here changes incompatibly.
 */
#ifndef PYDP_CAPI_H
#define PYDP_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions, limits ----------------------------------------------------------------------------- */
#define PYDP_ABI_VERSION 1
#define PYDP_MAX_THREADS 4096u
/* The largest element count of one call (2^37 doubles: 1 TiB); larger counts are PYDP_ERR_INVALID. */
#define PYDP_MAX_ELEMENTS (((size_t)1) << 37)

/* ---- status codes --------------------------------------------------------------------------------- */
typedef enum pydp_status {
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
    PYDP_ERR_SCALE_OVERFLOW = 10, /* the minimal noise scale exceeds the double range: nothing returned */
    PYDP_ERR_RANGE = 11           /* a noisy value left the exactly representable range: nothing returned */
} pydp_status;

/* A static, human-readable description of a status code. */
const char* pydp_strerror(int code);
/* The message of the calling thread's last call: "" after a success, else what failed and why (for
 * example "epsilon must be finite and >= 0, got nan"). Valid until this thread's next call. */
const char* pydp_last_error(void);
/* The library's version, e.g. "0.1.0" (the same as pydp/version.hpp and the Python package). */
const char* pydp_version(void);
/* PYDP_ABI_VERSION of the library linked (compare with the header's to detect a mismatch). */
int pydp_abi_version(void);

/* ---- noise families ------------------------------------------------------------------------------ */
/* Standard symmetric log-concave families (Vinterbo 2022). For PYDP_SUBBOTIN the order r >= 1 is
 * required (r = 1 is the Laplace, r = 2 the Gaussian); for the other families r is ignored. */
enum { PYDP_LAPLACE = 0, PYDP_GAUSSIAN = 1, PYDP_LOGISTIC = 2, PYDP_SUBBOTIN = 3 };

/* ---- calibration (exact (epsilon, delta) analysis of q(d) + scale * X) ---------------------------- */
/* The verified minimal scale for (epsilon, delta)-DP at this sensitivity: never below the exact minimum,
 * above it by about 1e-12 relative at most. epsilon >= 0 finite, 0 <= delta < 1, sensitivity > 0 finite.
 * delta = 0 has a finite answer for the Laplace and Logistic families only (PYDP_ERR_NO_FINITE_SCALE). */
pydp_status pydp_minimal_scale(int family, double r, double epsilon, double delta, double sensitivity, double* scale);

/* The smallest delta for which q(d) + scale * X is (epsilon, delta)-DP (the privacy profile), and its
 * natural logarithm (finite where delta underflows; -inf for delta = 0). epsilon >= 0 (may be +inf),
 * scale > 0, sensitivity > 0, both finite. */
pydp_status pydp_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity, double* delta);
pydp_status pydp_log_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity,
                             double* log_delta);

/* The smallest epsilon with privacy_profile(epsilon) <= delta, rounded up; +inf where no finite epsilon
 * reaches delta (delta = 0 with an MLR-unbounded family). 0 <= delta < 1. */
pydp_status pydp_epsilon_for_delta(int family, double r, double delta, double scale, double sensitivity, double* epsilon);

/* ---- the keyed ChaCha20 generator ---------------------------------------------------------------- */
/* A generator is (32-byte key, 64-bit stream id, block counter); its output is the ChaCha20 keystream of
 * (key, nonce = stream id) read as little-endian 64-bit words (the same stream as pydp_core's Python
 * Random and numpy BitGenerator for the same key). A key from pydp_rng_new_os is secret and random: use
 * it for releases. A key you choose makes a reproducible stream: for tests and simulations only. */
typedef struct pydp_rng pydp_rng;

/* A generator with a fresh 256-bit key from the operating system's entropy (getrandom or /dev/urandom). */
pydp_status pydp_rng_new_os(pydp_rng** out);
/* A generator for (key, stream). stream must not be 2^64 - 1 (reserved for key derivation). */
pydp_status pydp_rng_new(const uint8_t key[32], uint64_t stream, pydp_rng** out);
/* The independent generator for task or partition i (a ChaCha20-derived key; same as Random.stream(i)). */
pydp_status pydp_rng_spawn(const pydp_rng* rng, uint64_t i, pydp_rng** out);
/* Frees a generator (NULL is allowed). */
void pydp_rng_free(pydp_rng* rng);

/* The next n 64-bit words of the stream, in order. */
pydp_status pydp_rng_fill_u64(pydp_rng* rng, uint64_t* out, size_t n);

/* ---- bulk samplers -------------------------------------------------------------------------------- */
/* Fill out[0..n) (float64), with the same values as pydp_core.Random's samplers of the same name for the
 * same generator state: the call reserves fresh chunks of the stream, so two calls never share words.
 * threads: worker threads, 0 = all cores (the output does not depend on it). loc finite; scale finite
 * and >= 0. */
pydp_status pydp_rng_normal(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads);
pydp_status pydp_rng_laplace(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads);
pydp_status pydp_rng_logistic(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads);
/* Subbotin_r: loc + scale * X, X of density exp(-|x|^r / r) / C(r), r >= 1 finite. */
pydp_status pydp_rng_subbotin(pydp_rng* rng, double r, double loc, double scale, double* out, size_t n, unsigned threads);
pydp_status pydp_rng_exponential(pydp_rng* rng, double scale, double* out, size_t n, unsigned threads);
/* Uniform on [low, high); high - low finite. */
pydp_status pydp_rng_uniform(pydp_rng* rng, double low, double high, double* out, size_t n, unsigned threads);
/* Gamma(shape, scale), shape > 0 finite. */
pydp_status pydp_rng_gamma(pydp_rng* rng, double shape, double scale, double* out, size_t n, unsigned threads);

/* ---- exact releases on a grid (pydp_core.release; docs/release.md) --------------------------------- */
/* out[i] = (round(clamp(x[i], low, high) / g) + Y_i) * g with g = 2^grid_exponent and Y_i exact integer
 * noise in grid steps, drawn from fresh chunks of rng (so the same values as the Python plan's release
 * for the same generator state: release.calibrate_*_release(...).release(x, rng=Random)). The parameters
 * are those of a calibrated plan (GridRelease.parameter, grid_exponent, LatticeRelease.weight_bits,
 * timing_stable in Python, or the pydp_calibrate_*_release functions below). A release needs a secret key (pydp_rng_new_os).
 * low <= high (pass -INFINITY, INFINITY for no clamp); grid_exponent in [-1021, 970]; every value must be
 * finite and at most 2^52 grid steps after the clamp (else PYDP_ERR_INVALID; on any failure the contents
 * of out are unspecified and must not be published). */
/* Calibration of these releases (one value per query; the plans of pydp_core.release with dimension 1):
 * the verified smallest integer noise parameter on the grid, the same plan as calibrate_laplace_release(
 * epsilon=, delta=, sensitivity=, grid_bits=) and calibrate_gaussian_release(...) in Python. num / den is
 * t (discrete Laplace) or sigma^2 (discrete Gaussian) in grid steps (den = 1), the grid is
 * 2^grid_exponent, shift the integer sensitivity k on the grid, and delta_achieved the exact delta at
 * epsilon of the plan (0 for a pure Laplace plan). Certified: the exact profile at num meets delta with a
 * relative margin of 1e-12 (pure DP: k / t <= epsilon, decided exactly), and num - 1 is checked to fail;
 * otherwise an error and nothing written. epsilon >= 0 finite, 0 <= delta < 1 (> 0 for the Gaussian;
 * the Laplace needs epsilon > 0 when delta = 0), sensitivity > 0 finite, grid_bits in [0, 30] (16 is
 * Python's default). Pass the plan to pydp_release_laplace / _gaussian (t_num = num, t_den = den). */
typedef struct pydp_grid_plan {
    uint64_t num;
    uint64_t den;
    int grid_exponent;
    uint64_t shift;
    double delta_achieved;
} pydp_grid_plan;
pydp_status pydp_calibrate_laplace_release(double epsilon, double delta, double sensitivity, int grid_bits,
                                           pydp_grid_plan* plan);
pydp_status pydp_calibrate_gaussian_release(double epsilon, double delta, double sensitivity, int grid_bits,
                                            pydp_grid_plan* plan);
/* Calibration of the lattice releases: calibrate_subbotin_release(r=, ...) (family PYDP_SUBBOTIN, r >= 1)
 * and calibrate_logistic_release(...) (PYDP_LOGISTIC, r ignored) of Python, the same plan: the smallest
 * integer scale s (grid steps) whose exact table profile at the shift meets delta within the margin (s - 1
 * checked to fail), the table's weight bits and half size (its entries are table_half + 1). grid_bits -1 is
 * Python's automatic grid (None), else in [0, 30]; timing_stable 0 or 1. Pass s, weight_bits,
 * grid_exponent and timing_stable to pydp_release_lattice.
 * delta = 0 (pure epsilon-DP) is for PYDP_LOGISTIC only (PYDP_ERR_NO_FINITE_SCALE for PYDP_SUBBOTIN) and
 * needs epsilon > 0 and timing_stable = 0 (else PYDP_ERR_INVALID): Python's PureLogisticRelease, the table
 * down to the weight 2^(P - 12) with an exact geometric tail (docs/release.md, section 6), the smallest s
 * whose certified log-ratio bound at the shift is at most epsilon (s - 1 checked to fail); delta_achieved
 * is 0 and table_half the table's half size before the tail. Pass s, weight_bits and grid_exponent to
 * pydp_release_pure_logistic (not pydp_release_lattice, whose law has no tail). */
typedef struct pydp_lattice_plan {
    uint64_t s;
    int weight_bits;
    int grid_exponent;
    uint64_t shift;
    double delta_achieved;
    uint64_t table_half;
} pydp_lattice_plan;
pydp_status pydp_calibrate_lattice_release(int family, double r, double epsilon, double delta, double sensitivity,
                                           int grid_bits, int timing_stable, pydp_lattice_plan* plan);
/* Discrete Laplace, t = t_num / t_den grid steps (Canonne, Kamath and Steinke 2020). */
pydp_status pydp_release_laplace(pydp_rng* rng, uint64_t t_num, uint64_t t_den, int grid_exponent, double low,
                                 double high, const double* x, double* out, size_t n, unsigned threads);
/* Discrete Gaussian, sigma^2 = sigma2_num / sigma2_den grid steps squared. */
pydp_status pydp_release_gaussian(pydp_rng* rng, uint64_t sigma2_num, uint64_t sigma2_den, int grid_exponent,
                                  double low, double high, const double* x, double* out, size_t n, unsigned threads);
/* The lattice laws: family PYDP_SUBBOTIN (order r >= 1) or PYDP_LOGISTIC, integer scale s >= 1 in grid
 * steps, weight_bits in [1, 62] (the plan's; the table's total weight must stay below 2^63), timing_stable
 * 0 or 1. The weight table is built on each call. */
pydp_status pydp_release_lattice(pydp_rng* rng, int family, double r, uint64_t s, int weight_bits, int timing_stable,
                                 int grid_exponent, double low, double high, const double* x, double* out, size_t n,
                                 unsigned threads);

/* The pure-DP Logistic law of a delta = 0 PYDP_LOGISTIC plan of pydp_calibrate_lattice_release: integer
 * scale s in [1, 2^40] grid steps, weight_bits in [13, 62] (the plan's); the same values as the Python plan's
 * release for the same generator state. The table is built on each call. */
pydp_status pydp_release_pure_logistic(pydp_rng* rng, uint64_t s, int weight_bits, int grid_exponent, double low,
                                       double high, const double* x, double* out, size_t n, unsigned threads);
/* The certified upper bound on the privacy loss max_y log(P(y) / P(y + shift)) of that law (Python's
 * PureLogisticRelease.epsilon_achieved at the plan's shift), shift >= 1. */
pydp_status pydp_pure_logistic_epsilon(uint64_t s, int weight_bits, uint64_t shift, double* epsilon);

/* ---- vector releases on a grid (one query of m coordinates; pydp_core.release, dimension = m) ------- */
/* The plan of one vector query of `dimension` = m coordinates whose neighbouring values differ by at most
 * `sensitivity` in the norm `norm`: the same plan, field for field, as Python's
 * calibrate_laplace_release(epsilon=, delta=, sensitivity=, grid_bits=, dimension=m, norm=) and
 * calibrate_gaussian_release(..., dimension=m) (both call the one C++ routine behind these functions,
 * pydp/release/grid_plan.hpp). num / den is t (discrete Laplace) or sigma^2 (discrete Gaussian) in grid
 * steps (den = 1), the grid is 2^grid_exponent, shift the rounding-charged bound on the integer shift
 * vector (Laplace: its l1 norm k, floor(D) + m for l1 and m * (floor(D) + 1) for l_inf, D = sensitivity
 * in grid steps; Gaussian: its l2 norm K = ceil(D + sqrt(m))), and delta_achieved the delta of the plan at
 * epsilon (0 for the Laplace, which is pure k / t <= epsilon, decided exactly; for the Gaussian the
 * certified zCDP bound with rho = K^2 / (2 sigma^2), pydp_zcdp_log_delta). num - 1 is checked to fail.
 * For m = 1 the plans are those of pydp_calibrate_laplace_release / _gaussian_release (norm ignored).
 * epsilon > 0 finite (>= 0 for m = 1 as there), 0 <= delta < 1 (> 0 for the Gaussian), sensitivity > 0
 * finite, 1 <= dimension <= 2^40, grid_bits in [0, 30] (16 is Python's default). */
enum { PYDP_NORM_L1 = 0, PYDP_NORM_LINF = 1, PYDP_NORM_L2 = 2 };
enum { PYDP_MECH_LAPLACE = 0, PYDP_MECH_GAUSSIAN = 1 };
typedef struct pydp_vector_plan {
    int mechanism; /* PYDP_MECH_LAPLACE or PYDP_MECH_GAUSSIAN */
    int norm;      /* PYDP_NORM_L1 or PYDP_NORM_LINF (Laplace), PYDP_NORM_L2 (Gaussian) */
    uint64_t dimension;
    uint64_t num;
    uint64_t den;
    int grid_exponent;
    uint64_t shift;
    double delta_achieved;
} pydp_vector_plan;
/* Discrete Laplace, norm PYDP_NORM_L1 or PYDP_NORM_LINF. */
pydp_status pydp_release_calibrate_laplace_vector(double epsilon, double delta, double sensitivity, int norm,
                                                  uint64_t dimension, int grid_bits, pydp_vector_plan* plan);
/* Discrete Gaussian, l2 sensitivity. */
pydp_status pydp_release_calibrate_gaussian_vector(double epsilon, double delta, double sensitivity, uint64_t dimension,
                                                   int grid_bits, pydp_vector_plan* plan);
/* The (epsilon, delta) of a rho-zCDP mechanism (Canonne, Kamath and Steinke 2020):
 * log_delta = min over alpha > 1 of (alpha - 1)(alpha rho - epsilon) - log(alpha - 1) + alpha log(1 - 1/alpha),
 * certified: the value at the returned alpha (which may be NULL if not wanted), rounded up by a bound on
 * its floating-point error, and at most 0; the same values as pydp_core.accounting.conversions
 * .zcdp_log_delta (one C++ routine). rho > 0 finite, epsilon >= 0 finite. */
pydp_status pydp_zcdp_log_delta(double rho, double epsilon, double* log_delta, double* alpha);
/* Releases `vectors` vectors of plan->dimension coordinates each: x and out hold vectors * dimension
 * values, row by row. Row i gets the values of the i-th of `vectors` successive Python calls
 * plan.release(x[i], rng=Random) on the same generator (each row reserves fresh chunks of rng, in order).
 * The plan's guarantee is per vector: `vectors` rows of one dataset compose (k rows cost k epsilon).
 * plan as filled by the two functions above; low, high and the values as in pydp_release_laplace;
 * vectors * dimension at most PYDP_MAX_ELEMENTS. */
pydp_status pydp_release_vector(pydp_rng* rng, const pydp_vector_plan* plan, double low, double high, const double* x,
                                double* out, size_t vectors, unsigned threads);

/* ---- keyed per-group releases (the aggregation kernels; docs/aggregate.md) -------------------------- */
/* out[j] = (round(x[j] / g) + Y_j) * g, g = 2^grid_exponent, with Y_j the first draw of the generator
 * spawned for streams[j] (pydp_rng_spawn(rng, streams[j]); the same as pydp_core.Random(key).stream(
 * streams[j]) handing a one-value release): a group's noise depends on the key and its stream id only,
 * never on the other groups, their order or the thread count. rng is not advanced. streams[j] must not
 * be 2^64 - 1; the values as in the releases above (no clamp). */
pydp_status pydp_keyed_release_laplace(const pydp_rng* rng, const uint64_t* streams, uint64_t t_num, uint64_t t_den,
                                       int grid_exponent, const double* x, double* out, size_t n, unsigned threads);
pydp_status pydp_keyed_release_gaussian(const pydp_rng* rng, const uint64_t* streams, uint64_t sigma2_num,
                                        uint64_t sigma2_den, int grid_exponent, const double* x, double* out, size_t n,
                                        unsigned threads);

/* ---- privacy-loss distributions (pydp_core.accounting.pld.PLD; docs/pld.md) ----------------------- */
/* A PLD is a composition of additive-noise mechanisms, each q(d) + scale * X for a family above, with
 * Poisson sampling at rate q; certified intervals come from a pessimistic and an optimistic
 * discretisation of the loss on a grid of step value_step (Koskela, Jalko and Honkela 2020; Doroshenko et al.
 * 2022), with truncated mass 1e-15. The same as PLD.from_noise(..., sampling_rate=q, neighbours=...)
 * .with_discretization(value_step=h) for the same h, exactly, for h >= 2.5e-4 (below that the Python
 * PLD also intersects with a screening grid and can be tighter). value_step is used as given (Python's
 * PLD.value_step may lower a given step slightly for a Laplace: pass that value for identical bounds). */
typedef struct pydp_pld pydp_pld;
enum { PYDP_ADD_REMOVE = 0, PYDP_SUBSTITUTION = 1 };

/* One mechanism: scale > 0 and sensitivity > 0 finite, 0 < sampling_rate <= 1, neighbours
 * PYDP_ADD_REMOVE or PYDP_SUBSTITUTION, 0 < value_step <= 1. */
pydp_status pydp_pld_from_noise(int family, double r, double scale, double sensitivity, double sampling_rate,
                                int neighbours, double value_step, pydp_pld** out);
/* The composition of a and b (the grid step of a). */
pydp_status pydp_pld_compose(const pydp_pld* a, const pydp_pld* b, pydp_pld** out);
/* The k-fold composition of a with itself, 1 <= k (at most 2^40 steps in all). */
pydp_status pydp_pld_self_compose(const pydp_pld* a, uint64_t k, pydp_pld** out);
/* Certified bounds lower <= delta(epsilon) <= upper (epsilon >= 0 finite) and
 * lower <= epsilon(delta) <= upper (0 <= delta <= 1; upper may be +inf). The first query composes (one
 * FFT composition per neighbour order) and caches the result in the PLD. */
pydp_status pydp_pld_delta(const pydp_pld* pld, double epsilon, double* lower, double* upper);
pydp_status pydp_pld_epsilon(const pydp_pld* pld, double delta, double* lower, double* upper);
/* The number of composed mechanisms. */
pydp_status pydp_pld_steps(const pydp_pld* pld, uint64_t* steps);
/* Frees a PLD (NULL is allowed). */
void pydp_pld_free(pydp_pld* pld);
/* A scale for `steps` compositions of the mechanism above that is certified (epsilon, delta)-DP: the
 * upper bound on delta(epsilon) of the composition at the returned scale is <= delta (checked at that
 * scale), and the scale is within a relative 1e-6 of the smallest scale passing the same check (found by
 * bisection). epsilon >= 0 finite, 0 < delta < 1, steps >= 1. Not the same value as PLD.calibrate (whose
 * search and grid refinement differ), but certified in the same sense. */
pydp_status pydp_pld_calibrate(int family, double r, double epsilon, double delta, double sensitivity, uint64_t steps,
                               double sampling_rate, int neighbours, double value_step, double* scale);

#ifdef __cplusplus
}
#endif

#endif /* PYDP_CAPI_H */
