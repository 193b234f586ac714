"""DistributedSampler (``torch.utils.data.distributed``): each process of a
data-parallel job reads its own share of a map-style dataset.

The shuffled order is torch's exactly: torch draws it with ``torch.randperm``
on a CPU generator seeded with ``seed + epoch``, and that generator is a
plain Mersenne Twister (MT19937) whose 32-bit outputs NumPy's legacy
``RandomState`` reproduces bit for bit (its stream is frozen by NumPy's
compatibility policy). So a job can move between torch and retrograd
without its ranks seeing different samples.
"""
from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Iterator, Sized

import numpy as np

from retrograd.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]

# torch.randperm switches algorithm at this length (uint32 max // 20): below
# it a forward Fisher-Yates on 32-bit draws, from it an "inside-out" shuffle
# on 64-bit draws (a 32-bit draw modulo a length this large would be skewed).
_SMALL_RANDPERM = 0xFFFFFFFF // 20
_CHUNK = 1 << 20            # MT draws made at once on the large path
_SEED_MIN, _SEED_MAX = -(1 << 63), (1 << 64) - 1


def _torch_seed(seed) -> int:
    """``seed`` as torch's ``Generator.manual_seed`` takes it, or torch's error."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}: the sampler's "
                           "seed + epoch must be an integer; pass integer seed and epoch")
    seed = operator.index(seed)
    if not _SEED_MIN <= seed <= _SEED_MAX:
        raise ValueError(f"Overflow when unpacking long long: seed + epoch = {seed} is outside "
                         f"[{_SEED_MIN}, {_SEED_MAX}], the seeds a generator takes")
    return seed


def _mt19937(seed: int) -> np.random.RandomState:
    # torch seeds MT19937 with the low 32 bits of its 64-bit seed (the classic
    # init_genrand), which is what RandomState does with a 32-bit integer.
    return np.random.RandomState(seed & 0xFFFFFFFF)


def _draw32(mt: np.random.RandomState, k: int) -> np.ndarray:
    # the full uint32 range makes randint hand out the generator's raw outputs
    return mt.randint(0, 1 << 32, size=k, dtype=np.uint32)


def _randperm_fisher_yates(n: int, seed: int) -> list[int]:
    mt = _mt19937(seed)
    # step i swaps slot i with slot i + (draw_i % (n - i)); the draws do not
    # depend on the swaps, so every target is computed up front.
    targets = (_draw32(mt, max(n - 1, 0)).astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)
               + np.arange(n - 1, dtype=np.int64)).tolist()
    perm = list(range(n))
    for i, j in enumerate(targets):
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _randperm_inside_out(n: int, seed: int) -> array:
    mt = _mt19937(seed)
    perm = array("q", bytes(8 * n))
    for start in range(0, n, _CHUNK):
        k = min(_CHUNK, n - start)
        words = _draw32(mt, 2 * k).astype(np.uint64)
        draws = (words[0::2] << np.uint64(32)) | words[1::2]   # first draw is the high word
        bounds = np.arange(start + 1, start + k + 1, dtype=np.uint64)
        for i, z in enumerate((draws % bounds).tolist(), start):
            perm[i] = perm[z]
            perm[z] = i
    return perm


def _torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``."""
    if n < _SMALL_RANDPERM:
        return _randperm_fisher_yates(n, seed)
    return _randperm_inside_out(n, seed).tolist()


def _from_process_group(what: str):
    # retrograd.distributed is a separate, optional distribution: imported only
    # when a default has to be read from it.
    from retrograd import _optional
    try:
        dist = _optional.require("distributed", "retrograd-distributed")
    except ImportError as exc:
        raise RuntimeError(
            f"Requires distributed package to be available: DistributedSampler reads {what} from "
            f"retrograd.distributed, and {exc} Install retrograd-distributed, or pass num_replicas "
            "and rank explicitly.") from exc
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist


class DistributedSampler(Sampler[int]):
    """Restrict loading to this process's share of a dataset.

    For data-parallel training (with
    :class:`~retrograd.nn.parallel.DistributedDataParallel`): every process
    builds the same sampler and passes it to its
    :class:`~retrograd.utils.data.DataLoader`, and reads
    ``ceil(len(dataset) / num_replicas)`` indices of its own. The ordering
    (shuffled, or ``0..n-1``) is padded by repeating its start until its
    length divides evenly, or with ``drop_last`` cut to the largest length
    that does; rank ``r`` then takes every ``num_replicas``-th index from
    position ``r``. So the ranks' shares are disjoint apart from the
    padding, and together cover the dataset (all but the dropped tail).

    The shuffle depends only on ``seed + epoch``, so every rank draws the
    same ordering, and it is torch's own (``torch.randperm`` with a
    generator seeded so). Call :meth:`set_epoch` at the start of each epoch,
    before iterating the loader, or every epoch sees the same order.

    Parameters
    ----------
    dataset : Dataset
        The map-style dataset; its length is read at construction and
        assumed constant.
    num_replicas : int, optional
        The number of processes; by default the world size of
        ``retrograd.distributed``'s default process group.
    rank : int, optional
        This process's rank, in ``[0, num_replicas - 1]``; by default its
        rank in the default process group.
    shuffle : bool, default True
        Shuffle the indices (anew for each epoch).
    seed : int, default 0
        Seed of the shuffle; the same on every rank.
    drop_last : bool, default False
        Cut the tail of the ordering so it divides evenly, instead of
        padding it with repeated indices.

    Attributes
    ----------
    num_samples : int
        The number of indices each rank reads.
    total_size : int
        ``num_samples * num_replicas``.
    epoch : int
        The epoch set by :meth:`set_epoch` (0 at first).

    Raises
    ------
    ValueError
        When ``rank`` is outside ``[0, num_replicas - 1]``; when a default
        is needed and the default process group is not initialized.
    RuntimeError
        When a default is needed and ``retrograd-distributed`` is not
        installed.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data import DistributedSampler
    >>> data = list(range(10))
    >>> [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    >>> [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False, drop_last=True))
    ...  for r in range(3)]
    [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    >>> s = DistributedSampler(data, num_replicas=2, rank=0, seed=0)
    >>> s.set_epoch(1)
    >>> len(s), sorted(s) == sorted(set(s))
    (5, True)
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _from_process_group("num_replicas (the world size)").get_world_size()
        if rank is None:
            rank = _from_process_group("rank").get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the largest multiple of num_replicas below n (torch's formula)
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        """Yield this rank's ``num_samples`` indices for the current epoch."""
        n = len(self.dataset)
        if self.shuffle:
            indices = _torch_randperm(n, _torch_seed(self.seed + self.epoch))
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                # fewer samples than replicas: the ordering repeats whole
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            # the dataset's length changed since the sampler was built
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size "
                                 f"({self.total_size}); the dataset's length must not change")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not match "
                                 f"num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        """``num_samples``, the indices this rank reads per epoch."""
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which (with ``seed``) decides the shuffled order.

        Call it at the start of every epoch on every rank, before iterating
        the DataLoader: without it each epoch repeats the same order.

        Parameters
        ----------
        epoch : int
            The epoch number.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.utils.data import DistributedSampler
        >>> s = DistributedSampler(range(8), num_replicas=2, rank=0)
        >>> first = list(s)
        >>> s.set_epoch(1)
        >>> list(s) != first, list(s) == list(s)
        (True, True)
        """
        self.epoch = epoch
