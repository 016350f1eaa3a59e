"""SortMixin: issue 13's sort, scan and mask ops with torch.Tensor's names and arguments (sort, argsort, topk,
cumsum, masked_select, tril, triu), the module functions ember.sort / ... and torch.nn.functional.one_hot's
one_hot. Each is one C call (differentiable where torch's is: sort and topk scatter the gradient back through the
indices, cumsum's is the reversed cumsum). Every sort is stable and counts NaN as the largest value, as torch."""
from ctypes import byref, c_void_p

from . import _lib
from ._tensor_reductions import ValuesIndices


def _flag(v):
    return 1 if v else 0


class SortMixin:
    __slots__ = ()

    def _values_indices(self, fn, *args):
        values, indices = c_void_p(), c_void_p()
        st = fn(*args, byref(values), byref(indices))
        if st:
            raise _lib.error(st)
        return ValuesIndices(self._wrap(values), self._wrap(indices))

    def sort(self, dim=-1, descending=False, stable=False):
        """(values, indices) sorted along `dim`, as torch.sort (always stable; NaN sorts as the largest)."""
        return self._values_indices(_lib.tensor_sort, self._h, dim, _flag(descending), _flag(stable))

    def argsort(self, dim=-1, descending=False, stable=False):
        """The indices that sort along `dim` (an int64 tensor), as torch.argsort."""
        return self._call(_lib.tensor_argsort, self._h, dim, _flag(descending), _flag(stable))

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 (torch's argument name)
        """(values, indices) of the k largest (or smallest) along `dim`, as torch.topk; always in sorted order."""
        return self._values_indices(_lib.tensor_topk, self._h, k, dim, _flag(largest), _flag(sorted))

    def cumsum(self, dim):
        """The running sum along `dim`, as torch.cumsum (float tensors)."""
        return self._call(_lib.tensor_cumsum, self._h, dim)

    def masked_select(self, mask):
        """The elements where the bool `mask` (broadcast with this tensor) is true, as a 1-D tensor."""
        return self._call(_lib.tensor_masked_select, self._h, mask._h)

    def tril(self, diagonal=0):
        """The lower triangle of the last two dims (j - i <= diagonal), the rest zero."""
        return self._call(_lib.tensor_tril, self._h, diagonal)

    def triu(self, diagonal=0):
        """The upper triangle of the last two dims (j - i >= diagonal), the rest zero."""
        return self._call(_lib.tensor_triu, self._h, diagonal)


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002 (torch's argument names)
    return input.sort(dim, descending, stable)


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return input.argsort(dim, descending, stable)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return input.topk(k, dim, largest, sorted)


def cumsum(input, dim):  # noqa: A002
    return input.cumsum(dim)


def masked_select(input, mask):  # noqa: A002
    return input.masked_select(mask)


def tril(input, diagonal=0):  # noqa: A002
    return input.tril(diagonal)


def triu(input, diagonal=0):  # noqa: A002
    return input.triu(diagonal)


def one_hot(tensor, num_classes=-1):
    """An int64 tensor [..., num_classes] with 1 at each value's class, as torch.nn.functional.one_hot; a value
    outside [0, num_classes) raises InvalidArgumentError (num_classes -1: max + 1)."""
    return tensor._call(_lib.tensor_one_hot, tensor._h, num_classes)
