"""ember.compile(model): the model's forward and its backward captured once per input signature and replayed
afterwards, through ember_compile (ember.h, "Compiled forwards"; engine/compile/README.md, "C ABI and Python").

    model = ember.compile(model)      # the only line that changes in a training script
    loss = F.cross_entropy(model(x), y)
    loss.backward(); optimizer.step()

In the spirit of ORTModule: the wrapper is a Module with the wrapped module's parameters (the same objects, so an
optimizer made before or after the wrap updates what the compiled forward reads); train() / eval(), state_dict(),
parameters() and attribute access go to the wrapped module. The loss and the optimizer stay eager. A call whose
arguments are not all tensors, or that returns something else than one tensor, runs the wrapped module directly;
what cannot be captured runs eagerly inside ember_compiled_call, and ``model.fallback_reason`` says why.
"""
from ctypes import byref, c_int32, c_void_p

from . import _lib, creation
from ._description import ENUMS
from .nn.module import Module
from .tensor import Tensor, wrap

_CALL_NAMES = {ENUMS["ember_compiled_call_kind"]["EMBER_COMPILED_" + n.upper()]: n
               for n in ("eager", "captured", "replayed")}
_TRAIN, _EVAL = ENUMS["ember_mode"]["EMBER_MODE_TRAIN"], ENUMS["ember_mode"]["EMBER_MODE_EVAL"]
_INVALID_ARGUMENT = ENUMS["ember_status_code"]["EMBER_ERR_INVALID_ARGUMENT"]


def _value(h):
    """A handle's integer value (Tensor._h is a c_void_p, or an int in some fast paths)."""
    return h if isinstance(h, int) else h.value


def _state_handles(module):
    """The handle values of the module's parameters, then its buffers, each tensor once (parameters() and
    buffers()'s order, without building their names: this runs on every call)."""
    modules, stack, seen = [], [module], set()
    while stack:  # named_modules' pre-order
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        modules.append(m)
        stack.extend(reversed([c for c in m._modules.values() if c is not None]))
    out, memo = [], set()
    for store in ("_parameters", "_buffers"):
        for m in modules:
            for t in getattr(m, store).values():
                if t is not None and id(t) not in memo:
                    memo.add(id(t))
                    out.append(_value(t._h))
    return tuple(out)


class CompiledModule(Module):
    """The wrapper ember.compile returns (see the module's docstring)."""

    def __init__(self, module):
        super().__init__()
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", None)
        object.__setattr__(self, "_state_handles", None)
        object.__setattr__(self, "_error", None)
        object.__setattr__(self, "_outside", None)  # why the last call did not go through ember_compiled_call
        object.__setattr__(self, "_rng_state", None)
        # One ctypes function object for the life of the wrapper (a callback that is collected would crash C).
        object.__setattr__(self, "_callback", _lib.CompiledForwardFn(self._forward_callback))
        self._modules["_orig_mod"] = module

    # ------------------------------------------------------------ what the wrapped module answers
    def __getattr__(self, name):
        d = self.__dict__
        if "_orig_mod" in d:
            return getattr(d["_orig_mod"], name)
        raise AttributeError(name)

    def train(self, mode=True):
        self._orig_mod.train(mode)
        return self

    @property
    def training(self):
        mod = self.__dict__.get("_orig_mod")
        return mod.training if mod is not None else True

    @training.setter
    def training(self, value):
        mod = self.__dict__.get("_orig_mod")
        if mod is not None:
            mod.training = value

    def parameters(self, recurse=True):
        return self._orig_mod.parameters(recurse)

    def named_parameters(self, prefix="", recurse=True):
        return self._orig_mod.named_parameters(prefix, recurse)

    def buffers(self, recurse=True):
        return self._orig_mod.buffers(recurse)

    def named_buffers(self, prefix="", recurse=True):
        return self._orig_mod.named_buffers(prefix, recurse)

    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict=True):
        return self._orig_mod.load_state_dict(state_dict, strict)

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __repr__(self):
        return "CompiledModule(%r)" % (self._orig_mod,)

    # ------------------------------------------------------------ how the last call ran
    @property
    def last_call(self):
        """"captured", "replayed" or "eager" (None before the first call)."""
        if self._outside is not None:
            return "eager"
        if self._compiled is None:
            return None
        kind = c_int32()
        _lib.check(_lib.compiled_last_call(self._compiled, byref(kind)))
        return _CALL_NAMES[kind.value]

    @property
    def fallback_reason(self):
        """Why the last call ran eagerly, one line ("" when it was captured or replayed)."""
        if self._outside is not None:
            return self._outside
        if self._compiled is None:
            return ""
        return _lib.read_text(_lib.compiled_fallback_reason, self._compiled)

    # ------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        if kwargs or not args or not all(isinstance(a, Tensor) for a in args):
            object.__setattr__(self, "_outside", "the call has arguments that are not tensors (keyword arguments "
                                                 "or other values): the module runs directly")
            return self._orig_mod(*args, **kwargs)
        compiled = self._compiled_for_state()
        n = len(args)
        inputs = (c_void_p * n)(*[_value(a._h) for a in args])
        out = (c_void_p * 1)()
        d = self.__dict__
        d["_error"] = d["_outside"] = d["_rng_state"] = None
        st = _lib.compiled_call(compiled, _TRAIN if self.training else _EVAL, inputs, n, out, 1)
        d["_rng_state"] = None
        err = self._error
        object.__setattr__(self, "_error", None)
        if st:
            if err is not None:
                raise err
            raise _lib.error(st)
        return wrap(c_void_p(out[0]))

    def _compiled_for_state(self):
        """The ember_compiled over the module's current parameter and buffer handles (made again when one of them
        was rebound to a new handle: a lazy parameter materialized, Module.double())."""
        handles = _state_handles(self._orig_mod)
        if self._compiled is not None and handles == self._state_handles:
            return self._compiled
        self._free()
        state = (c_void_p * len(handles))(*handles)
        h = c_void_p()
        _lib.check(_lib.compile(state, len(handles), self._callback, None, byref(h)))
        object.__setattr__(self, "_compiled", h)
        object.__setattr__(self, "_state_handles", handles)
        return h

    def _forward_callback(self, user, mode, inputs, n_inputs, outputs, n_outputs):
        try:
            # The forward may run twice in one call (a failed capture runs it again, eagerly): both runs draw the
            # same seeds from ember's Python generator (rand / randn inside the forward), as one eager call would.
            # Dropout draws from libember's generator, which ember_compiled_call restores for the rerun itself.
            if self._rng_state is None:
                object.__setattr__(self, "_rng_state", creation._rng.getstate())
            else:
                creation._rng.setstate(self._rng_state)
            # The inputs are valid for the call only: the forward gets tensors of its own (cheap new handles).
            xs = []
            for i in range(n_inputs):
                h = c_void_p()
                _lib.check(_lib.tensor_clone(inputs[i], byref(h)))
                xs.append(wrap(h))
            y = self._orig_mod(*xs)
            if n_outputs != 1 or not isinstance(y, Tensor):
                raise TypeError("ember.compile: the forward must return one tensor, got %s" % type(y).__name__)
            h = c_void_p()
            _lib.check(_lib.tensor_clone(y._h, byref(h)))
            outputs[0] = h.value
            return 0
        except BaseException as e:  # noqa: B902 (raised again by __call__ after the C call returns)
            object.__setattr__(self, "_error", e)
            status = getattr(e, "status", None)
            return status if isinstance(status, int) and status > 0 else _INVALID_ARGUMENT

    def _free(self):
        if self.__dict__.get("_compiled") is not None:
            _lib.compiled_free(self._compiled)
            object.__setattr__(self, "_compiled", None)
            object.__setattr__(self, "_state_handles", None)

    def __del__(self):
        try:
            self._free()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


def compile(model):  # noqa: A001 (torch.compile's name)
    """The module `model` with its forward and backward compiled (see ember._compiled); `model` itself is unchanged
    and shares its parameters with the result."""
    if isinstance(model, CompiledModule):
        return model
    if not isinstance(model, Module):
        raise TypeError("ember.compile: expected an ember.nn.Module, got %s" % type(model).__name__)
    return CompiledModule(model)
