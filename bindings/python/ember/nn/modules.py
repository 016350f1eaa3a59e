"""ember.nn Module, Layer and the core layers (norm_pool.py has the rest), mapped onto libember's runtime-composed
Sequential (ember_module_sequential).

* ``Sequential(*layers)`` builds one ember_module from the layers' descriptions; its params are named by their
  record paths, ``layers.<i>.<name>`` (as ``ember inspect`` and load reports show them).
* A layer used on its own builds a one-layer ember_module the first time it needs params (lazily, so putting
  fresh layers into a Sequential initializes each param once, in order, as the C and C++ APIs do). Its params are
  named locally ("weight", "bias").
* A layer inside a Sequential is a view of it: ``model[0].weight`` is the Sequential's param, and calling
  ``model[0](x)`` runs that layer alone through nn.functional with those params.

Layouts are Ember's: Linear.weight is [in_features, out_features] (y = x @ weight + bias); Conv2d.weight is
[out, in / groups, kH, kW]; LayerNorm and BatchNorm have gamma / beta.
"""
from ctypes import byref

from .. import _lib
from .._ops import LAYER
from ..serialization import Record, Recordable, load_module_file, load_module_record
from . import functional as F
from .parameter import EmberModule


class Module(Recordable):
    """Base of layers and Sequential: parameters, train/eval, state_dict, __call__ -> forward."""

    training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, x):
        raise NotImplementedError

    def children(self):
        return iter(())

    def train(self, mode=True):
        self.training = bool(mode)
        for c in self.children():
            c.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def _all_params(self):
        """[(name, Parameter)] of every param, buffers included."""
        return []

    def named_parameters(self):
        return [(n, p) for n, p in self._all_params() if p.role == "trainable"]

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def named_buffers(self):
        return [(n, p) for n, p in self._all_params() if p.role != "trainable"]

    def buffers(self):
        return [p for _, p in self.named_buffers()]

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            p.grad = None

    def _ember_module(self):
        """The EmberModule holding this module's params (records and optimizers work on it)."""
        raise TypeError("%s has no parameters" % type(self).__name__)

    def _whole_module(self):
        """The EmberModule when this module is all of it (records and optimizers cover a whole ember_module)."""
        return self._ember_module()

    def state_dict(self):
        """A Record snapshot of the params (ember_module_to_record)."""
        return Record._from_module(self._whole_module())

    def load_state_dict(self, state_dict, strict=True):
        """Loads a Record (see ember.Record); strict raises RecordError listing every mismatch."""
        return load_module_record(self._whole_module(), state_dict, strict)

    def _save_file(self, path, options):
        _lib.check(_lib.module_save(self._whole_module().h, path, byref(options)))

    def _load_file(self, path, strict):
        return load_module_file(self._whole_module(), path, strict)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())


class Layer(Module):
    """One layer of ember_layer_kind; subclasses fill the descriptor and say how to run alone."""

    kind = -1

    def __init__(self):
        self._module = None   # EmberModule, built lazily when standalone
        self._index = 0       # this layer's index in _module
        self._standalone = True

    def _fill(self, d):
        pass

    def _desc(self):
        d = _lib.LayerDesc()
        _lib.check(_lib.layer_init(byref(d), self.kind))
        self._fill(d)
        return d

    def _ember_module(self):
        if self._module is None:
            self._module = EmberModule([self._desc()])
        return self._module

    def _whole_module(self):
        if not self._standalone:
            raise ValueError("%r is a layer of a Sequential: save, load or optimize the Sequential (libember's records "
                             "and optimizers cover a whole module)" % (self,))
        return self._ember_module()

    def _all_params(self):
        if self._module is None and not self._has_params():
            return []
        return self._ember_module().layer_params(self._index)

    def _has_params(self):
        return False

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        for n, p in self._all_params():
            if n == name:
                return p
        raise AttributeError("%s has no attribute %r" % (type(self).__name__, name))

    def forward(self, x):
        if self._standalone:
            return self._ember_module().forward(x, self.training)
        return self._run(x, dict(self._all_params()))

    def _run(self, x, params):
        raise NotImplementedError("%s inside a Sequential cannot run alone; call the Sequential"
                                  % type(self).__name__)

    def extra_repr(self):
        return ""

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.extra_repr())


def _act(name, kind, fn, doc):
    cls = type(name, (Layer,), {"kind": kind, "__doc__": doc, "_run": lambda self, x, p: fn(x)})
    return cls


ReLU = _act("ReLU", LAYER["relu"], F.relu, "max(0, x)")
Sigmoid = _act("Sigmoid", LAYER["sigmoid"], F.sigmoid, "1 / (1 + exp(-x))")
Tanh = _act("Tanh", LAYER["tanh"], F.tanh, "tanh(x)")
SiLU = _act("SiLU", LAYER["silu"], F.silu, "x * sigmoid(x)")


class Linear(Layer):
    """y = x @ weight + bias with weight [in_features, out_features] (Ember's layout)."""

    kind = LAYER["linear"]

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features, self.bias_ = in_features, out_features, bias

    def _fill(self, d):
        d.in_features, d.out_features, d.bias = self.in_features, self.out_features, int(bool(self.bias_))

    def _has_params(self):
        return True

    def _run(self, x, p):
        y = x.reshape(1, -1) @ p["weight"] if x.ndim == 1 else x @ p["weight"]
        y = y.reshape(-1) if x.ndim == 1 else y
        return y + p["bias"] if "bias" in p else y

    def extra_repr(self):
        return "in_features=%d, out_features=%d, bias=%s" % (self.in_features, self.out_features, self.bias_)


class Conv2d(Layer):
    kind = LAYER["conv2d"]

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True):
        super().__init__()
        self.in_channels, self.out_channels, self.groups, self.bias_ = in_channels, out_channels, groups, bias
        self.kernel_size, self.stride = F._pair(kernel_size, "kernel_size"), F._pair(stride, "stride")
        self.padding, self.dilation = F._pair(padding, "padding"), F._pair(dilation, "dilation")

    def _fill(self, d):
        d.in_features, d.out_features, d.groups, d.bias = self.in_channels, self.out_channels, self.groups, \
            int(bool(self.bias_))
        d.kernel_size[:], d.stride[:], d.padding[:], d.dilation[:] = (self.kernel_size, self.stride, self.padding,
                                                                      self.dilation)

    def _has_params(self):
        return True

    def _run(self, x, p):
        return F.conv2d(x, p["weight"], p.get("bias"), self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        return "%d, %d, kernel_size=%s, stride=%s, padding=%s" % (self.in_channels, self.out_channels,
                                                                  self.kernel_size, self.stride, self.padding)


class GELU(Layer):
    kind = LAYER["gelu"]

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError("GELU: approximate must be 'none' or 'tanh', got %r" % (approximate,))
        self.approximate = approximate

    def _fill(self, d):
        d.approximate = 1 if self.approximate == "tanh" else 0

    def _run(self, x, p):
        return F.gelu(x, self.approximate)


class Threshold(Layer):
    kind = LAYER["threshold"]

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold, self.value = threshold, value

    def _fill(self, d):
        d.threshold, d.value = self.threshold, self.value

    def _run(self, x, p):
        return F.threshold(x, self.threshold, self.value)


class PReLU(Layer):
    kind = LAYER["prelu"]

    def __init__(self, num_parameters=1, init=0.25):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init

    def _fill(self, d):
        d.in_features, d.init = self.num_parameters, self.init

    def _has_params(self):
        return True

    def _run(self, x, p):
        return F.prelu(x, p["weight"])


class Dropout(Layer):
    kind = LAYER["dropout"]

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def _fill(self, d):
        d.p = self.p

    def _run(self, x, p):
        return F.dropout(x, self.p, self.training)


class Flatten(Layer):
    kind = LAYER["flatten"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def _fill(self, d):
        d.dim, d.end_dim = self.start_dim, self.end_dim

    def _run(self, x, p):
        return x.flatten(self.start_dim, self.end_dim)


class LeakyReLU(Layer):
    kind = LAYER["leaky_relu"]

    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def _fill(self, d):
        d.negative_slope = self.negative_slope

    def _run(self, x, p):
        return F.leaky_relu(x, self.negative_slope)


class Softmax(Layer):
    kind = LAYER["softmax"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def _fill(self, d):
        d.dim = self.dim

    def _run(self, x, p):
        return F.softmax(x, self.dim)


class LogSoftmax(Softmax):
    kind = LAYER["log_softmax"]

    def _run(self, x, p):
        return F.log_softmax(x, self.dim)
