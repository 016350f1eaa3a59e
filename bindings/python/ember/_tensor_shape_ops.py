"""ShapeOpsMixin and module functions for issue 13's composed shape ops, with torch 1.13's names and arguments:
Tensor.logsumexp / std, ember.logsumexp, ember.baddbmm, ember.einsum. Each is one C call (differentiable)."""
from ctypes import c_int64, c_void_p

from . import _lib

_PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2}


def _dims(dim):
    """dim (None, an int or a sequence) as a ctypes int64 array and its length; None means every dim (length 0)."""
    if dim is None:
        ds = []
    elif isinstance(dim, int):
        ds = [dim]
    else:
        ds = [int(d) for d in dim]
    return (c_int64 * max(len(ds), 1))(*ds), len(ds)


class ShapeOpsMixin:
    __slots__ = ()

    def logsumexp(self, dim, keepdim=False):
        """log(sum(exp(self))) over `dim` (an int or a tuple), numerically stable, as torch.logsumexp."""
        ds, n = _dims(dim)
        return self._call(_lib.tensor_logsumexp, self._h, ds, n, 1 if keepdim else 0)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """Standard deviation over `dim` (an int, a tuple, or None for every element) with Bessel's correction
        (`unbiased`, or `correction` as torch 1.13's keyword form), as torch.std."""
        c = (1.0 if unbiased else 0.0) if correction is None else float(correction)
        ds, n = _dims(dim)
        return self._call(_lib.tensor_std, self._h, ds, n, c, 1 if keepdim else 0)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def _pad(self, pad, mode, value):
        if mode not in _PAD_MODES:
            raise NotImplementedError("pad: mode %r is not one of %s" % (mode, ", ".join(_PAD_MODES)))
        ps = [int(p) for p in pad]
        return self._call(_lib.tensor_pad, self._h, (c_int64 * max(len(ps), 1))(*ps), len(ps), _PAD_MODES[mode],
                          float(0.0 if value is None else value))


def logsumexp(input, dim, keepdim=False):  # noqa: A002 (torch's argument names)
    return input.logsumexp(dim, keepdim)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (batch1 @ batch2), as torch.baddbmm (input broadcasts; beta=0 ignores it)."""
    input = batch1._as_tensor_like(input)
    return batch1._call(_lib.tensor_baddbmm, input._h, batch1._h, batch2._h, float(beta), float(alpha))


def einsum(equation, *operands):
    """torch.einsum(equation, *operands) (or a list of operands): letters, '...', '->', diagonals, sums."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    hs = (c_void_p * len(operands))(*[o._h for o in operands])
    return operands[0]._call(_lib.einsum, equation.encode(), hs, len(operands))
