"""Tensor methods beyond arithmetic: comparisons, logic, reductions, layout, indexing and casts (attached to
ember.Tensor when ember.tensor is imported)."""
from ctypes import byref, c_int64, c_void_p

from . import _convert, _lib

from .tensor import (_DTYPE_ERR, B_MAXIMUM, B_MINIMUM, F32, R_MAX, R_MEAN, R_MIN, R_PROD, R_SUM, S_CLAMP_MAX,
                     S_CLAMP_MIN, Tensor, ValuesIndices, _binary, _compare, _compare_scalar, _error, _promote, _scalar,
                     as_tensor_like, call, wrap)

_reduce, _reduce_all = _lib.tensor_reduce, _lib.tensor_reduce_all


def _dims(dim, rank):
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        if not -rank <= d < rank:
            # let libember produce its own message for an out-of-range dim
            return dims
        out.append(d % rank)
    return out


# ---------------------------------------------------------------- comparisons, logic, min/max, clamp
def _cmp(self, other, op):
    """A bool tensor; int and float operands are promoted as in PyTorch."""
    if other is None:
        return NotImplemented
    a = self
    if isinstance(other, (int, float)):
        if type(other) is float and self._dtype_code() != F32:
            a = self.to("float32")
        return call(_compare_scalar, a._h, op, other)
    other = as_tensor_like(other, self)
    out = c_void_p()
    st = _compare(self._h, other._h, op, byref(out))
    if st == _DTYPE_ERR:
        a, b = _promote(self, other)
        if a is not None:
            st = _compare(a._h, b._h, op, byref(out))
    if st:
        raise _error(st)
    return wrap(out)


def _with_other(fn, code):
    def method(self, other):
        other = as_tensor_like(other, self)  # a local keeps a converted operand alive through the call
        return call(fn, self._h, other._h, code)
    return method


def clamp(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
    t = self
    if min is not None:
        t = call(_scalar, t._h, S_CLAMP_MIN, min)
    if max is not None:
        t = call(_scalar, t._h, S_CLAMP_MAX, max)
    return t


Tensor._cmp = _cmp
for _i, _name in enumerate(("eq", "ne", "lt", "le", "gt", "ge")):
    _m = (lambda code: lambda self, other: self._cmp(other, code))(_i)
    setattr(Tensor, "__%s__" % _name, _m)
    setattr(Tensor, _name, _m)
for _i, _name in enumerate(("and", "or", "xor")):
    _m = _with_other(_lib.tensor_logical, _i)
    setattr(Tensor, "__%s__" % _name, _m)
    setattr(Tensor, "__r%s__" % _name, _m)
    setattr(Tensor, "logical_" + _name, _m)
Tensor.__invert__ = Tensor.logical_not = lambda self: call(_lib.tensor_logical_not, self._h)
Tensor.maximum = _with_other(_binary, B_MAXIMUM)
Tensor.minimum = _with_other(_binary, B_MINIMUM)
Tensor.clamp = Tensor.clip = clamp
del _i, _name, _m


# ---------------------------------------------------------------- reductions
def _reduction(op):
    def method(self, dim=None, keepdim=False):
        if dim is None:
            t = call(_reduce_all, self._h, op)
            if keepdim and self.ndim > 1:
                t = t.reshape([1] * self.ndim)
            return t
        t = self
        rank = self.ndim
        for d in sorted(_dims(dim, rank), reverse=True):
            if not keepdim and t.ndim == 1:  # a rank-1 input keeps shape [1]
                return call(_reduce, t._h, op, d, 0)
            t = call(_reduce, t._h, op, d, 1 if keepdim else 0)
        return t
    return method


Tensor.sum = _reduction(R_SUM)
Tensor.mean = _reduction(R_MEAN)
Tensor.prod = _reduction(R_PROD)
Tensor.sum.__doc__ = "Sum over `dim` (an int or a tuple; None: every element, shape (1,)); keepdim keeps it as 1."


def _extremum(op, arg_fn, pairwise):
    def method(self, dim=None, keepdim=False):
        """None: the extremum over everything (shape (1,)); a Tensor: elementwise; an int: (values, indices)."""
        if dim is None:
            return call(_reduce_all, self._h, op)
        if isinstance(dim, Tensor):
            return pairwise(self, dim)
        k = 1 if keepdim else 0
        return ValuesIndices(call(_reduce, self._h, op, dim, k), call(arg_fn, self._h, dim, k))
    return method


Tensor.max = _extremum(R_MAX, _lib.tensor_argmax, Tensor.maximum)
Tensor.min = _extremum(R_MIN, _lib.tensor_argmin, Tensor.minimum)


def _arg(fn):
    def method(self, dim=None, keepdim=False):
        if dim is None:
            flat = self.reshape(-1)
            return call(fn, flat._h, 0, 0)
        return call(fn, self._h, dim, 1 if keepdim else 0)
    return method


Tensor.argmax = _arg(_lib.tensor_argmax)
Tensor.argmin = _arg(_lib.tensor_argmin)


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def reshape(self, *shape):
    """reshape(2, -1) or reshape((2, -1)): one -1 is inferred."""
    dims, n = _lib.shape_array(_shape_args(shape))
    return call(_lib.tensor_reshape, self._h, dims, n)


def permute(self, *dims):
    axes, n = _lib.shape_array(_shape_args(dims))
    return call(_lib.tensor_permute, self._h, axes, n)


def transpose(self, dim0, dim1):
    return call(_lib.tensor_transpose, self._h, dim0, dim1)


def t(self):
    """The transpose of a rank-2 tensor (a rank-1 tensor is returned as is), as torch.Tensor.t."""
    return self if self.ndim < 2 else call(_lib.tensor_transpose, self._h, 0, 1)


def flatten(self, start_dim=0, end_dim=-1):
    s = list(self.shape)
    a, e = start_dim % len(s), end_dim % len(s)
    n = 1
    for d in s[a:e + 1]:
        n *= d
    return self.reshape(s[:a] + [n] + s[e + 1:])


def unsqueeze(self, dim):
    s = list(self.shape)
    s.insert(dim % (len(s) + 1), 1)
    return self.reshape(s)


def squeeze(self, dim=None):
    s = list(self.shape)
    if dim is None:
        keep = [d for d in s if d != 1] or [1]
    else:
        keep = s[:]
        if s[dim] == 1 and len(s) > 1:
            del keep[dim]
    return self.reshape(keep)


Tensor.reshape = Tensor.view = reshape
Tensor.permute = permute
Tensor.transpose = transpose
Tensor.t = t
Tensor.T = property(t)
Tensor.flatten = flatten
Tensor.unsqueeze = unsqueeze
Tensor.squeeze = squeeze
Tensor.softmax = lambda self, dim=-1: call(_lib.tensor_softmax, self._h, dim)
Tensor.log_softmax = lambda self, dim=-1: call(_lib.tensor_log_softmax, self._h, dim)
Tensor.index_select = lambda self, dim, index: call(_lib.tensor_index_select, self._h, dim, index._h)
Tensor.gather = lambda self, dim, index: call(_lib.tensor_gather, self._h, dim, index._h)


def to(self, dtype=None, device=None):
    """A cast to `dtype` ("float32", "int64", "bool", ...); devices other than the tensor's are not supported."""
    t = self
    if device is not None and _convert.Device(device) != self.device:
        raise NotImplementedError("ember: moving tensors between devices is not in the C ABI yet")
    if dtype is not None:
        code = _convert.dtype_code(dtype)
        if code != self._dtype_code():
            t = call(_lib.tensor_cast, self._h, code)
    return t


Tensor.to = to
Tensor.float = lambda self: self.to("float32")
Tensor.double = lambda self: self.to("float64")
Tensor.long = lambda self: self.to("int64")
Tensor.int = lambda self: self.to("int64")
Tensor.bool = lambda self: self.to("bool")


def _norm_index(i, size):
    if i < -size or i >= size:
        raise IndexError("index %d is out of bounds for dimension with size %d" % (i, size))
    return i % size


def getitem(self, key):
    """Integers, step-1 slices and Ellipsis per dim; an int Tensor or list of ints selects along dim 0."""
    if isinstance(key, Tensor):
        if key.dtype == "bool":
            raise NotImplementedError("ember: boolean mask indexing is not supported (use ember.where)")
        flat = key.reshape(-1)
        return call(_lib.tensor_index_select, self._h, 0, flat._h)
    if isinstance(key, list):
        from .creation import tensor
        return self[tensor(key, dtype="int64")]
    if not isinstance(key, tuple):
        key = (key,)
    shape = self.shape
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    if len(key) > len(shape):
        raise IndexError("too many indices for tensor of dimension %d" % len(shape))
    starts, ends, out_shape = [], [], []
    for d, k in enumerate(key):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise NotImplementedError("ember: slices with a step other than 1")
            a, b, _ = k.indices(shape[d])
            starts.append(a)
            ends.append(max(a, b))
            out_shape.append(max(0, b - a))
        elif isinstance(k, int):
            i = _norm_index(k, shape[d])
            starts.append(i)
            ends.append(i + 1)
        else:
            raise TypeError("ember: unsupported index %r" % (k,))
    n = len(key)
    t = call(_lib.tensor_slice, self._h, (c_int64 * n)(*starts), (c_int64 * n)(*ends), n)
    out_shape += list(shape[n:])
    if len(out_shape) != len(shape):
        t = t.reshape(out_shape or [1])
    return t


Tensor.__getitem__ = getitem


def where(condition, input, other):  # noqa: A002
    """condition ? input : other, elementwise with broadcasting (numbers take the other operand's kind)."""
    if not isinstance(input, Tensor):
        input = as_tensor_like(input, other)
    other = as_tensor_like(other, input)
    return call(_lib.tensor_where, condition._h, input._h, other._h)


def cat(tensors, dim=0):
    hs = [t._h for t in tensors]
    arr = (c_void_p * len(hs))(*hs)
    return call(_lib.tensor_cat, arr, len(hs), dim)


def stack(tensors, dim=0):
    return cat([t.unsqueeze(dim) for t in tensors], dim)
