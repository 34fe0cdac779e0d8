# Cython declarations of pydp_core's C ABI (pydp/capi.h, documented there and in docs/cython.md).
# Every function is nogil and returns a pydp_status (PYDP_OK = 0); pydp_last_error() gives the message.
# Compile with include_dirs=[pydp_core.get_include()] and link libpydp_capi (docs/cython.md).
# pydp_core.random, pydp_core.calibration and pydp_core.release cimport from here by subject.
from libc.stdint cimport uint8_t, uint64_t

cdef extern from "pydp/capi.h" nogil:
    ctypedef enum pydp_status:
        PYDP_OK
        PYDP_ERR_NULL
        PYDP_ERR_INVALID
        PYDP_ERR_NO_FINITE_SCALE
        PYDP_ERR_VERIFY_FAILED
        PYDP_ERR_NO_CONVERGENCE
        PYDP_ERR_EXHAUSTED
        PYDP_ERR_NO_MEMORY
        PYDP_ERR_ENTROPY
        PYDP_ERR_INTERNAL
        PYDP_ERR_SCALE_OVERFLOW
        PYDP_ERR_RANGE
    enum:
        PYDP_ABI_VERSION
        PYDP_LAPLACE
        PYDP_GAUSSIAN
        PYDP_LOGISTIC
        PYDP_SUBBOTIN
        PYDP_ADD_REMOVE
        PYDP_SUBSTITUTION
    const char* pydp_strerror(int code)
    const char* pydp_last_error()
    const char* pydp_version()
    int pydp_abi_version()

    # calibration
    pydp_status pydp_minimal_scale(int family, double r, double epsilon, double delta, double sensitivity,
                                   double* scale)
    pydp_status pydp_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity,
                                     double* delta)
    pydp_status pydp_log_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity,
                                         double* log_delta)
    pydp_status pydp_epsilon_for_delta(int family, double r, double delta, double scale, double sensitivity,
                                       double* epsilon)

    # the keyed generator and the bulk samplers
    ctypedef struct pydp_rng:
        pass
    pydp_status pydp_rng_new_os(pydp_rng** out)
    pydp_status pydp_rng_new(const uint8_t* key, uint64_t stream, pydp_rng** out)
    pydp_status pydp_rng_spawn(const pydp_rng* rng, uint64_t i, pydp_rng** out)
    void pydp_rng_free(pydp_rng* rng)
    pydp_status pydp_rng_fill_u64(pydp_rng* rng, uint64_t* out, size_t n)
    pydp_status pydp_rng_normal(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads)
    pydp_status pydp_rng_laplace(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads)
    pydp_status pydp_rng_logistic(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads)
    pydp_status pydp_rng_subbotin(pydp_rng* rng, double r, double loc, double scale, double* out, size_t n,
                                  unsigned threads)
    pydp_status pydp_rng_exponential(pydp_rng* rng, double scale, double* out, size_t n, unsigned threads)
    pydp_status pydp_rng_uniform(pydp_rng* rng, double low, double high, double* out, size_t n, unsigned threads)
    pydp_status pydp_rng_gamma(pydp_rng* rng, double shape, double scale, double* out, size_t n, unsigned threads)

    # calibration of the grid releases (one value per query): the Python plans' parameters
    ctypedef struct pydp_grid_plan:
        uint64_t num
        uint64_t den
        int grid_exponent
        uint64_t shift
        double delta_achieved
    pydp_status pydp_calibrate_laplace_release(double epsilon, double delta, double sensitivity, int grid_bits,
                                               pydp_grid_plan* plan)
    pydp_status pydp_calibrate_gaussian_release(double epsilon, double delta, double sensitivity, int grid_bits,
                                                pydp_grid_plan* plan)
    ctypedef struct pydp_lattice_plan:
        uint64_t s
        int weight_bits
        int grid_exponent
        uint64_t shift
        double delta_achieved
        uint64_t table_half
    pydp_status pydp_calibrate_lattice_release(int family, double r, double epsilon, double delta, double sensitivity,
                                               int grid_bits, int timing_stable, pydp_lattice_plan* plan)
    # exact releases on a grid
    pydp_status pydp_release_laplace(pydp_rng* rng, uint64_t t_num, uint64_t t_den, int grid_exponent, double low,
                                     double high, const double* x, double* out, size_t n, unsigned threads)
    pydp_status pydp_release_gaussian(pydp_rng* rng, uint64_t sigma2_num, uint64_t sigma2_den, int grid_exponent,
                                      double low, double high, const double* x, double* out, size_t n,
                                      unsigned threads)
    pydp_status pydp_release_lattice(pydp_rng* rng, int family, double r, uint64_t s, int weight_bits,
                                     int timing_stable, int grid_exponent, double low, double high, const double* x,
                                     double* out, size_t n, unsigned threads)
    pydp_status pydp_release_pure_logistic(pydp_rng* rng, uint64_t s, int weight_bits, int grid_exponent, double low,
                                           double high, const double* x, double* out, size_t n, unsigned threads)
    pydp_status pydp_pure_logistic_epsilon(uint64_t s, int weight_bits, uint64_t shift, double* epsilon)

    # vector releases on a grid (one query of m coordinates)
    enum:
        PYDP_NORM_L1
        PYDP_NORM_LINF
        PYDP_NORM_L2
        PYDP_MECH_LAPLACE
        PYDP_MECH_GAUSSIAN
    ctypedef struct pydp_vector_plan:
        int mechanism
        int norm
        uint64_t dimension
        uint64_t num
        uint64_t den
        int grid_exponent
        uint64_t shift
        double delta_achieved
    pydp_status pydp_release_calibrate_laplace_vector(double epsilon, double delta, double sensitivity, int norm,
                                                      uint64_t dimension, int grid_bits, pydp_vector_plan* plan)
    pydp_status pydp_release_calibrate_gaussian_vector(double epsilon, double delta, double sensitivity,
                                                       uint64_t dimension, int grid_bits, pydp_vector_plan* plan)
    pydp_status pydp_zcdp_log_delta(double rho, double epsilon, double* log_delta, double* alpha)
    pydp_status pydp_release_vector(pydp_rng* rng, const pydp_vector_plan* plan, double low, double high,
                                    const double* x, double* out, size_t vectors, unsigned threads)

    # keyed per-group releases
    pydp_status pydp_keyed_release_laplace(const pydp_rng* rng, const uint64_t* streams, uint64_t t_num,
                                           uint64_t t_den, int grid_exponent, const double* x, double* out, size_t n,
                                           unsigned threads)
    pydp_status pydp_keyed_release_gaussian(const pydp_rng* rng, const uint64_t* streams, uint64_t sigma2_num,
                                            uint64_t sigma2_den, int grid_exponent, const double* x, double* out,
                                            size_t n, unsigned threads)

    # privacy-loss distributions
    ctypedef struct pydp_pld:
        pass
    pydp_status pydp_pld_from_noise(int family, double r, double scale, double sensitivity, double sampling_rate,
                                    int neighbours, double value_step, pydp_pld** out)
    pydp_status pydp_pld_compose(const pydp_pld* a, const pydp_pld* b, pydp_pld** out)
    pydp_status pydp_pld_self_compose(const pydp_pld* a, uint64_t k, pydp_pld** out)
    pydp_status pydp_pld_delta(const pydp_pld* pld, double epsilon, double* lower, double* upper)
    pydp_status pydp_pld_epsilon(const pydp_pld* pld, double delta, double* lower, double* upper)
    pydp_status pydp_pld_steps(const pydp_pld* pld, uint64_t* steps)
    void pydp_pld_free(pydp_pld* pld)
    pydp_status pydp_pld_calibrate(int family, double r, double epsilon, double delta, double sensitivity,
                                   uint64_t steps, double sampling_rate, int neighbours, double value_step,
                                   double* scale)
