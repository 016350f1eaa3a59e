"""Loads libember.so and declares the C ABI (c_api/include/ember.h) for ctypes, from its description
(c_api/ember_api.json).

The library is looked up, in order, at
  1. ``$EMBER_LIBRARY`` (a path to the .so file),
  2. next to the package (``ember/libember.so``, then the folder holding ``ember/``),
  3. the build folders of a source checkout (``<repo>/build*/c_api/libember.so``, ``build`` first, then the newest),
  4. the system's search path (``libember.so.1`` as installed by ``meson install``).

Every described function gets ``argtypes``/``restype`` from the description, and every described struct a
``ctypes.Structure`` named after it (``ember_backend_info`` -> ``BackendInfo``). Callers check statuses with
:func:`check`, which raises the :mod:`ember.errors` class of the status with the message of ``ember_last_error()``.
"""
import ctypes
import glob
import os
import re
from ctypes import POINTER, Structure, byref, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32, c_uint64
from ctypes import c_void_p

from . import errors
from ._description import API, CONSTANTS, ENUMS


def _candidates():
    env = os.environ.get("EMBER_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.dirname(here)):
        for name in ("libember.so", "libember.so.1"):
            yield os.path.join(folder, name)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    yield os.path.join(repo, "build", "c_api", "libember.so")
    found = glob.glob(os.path.join(repo, "build*", "c_api", "libember.so"))
    yield from sorted(found, key=os.path.getmtime, reverse=True)
    yield "libember.so.1"


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("ember: cannot load libember.so; set EMBER_LIBRARY to its path. Tried:\n  " +
                      "\n  ".join(tried))


lib, path = _load()

# ---------------------------------------------------------------- the description of the C ABI
# Constants, struct layouts and every function's ctypes signature come from c_api/ember_api.json
# (ember/_description.py), the machine-readable description of ember.h that the c_api_description test keeps in step
# with the header (and that the Rust, C# and LuaJIT bindings are generated from): nothing of the header is retyped.
ABI_VERSION = CONSTANTS["EMBER_ABI_VERSION"]
MAX_RANK = CONSTANTS["EMBER_MAX_RANK"]
SLICE_END = CONSTANTS["EMBER_SLICE_END"]
_inplace = ENUMS["ember_inplace_op"]
INPLACE_COPY, INPLACE_ADD, INPLACE_SUB, INPLACE_MUL, INPLACE_DIV, INPLACE_FILL = (
    _inplace["EMBER_INPLACE_" + n] for n in ("COPY", "ADD", "SUB", "MUL", "DIV", "FILL"))

_SCALARS = {"void": None, "char": ctypes.c_char, "int8_t": ctypes.c_int8, "uint8_t": ctypes.c_uint8,
            "int16_t": ctypes.c_int16, "uint16_t": ctypes.c_uint16, "int32_t": c_int32, "uint32_t": c_uint32,
            "int64_t": c_int64, "uint64_t": c_uint64, "size_t": c_size_t, "float": ctypes.c_float, "double": c_double}
# An enum's name (or its typedef, as ember_status) is an int32_t at the ABI.
_SCALARS.update({e["name"]: c_int32 for e in API["enums"]})
_SCALARS.update({e["typedef"]: c_int32 for e in API["enums"] if e.get("typedef")})
_SCALARS.update({t["name"]: _SCALARS[t["type"]] for t in API.get("typedefs", [])})
_HANDLES = {h["name"] for h in API["handles"]}


def _camel(c_name):
    """ember_backend_info -> BackendInfo: the Python name of a described struct or callback."""
    return "".join(part.capitalize() for part in c_name[len("ember_"):].split("_"))


_STRUCTS = {s["name"]: type(_camel(s["name"]), (Structure,), {}) for s in API["structs"]}
_CALLBACKS = {}


def _ctype(c_type):
    """The ctypes type of a described C type. Handles are c_void_p (ember_x** a POINTER(c_void_p)); text going in
    is c_char_p, a char* buffer filled by the callee a c_void_p (a create_string_buffer is passed)."""
    bare = re.sub(r"\bconst\b|\s", "", c_type)
    stars = bare.count("*")
    base = bare.rstrip("*")
    if base == "void" and not stars:
        return None
    if base in _HANDLES or base == "void":
        inner = c_void_p
    elif base == "char" and stars:
        inner = c_char_p if c_type.startswith("const char*") else c_void_p
    elif base in _STRUCTS:
        inner = _STRUCTS[base]
        stars += 1  # one level is the struct itself
    elif base in _CALLBACKS:
        return _CALLBACKS[base]
    else:
        inner = _SCALARS[base]
        stars += 1
    for _ in range(stars - 1):
        inner = POINTER(inner)
    return inner


for _cb in API["callbacks"]:
    _CALLBACKS[_cb["name"]] = ctypes.CFUNCTYPE(_ctype(_cb["returns"]["type"]), *[_ctype(p["type"]) for p in
                                                                                 _cb["params"]])
    globals()[_camel(_cb["name"])] = _CALLBACKS[_cb["name"]]
for _s in API["structs"]:
    _STRUCTS[_s["name"]]._fields_ = [(f["name"], _ctype(f["type"]) * f["array"] if "array" in f else _ctype(f["type"]))
                                     for f in _s["fields"]]
    globals()[_camel(_s["name"])] = _STRUCTS[_s["name"]]
del _cb, _s

# name -> (restype, argtypes) of every described function
_SIGNATURES = {f["name"]: (_ctype(f["returns"]["type"]), [_ctype(p["type"]) for p in f["params"]])
               for f in API["functions"]}

for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(lib, _name)  # AttributeError here: the library is older than this binding
    _fn.restype = _res
    _fn.argtypes = _args
    globals()[_name[len("ember_"):]] = _fn
del _name, _res, _args, _fn


# ---------------------------------------------------------------- the small-op hot path (issue 11's overhead bar)
# The per-op calls again, as function objects without argtypes: ctypes then hands ctypes objects (c_void_p handles,
# byref(out), ctypes arrays, c_int64 / c_size_t / c_double) to C as they are, instead of calling each declared
# type's from_param per argument (a fifth of a small op's time). Callers give them only ctypes objects, None
# (NULL) or Python ints for int32 parameters: an int for a 64-bit parameter would go as a C int, a float raises.
# `hot` functions release the GIL around the call, as every declared function does (an op's time grows with its
# tensors); `quick` ones keep it, for calls that do a fixed amount of work and take no lock that a thread holding
# it could wait on (frees, queries; releasing and retaking the GIL costs as much as they do).
class _Calls:
    """A namespace of function objects (`hot.tensor_add`, ...)."""


_HOT = ("tensor_add", "tensor_sub", "tensor_mul", "tensor_div", "tensor_scalar", "tensor_binary", "tensor_unary",
        "tensor_matmul", "tensor_linear", "tensor_transpose", "tensor_slice", "tensor_inplace", "tensor_inplace_scalar")
_QUICK = ("tensor_free", "tensor_dtype", "tensor_shape", "tensor_select")
hot, quick = _Calls(), _Calls()
for _dll, _ns, _names in ((lib, hot, _HOT), (ctypes.PyDLL(path), quick, _QUICK)):
    for _name in _names:
        _fn = _dll["ember_" + _name]  # a new function object (getattr would give the declared one)
        _fn.restype = c_int32  # the ember_status of every listed function; argtypes stay None
        setattr(_ns, _name, _fn)
del _dll, _ns, _names, _name, _fn


class Handle(c_void_p):
    """A handle returned by a call (ctypes returns an instance of a c_void_p subclass as it is, where a c_void_p
    restype gives an int): made in C, it saves the c_void_p() and byref(out) of an out parameter, a tenth of x[i]."""
    __slots__ = ()


quick.tensor_select_or_null = ctypes.PyDLL(path)["ember_tensor_select_or_null"]
quick.tensor_select_or_null.restype = Handle


if abi_version() != ABI_VERSION:
    raise ImportError("ember: %s has ABI version %d, this binding needs %d" % (path, abi_version(), ABI_VERSION))


def error(status):
    """The exception for a failed call's status, carrying this thread's ember_last_error()."""
    message = last_error().decode("utf-8", "replace")
    cls = errors.BY_STATUS.get(status, errors.EmberError)
    name = status_name(status).decode()
    return cls(message or name, status, name)


def check(status):
    """Raises the mapped exception unless status is EMBER_OK."""
    if status:
        raise error(status)


def read_text(fn, handle, *args):
    """Calls a Strings-rule function (buf, capacity, length) twice if needed and returns the text."""
    length = c_size_t()
    buf = ctypes.create_string_buffer(256)
    status = fn(handle, *args, buf, 256, byref(length))
    if status == errors.BufferTooSmallError.status:
        buf = ctypes.create_string_buffer(length.value + 1)
        status = fn(handle, *args, buf, length.value + 1, byref(length))
    check(status)
    return buf.value.decode("utf-8", "replace")


def shape_array(dims):
    """(int64 array, rank) for a shape given as a sequence of ints."""
    n = len(dims)
    return (c_int64 * n)(*dims), n
