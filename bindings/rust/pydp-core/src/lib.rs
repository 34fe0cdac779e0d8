//! A safe wrapper over pydp_core's C ABI (`pydp-core-sys`): owned handles freed on drop, errors as
//! `Error { code, message }` with the library's message (`pydp_last_error`).
use pydp_core_sys as sys;
use std::ffi::CStr;

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub code: i32,
    pub message: String,
}

fn check(code: sys::pydp_status) -> Result<(), Error> {
    if code == sys::PYDP_OK {
        return Ok(());
    }
    // The message is the calling thread's, read right after the failed call.
    let message = unsafe { CStr::from_ptr(sys::pydp_last_error()) }.to_string_lossy().into_owned();
    Err(Error { code, message })
}

pub fn version() -> String {
    unsafe { CStr::from_ptr(sys::pydp_version()) }.to_string_lossy().into_owned()
}

/// A calibrated discrete Laplace or Gaussian release plan: the parameter `num / den` in grid steps (t, or
/// sigma^2), the grid 2^`grid_exponent`, the integer shift and the exact delta of the plan.
pub type GridPlan = sys::pydp_grid_plan;

/// The verified smallest discrete Laplace plan for (epsilon, delta) (grid_bits: 16 is Python's default).
pub fn calibrate_laplace_release(epsilon: f64, delta: f64, sensitivity: f64, grid_bits: i32) -> Result<GridPlan, Error> {
    let mut plan = GridPlan::default();
    check(unsafe { sys::pydp_calibrate_laplace_release(epsilon, delta, sensitivity, grid_bits, &mut plan) })?;
    Ok(plan)
}

/// The verified smallest discrete Gaussian plan for (epsilon, delta), delta > 0.
pub fn calibrate_gaussian_release(epsilon: f64, delta: f64, sensitivity: f64, grid_bits: i32) -> Result<GridPlan, Error> {
    let mut plan = GridPlan::default();
    check(unsafe { sys::pydp_calibrate_gaussian_release(epsilon, delta, sensitivity, grid_bits, &mut plan) })?;
    Ok(plan)
}

/// The noise families of the calibration and the PLD.
#[derive(Debug, Clone, Copy)]
pub enum Family {
    Laplace,
    Gaussian,
    Logistic,
    Subbotin(f64),
}

impl Family {
    fn code(self) -> (i32, f64) {
        match self {
            Family::Laplace => (sys::PYDP_LAPLACE, 0.0),
            Family::Gaussian => (sys::PYDP_GAUSSIAN, 0.0),
            Family::Logistic => (sys::PYDP_LOGISTIC, 0.0),
            Family::Subbotin(r) => (sys::PYDP_SUBBOTIN, r),
        }
    }
}

/// The verified minimal scale for (epsilon, delta)-DP at this sensitivity.
pub fn minimal_scale(family: Family, epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64, Error> {
    let (f, r) = family.code();
    let mut s = 0.0;
    check(unsafe { sys::pydp_minimal_scale(f, r, epsilon, delta, sensitivity, &mut s) })?;
    Ok(s)
}

/// The keyed ChaCha20 generator. `Rng::os()` has a secret OS key (for releases); `Rng::with_key` is
/// reproducible (tests and simulations only). Not `Sync`: one per thread.
pub struct Rng(*mut sys::pydp_rng);

impl Rng {
    pub fn os() -> Result<Rng, Error> {
        let mut h = std::ptr::null_mut();
        check(unsafe { sys::pydp_rng_new_os(&mut h) })?;
        Ok(Rng(h))
    }
    pub fn with_key(key: &[u8; 32], stream: u64) -> Result<Rng, Error> {
        let mut h = std::ptr::null_mut();
        check(unsafe { sys::pydp_rng_new(key.as_ptr(), stream, &mut h) })?;
        Ok(Rng(h))
    }
    pub fn fill_u64(&mut self, out: &mut [u64]) -> Result<(), Error> {
        check(unsafe { sys::pydp_rng_fill_u64(self.0, out.as_mut_ptr(), out.len()) })
    }
    pub fn normal(&mut self, loc: f64, scale: f64, out: &mut [f64], threads: u32) -> Result<(), Error> {
        check(unsafe { sys::pydp_rng_normal(self.0, loc, scale, out.as_mut_ptr(), out.len(), threads) })
    }
    /// The discrete Laplace grid release of `x` for a calibrated plan's t = t_num / t_den and grid exponent.
    pub fn release_laplace(&mut self, t: (u64, u64), grid_exponent: i32, bounds: (f64, f64), x: &[f64],
                           threads: u32) -> Result<Vec<f64>, Error> {
        let mut out = vec![0.0; x.len()];
        check(unsafe {
            sys::pydp_release_laplace(self.0, t.0, t.1, grid_exponent, bounds.0, bounds.1, x.as_ptr(), out.as_mut_ptr(),
                                      x.len(), threads)
        })?;
        Ok(out)
    }
}

impl Drop for Rng {
    fn drop(&mut self) {
        unsafe { sys::pydp_rng_free(self.0) }
    }
}

// A generator may move to another thread (it is not shared).
unsafe impl Send for Rng {}

/// A privacy-loss distribution (immutable; its composition is cached and guarded inside the library).
pub struct Pld(*mut sys::pydp_pld);

impl Pld {
    pub fn from_noise(family: Family, scale: f64, sensitivity: f64, sampling_rate: f64, value_step: f64)
                      -> Result<Pld, Error> {
        let (f, r) = family.code();
        let mut h = std::ptr::null_mut();
        check(unsafe {
            sys::pydp_pld_from_noise(f, r, scale, sensitivity, sampling_rate, sys::PYDP_ADD_REMOVE, value_step, &mut h)
        })?;
        Ok(Pld(h))
    }
    pub fn self_compose(&self, k: u64) -> Result<Pld, Error> {
        let mut h = std::ptr::null_mut();
        check(unsafe { sys::pydp_pld_self_compose(self.0, k, &mut h) })?;
        Ok(Pld(h))
    }
    pub fn compose(&self, other: &Pld) -> Result<Pld, Error> {
        let mut h = std::ptr::null_mut();
        check(unsafe { sys::pydp_pld_compose(self.0, other.0, &mut h) })?;
        Ok(Pld(h))
    }
    /// Certified (lower, upper) bounds on delta(epsilon).
    pub fn delta(&self, epsilon: f64) -> Result<(f64, f64), Error> {
        let (mut lo, mut up) = (0.0, 0.0);
        check(unsafe { sys::pydp_pld_delta(self.0, epsilon, &mut lo, &mut up) })?;
        Ok((lo, up))
    }
    /// Certified (lower, upper) bounds on epsilon(delta).
    pub fn epsilon(&self, delta: f64) -> Result<(f64, f64), Error> {
        let (mut lo, mut up) = (0.0, 0.0);
        check(unsafe { sys::pydp_pld_epsilon(self.0, delta, &mut lo, &mut up) })?;
        Ok((lo, up))
    }
}

impl Drop for Pld {
    fn drop(&mut self) {
        unsafe { sys::pydp_pld_free(self.0) }
    }
}

unsafe impl Send for Pld {}
unsafe impl Sync for Pld {}
