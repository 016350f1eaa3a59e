"""CastMixin: ember.Tensor's dtype conversions (to, float, double, long, int, bool)."""
from . import _convert, _lib


class CastMixin:
    """Casts of ember.Tensor; the same dtype returns the tensor itself, as PyTorch does."""

    __slots__ = ()

    def to(self, dtype=None, device=None):
        """A cast to `dtype` ("float32", "int64", "bool", ...); devices other than the tensor's are not supported."""
        t = self
        if device is not None and _convert.Device(device) != self.device:
            raise NotImplementedError("ember: moving tensors between devices is not in the C ABI yet")
        if dtype is not None:
            code = _convert.dtype_code(dtype)
            if code != self._dtype_code():
                t = self._call(_lib.tensor_cast, self._h, code)
        return t

    def float(self):
        return self.to("float32")

    def double(self):
        return self.to("float64")

    def long(self):
        return self.to("int64")

    def int(self):
        return self.to("int64")

    def bool(self):
        return self.to("bool")
