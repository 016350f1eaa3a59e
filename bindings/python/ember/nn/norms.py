"""ember.nn's GroupNorm, RMSNorm (PyTorch 2.4's; torch 1.13 has none) and ConvTranspose2d (issue 13): Modules holding
torch-layout Parameters under torch's names, so a state_dict moves between them and torch as it is."""
import math

from .. import creation
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _kw(device, dtype):
    return {"dtype": dtype or "float32", "device": device or "cpu"}


class GroupNorm(Module):
    """torch.nn.GroupNorm: weight (ones) and bias (zeros) [num_channels] when affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(creation.ones(num_channels, **_kw(device, dtype)))
            self.bias = Parameter(creation.zeros(num_channels, **_kw(device, dtype)))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)


class RMSNorm(Module):
    """PyTorch 2.4's torch.nn.RMSNorm: weight (ones) of shape normalized_shape when elementwise_affine; eps None is
    the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.ones(*self.normalized_shape, **_kw(device, dtype)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class ConvTranspose2d(Module):
    """torch.nn.ConvTranspose2d (padding_mode zeros): weight [in_channels, out_channels / groups, kH, kW], bias
    [out_channels]; forward(input, output_size=None) as torch's."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError('Only "zeros" padding mode is supported for ConvTranspose2d')
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = F._pair(kernel_size, "kernel_size")
        self.stride, self.padding = F._pair(stride, "stride"), F._pair(padding, "padding")
        self.output_padding = F._pair(output_padding, "output_padding")
        self.dilation = F._pair(dilation, "dilation")
        self.padding_mode = padding_mode
        self.weight = Parameter(creation.zeros(in_channels, out_channels // groups, *self.kernel_size,
                                               **_kw(device, dtype)))
        if bias:
            self.bias = Parameter(creation.zeros(out_channels, **_kw(device, dtype)))
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

    def _output_padding(self, input, output_size):  # noqa: A002
        """torch's: the output_padding that gives output_size (its last two entries), else the configured one."""
        if output_size is None:
            return self.output_padding
        size = list(output_size)[-2:]
        if len(size) != 2:
            raise ValueError("output_size must have 2 or 4 elements (got {})".format(len(list(output_size))))
        pads = []
        for d in range(2):
            least = ((input.shape[d + 2] - 1) * self.stride[d] - 2 * self.padding[d] +
                     self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not least <= size[d] < least + self.stride[d]:
                raise ValueError("requested an output size of {}, but valid sizes range from {} to {} (for an input "
                                 "of {})".format(size, least, least + self.stride[d] - 1, list(input.shape[2:])))
            pads.append(size[d] - least)
        return tuple(pads)

    def forward(self, input, output_size=None):  # noqa: A002
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)

    def extra_repr(self):
        s = "{}, {}, kernel_size={}, stride={}".format(self.in_channels, self.out_channels, self.kernel_size,
                                                       self.stride)
        if self.padding != (0, 0):
            s += ", padding={}".format(self.padding)
        if self.dilation != (1, 1):
            s += ", dilation={}".format(self.dilation)
        if self.output_padding != (0, 0):
            s += ", output_padding={}".format(self.output_padding)
        if self.groups != 1:
            s += ", groups={}".format(self.groups)
        if self.bias is None:
            s += ", bias=False"
        return s
