"""Lazy layers (torch.nn.LazyLinear, LazyConv2d): the input size is inferred from the first forward.

Until then the weight and bias are UninitializedParameters; the first forward materializes them with the shapes
of the input, initializes them with the layer's formulas, and the module becomes the plain layer (torch's
cls_to_become). An optimizer built before the first forward holds the same Parameter objects, so it updates the
materialized values.
"""
from .modules import Conv2d, Linear
from .module import Module
from .parameter import UninitializedParameter


class _LazyMixin:
    cls_to_become = None

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            self.__class__ = self.cls_to_become
        return self.forward(*args, **kwargs)


class LazyLinear(_LazyMixin, Linear):
    """Linear whose in_features is input.shape[-1] at the first forward."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self._dtype = dtype or "float32"
        self.weight = UninitializedParameter()
        if bias:
            self.bias = UninitializedParameter()
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            Linear.reset_parameters(self)

    def initialize_parameters(self, input):  # noqa: A002
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features), self._dtype)
        if self.bias is not None:
            self.bias.materialize((self.out_features,), self._dtype)
        self.reset_parameters()


class LazyConv2d(_LazyMixin, Conv2d):
    """Conv2d whose in_channels is input.shape[1] at the first forward."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        Conv2d.__init__(self, groups, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                        padding_mode, device, dtype)
        self.in_channels = 0
        self._dtype = dtype or "float32"
        self.weight = UninitializedParameter()
        if bias:
            self.bias = UninitializedParameter()

    def reset_parameters(self):
        # Conv2d.__init__ calls this before the placeholders exist ("_dtype" unset): nothing to draw then.
        if "_dtype" in self.__dict__ and not self.has_uninitialized_params():
            Conv2d.reset_parameters(self)

    def initialize_parameters(self, input):  # noqa: A002
        self.in_channels = input.shape[1]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        self.weight.materialize((self.out_channels, self.in_channels // self.groups) + self.kernel_size,
                                self._dtype)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,), self._dtype)
        self.reset_parameters()
