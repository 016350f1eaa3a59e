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
        return self

    @property
    def grad(self):
        """The gradient accumulated by backward (None before): read from libember's leaf grad slot
        (ember_tensor_grad), so every Python object of the same leaf sees it."""
        out = c_void_p()
        _lib.check(_lib.tensor_grad(self._h, byref(out)))
        return self._wrap_grad(out, self) if out.value else None

    @grad.setter
    def grad(self, value):
        if value is not None and list(value.shape) != list(self.shape):
            raise RuntimeError("assigned grad has data of a different size")
        if value is None and not (self.requires_grad and self.is_leaf):
            return  # nothing to clear: only leaves that require grad have a grad slot
        _lib.check(_lib.tensor_set_grad(self._h, None if value is None else value._h))

    @property
    def is_leaf(self):
        """True for tensors that do not require grad and for the ones the user made require grad (torch)."""
        leaf = c_int32()
        _lib.check(_lib.tensor_is_leaf(self._h, byref(leaf)))
        return bool(leaf.value)

    @staticmethod
    def _wrap_grad(h, leaf):
        """A Tensor owning `h`, a copy of leaf's .grad whose in-place ops write the grad slot back (ember.Tensor
        defines it, as _wrap)."""
        raise NotImplementedError

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Reverse pass seeded with `gradient` (ones when None, for one-element tensors only); adds into .grad of
        the leaves and feeds optimizers. retain_graph keeps the graph for another backward (torch's default:
        create_graph, which Ember does not support)."""
        if create_graph:
            raise NotImplementedError("ember: create_graph=True (higher-order gradients) is not supported")
        if inputs is not None:
            raise NotImplementedError("ember: backward(inputs=...) is not supported; use ember.autograd.grad")
        autograd.backward(self, gradient, bool(retain_graph))

    def detach(self):
        return self._call(_lib.tensor_detach, self._h)

    def clone(self):
        return self._call(_lib.tensor_clone, self._h)

    def __deepcopy__(self, memo):
        """copy.deepcopy (a model's, too): a new tensor with its own libember handle and the same values, class
        (a Parameter stays a Parameter) and requires_grad, cut from the graph as torch's copy of a leaf is. The
        default slot copy would share the handle, which the two objects would then each free."""
        if memo is not None and id(self) in memo:
            return memo[id(self)]
        copy = self.detach()
        try:
            copy.__class__ = type(self)
        except TypeError:  # an alias class with slots of its own (.data views): a plain Tensor
            pass
        if self.requires_grad:
            copy.requires_grad_(True)
        if memo is not None:
            memo[id(self)] = copy
        return copy

    def __copy__(self):
        """copy.copy: as deepcopy (libember has no storage-sharing aliases to hand out)."""
        return self.__deepcopy__(None)

    def __reduce_ex__(self, protocol):
        raise TypeError("ember tensors are not picklable; use ember.save / ember.load")
