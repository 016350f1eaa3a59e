"""InplaceMixin: ember.Tensor's in-place ops (``add_ sub_ mul_ div_ copy_ zero_ fill_ clamp_``, ``+= -= *= /=``).

They keep both the Python object and the libember handle: ember_tensor_inplace / ember_tensor_inplace_scalar
change the value the handle holds (a leaf stays the same leaf, with the same .grad and optimizer slot) and bump
its version counter, so `w -= lr * w.grad` under ``ember.no_grad()`` updates the parameter and the next backward
works. As in PyTorch, a leaf that requires grad refuses in-place ops while grad mode is on, the operand broadcasts
to self's shape (never the other way), and a float operand cannot be written into an int tensor.
"""
from ctypes import byref, c_double, c_int64

from . import _lib
from ._convert import BOOL, DTYPE_NAMES, is_float_code
from ._tensor_base import TensorBase

COPY, ADD, SUB, MUL, DIV, FILL = (_lib.INPLACE_COPY, _lib.INPLACE_ADD, _lib.INPLACE_SUB, _lib.INPLACE_MUL,
                                  _lib.INPLACE_DIV, _lib.INPLACE_FILL)
_inplace, _inplace_scalar, _check = _lib.hot.tensor_inplace, _lib.hot.tensor_inplace_scalar, _lib.check  # no argtypes
_TORCH_DTYPE = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool", "int32": "Int"}


def _cast_error(src, dst):
    return RuntimeError("result type %s can't be cast to the desired output type %s"
                        % (_TORCH_DTYPE.get(src, src), _TORCH_DTYPE.get(dst, dst)))


class InplaceMixin:
    """In-place updates of ember.Tensor (each returns self)."""

    __slots__ = ()

    # ------------------------------------------------------------ the two primitives
    def _inplace_tensor(self, other, op):
        """self (op)= other for a Tensor `other` of self's dtype, broadcast to self's shape."""
        _check(_inplace(self._h, other._h, op))
        return self

    def _inplace_scalar(self, op, value):
        _check(_inplace_scalar(self._h, op, c_double(float(value))))
        return self

    def _operand(self, other):
        """`other` as a Tensor of self's dtype (torch's rule: a float value never goes into an int tensor)."""
        other = self._as_tensor_like(other)
        code, ocode = self._dtype_code(), other._dtype_code()
        if code != ocode:
            if is_float_code(ocode) and not is_float_code(code) or (code == BOOL and ocode != BOOL):
                raise _cast_error(other.dtype, self.dtype)
            other = other.to(DTYPE_NAMES[code])
        return other

    def _scalar_ok(self, value):
        if type(value) is float and not is_float_code(self._dtype_code()):
            raise _cast_error("float32", self.dtype)
        return value

    def _update(self, other, op):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self._inplace_scalar(op, self._scalar_ok(other))
        return self._inplace_tensor(self._operand(other), op)

    # ------------------------------------------------------------ PyTorch's names
    def add_(self, other, alpha=1):
        """self += alpha * other, in place."""
        if alpha == 1 and isinstance(other, TensorBase) and not _inplace(self._h, other._h, ADD):
            return self  # the common case in one call; dtype promotion and errors take the general path
        if alpha != 1:
            other = other * alpha
        return self._update(other, ADD)

    def sub_(self, other, alpha=1):
        """self -= alpha * other, in place."""
        if alpha != 1:
            other = other * alpha
        return self._update(other, SUB)

    def mul_(self, other):
        return self._update(other, MUL)

    def div_(self, other):
        """True division in place: an int tensor cannot hold the float result (RuntimeError, as torch)."""
        if not is_float_code(self._dtype_code()):
            raise _cast_error("float32", self.dtype)
        return self._update(other, DIV)

    def copy_(self, src):
        """Copies src's values (broadcast to self's shape, cast to self's dtype) into self."""
        if not isinstance(src, TensorBase):
            src = self._as_tensor_like(src)
        if src._dtype_code() != self._dtype_code():
            src = src.to(self.dtype)
        return self._inplace_tensor(src, COPY)

    def fill_(self, value):
        if isinstance(value, TensorBase):
            value = value.item()
        return self._inplace_scalar(FILL, value)

    def zero_(self):
        return self._inplace_scalar(FILL, 0)

    def clamp_(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
        return self.copy_(self.clamp(min, max))

    clip_ = clamp_

    __iadd__, __isub__, __imul__ = add_, sub_, mul_

    def __itruediv__(self, other):
        return self.div_(other)

    @property
    def _version(self):
        """How many in-place updates this tensor has seen (ember_tensor_version), as torch's Tensor._version."""
        v = c_int64()
        _lib.check(_lib.tensor_version(self._h, byref(v)))
        return v.value
