"""ember.optim: SGD, Adam, AdamW over libember's optimizers (ember_optimizer_*).

libember's optimizers work on a whole module's trainable params. So an optimizer here takes ``model`` or
``model.parameters()`` (or param groups, dicts with "params" and options, one module per group) and makes one
ember_optimizer per module. Gradients reach it through backward: every backward pass adds its gradients to the
pending gradients of every live optimizer (ember_optimizer_accumulate); ``step()`` applies and clears them,
``zero_grad()`` drops them (and clears the params' .grad). ``param_groups[i]["lr"]`` may be changed between steps.
"""
from ctypes import byref, c_double, c_void_p, sizeof

from . import _lib, autograd
from .nn.modules import Module
from .nn.parameter import Parameter
from .serialization import Record, Recordable

SGD_KIND, ADAM_KIND, ADAMW_KIND = 0, 1, 2


def _modules_of(params):
    """The EmberModules behind a Module, a Parameter, or an iterable of them (in first-seen order)."""
    if isinstance(params, Module):
        return [params._whole_module()]
    if isinstance(params, Parameter):
        params = [params]
    found, given = [], {}
    for p in params:
        if isinstance(p, Module):
            m = p._whole_module()
        elif isinstance(p, Parameter):
            m = p._module
            given.setdefault(id(m), set()).add(p._index)
        else:
            raise TypeError("ember.optim: expected module parameters (model.parameters() or the model), got %s; "
                            "libember's optimizers update module params only" % type(p).__name__)
        if all(m is not f for f in found):
            found.append(m)
    for m in found:
        trainable = {s.index for s in m.specs() if s.role == "trainable"}
        if id(m) in given and given[id(m)] != trainable:
            raise ValueError("ember.optim: got %d of the %d trainable params of a module; libember's optimizers "
                             "update all of a module's params (pass them all, or the model)"
                             % (len(given[id(m)]), len(trainable)))
    return found


class Optimizer(Recordable):
    """Base: one ember_optimizer per module; step, zero_grad, lr, state_dict / load_state_dict (records)."""

    kind = -1
    defaults = {}

    def __init__(self, params, **options):
        self.defaults = dict(self.defaults, **options)
        if isinstance(params, (list, tuple)) and params and isinstance(params[0], dict):
            groups = [dict(self.defaults, **g) for g in params]
        else:
            groups = [dict(self.defaults, params=params)]
        self._handles, self._modules, self.param_groups = [], [], []
        for g in groups:
            modules = _modules_of(g["params"])
            for m in modules:
                if any(m is x for x in self._modules):
                    raise ValueError("ember.optim: a module's params appear in two param groups")
                self._handles.append(self._create(m, g))
                self._modules.append(m)
            g["params"] = [p for m in modules for p in (m.param(s.index) for s in m.specs())
                           if p.role == "trainable"]
            g["_handles"] = self._handles[len(self._handles) - len(modules):]
            g["_lr_set"] = g["lr"]
            self.param_groups.append(g)
        autograd.register_optimizer(self)

    def _options(self, g):
        raise NotImplementedError

    def _create(self, module, g):
        o = _lib.OptimizerOptions()
        o.struct_size = sizeof(o)
        _lib.check(_lib.optimizer_options_init(byref(o), self.kind))
        self._options(o, g)
        h = c_void_p()
        _lib.check(_lib.optimizer_create(module.h, byref(o), byref(h)))
        return h

    def __del__(self, _free=_lib.optimizer_free):
        try:
            for h in self._handles:
                _free(h)
        except (AttributeError, TypeError):
            pass

    def _accumulate(self, grads):
        for h in self._handles:
            _lib.check(_lib.optimizer_accumulate(h, grads))

    def _sync_lr(self):
        for g in self.param_groups:
            if g["lr"] != g["_lr_set"]:
                for h in g["_handles"]:
                    _lib.check(_lib.optimizer_set_lr(h, float(g["lr"])))
                g["_lr_set"] = g["lr"]

    def step(self, closure=None):
        """Applies the pending gradients (from the backward passes since the last step or zero_grad)."""
        loss = closure() if closure is not None else None
        self._sync_lr()
        for h, m in zip(self._handles, self._modules):
            try:
                _lib.check(_lib.optimizer_step(h, None))
            finally:
                m.changed()
        return loss

    def zero_grad(self, set_to_none=True):
        for h, m in zip(self._handles, self._modules):
            _lib.check(_lib.optimizer_zero_grad(h))
            for p in m._params.values():
                p.grad = None

    def reset(self):
        """Drops the state (moments, step counts)."""
        for h in self._handles:
            _lib.check(_lib.optimizer_reset(h))

    @property
    def lr(self):
        v = c_double()
        self._sync_lr()
        _lib.check(_lib.optimizer_get_lr(self._handles[0], byref(v)))
        return v.value

    @lr.setter
    def lr(self, value):
        for g in self.param_groups:
            g["lr"] = value
        self._sync_lr()

    def _single_handle(self, what):
        if len(self._handles) != 1:
            raise NotImplementedError("ember.optim: %s works on an optimizer over one module (this one has %d)"
                                      % (what, len(self._handles)))
        return self._handles[0]

    def state_dict(self):
        """The state as an ember.Record (moments, step counts and lr, keyed by param id)."""
        h = c_void_p()
        _lib.check(_lib.optimizer_to_record(self._single_handle("state_dict"), byref(h)))
        return Record._wrap(h)

    def load_state_dict(self, state_dict):
        """Restores a state_dict() record; load the module's record first (state is keyed by param id)."""
        _lib.check(_lib.optimizer_load_record(self._single_handle("load_state_dict"), state_dict._h))
        self._after_load()

    def _save_file(self, path, options):
        _lib.check(_lib.optimizer_save(self._single_handle("save"), path, byref(options)))

    def _load_file(self, path, strict):
        _lib.check(_lib.optimizer_load(self._single_handle("load"), path))
        self._after_load()

    def _after_load(self):
        v = c_double()
        for g in self.param_groups:
            _lib.check(_lib.optimizer_get_lr(g["_handles"][0], byref(v)))
            g["lr"] = g["_lr_set"] = v.value

    def __repr__(self):
        opts = ", ".join("%s=%r" % (k, v) for k, v in sorted(self.param_groups[0].items())
                         if not k.startswith("_") and k != "params")
        return "%s(%s)" % (type(self).__name__, opts)


class SGD(Optimizer):
    """p -= lr * (g + weight_decay * p), with momentum / dampening / nesterov as in torch.optim.SGD."""

    kind = SGD_KIND
    defaults = {"lr": 0.01, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False}

    def _options(self, o, g):
        o.lr, o.momentum, o.dampening = g["lr"], g["momentum"], g["dampening"]
        o.weight_decay, o.nesterov = g["weight_decay"], int(bool(g["nesterov"]))


class Adam(Optimizer):
    """torch.optim.Adam (weight_decay is L2, added to the gradient)."""

    kind = ADAM_KIND
    defaults = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}

    def _options(self, o, g):
        o.lr, o.eps, o.weight_decay = g["lr"], g["eps"], g["weight_decay"]
        o.beta1, o.beta2 = g["betas"]


class AdamW(Adam):
    """torch.optim.AdamW (decoupled weight decay, default 0.01)."""

    kind = ADAMW_KIND
    defaults = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}
