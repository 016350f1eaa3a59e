"""ember.nn's core layers as Modules holding torch-layout Parameters (torch.nn.Linear, Conv2d, activations, ...).

Each forward calls ember.nn.functional; parameters are initialized with torch's formulas (reset_parameters) from
ember's generator (ember.manual_seed). norm_pool.py has normalization, embedding and pooling; lazy.py the lazy
layers; loss.py the loss modules.
"""
import math

from .. import creation
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Linear(Module):
    """y = x @ weight.T + bias, weight [out_features, in_features] (torch.nn.Linear)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(creation.zeros(out_features, in_features, dtype=dtype or "float32",
                                               device=device or "cpu"))
        if bias:
            self.bias = Parameter(creation.zeros(out_features, dtype=dtype or "float32", device=device or "cpu"))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        params = self._parameters  # direct: attribute access to params goes through __getattr__ (the hot path)
        return F.linear(input, params["weight"], params["bias"])

    def extra_repr(self):
        return "in_features={}, out_features={}, bias={}".format(self.in_features, self.out_features,
                                                                  self.bias is not None)


class Conv2d(Module):
    """2-D convolution, weight [out_channels, in_channels / groups, kH, kW] (torch.nn.Conv2d; padding_mode zeros)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError("ember: Conv2d supports padding_mode='zeros' only")
        if isinstance(padding, str) and padding not in ("valid", "same"):
            raise ValueError("Invalid padding string '{}', should be one of {{'valid', 'same'}}".format(padding))
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = F._pair(kernel_size, "kernel_size")
        self.stride, self.dilation = F._pair(stride, "stride"), F._pair(dilation, "dilation")
        if padding == "same":
            if self.stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            if any(t % 2 for t in total):
                raise NotImplementedError("ember: padding='same' with an even total padding only")
            padding = tuple(t // 2 for t in total)
        self.padding = (0, 0) if padding == "valid" else F._pair(padding, "padding")
        self.padding_mode = padding_mode
        dtype, device = dtype or "float32", device or "cpu"
        self.weight = Parameter(creation.zeros(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype,
                                               device=device))
        if bias:
            self.bias = Parameter(creation.zeros(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = "{}, {}, kernel_size={}, stride={}".format(self.in_channels, self.out_channels, self.kernel_size,
                                                       self.stride)
        if self.padding != (0, 0):
            s += ", padding={}".format(self.padding)
        if self.dilation != (1, 1):
            s += ", dilation={}".format(self.dilation)
        if self.groups != 1:
            s += ", groups={}".format(self.groups)
        if self.bias is None:
            s += ", bias=False"
        return s


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError("GELU: approximate must be 'none' or 'tanh', got %r" % (approximate,))
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return "approximate={}".format(repr(self.approximate))


class Sigmoid(Module):
    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):  # noqa: A002
        return F.tanh(input)


class SiLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.silu(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):  # noqa: A002
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return "negative_slope={}".format(self.negative_slope)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):  # noqa: A002
        return F.threshold(input, self.threshold, self.value)

    def extra_repr(self):
        return "threshold={}, value={}".format(self.threshold, self.value)


class PReLU(Module):
    """max(0, x) + weight * min(0, x); weight [num_parameters] initialized to `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(creation.full([num_parameters], float(init), dtype=dtype or "float32",
                                              device=device or "cpu"))

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return "num_parameters={}".format(self.num_parameters)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return "p={}, inplace={}".format(self.p, self.inplace)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return "start_dim={}, end_dim={}".format(self.start_dim, self.end_dim)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.softmax(input, -1 if self.dim is None else self.dim)

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class LogSoftmax(Softmax):
    def forward(self, input):  # noqa: A002
        return F.log_softmax(input, -1 if self.dim is None else self.dim)
