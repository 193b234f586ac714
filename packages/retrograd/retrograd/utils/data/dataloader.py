"""DataLoader (``torch.utils.data.DataLoader``) and the default collate.

The loader combines a dataset, a sampler (the order) and a collate function
(how samples become a batch) and iterates over batches: in the calling
process (``num_workers=0``) or in worker processes (``num_workers > 0``),
whose batches come back through shared memory (see ``_worker.py``).
"""
from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.context
import os
import queue
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import numpy as np

from retrograd.core import get_rng
from retrograd.utils.data import _worker
from retrograd.utils.data._collate import default_collate, default_convert
from retrograd.utils.data._worker import get_worker_info
from retrograd.utils.data.dataset import Dataset, IterableDataset, Subset, TensorDataset
from retrograd.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)

# How long the main process waits on the result queue before it checks that
# the workers live (a dead worker is reported within this time), and how
# long shutting down waits for a worker to finish before terminating it.
_POLL_S = 0.1
_JOIN_S = 5.0


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


class _DatasetFetcher:
    """Turns the sampler's indices into batches, in whichever process loads them.

    A worker gets its own copy; ``reset()`` starts a pass (for an iterable
    dataset: a fresh ``iter(dataset)``, made in the process that iterates).
    """

    def __init__(self, loader: DataLoader) -> None:
        self.dataset = loader.dataset
        self.iterable = loader._dataset_kind == "iterable"
        self.auto_collation = loader._auto_collation
        self.collate_fn = loader.collate_fn
        self.drop_last = loader.drop_last
        self.batch_size = loader.batch_size
        self.gather = (self.auto_collation and not self.iterable and self.collate_fn is default_collate
                       and _plain_tensor_source(self.dataset))
        self._dataset_iter: Iterator | None = None
        self._ended = False

    def reset(self) -> None:
        if self.iterable:
            self._dataset_iter = iter(self.dataset)
            self._ended = False

    def fetch(self, index):
        if self.iterable:
            return self._fetch_iterable(index)
        if self.auto_collation:
            if self.gather:
                idx = np.asarray(index)
                if idx.ndim == 1 and idx.size and idx.dtype.kind in "iu":
                    return self.dataset._gather_batch(index)
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
            return self.collate_fn(data)
        return self.collate_fn(self.dataset[index])

    def _fetch_iterable(self, index):
        assert self._dataset_iter is not None
        if self._ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self._dataset_iter))
        data = []
        for _ in index:            # a batch of batch_size "one more"s
            try:
                data.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not data or (self.drop_last and len(data) < self.batch_size):
            raise StopIteration
        return self.collate_fn(data)


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

    With worker processes (``num_workers > 0``), each worker holds a copy
    of the dataset (and of ``collate_fn``), fetches and collates whole
    batches, and hands them back through shared memory:
    the main process maps each batch's block and builds the tensors over it,
    without copying. Batches come back in the sampler's order (unless
    ``in_order=False``); at most ``prefetch_factor`` batches per worker are
    asked for ahead of the one being consumed, so loading overlaps training.

    Each worker seeds Python's ``random``, NumPy's global generator and
    retrograd's with seeds derived from ``base_seed``, one number drawn from
    ``generator`` (or retrograd's global generator) at every ``iter(loader)``:
    ``random`` and retrograd get ``base_seed + worker_id``, NumPy four words
    hashed from both, exactly as torch does. ``get_worker_info()`` tells the
    dataset's code which worker runs it (to split an IterableDataset, whose
    copies otherwise each yield the whole stream).

    An exception in a worker is raised again in the main process, same
    class, with the worker's number and original traceback in its message;
    a worker that dies (a signal, ``os._exit``) raises RuntimeError naming it
    and its exit code. Workers stop when the iterator is exhausted or freed
    (with ``persistent_workers=True``: when the loader is freed), and at
    interpreter exit; the shared memory goes with them.

    With the ``spawn`` and ``forkserver`` start methods the dataset,
    ``collate_fn`` and ``worker_init_fn`` are pickled to the workers, so
    they must be defined at a module's top level (not in ``__main__`` of an
    interactive session), and a script must guard its entry point with
    ``if __name__ == "__main__":``. Each worker runs one NumPy thread pool of
    its own: set ``OMP_NUM_THREADS`` when many workers do heavy array work.

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
        Worker processes that load batches; 0 loads them in the calling
        process.
    collate_fn : callable, optional
        Makes a batch out of a list of samples.
    pin_memory : bool, default False
        Accepted for torch code; has no effect (retrograd has no pinned
        memory: batches are ordinary NumPy arrays), and warns when set.
    drop_last : bool, default False
        Drop the last batch when it is short (with workers and an
        IterableDataset: each worker's last batch).
    timeout : float, default 0
        With workers, how many seconds to wait for a batch before raising
        RuntimeError; 0 waits as long as the workers live.
    worker_init_fn : callable, optional
        Called as ``worker_init_fn(worker_id)`` in each worker after it is
        seeded and before it loads anything.
    multiprocessing_context : str or multiprocessing context, optional
        How workers start: ``"fork"``, ``"spawn"``, ``"forkserver"`` or a
        context from ``multiprocessing.get_context``; the platform's default
        when None.
    generator : numpy.random.Generator, optional
        The source of randomness for ``shuffle`` and for the workers' base
        seed.
    prefetch_factor : int, optional
        Batches asked of each worker ahead of time (default 2 with workers;
        must be None without).
    persistent_workers : bool, default False
        Keep the workers (and their dataset copies) from one epoch to the
        next instead of starting new ones.
    pin_memory_device : str, default ""
        Accepted for torch code; no effect (torch deprecates it too).
    in_order : bool, default True
        With workers, return batches in the sampler's order; False returns
        each as soon as it is ready.

    Raises
    ------
    ValueError
        On conflicting options, as torch: ``sampler`` with ``shuffle``;
        ``batch_sampler`` with ``batch_size``, ``shuffle``, ``sampler`` or
        ``drop_last``; ``batch_size=None`` with ``drop_last``; a sampler,
        batch sampler or shuffle with an IterableDataset; a negative
        ``num_workers``, ``timeout`` or ``prefetch_factor``; a
        ``batch_size`` that is not a positive integer; worker-only options
        without workers; an unknown start method.
    TypeError
        When ``multiprocessing_context`` is neither a start method's name
        nor a multiprocessing context.

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

    Two worker processes give the same batches, in the same order:

    >>> [b.tolist() for b in DataLoader(list(range(5)), batch_size=2, num_workers=2)]
    [[0, 1], [2, 3], [4]]
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
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

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
        self._IterableDataset_len_called: int | None = None
        self._iterator: _MultiProcessingDataLoaderIter | None = None
        self._check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """How the workers start: a multiprocessing context, or None for the platform's default.

        Assigning a start method's name (``"fork"``, ``"spawn"``,
        ``"forkserver"``) stores its context; it can only be set when
        ``num_workers > 0``.
        """
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self.__multiprocessing_context = context

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

    def __iter__(self) -> _BaseDataLoaderIter:
        """A new pass over the data (a new shuffled order when shuffling).

        With ``persistent_workers=True`` every pass reuses the same iterator
        and its workers.

        Returns
        -------
        iterator
            Yields the batches; ``len()`` of it is ``len(loader)``.

        Warns
        -----
        UserWarning
            When ``pin_memory=True``, which has no effect.
        """
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self._check_worker_number_rationality()
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self)
        if self._iterator is None:
            self._iterator = _MultiProcessingDataLoaderIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

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
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def _check_worker_number_rationality(self) -> None:
        # more workers than usable CPUs mostly makes loading slower (torch warns alike)
        if self.num_workers == 0:
            return
        usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if usable is not None and self.num_workers <= usable:
            return
        if usable is None:
            suggestion = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            cpuset = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
            suggestion = (f"Our suggested max number of worker in current system is {usable}{cpuset}, which is "
                          "smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {suggestion} "
                      "Please be aware that excessive worker creation might get DataLoader running slow or even "
                      "freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                      stacklevel=3)


class _BaseDataLoaderIter:
    """What both iterators share: the index stream, the base seed, the warnings."""

    def __init__(self, loader: DataLoader) -> None:
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true, but retrograd has no pinned memory (its CPU "
                          "tensors are NumPy arrays): the batches are ordinary arrays.", stacklevel=3)
        self._dataset = loader.dataset
        self._iterable = loader._dataset_kind == "iterable"
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._sampler_iter = iter(self._index_sampler)
        # drawn by every pass, workers or not (as torch), so that the same
        # seed gives the same shuffled order whatever num_workers is
        rng = get_rng() if loader.generator is None else loader.generator
        self._base_seed = int(rng.integers(0, 2**63 - 1))
        self._len_called = loader._IterableDataset_len_called
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._len_called is not None and self._num_yielded > self._len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._len_called}(when "
                   f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker (each one iterates the whole dataset unless "
                        "it uses get_worker_info() to take its share).")
            warnings.warn(msg, stacklevel=2)
        return data

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """One pass of a DataLoader in the calling process: fetches each batch on demand."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _DatasetFetcher(loader)
        self._fetcher.reset()

    def _next_data(self):
        return self._fetcher.fetch(next(self._sampler_iter))


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """A pass over a DataLoader whose batches worker processes load.

    Tasks are numbered in the sampler's order and given to the workers in
    turn; up to ``prefetch_factor * num_workers`` are outstanding. Results
    that come early wait in ``_task_info`` for their turn (``in_order``).
    ``_task_info[n]`` is ``(worker,)`` while task n is out, ``(worker,
    batch)`` once it came back early.
    """

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._shutdown = True       # until workers exist, there is nothing to shut down
        if not loader.prefetch_factor or loader.prefetch_factor <= 0:
            raise ValueError(f"prefetch_factor must be greater than 0 with workers, got {loader.prefetch_factor}")
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._prefix = _worker._new_prefix()
        _worker._ensure_tracker()
        self._workers: list = []
        self._index_queues: list = []
        self._result_queue = context.Queue()
        self._done_event = context.Event()
        self._shutdown = False
        _worker._live_iterators.add(self)
        fetcher = _DatasetFetcher(loader)
        try:
            for wid in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()    # our puts never block exit
                w = context.Process(target=_worker._worker_loop, name=f"DataLoaderWorker-{wid}", daemon=True,
                                    args=(fetcher, index_queue, self._result_queue, self._done_event,
                                          self._base_seed, loader.worker_init_fn, wid, self._num_workers,
                                          self._prefix))
                try:
                    w.start()
                except Exception as e:
                    if hasattr(e, "add_note"):
                        e.add_note("DataLoader: with the 'spawn' and 'forkserver' start methods the dataset, "
                                   "collate_fn and worker_init_fn are pickled to each worker: define them at "
                                   "the top level of an importable module.")
                    raise
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # a new epoch for persistent workers: each one restarts its pass
            # and answers; what comes before its answer is the last epoch's
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            waiting = self._num_workers
            while waiting:
                tag, _ = self._get_data()
                if isinstance(tag, _worker._ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float):
        try:
            idx, data = self._result_queue.get(timeout=timeout)
        except queue.Empty:
            dead = [wid for wid, w in enumerate(self._workers) if self._workers_status[wid] and not w.is_alive()]
            if dead:
                for wid in dead:
                    self._mark_worker_as_unavailable(wid)
                raise RuntimeError("; ".join(_worker._describe_exit(wid, self._workers[wid]) for wid in dead)
                                   + ". The worker may have been killed (e.g. by the out-of-memory killer) or "
                                   "called os._exit(); the batches it was loading are lost.") from None
            return False, None, None
        if isinstance(data, _worker._SharedBatch):
            data = _worker._unpack(data)     # maps the block and unlinks its name at once
        return True, idx, data

    def _get_data(self):
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            ok, idx, data = self._try_get_data(wait)
            if ok:
                return idx, data
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # skip the tasks of workers whose iterable stream has ended
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:       # it came early: its turn now
                wid, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, wid)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                wid = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, wid)

    def _try_put_index(self) -> None:
        most = self._prefetch_factor * self._num_workers
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):      # the next worker still serving, in turn
            wid = next(self._worker_cycle)
            if self._workers_status[wid] and (
                    self._in_order or self._workers_num_tasks[wid] < most // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._workers_num_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, wid: int):
        self._workers_num_tasks[wid] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, wid: int) -> None:
        # None tells the worker to exit; it is not joined here (it may still
        # be finishing), only at shutdown
        try:
            self._index_queues[wid].put(None)
        except (OSError, ValueError):
            pass
        self._workers_status[wid] = False

    def _shutdown_workers(self) -> None:
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for wid in range(len(self._workers)):
                try:
                    self._index_queues[wid].put(None)
                except (OSError, ValueError):
                    pass
            for w in self._workers:
                w.join(timeout=_JOIN_S)
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_JOIN_S)
                if w.is_alive():
                    w.kill()
                    w.join()
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._result_queue.cancel_join_thread()
            self._result_queue.close()
            # what was sent but never received is still named in /dev/shm
            _worker._remove_blocks(self._prefix)
            for w in self._workers:
                w.close()
            _worker._live_iterators.discard(self)

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:       # at interpreter exit the modules may be half torn down
            pass
