"""ember.nn normalization, embedding and pooling layers (torch.nn.LayerNorm, BatchNorm1d/2d, Embedding, pools)."""
from .. import creation
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dims; weight (ones) and bias (zeros) of that shape."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            kw = {"dtype": dtype or "float32", "device": device or "cpu"}
            self.weight = Parameter(creation.ones(*self.normalized_shape, **kw))
            self.bias = Parameter(creation.zeros(*self.normalized_shape, **kw))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class _BatchNorm(Module):
    """weight (ones), bias (zeros); buffers running_mean (zeros), running_var (ones), num_batches_tracked."""

    _expected_dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = {"dtype": dtype or "float32", "device": device or "cpu"}
        if affine:
            self.weight = Parameter(creation.ones(num_features, **kw))
            self.bias = Parameter(creation.zeros(num_features, **kw))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, **kw))
            self.register_buffer("running_var", creation.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype="int64"))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        if input.ndim not in self._expected_dims:
            raise ValueError("expected {} input (got {}D input)".format(
                " or ".join("%dD" % d for d in self._expected_dims), input.ndim))
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            init.constant_(self.num_batches_tracked, self.num_batches_tracked.item() + 1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(input,
                            self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__))


class BatchNorm1d(_BatchNorm):
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _expected_dims = (4,)


class Embedding(Module):
    """weight [num_embeddings, embedding_dim] drawn from N(0, 1); forward picks rows by int64 indices."""

    def __init__(self, num_embeddings, embedding_dim, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(creation.zeros(num_embeddings, embedding_dim, dtype=dtype or "float32",
                                               device=device or "cpu"))
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)

    def forward(self, input):  # noqa: A002
        return F.embedding(input, self.weight)

    def extra_repr(self):
        return "{}, {}".format(self.num_embeddings, self.embedding_dim)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1):
        super().__init__()
        self.kernel_size, self.padding, self.dilation = kernel_size, padding, dilation
        self.stride = stride if stride is not None else kernel_size

    def forward(self, input):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}, dilation={}".format(self.kernel_size, self.stride,
                                                                          self.padding, self.dilation)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.padding, self.count_include_pad = kernel_size, padding, count_include_pad
        self.stride = stride if stride is not None else kernel_size

    def forward(self, input):  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.count_include_pad)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return "output_size={}".format(self.output_size)
