"""Creating tensors: ember.tensor, zeros, ones, full, rand, randn, arange, *_like, manual_seed."""
import random as _random

from . import _convert, _from_host, _lib
from .tensor import Tensor, call, wrap

_DEFAULT_SEED = 67280421310721
_rng = _random.Random(_DEFAULT_SEED)


def manual_seed(seed):
    """Seeds rand/randn here and libember's generator for parameter initialization and dropout (ember_seed)."""
    _rng.seed(int(seed))
    _lib.check(_lib.seed(int(seed) & (2**64 - 1)))


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, shape=None, dtype=None, device="cpu", requires_grad=False):
    """A tensor holding a copy of `data`.

    data: nested lists/tuples of numbers or bools, a number (rank 0; shape (1,) with a libember without rank 0), a
    NumPy array, an ember.Tensor (copied and detached), or a flat buffer (bytes, array.array, memoryview) of `dtype`
    with `shape`.
    shape: reshapes the data (same element count). dtype: "float32" | "float64" | "int64" | "bool" (and
    "int32", "uint8", "int16", "float16" for buffers); by default inferred as PyTorch does (bool, int64,
    float32; float64 for float64 NumPy arrays). requires_grad: make it a leaf whose gradient backward keeps in .grad.
    """
    code = None if dtype is None else (dtype if isinstance(dtype, int) else _convert.dtype_code(dtype))
    if isinstance(data, Tensor):
        t = data.detach()
        if code is not None:
            t = t.to(_convert.DTYPE_NAMES[code])
        if shape is not None:
            t = t.reshape(list(shape))
        return _finish(t, requires_grad)
    return _finish(wrap(_from_host.from_data(data, code, shape, device)), requires_grad)


def as_tensor(data, dtype=None, device="cpu"):
    return data if isinstance(data, Tensor) and dtype is None else tensor(data, dtype=dtype, device=device)


from_numpy = as_tensor


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return list(size[0])
    return list(size)


def full(size, fill_value, dtype=None, device="cpu", requires_grad=False):
    if dtype is None:
        dtype = "bool" if isinstance(fill_value, bool) else "int64" if isinstance(fill_value, int) else "float32"
    dims, rank = _lib.shape_array(list(size))
    dev = _convert.DeviceHandle(device)
    t = call(_lib.tensor_full, dev.h, _convert.dtype_code(dtype), dims, rank, float(fill_value))
    return _finish(t, requires_grad)


def zeros(*size, dtype="float32", device="cpu", requires_grad=False):
    dims, rank = _lib.shape_array(_size(size))
    dev = _convert.DeviceHandle(device)
    return _finish(call(_lib.tensor_zeros, dev.h, _convert.dtype_code(dtype), dims, rank), requires_grad)


def ones(*size, dtype="float32", device="cpu", requires_grad=False):
    dims, rank = _lib.shape_array(_size(size))
    dev = _convert.DeviceHandle(device)
    return _finish(call(_lib.tensor_ones, dev.h, _convert.dtype_code(dtype), dims, rank), requires_grad)


def _random(dist, a, b, size, seed, device, requires_grad):
    dims, rank = _lib.shape_array(_size(size))
    dev = _convert.DeviceHandle(device)
    s = _rng.getrandbits(64) if seed is None else int(seed)
    return _finish(call(_lib.tensor_random, dev.h, dist, float(a), float(b), s, dims, rank), requires_grad)


def rand(*size, seed=None, device="cpu", requires_grad=False):
    """Uniform on [0, 1). Each call draws a fresh seed from the generator set by manual_seed (or pass seed=)."""
    return _random(0, 0.0, 1.0, size, seed, device, requires_grad)


def randn(*size, seed=None, device="cpu", requires_grad=False):
    """Standard normal. Each call draws a fresh seed from the generator set by manual_seed (or pass seed=)."""
    return _random(1, 0.0, 1.0, size, seed, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device="cpu", requires_grad=False):
    """[start, end) by step; int64 for integer arguments, float32 otherwise (as PyTorch)."""
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, int) for v in (start, end, step))
    if dtype is None:
        dtype = "int64" if ints else "float32"
    if ints:
        dev = _convert.DeviceHandle(device)
        t = call(_lib.tensor_arange, dev.h, _convert.dtype_code(dtype), start, end, step)
        return _finish(t, requires_grad)
    n = max(0, int(-(-(end - start) // step)))
    return tensor([start + i * step for i in range(n)] or [], shape=[n], dtype=dtype, device=device,
                  requires_grad=requires_grad)


def zeros_like(t, dtype=None):
    return zeros(t.shape, dtype=dtype or t.dtype)


def ones_like(t, dtype=None):
    return ones(t.shape, dtype=dtype or t.dtype)


def full_like(t, fill_value, dtype=None):
    return full(t.shape, fill_value, dtype=dtype or t.dtype)


def is_tensor(obj):
    return isinstance(obj, Tensor)

