//! Prints `name value ...` lines for tests/embedding/test_rust_binding.py to compare with the Python API.
use pydp_core::{calibrate_gaussian_release, minimal_scale, version, Family, Pld, Rng};

fn main() {
    let key: [u8; 32] = std::array::from_fn(|i| i as u8);
    println!("version {}", version());
    println!("scale {:?}", minimal_scale(Family::Gaussian, 1.0, 1e-6, 1.0).unwrap());
    let mut rng = Rng::with_key(&key, 0).unwrap();
    let mut words = [0u64; 4];
    rng.fill_u64(&mut words).unwrap();
    println!("words {}", words.map(|w| w.to_string()).join(" "));
    let mut x = [0.0f64; 5];
    rng.normal(0.0, 1.0, &mut x, 2).unwrap();
    println!("normal {}", x.map(|v| format!("{v:?}")).join(" "));
    let released = rng.release_laplace((65536, 1), -16, (f64::NEG_INFINITY, f64::INFINITY), &[0.0, 1.5, -2.25], 1).unwrap();
    println!("release_laplace {}", released.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(" "));
    let pld = Pld::from_noise(Family::Gaussian, 1.0, 1.0, 0.02, 1e-3).unwrap().self_compose(100).unwrap();
    let (lo, up) = pld.delta(1.0).unwrap();
    println!("pld_delta {lo:?} {up:?}");
    let plan = calibrate_gaussian_release(0.5, 1e-8, 3.0, 12).unwrap();
    println!("plan_gaussian {} {} {} {} {:?}", plan.num, plan.den, plan.grid_exponent, plan.shift, plan.delta_achieved);
    let err = minimal_scale(Family::Gaussian, f64::NAN, 1e-6, 1.0).unwrap_err();
    println!("error {} {}", err.code, err.message);
}
