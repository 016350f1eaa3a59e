"""state_dicts <-> ember Records (the record files that ``ember train`` writes and ``ember inspect`` reads).

A state_dict becomes a Record through a module tree built for it with issue 11's C ABI: one container
(ember_module_create) per dotted prefix, each tensor added under its last name (ember_module_add_param keeps the
handle itself), then ember_module_to_record. A Record loads into a state_dict the same way in reverse: a tree of
fresh tensors shaped like the target's state_dict, ember_module_load_record (libember checks every path, shape
and dtype and writes the values behind those same handles), and the tensors are the loaded state.

Needs a libember with module trees (``available()``); the binding's own format (ember.save's default) does not.
"""
from collections import OrderedDict
from ctypes import byref, c_void_p

from . import _lib, errors
from .serialization import Record

PARAM_TRAINABLE, PARAM_BUFFER = 0, 1


def available():
    return getattr(_lib, "module_create", None) is not None


class _Tree:
    """An ember_module container tree holding the tensors of a state_dict under their dotted paths."""

    def __init__(self, state, trainable):
        if not available():
            raise errors.UnsupportedError("ember: this libember has no module trees (ember_module_create); records "
                                          "of state_dicts need them")
        self.handles = []  # every module handle we own (parents keep their children alive too)
        self.root = self._new()
        self.nodes = {"": self.root}
        self.tensors = state  # keeps the tensors (and so their handles) alive while the tree exists
        for path, t in state.items():
            prefix, _, name = path.rpartition(".")
            node = self._node(prefix)
            role = PARAM_TRAINABLE if path in trainable and t.is_floating_point() else PARAM_BUFFER
            _lib.check(_lib.module_add_param(node, name.encode(), t._h, role))

    def _new(self):
        h = c_void_p()
        _lib.check(_lib.module_create(None, byref(h)))
        self.handles.append(h)
        return h

    def _node(self, prefix):
        node = self.nodes.get(prefix)
        if node is None:
            parent_prefix, _, name = prefix.rpartition(".")
            parent = self._node(parent_prefix)
            node = self._new()
            _lib.check(_lib.module_add_child(parent, name.encode(), node))
            self.nodes[prefix] = node
        return node

    def __del__(self, _free=_lib.module_free):
        for h in getattr(self, "handles", ()):
            try:
                _free(h)
            except (AttributeError, TypeError):
                pass


def record_from_state_dict(state, trainable=()):
    """The Record of `state` (a dict of tensors by dotted name); names in `trainable` are written as trainable
    params, the rest as buffers (ember inspect shows the roles)."""
    tree = _Tree(OrderedDict(state), set(trainable))
    h = c_void_p()
    _lib.check(_lib.module_to_record(tree.root, byref(h)))
    return Record._wrap(h)


def state_dict_from_record(record, like, trainable=(), strict=True):
    """The values of `record` as a state_dict shaped like `like` (a state_dict: names, shapes, dtypes).

    strict: every entry of `like` must be in the record and nothing else (errors.RecordError listing the
    mismatches, as libember reports them); otherwise only the matching entries are returned."""
    fresh = OrderedDict((k, v.detach().clone()) for k, v in like.items())
    tree = _Tree(fresh, set(trainable))
    report = c_void_p()
    status = _lib.module_load_record(tree.root, record._h, 0 if strict else 1, byref(report))
    text = ""
    if report.value:
        try:
            text = _lib.read_text(_lib.load_report_text, report)
        finally:
            _lib.load_report_free(report)
    if status:
        e = _lib.error(status)
        if text and text.strip() not in str(e):
            e.args = (str(e) + "\n" + text,)
        raise e
    if strict:
        return fresh
    missing = _listed(text, "missing keys") | _listed(text, "mismatched")
    return OrderedDict((k, v) for k, v in fresh.items() if k not in missing)


def _listed(text, heading):
    """The paths listed under `heading` in a load report's text ("  path" or "  path: why" lines)."""
    out, inside = set(), False
    for line in text.splitlines():
        if line.startswith("  ") and inside:
            out.add(line.strip().split(":", 1)[0])
        else:
            inside = line.startswith(heading)
    return out
