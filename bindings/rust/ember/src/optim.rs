//! Optimizers over a module's params (SGD, Adam, AdamW).
use crate::error::{check, Result};
use crate::grad::Grads;
use crate::module::Module;
use crate::strings::c_string;
use crate::sys;
use std::ops::{Deref, DerefMut};
use std::ptr;

/// `ember_optimizer_options` with PyTorch's defaults for its kind; change fields through `Deref` (`opts.lr = 1e-3`).
#[derive(Clone, Copy, Debug)]
pub struct OptimizerOptions {
    raw: sys::ember_optimizer_options,
}

impl OptimizerOptions {
    /// The defaults for `kind` (`sys::EMBER_OPTIM_*`).
    pub fn new(kind: sys::ember_optimizer_kind) -> Result<OptimizerOptions> {
        let mut raw = sys::ember_optimizer_options::default();
        // SAFETY: raw is a whole ember_optimizer_options.
        check(unsafe { sys::ember_optimizer_options_init(&mut raw, kind) })?;
        Ok(OptimizerOptions { raw })
    }

    /// Adam with learning rate `lr` (other settings PyTorch's defaults).
    pub fn adam(lr: f64) -> Result<OptimizerOptions> {
        let mut opts = OptimizerOptions::new(sys::EMBER_OPTIM_ADAM)?;
        opts.lr = lr;
        Ok(opts)
    }
}

impl Deref for OptimizerOptions {
    type Target = sys::ember_optimizer_options;
    fn deref(&self) -> &sys::ember_optimizer_options {
        &self.raw
    }
}

impl DerefMut for OptimizerOptions {
    fn deref_mut(&mut self) -> &mut sys::ember_optimizer_options {
        &mut self.raw
    }
}

/// An owned `ember_optimizer` handle (freed on drop); it keeps its module alive inside Ember.
#[derive(Debug)]
pub struct Optimizer {
    raw: *mut sys::ember_optimizer,
}

sys::impl_thread_traits!(ember_optimizer, Optimizer);

impl Optimizer {
    /// An optimizer over all trainable params of `module`.
    pub fn new(module: &Module, options: &OptimizerOptions) -> Result<Optimizer> {
        let mut raw = ptr::null_mut();
        // SAFETY: the module handle is live; options is an initialized struct; the out pointer is a local.
        check(unsafe { sys::ember_optimizer_create(module.as_ptr(), &options.raw, &mut raw) })?;
        Ok(Optimizer { raw })
    }

    /// The raw handle, still owned by this `Optimizer`.
    pub fn as_ptr(&self) -> *mut sys::ember_optimizer {
        self.raw
    }

    /// One update of the params from `grads`.
    pub fn step(&mut self, grads: &Grads) -> Result<()> {
        // SAFETY: both handles are owned by live wrappers.
        check(unsafe { sys::ember_optimizer_step(self.raw, grads.as_ptr()) })
    }

    /// The learning rate (of the first param group).
    pub fn lr(&self) -> Result<f64> {
        let mut lr = 0.0;
        // SAFETY: the out value is a local.
        check(unsafe { sys::ember_optimizer_get_lr(self.raw, &mut lr) })?;
        Ok(lr)
    }

    /// Sets the learning rate of every param group.
    pub fn set_lr(&mut self, lr: f64) -> Result<()> {
        // SAFETY: plain value argument.
        check(unsafe { sys::ember_optimizer_set_lr(self.raw, lr) })
    }

    /// Saves the optimizer's state (moments, step counts) as a binary record.
    pub fn save(&self, path: &str) -> Result<()> {
        let path = c_string(path)?;
        // SAFETY: path is NUL-terminated; NULL options are the defaults.
        check(unsafe { sys::ember_optimizer_save(self.raw, path.as_ptr(), ptr::null()) })
    }
}

impl Drop for Optimizer {
    fn drop(&mut self) {
        // SAFETY: this Optimizer owns the handle.
        unsafe { sys::ember_optimizer_free(self.raw) };
    }
}
