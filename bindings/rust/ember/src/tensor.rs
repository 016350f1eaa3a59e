//! Tensors: immutable values behind an `ember_tensor` handle, freed on drop.
use crate::error::{check, Error, Result};
use crate::grad::Grads;
use crate::sys;
use std::mem::size_of;
use std::os::raw::c_void;
use std::ptr;

/// A Rust element type and the Ember dtype its bytes are (for `Tensor::from_slice` and `Tensor::to_vec`).
pub trait Element: Copy + Default {
    /// The `EMBER_DTYPE_*` of this type's in-memory representation.
    const DTYPE: sys::ember_dtype;
}
impl Element for f32 {
    const DTYPE: sys::ember_dtype = sys::EMBER_DTYPE_F32;
}
impl Element for f64 {
    const DTYPE: sys::ember_dtype = sys::EMBER_DTYPE_F64;
}
impl Element for i32 {
    const DTYPE: sys::ember_dtype = sys::EMBER_DTYPE_I32;
}
impl Element for i64 {
    const DTYPE: sys::ember_dtype = sys::EMBER_DTYPE_I64;
}
impl Element for u8 {
    const DTYPE: sys::ember_dtype = sys::EMBER_DTYPE_U8;
}

/// An owned `ember_tensor` handle (freed on drop).
#[derive(Debug)]
pub struct Tensor {
    raw: *mut sys::ember_tensor,
}

sys::impl_thread_traits!(ember_tensor, Tensor);

impl Tensor {
    /// Runs a C call that returns a new tensor through its out pointer and takes ownership of it.
    pub(crate) fn from_out<F>(call: F) -> Result<Tensor>
    where
        F: FnOnce(*mut *mut sys::ember_tensor) -> sys::ember_status,
    {
        let mut raw = ptr::null_mut();
        check(call(&mut raw))?;
        Ok(Tensor { raw })
    }

    /// A tensor holding a copy of `data` (row-major) with `shape` (the product of the dims must be data.len()).
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        // SAFETY: data and shape are valid for the lengths passed; Ember copies them before returning.
        Tensor::from_out(|out| unsafe {
            sys::ember_tensor_from_data(
                ptr::null(),
                T::DTYPE,
                data.as_ptr() as *const c_void,
                data.len() * size_of::<T>(),
                shape.as_ptr(),
                shape.len(),
                out,
            )
        })
    }

    /// Takes ownership of a raw handle (freed when the `Tensor` drops).
    ///
    /// # Safety
    /// `raw` must be a handle from Ember that nothing else frees; a stale one makes every call fail with
    /// EMBER_ERR_INVALID_HANDLE (Ember's registry of live handles) rather than touching freed memory.
    pub unsafe fn from_raw(raw: *mut sys::ember_tensor) -> Tensor {
        Tensor { raw }
    }

    /// The raw handle, still owned by this `Tensor`.
    pub fn as_ptr(&self) -> *mut sys::ember_tensor {
        self.raw
    }

    /// Gives up ownership: the caller frees the handle (`ember_tensor_free`).
    pub fn into_raw(self) -> *mut sys::ember_tensor {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }

    /// Frees the handle now and reports what Ember said (dropping ignores it).
    pub fn free(self) -> Result<()> {
        let raw = self.into_raw();
        // SAFETY: this Tensor owned raw and is gone, so it is freed once.
        check(unsafe { sys::ember_tensor_free(raw) })
    }

    /// A new handle to the same (immutable) value.
    pub fn try_clone(&self) -> Result<Tensor> {
        // SAFETY: self.raw is the handle this Tensor owns.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_clone(self.raw, out) })
    }

    /// The dtype the tensor is stored in.
    pub fn dtype(&self) -> Result<sys::ember_dtype> {
        let mut dtype = 0;
        // SAFETY: the out value is a local.
        check(unsafe { sys::ember_tensor_dtype(self.raw, &mut dtype) })?;
        Ok(dtype)
    }

    /// The dims.
    pub fn shape(&self) -> Result<Vec<i64>> {
        let mut dims = [0i64; sys::EMBER_MAX_RANK as usize];
        let mut rank = 0usize;
        // SAFETY: dims holds EMBER_MAX_RANK elements, the most any tensor has.
        check(unsafe { sys::ember_tensor_shape(self.raw, dims.as_mut_ptr(), dims.len(), &mut rank) })?;
        Ok(dims[..rank].to_vec())
    }

    /// Number of elements.
    pub fn numel(&self) -> Result<i64> {
        let mut numel = 0;
        // SAFETY: the out value is a local.
        check(unsafe { sys::ember_tensor_numel(self.raw, &mut numel) })?;
        Ok(numel)
    }

    /// The elements, converted to `T`, row-major.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let n = usize::try_from(self.numel()?).map_err(|_| Error::invalid_argument("negative numel".into()))?;
        let mut data = vec![T::default(); n];
        // SAFETY: data holds n elements of T, exactly the bytes passed.
        check(unsafe {
            sys::ember_tensor_copy_to(self.raw, T::DTYPE, data.as_mut_ptr() as *mut c_void, n * size_of::<T>(),
                                      ptr::null_mut())
        })?;
        Ok(data)
    }

    /// The value of a one-element tensor.
    pub fn item(&self) -> Result<f64> {
        let mut value = 0.0;
        // SAFETY: the out value is a local.
        check(unsafe { sys::ember_tensor_item(self.raw, &mut value) })?;
        Ok(value)
    }

    /// Elementwise a + b (broadcasting).
    pub fn add(&self, other: &Tensor) -> Result<Tensor> {
        // SAFETY: both handles are owned by live Tensors.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_add(self.raw, other.raw, out) })
    }

    /// Elementwise a - b (broadcasting).
    pub fn sub(&self, other: &Tensor) -> Result<Tensor> {
        // SAFETY: both handles are owned by live Tensors.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_sub(self.raw, other.raw, out) })
    }

    /// Elementwise a * b (broadcasting).
    pub fn mul(&self, other: &Tensor) -> Result<Tensor> {
        // SAFETY: both handles are owned by live Tensors.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_mul(self.raw, other.raw, out) })
    }

    /// Matrix product (batched, like torch.matmul).
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        // SAFETY: both handles are owned by live Tensors.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_matmul(self.raw, other.raw, out) })
    }

    /// Indices of the largest values along `dim`.
    pub fn argmax(&self, dim: i64, keepdim: bool) -> Result<Tensor> {
        // SAFETY: self.raw is owned by this Tensor.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_argmax(self.raw, dim, keepdim as i32, out) })
    }

    /// Reduces everything to a scalar (`op`: `sys::EMBER_REDUCE_*`).
    pub fn reduce_all(&self, op: sys::ember_reduce_op) -> Result<Tensor> {
        // SAFETY: self.raw is owned by this Tensor.
        Tensor::from_out(|out| unsafe { sys::ember_tensor_reduce_all(self.raw, op, out) })
    }

    /// Marks a leaf as requiring grad (its ops are then recorded for backward).
    pub fn set_requires_grad(&mut self, on: bool) -> Result<()> {
        // SAFETY: &mut self: no other thread uses this handle while it is mutated (the thread rule).
        check(unsafe { sys::ember_tensor_set_requires_grad(self.raw, on as i32) })
    }

    /// Backpropagates from this (scalar) tensor and returns the gradients of the leaves; consumes the graph.
    pub fn backward(&self) -> Result<Grads> {
        let mut raw = ptr::null_mut();
        // SAFETY: a NULL grad means ones (a scalar loss); the out pointer is a local.
        check(unsafe { sys::ember_tensor_backward(self.raw, ptr::null(), &mut raw) })?;
        // SAFETY: the handle was just returned to us, owned.
        Ok(unsafe { Grads::from_raw(raw) })
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: this Tensor owns the handle; a failure (a stale handle) has nowhere to go from drop.
        unsafe { sys::ember_tensor_free(self.raw) };
    }
}
