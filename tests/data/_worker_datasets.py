"""Datasets and helpers for the DataLoader worker tests.

They live in an importable module, not in the test files, so that the
``spawn`` and ``forkserver`` start methods can pickle them to the workers.
"""
from __future__ import annotations

import collections
import os
import random
import signal
import time

import numpy as np

import retrograd as rg
from retrograd.utils.data import Dataset, IterableDataset, get_worker_info

Pair = collections.namedtuple("Pair", ["left", "right"])


class Table(Dataset):
    """Sample i is (a float32 row [i, i + 0.5], the label i % 3)."""

    def __init__(self, n: int = 10) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return np.array([i, i + 0.5], dtype=np.float32), i % 3


class Nested(Dataset):
    """Samples that mix containers, strings, arrays and tensors."""

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i):
        return {"x": rg.full((2, 3), float(i)), "pair": Pair(np.arange(i, i + 4, dtype=np.int16), f"s{i}"),
                "list": [i, float(i) / 2, rg.tensor([i, -i])], "empty": np.zeros((0, 2))}


class Random(Dataset):
    """What the three random generators a worker seeds give, per sample."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "py": random.random(), "np": float(np.random.rand()), "rg": float(rg.rand(1)),
                "worker": -1 if info is None else info.id, "seed": -1 if info is None else info.seed}


class WhoAmI(Dataset):
    """Sample i: (i, the worker's id, its pid, what worker_init_fn left in the dataset)."""

    def __init__(self, n: int = 8) -> None:
        self.n = n
        self.tag = "unset"

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        info = get_worker_info()
        return i, info.id, os.getpid(), self.tag


def tag_worker(worker_id: int) -> None:
    """A worker_init_fn: leaves a mark in the worker's copy of the dataset."""
    info = get_worker_info()
    info.dataset.tag = f"init{worker_id}of{info.num_workers}"


def failing_init(worker_id: int) -> None:
    """A worker_init_fn that fails in worker 1 only."""
    if worker_id == 1:
        raise ZeroDivisionError("worker_init_fn broke")


class Shards(IterableDataset):
    """range(n), each worker taking every num_workers-th number from its id."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Whole(IterableDataset):
    """range(n) in every worker: not split, so each worker yields all of it."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class Slow(Dataset):
    """Sample i is i, after `delay` seconds."""

    def __init__(self, n: int, delay: float) -> None:
        self.n, self.delay = n, delay

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        time.sleep(self.delay)
        return i


class Counted(Dataset):
    """Counts the samples fetched, across processes, in a shared counter."""

    def __init__(self, n: int, counter) -> None:
        self.n, self.counter = n, counter

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        with self.counter.get_lock():
            self.counter.value += 1
        return i


class Faulty(Dataset):
    """Raises `error` at sample `bad`."""

    def __init__(self, n: int, bad: int, error: BaseException) -> None:
        self.n, self.bad, self.error = n, bad, error

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise self.error
        return i


class Dies(Dataset):
    """The worker loading sample `bad` dies: SIGKILL, or os._exit(code)."""

    def __init__(self, n: int, bad: int, how: str) -> None:
        self.n, self.bad, self.how = n, bad, how

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        return i


class Big(Dataset):
    """Samples of 100 000 float64 each (a batch of 8 is 6.4 MB)."""

    def __len__(self) -> int:
        return 16

    def __getitem__(self, i):
        return np.full(100_000, float(i))


def blocks_of_this_process() -> list[str]:
    """Names of the DataLoader shared-memory blocks this process's iterators made."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return []
    return [n for n in names if n.startswith(f"rgdl{os.getpid()}_")]
