"""nn.Module: PyTorch 1.13's module system in Python (torch.nn.Module).

Assigning a Parameter, a Module or (for a name registered with register_buffer) a tensor to an attribute
registers it, in assignment order; parameters(), named_modules(), state_dict() and the rest walk that tree the way
torch does (dotted names, each object once). forward is the subclass's, written with ember tensor ops and
ember.nn.functional; ``module(x)`` calls it.
"""
from collections import OrderedDict, namedtuple

from .. import _record_bridge, autograd
from .._assign import assign_, rebind_
from ..serialization import Record
from ..tensor import Tensor
from .parameter import Parameter, UninitializedParameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns (torch.nn.modules.module._IncompatibleKeys)."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _tensor_type_name(value):
    return "ember.Tensor" if isinstance(value, Tensor) else type(value).__name__


class Module:
    """Base class of every layer and user model (torch.nn.Module)."""

    training = True

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())

    # ------------------------------------------------------------ calling
    def forward(self, *args, **kwargs):
        raise NotImplementedError('Module [%s] is missing the required "forward" function' % type(self).__name__)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------ registration
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError("parameter name should be a string. Got %s" % type(name).__name__)
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError("attribute '%s' already exists" % name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError("cannot assign '%s' object to parameter '%s' (torch.nn.Parameter or None required)"
                            % (_tensor_type_name(param), name))
        else:
            self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError("buffer name should be a string. Got %s" % type(name).__name__)
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError("attribute '%s' already exists" % name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError("cannot assign '%s' object to buffer '%s' (torch Tensor or None required)"
                            % (type(tensor).__name__, name))
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError("%s is not a Module subclass" % type(module).__name__)
        if not isinstance(name, str):
            raise TypeError("module name should be a string. Got %s" % type(name).__name__)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError("attribute '%s' already exists" % name)
        if "." in name:
            raise KeyError('module name can\'t contain ".", got: %s' % name)
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError("cannot assign '%s' as parameter '%s' (torch.nn.Parameter or None expected)"
                                % (_tensor_type_name(value), name))
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_from(name, self.__dict__, self._parameters, self._buffers,
                                  self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError("cannot assign '%s' as child module '%s' (torch.nn.Module or None expected)"
                                    % (type(value).__name__, name))
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError("cannot assign '%s' as buffer '%s' (torch.Tensor or None expected)"
                                        % (type(value).__name__, name))
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, *dicts_or_sets):
        for d in dicts_or_sets:
            if name in d:
                if isinstance(d, set):
                    d.discard(name)
                else:
                    del d[name]

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(k for k in keys if not k[:1].isdigit()))

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(type(mod).__name__ + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(type(mod).__name__ + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    # ------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True):
        memo = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ modes, dtype, gradients
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's .grad (set_to_none=False: zeros of its shape instead)."""
        for p in self.parameters():
            if p.grad is not None:
                p.grad = None if set_to_none else p.grad * 0.0

    def _apply(self, fn):
        """Applies fn (tensor -> tensor) to every parameter, gradient and buffer, in place (torch's _apply)."""
        for module in self.children():
            module._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            grad = p.grad  # read first: a new handle starts without one
            with autograd.no_grad():
                new = fn(p)
            if new is not p:
                rebind_(p, new)
                if grad is not None:
                    p.grad = fn(grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to(device), to(device, dtype), to(tensor): casts floating-point params and buffers."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        if kwargs:
            raise TypeError("to() got an unexpected keyword argument '%s'" % next(iter(kwargs)))
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, str) and a in ("float32", "float64", "float", "double", "float16", "half"):
                dtype = a
            else:
                device = a

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(dtype, device)
            return t.to(None, device)
        return self._apply(convert)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def cpu(self):
        return self.to("cpu")

    # ------------------------------------------------------------ state
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer, by dotted name (detached tensors)."""
        if args:  # torch's deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs):
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = [(k, v) for k, v in list(self._parameters.items()) + list(persistent.items()) if v is not None]
        local_names = {k for k, _ in local}
        for name, param in local:
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append('While copying the parameter named "%s", expected torch.Tensor or Tensor-like '
                                  'object from checkpoint but received %s' % (key, type(value)))
                continue
            if isinstance(param, UninitializedParameter):
                param.materialize(value.shape, value.dtype)
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append("size mismatch for %s: copying a param with shape %s from checkpoint, the shape "
                                  "in current model is %s." % (key, _size(value.shape), _size(param.shape)))
                continue
            if value.dtype != param.dtype:
                value = value.to(param.dtype)
            try:
                assign_(param, value)
            except Exception as e:  # noqa: BLE001 (torch collects every failure into one message)
                error_msgs.append('While copying the parameter named "%s", whose dimensions in the model are %s '
                                  'and whose dimensions in the checkpoint are %s, an exception occurred : %s.'
                                  % (key, _size(param.shape), _size(value.shape), e.args))
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)[0]
                    if input_name not in self._modules and input_name not in local_names:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        """Copies the values of `state_dict` (a dict of tensors by dotted name, or an ember.Record) into the
        parameters and buffers, in place. Returns _IncompatibleKeys(missing_keys, unexpected_keys); strict=True raises RuntimeError
        listing them (torch's message), and any size mismatch raises whatever strict says."""
        if isinstance(state_dict, Record):  # an ember record file's state (ember.load(path) of a .emr)
            state_dict = _record_bridge.state_dict_from_record(
                state_dict, self.state_dict(), [n for n, _ in self.named_parameters()], strict)
        if not isinstance(state_dict, dict):
            raise TypeError("Expected state_dict to be dict-like, got %s." % type(state_dict))
        missing_keys, unexpected_keys, error_msgs = [], [], []

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, True, missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: %s. "
                                  % ", ".join('"%s"' % k for k in unexpected_keys))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: %s. "
                                  % ", ".join('"%s"' % k for k in missing_keys))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for %s:\n\t%s"
                               % (type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------ repr
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = []
        for key, module in self._modules.items():
            children.append("(" + key + "): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        body = lines + children
        if body:
            if len(lines) == 1 and not children:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(body) + "\n"
        return main + ")"


def _size(shape):
    return "torch.Size(%s)" % (list(shape),)
