"""ember.nn normalization, embedding and pooling layers (see modules.py for how layers map onto libember)."""
from . import functional as F
from .modules import Layer


class LayerNorm(Layer):
    """Over the last dim (an int normalized_shape); params gamma, beta."""

    kind = 9

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        if not isinstance(normalized_shape, int):
            ns = tuple(normalized_shape)
            if len(ns) != 1:
                raise NotImplementedError("LayerNorm: libember normalizes over the last dim only")
            normalized_shape = ns[0]
        self.normalized_shape, self.eps = normalized_shape, eps

    def _fill(self, d):
        d.in_features, d.eps = self.normalized_shape, self.eps

    def _has_params(self):
        return True

    def _run(self, x, p):
        return F.layer_norm(x, self.normalized_shape, p["gamma"], p["beta"], self.eps)


class Embedding(Layer):
    kind = 10

    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim

    def _fill(self, d):
        d.in_features, d.out_features = self.num_embeddings, self.embedding_dim

    def _has_params(self):
        return True

    def _run(self, x, p):
        return F.embedding(x, p["weight"])


class MaxPool2d(Layer):
    kind = 11

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation

    def _fill(self, d):
        d.kernel_size[:] = F._pair(self.kernel_size, "kernel_size")
        d.stride[:] = (0, 0) if self.stride is None else F._pair(self.stride, "stride")
        d.padding[:], d.dilation[:] = F._pair(self.padding, "padding"), F._pair(self.dilation, "dilation")

    def _run(self, x, p):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)


class AvgPool2d(Layer):
    kind = 12

    def __init__(self, kernel_size, stride=None, padding=0, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad = count_include_pad

    def _fill(self, d):
        d.kernel_size[:] = F._pair(self.kernel_size, "kernel_size")
        d.stride[:] = (0, 0) if self.stride is None else F._pair(self.stride, "stride")
        d.padding[:], d.count_include_pad = F._pair(self.padding, "padding"), int(bool(self.count_include_pad))

    def _run(self, x, p):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.count_include_pad)


class BatchNorm1d(Layer):
    """Params gamma, beta; buffers running_mean, running_var (updated by train-mode forward)."""

    kind = 18

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum

    def _fill(self, d):
        d.in_features, d.eps, d.momentum = self.num_features, self.eps, self.momentum

    def _has_params(self):
        return True

    def _run(self, x, p):
        if self.training:
            raise NotImplementedError("%s inside a Sequential runs alone in eval mode only (train mode updates "
                                      "running statistics inside libember); call the Sequential"
                                      % type(self).__name__)
        shape = [1, -1] + [1] * (x.ndim - 2)
        scale = p["gamma"].reshape(shape) * (p["running_var"].reshape(shape) + self.eps).pow(-0.5)
        return (x - p["running_mean"].reshape(shape)) * scale + p["beta"].reshape(shape)


class BatchNorm2d(BatchNorm1d):
    kind = 19


class AdaptiveAvgPool2d(Layer):
    kind = 20

    def __init__(self, output_size):
        super().__init__()
        self.output_size = F._pair(output_size, "output_size")

    def _fill(self, d):
        d.kernel_size[:] = self.output_size

    def _run(self, x, p):
        h, w = x.shape[-2:]
        oh, ow = self.output_size
        if h % oh or w % ow:
            raise NotImplementedError("AdaptiveAvgPool2d inside a Sequential runs alone only when the output size "
                                      "divides the input size; call the Sequential")
        return F.avg_pool2d(x, (h // oh, w // ow))
