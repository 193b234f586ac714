"""Datasets (``torch.utils.data.dataset``): Dataset, IterableDataset,
TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset and
random_split.

A *map-style* dataset answers ``dataset[i]`` and ``len(dataset)``; an
*iterable-style* dataset (IterableDataset) is read by iterating over it.
"""
from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any

import numpy as np

from retrograd.core import Tensor, get_rng

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]


class Dataset:
    """An abstract map-style dataset: samples looked up by key.

    Subclasses implement ``__getitem__(index)`` and usually ``__len__()``
    (the default samplers of :class:`~retrograd.utils.data.DataLoader` need
    it). ``dataset1 + dataset2`` concatenates two datasets into a
    :class:`ConcatDataset`.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> ds = Squares()
    >>> ds[3], len(ds + ds)
    (9, 8)
    """

    def __getitem__(self, index):
        """Return the sample at ``index``; subclasses must implement it.

        Raises
        ------
        NotImplementedError
            Always, in the base class.
        """
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        """Concatenate: ``self + other`` is ``ConcatDataset([self, other])``.

        Parameters
        ----------
        other : Dataset
            The dataset whose samples follow this one's.

        Returns
        -------
        ConcatDataset

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.utils.data import TensorDataset
        >>> a = TensorDataset(rg.zeros(2))
        >>> b = TensorDataset(rg.ones(3))
        >>> len(a + b)
        5
        """
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An abstract iterable-style dataset: samples produced by iterating.

    Subclasses implement ``__iter__``. Use it for streams where random
    access is impossible or costly (records read from a file, generated
    data). A :class:`~retrograd.utils.data.DataLoader` over it takes no
    ``sampler``, ``batch_sampler`` or ``shuffle``: the dataset decides the
    order. ``a + b`` chains two iterable datasets into a :class:`ChainDataset`.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import IterableDataset, DataLoader
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(DataLoader(Count(5), batch_size=2))
    [tensor([0, 1]), tensor([2, 3]), tensor([4])]
    """

    def __iter__(self) -> Iterator:
        """Iterate over the samples; subclasses must implement it.

        Raises
        ------
        NotImplementedError
            Always, in the base class.
        """
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        """Chain: ``self + other`` iterates over ``self`` then ``other``.

        Parameters
        ----------
        other : IterableDataset
            The dataset iterated after this one.

        Returns
        -------
        ChainDataset

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.utils.data import IterableDataset
        >>> class Letters(IterableDataset):
        ...     def __init__(self, s):
        ...         self.s = s
        ...     def __iter__(self):
        ...         return iter(self.s)
        >>> list(Letters("ab") + Letters("c"))
        ['a', 'b', 'c']
        """
        return ChainDataset([self, other])


def _first_dim(t) -> int:
    if t.ndim == 0:
        raise IndexError(
            "TensorDataset: every tensor needs a first dimension to index samples along, got a 0-d tensor")
    return t.shape[0]


class TensorDataset(Dataset):
    """A dataset of tensors indexed along their first dimension.

    Sample ``i`` is the tuple ``(tensors[0][i], tensors[1][i], ...)``. Every
    tensor must have the same size in dimension 0. A
    :class:`~retrograd.utils.data.DataLoader` with the default collate
    gathers a whole batch of a TensorDataset with one fancy-indexing per
    tensor (the same tensors as stacking the samples, for less work).

    Parameters
    ----------
    *tensors : Tensor
        The tensors, with equal first dimensions.

    Raises
    ------
    AssertionError
        When the first dimensions differ (as torch).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import TensorDataset
    >>> x = rg.arange(6.0).reshape(3, 2)
    >>> y = rg.tensor([0, 1, 0])
    >>> ds = TensorDataset(x, y)
    >>> len(ds)
    3
    >>> ds[1]
    (tensor([2., 3.]), tensor(1))
    """

    tensors: tuple

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise IndexError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expected Tensors, got {type(t).__name__}; "
                                "convert arrays with rg.as_tensor first")
        n = _first_dim(tensors[0])
        if any(_first_dim(t) != n for t in tensors):
            # torch asserts; keep its exception class, say what differs.
            raise AssertionError(
                "Size mismatch between tensors: their first dimensions are "
                f"{[_first_dim(t) for t in tensors]}, and must all be equal")
        self.tensors = tensors

    def __getitem__(self, index):
        """Return ``tuple(t[index] for t in self.tensors)``."""
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        """The size of the tensors' first dimension."""
        return self.tensors[0].shape[0]

    def _gather_batch(self, indices):
        # DataLoader's fast path (see dataloader._can_gather): the batch that
        # default_collate would build from [self[i] for i in indices], a list
        # with one tensor per column, by one fancy index per tensor instead of
        # len(indices) lookups and a stack. Fancy indexing copies, as stack
        # does, so a batch never aliases the dataset.
        idx = np.asarray(indices, dtype=np.intp)
        return [t[idx] for t in self.tensors]


class StackDataset(Dataset):
    """Several datasets side by side: sample ``i`` gathers each one's sample ``i``.

    Given positionally, the datasets make tuple samples,
    ``(datasets[0][i], datasets[1][i], ...)``; given by keyword, dict
    samples, ``{name: dataset[i], ...}``. Use it to put together the parts
    of a complex input held in separate datasets (images and captions,
    say). All the datasets must have the same length.

    Parameters
    ----------
    *args : Dataset
        Datasets whose samples form tuples, in this order.
    **kwargs : Dataset
        Datasets whose samples form dicts under these keys.

    Attributes
    ----------
    datasets : tuple or dict
        The datasets, as given.

    Raises
    ------
    ValueError
        When no dataset is given, when datasets are given both positionally
        and by keyword, or when their lengths differ.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import StackDataset, TensorDataset
    >>> x = TensorDataset(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> names = ["cat", "dog"]
    >>> StackDataset(x, names)[1]
    ((tensor([3., 4.]),), 'dog')
    >>> StackDataset(image=x, label=names)[0]
    {'image': (tensor([1., 2.]),), 'label': 'cat'}
    """

    datasets: tuple | dict

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("StackDataset supports either tuple-like samples (datasets passed positionally) "
                             "or dict-like samples (datasets passed by keyword), but both types are given")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args if args else tuple(kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(self._length != len(d) for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets: their lengths are "
                             f"{[len(d) for d in parts]}, and must all be equal")  # type: ignore[arg-type]
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        """Sample ``index`` of every dataset, as a tuple or a dict."""
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """The samples at several indices, as a list (the DataLoader's batch fetch).

        A dataset with its own ``__getitems__`` fetches its part of the whole
        batch at once; the others are indexed one sample at a time.

        Parameters
        ----------
        indices : list of int
            The indices of the batch.

        Returns
        -------
        list of tuple or list of dict
            One sample per index.

        Raises
        ------
        ValueError
            When a dataset's ``__getitems__`` returns a number of samples other
            than ``len(indices)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.utils.data import StackDataset
        >>> StackDataset(a=[10, 11, 12], b="xyz").__getitems__([2, 0])
        [{'a': 12, 'b': 'z'}, {'a': 10, 'b': 'x'}]
        """
        named = isinstance(self.datasets, dict)
        keys = list(self.datasets) if named else []
        datasets = list(self.datasets.values()) if named else list(self.datasets)  # type: ignore[union-attr]
        columns = []
        for d in datasets:
            getitems = getattr(d, "__getitems__", None)
            if callable(getitems):
                items = getitems(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                                     f"got {len(items)}")
                columns.append(items)
            else:
                columns.append([d[i] for i in indices])
        rows = zip(*columns)
        if named:
            return [dict(zip(keys, row)) for row in rows]
        return [tuple(row) for row in rows]

    def __len__(self) -> int:
        """The common length of the datasets."""
        return self._length


class ConcatDataset(Dataset):
    """The concatenation of several map-style datasets.

    Index ``i`` runs through the first dataset, then the second, and so on;
    negative indices count from the end.

    Parameters
    ----------
    datasets : iterable of Dataset
        The datasets, in order (not iterable-style ones).

    Raises
    ------
    AssertionError
        When ``datasets`` is empty or holds an IterableDataset (as torch).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import ConcatDataset, TensorDataset
    >>> ds = ConcatDataset([TensorDataset(rg.zeros(2)), TensorDataset(rg.ones(3))])
    >>> len(ds), ds.cumulative_sizes
    (5, [2, 5])
    >>> ds[-1]
    (tensor(1.),)
    """

    datasets: list
    cumulative_sizes: list

    @staticmethod
    def cumsum(sequence) -> list:
        """Running totals of the lengths of ``sequence``'s datasets.

        Parameters
        ----------
        sequence : iterable of Dataset

        Returns
        -------
        list of int

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.utils.data import ConcatDataset
        >>> ConcatDataset.cumsum([[1, 2], [3], [4, 5, 6]])
        [2, 3, 6]
        """
        return list(accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset; "
                                     "use ChainDataset to join iterable datasets")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        """The total number of samples."""
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        """The sample ``idx`` of the concatenation."""
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = n + idx
        if idx >= n:
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after the other.

    Parameters
    ----------
    datasets : iterable of IterableDataset
        The datasets, iterated in order.

    Raises
    ------
    AssertionError
        While iterating, when one of ``datasets`` is not an IterableDataset
        (as torch).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import ChainDataset, IterableDataset
    >>> class Upto(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    ...     def __len__(self):
    ...         return self.n
    >>> chain = ChainDataset([Upto(2), Upto(3)])
    >>> list(chain), len(chain)
    ([0, 1, 0, 1, 2], 5)
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def _check(self, d):
        if not isinstance(d, IterableDataset):
            raise AssertionError("ChainDataset only supports IterableDataset")

    def __iter__(self) -> Iterator:
        """Yield the samples of every dataset in turn."""
        for d in self.datasets:
            self._check(d)
            yield from d  # type: ignore[misc]

    def __len__(self) -> int:
        """The sum of the datasets' lengths (each must define ``__len__``)."""
        total = 0
        for d in self.datasets:
            self._check(d)
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at the given indices, in that order.

    Parameters
    ----------
    dataset : Dataset
        The whole dataset.
    indices : sequence of int
        Which samples of ``dataset``, in order; sample ``i`` of the subset
        is ``dataset[indices[i]]``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import Subset, TensorDataset
    >>> ds = TensorDataset(rg.tensor([10, 11, 12, 13]))
    >>> sub = Subset(ds, [3, 0])
    >>> len(sub), sub[0]
    (2, (tensor(13),))
    """

    dataset: Dataset
    indices: Sequence[int]

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        """``dataset[indices[idx]]``; a list ``idx`` looks up each of its entries."""
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        """The samples at several indices, as a list (the DataLoader's batch fetch)."""
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        """The number of indices."""
        return len(self.indices)

    def _gather_batch(self, indices):
        # DataLoader's fast path, passed on to the wrapped dataset (a
        # random_split of a TensorDataset is the common case).
        return self.dataset._gather_batch([self.indices[i] for i in indices])


def _split_lengths(n: int, lengths: Sequence[Any]) -> list:
    """Absolute lengths from ``lengths`` (ints, or fractions summing to 1)."""
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        # The rounding remainder goes one each to the splits in turn from the
        # first (torch's round-robin), so sizes are reproducible across libraries.
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=3)
        return counts
    return list(lengths)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: np.random.Generator | None = None) -> list[Subset]:
    """Split a dataset at random into non-overlapping subsets.

    ``lengths`` gives either the size of each subset (summing to
    ``len(dataset)``) or the fraction of the dataset each gets (summing to
    1): ``floor(len(dataset) * fraction)`` samples each, and the few left
    over by rounding dealt one at a time to the subsets in order, as torch
    does.

    Parameters
    ----------
    dataset : Dataset
        The map-style dataset to split.
    lengths : sequence of int or float
        Sizes of the subsets, or their fractions of the dataset.
    generator : numpy.random.Generator, optional
        Draws the permutation. By default retrograd's global generator
        (``rg.core.get_rng()``, seeded by ``rg.manual_seed``).

    Returns
    -------
    list of Subset
        One per entry of ``lengths``.

    Raises
    ------
    ValueError
        When the sizes do not add up to ``len(dataset)``, or a fraction is
        outside [0, 1].

    Warns
    -----
    UserWarning
        When a fraction leaves a subset empty.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import TensorDataset, random_split
    >>> ds = TensorDataset(rg.arange(10))
    >>> train, test = random_split(ds, [0.7, 0.3], generator=np.random.default_rng(0))
    >>> len(train), len(test)
    (7, 3)
    >>> sorted(train.indices + test.indices) == list(range(10))
    True
    """
    n = len(dataset)  # type: ignore[arg-type]
    counts = _split_lengths(n, lengths)
    if sum(counts) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    rng = get_rng() if generator is None else generator
    perm = rng.permutation(n).tolist()
    return [Subset(dataset, perm[end - c:end]) for end, c in zip(accumulate(counts), counts)]
