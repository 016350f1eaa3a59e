"""ember.onnx: ONNX models as ember.nn Modules (issue 19).

``ember.onnx.load(path, device=None)`` returns an :class:`OnnxModule`: its parameters are the graph's float
initializers and its buffers the others (shapes, indices), named as in the file ("fc1.weight" is the parameter
``weight`` of a child ``fc1``, so ``state_dict()`` keys are the initializer names). They are the very tensors
libember's graph reads (``ember_onnx_load``'s param handles): an ember.optim step, ``load_state_dict`` or an
in-place update is what the next forward uses, and ``loss.backward()`` fills their ``.grad``. ``forward(*inputs)``
takes one tensor (or NumPy array) per graph input, in the graph's order, and returns a Tensor for a graph of one
output, a tuple otherwise. The module starts in eval mode (an exported graph is an inference graph): call
``.train()`` before fine-tuning when Dropout / BatchNormalization should run in training mode.
"""
from ctypes import byref, c_size_t, c_void_p, create_string_buffer

from . import _convert, _lib, creation
from .nn.module import Module
from .nn.parameter import Parameter
from .tensor import Tensor, wrap

_MODE_EVAL, _MODE_TRAIN = 0, 1


def _text(fn, *args):
    """A string result of an ember.h function with the (buf, capacity, length) convention."""
    n = c_size_t()
    _lib.check(fn(*args, None, 0, byref(n)))
    buf = create_string_buffer(n.value + 1)
    _lib.check(fn(*args, buf, n.value + 1, byref(n)))
    return buf.value.decode()


def supported_operators():
    """The ONNX operators (default domain) the importer converts, sorted."""
    n = c_size_t()
    _lib.check(_lib.onnx_operator_count(byref(n)))
    return [_text(_lib.onnx_operator_name, i) for i in range(n.value)]


class _Scope(Module):
    """A dotted prefix of initializer names ("fc1" of "fc1.weight"): holds its parameters and children."""

    def forward(self, *args):
        raise RuntimeError("a part of an ONNX model has no forward of its own; call the OnnxModule")


class OnnxModule(Module):
    """An imported ONNX graph (see the module's docstring)."""

    def __init__(self, handle, path, device):
        super().__init__()
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "device", device)
        h = self._handle
        n_in, n_out = c_size_t(), c_size_t()
        _lib.check(_lib.onnx_input_count(h, byref(n_in)))
        _lib.check(_lib.onnx_output_count(h, byref(n_out)))
        object.__setattr__(self, "input_names", [_text(_lib.onnx_input_name, h, i) for i in range(n_in.value)])
        object.__setattr__(self, "output_names", [_text(_lib.onnx_output_name, h, i) for i in range(n_out.value)])
        # (path, tensor, the handle it was given): forward checks that no operation rebound the tensor to a new
        # handle (Module.double(), a shape change) behind the graph's back, and writes such a value back.
        bound = []
        n = c_size_t()
        _lib.check(_lib.module_param_count(h, byref(n)))
        for i in range(n.value):
            name = _text(_lib.module_param_name, h, i)
            t = c_void_p()
            _lib.check(_lib.module_param(h, i, byref(t)))
            tensor = wrap(t)
            trainable = tensor.is_floating_point()
            if trainable:
                tensor.__class__ = Parameter  # the same handle: what libember's graph reads
            self._place(name, tensor, trainable)
            bound.append((name, tensor, tensor._h.value))
        object.__setattr__(self, "_bound", bound)
        self.eval()

    def _place(self, name, tensor, trainable):
        """Registers the initializer `name` under its dotted path (a flat name where the path cannot be one)."""
        parts = name.split(".")
        node = self
        if all(parts) and len(parts) > 1:
            for part in parts[:-1]:
                child = node._modules.get(part)
                if child is None:
                    if part in node._parameters or part in node._buffers:
                        node = None
                        break
                    child = node._modules[part] = _Scope()
                node = child
            if node is not None and (parts[-1] in node._modules):
                node = None
        else:
            node = None
        if node is None:  # "a..b", ".x", or a prefix that is itself an initializer: keep the whole name
            node, parts = self, [name.replace(".", "_")]
        store = node._parameters if trainable else node._buffers
        store[parts[-1]] = tensor

    def __del__(self, _free=_lib.module_free):
        try:
            _free(self._handle)
        except (AttributeError, TypeError):
            pass

    def _sync(self):
        """Writes back a parameter that a Module operation rebound to a new handle (libember's graph reads the
        handles it made)."""
        for name, tensor, handle in self._bound:
            if tensor._h.value != handle:
                _lib.check(_lib.module_state_set(self._handle, name.encode(), tensor._h))

    def forward(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise TypeError("forward() takes %d input(s) (%s), %d given"
                            % (len(self.input_names), ", ".join(self.input_names), len(inputs)))
        xs = [x if isinstance(x, Tensor) else creation.as_tensor(x, device=self.device) for x in inputs]
        self._sync()
        n_out = len(self.output_names)
        handles = (c_void_p * max(len(xs), 1))(*[x._h.value for x in xs])
        outs = (c_void_p * max(n_out, 1))()
        _lib.check(_lib.onnx_forward(self._handle, handles, len(xs), outs, n_out,
                                     _MODE_TRAIN if self.training else _MODE_EVAL))
        ys = tuple(wrap(c_void_p(outs[i])) for i in range(n_out))
        return ys[0] if n_out == 1 else ys

    def extra_repr(self):
        return "%r, inputs=%s, outputs=%s" % (self.path, self.input_names, self.output_names)


def load(path, device=None):
    """The ONNX model at `path` (external data beside it) as an OnnxModule on `device` (None: the CPU)."""
    dev = _convert.DeviceHandle(device)
    h = c_void_p()
    _lib.check(_lib.onnx_load(str(path).encode(), dev.h, byref(h)))
    return OnnxModule(h, str(path), "cpu" if device is None else str(_convert.Device(device)))


__all__ = ["load", "OnnxModule", "supported_operators"]
