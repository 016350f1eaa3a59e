"""Backend names and ids as libember reports them, so the binding hard-codes no backend list.

A device string ("cpu", "vulkan:1", "cuda") names a backend by the ``name`` field of ``ember_backend_query``.
The known backends are read once, on first use: every id that ``ember_backend_list`` reports (the compiled ones),
plus the ids from 0 upward that ``ember_backend_query`` accepts (ember.h's ember_backend values are dense and
append-only). The second walk keeps backends that this library knows but was built without: naming one gives
libember's own "not compiled into this library" error rather than "unknown device".
"""
import functools
from ctypes import byref, c_int32, c_size_t, sizeof

from . import _lib, errors

# ember.h: a NULL ember_device stands for the default device, CPU 0 (EMBER_BACKEND_CPU = 0).
DEFAULT_BACKEND_ID = 0
DEFAULT_INDEX = 0
# An upper bound on the ember_backend values walked (far more than ember.h will ever define).
_MAX_BACKENDS = 64

def query(backend_id):
    """ember_backend_query's BackendInfo for `backend_id` (raises for an id libember does not know)."""
    info = _lib.BackendInfo()
    info.struct_size = sizeof(info)
    _lib.check(_lib.backend_query(backend_id, byref(info)))
    return info


def compiled_ids():
    """The ids ember_backend_list reports: the backends compiled into this library."""
    count = c_size_t()
    status = _lib.backend_list(None, 0, byref(count))
    if status not in (0, errors.BufferTooSmallError.status):
        _lib.check(status)
    ids = (c_int32 * count.value)()
    _lib.check(_lib.backend_list(ids, count.value, byref(count)))
    return list(ids[:count.value])


def _known_ids():
    """The compiled ids, and every id ember_backend_query accepts from 0 up (known, maybe not compiled)."""
    found = []
    for b in range(_MAX_BACKENDS):
        info = _lib.BackendInfo()
        info.struct_size = sizeof(info)
        if _lib.backend_query(b, byref(info)):
            _lib.clear_error()  # the walk's end is expected; leave no stale message for the caller
            break
        found.append(b)
    return sorted(set(found) | set(compiled_ids()))


@functools.lru_cache(maxsize=None)
def _tables():
    """({name: id}, {id: name}) of every known backend, read from libember once (names are static)."""
    by_name = {query(b).name.decode(): b for b in _known_ids()}
    return by_name, {b: name for name, b in by_name.items()}


def _table():
    return _tables()[0]


def names():
    """The known backend names in ember_backend order."""
    table = _table()
    return sorted(table, key=table.get)


def is_known(name):
    return name in _table()


def id_of(name):
    """The ember_backend value of a backend name (KeyError for a name libember does not know)."""
    return _table()[name]


def name_of(backend_id):
    return _tables()[1][backend_id]


def backends():
    """{name: {"compiled", "usable", "device_count"}} for every backend libember knows."""
    out = {}
    for name, b in _table().items():
        info = query(b)
        out[name] = {"compiled": info.compiled != 0, "usable": info.usable != 0, "device_count": info.device_count}
    return out
