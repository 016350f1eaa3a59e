"""Ember for Python: a pure-ctypes binding of libember (the C ABI in c_api/include/ember.h).

Names follow PyTorch::

    import ember
    import ember.nn as nn
    import ember.nn.functional as F

    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = F.gelu(x @ x.t()).sum()
    y.backward()
    print(x.grad)

    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    loss = F.cross_entropy(model(xb), yb)
    opt.zero_grad(); loss.backward(); opt.step()
    ember.save(model.state_dict(), "model.pt")

The library is found through $EMBER_LIBRARY, next to the package, or in a build folder of the source checkout
(see ember._lib). Failures raise ember.errors.EmberError subclasses carrying libember's message.
"""
from . import _lib, errors, fft, nn, optim, utils
from ._saveload import load, save
from ._backends import backends
from ._convert import Device as device
from ._tensor_functions import cat, stack, where
from .autograd import is_grad_enabled, no_grad
from .creation import (arange, as_tensor, from_numpy, full, full_like, is_tensor, manual_seed, ones, ones_like, rand,
                       randn, tensor, zeros, zeros_like)
from .errors import *  # noqa: F401,F403
from .errors import EmberError
from .fft import view_as_complex, view_as_real
from .serialization import Record
from .safetensors import load_safetensors, save_safetensors  # issue 13
from ._tensor_shape_ops import baddbmm, einsum, logsumexp  # issue 13
from .tensor import Tensor
from ._tensor_sort import argsort, cumsum, masked_select, sort, topk, tril, triu  # issue 13
from . import onnx  # issue 19 (h-onnx-surface): ember.onnx.load
from ._compiled import CompiledModule, compile  # issue 14: ember.compile(model)  # noqa: A001

float32, float64, int64, bool = "float32", "float64", "int64", "bool"  # noqa: A001 (torch.bool's spelling)
__version__ = _lib.version().decode()
library_path = _lib.path


def set_num_threads(n):
    """Threads for CPU kernels (ember_set_num_threads); call before running work."""
    _lib.check(_lib.set_num_threads(int(n)))


def exp(x):
    return x.exp()


def log(x):
    return x.log()


def abs(x):  # noqa: A001
    return x.abs()


def matmul(a, b):
    return a @ b


def _unary_function(name):
    f = lambda x: getattr(x, name)()  # noqa: E731
    f.__name__ = name
    return f


asin, acos, atan, sinh, cosh, asinh, acosh, atanh = (_unary_function(n) for n in (
    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"))
isnan, isinf = _unary_function("isnan"), _unary_function("isinf")


def atan2(a, b):
    return a.atan2(b)


def remainder(a, b):
    return a.remainder(b)


def floor_divide(a, b):
    return a.floor_divide(b)


def maximum(a, b):
    return a.maximum(b)


def minimum(a, b):
    return a.minimum(b)


def sum(x, dim=None, keepdim=False):  # noqa: A001
    return x.sum(dim, keepdim)


def mean(x, dim=None, keepdim=False):
    return x.mean(dim, keepdim)


def argmax(x, dim=None, keepdim=False):
    return x.argmax(dim, keepdim)
