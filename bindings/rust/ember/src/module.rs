//! Modules: a Sequential built from layer descriptions, its forward pass, params and save / load.
use crate::error::{check, Result};
use crate::record::{LoadReport, Record, RecordOptions};
use crate::strings::{c_string, read_string};
use crate::sys;
use crate::tensor::Tensor;
use std::ops::{Deref, DerefMut};
use std::ptr;

/// One layer of a Sequential: `ember_layer_desc` with Ember's defaults for its kind (`ember_layer_init`); set the
/// fields the kind uses through `Deref` (`desc.in_features = 64`).
#[derive(Clone, Copy, Debug)]
pub struct LayerDesc {
    raw: sys::ember_layer_desc,
}

impl LayerDesc {
    /// Ember's defaults for `kind` (`sys::EMBER_LAYER_*`).
    pub fn new(kind: sys::ember_layer_kind) -> Result<LayerDesc> {
        let mut raw = sys::ember_layer_desc::default();
        // SAFETY: raw is a whole ember_layer_desc; init sets struct_size and the defaults.
        check(unsafe { sys::ember_layer_init(&mut raw, kind) })?;
        Ok(LayerDesc { raw })
    }

    /// A linear layer (in -> out features, with bias).
    pub fn linear(in_features: i64, out_features: i64) -> Result<LayerDesc> {
        let mut desc = LayerDesc::new(sys::EMBER_LAYER_LINEAR)?;
        desc.in_features = in_features;
        desc.out_features = out_features;
        Ok(desc)
    }
}

impl Deref for LayerDesc {
    type Target = sys::ember_layer_desc;
    fn deref(&self) -> &sys::ember_layer_desc {
        &self.raw
    }
}

impl DerefMut for LayerDesc {
    fn deref_mut(&mut self) -> &mut sys::ember_layer_desc {
        &mut self.raw
    }
}

/// An owned `ember_module` handle (freed on drop). Modules are internally synchronized in Ember, so methods
/// take `&self`, also those the C ABI takes a non-const handle for.
#[derive(Debug)]
pub struct Module {
    raw: *mut sys::ember_module,
}

sys::impl_thread_traits!(ember_module, Module);

impl Module {
    /// A Sequential of `layers` on the default device; params are initialized now from the generator seeded by
    /// `ember::seed`.
    pub fn sequential(layers: &[LayerDesc]) -> Result<Module> {
        let descs: Vec<sys::ember_layer_desc> = layers.iter().map(|l| l.raw).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: descs holds layers.len() initialized descs.
        check(unsafe { sys::ember_module_sequential(ptr::null(), descs.as_ptr(), descs.len(), &mut raw) })?;
        Ok(Module { raw })
    }

    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be an `ember_module` handle that nothing else frees.
    pub unsafe fn from_raw(raw: *mut sys::ember_module) -> Module {
        Module { raw }
    }

    /// The raw handle, still owned by this `Module`.
    pub fn as_ptr(&self) -> *mut sys::ember_module {
        self.raw
    }

    /// Runs the layers on `x` (`train`: train mode, else eval mode).
    pub fn forward(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        let mode = if train { sys::EMBER_MODE_TRAIN } else { sys::EMBER_MODE_EVAL };
        // SAFETY: both handles are owned by live wrappers.
        Tensor::from_out(|out| unsafe { sys::ember_module_forward(self.raw, x.as_ptr(), mode, out) })
    }

    /// Number of parameter tensors.
    pub fn param_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: the out value is a local.
        check(unsafe { sys::ember_module_param_count(self.raw, &mut count) })?;
        Ok(count)
    }

    /// The path of param `index` ("layers.0.weight").
    pub fn param_name(&self, index: usize) -> Result<String> {
        // SAFETY: read_string passes a buffer of `capacity` bytes (or NULL with capacity 0).
        read_string(|buf, capacity, length| unsafe {
            sys::ember_module_param_name(self.raw, index, buf, capacity, length)
        })
    }

    /// The current value of param `index`.
    pub fn param_value(&self, index: usize) -> Result<Tensor> {
        // SAFETY: self.raw is owned by this Module.
        Tensor::from_out(|out| unsafe { sys::ember_module_param_value(self.raw, index, out) })
    }

    /// A snapshot of the params as a record.
    pub fn to_record(&self) -> Result<Record> {
        let mut raw = ptr::null_mut();
        // SAFETY: the out pointer is a local.
        check(unsafe { sys::ember_module_to_record(self.raw, &mut raw) })?;
        // SAFETY: the handle was just returned to us, owned.
        Ok(unsafe { Record::from_raw(raw) })
    }

    /// Saves the params to `path` as a binary full-precision record (`ember_module_save(module, path, NULL)`).
    pub fn save(&self, path: &str) -> Result<()> {
        let path = c_string(path)?;
        // SAFETY: path is NUL-terminated; NULL options are the defaults.
        check(unsafe { sys::ember_module_save(self.raw, path.as_ptr(), ptr::null()) })
    }

    /// Saves the params to `path` with `options` (recorder, precision).
    pub fn save_with(&self, path: &str, options: &RecordOptions) -> Result<()> {
        let path = c_string(path)?;
        // SAFETY: path is NUL-terminated; options is an initialized ember_record_options.
        check(unsafe { sys::ember_module_save(self.raw, path.as_ptr(), options.as_raw()) })
    }

    /// Loads a record file into the params (`strict`: any mismatch fails and changes nothing). The report says
    /// what was missing, unexpected or mismatching; a failed strict load's report is in the error's message.
    pub fn load(&self, path: &str, strict: bool) -> Result<LoadReport> {
        let path = c_string(path)?;
        let mode = if strict { sys::EMBER_LOAD_STRICT } else { sys::EMBER_LOAD_PARTIAL };
        let mut report = ptr::null_mut();
        // SAFETY: path is NUL-terminated; the report out pointer is a local.
        let status = unsafe { sys::ember_module_load(self.raw, path.as_ptr(), mode, &mut report) };
        // SAFETY: the report (or NULL, which frees as a no-op) was just returned to us, owned.
        let report = unsafe { LoadReport::from_raw(report) };
        check(status)?;
        Ok(report)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: this Module owns the handle.
        unsafe { sys::ember_module_free(self.raw) };
    }
}
