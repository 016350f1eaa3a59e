"""The optimizer base (torch.optim.Optimizer): param groups, state, zero_grad, state_dict / load_state_dict.

Optimizers work on any iterable of tensors (leaves; nn.Parameters or tensors made with requires_grad=True) or of
param-group dicts ({"params": [...], "lr": ...}), each group with its own options. step() reads each param's
.grad and updates the param in place (ember._assign) under no_grad with torch 1.13's single-tensor formulas, so
references to the params (a model's attributes) see the new values.
"""
from collections import defaultdict

from .. import autograd
from ..tensor import Tensor


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    return "ember.Tensor" if isinstance(obj, Tensor) else type(obj).__name__


def _copy_state(value):
    """A deep copy of optimizer state (tensors cloned; ember tensors have no pickling, so no copy.deepcopy)."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _copy_state(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy_state(v) for v in value)
    return value


class Optimizer:
    """Base class: holds param_groups (dicts with "params" and options) and per-param state."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        self._step_count = 0
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\nParameter Group {0}".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += "\n    {0}: {1}".format(key, group[key])
        format_string += "\n)"
        return format_string

    def add_param_group(self, param_group):
        """Adds a group (a dict with "params" and options; missing options take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError("param group must be a dict")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not getattr(param, "is_leaf", True):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter "
                                 + name)
            param_group.setdefault(name, default)
        unknown = sorted(set(param_group) - set(self.defaults) - {"params", "initial_lr"})
        if unknown:
            raise TypeError("%s: unknown option(s) in a param group: %s" % (type(self).__name__,
                                                                             ", ".join(unknown)))
        self._validate_group(param_group)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def _validate_group(self, group):
        """Raises ValueError for an option value the optimizer refuses (torch's messages)."""

    def zero_grad(self, set_to_none=True):
        """Clears the params' .grad (set_to_none=False: zeros of the param's shape instead)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad = None if set_to_none else p.grad * 0.0

    def step(self, closure=None):
        """One update of every param that has a .grad; closure (re-evaluates the loss) is called first."""
        loss = None
        if closure is not None:
            loss = closure()
        self._step_count += 1
        with autograd.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    grad = p.grad  # one read: each makes a handle
                    if grad is not None:
                        self._update(p, grad, self.state[p], group)
        return loss

    def _update(self, param, grad, state, group):
        raise NotImplementedError

    def state_dict(self):
        """{"state": {param index: {...}}, "param_groups": [{options..., "params": [indices]}]} (torch's)."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Restores a state_dict() (of an optimizer over params of the same shapes, in the same groups)."""
        state_dict = _copy_state(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old_id: p for old_id, p in zip((i for g in saved_groups for i in g["params"]),
                                                  (p for g in groups for p in g["params"]))}

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point() and value.is_floating_point():
                    value = value.to(param.dtype)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            k = int(k) if isinstance(k, str) and k.isdigit() else k  # keys come back as text from JSON-like files
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        new_groups = []
        for g, ng in zip(groups, saved_groups):
            ng["params"] = g["params"]
            if "betas" in ng:
                ng["betas"] = tuple(ng["betas"])
            new_groups.append(ng)
        self.state = state
        self.param_groups = new_groups
