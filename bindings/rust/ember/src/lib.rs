//! The safe Rust API of Ember, over the raw C ABI of `ember-sys` (generated from `c_api/ember_api.json`).
//!
//! - Every fallible call returns [`Result<T>`]; an [`Error`] carries Ember's status and its message
//!   (`ember_last_error()` of the failing call).
//! - Handles ([`Tensor`], [`Module`], [`Optimizer`], [`Grads`], [`Record`], [`LoadReport`]) are freed on `Drop`;
//!   they are `Send` / `Sync` exactly as the description's thread rules say (`ember_sys::impl_thread_traits!`).
//! - [`no_grad`] returns a per-thread scope guard.
//!
//! The raw API stays reachable as [`sys`] for what the safe layer does not cover yet.
pub use ember_sys as sys;

mod error;
mod grad;
mod module;
mod optim;
mod record;
mod strings;
mod tensor;

pub use error::{Error, Result};
pub use grad::{is_grad_enabled, no_grad, Grads, NoGradGuard};
pub use module::{LayerDesc, Module};
pub use optim::{Optimizer, OptimizerOptions};
pub use record::{LoadReport, Record, RecordOptions};
pub use tensor::{Element, Tensor};

use std::ffi::CStr;

/// The loaded library's version ("0.1.0").
pub fn version() -> String {
    // SAFETY: ember_version returns a NUL-terminated string in static storage (never NULL).
    unsafe { CStr::from_ptr(sys::ember_version()) }.to_string_lossy().into_owned()
}

/// EMBER_ABI_VERSION of the library actually loaded.
pub fn abi_version() -> i32 {
    // SAFETY: no arguments, no failure.
    unsafe { sys::ember_abi_version() }
}

/// Seeds the process-wide generator used for parameter initialization and dropout masks.
pub fn seed(seed: u64) -> Result<()> {
    // SAFETY: plain value argument.
    error::check(unsafe { sys::ember_seed(seed) })
}

/// Threads used by CPU kernels (n >= 1); call it before running work.
pub fn set_num_threads(n: i32) -> Result<()> {
    // SAFETY: plain value argument.
    error::check(unsafe { sys::ember_set_num_threads(n) })
}

/// Cross-entropy of `logits` (shape `[N, C]`) against class indices `targets` (shape `[N]`); `reduction`:
/// `sys::EMBER_REDUCTION_*`.
pub fn cross_entropy(logits: &Tensor, targets: &Tensor, reduction: sys::ember_reduction) -> Result<Tensor> {
    // SAFETY: both handles are live for the call; the out pointer is written by the callee.
    Tensor::from_out(|out| unsafe {
        sys::ember_loss_cross_entropy(logits.as_ptr(), targets.as_ptr(), reduction, out)
    })
}
