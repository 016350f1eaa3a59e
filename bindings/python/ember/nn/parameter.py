"""Parameters and the ember_module handle behind nn layers.

An :class:`EmberModule` owns one ``ember_module`` (a runtime Sequential built by ember_module_sequential). A
:class:`Parameter` is a tensor view of one of its params: libember's ember_module_param_value returns the current
value, which does not follow later optimizer steps or loads, so a Parameter re-reads it whenever the module has
changed since (the module's ``version`` counts steps and loads made through this binding).
"""
from ctypes import byref, c_int64, c_size_t, c_void_p, sizeof

from .. import _lib
from .._convert import DTYPE_NAMES, DeviceHandle
from ..tensor import Tensor, call

ROLES = {0: "trainable", 1: "buffer", 2: "constant"}


class ParamSpec:
    """What ember_module_param_info and _name say about one param."""

    __slots__ = ("index", "path", "dtype", "role", "requires_grad", "id", "shape")

    def __init__(self, index, path, info):
        self.index, self.path = index, path
        self.dtype = DTYPE_NAMES.get(info.dtype, str(info.dtype))
        self.role = ROLES.get(info.role, str(info.role))
        self.requires_grad = bool(info.requires_grad)
        self.id = info.id
        self.shape = tuple(info.shape[:info.rank])


class EmberModule:
    """An owned ember_module handle, its param table, and the Parameters handed out for it."""

    def __init__(self, descs, device=None):
        n = len(descs)
        arr = (_lib.LayerDesc * n)(*descs)
        dev = DeviceHandle(device)
        h = c_void_p()
        _lib.check(_lib.module_sequential(dev.h, arr, n, byref(h)))
        self.h = h
        self.version = 0
        self.n_layers = n
        self._params = {}
        self._specs = None

    def __del__(self, _free=_lib.module_free):
        try:
            _free(self.h)
        except (AttributeError, TypeError):
            pass

    def specs(self):
        if self._specs is None:
            count = c_size_t()
            _lib.check(_lib.module_param_count(self.h, byref(count)))
            specs = []
            for i in range(count.value):
                info = _lib.ParamInfo()
                info.struct_size = sizeof(info)
                _lib.check(_lib.module_param_info(self.h, i, byref(info)))
                specs.append(ParamSpec(i, _lib.read_text(_lib.module_param_name, self.h, i), info))
            self._specs = specs
        return self._specs

    def param(self, index):
        p = self._params.get(index)
        if p is None:
            p = Parameter._make(self, self.specs()[index])
            self._params[index] = p
        return p

    def layer_params(self, layer_index):
        """[(local name, Parameter)] of layer `layer_index` ("weight", "bias", ...)."""
        prefix = "layers.%d." % layer_index
        return [(s.path[len(prefix):], self.param(s.index)) for s in self.specs() if s.path.startswith(prefix)]

    def changed(self):
        """Called after a step or a load: Parameters re-read their values."""
        self.version += 1

    def forward(self, x, train):
        return call(_lib.module_forward, self.h, x._h, 1 if train else 0)

    def num_elements(self):
        n = c_int64()
        _lib.check(_lib.module_num_elements(self.h, byref(n)))
        return n.value


class Parameter(Tensor):
    """A module param as a tensor: always the module's current value; `.grad` is filled by backward."""

    __slots__ = ("_module", "_index", "_version", "_cur", "path", "role")

    def __init__(self, *args, **kwargs):
        raise TypeError("ember.nn.Parameter objects come from a module's parameters(); libember builds params "
                        "inside modules")

    @classmethod
    def _make(cls, module, spec):
        p = object.__new__(cls)
        p._module, p._index, p._version, p._cur = module, spec.index, -1, None
        p.path, p.role = spec.path, spec.role
        return p  # its .grad is libember's grad slot of the param's leaf

    @property
    def _h(self):
        if self._version != self._module.version:
            out = c_void_p()
            _lib.check(_lib.module_param_value(self._module.h, self._index, byref(out)))
            old, self._cur, self._version = self._cur, out, self._module.version
            if old is not None:
                _lib.tensor_free(old)
        return self._cur

    def __del__(self, _free=_lib.tensor_free):
        try:
            if self._cur is not None:
                _free(self._cur)
        except (AttributeError, TypeError):
            pass

    def requires_grad_(self, requires_grad=True):
        raise NotImplementedError("ember: a module param's requires_grad is fixed by its role (no C ABI call "
                                  "changes it)")

    def __repr__(self):
        return "Parameter(%s) %s" % (self.path, Tensor.__repr__(self))
