"""ember.Tensor: an owned ``ember_tensor`` handle with PyTorch's method and operator names.

Ops return new tensors; in-place ops (add_, copy_, t[i] = v, ...) change the tensor's own handle.
"""
import array
from ctypes import byref, c_double, c_int32, c_int64, c_size_t, c_void_p

from . import _backends, _convert, _lib, autograd
from ._convert import BOOL, F32, F64, I64
from ._numpy import numpy
from ._tensor_autograd import AutogradMixin
from ._tensor_base import TensorBase
from ._tensor_cast import CastMixin
from ._tensor_engine_ops import EngineOpsMixin
from ._tensor_index import IndexMixin
from ._tensor_inplace import InplaceMixin
from ._tensor_layout import LayoutMixin
from ._tensor_math import MathMixin
from ._tensor_reductions import ReductionMixin, ValuesIndices  # noqa: F401  (ValuesIndices: max/min's result)
from ._tensor_sort import SortMixin  # issue 13: sort, scan and mask ops
from ._tensor_shape_ops import ShapeOpsMixin  # issue 13

_check, _error = _lib.check, _lib.error
_quick_shape, _DIMS, _MAX_RANK = _lib.quick.tensor_shape, c_int64 * _lib.MAX_RANK, c_size_t.from_param(_lib.MAX_RANK)
_new = object.__new__


def wrap(h):
    """A Tensor owning the handle in the c_void_p `h`."""
    t = _new(Tensor)
    t._h = h
    return t


def call(fn, *args):
    """fn(*args, &out) -> Tensor, raising on failure."""
    out = c_void_p()
    st = fn(*args, byref(out))
    if st:
        raise _error(st)
    return wrap(out)


def as_tensor_like(value, like):
    """`value` (a Tensor, a number, nested lists, a NumPy array) as a Tensor; numbers take like's kind."""
    return like._as_tensor_like(value)


def _format(v):
    if isinstance(v, list):
        return "[" + ", ".join(_format(x) for x in v) + "]"
    return repr(float("%.6g" % v))


class Tensor(IndexMixin, InplaceMixin, MathMixin, ReductionMixin, LayoutMixin, CastMixin, AutogradMixin, ShapeOpsMixin,
             EngineOpsMixin, SortMixin, TensorBase):
    """An n-dimensional array on a device, optionally recording operations for backward.

    Its methods come from one mixin per concern (_tensor_math, _tensor_reductions, _tensor_layout, _tensor_cast,
    _tensor_autograd); this class adds queries, host copies and repr."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        raise TypeError("use ember.tensor(data, ...) or ember.zeros/ones/... to make tensors")

    _wrap = staticmethod(wrap)

    @staticmethod
    def _wrap_grad(h, leaf):
        g = _new(GradAlias)
        g._h = h
        g._grad = None
        g._owner = leaf
        return g

    # ------------------------------------------------------------ queries
    @property
    def dtype(self):
        """"float32", "int64" or "bool" (the stored dtype)."""
        return _convert.DTYPE_NAMES[self._dtype_code()]

    @property
    def shape(self):
        h = self._h
        try:
            cached = self._shape_of
            if cached[0] is h:
                return cached[1]
        except AttributeError:
            pass
        dims, rank = _DIMS(), c_size_t()
        _check(_quick_shape(h, dims, _MAX_RANK, byref(rank)))
        shape = tuple(dims[:rank.value])
        self._shape_of = (h, shape)
        return shape

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[dim]

    @property
    def ndim(self):
        return len(self.shape)

    dim = lambda self: self.ndim  # noqa: E731

    def numel(self):
        n = c_int64()
        _check(_lib.tensor_numel(self._h, byref(n)))
        return n.value

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    @property
    def device(self):
        dev, backend, index = c_void_p(), c_int32(), c_int32()
        _check(_lib.tensor_device(self._h, byref(dev)))
        try:
            _check(_lib.device_info(dev, byref(backend), byref(index)))
        finally:
            _lib.device_free(dev)
        return _convert.Device(_backends.name_of(backend.value), index.value)

    def is_floating_point(self):
        return _convert.is_float_code(self._dtype_code())

    # ------------------------------------------------------------ host copies
    def _copy_out(self, code, typecode):
        n = self.numel()
        buf = array.array(typecode, bytes(n * array.array(typecode).itemsize))
        if n:
            _check(_lib.tensor_copy_to(self._h, code, buf.buffer_info()[0], len(buf) * buf.itemsize, None))
        return buf

    def tolist(self):
        """Nested Python lists of floats, ints or bools (float32 values are exact as Python floats)."""
        code = self._dtype_code()
        if code == BOOL:
            flat = [bool(b) for b in self._copy_out(BOOL, "B")]
        elif code == I64 or code in (3, 5, 7):
            flat = self._copy_out(I64, "q").tolist()
        else:
            flat = self._copy_out(F64, "d").tolist()
        shape = self.shape
        return _convert.unflatten(flat, shape) if shape else flat[0]  # rank 0: the number, as torch

    def numpy(self):
        """A new NumPy array with the values: exactly one copy (ember_tensor_copy_to writes straight into the
        array's memory). Not zero-copy: libember exposes no pointer to tensor storage. float32/int64/bool."""
        if numpy is None:
            raise ImportError("Tensor.numpy() needs NumPy (Debian: python3-numpy)")
        code = self._dtype_code()
        np_dtype = {BOOL: numpy.bool_, I64: numpy.int64, F64: numpy.float64}.get(code, numpy.float32)
        if code not in (BOOL, I64, F64):
            code = F32
        out = numpy.empty(self.shape, dtype=np_dtype)
        if out.size:
            _check(_lib.tensor_copy_to(self._h, code, out.ctypes.data, out.nbytes, None))
        return out

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def item(self):
        v = c_double()
        _check(_lib.tensor_item(self._h, byref(v)))
        code = self._dtype_code()
        return bool(v.value) if code == BOOL else int(v.value) if code == I64 else v.value

    __float__ = lambda self: float(self.item())  # noqa: E731
    __int__ = lambda self: int(self.item())  # noqa: E731
    __index__ = lambda self: self._index_value()  # noqa: E731

    def _index_value(self):
        if self._dtype_code() not in (I64, 3, 5, 7) or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __format__(self, spec):
        """A rank-0 tensor formats as its number (f"{loss:.4f}"), as torch; others as str() with an empty spec."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    @property
    def data(self):
        """A detached alias: same values, no graph; in-place ops on it (``p.data.copy_(w)``, ``p.data -= ...``)
        write this tensor, outside autograd, as torch's .data does. Ember difference: the alias reads this tensor's
        values as of when .data was taken (or when the alias last wrote them)."""
        alias = _new(DataAlias)
        alias._h = self.detach()._steal()
        alias._grad = None
        alias._base = self
        return alias

    @data.setter
    def data(self, value):
        if list(value.shape) != list(self.shape):
            raise RuntimeError("ember: .data = x needs x of the same shape (%s, got %s)"
                               % (list(self.shape), list(value.shape)))
        with autograd.no_grad():
            self.copy_(value.detach())

    def _steal(self):
        """This tensor's handle, which the caller now owns (this object no longer frees it)."""
        h, self._h = self._h, None
        return h

    def __bool__(self):
        return bool(self.item())

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        n = self.numel()
        code = self._dtype_code()
        if n > 1000:
            body = "[... %d elements ...]" % n
        elif code in (F32, F64):
            body = _format(self.tolist())
        else:
            body = str(self.tolist())
        extra = ""
        if code not in (F32, I64):
            extra += ", dtype=%s" % _convert.DTYPE_NAMES[code]
        if code == F32 and self.requires_grad:
            extra += ", requires_grad=True"
        if n > 1000:
            extra += ", shape=%s" % (self.shape,)
        return "tensor(%s%s)" % (body, extra)


class DataAlias(Tensor):
    """What Tensor.data returns: in-place ops write the base tensor (under no_grad), then this alias re-reads it."""

    __slots__ = ("_base",)

    def _inplace_tensor(self, other, op):
        with autograd.no_grad():
            Tensor._inplace_tensor(self._base, other, op)
        return self._reread()

    def _inplace_scalar(self, op, value):
        with autograd.no_grad():
            Tensor._inplace_scalar(self._base, op, value)
        return self._reread()

    def _reread(self):
        fresh = self._base.detach()
        self._h, fresh._h = fresh._h, self._h
        return self



Tensor._plain = Tensor  # TensorBase._plain: the type the hot paths make (wrap's, without the call)


class GradAlias(Tensor):
    """What Tensor.grad returns with libember's leaf grad slot: a copy of the slot whose in-place ops
    (``p.grad.zero_()``, ``p.grad.mul_(0.5)``, ``p.grad[0] = 0``) also write the slot, as torch's .grad does."""

    __slots__ = ("_owner",)

    def _inplace_tensor(self, other, op):
        with autograd.no_grad():
            Tensor._inplace_tensor(self, other, op)
        return self._write_back()

    def _inplace_scalar(self, op, value):
        with autograd.no_grad():
            Tensor._inplace_scalar(self, op, value)
        return self._write_back()

    def _write_back(self):
        _check(_lib.tensor_set_grad(self._owner._h, self._h))
        return self
