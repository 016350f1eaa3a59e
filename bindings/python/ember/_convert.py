"""Dtypes, devices, and conversions between Python data and host buffers."""
import array
import ctypes
from ctypes import byref, c_void_p

from . import _backends, _lib
from ._numpy import numpy

# name -> ember_dtype; the four of the public surface first
DTYPES = {"float32": 0, "float64": 1, "float16": 2, "int32": 3, "int64": 4, "uint8": 5, "bool": 6, "int16": 7}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
           "f32": "float32", "f64": "float64", "i64": "int64", "bool_": "bool"}
# array.array typecodes (and element size) used to build host buffers
_TYPECODES = {0: "f", 1: "d", 3: "i", 4: "q", 5: "B", 6: "B", 7: "h"}
F32, F64, I64, BOOL = 0, 1, 4, 6


def dtype_code(dtype):
    """The ember_dtype of "float32"/"float64"/"int64"/"bool" (or float/int/bool, a NumPy dtype, an alias)."""
    if dtype is float:
        return F32
    if dtype is int:
        return I64
    if dtype is bool:
        return BOOL
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or getattr(dtype, "__name__", None)
    if name is None and numpy is not None:
        try:  # a NumPy scalar type such as numpy.float32
            name = numpy.dtype(dtype).name
        except Exception:  # noqa: BLE001
            name = None
    name = ALIASES.get(name, name)
    if name not in DTYPES:
        raise TypeError("ember: unknown dtype %r (use 'float32', 'float64', 'int64' or 'bool')" % (dtype,))
    return DTYPES[name]


def is_float_code(code):
    return code in (F32, F64, 2)


class Device:
    """A device (backend, index): ``"cpu"``, ``"cpu:0"``, ``"vulkan:1"``, ``"cuda"``. The backend names are the ones
    libember reports (see ember._backends), so a backend added to the C ABI needs no change here."""

    __slots__ = ("type", "index")

    def __init__(self, spec="cpu", index=None):
        if isinstance(spec, Device):
            spec, index = spec.type, spec.index if index is None else index
        name, _, idx = str(spec).partition(":")
        if not _backends.is_known(name):
            raise ValueError("ember: unknown device %r (expected %s)" % (spec, ", ".join(_backends.names())))
        self.type = name
        self.index = int(idx) if idx else (index or 0)

    def __eq__(self, other):
        try:
            other = Device(other)
        except (ValueError, TypeError):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    @property
    def backend_id(self):
        """The ember_backend value of this device's backend."""
        return _backends.id_of(self.type)

    def is_default(self):
        """True for the device a NULL ember_device stands for (CPU 0)."""
        return self.backend_id == _backends.DEFAULT_BACKEND_ID and self.index == _backends.DEFAULT_INDEX

    def __str__(self):
        return self.type if self.is_default() else "%s:%d" % (self.type, self.index)

    def __repr__(self):
        return "device(type=%r, index=%d)" % (self.type, self.index)


class DeviceHandle:
    """An ember_device for one call (None stands for the default CPU device and needs no handle)."""

    def __init__(self, device):
        self.h = None
        if device is None:
            return
        dev = Device(device)
        if dev.is_default():
            return
        h = c_void_p()
        _lib.check(_lib.device_create(dev.backend_id, dev.index, byref(h)))
        self.h = h

    def __del__(self):
        if self.h is not None:
            _lib.device_free(self.h)


def flatten(data):
    """(flat list, shape) of nested sequences; ValueError for ragged input."""
    if not isinstance(data, (list, tuple)):
        return [data], ()
    if len(data) == 0:
        return [], (0,)
    if not isinstance(data[0], (list, tuple)):
        for x in data:
            if isinstance(x, (list, tuple)):
                raise ValueError("ember.tensor: ragged nested sequence")
        return list(data), (len(data),)
    flat, inner = [], None
    for x in data:
        f, s = flatten(x)
        if inner is None:
            inner = s
        elif s != inner:
            raise ValueError("ember.tensor: ragged nested sequence (shapes %s and %s)" % (inner, s))
        flat.extend(f)
    return flat, (len(data),) + inner


def infer_code(flat):
    if all(isinstance(x, bool) for x in flat) and flat:
        return BOOL
    if all(isinstance(x, int) for x in flat) and flat:
        return I64
    return F32


def pack(flat, code):
    """A host buffer (an array.array or bytes) holding flat as ember_dtype `code`."""
    if code == BOOL:
        return bytes(1 if x else 0 for x in flat)
    if code == 2:  # float16 from Python values: go through float32
        raise TypeError("ember.tensor: float16 input is accepted from NumPy arrays only")
    try:
        return array.array(_TYPECODES[code], flat)
    except TypeError:
        if code in (F32, F64):
            return array.array(_TYPECODES[code], [float(x) for x in flat])
        return array.array(_TYPECODES[code], [int(x) for x in flat])


def buffer_address(buf):
    """(keep-alive object, address, byte size) of an array.array, bytes, bytearray or contiguous buffer."""
    if isinstance(buf, array.array):
        addr, n = buf.buffer_info()
        return buf, addr, n * buf.itemsize
    mv = memoryview(buf).cast("B")
    if mv.nbytes == 0:
        return None, None, 0
    if mv.readonly:
        keep = ctypes.create_string_buffer(mv.tobytes(), mv.nbytes)
        return keep, ctypes.addressof(keep), mv.nbytes
    return mv, ctypes.addressof(ctypes.c_char.from_buffer(mv)), mv.nbytes


def unflatten(flat, shape):
    """Nested lists of `shape` from the row-major flat list."""
    if len(shape) <= 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [unflatten(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
