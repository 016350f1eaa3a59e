"""TensorBase: the owned ``ember_tensor`` handle that the tensor mixins work on.

It holds the handle and the few helpers every mixin needs: calling a libember op that makes a new tensor, turning
a Python operand into a tensor, and PyTorch's dtype promotion. New tensors are made by ``self._wrap(handle)``,
which ember.Tensor defines, so the mixins never import ember.tensor (it imports them).
"""
from ctypes import byref, c_int32, c_void_p

from . import _from_host, _lib, errors
from ._convert import BOOL, F32, F64

DTYPE_ERROR = errors.DTypeError.status


class TensorBase:
    """The handle (``_h``) and helpers for the mixins. (``_grad`` is unused since .grad lives in libember's leaf
    slot; kept so that code assigning it still works.)"""

    # _shape_of / _code_of: (the handle object, its shape / dtype), caches that .shape and _dtype_code() fill (neither
    # changes under a handle: in-place ops keep both; a new handle object invalidates them).
    __slots__ = ("_h", "_grad", "_shape_of", "_code_of", "__weakref__")

    def __del__(self, _free=_lib.quick.tensor_free):
        try:
            _free(self._h)
        except (AttributeError, TypeError):  # never constructed, or the interpreter is shutting down
            pass

    @staticmethod
    def _wrap(h):
        """A new ember.Tensor owning the handle in the c_void_p `h` (defined by ember.Tensor)."""
        raise NotImplementedError

    # ember.Tensor itself (tensor.py sets it): the hottest paths make their result as `t = _new(self._plain);
    # t._h = out`, _wrap's body without its call (a Python call is a tenth of x[i]'s time).
    _plain = None

    def _call(self, fn, *args):
        """fn(*args, &out) -> a new Tensor, raising on failure."""
        out = c_void_p()
        st = fn(*args, byref(out))
        if st:
            raise _lib.error(st)
        return self._wrap(out)

    def _on_device(self, fn, *args):
        """fn(device, *args, &out) -> a new Tensor on this tensor's device (ember_tensor_zeros, _full, _arange)."""
        dev = c_void_p()
        _lib.check(_lib.tensor_device(self._h, byref(dev)))
        try:
            return self._call(fn, dev, *args)
        finally:
            _lib.device_free(dev)

    def _zeros_on_device(self, shape, code):
        dims, rank = _lib.shape_array(shape)
        return self._on_device(_lib.tensor_zeros, code, dims, rank)

    def _full_on_device(self, shape, code, value):
        dims, rank = _lib.shape_array(shape)
        return self._on_device(_lib.tensor_full, code, dims, rank, float(value))

    def _dtype_code(self):
        h = self._h
        try:
            cached = self._code_of
            if cached[0] is h:
                return cached[1]
        except AttributeError:
            pass
        d = c_int32()
        _lib.check(_lib.quick.tensor_dtype(h, byref(d)))
        self._code_of = (h, d.value)
        return d.value

    def _from_data(self, data, code=None):
        """A new Tensor holding `data` (nested lists, numbers, a NumPy array) as ember_dtype `code` (None: inferred
        as ember.tensor does)."""
        return self._wrap(_from_host.from_data(data, code))

    def _as_tensor_like(self, value):
        """`value` (a Tensor, a number, nested lists, a NumPy array) as a Tensor; numbers take self's kind."""
        if isinstance(value, TensorBase):
            return value
        if isinstance(value, (int, float, bool)):
            code = self._dtype_code()
            return self._from_data(value, code)
        return self._from_data(value)

    @staticmethod
    def _promote(a, b):
        """(a, b) cast to a common kind, or (None, None) when they already share one."""
        ca, cb = a._dtype_code(), b._dtype_code()
        if ca == cb:
            return None, None
        for f, name in ((F64, "float64"), (F32, "float32")):  # float64 wins, then float32 (torch's order)
            if ca == f or cb == f:
                return (a if ca == f else a.to(name)), (b if cb == f else b.to(name))
        if BOOL in (ca, cb):
            return (a if ca != BOOL else a.to("int64")), (b if cb != BOOL else b.to("int64"))
        return None, None
