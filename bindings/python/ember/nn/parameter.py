"""nn.Parameter: a tensor that a Module registers as one of its parameters (torch.nn.Parameter).

A Parameter is an ember.Tensor (every op works on it) that is a graph leaf with ``requires_grad=True`` by default,
so backward fills its ``.grad``. ``Parameter(t)`` holds t's values (a detached leaf of its own); optimizers,
nn.init and load_state_dict change its value in place (ember._assign), so references to it stay valid.
``UninitializedParameter`` is the placeholder of lazy layers until their first forward.
"""
from .. import creation
from .._assign import rebind_
from ..tensor import Tensor


def _as_parameter(cls, data, requires_grad):
    if data is None:
        data = creation.zeros(0)
    if not isinstance(data, Tensor):
        raise TypeError("Parameter: expected a Tensor, got %s" % type(data).__name__)
    p = data.detach()
    p.__class__ = cls  # same layout (no slots of its own), so the new handle simply becomes a Parameter's
    if requires_grad:
        p.requires_grad_(True)
    return p


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True): a module parameter holding data's values."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        return _as_parameter(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)


class UninitializedParameter(Parameter):
    """A lazy layer's parameter before its shape is known; materialize(shape) turns it into a Parameter of that
    shape (torch's UninitializedParameter). Asking for its shape before raises ValueError."""

    __slots__ = ()

    def __new__(cls, requires_grad=True):
        return _as_parameter(cls, None, requires_grad)

    @property
    def shape(self):
        raise ValueError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                         "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                         "initialized one. Call `forward` to initialize the parameters before accessing their "
                         "attributes.")

    def materialize(self, shape, dtype="float32"):
        """Becomes a Parameter of `shape` (zeros until the layer's reset_parameters initializes it)."""
        self.__class__ = Parameter
        rebind_(self, creation.zeros(*shape, dtype=dtype))
        return self

    def __repr__(self):
        return "<UninitializedParameter>"
