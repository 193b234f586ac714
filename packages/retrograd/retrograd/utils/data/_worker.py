"""The DataLoader's worker processes and how their batches reach the main process.

A worker (:func:`_worker_loop`) takes ``(task number, indices)`` from its own
index queue, fetches and collates that batch, and puts ``(task number,
result)`` on the queue all workers share with the main process.

Batches travel through shared memory, not through the queue: the worker
pickles the batch with every numeric array and tensor replaced by a
reference (:class:`_BatchPickler`), copies the arrays' data into one
``SharedMemory`` block made for that batch, and sends the small pickle plus
the arrays' layout (offset, shape, dtype, strides) as a
:class:`_SharedBatch`. The main process maps the block, unlinks its name at
once and builds the tensors over the mapping: no copy, and the memory goes
back to the system when the last tensor over it is freed. Where the block
cannot be mapped by name (no ``/dev/shm``, i.e. not Linux) the data is copied
out once instead.

Names of blocks start with a prefix owned by one DataLoader iterator
(``rgdl<pid>_<token>_``). Whatever block still carries that prefix once the
iterator's workers are gone was never received, so shutting down removes
every name with the prefix; a worker whose main process died removes its
own.
"""
from __future__ import annotations

import atexit
import dataclasses
import io
import mmap
import multiprocessing
import multiprocessing.util  # noqa: F401  (its exit handler must be registered before ours)
import os
import pickle
import queue
import random
import secrets
import signal
import sys
import traceback
import weakref
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

from retrograd.core import Tensor, as_tensor, manual_seed

__all__ = ["WorkerInfo", "get_worker_info"]

_SHM_DIR = "/dev/shm"
_ALIGN = 64                  # each array starts on a cache line of the block
_WORKER_POLL_S = 0.2         # how often an idle worker checks that the main process lives
_TRACK_KW = {"track": False} if sys.version_info >= (3, 13) else {}


def _fork_safe_resource_tracker() -> None:
    # Below Python 3.13 a worker registers each new block with the resource
    # tracker, under the tracker's lock. A fork copies that lock as it is: if
    # another thread of the main process (an engine worker, a tensorboard
    # writer, a finalizer that unlinks a block) held it at that instant, the
    # forked worker waits on it forever and the DataLoader hangs. So every
    # fork takes the lock first and both sides let go of it after: a fork
    # then waits for the holder to finish instead of copying it mid-way.
    # (The tracker's own launch forks through _posixsubprocess, which runs no
    # fork handlers, so it never waits on the lock it holds.)
    lock = getattr(getattr(resource_tracker, "_resource_tracker", None), "_lock", None)
    if lock is None or not hasattr(os, "register_at_fork"):
        return
    os.register_at_fork(before=lock.acquire, after_in_parent=lock.release, after_in_child=lock.release)


if not _TRACK_KW:
    _fork_safe_resource_tracker()


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What a DataLoader worker process knows about itself (``torch.utils.data.WorkerInfo``).

    :func:`get_worker_info` returns it inside a worker. It is frozen:
    assigning to a field raises ``dataclasses.FrozenInstanceError``.

    Parameters
    ----------
    id : int
        This worker's number, ``0`` to ``num_workers - 1``.
    num_workers : int
        How many workers the DataLoader runs.
    seed : int
        The seed this worker's random generators were given
        (``base_seed + id``).
    dataset : Dataset
        This process's copy of the dataset.
    rng : None
        Always None (torch keeps per-thread generators there for its thread
        workers, which retrograd does not have).
    worker_method : str
        ``"multiprocessing"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data._worker import WorkerInfo
    >>> info = WorkerInfo(id=1, num_workers=2, seed=43, dataset=None)
    >>> info.id, info.num_workers, info.seed
    (1, 2, 43)
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: None = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Information about the current DataLoader worker process, or None in the main process.

    Inside a worker it returns a ``WorkerInfo`` with the worker's
    ``id``, ``num_workers``, ``seed`` and its copy of the ``dataset``. An
    :class:`IterableDataset` uses it to give each worker its own share of the
    stream (every worker otherwise iterates the whole dataset), and a
    ``worker_init_fn`` to set each worker up differently.

    Returns
    -------
    WorkerInfo or None

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import DataLoader, IterableDataset, get_worker_info
    >>> get_worker_info() is None
    True

    An IterableDataset that each worker reads a share of (with two workers,
    worker 0 yields 0, 2, 4 and worker 1 yields 1, 3, 5); in the main
    process it yields everything:

    >>> class Numbers(IterableDataset):
    ...     def __iter__(self):
    ...         info = get_worker_info()
    ...         if info is None:
    ...             return iter(range(6))
    ...         return iter(range(info.id, 6, info.num_workers))
    >>> [int(b) for b in DataLoader(Numbers(), batch_size=None)]
    [0, 1, 2, 3, 4, 5]

    (With ``num_workers=2`` the batches are the same numbers. Under the
    ``spawn`` and ``forkserver`` start methods the class must be defined in
    an importable module, not interactively.)
    """
    return _worker_info


class _ResumeIteration:
    """Sent to a persistent worker at a new epoch; the worker sends it back when ready."""


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's copy of an IterableDataset is exhausted."""

    worker_id: int


class _KeyErrorMessage(str):
    # KeyError shows repr() of its argument; this keeps a multi-line message readable
    __slots__ = ()

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised again there.

    The traceback travels as text (traceback objects cannot be pickled);
    :meth:`reraise` raises the same exception class with a message that
    names the worker and holds the original traceback, as torch does.
    """

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = self.exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:
            pickle.dumps(self.exc_type)
        except Exception:       # a class defined in a function: the message still names it
            self.exc_type = RuntimeError

    def reraise(self):
        """Raise the wrapped exception in this process."""
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:       # an exception class that takes other arguments
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # the exception's traceback holds this frame: without this the
            # cycle would keep the iterator (and its workers) alive until a
            # garbage collection
            del exception


def _numpy_seed(base_seed: int, worker_id: int) -> np.ndarray:
    # torch seeds NumPy's global generator in each worker with four words
    # hashed from (worker_id, base_seed) by SeedSequence's mixing, so that
    # NumPy and `random` (seeded with base_seed + worker_id) never share a state
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4)


# ---------------------------------------------------------------- transport

class _SharedBatch:
    """What the queue carries for one batch: its pickle and where its arrays lie.

    ``layout[i]`` is ``(offset, shape, dtype, strides, kind)`` of the i-th
    array in the block ``name`` of ``size`` bytes; ``kind`` is ``"array"``,
    ``"tensor"`` or ``"leaf"`` (a tensor that requires grad).
    """

    __slots__ = ("name", "size", "payload", "layout")

    def __init__(self, name: str | None, size: int, payload: bytes, layout: list) -> None:
        self.name, self.size, self.payload, self.layout = name, size, payload, layout

    def __getstate__(self):
        return self.name, self.size, self.payload, self.layout

    def __setstate__(self, state) -> None:
        self.name, self.size, self.payload, self.layout = state


_NON_LEAF_MESSAGE = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
                     "support crossing process boundaries.  If you just want to transfer the data, call detach() "
                     "on the tensor before serializing (e.g., putting it on the queue).")


class _BatchPickler(pickle.Pickler):
    """Pickles a batch, setting its numeric arrays and CPU tensors aside (in ``self.arrays``)."""

    def __init__(self, file) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.arrays: list[tuple[np.ndarray, str]] = []
        self._seen: dict[int, int] = {}
        self._keep: list = []       # the objects behind _seen's ids stay alive while pickling

    def persistent_id(self, obj):
        key = id(obj)
        if key in self._seen:       # the same object twice in a batch arrives as one
            return self._seen[key]
        if type(obj) is Tensor:
            if str(obj.device) != "cpu":     # (a CUDA or virtual-device tensor pickles as usual)
                return None
            if obj.requires_grad and not obj.is_leaf:
                raise RuntimeError(_NON_LEAF_MESSAGE)
            arr, kind = obj.detach().numpy(), ("leaf" if obj.requires_grad else "tensor")
        elif type(obj) is np.ndarray or isinstance(obj, np.memmap):
            arr, kind = obj, "array"
        else:
            return None
        if arr.dtype.hasobject:
            return None
        self._seen[key] = len(self.arrays)
        self._keep.append(obj)
        self.arrays.append((arr, kind))
        return self._seen[key]


def _plan(arrays) -> tuple[list, int]:
    # where each array goes in the block: C order, or F order when that is
    # how it already lies (a transposed batch keeps its strides)
    layout, size = [], 0
    for arr, kind in arrays:
        if arr.flags.f_contiguous and not arr.flags.c_contiguous:
            strides = _f_strides(arr.shape, arr.itemsize)
        else:
            strides = _c_strides(arr.shape, arr.itemsize)
        layout.append((size, arr.shape, arr.dtype, strides, kind))
        size += -(-arr.nbytes // _ALIGN) * _ALIGN
    return layout, size


def _c_strides(shape, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _f_strides(shape, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


class _BlockWriter:
    """A worker's side of the transport: one shared-memory block per batch."""

    def __init__(self, prefix: str, worker_id: int) -> None:
        self.prefix = f"{prefix}{worker_id}_"
        self.count = 0

    def pack(self, batch) -> _SharedBatch:
        buf = io.BytesIO()
        pickler = _BatchPickler(buf)
        pickler.dump(batch)
        layout, size = _plan(pickler.arrays)
        if size == 0:
            return _SharedBatch(None, 0, buf.getvalue(), layout)
        name = f"{self.prefix}{self.count}"
        self.count += 1
        shm = shared_memory.SharedMemory(name=name, create=True, size=size, **_TRACK_KW)
        try:
            if not _TRACK_KW:
                # the main process unlinks the block (or, failing that, the
                # prefix sweep does): the resource tracker must not, at exit
                resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
            for (arr, _), (offset, shape, dtype, strides, _) in zip(pickler.arrays, layout):
                if arr.nbytes:
                    dest = np.ndarray(shape, dtype, buffer=shm.buf, offset=offset, strides=strides)
                    np.copyto(dest, arr, casting="no")
                    del dest        # no view may outlive close()
        except BaseException:
            shm.close()
            shm.unlink()
            raise
        shm.close()
        return _SharedBatch(name, size, buf.getvalue(), layout)


class _BatchUnpickler(pickle.Unpickler):
    def __init__(self, file, block, layout) -> None:
        super().__init__(file)
        self._block = block
        self._layout = layout
        self._made: dict[int, Any] = {}

    def persistent_load(self, pid):
        if pid in self._made:
            return self._made[pid]
        offset, shape, dtype, strides, kind = self._layout[pid]
        if int(np.prod(shape)) == 0:
            arr = np.empty(shape, dtype)
        else:
            arr = np.ndarray(shape, dtype, buffer=self._block, offset=offset, strides=strides)
        obj = arr if kind == "array" else as_tensor(arr)
        if kind == "leaf":
            obj.requires_grad_(True)
        self._made[pid] = obj
        return obj


def _open_block(name: str, size: int):
    """The block's memory for this process, its name already unlinked.

    A mapping that lives as long as the arrays over it where the block can
    be opened as a file (Linux), else a copy.
    """
    path = os.path.join(_SHM_DIR, name)
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        if os.path.isdir(_SHM_DIR):
            raise RuntimeError(f"DataLoader: the shared memory block {name!r} of a batch is gone "
                               f"(was {_SHM_DIR} cleaned while the loader ran?)") from None
        shm = shared_memory.SharedMemory(name=name)
        try:
            return bytearray(memoryview(shm.buf)[:size])  # type: ignore[arg-type]
        finally:
            shm.close()
            shm.unlink()
    try:
        block = mmap.mmap(fd, size)
    finally:
        os.close(fd)
        os.unlink(path)
    return block


def _unpack(message: _SharedBatch):
    """The batch a worker packed."""
    block = _open_block(message.name, message.size) if message.name is not None else None
    return _BatchUnpickler(io.BytesIO(message.payload), block, message.layout).load()


def _new_prefix() -> str:
    return f"rgdl{os.getpid()}_{secrets.token_hex(3)}_"


def _remove_blocks(prefix: str) -> None:
    """Unlink every shared-memory block whose name starts with ``prefix`` (Linux; elsewhere nothing)."""
    try:
        names = os.listdir(_SHM_DIR)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(_SHM_DIR, name))
            except OSError:
                pass


# ------------------------------------------------------------------ workers

class _ParentWatch:
    """Whether the process that started this worker still runs."""

    def __init__(self) -> None:
        self._ppid = os.getppid()
        self._parent = multiprocessing.parent_process()

    def alive(self) -> bool:
        # the parent's pid changes when it dies (the worker is re-parented);
        # under forkserver the parent is the server, which exits with the
        # main process, so the same test holds
        if os.getppid() != self._ppid:
            return False
        return self._parent is None or self._parent.is_alive()


def _worker_loop(fetcher, index_queue, data_queue, done_event, base_seed: int, init_fn, worker_id: int,
                 num_workers: int, prefix: str) -> None:
    """Serve batches until the main process sends None (or dies)."""
    global _worker_info
    watch = _ParentWatch()
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        np.random.seed(_numpy_seed(base_seed, worker_id))
        manual_seed(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=fetcher.dataset)
        where = f"in DataLoader worker process {worker_id}"
        # an error while starting is reported with the first batch asked for
        init_error: ExceptionWrapper | None = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher.reset()
        except Exception:
            init_error = ExceptionWrapper(where=where)
        writer = _BlockWriter(prefix, worker_id)
        ended = False   # this worker's copy of an iterable dataset is exhausted
        while watch.alive():
            try:
                task = index_queue.get(timeout=_WORKER_POLL_S)
            except queue.Empty:
                # The None that ends the loop may never come: when a garbage
                # collection frees the iterator, the index queue's feeder
                # thread can be told to close before the iterator's __del__
                # puts the None. The event still reaches us.
                if done_event.is_set():
                    break
                continue
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                ended = False
                try:
                    fetcher.reset()
                except Exception:
                    init_error = ExceptionWrapper(where=where)
                continue
            if task is None:
                break
            if done_event.is_set() or ended:
                continue        # drain until the None that ends the loop
            idx, index = task
            result: Any
            if init_error is not None:
                result, init_error = init_error, None
            else:
                try:
                    result = writer.pack(fetcher.fetch(index))
                except StopIteration:
                    if not fetcher.iterable:
                        result = ExceptionWrapper(where=where)
                    else:
                        result, ended = _IterableDatasetStopIteration(worker_id), True
                except Exception:
                    result = ExceptionWrapper(where=where)
            data_queue.put((idx, result))
            del result, task, idx, index
    except KeyboardInterrupt:
        pass            # the main process gets the KeyboardInterrupt too, and shuts the workers down
    if not watch.alive():
        _remove_blocks(f"{prefix}{worker_id}_")
    if done_event.is_set() or not watch.alive():
        # nobody reads the queue any more: exit without flushing it
        data_queue.cancel_join_thread()
        data_queue.close()


def _ensure_tracker() -> None:
    # Before the workers start, so that a forked worker shares the main
    # process's resource tracker instead of starting its own (Python < 3.13
    # registers each new block there; the worker unregisters it at once).
    if not _TRACK_KW and os.name == "posix":
        resource_tracker.ensure_running()


def _describe_exit(worker_id: int, process) -> str:
    code = process.exitcode
    text = f"DataLoader worker {worker_id} (pid {process.pid}) exited unexpectedly with exit code {code}"
    if code is not None and code < 0:
        try:
            text += f" (killed by signal {signal.Signals(-code).name})"
        except ValueError:
            text += f" (killed by signal {-code})"
    return text


# Iterators with live workers, shut down at interpreter exit before
# multiprocessing's own exit handler terminates the (daemonic) workers: ours
# lets them finish and removes their shared memory.
_live_iterators: weakref.WeakSet = weakref.WeakSet()


def _shutdown_all() -> None:
    for it in list(_live_iterators):
        try:
            it._shutdown_workers()
        except Exception:
            pass


atexit.register(_shutdown_all)
