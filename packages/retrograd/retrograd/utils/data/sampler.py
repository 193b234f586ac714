"""Samplers (``torch.utils.data.sampler``): the orders in which a DataLoader
visits a map-style dataset.

A sampler is an iterable of dataset indices (a BatchSampler: of lists of
indices). Random samplers draw from the NumPy Generator passed as
``generator=``, else from retrograd's global one (``rg.core.get_rng()``,
seeded by ``rg.manual_seed``); each pass over a sampler draws afresh, so two
epochs see two orders, and the same seed gives the same sequence of orders.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import numpy as np

from retrograd.core import get_rng

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


def _rng(generator):
    return get_rng() if generator is None else generator


def _is_positive_int(x) -> bool:
    # bool is an int to Python, never a valid count to torch
    return bool(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and x > 0)


class Sampler(Generic[T_co]):
    """Base class of samplers: iterables over dataset indices.

    Subclasses implement ``__iter__`` and, where the number of indices is
    known, ``__len__`` (which ``len(DataLoader)`` uses).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import DataLoader, Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> list(DataLoader([10, 20, 30], batch_size=2, sampler=Backwards(3)))
    [tensor([30, 20]), tensor([10])]
    """

    def __iter__(self) -> Iterator[T_co]:
        """Iterate over indices; subclasses must implement it.

        Raises
        ------
        NotImplementedError
            Always, in the base class.
        """
        raise NotImplementedError("Subclasses of Sampler should implement __iter__.")


class SequentialSampler(Sampler[int]):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order.

    Parameters
    ----------
    data_source : Sized
        The dataset (only its length is used, read at each pass).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        """Yield the indices in order."""
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        """``len(data_source)``."""
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order: a permutation, or draws with replacement.

    Without replacement each pass yields random permutations of
    ``range(len(data_source))``: ``num_samples // n`` whole ones, then the
    start of one more. With replacement it yields ``num_samples``
    independent uniform draws.

    Parameters
    ----------
    data_source : Sized
        The dataset (only its length is used).
    replacement : bool, default False
        Draw with replacement.
    num_samples : int, optional
        How many indices a pass yields; ``len(data_source)`` by default.
    generator : numpy.random.Generator, optional
        The source of randomness; retrograd's global generator when omitted.

    Raises
    ------
    TypeError
        When ``replacement`` is not a bool.
    ValueError
        When ``num_samples`` is not a positive integer.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import RandomSampler
    >>> s = RandomSampler(range(5), generator=np.random.default_rng(0))
    >>> sorted(s)
    [0, 1, 2, 3, 4]
    >>> len(RandomSampler(range(5), replacement=True, num_samples=12))
    12
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: np.random.Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        # torch's test here is isinstance(num_samples, int), which lets a bool through
        n = self.num_samples
        if not (isinstance(n, (int, np.integer)) and n > 0):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={n}")

    @property
    def num_samples(self) -> int:
        """The number of indices a pass yields (read from the dataset when not given).

        Returns
        -------
        int

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.utils.data import RandomSampler
        >>> data = [1, 2, 3]
        >>> s = RandomSampler(data)
        >>> data.append(4)
        >>> s.num_samples
        4
        """
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        """Yield ``num_samples`` random indices (fresh draws at each pass)."""
        n = len(self.data_source)
        rng = _rng(self.generator)
        if self.replacement:
            # in chunks of 32 draws, as torch: a huge num_samples costs
            # nothing up front (all at once could not even be allocated)
            left = self.num_samples
            while left > 0:
                k = min(left, 32)
                yield from rng.integers(0, n, size=k).tolist()
                left -= k
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        rest = self.num_samples % n
        if rest:
            yield from rng.permutation(n)[:rest].tolist()

    def __len__(self) -> int:
        """``num_samples``."""
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (a new one at each pass).

    Parameters
    ----------
    indices : sequence of int
        The indices to visit.
    generator : numpy.random.Generator, optional
        The source of randomness; retrograd's global generator when omitted.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import SubsetRandomSampler
    >>> s = SubsetRandomSampler([4, 7, 9], generator=np.random.default_rng(0))
    >>> sorted(s), len(s)
    ([4, 7, 9], 3)
    """

    def __init__(self, indices: Sequence[int], generator: np.random.Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        """Yield the indices in a random order."""
        for i in _rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        """``len(indices)``."""
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Indices ``0..len(weights)-1`` drawn with probabilities proportional to ``weights``.

    Parameters
    ----------
    weights : sequence of float
        One non-negative weight per index (need not sum to 1).
    num_samples : int
        How many indices a pass yields.
    replacement : bool, default True
        Draw with replacement; without it an index is drawn at most once.
    generator : numpy.random.Generator, optional
        The source of randomness; retrograd's global generator when omitted.

    Raises
    ------
    ValueError
        When ``num_samples`` is not a positive integer, ``replacement`` not a
        bool, or ``weights`` not one-dimensional.
    RuntimeError
        While iterating: negative, non-finite or all-zero weights, or more
        samples without replacement than indices of nonzero weight.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import WeightedRandomSampler
    >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=np.random.default_rng(0))
    >>> list(s)
    [1, 1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: np.random.Generator | None = None) -> None:
        if not _is_positive_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        """Yield ``num_samples`` weighted draws."""
        w = self.weights
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise RuntimeError("WeightedRandomSampler: weights must be finite and non-negative")
        total = w.sum()
        if total <= 0:
            raise RuntimeError("WeightedRandomSampler: invalid multinomial distribution (sum of weights <= 0)")
        if not self.replacement and self.num_samples > np.count_nonzero(w):
            raise RuntimeError(
                f"WeightedRandomSampler: cannot draw {self.num_samples} samples without replacement "
                f"from {np.count_nonzero(w)} indices of nonzero weight")
        draws = _rng(self.generator).choice(len(w), size=self.num_samples, replace=self.replacement, p=w / total)
        yield from draws.tolist()

    def __len__(self) -> int:
        """``num_samples``."""
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group the indices of another sampler into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler or iterable of int
        Where the indices come from.
    batch_size : int
        The size of each batch.
    drop_last : bool
        Drop the last batch when it is shorter than ``batch_size``.

    Raises
    ------
    ValueError
        When ``batch_size`` is not a positive integer or ``drop_last`` not
        a bool.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6]]
    >>> len(BatchSampler(range(7), batch_size=3, drop_last=True))
    2
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not _is_positive_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        """Yield lists of indices."""
        batch: list = []
        size = self.batch_size
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        """The number of batches a pass yields."""
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
