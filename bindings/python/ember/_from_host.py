"""Host data (nested lists, numbers, NumPy arrays, raw buffers) to new ``ember_tensor`` handles.

It returns raw handles, not Tensors: both ember.tensor (creation.py) and the Tensor methods that turn a Python
operand into a tensor build on it, and neither has to import the other.
"""
import array
from ctypes import byref, c_void_p

from . import _convert, _lib
from ._convert import BOOL, F32, F64, I64
from ._numpy import numpy

RAW_BUFFERS = (bytes, bytearray, memoryview, array.array)


def from_buffer(buf, code, shape, device):
    """A handle holding a copy of the buffer `buf` of ember_dtype `code` with `shape`, on `device`."""
    keep, addr, nbytes = _convert.buffer_address(buf)
    dims, rank = _lib.shape_array(shape)
    dev = _convert.DeviceHandle(device)
    out = c_void_p()
    _lib.check(_lib.tensor_from_data(dev.h, code, addr, nbytes, dims, rank, byref(out)))
    del keep  # the buffer had to outlive the call; libember has copied it
    return out


def is_numpy_array(data):
    return type(data).__module__ == "numpy" or hasattr(data, "__array_interface__")


def _numpy_contiguous(arr, code):
    """(C-contiguous array of the target dtype, ember_dtype); the dtype is inferred as PyTorch does when code is
    None."""
    if numpy is None:
        raise ImportError("ember.tensor: an object with __array_interface__ needs NumPy (python3-numpy)")
    if code is None:
        kind = arr.dtype.kind
        code = BOOL if kind == "b" else I64 if kind in "iu" else F64 if arr.dtype == numpy.float64 else F32
        if kind not in "biuf":
            raise TypeError("ember.tensor: unsupported NumPy dtype %s" % arr.dtype)
    np_dtype = {F32: numpy.float32, F64: numpy.float64, I64: numpy.int64, BOOL: numpy.bool_, 3: numpy.int32,
                2: numpy.float16, 5: numpy.uint8, 7: numpy.int16}[code]
    return numpy.ascontiguousarray(arr, dtype=np_dtype), code


def from_data(data, code=None, shape=None, device="cpu"):
    """A handle holding a copy of `data` (anything but a Tensor; see ember.tensor for the forms and defaults)."""
    if isinstance(data, RAW_BUFFERS):
        if shape is None:
            raise ValueError("ember.tensor: a raw buffer needs shape=")
        return from_buffer(data, F32 if code is None else code, list(shape), device)
    if is_numpy_array(data):
        arr, code = _numpy_contiguous(data, code)
        arr_shape = tuple(arr.shape) if shape is None else tuple(shape)
        return from_buffer(arr.reshape(-1), code, list(arr_shape), device)
    flat, inferred = _convert.flatten(data)
    if code is None:
        code = _convert.infer_code(flat)
    if shape is None:
        shape = inferred  # a number is rank 0, as in torch
    return from_buffer(_convert.pack(flat, code), code, list(shape), device)
