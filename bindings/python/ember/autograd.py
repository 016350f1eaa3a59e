"""Autodiff glue: no-grad scopes and where a backward pass's gradients go.

libember returns a backward pass's gradients as one ``ember_grads`` handle. The binding hands them out the way
PyTorch users expect and then frees the handle:

* every live tensor marked ``requires_grad`` by the user (``ember.tensor(..., requires_grad=True)``,
  ``requires_grad_()``) and every :class:`ember.nn.Parameter` gets its gradient added to ``.grad``;
* every live optimizer adds them to its pending gradients (``ember_optimizer_accumulate``), which its ``step()``
  applies and its ``zero_grad()`` drops.
"""
import functools
import weakref
from ctypes import byref, c_int32, c_void_p

from . import _lib

# id(object) -> weakref. Not weakref.WeakSet: it compares members with ==, which is elementwise on tensors.
_leaves = {}
_optimizers = {}


def _register(registry, obj):
    key = id(obj)
    if key in registry and registry[key]() is obj:
        return

    def gone(ref, key=key, registry=registry):
        if registry.get(key) is ref:  # a newer object may have reused the id
            registry.pop(key, None)

    registry[key] = weakref.ref(obj, gone)


def register_leaf(tensor):
    _register(_leaves, tensor)


def unregister_leaf(tensor):
    ref = _leaves.get(id(tensor))
    if ref is not None and ref() is tensor:
        _leaves.pop(id(tensor), None)


def is_leaf_registered(tensor):
    """True for a tensor the user marked requires_grad (a leaf whose .grad backward fills)."""
    ref = _leaves.get(id(tensor))
    return ref is not None and ref() is tensor


def register_optimizer(optimizer):
    _register(_optimizers, optimizer)


def _snapshot(registry):
    """The live objects (dict.copy is atomic under the GIL; weakref callbacks may change the dict any time)."""
    return [obj for obj in (ref() for ref in registry.copy().values()) if obj is not None]


def backward(tensor, gradient=None):
    """Runs the reverse pass from `tensor` (seeded with `gradient`, ones when None) and distributes the gradients."""
    grads = c_void_p()
    _lib.check(_lib.tensor_backward(tensor._h, None if gradient is None else gradient._h, byref(grads)))
    try:
        for opt in _snapshot(_optimizers):
            opt._accumulate(grads)
        for leaf in _snapshot(_leaves):
            leaf._add_grad(grads)
    finally:
        _lib.grads_free(grads)


def is_grad_enabled():
    """False inside a no_grad scope on this thread."""
    on = c_int32()
    _lib.check(_lib.is_grad_enabled(byref(on)))
    return bool(on.value)


class no_grad:
    """Context manager (and decorator): nothing computed inside is recorded for backward, on this thread.

    Nestable; maps to ember_no_grad_enter / ember_no_grad_exit, so the scope is per thread as in PyTorch."""

    def __enter__(self):
        _lib.check(_lib.no_grad_enter())
        return self

    def __exit__(self, *exc):
        _lib.check(_lib.no_grad_exit())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper
