"""Records: ember.Record, the record files that ``ember train`` writes and ``ember inspect`` reads.

ember.save / ember.load (ember._saveload) write state_dicts in their own format and hand Records to this module.
recorder: "binary" (default) | "json" | "compact"; precision: "default" (compact: half, others: full) | "full" |
"half" | "double".

A leaf of the package: it imports only the low-level layers (_lib, errors).
"""
import ctypes
import os
from ctypes import byref, c_size_t, c_void_p, sizeof

from . import _lib, errors

RECORDERS = {"binary": 0, "json": 1, "compact": 2}
PRECISIONS = {"default": 0, "full": 1, "half": 2, "double": 3}


def _options(recorder, precision):
    if recorder not in RECORDERS:
        raise ValueError("recorder must be one of %s, got %r" % (sorted(RECORDERS), recorder))
    if precision is None:
        precision = "default"
    if precision not in PRECISIONS:
        raise ValueError("precision must be one of %s, got %r" % (sorted(PRECISIONS), precision))
    o = _lib.RecordOptions()
    o.struct_size = sizeof(o)
    _lib.check(_lib.record_options_init(byref(o)))
    o.recorder, o.precision = RECORDERS[recorder], PRECISIONS[precision]
    return o


def check_options(recorder, precision):
    """Raises ValueError for a recorder or precision name that does not exist."""
    _options(recorder, precision)


def _path(path):
    return os.fsencode(os.fspath(path))


class Record:
    """An in-memory record (ember_record): a record file of `ember train`, read with Record.read or from_bytes."""

    def __init__(self, *args, **kwargs):
        raise TypeError("records come from state_dict(), Record.from_bytes() or Record.read()")

    @classmethod
    def _wrap(cls, h):
        r = object.__new__(cls)
        r._h = h
        return r

    @classmethod
    def from_bytes(cls, data):
        data = bytes(data)
        h = c_void_p()
        _lib.check(_lib.record_from_bytes(data, len(data), byref(h)))
        return cls._wrap(h)

    @classmethod
    def read(cls, path):
        h = c_void_p()
        _lib.check(_lib.record_read_file(_path(path), byref(h)))
        return cls._wrap(h)

    # issue 13: safetensors files (PyTorch's keys and layouts, which ember.nn modules share)
    @classmethod
    def read_safetensors(cls, path):
        """A safetensors file's tensors under their names (libember checks the whole header first)."""
        h = c_void_p()
        _lib.check(_lib.record_read_safetensors(_path(path), byref(h)))
        return cls._wrap(h)

    def write_safetensors(self, path):
        """Writes the tensors as a safetensors file (atomically), names as they are."""
        _lib.check(_lib.record_write_safetensors(self._h, _path(path)))

    def to_bytes(self, recorder="binary", precision="default"):
        """The file bytes."""
        o = _options(recorder, precision)
        size = c_size_t()
        st = _lib.record_to_bytes(self._h, byref(o), None, 0, byref(size))
        if st and st != errors.BufferTooSmallError.status:
            _lib.check(st)
        buf = ctypes.create_string_buffer(size.value)
        _lib.check(_lib.record_to_bytes(self._h, byref(o), buf, size.value, byref(size)))
        return buf.raw[:size.value]

    def save(self, path, recorder="binary", precision="default"):
        _lib.check(_lib.record_write_file(self._h, _path(path), byref(_options(recorder, precision))))

    def __len__(self):
        n = c_size_t()
        _lib.check(_lib.record_entry_count(self._h, byref(n)))
        return n.value

    def __del__(self, _free=_lib.record_free):
        try:
            _free(self._h)
        except (AttributeError, TypeError):
            pass

    def __repr__(self):
        return "Record(%d entries)" % len(self)


def save(record, path, recorder="binary", precision="default"):
    """Writes the Record `record` to `path` (atomically)."""
    if not isinstance(record, Record):
        raise TypeError("ember.serialization.save: expected a Record, got %s" % type(record).__name__)
    _lib.check(_lib.record_write_file(record._h, _path(path), byref(_options(recorder, precision))))
