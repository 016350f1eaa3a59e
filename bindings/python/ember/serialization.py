"""Records: ember.save / ember.load, Record (a module's or optimizer's state), LoadReport.

Files are Ember record files (the same as ``ember train`` writes and ``ember inspect`` reads), written atomically.
recorder: "binary" (default) | "json" | "compact"; precision: "default" (compact: half, others: full) | "full" |
"half" | "double".

A leaf of the package: it imports only the low-level layers (_lib, errors). nn modules and optimizers derive from
:class:`Recordable` and say themselves how they are written and read, so this module needs neither of them.
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


def _path(path):
    return os.fsencode(os.fspath(path))


class Recordable:
    """What ember.save and ember.load take besides a Record: nn modules and optimizers derive from it."""

    __slots__ = ()

    def _save_file(self, path, options):
        """Writes this object's record to `path` (bytes) with the RecordOptions `options`."""
        raise NotImplementedError

    def _load_file(self, path, strict):
        """Loads the record file `path` (bytes) into this object; returns what ember.load returns for it."""
        raise NotImplementedError


class Record:
    """An in-memory record (ember_record): what state_dict() returns and load_state_dict() takes."""

    def __init__(self, *args, **kwargs):
        raise TypeError("records come from state_dict(), Record.from_bytes() or Record.read()")

    @classmethod
    def _wrap(cls, h):
        r = object.__new__(cls)
        r._h = h
        return r

    @classmethod
    def _from_module(cls, ember_module):
        h = c_void_p()
        _lib.check(_lib.module_to_record(ember_module.h, byref(h)))
        return cls._wrap(h)

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


class LoadReport:
    """What did not match when loading: missing_keys, unexpected_keys, mismatched ("path: why"); text as
    libember formats it ("" when everything matched)."""

    def __init__(self, text):
        self.text = text
        self.missing_keys, self.unexpected_keys, self.mismatched = [], [], []
        current = None
        for line in text.splitlines():
            if line.startswith("  ") and current is not None:
                current.append(line.strip())
            elif line.startswith("missing keys"):
                current = self.missing_keys
            elif line.startswith("unexpected keys"):
                current = self.unexpected_keys
            elif line.startswith("mismatched"):
                current = self.mismatched

    def __bool__(self):
        return bool(self.missing_keys or self.unexpected_keys or self.mismatched)

    def __repr__(self):
        return "LoadReport(missing_keys=%r, unexpected_keys=%r, mismatched=%r)" % (
            self.missing_keys, self.unexpected_keys, self.mismatched)


def _take_report(h):
    if not h.value:
        return None
    try:
        return LoadReport(_lib.read_text(_lib.load_report_text, h))
    finally:
        _lib.load_report_free(h)


def _finish_load(status, report_h, ember_module):
    """Raises for a failed load (with the report's text) or returns its LoadReport; the module's Parameters re-read
    their values after a load."""
    report = _take_report(report_h)
    if status:
        e = _lib.error(status)
        if report is not None and isinstance(e, errors.RecordError):
            e.report = report
            if report.text and report.text.strip() not in str(e):
                e.args = (str(e) + "\n" + report.text,)
        raise e
    ember_module.changed()
    return report if report is not None else LoadReport("")


def load_module_record(ember_module, record, strict=True):
    """Loads the Record `record` into the EmberModule `ember_module` (anything with the handle .h and changed())."""
    if not isinstance(record, Record):
        raise TypeError("load_state_dict takes an ember.Record (from state_dict(), Record.read or from_bytes)")
    rep = c_void_p()
    st = _lib.module_load_record(ember_module.h, record._h, 0 if strict else 1, byref(rep))
    return _finish_load(st, rep, ember_module)


def load_module_file(ember_module, path, strict=True):
    """Loads the record file `path` into the EmberModule `ember_module`; returns its LoadReport."""
    rep = c_void_p()
    st = _lib.module_load(ember_module.h, _path(path), 0 if strict else 1, byref(rep))
    return _finish_load(st, rep, ember_module)


def save(obj, path, recorder="binary", precision="default"):
    """Writes a module's params, an optimizer's state or a Record to `path` (atomically)."""
    options = _options(recorder, precision)
    if isinstance(obj, Recordable):
        obj._save_file(_path(path), options)
    elif isinstance(obj, Record):
        _lib.check(_lib.record_write_file(obj._h, _path(path), byref(options)))
    else:
        raise TypeError("ember.save: expected an nn module, an optimizer or a Record, got %s" % type(obj).__name__)


def load(obj, path=None, strict=True):
    """load(model, path, strict=True) loads into a module and returns a LoadReport (a strict mismatch raises
    RecordError whose text lists every missing, unexpected and mismatched entry; nothing is changed then);
    load(optimizer, path) restores optimizer state (load the module first); load(path) returns a Record."""
    if path is None:
        return Record.read(obj)
    if isinstance(obj, Recordable):
        return obj._load_file(_path(path), strict)
    raise TypeError("ember.load: expected an nn module or an optimizer, got %s" % type(obj).__name__)
