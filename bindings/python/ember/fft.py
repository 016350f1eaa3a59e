"""ember.fft: fft, ifft, rfft, irfft with torch.fft's arguments (n, dim, norm), over ember_tensor_fft.

Complex values are float tensors with a trailing dim of 2 holding (real, imaginary), as libember stores them
(torch's ``view_as_real`` layout): ``ember.fft.fft(x)`` of shape ``[..., m]`` has shape ``[..., m, 2]`` where torch
returns a complex ``[..., m]``. The results are :class:`ComplexTensor` (a Tensor with that layout), so a later
``fft``/``ifft``/``irfft`` reads them as complex and ``dim`` counts the complex dims, as torch's does; any other
tensor is real input (fft and ifft of a real tensor treat its imaginary part as 0). ``ember.view_as_complex(t)``
marks a ``[..., 2]`` tensor as complex, ``ember.view_as_real(c)`` gives the plain float tensor back. Arithmetic on a
ComplexTensor is elementwise on the (real, imaginary) floats, not complex arithmetic.
"""
from ctypes import byref, c_void_p

from . import _lib
from .tensor import Tensor, wrap

FFT, IFFT, RFFT, IRFFT = 0, 1, 2, 3
_NORMS = {None: 0, "backward": 0, "forward": 1, "ortho": 2}


class ComplexTensor(Tensor):
    """A float tensor whose last dim (size 2) holds (real, imaginary): what ember.fft returns."""

    __slots__ = ()

    @property
    def real(self):
        return view_as_real(self)[..., 0]

    @property
    def imag(self):
        return view_as_real(self)[..., 1]


def view_as_complex(t):
    """t (float, last dim 2) marked as complex values."""
    if not t.is_floating_point() or not t.shape or t.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return _as_complex(t.clone())


def view_as_real(c):
    """The float tensor [..., 2] behind a complex one (a plain Tensor)."""
    return wrap(c.clone()._steal()) if isinstance(c, ComplexTensor) else c


def _as_complex(t):
    c = object.__new__(ComplexTensor)
    c._h = t._steal()
    return c


def _run(x, op, n, dim, norm):
    if norm not in _NORMS:
        raise ValueError('Invalid normalization mode: "%s"' % (norm,))
    is_complex = isinstance(x, ComplexTensor)
    if op in (FFT, IFFT) and not is_complex:
        x = x if x.is_floating_point() else x.to("float32")
        x = _as_complex(x.unsqueeze(-1) * x._from_data([1.0, 0.0], x._dtype_code()))  # imaginary part 0
        is_complex = True
    elif op == RFFT and is_complex:
        raise RuntimeError("rfft expects a real input tensor, but got a complex one")
    elif op == RFFT and not x.is_floating_point():
        x = x.to("float32")
    rank = x.ndim - (1 if is_complex else 0)
    if not -rank <= dim < rank:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-rank, rank - 1, dim))
    if n is not None and n < 1:
        raise RuntimeError("Invalid number of data points (%d) specified" % n)
    out = c_void_p()
    st = _lib.tensor_fft(x._h, op, 0 if n is None else n, dim % rank, _NORMS[norm], byref(out))
    if st:
        raise _lib.error(st)
    t = wrap(out)
    return t if op == IRFFT else _as_complex(t)


def fft(input, n=None, dim=-1, norm=None):  # noqa: A002 (torch's names)
    """The discrete Fourier transform along `dim` (n: crop or zero-pad to n points first)."""
    return _run(input, FFT, n, dim, norm)


def ifft(input, n=None, dim=-1, norm=None):  # noqa: A002
    return _run(input, IFFT, n, dim, norm)


def rfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The FFT of a real input: n // 2 + 1 complex values along `dim`."""
    return _run(input, RFFT, n, dim, norm)


def irfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The inverse of rfft: a real output of n points (default 2 * (m - 1))."""
    return _run(input, IRFFT, n, dim, norm)
