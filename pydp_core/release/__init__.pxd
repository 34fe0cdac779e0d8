# cimport pydp_core.release: the calibration of the discrete Laplace, Gaussian and lattice plans, and the exact
# grid releases of a buffer from a calibrated plan's parameters (nogil, from pydp/capi.h; docs/cython.md).
from pydp_core.capi cimport (
    pydp_status, pydp_last_error, pydp_rng, pydp_rng_new_os, pydp_rng_free,
    pydp_release_laplace, pydp_release_gaussian, pydp_release_lattice, PYDP_SUBBOTIN, PYDP_LOGISTIC,
    pydp_keyed_release_laplace, pydp_keyed_release_gaussian,
    pydp_grid_plan, pydp_calibrate_laplace_release, pydp_calibrate_gaussian_release,
    pydp_lattice_plan, pydp_calibrate_lattice_release, pydp_release_pure_logistic, pydp_pure_logistic_epsilon,
)
