//! Gradients of a backward pass and the per-thread no-grad scope.
use crate::error::{check, Result};
use crate::sys;
use crate::tensor::Tensor;
use std::marker::PhantomData;

/// The gradients one `Tensor::backward` computed (an owned `ember_grads` handle, freed on drop).
#[derive(Debug)]
pub struct Grads {
    raw: *mut sys::ember_grads,
}

sys::impl_thread_traits!(ember_grads, Grads);

impl Grads {
    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be an `ember_grads` handle that nothing else frees.
    pub unsafe fn from_raw(raw: *mut sys::ember_grads) -> Grads {
        Grads { raw }
    }

    /// The raw handle, still owned by these `Grads`.
    pub fn as_ptr(&self) -> *mut sys::ember_grads {
        self.raw
    }

    /// The gradient of `leaf` (EMBER_ERR_INVALID_ARGUMENT when it has none).
    pub fn get(&self, leaf: &Tensor) -> Result<Tensor> {
        // SAFETY: both handles are owned by live wrappers.
        Tensor::from_out(|out| unsafe { sys::ember_grads_get(self.raw, leaf.as_ptr(), out) })
    }
}

impl Drop for Grads {
    fn drop(&mut self) {
        // SAFETY: these Grads own the handle.
        unsafe { sys::ember_grads_free(self.raw) };
    }
}

/// While alive, ops on this thread record no graph (`ember_no_grad_enter` / `_exit`). The scope is per thread,
/// so the guard is neither `Send` nor `Sync`.
#[derive(Debug)]
pub struct NoGradGuard {
    _per_thread: PhantomData<*const ()>,
}

/// Enters a no-grad scope on this thread until the returned guard drops; scopes nest.
pub fn no_grad() -> Result<NoGradGuard> {
    // SAFETY: no arguments.
    check(unsafe { sys::ember_no_grad_enter() })?;
    Ok(NoGradGuard { _per_thread: PhantomData })
}

impl Drop for NoGradGuard {
    fn drop(&mut self) {
        // SAFETY: pairs the enter of this guard, on the same thread (the guard cannot move to another).
        unsafe { sys::ember_no_grad_exit() };
    }
}

/// Whether ops on this thread currently record a graph (false inside a no-grad scope).
pub fn is_grad_enabled() -> Result<bool> {
    let mut enabled = 0;
    // SAFETY: the out value is a local.
    check(unsafe { sys::ember_is_grad_enabled(&mut enabled) })?;
    Ok(enabled != 0)
}
