//! Raw declarations of pydp_core's C ABI (`pydp/capi.h`, documented there): every function returns a
//! status (0 = success) and `pydp_last_error()` gives the calling thread's message.
#![allow(non_camel_case_types)]
use std::os::raw::{c_char, c_double, c_int, c_uint};

pub type pydp_status = c_int;
pub const PYDP_OK: pydp_status = 0;
pub const PYDP_ABI_VERSION: c_int = 1;
pub const PYDP_LAPLACE: c_int = 0;
pub const PYDP_GAUSSIAN: c_int = 1;
pub const PYDP_LOGISTIC: c_int = 2;
pub const PYDP_SUBBOTIN: c_int = 3;
pub const PYDP_ADD_REMOVE: c_int = 0;
pub const PYDP_SUBSTITUTION: c_int = 1;

#[repr(C)]
pub struct pydp_rng {
    _private: [u8; 0],
}
/// A calibrated discrete Laplace or Gaussian plan (`pydp_grid_plan`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct pydp_grid_plan {
    pub num: u64,
    pub den: u64,
    pub grid_exponent: c_int,
    pub shift: u64,
    pub delta_achieved: c_double,
}
#[repr(C)]
pub struct pydp_pld {
    _private: [u8; 0],
}

extern "C" {
    pub fn pydp_strerror(code: c_int) -> *const c_char;
    pub fn pydp_last_error() -> *const c_char;
    pub fn pydp_version() -> *const c_char;
    pub fn pydp_abi_version() -> c_int;
    pub fn pydp_minimal_scale(family: c_int, r: c_double, epsilon: c_double, delta: c_double, sensitivity: c_double,
                              scale: *mut c_double) -> pydp_status;
    pub fn pydp_rng_new_os(out: *mut *mut pydp_rng) -> pydp_status;
    pub fn pydp_rng_new(key: *const u8, stream: u64, out: *mut *mut pydp_rng) -> pydp_status;
    pub fn pydp_rng_free(rng: *mut pydp_rng);
    pub fn pydp_rng_fill_u64(rng: *mut pydp_rng, out: *mut u64, n: usize) -> pydp_status;
    pub fn pydp_rng_normal(rng: *mut pydp_rng, loc: c_double, scale: c_double, out: *mut c_double, n: usize,
                           threads: c_uint) -> pydp_status;
    pub fn pydp_release_laplace(rng: *mut pydp_rng, t_num: u64, t_den: u64, grid_exponent: c_int, low: c_double,
                                high: c_double, x: *const c_double, out: *mut c_double, n: usize, threads: c_uint)
                                -> pydp_status;
    pub fn pydp_release_gaussian(rng: *mut pydp_rng, sigma2_num: u64, sigma2_den: u64, grid_exponent: c_int,
                                 low: c_double, high: c_double, x: *const c_double, out: *mut c_double, n: usize,
                                 threads: c_uint) -> pydp_status;
    pub fn pydp_calibrate_laplace_release(epsilon: c_double, delta: c_double, sensitivity: c_double, grid_bits: c_int,
                                          plan: *mut pydp_grid_plan) -> pydp_status;
    pub fn pydp_calibrate_gaussian_release(epsilon: c_double, delta: c_double, sensitivity: c_double, grid_bits: c_int,
                                           plan: *mut pydp_grid_plan) -> pydp_status;
    pub fn pydp_pld_from_noise(family: c_int, r: c_double, scale: c_double, sensitivity: c_double,
                               sampling_rate: c_double, neighbours: c_int, value_step: c_double,
                               out: *mut *mut pydp_pld) -> pydp_status;
    pub fn pydp_pld_self_compose(a: *const pydp_pld, k: u64, out: *mut *mut pydp_pld) -> pydp_status;
    pub fn pydp_pld_compose(a: *const pydp_pld, b: *const pydp_pld, out: *mut *mut pydp_pld) -> pydp_status;
    pub fn pydp_pld_delta(pld: *const pydp_pld, epsilon: c_double, lower: *mut c_double, upper: *mut c_double)
                          -> pydp_status;
    pub fn pydp_pld_epsilon(pld: *const pydp_pld, delta: c_double, lower: *mut c_double, upper: *mut c_double)
                            -> pydp_status;
    pub fn pydp_pld_free(pld: *mut pydp_pld);
}
