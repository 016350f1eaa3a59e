//! Raw declarations of Ember's C ABI (`ember.h`), generated at build time from the ABI description
//! (`c_api/ember_api.json`) by `gen_ember_sys.py`: constants, enums (an `i32` alias per enum with its values as
//! typed constants), opaque handle types, callbacks, `#[repr(C)]` structs and the `extern "C"` functions.
//! Everything here is `unsafe` to call; the `ember` crate is the safe API on top.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
// The docs are the C ABI's prose: "[N, C]" is a shape, not an intra-doc link.
#![allow(rustdoc::broken_intra_doc_links)]

pub use std::os::raw::{c_char, c_void};

include!(concat!(env!("OUT_DIR"), "/ember_sys.rs"));
