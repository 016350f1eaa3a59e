"""IndexMixin: ember.Tensor's ``t[key]`` and ``t[key] = value`` with PyTorch 1.13's rules.

Reading follows torch's two phases (torch/csrc/autograd/python_variable_indexing.cpp): first the basic items,
applied left to right -- an int selects (drops the dim), a slice keeps a range (positive steps only, as torch),
``None`` inserts a dim of 1, ``...`` skips the dims no other item names -- done here with one ember_tensor_slice,
(ember_tensor_slice_step when a slice has a step) and one reshape. Then the advanced items (int lists or tensors,
bool masks; a k-dim mask stands for its k nonzero-coordinate tensors) are broadcast together and read with one
ember_tensor_index_select over the indexed dims flattened into one: their result dims replace the indexed dims
when those are adjacent, else they come first (torch's rule; note that torch counts an int as basic, so
``x[0, :, [0, 1]]`` has shape ``[4, 2]`` for x of shape ``[3, 4, 5]``, unlike NumPy).

Writing computes the flat positions the key selects (the same read applied to an arange of the element count),
builds the new value with ember_tensor_where over an ember_tensor_index_select of the broadcast value, and stores
it with an in-place copy, so the tensor (the Python object and the libember handle) stays the same one.
"""
import array
import struct
from ctypes import byref, c_int64, c_size_t, c_void_p

from . import _lib, autograd
from ._from_host import from_buffer, from_data
from ._numpy import numpy
from ._convert import BOOL, I64
from ._tensor_base import TensorBase

_new = object.__new__

_slice, _index_select, _arange = _lib.tensor_slice, _lib.tensor_index_select, _lib.tensor_arange
_select, _SLICE_END = _lib.tensor_select, _lib.SLICE_END
_slice_step = _lib.tensor_slice_step  # issue 13
# The fast paths' calls without argtypes (_lib.py: hot, quick), given ctypes objects (or bytes: a const int64_t*)
# only. x[i] keeps the GIL: selecting along dim 0 is a fixed amount of work (a CPU row shares the tensor's storage).
# Constant arguments are made once, as from_param's parameter objects: ctypes passes those as they are, where a
# c_int64 instance costs a conversion object per call.
_select_or_null, _hot_slice, _DIM0 = _lib.quick.tensor_select_or_null, _lib.hot.tensor_slice, c_int64.from_param(0)
_SIZES = [c_size_t.from_param(n) for n in range(_lib.MAX_RANK + 1)]
# x[i]'s index for small i, negative ones included: one dict lookup decides the fast path (comparing key with
# _BOUND, a multi-digit int, costs a tenth of x[i]); other ints go through c_int64(key)
_INDICES = {i: c_int64.from_param(i) for i in range(-1024, 1024)}
# starts / ends of n dims as the bytes of n native int64s: packing costs a fifth of making a ctypes array
_PACK = [struct.Struct("=%dq" % n).pack for n in range(_lib.MAX_RANK + 1)]
_BOUND = 2**62  # slice bounds beyond this go the long way (clamped by slice.indices), never truncated by ctypes
_INT_CODES = (I64, 3, 5, 7)  # int64, int32, uint8, int16: accepted as index tensors (cast to int64)
_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
              "(got %s)")


def _shape_text(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


def broadcast_shapes(shapes, what="indexing tensors"):
    """NumPy/torch broadcasting of `shapes`; IndexError naming them when they do not broadcast."""
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise IndexError("shape mismatch: %s could not be broadcast together with shapes %s"
                                 % (what, ", ".join(_shape_text(x) for x in shapes)))
    return out


class _Parsed:
    """A key split into the basic part (per input dim: start, end, step, kept) and the advanced part (output dim
    of the basic result, index) plus the shape the basic part produces."""

    __slots__ = ("starts", "ends", "steps", "out_shape", "advanced", "trivial")


def _count_dims(key):
    n = 0
    for k in key:
        if k is None or k is Ellipsis or k is True or k is False:
            continue
        if isinstance(k, TensorBase) and k._dtype_code() == BOOL:
            n += k.ndim
        else:
            n += 1
    return n


def _parse(key, shape):
    """_Parsed for `key` (a tuple) over a tensor of `shape`; raises IndexError/ValueError/TypeError as torch."""
    rank = len(shape)
    named = _count_dims(key)
    if named > rank:
        raise IndexError("too many indices for tensor of dimension %d" % rank)
    p = _Parsed()
    p.starts, p.ends, p.steps = [0] * rank, list(shape), [1] * rank
    p.out_shape, p.advanced = [], []
    p.trivial = True  # the basic part leaves the tensor as it is
    d = 0  # the input dim the next item applies to
    seen_ellipsis = False
    for k in key:
        if k is None or k is True:
            p.out_shape.append(1)
            p.trivial = False
        elif k is False:  # torch: a new dim of size 0
            p.out_shape.append(0)
            p.trivial = False
        elif k is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            for _ in range(rank - named):
                p.out_shape.append(shape[d])
                d += 1
        elif isinstance(k, int):
            size = shape[d]
            if k < -size or k >= size:
                raise IndexError("index %d is out of bounds for dimension %d with size %d" % (k, d, size))
            k %= size
            p.starts[d], p.ends[d] = k, k + 1
            p.trivial = False
            d += 1
        elif isinstance(k, slice):
            step = 1 if k.step is None else _as_int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            a, b, _ = slice(k.start, k.stop).indices(shape[d])
            b = max(a, b)
            p.starts[d], p.ends[d], p.steps[d] = a, b, step
            n = (b - a + step - 1) // step
            if n != shape[d]:
                p.trivial = False
            p.out_shape.append(n)
            d += 1
        elif isinstance(k, TensorBase):
            if k._dtype_code() == BOOL:
                for j in range(k.ndim):
                    p.out_shape.append(shape[d + j])
                p.advanced.append((len(p.out_shape) - k.ndim, k, d))
                d += k.ndim
            else:
                p.out_shape.append(shape[d])
                p.advanced.append((len(p.out_shape) - 1, k, d))
                d += 1
        else:
            raise IndexError(_BAD_INDEX % type(k).__name__)
    p.out_shape.extend(shape[d:])
    if len(p.out_shape) != rank:
        p.trivial = False
    return p


def _as_int(v):
    if isinstance(v, int):
        return v
    if isinstance(v, TensorBase):
        return int(v.item())
    raise TypeError("slice indices must be integers or None or have an __index__ method")


def _normalize_item(k, like):
    """A list/tuple-of-ints item as an int64 (or bool) tensor on like's device; other items unchanged."""
    if isinstance(k, (list, tuple)):
        flat = _flat_values(k)
        code = BOOL if flat and all(isinstance(v, bool) for v in flat) else I64
        for v in flat:
            if not isinstance(v, (int, bool)):
                raise IndexError(_BAD_INDEX % type(v).__name__)
        return like._index_data(k, code)
    if hasattr(k, "__index__") and not isinstance(k, (int, TensorBase)):  # NumPy integers
        return int(k.__index__())
    return k


def _flat_values(seq):
    out = []
    for v in seq:
        if isinstance(v, (list, tuple)):
            out.extend(_flat_values(v))
        else:
            out.append(v)
    return out


def _key_tuple(key, like):
    """The key as a tuple of items (a list of ints is one advanced item, as torch treats it)."""
    if not isinstance(key, tuple):
        key = (key,)
    return tuple(_normalize_item(k, like) for k in key)


class IndexMixin:
    """``t[key]`` and ``t[key] = value``."""

    __slots__ = ()

    def _index_data(self, data, code):
        """An int64/bool tensor of `data` on this tensor's device (index tensors must share it)."""
        return self._wrap(from_data(data, code, None, self.device))

    def _arange_on_device(self, start, end, step):
        return self._on_device(_arange, I64, start, end, step)

    def __getitem__(self, key):
        """torch's basic and advanced indexing (see the module's docstring)."""
        if type(key) is int:  # the common case: one int on dim 0, one ember_tensor_select
            try:
                index = _INDICES[key]
            except KeyError:  # (an int beyond int64 goes the long way, to the IndexError; c_int64 would wrap it)
                index = c_int64(key) if -_BOUND < key < _BOUND else None
            if index is not None:
                out = _select_or_null(self._h, _DIM0, index)  # a _lib.Handle, NULL when select fails
                if out:
                    t = _new(self._plain)  # self._wrap(out), inlined
                    t._h = out
                    return t
                return self._select_error(key)
        if type(key) is slice:
            key = (key,)
        if type(key) is tuple:
            t = self._step1_slices(key)
            if t is None:
                t = self._basic_ints_and_slices(key)
            if t is not None:
                return t
        return self._index(_key_tuple(key, self))

    def _select_error(self, key):
        """The error torch raises for x[key] (an int) that ember_tensor_select refused."""
        shape = self.shape
        if not shape:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        size = shape[0]
        if key < -size or key >= size:
            raise IndexError("index %d is out of bounds for dimension 0 with size %d" % (key, size))
        raise _lib.error(_select(self._h, 0, key, byref(c_void_p())))  # the declared call: converts key itself

    def _step1_slices(self, key):
        """Fast path for keys of int-bounded step-1 slices only (x[:, 1:3]): one ember_tensor_slice, which takes
        Python's negative and clamped bounds itself, so the shape is not needed. None for anything else, or when
        the call fails (then the general path runs and raises torch's errors)."""
        starts, ends = [], []
        for k in key:
            if type(k) is not slice or k.step is not None:
                return None
            a, b = k.start, k.stop
            if a is None:
                a = 0
            elif type(a) is not int or not -_BOUND < a < _BOUND:
                return None
            if b is None:
                b = _SLICE_END
            elif type(b) is not int or not -_BOUND < b < _BOUND:
                return None
            starts.append(a)
            ends.append(b)
        n = len(starts)
        if n > _lib.MAX_RANK:
            return None
        pack = _PACK[n]
        out = c_void_p()
        if _hot_slice(self._h, pack(*starts), pack(*ends), _SIZES[n], byref(out)):
            return None
        return self._wrap(out)

    def _basic_ints_and_slices(self, key):
        """Fast path for keys of ints and step-1 slices only (one ember_tensor_slice, a reshape when an int drops
        a dim); None for anything else (then _index does it, and raises the errors)."""
        shape = self.shape
        n = len(key)
        if n > len(shape):
            return None
        starts, ends, out_shape = [], [], []
        for d in range(n):
            k = key[d]
            tk = type(k)
            if tk is slice and k.step is None:
                a, b, _ = k.indices(shape[d])
                if b < a:
                    b = a
                starts.append(a)
                ends.append(b)
                out_shape.append(b - a)
            elif tk is int:
                size = shape[d]
                if not -size <= k < size:
                    return None
                k %= size
                starts.append(k)
                ends.append(k + 1)
            else:
                return None
        out_shape.extend(shape[n:])
        out = c_void_p()
        pack = _PACK[n]
        st = _hot_slice(self._h, pack(*starts), pack(*ends), _SIZES[n], byref(out))
        if st:
            raise _lib.error(st)
        t = self._wrap(out)
        if len(out_shape) != len(shape):
            t = t.reshape(out_shape)
        return t

    def _index(self, key):
        shape = self.shape
        p = _parse(key, shape)
        t = self
        if not p.trivial:
            rank = len(shape)
            if p.steps != [1] * rank:  # x[::2]: the range and the steps in one call
                arr = c_int64 * rank
                t = t._call(_slice_step, t._h, arr(*p.starts), arr(*p.ends), arr(*p.steps), rank)
            elif p.starts != [0] * rank or p.ends != list(shape):
                t = t._call(_slice, t._h, (c_int64 * rank)(*p.starts), (c_int64 * rank)(*p.ends), rank)
            t = t.reshape(p.out_shape)
        if p.advanced:
            t = t._advanced(p.advanced)
        return t

    def _advanced(self, items):
        """torch's at::index over this (already basic-indexed) tensor: items are (dim, index tensor, input dim)."""
        shape = self.shape
        dims, indices = [], []
        for dim, k, input_dim in items:
            code = k._dtype_code()
            if code == BOOL:
                mask_shape = k.shape
                if list(mask_shape) != list(shape[dim:dim + len(mask_shape)]):
                    raise IndexError("The shape of the mask %s at index %d does not match the shape of the indexed "
                                     "tensor %s at index %d" % (_shape_text(mask_shape), 0, _shape_text(shape),
                                                                input_dim))
                for j, coords in enumerate(_nonzero(k)):
                    dims.append(dim + j)
                    indices.append(self._index_data(coords, I64))
                continue
            if code not in _INT_CODES:
                raise IndexError("tensors used as indices must be long, byte or bool tensors")
            if code != I64:
                k = k.to("int64")
            dims.append(dim)
            indices.append(k)
        b_shape = broadcast_shapes([i.shape for i in indices])
        sizes = [shape[d] for d in dims]
        lin = None
        stride = 1
        for d, size, idx in reversed(list(zip(dims, sizes, indices))):
            idx = _checked_index(idx, size, d)
            term = idx if stride == 1 else idx * stride
            lin = term if lin is None else lin + term
            stride *= size
        rest = [d for d in range(len(shape)) if d not in dims]
        t = self
        if dims + rest != list(range(len(shape))):
            t = t.permute(dims + rest)
        t = t.reshape([stride] + [shape[d] for d in rest])
        flat = lin.reshape(-1)
        t = t._call(_index_select, t._h, 0, flat._h)
        t = t.reshape(b_shape + [shape[d] for d in rest])
        first = dims[0]
        if dims == list(range(first, first + len(dims))) and first > 0:
            nb = len(b_shape)
            order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, nb + len(rest)))
            t = t.permute(order)
        return t

    def __setitem__(self, key, value):
        """Writes `value` (a number or a tensor broadcast to the indexed shape) into the selected elements, in
        place: the tensor keeps its identity (and a leaf its .grad and optimizer slot)."""
        key = _key_tuple(key, self)
        code = self._dtype_code()
        shape = list(self.shape)
        if (len(key) == 1 and isinstance(key[0], TensorBase) and key[0]._dtype_code() == BOOL
                and list(key[0].shape) == shape and not isinstance(value, TensorBase)):
            # x[mask] = number with a mask of x's shape: where(mask, number, x), no host work
            cond = key[0]
            value = self._as_tensor_like(value)
            if value._dtype_code() != code:
                value = value.to(self.dtype)
            return self._write(cond, value, code)
        n = self.numel()
        positions = self._arange_on_device(0, n, 1).reshape(shape)._index(key)
        mask, source = _scatter_maps(positions, n)
        cond = self._wrap(from_buffer(mask, BOOL, shape, self.device))
        if isinstance(value, TensorBase):
            if value._dtype_code() != code:
                value = value.to(self.dtype)
            target = list(positions.shape)
            if list(value.shape) != target:
                try:
                    broadcast_shapes([value.shape, target])
                except IndexError:
                    raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                                       "result of shape %s" % (_shape_text(value.shape), _shape_text(target)))
                value = value + self._zeros_on_device(target, code)
            src = self._wrap(from_buffer(source, I64, [n], self.device))
            flat = value.reshape(-1)
            value = flat._call(_index_select, flat._h, 0, src._h).reshape(shape)
        else:
            value = self._as_tensor_like(value)
            if value._dtype_code() != code:
                value = value.to(self.dtype)
        self._write(cond, value, code)

    def _write(self, cond, value, code):
        """self = where(cond, value, self), in place (value broadcast to self's shape)."""
        if self.requires_grad and autograd.is_grad_enabled():
            # A tensor in the graph must not feed the op that computes its own new value: libember refuses a
            # backward through an op one of whose tracked inputs was changed in place later. So zero the selected
            # elements in place (their gradient becomes 0) and add the new values there.
            zeros = self._zeros_on_device([1], code)
            keep = _where(cond, zeros, self._full_on_device([1], code, 1.0))
            self.mul_(keep)
            self.add_(_where(cond, value, zeros))
        else:
            self.copy_(_where(cond, value, self))


def _scatter_maps(positions, n):
    """(mask, source) over the n flat elements for the flat `positions` a key selects: mask[p] = 1 where written,
    source[p] = the index of the value element written there (the last one for repeated positions). Vectorized
    with NumPy when it is installed, else one Python pass."""
    k = positions.numel()
    if numpy is not None:
        picked = numpy.empty(k, dtype=numpy.int64)
        if k:
            _lib.check(_lib.tensor_copy_to(positions._h, I64, picked.ctypes.data, picked.nbytes, None))
        mask = numpy.zeros(n, dtype=numpy.bool_)
        source = numpy.zeros(n, dtype=numpy.int64)
        mask[picked] = True
        source[picked] = numpy.arange(k, dtype=numpy.int64)
        return mask, source
    picked = array.array("q", bytes(8 * k))
    if k:
        _lib.check(_lib.tensor_copy_to(positions._h, I64, picked.buffer_info()[0], k * 8, None))
    mask = bytearray(n)
    source = array.array("q", bytes(8 * n))
    for j, pos in enumerate(picked):
        mask[pos] = 1
        source[pos] = j
    return mask, source


def _where(cond, a, b):
    return a._call(_lib.tensor_where, cond._h, a._h, b._h)


def _checked_index(idx, size, dim):
    """idx with negatives wrapped, after torch's bounds check (IndexError naming the first bad value)."""
    if idx.numel() == 0:
        return idx
    lo, hi = int(idx.min().item()), int(idx.max().item())
    if hi >= size:
        raise IndexError("index %d is out of bounds for dimension %d with size %d" % (hi, dim, size))
    if lo < -size:
        raise IndexError("index %d is out of bounds for dimension %d with size %d" % (lo, dim, size))
    return idx.remainder(size) if lo < 0 else idx


def _nonzero(mask):
    """Per mask dim, the coordinates (row-major order) of its true elements, as lists."""
    shape = mask.shape
    raw = mask._copy_out(BOOL, "B")
    coords = [[] for _ in shape]
    strides = []
    s = 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    strides.reverse()
    for f, v in enumerate(raw):
        if v:
            for j, st in enumerate(strides):
                coords[j].append((f // st) % shape[j])
    return coords

