"""AutogradMixin: ember.Tensor's requires_grad, .grad, backward, detach and clone (see ember.autograd for where a
backward pass's gradients go)."""
from ctypes import byref, c_int32, c_void_p

from . import _lib, autograd


class AutogradMixin:
    """Autodiff state and entry points of ember.Tensor."""

    __slots__ = ()

    @property
    def requires_grad(self):
        on = c_int32()
        _lib.check(_lib.tensor_requires_grad(self._h, byref(on)))
        return bool(on.value)

    @requires_grad.setter
    def requires_grad(self, on):
        self.requires_grad_(on)

    def requires_grad_(self, requires_grad=True):
        """Makes this tensor a leaf whose gradient backward keeps in .grad (in place; float tensors only)."""
        _lib.check(_lib.tensor_set_requires_grad(self._h, 1 if requires_grad else 0))
        (autograd.register_leaf if requires_grad else autograd.unregister_leaf)(self)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = value

    def _add_grad(self, grads):
        """Adds this leaf's gradient from the ember_grads handle `grads` to .grad (called by ember.autograd)."""
        out = c_void_p()
        _lib.check(_lib.grads_get(grads, self._h, byref(out)))
        if out.value:
            g = self._wrap(out)
            self._grad = g if self._grad is None else self._grad + g

    def backward(self, gradient=None):
        """Reverse pass seeded with `gradient` (ones when None); fills .grad of leaves and feeds optimizers."""
        autograd.backward(self, gradient)

    def detach(self):
        return self._call(_lib.tensor_detach, self._h)

    def clone(self):
        return self._call(_lib.tensor_clone, self._h)
