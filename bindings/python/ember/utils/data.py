"""ember.utils.data: Dataset, TensorDataset, DataLoader (torch.utils.data's names and arguments).

DataLoader batches in the main process (num_workers=0). Its shuffling draws from Python's random module: a
`generator` is a random.Random or an int seed (torch takes a torch.Generator; its permutations differ from
these). Without one, each epoch's order draws a seed from ember's generator (ember.manual_seed).
"""
import math
import random

from .. import creation
from .._tensor_functions import stack
from ..tensor import Tensor


class Dataset:
    """Anything with __getitem__ (and __len__ for DataLoader's samplers)."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Item i is (t[i] for t in tensors); every tensor has the same size along dim 0."""

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        for d in self.datasets:
            if idx < len(d):
                return d[idx]
            idx -= len(d)
        raise IndexError("index out of range")


class Subset(Dataset):
    """The items of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Subsets of `dataset` with the given lengths (ints summing to its length, or fractions summing to 1, the
    remainder spread round-robin as torch does), drawn without replacement."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = list(range(n))
    _rng_of(generator).shuffle(order)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


def default_collate(batch):
    """Stacks tensors, turns numbers into tensors, and recurses into tuples, lists and dicts (torch's rule)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, bool):
        return creation.tensor(list(batch), dtype="bool")
    if isinstance(elem, int):
        return creation.tensor(list(batch), dtype="int64")
    if isinstance(elem, float):
        return creation.tensor(list(batch), dtype="float64")
    if isinstance(elem, dict):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, (tuple, list)):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(samples) for samples in zip(*batch)]
    return batch


def _rng_of(generator):
    if generator is None:
        return random.Random(creation._rng.getrandbits(64))
    if isinstance(generator, random.Random):
        return generator
    if isinstance(generator, int):
        return random.Random(generator)
    raise TypeError("DataLoader: generator must be a random.Random or an int seed, got %s"
                    % type(generator).__name__)


class DataLoader:
    """Iterates over `dataset` in batches of batch_size (shuffled each epoch when shuffle=True; the last,
    smaller batch dropped when drop_last=True). A TensorDataset is batched by indexing its tensors with the
    batch's indices (one gather per tensor); other datasets item by item through collate_fn."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=2, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers != 0:
            raise ValueError("ember.utils.data.DataLoader loads in the main process only (num_workers=0)")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got batch_size={}"
                             .format(batch_size))
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, bool(shuffle), drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn
        self.generator = _rng_of(generator) if generator is not None else None
        self.num_workers = 0

    def _indices(self):
        if self.sampler is not None:
            return list(self.sampler)
        order = list(range(len(self.dataset)))
        if self.shuffle:
            rng = self.generator if self.generator is not None else _rng_of(None)
            rng.shuffle(order)
        return order

    def _batches(self):
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        order = self._indices()
        if self.batch_size is None:
            for i in order:
                yield i
            return
        for b in range(0, len(order), self.batch_size):
            idx = order[b:b + self.batch_size]
            if len(idx) < self.batch_size and self.drop_last:
                return
            yield idx

    def __iter__(self):
        fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is None and self.batch_size is not None
        for idx in self._batches():
            if self.batch_size is None and self.batch_sampler is None:
                yield self.dataset[idx] if self.collate_fn is None else self.collate_fn(self.dataset[idx])
            elif fast:
                index = creation.tensor(list(idx), dtype="int64")
                yield [t.index_select(0, index) for t in self.dataset.tensors]
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[i] for i in idx])

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
