"""MathMixin: ember.Tensor's arithmetic, elementwise functions, comparisons, logic, clamp and softmax.

Integer and bool operands follow PyTorch's promotion, done here because libember wants both operands of one kind
(see _bin and _cmp).
"""
from ctypes import byref, c_double, c_void_p

from . import _lib
from ._convert import BOOL, F32, F64
from ._op_codes import (B_ATAN2, B_MAXIMUM, B_MINIMUM, B_POW, B_REMAINDER, CMP, LOGIC, PREDICATE, S_ADD,
                        S_CLAMP_MAX, S_CLAMP_MIN, S_DIV, S_MUL, S_POW, S_RDIV, S_REMAINDER, S_RSUB, S_SUB, UNARY)
from ._tensor_base import DTYPE_ERROR, TensorBase

_new = object.__new__

_hot = _lib.hot  # no argtypes: only ctypes objects and int32 ints go in (_lib.py says why)
_add, _sub, _mul, _div = _hot.tensor_add, _hot.tensor_sub, _hot.tensor_mul, _hot.tensor_div
_binary, _unary = _hot.tensor_binary, _hot.tensor_unary
_scalar, _hot_scalar = _lib.tensor_scalar, _hot.tensor_scalar  # _scalar converts Python numbers itself
_compare, _compare_scalar = _lib.tensor_compare, _lib.tensor_compare_scalar
_pow = lambda a, b, out: _binary(a, b, B_POW, out)  # noqa: E731  (the (a, b, out) form _bin calls)
_atan2 = lambda a, b, out: _binary(a, b, B_ATAN2, out)  # noqa: E731
_remainder = lambda a, b, out: _binary(a, b, B_REMAINDER, out)  # noqa: E731


def _unary_method(name, code):
    def method(self):
        return self._call(_unary, self._h, code)
    method.__name__ = name
    method.__doc__ = "Elementwise %s (a new tensor)." % name
    return method


# One method per ember_unary_op, named as PyTorch names it (neg is the operator, gelu_tanh is gelu's option).
UnaryMixin = type("UnaryMixin", (), dict(
    {"__slots__": (), "__doc__": "Elementwise functions, one per ember_unary_op.", "__module__": __name__},
    **{name: _unary_method(name, code) for name, code in UNARY.items() if name not in ("neg", "gelu_tanh")}))


def _comparison(code):
    def method(self, other):
        return self._cmp(other, code)
    return method


def _with_other(fn, code):
    def method(self, other):
        other = self._as_tensor_like(other)  # a local keeps a converted operand alive through the call
        return self._call(fn, self._h, other._h, code)
    return method


class MathMixin(UnaryMixin):
    """Operators and elementwise math of ember.Tensor."""

    __slots__ = ()

    # ------------------------------------------------------------ arithmetic
    def _bin(self, other, fn, sop):
        """self (op) other with PyTorch's promotion: int and bool operands meet float ones as float, bool meets
        int as int64, a float scalar makes an int tensor float (libember itself needs operands of one kind)."""
        out = c_void_p()
        if isinstance(other, (int, float)):
            a = self
            code = self._dtype_code()
            if code not in (F32, F64) and (type(other) is float or code == BOOL):
                a = self.to("float32" if type(other) is float else "int64")
            st = _hot_scalar(a._h, sop, c_double(other), byref(out))
        else:
            other = self._as_tensor_like(other)
            st = fn(self._h, other._h, byref(out))
            if st == DTYPE_ERROR:
                a, b = self._promote(self, other)
                if a is not None:
                    st = fn(a._h, b._h, byref(out))
        if st:
            raise _lib.error(st)
        return self._wrap(out)

    def __add__(self, other):
        if isinstance(other, TensorBase):  # the common case first: one call, no promotion
            out = c_void_p()
            if not _add(self._h, other._h, byref(out)):
                t = _new(self._plain)  # self._wrap(out), inlined
                t._h = out
                return t
        return self._bin(other, _add, S_ADD)

    def __sub__(self, other):
        return self._bin(other, _sub, S_SUB)

    def __mul__(self, other):
        return self._bin(other, _mul, S_MUL)

    def __truediv__(self, other):
        a = self if self._dtype_code() in (F32, F64) else self.to("float32")  # true division, as PyTorch
        return a._bin(other, _div, S_DIV)

    __radd__, __rmul__ = __add__, __mul__

    def __rsub__(self, other):
        if isinstance(other, (int, float)):
            return self._bin(other, None, S_RSUB)
        return self._as_tensor_like(other) - self

    def __rtruediv__(self, other):
        if isinstance(other, (int, float)):
            a = self if self._dtype_code() in (F32, F64) else self.to("float32")
            return a._bin(other, None, S_RDIV)
        return self._as_tensor_like(other) / self

    def __pow__(self, other):
        return self._bin(other, _pow, S_POW)

    def __rpow__(self, other):
        return self._as_tensor_like(other) ** self

    def atan2(self, other):
        """atan(self / other) in the quadrant of (other, self), broadcasting (torch.atan2); float tensors."""
        return self._bin(self._as_tensor_like(other), _atan2, None)

    def remainder(self, other):
        """self - floor(self / other) * other: the sign of `other` (torch.remainder, Python's %); int division by
        zero raises like //."""
        return self._bin(other, _remainder, S_REMAINDER)

    def floor_divide(self, other):
        """floor(self / other) elementwise (torch.floor_divide, Python's //; torch 1.13 rounds down): int operands
        stay int (exact: self - self % other divides exactly), a float operand gives a float result."""
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            code = self._dtype_code()
            if type(other) is int and code not in (F32, F64, BOOL):
                exact = self - self.remainder(other)
                return exact._call(_scalar, exact._h, S_DIV, other)
            return (self.to("float32") if code not in (F32, F64) else self)._bin(other, _div, S_DIV).floor()
        other = self._as_tensor_like(other)
        if self.is_floating_point() or other.is_floating_point():
            return (self / other).floor()
        a, b = (self.to("int64") if self._dtype_code() == BOOL else self), other
        exact = a - a.remainder(b)
        return exact._call(_div, exact._h, b._h)

    __floordiv__ = floor_divide

    def __rfloordiv__(self, other):
        return self._as_tensor_like(other).floor_divide(self)

    def __rmod__(self, other):
        return self._as_tensor_like(other).remainder(self)

    def _predicate(self, code):
        return self._call(_lib.tensor_predicate, self._h, code)

    def isnan(self):
        """Elementwise isnan of a float tensor (a bool tensor)."""
        return self._predicate(PREDICATE["isnan"])

    def isinf(self):
        """Elementwise isinf of a float tensor (a bool tensor)."""
        return self._predicate(PREDICATE["isinf"])

    arctan2, __mod__ = atan2, remainder

    def __matmul__(self, other):
        """torch.matmul, including 1-D operands: vector @ matrix and matrix @ vector drop the vector's dim, and
        vector @ vector is their dot product (rank 0)."""
        other = self._as_tensor_like(other)
        ra, rb = self.ndim, other.ndim
        if ra == 1 and rb == 1:  # [1, n] @ [m, 1]: libember reports n != m
            a, b = self.reshape([1, self.shape[0]]), other.reshape([other.shape[0], 1])
            return self._call(_lib.tensor_matmul, a._h, b._h).reshape([])
        if ra == 1:
            out = self.reshape([1, self.shape[0]]) @ other
            shape = list(out.shape)
            del shape[-2]
            return out.reshape(shape)
        if rb == 1:
            b = other.reshape([other.shape[0], 1])
            out = self._call(_lib.tensor_matmul, self._h, b._h)
            return out.reshape(list(out.shape)[:-1])
        return self._call(_lib.tensor_matmul, self._h, other._h)

    def __rmatmul__(self, other):
        return self._as_tensor_like(other) @ self

    def __neg__(self):
        return self._call(_unary, self._h, UNARY["neg"])

    def __pos__(self):
        return self

    def __abs__(self):
        return self._call(_unary, self._h, UNARY["abs"])

    add, sub, mul, div, pow, matmul = __add__, __sub__, __mul__, __truediv__, __pow__, __matmul__
    neg = __neg__

    # ------------------------------------------------------------ comparisons and logic
    def _cmp(self, other, op):
        """A bool tensor; int and float operands are promoted as in PyTorch."""
        if other is None:
            return NotImplemented
        a = self
        if isinstance(other, (int, float)):
            if type(other) is float and self._dtype_code() not in (F32, F64):
                a = self.to("float32")
            return self._call(_compare_scalar, a._h, op, other)
        other = self._as_tensor_like(other)
        out = c_void_p()
        st = _compare(self._h, other._h, op, byref(out))
        if st == DTYPE_ERROR:
            a, b = self._promote(self, other)
            if a is not None:
                st = _compare(a._h, b._h, op, byref(out))
        if st:
            raise _lib.error(st)
        return self._wrap(out)

    __eq__ = eq = _comparison(CMP["eq"])
    __ne__ = ne = _comparison(CMP["ne"])
    __lt__ = lt = _comparison(CMP["lt"])
    __le__ = le = _comparison(CMP["le"])
    __gt__ = gt = _comparison(CMP["gt"])
    __ge__ = ge = _comparison(CMP["ge"])
    __hash__ = object.__hash__  # == is elementwise, as in PyTorch; identity hashing keeps tensors usable as keys

    __and__ = __rand__ = logical_and = _with_other(_lib.tensor_logical, LOGIC["and"])
    __or__ = __ror__ = logical_or = _with_other(_lib.tensor_logical, LOGIC["or"])
    __xor__ = __rxor__ = logical_xor = _with_other(_lib.tensor_logical, LOGIC["xor"])

    def __invert__(self):
        return self._call(_lib.tensor_logical_not, self._h)

    logical_not = __invert__

    # ------------------------------------------------------------ pairwise extrema, clamp, softmax
    maximum = _with_other(_binary, B_MAXIMUM)
    minimum = _with_other(_binary, B_MINIMUM)

    def clamp(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
        t = self
        if min is not None:
            t = t._call(_scalar, t._h, S_CLAMP_MIN, min)
        if max is not None:
            t = t._call(_scalar, t._h, S_CLAMP_MAX, max)
        return t

    clip = clamp

    def softmax(self, dim=-1):
        return self._call(_lib.tensor_softmax, self._h, dim)

    def log_softmax(self, dim=-1):
        return self._call(_lib.tensor_log_softmax, self._h, dim)
