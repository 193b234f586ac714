"""DataLoader (``torch.utils.data.DataLoader``) and the default collate.

The loader combines a dataset, a sampler (the order) and a collate function
(how samples become a batch) and iterates over batches, in the main process.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import numpy as np

from retrograd.utils.data._collate import default_collate, default_convert
from retrograd.utils.data.dataset import Dataset, IterableDataset, Subset, TensorDataset
from retrograd.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)


def get_worker_info() -> None:
    """Information about the current data-loading worker: always None here.

    In torch a dataset's code calls it to learn which worker process runs
    it (to split an IterableDataset between workers); it returns None in the
    main process. retrograd loads data in the main process only, so this is
    always None, and code written for torch that checks it keeps working.

    Returns
    -------
    None

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return None


_NUM_WORKERS_MESSAGE = (
    "DataLoader(num_workers={n}): retrograd loads data in the main process only, so num_workers must be 0 "
    "(the default). Worker processes are not implemented: retrograd's tensors are NumPy arrays, and handing "
    "each batch back from a worker process would mean pickling and copying it (torch moves batches through "
    "shared memory, which retrograd does not have). Loading is rarely the bottleneck here: a batch of an "
    "in-memory dataset such as TensorDataset is one fancy index per tensor, far cheaper than the forward and "
    "backward it feeds. If your __getitem__ is slow (reading or decoding files, augmentation), do that work "
    "once before training, or produce the samples in a thread of your own behind an IterableDataset.")


class _InfiniteConstantSampler(Sampler[None]):
    # The "indices" of an iterable dataset: the dataset decides what comes
    # next, so the sampler only says "one more" (torch's design), and
    # batching counts them.
    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _plain_tensor_source(dataset) -> bool:
    """Whether ``dataset._gather_batch`` gives the batch default_collate would.

    True for a TensorDataset, and Subsets of one, whose lookups are the
    library's own: a subclass that overrides ``__getitem__`` (a transform,
    say) must take the general path, sample by sample."""
    cls = type(dataset)
    if isinstance(dataset, TensorDataset):
        return cls.__getitem__ is TensorDataset.__getitem__ and cls._gather_batch is TensorDataset._gather_batch
    if isinstance(dataset, Subset):
        return (cls.__getitem__ is Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__
                and cls._gather_batch is Subset._gather_batch and _plain_tensor_source(dataset.dataset))
    return False


class DataLoader(Generic[T_co]):
    """Iterate over a dataset in batches (``torch.utils.data.DataLoader``).

    For a map-style dataset the loader draws indices from a sampler
    (sequential, or random with ``shuffle=True``), groups them into batches
    of ``batch_size`` and turns each batch of samples into tensors with
    ``collate_fn`` (:func:`default_collate`: tensors stacked, numbers made
    into tensors, dicts, tuples and lists collated field by field). For an
    :class:`IterableDataset` it takes samples in the dataset's own order.

    Shuffling draws from ``generator`` when given (seed it for a
    reproducible order) or from retrograd's global generator, seeded by
    ``rg.manual_seed``; every epoch (every ``iter(loader)``) draws a new
    order.

    Batches of a :class:`TensorDataset` (or a :class:`Subset` of one, as
    :func:`random_split` makes) with the default collate are gathered by
    one fancy index per tensor: the same tensors as stacking the samples,
    without a Python loop over them.

    Parameters
    ----------
    dataset : Dataset
        Where the samples come from.
    batch_size : int or None, default 1
        Samples per batch. None turns automatic batching off: each sample
        goes through ``collate_fn`` (default :func:`default_convert`) alone.
    shuffle : bool, optional
        Visit a map-style dataset in a new random order each epoch.
    sampler : Sampler or iterable, optional
        The indices to visit, in order (excludes ``shuffle``).
    batch_sampler : Sampler or iterable of lists, optional
        The batches of indices (excludes ``batch_size``, ``shuffle``,
        ``sampler`` and ``drop_last``).
    num_workers : int, default 0
        Must be 0: data loads in the main process (see Raises).
    collate_fn : callable, optional
        Makes a batch out of a list of samples.
    pin_memory : bool, default False
        Accepted for torch code; has no effect (NumPy arrays have no pinned
        memory), and warns when set.
    drop_last : bool, default False
        Drop the last batch when it is short.
    timeout : float, default 0
        Accepted for torch code; only meaningful with workers.
    worker_init_fn : callable, optional
        Accepted for torch code; only meaningful with workers.
    multiprocessing_context : None
        Must be None (only meaningful with workers).
    generator : numpy.random.Generator, optional
        The source of randomness for ``shuffle``.
    prefetch_factor : None
        Must be None (only meaningful with workers).
    persistent_workers : bool, default False
        Must be False (only meaningful with workers).
    pin_memory_device : str, default ""
        Accepted for torch code; no effect.
    in_order : bool, default True
        Accepted for torch code; batches always come in order.

    Raises
    ------
    NotImplementedError
        When ``num_workers > 0``: worker processes are not implemented.
    ValueError
        On conflicting options, as torch: ``sampler`` with ``shuffle``;
        ``batch_sampler`` with ``batch_size``, ``shuffle``, ``sampler`` or
        ``drop_last``; ``batch_size=None`` with ``drop_last``; a sampler,
        batch sampler or shuffle with an IterableDataset; a negative
        ``num_workers`` or ``timeout``; a ``batch_size`` that is not a
        positive integer; worker-only options without workers.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import DataLoader, TensorDataset
    >>> x = rg.arange(10.0).reshape(5, 2)
    >>> y = rg.tensor([0, 1, 0, 1, 1])
    >>> loader = DataLoader(TensorDataset(x, y), batch_size=2)
    >>> len(loader)
    3
    >>> for xb, yb in loader:
    ...     print(tuple(xb.shape), yb)
    (2, 2) tensor([0, 1])
    (2, 2) tensor([0, 1])
    (1, 2) tensor([1])

    A seeded generator gives the same shuffled order every run:

    >>> loader = DataLoader(TensorDataset(y), batch_size=5, shuffle=True,
    ...                     generator=np.random.default_rng(0))
    >>> sorted(next(iter(loader))[0].tolist())
    [0, 0, 1, 1, 1]
    """

    dataset: Dataset
    batch_size: int | None
    drop_last: bool
    sampler: Sampler | Iterable
    batch_sampler: Sampler | Iterable | None
    num_workers: int
    collate_fn: Callable
    generator: np.random.Generator | None
    __initialized = False

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler[list] | Iterable[list] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None, multiprocessing_context=None,
                 generator: np.random.Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if num_workers > 0:
            raise NotImplementedError(_NUM_WORKERS_MESSAGE.format(n=num_workers))
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            raise ValueError("multiprocessing_context can only be used with multi-process loading "
                             f"(num_workers > 0), but got num_workers={num_workers}")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # Dataset-kind errors come before sampler errors (torch's order): a
        # user who passed a sampler to an iterable dataset learns first that
        # the combination cannot work.
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive "
                             "with drop_last")

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True

    def __setattr__(self, attr, val) -> None:
        # What the batches are made of is fixed at construction (torch): a
        # changed batch_size would disagree with the batch sampler built from it.
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what the iterator draws from: batches of indices, or single indices
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        """A new pass over the data (a new shuffled order when shuffling).

        Returns
        -------
        iterator
            Yields the batches; ``len()`` of it is ``len(loader)``.

        Warns
        -----
        UserWarning
            When ``pin_memory=True``, which has no effect.
        """
        return _SingleProcessDataLoaderIter(self)

    def __len__(self) -> int:
        """The number of batches of one pass.

        For an IterableDataset it is computed from ``len(dataset)`` (which the
        dataset must define), ``batch_size`` and ``drop_last``.

        Returns
        -------
        int

        Raises
        ------
        TypeError
            When the dataset (iterable-style) or the sampler has no length.
        """
        if self._dataset_kind == "iterable":
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter:
    """One pass of a DataLoader: fetches and collates each batch on demand."""

    def __init__(self, loader: DataLoader) -> None:
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true, but retrograd has no pinned memory (its CPU "
                          "tensors are NumPy arrays): the batches are ordinary arrays.", stacklevel=3)
        self._loader = loader
        self._dataset = loader.dataset
        self._collate_fn = loader.collate_fn
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._batch_size = loader.batch_size
        self._sampler_iter = iter(loader._index_sampler)
        self._iterable = loader._dataset_kind == "iterable"
        if self._iterable:
            self._dataset_iter = iter(self._dataset)
            self._ended = False
        self._gather = (self._auto_collation and not self._iterable and self._collate_fn is default_collate
                        and _plain_tensor_source(self._dataset))

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self):
        index = next(self._sampler_iter)
        if self._iterable:
            return self._next_iterable(index)
        if self._auto_collation:
            if self._gather:
                idx = np.asarray(index)
                if idx.ndim == 1 and idx.size and idx.dtype.kind in "iu":
                    return self._dataset._gather_batch(index)
            getitems = getattr(self._dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self._dataset[i] for i in index]
            return self._collate_fn(data)
        return self._collate_fn(self._dataset[index])

    def _next_iterable(self, index):
        if self._ended:
            raise StopIteration
        if not self._auto_collation:
            return self._collate_fn(next(self._dataset_iter))
        data = []
        for _ in index:            # a batch of batch_size "one more"s
            try:
                data.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not data or (self._drop_last and len(data) < self._batch_size):
            raise StopIteration
        return self._collate_fn(data)
