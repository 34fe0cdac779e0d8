# cython: language_level=3, boundscheck=False, wraparound=False
# A small Cython extension over pydp_core's .pxd files (built by test_cython_api.py): every call into the
# library runs with the GIL released.
from libc.stdint cimport uint8_t, uint64_t

cimport pydp_core.calibration as cal
cimport pydp_core.random as rnd
cimport pydp_core.release as rel


cdef int check(int rc) except -1:
    if rc != 0:
        raise ValueError(rnd.pydp_last_error().decode())
    return 0


def normals(bytes key, uint64_t stream, double[::1] out):
    """Fill out with standard normals from the stream (key, stream)."""
    cdef const uint8_t* k = <const uint8_t*><const char*>key
    cdef rnd.pydp_rng* rng = NULL
    cdef int rc
    with nogil:
        rc = rnd.pydp_rng_new(k, stream, &rng)
        if rc == 0:
            rc = rnd.pydp_rng_normal(rng, 0.0, 1.0, &out[0], <size_t>out.shape[0], 1)
        rnd.pydp_rng_free(rng)
    check(rc)


def release_laplace(bytes key, uint64_t stream, uint64_t t_num, uint64_t t_den, int grid_exponent,
                    const double[::1] x, double[::1] out):
    """The discrete Laplace grid release of x (a plan's parameters) from the stream (key, stream)."""
    cdef const uint8_t* k = <const uint8_t*><const char*>key
    cdef rnd.pydp_rng* rng = NULL
    cdef int rc
    cdef double inf = float("inf")
    with nogil:
        rc = rnd.pydp_rng_new(k, stream, &rng)
        if rc == 0:
            rc = rel.pydp_release_laplace(rng, t_num, t_den, grid_exponent, -inf, inf, &x[0], &out[0],
                                          <size_t>x.shape[0], 1)
        rnd.pydp_rng_free(rng)
    check(rc)


def gaussian_scale_and_delta(double epsilon, double delta):
    """(minimal_scale, privacy_profile at that scale) of the Gaussian at sensitivity 1."""
    cdef double s = 0.0, d = 0.0
    cdef int rc
    with nogil:
        rc = cal.pydp_minimal_scale(cal.PYDP_GAUSSIAN, 0.0, epsilon, delta, 1.0, &s)
        if rc == 0:
            rc = cal.pydp_privacy_profile(cal.PYDP_GAUSSIAN, 0.0, epsilon, s, 1.0, &d)
    check(rc)
    return s, d


def bitgen_words(object bit_generator, uint64_t[::1] out):
    """Raw words from a numpy BitGenerator's capsule (pydp_core.random.ChaCha20)."""
    cdef rnd.bitgen_t* bg = rnd.bitgen_of(bit_generator)
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = bg.next_uint64(bg.state)


def bad_call():
    """A refused call: the error message reaches Python."""
    cdef double s = 0.0
    check(cal.pydp_minimal_scale(cal.PYDP_GAUSSIAN, 0.0, float("nan"), 1e-5, 1.0, &s))


def gaussian_plan(double epsilon, double delta, double sensitivity, int grid_bits):
    """(num, den, grid_exponent, shift, delta_achieved) of the discrete Gaussian release plan."""
    cdef rel.pydp_grid_plan plan
    cdef int rc
    with nogil:
        rc = rel.pydp_calibrate_gaussian_release(epsilon, delta, sensitivity, grid_bits, &plan)
    check(rc)
    return plan.num, plan.den, plan.grid_exponent, plan.shift, plan.delta_achieved
