// Links the static C ABI library: PYDP_CAPI_LIB_DIR names the directory holding libpydp_capi.a (a
// `cmake --install` prefix's lib/, or the wheel's pydp_core/lib). The library is C++: its runtime is linked.
fn main() {
    println!("cargo:rerun-if-env-changed=PYDP_CAPI_LIB_DIR");
    let dir = std::env::var("PYDP_CAPI_LIB_DIR").expect("set PYDP_CAPI_LIB_DIR to the directory of libpydp_capi.a");
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=static=pydp_capi");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=m");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
