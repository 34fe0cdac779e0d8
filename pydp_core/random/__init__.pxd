# cimport pydp_core.random: the keyed ChaCha20 generator, its bulk samplers (nogil, from pydp/capi.h),
# and numpy's bitgen_t behind pydp_core.random.ChaCha20's capsule (docs/cython.md).
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport uint64_t, uint32_t

from pydp_core.capi cimport (
    pydp_status, pydp_rng, pydp_rng_new, pydp_rng_new_os, pydp_rng_spawn, pydp_rng_free, pydp_rng_fill_u64,
    pydp_rng_normal, pydp_rng_laplace, pydp_rng_logistic, pydp_rng_subbotin, pydp_rng_exponential,
    pydp_rng_uniform, pydp_rng_gamma, pydp_last_error,
)

# numpy's bitgen_t (numpy/random/bitgen.h), the struct in the capsule named "BitGenerator".
ctypedef struct bitgen_t:
    void* state
    uint64_t (*next_uint64)(void* st) noexcept nogil
    uint32_t (*next_uint32)(void* st) noexcept nogil
    double (*next_double)(void* st) noexcept nogil
    uint64_t (*next_raw)(void* st) noexcept nogil


cdef inline bitgen_t* bitgen_of(object bit_generator) except NULL:
    """The bitgen_t of a pydp_core.random.ChaCha20 (or any numpy BitGenerator), valid while it lives."""
    return <bitgen_t*>PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
