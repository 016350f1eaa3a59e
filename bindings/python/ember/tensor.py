"""ember.Tensor: an owned ``ember_tensor`` handle with PyTorch's method and operator names.

Tensors are immutable values in libember: every op returns a new tensor. Differences from PyTorch worth knowing:
rank 0 does not exist (reductions over everything and Python scalars give shape ``(1,)``), and float tensors are
stored in the backend's float dtype (float32 on the CPU), whatever float dtype they were created from.
"""
import array
from collections import namedtuple
from ctypes import byref, c_double, c_int32, c_int64, c_size_t, c_void_p

from . import _convert, _lib, _ops, autograd
from ._convert import BOOL, F32, F64, I64

_check, _error = _lib.check, _lib.error
_add, _sub, _mul, _div = _lib.tensor_add, _lib.tensor_sub, _lib.tensor_mul, _lib.tensor_div
_scalar, _binary, _unary = _lib.tensor_scalar, _lib.tensor_binary, _lib.tensor_unary
_compare, _compare_scalar = _lib.tensor_compare, _lib.tensor_compare_scalar
_new = object.__new__
_DTYPE_ERR = 4

# Op codes come from the generated _ops.py (engine/backend/ops.def); "recip" is PyTorch's "reciprocal".
UNARY = {("reciprocal" if k == "recip" else k): v for k, v in _ops.UNARY.items()}
S_ADD, S_SUB, S_MUL, S_DIV, S_POW, S_CLAMP_MIN, S_CLAMP_MAX, S_RSUB, S_RDIV = (_ops.SCALAR[k] for k in (
    "add", "sub", "mul", "div", "pow", "clamp_min", "clamp_max", "rsub", "rdiv"))
B_POW, B_MAXIMUM, B_MINIMUM = _ops.BINARY["pow"], _ops.BINARY["maximum"], _ops.BINARY["minimum"]
CMP = dict(_ops.COMPARE)
R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN = (_ops.REDUCE[k] for k in ("sum", "mean", "prod", "max", "min"))

ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])


def wrap(h):
    """A Tensor owning the handle in the c_void_p `h`."""
    t = _new(Tensor)
    t._h = h
    t._grad = None
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
    if isinstance(value, Tensor):
        return value
    from .creation import tensor
    if isinstance(value, (int, float, bool)):
        code = like._dtype_code()
        return tensor([value], dtype=code if code != F64 else F32)
    return tensor(value)


def _format(v):
    if isinstance(v, list):
        return "[" + ", ".join(_format(x) for x in v) + "]"
    return repr(float("%.6g" % v))


def _promote(a, b):
    """(a, b) cast to a common kind, or (None, None) when they already share one."""
    ca, cb = a._dtype_code(), b._dtype_code()
    if ca == cb:
        return None, None
    if ca == F32 or cb == F32:
        return (a if ca == F32 else a.to("float32")), (b if cb == F32 else b.to("float32"))
    if BOOL in (ca, cb):
        return (a if ca != BOOL else a.to("int64")), (b if cb != BOOL else b.to("int64"))
    return None, None


class Tensor:
    """An n-dimensional array on a device, optionally recording operations for backward."""

    __slots__ = ("_h", "_grad", "__weakref__")
    __hash__ = object.__hash__  # == is elementwise, as in PyTorch; identity hashing keeps tensors usable as keys

    def __init__(self, *args, **kwargs):
        raise TypeError("use ember.tensor(data, ...) or ember.zeros/ones/... to make tensors")

    def __del__(self, _free=_lib.tensor_free):
        try:
            _free(self._h)
        except (AttributeError, TypeError):  # never constructed, or the interpreter is shutting down
            pass

    # ------------------------------------------------------------ queries
    def _dtype_code(self):
        d = c_int32()
        _check(_lib.tensor_dtype(self._h, byref(d)))
        return d.value

    @property
    def dtype(self):
        """"float32", "int64" or "bool" (the stored dtype)."""
        return _convert.DTYPE_NAMES[self._dtype_code()]

    @property
    def shape(self):
        dims, rank = (c_int64 * _lib.MAX_RANK)(), c_size_t()
        _check(_lib.tensor_shape(self._h, dims, _lib.MAX_RANK, byref(rank)))
        return tuple(dims[:rank.value])

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[dim]

    @property
    def ndim(self):
        rank = c_size_t()
        _check(_lib.tensor_rank(self._h, byref(rank)))
        return rank.value

    dim = lambda self: self.ndim  # noqa: E731

    def numel(self):
        n = c_int64()
        _check(_lib.tensor_numel(self._h, byref(n)))
        return n.value

    def __len__(self):
        return self.shape[0]

    @property
    def device(self):
        dev, backend, index = c_void_p(), c_int32(), c_int32()
        _check(_lib.tensor_device(self._h, byref(dev)))
        try:
            _check(_lib.device_info(dev, byref(backend), byref(index)))
        finally:
            _lib.device_free(dev)
        names = {v: k for k, v in _convert.Device.BACKENDS.items()}
        return _convert.Device(names.get(backend.value, "cpu"), index.value)

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
        return _convert.unflatten(flat, self.shape)

    def numpy(self):
        """A new NumPy array with the values: exactly one copy (ember_tensor_copy_to writes straight into the
        array's memory). Not zero-copy: libember exposes no pointer to tensor storage. float32/int64/bool."""
        import numpy
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

    def __bool__(self):
        return bool(self.item())

    def __iter__(self):
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

    # ------------------------------------------------------------ autodiff
    @property
    def requires_grad(self):
        on = c_int32()
        _check(_lib.tensor_requires_grad(self._h, byref(on)))
        return bool(on.value)

    @requires_grad.setter
    def requires_grad(self, on):
        self.requires_grad_(on)

    def requires_grad_(self, requires_grad=True):
        """Makes this tensor a leaf whose gradient backward keeps in .grad (in place; float tensors only)."""
        _check(_lib.tensor_set_requires_grad(self._h, 1 if requires_grad else 0))
        (autograd.register_leaf if requires_grad else autograd.unregister_leaf)(self)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = value

    def _add_grad(self, grads):
        out = c_void_p()
        _check(_lib.grads_get(grads, self._h, byref(out)))
        if out.value:
            g = wrap(out)
            self._grad = g if self._grad is None else self._grad + g

    def backward(self, gradient=None):
        """Reverse pass seeded with `gradient` (ones when None); fills .grad of leaves and feeds optimizers."""
        autograd.backward(self, gradient)

    def detach(self):
        return call(_lib.tensor_detach, self._h)

    def clone(self):
        return call(_lib.tensor_clone, self._h)

    # ------------------------------------------------------------ arithmetic
    def _bin(self, other, fn, sop):
        """self (op) other with PyTorch's promotion: int and bool operands meet float ones as float, bool meets
        int as int64, a float scalar makes an int tensor float (libember itself needs operands of one kind)."""
        out = c_void_p()
        if isinstance(other, (int, float)):
            a = self
            code = self._dtype_code()
            if code != F32 and (type(other) is float or code == BOOL):
                a = self.to("float32" if type(other) is float else "int64")
            st = _scalar(a._h, sop, other, byref(out))
        else:
            other = as_tensor_like(other, self)
            st = fn(self._h, other._h, byref(out))
            if st == _DTYPE_ERR:
                a, b = _promote(self, other)
                if a is not None:
                    st = fn(a._h, b._h, byref(out))
        if st:
            raise _error(st)
        return wrap(out)

    def __add__(self, other):
        if type(other) is Tensor:
            out = c_void_p()
            if not _add(self._h, other._h, byref(out)):
                return wrap(out)
        return self._bin(other, _add, S_ADD)

    def __sub__(self, other):
        return self._bin(other, _sub, S_SUB)

    def __mul__(self, other):
        return self._bin(other, _mul, S_MUL)

    def __truediv__(self, other):
        a = self if self._dtype_code() == F32 else self.to("float32")  # true division, as PyTorch
        return a._bin(other, _div, S_DIV)

    __radd__, __rmul__ = __add__, __mul__

    def __rsub__(self, other):
        if isinstance(other, (int, float)):
            return self._bin(other, None, S_RSUB)
        return as_tensor_like(other, self) - self

    def __rtruediv__(self, other):
        if isinstance(other, (int, float)):
            a = self if self._dtype_code() == F32 else self.to("float32")
            return a._bin(other, None, S_RDIV)
        return as_tensor_like(other, self) / self

    def __pow__(self, other):
        return self._bin(other, lambda a, b, o: _binary(a, b, B_POW, o), S_POW)

    def __rpow__(self, other):
        return as_tensor_like(other, self) ** self

    def __matmul__(self, other):
        other = as_tensor_like(other, self)
        return call(_lib.tensor_matmul, self._h, other._h)

    def __rmatmul__(self, other):
        return as_tensor_like(other, self) @ self

    def __neg__(self):
        return call(_unary, self._h, 0)

    def __pos__(self):
        return self

    def __abs__(self):
        return call(_unary, self._h, 1)

    add, sub, mul, div, pow, matmul = __add__, __sub__, __mul__, __truediv__, __pow__, __matmul__
    neg = __neg__


def _unary_method(name, code):
    def method(self):
        return call(_unary, self._h, code)
    method.__name__ = name
    method.__doc__ = "Elementwise %s (a new tensor)." % name
    return method


for _name, _code in UNARY.items():
    if _name not in ("neg", "gelu_tanh"):
        setattr(Tensor, _name, _unary_method(_name, _code))
del _name, _code


def _binary_op(code):
    return lambda a, b, out: _binary(a, b, code, out)


def atan2(self, other):
    """atan(self / other) in the quadrant of (other, self), broadcasting (torch.atan2); float tensors."""
    return self._bin(as_tensor_like(other, self), _binary_op(_ops.BINARY["atan2"]), None)


def remainder(self, other):
    """self - floor(self / other) * other: the sign of `other` (torch.remainder, Python's %); int division by zero
    raises like //."""
    return self._bin(other, _binary_op(_ops.BINARY["remainder"]), _ops.SCALAR["remainder"])


def _predicate_method(name):
    def method(self):
        return call(_lib.tensor_predicate, self._h, _ops.PREDICATE[name])
    method.__name__ = name
    method.__doc__ = "Elementwise %s of a float tensor (a bool tensor)." % name
    return method


Tensor.atan2, Tensor.arctan2 = atan2, atan2
Tensor.remainder = Tensor.__mod__ = remainder
Tensor.__rmod__ = lambda self, other: as_tensor_like(other, self).remainder(self)
Tensor.isnan, Tensor.isinf = _predicate_method("isnan"), _predicate_method("isinf")

from . import _tensor_methods  # noqa: E402,F401  (reductions, layout, indexing, casts: attached to Tensor)
