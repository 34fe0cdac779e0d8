# cimport pydp_core.calibration: the exact calibration of q(d) + scale * X (nogil, from pydp/capi.h) and
# the privacy-loss distributions' composition and certified intervals (docs/cython.md).
from pydp_core.capi cimport (
    pydp_status, pydp_last_error, PYDP_LAPLACE, PYDP_GAUSSIAN, PYDP_LOGISTIC, PYDP_SUBBOTIN,
    pydp_minimal_scale, pydp_privacy_profile, pydp_log_privacy_profile, pydp_epsilon_for_delta,
    PYDP_ADD_REMOVE, PYDP_SUBSTITUTION, pydp_pld, pydp_pld_from_noise, pydp_pld_compose, pydp_pld_self_compose,
    pydp_pld_delta, pydp_pld_epsilon, pydp_pld_steps, pydp_pld_free, pydp_pld_calibrate,
)
