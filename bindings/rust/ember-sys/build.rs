//! Generates src of the raw declarations from the ABI description at build time (gen_ember_sys.py, Python 3
//! standard library), so ember-sys cannot drift from c_api/ember_api.json, and tells rustc where libember is.
//!
//! Environment (all optional):
//!   EMBER_API_JSON  the description (default: ../../../c_api/ember_api.json, the source tree's)
//!   EMBER_PYTHON    the Python 3 that runs the generator (default: /usr/bin/python3, else python3 on PATH)
//!   EMBER_LIB_DIR   the folder holding libember.so (default: the linker's search path)
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let description = match env::var_os("EMBER_API_JSON") {
        Some(path) => PathBuf::from(path),
        None => manifest.join("../../../c_api/ember_api.json"),
    };
    let generator = manifest.join("gen_ember_sys.py");
    let python = match env::var_os("EMBER_PYTHON") {
        Some(python) => PathBuf::from(python),
        None if Path::new("/usr/bin/python3").exists() => PathBuf::from("/usr/bin/python3"),
        None => PathBuf::from("python3"),
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ember_sys.rs");

    let status = Command::new(&python)
        .arg(&generator)
        .arg(&description)
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {}", python.display(), e));
    if !status.success() {
        panic!("{} {} {} failed ({})", python.display(), generator.display(), description.display(), status);
    }

    println!("cargo:rerun-if-changed={}", description.display());
    println!("cargo:rerun-if-changed={}", generator.display());
    println!("cargo:rerun-if-changed={}", manifest.join("../../../tools/abi/ember_api.py").display());
    for var in ["EMBER_API_JSON", "EMBER_PYTHON", "EMBER_LIB_DIR"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    if let Some(dir) = env::var_os("EMBER_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", PathBuf::from(dir).display());
    }
}
