"""ember.save / ember.load: tensors and nested dicts / lists / tuples of them (state_dicts, optimizer states) in a
safe file format; the record files of ``ember train`` through ember.serialization.

Format (little-endian): the magic ``b"EMBERPY1"``, the header length as uint64, a UTF-8 JSON header describing
the object tree, then the tensors' raw bytes (C order, each at the header's offset). Loading parses JSON and
copies bytes into new tensors: nothing in a file is executed (unlike pickle), and any other content is an error.
"""
import ctypes
import json
import os
import struct
from collections import OrderedDict

from . import _from_host, _lib, _record_bridge, errors, serialization
from ._convert import BOOL, DTYPE_NAMES, DTYPES
from .nn.module import Module
from .optim.optimizer import Optimizer
from .tensor import Tensor, wrap

MAGIC = b"EMBERPY1"
RECORD_MAGIC = b"EMBERREC"
_ITEMSIZE = {"float32": 4, "float64": 8, "int64": 8, "bool": 1, "int32": 4, "float16": 2, "uint8": 1, "int16": 2}


class _Writer:
    def __init__(self):
        self.chunks, self.size = [], 0

    def tensor(self, t):
        code = t._dtype_code()
        name = DTYPE_NAMES[code]
        n = t.numel()
        nbytes = n * _ITEMSIZE[name]
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        if n:
            _lib.check(_lib.tensor_copy_to(t._h, code, buf, nbytes, None))
        node = {"tensor": {"dtype": name, "shape": list(t.shape), "offset": self.size, "nbytes": nbytes,
                           "requires_grad": bool(t.requires_grad)}}
        self.chunks.append(buf.raw[:nbytes])
        self.size += nbytes
        return node

    def node(self, obj):
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if obj is None or isinstance(obj, (bool, int, float, str)):
            if isinstance(obj, float) and obj != obj:
                return {"float": "nan"}
            if isinstance(obj, float) and obj in (float("inf"), float("-inf")):
                return {"float": "inf" if obj > 0 else "-inf"}
            return {"value": obj}
        if isinstance(obj, dict):
            for k in obj:
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError("ember.save: dict keys must be str or int, got %s" % type(k).__name__)
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {kind: [[k, self.node(v)] for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)):
            return {"tuple" if isinstance(obj, tuple) else "list": [self.node(v) for v in obj]}
        raise TypeError("ember.save: cannot save a %s (tensors, numbers, strings, None and dicts / lists / tuples "
                        "of them)" % type(obj).__name__)


def to_bytes(obj):
    """The file bytes for `obj`."""
    w = _Writer()
    header = json.dumps({"format": 1, "root": w.node(obj)}, separators=(",", ":")).encode()
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(w.chunks)


def _bad(why):
    return errors.RecordError("ember.load: not a valid ember file (%s)" % why)


def _tensor_from(spec, data, base):
    name, shape = spec["dtype"], [int(d) for d in spec["shape"]]
    if name not in DTYPES:
        raise _bad("unknown dtype %r" % (name,))
    n = 1
    for d in shape:
        n *= d
    nbytes, offset = int(spec["nbytes"]), int(spec["offset"])
    if nbytes != n * _ITEMSIZE[name] or offset < 0 or base + offset + nbytes > len(data):
        raise _bad("a tensor's bytes lie outside the file")
    raw = bytes(data[base + offset: base + offset + nbytes])
    t = wrap(_from_host.from_buffer(raw, DTYPES[name], shape, "cpu"))
    if spec.get("requires_grad") and DTYPES[name] != BOOL:
        t.requires_grad_(True)
    return t


def _build(node, data, base):
    if not isinstance(node, dict) or len(node) != 1:
        raise _bad("malformed header")
    (kind, v), = node.items()
    if kind == "tensor":
        return _tensor_from(v, data, base)
    if kind == "value":
        return v
    if kind == "float":
        return float(v)
    if kind in ("dict", "odict"):
        out = OrderedDict() if kind == "odict" else {}
        for k, child in v:
            out[k] = _build(child, data, base)
        return out
    if kind == "list":
        return [_build(child, data, base) for child in v]
    if kind == "tuple":
        return tuple(_build(child, data, base) for child in v)
    raise _bad("unknown node %r" % (kind,))


def from_bytes(data):
    """The object stored in `data` (the bytes of an ember.save file)."""
    data = memoryview(data)
    if bytes(data[:8]) != MAGIC or len(data) < 16:
        raise _bad("no EMBERPY1 header")
    (n,) = struct.unpack("<Q", bytes(data[8:16]))
    if 16 + n > len(data):
        raise _bad("truncated header")
    try:
        header = json.loads(bytes(data[16:16 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _bad("header: %s" % e) from None
    if not isinstance(header, dict) or header.get("format") != 1:
        raise _bad("unsupported format version")
    return _build(header.get("root"), data, 16 + n)


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def save(obj, f, recorder=None, precision=None):
    """Writes `obj` to `f` (a path or a binary file object).

    obj: a tensor, or dicts / lists / tuples of tensors, numbers and strings (a state_dict, an optimizer's
    state_dict); a Module or an Optimizer saves its state_dict(). With recorder ("binary" | "json" | "compact")
    or precision ("full" | "half" | "double"), a Module, a state_dict or an ember.Record is written as an ember
    record file instead (what ``ember train`` writes and ``ember inspect`` reads; needs a libember with module
    trees for modules and state_dicts)."""
    if isinstance(obj, serialization.Record):
        if not _is_path(f):
            raise TypeError("ember.save: a Record is written to a path")
        return serialization.save(obj, f, recorder or "binary", precision or "default")
    if recorder is not None or precision is not None:  # an ember record file (ember inspect reads it)
        serialization.check_options(recorder or "binary", precision)
        if isinstance(obj, Module):
            record = _record_bridge.record_from_state_dict(obj.state_dict(), [n for n, _ in obj.named_parameters()])
        elif isinstance(obj, dict) and all(isinstance(v, Tensor) for v in obj.values()):
            record = _record_bridge.record_from_state_dict(obj)
        else:
            raise TypeError("ember.save: recorder / precision apply to modules, state_dicts and Records")
        if not _is_path(f):
            raise TypeError("ember.save: a record file is written to a path")
        return serialization.save(record, f, recorder or "binary", precision or "default")
    if isinstance(obj, (Module, Optimizer)):
        obj = obj.state_dict()
    data = to_bytes(obj)
    if _is_path(f):
        path = os.fsdecode(f)
        tmp = path + ".tmp"
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, path)  # atomic: a reader never sees half a file
    else:
        f.write(data)


def _read(f):
    if _is_path(f):
        with open(os.fsdecode(f), "rb") as src:
            return src.read()
    return f.read()


def load(f, path=None, strict=True, map_location=None, weights_only=True):
    """load(f) -> the object ember.save wrote (a record file gives an ember.Record). The format holds data only,
    so loading is always what torch calls weights_only.

    load(module_or_optimizer, f, strict=True) loads the file's state_dict into it (module: load_state_dict's
    result, _IncompatibleKeys)."""
    if isinstance(f, (Module, Optimizer)):
        if path is None:
            raise TypeError("ember.load(%s, f): the file to load is missing" % type(f).__name__)
        target, data = f, _read(path)
        state = serialization.Record.from_bytes(data) if data[:8] == RECORD_MAGIC else from_bytes(data)
        if isinstance(target, Module):
            return target.load_state_dict(state, strict=strict)
        return target.load_state_dict(state)
    if map_location not in (None, "cpu"):
        raise NotImplementedError("ember.load: map_location other than 'cpu'")
    data = _read(f)
    if data[:8] == RECORD_MAGIC:
        return serialization.Record.from_bytes(data)
    return from_bytes(data)


