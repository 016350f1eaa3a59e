"""The exceptions of the binding: one class per ``ember_status`` of ember.h.

Every class derives from :class:`EmberError` (itself a ``RuntimeError``, as PyTorch raises) and, where one fits,
from the matching built-in exception too, so ``except ValueError`` catches a bad shape as it would in NumPy. The
message is ``ember_last_error()`` of the failing call ("<function>: <problem>"). The codes are the description's
(c_api/ember_api.json, enum ember_status_code).
"""
from ._description import ENUMS

_CODES = ENUMS["ember_status_code"]


def _code(name):
    """(status, status_name) of an ember_status_code value, from the description."""
    return _CODES[name], name


class EmberError(RuntimeError):
    """A call into libember failed. ``status`` is the ember_status code, ``status_name`` its name."""

    status = -1
    status_name = "EMBER_ERR_UNKNOWN"

    def __init__(self, message, status=None, status_name=None):
        super().__init__(message)
        if status is not None:
            self.status = status
        if status_name is not None:
            self.status_name = status_name


class InvalidArgumentError(EmberError, ValueError):
    status, status_name = _code("EMBER_ERR_INVALID_ARGUMENT")


class NullHandleError(EmberError, ValueError):
    status, status_name = _code("EMBER_ERR_NULL_HANDLE")


class ShapeError(EmberError, ValueError):
    status, status_name = _code("EMBER_ERR_SHAPE")


class DTypeError(EmberError, TypeError):
    status, status_name = _code("EMBER_ERR_DTYPE")


class IndexOutOfRangeError(EmberError, IndexError):
    status, status_name = _code("EMBER_ERR_INDEX")


class OutOfMemoryError(EmberError, MemoryError):
    status, status_name = _code("EMBER_ERR_OUT_OF_MEMORY")


class EmberIOError(EmberError, OSError):
    status, status_name = _code("EMBER_ERR_IO")


class RecordError(EmberError):
    """A corrupt, foreign or mismatching record; ``report`` holds the load report when there is one."""

    status, status_name = _code("EMBER_ERR_RECORD")
    report = None


class UnsupportedError(EmberError, NotImplementedError):
    status, status_name = _code("EMBER_ERR_UNSUPPORTED")


class InternalError(EmberError):
    status, status_name = _code("EMBER_ERR_INTERNAL")


class InvalidHandleError(EmberError, ValueError):
    status, status_name = _code("EMBER_ERR_INVALID_HANDLE")


class BufferTooSmallError(EmberError):
    status, status_name = _code("EMBER_ERR_BUFFER_TOO_SMALL")


class DeviceLostError(EmberError):
    """The GPU device was lost (VK_ERROR_DEVICE_LOST): every later call on it raises this at once. Free what was
    made on it, create the device again and reload saved records."""

    status, status_name = _code("EMBER_ERR_DEVICE_LOST")


BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, NullHandleError, ShapeError, DTypeError, IndexOutOfRangeError, OutOfMemoryError,
    EmberIOError, RecordError, UnsupportedError, InternalError, InvalidHandleError, BufferTooSmallError,
    DeviceLostError)}

__all__ = ["EmberError"] + sorted(cls.__name__ for cls in BY_STATUS.values())
