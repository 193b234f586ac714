"""DataLoader with worker processes: the batches, their order, seeding, worker
info, persistence, prefetching, start methods and the shared-memory transport.

Every loader uses two workers and a tiny dataset (the suite runs on two cores).
Errors, dead workers, timeouts and shutdown: test_dataloader_workers_errors.py.
"""
from __future__ import annotations

import gc
import mmap
import multiprocessing
import os
import pickle
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import _worker_datasets as wd
import retrograd as rg
from retrograd.utils.data import DataLoader, TensorDataset, get_worker_info
from retrograd.utils.data import _worker

torch = pytest.importorskip("torch")
tud = pytest.importorskip("torch.utils.data")

pytestmark = pytest.mark.oracle


class TorchShards(tud.IterableDataset):
    """wd.Shards for torch's loader."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = tud.get_worker_info()
        return iter(range(info.id, self.n, info.num_workers))


def as_lists(batches):
    """Batches with every tensor as a nested list (comparable with ==)."""
    def plain(x):
        if isinstance(x, (rg.Tensor, torch.Tensor)):
            return x.tolist()
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(plain(v) for v in x) if not hasattr(x, "_fields") else type(x)(*map(plain, x))
        return x
    return [plain(b) for b in batches]


@pytest.fixture(autouse=True)
def _collect_iterators():
    """Iterators caught in reference cycles (a failed test's traceback) stop
    their workers when collected: collect them before the next test."""
    yield
    gc.collect()


# ------------------------------------------------------------------ batches

@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                                    dict(batch_size=4, shuffle=True, generator=np.random.default_rng(5)),
                                    dict(sampler=[7, 1, 4, 4], batch_size=3),
                                    dict(batch_sampler=[[2, 3], [9], [0, 1, 5]]),
                                    dict(batch_size=2, collate_fn=lambda samples: [s[1] for s in samples])])
def test_map_dataset_gives_the_batches_of_the_single_process_loader(kwargs):
    ds = wd.Table(10)
    kwargs = dict(kwargs)
    gen = kwargs.pop("generator", None)
    serial = DataLoader(ds, num_workers=0, generator=gen, **kwargs)
    parallel = DataLoader(ds, num_workers=2, generator=None if gen is None else np.random.default_rng(5),
                          **kwargs)
    assert len(parallel) == len(serial)
    assert as_lists(parallel) == as_lists(serial)
    assert as_lists(parallel) == as_lists(serial)         # a second epoch: new workers, same batches


def test_tensor_dataset_and_dtypes_survive_the_trip():
    x = rg.arange(24.0, dtype=rg.float32).reshape(6, 2, 2)
    y = rg.tensor([1, 0, 1, 1, 0, 0])
    batches = list(DataLoader(TensorDataset(x, y), batch_size=4, num_workers=2))
    assert [tuple(b[0].shape) for b in batches] == [(4, 2, 2), (2, 2, 2)]
    assert batches[0][0].dtype == rg.float32 and batches[0][1].dtype == rg.int64
    assert rg.cat([b[0] for b in batches]).tolist() == x.tolist() and rg.cat([b[1] for b in batches]).tolist() == y.tolist()


def test_nested_batches_keep_their_structure():
    serial = list(DataLoader(wd.Nested(), batch_size=4))
    parallel = list(DataLoader(wd.Nested(), batch_size=4, num_workers=2))
    assert as_lists(parallel) == as_lists(serial)
    first = parallel[0]
    assert isinstance(first["pair"], wd.Pair) and first["pair"].right == ("s0", "s1", "s2", "s3")
    assert first["pair"].left.dtype == rg.int16 and isinstance(first["list"][2], rg.Tensor)
    assert tuple(first["empty"].shape) == (4, 0, 2)


def test_map_batches_and_len_match_torch():
    ours = DataLoader(wd.Table(7), batch_size=3, num_workers=2)
    theirs = tud.DataLoader(wd.Table(7), batch_size=3, num_workers=2)
    assert len(ours) == len(theirs) == 3
    assert as_lists(ours) == as_lists(theirs)


@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (None, False)])
def test_iterable_dataset_split_by_worker_info_matches_torch(batch_size, drop_last):
    ours = list(DataLoader(wd.Shards(7), batch_size=batch_size, drop_last=drop_last, num_workers=2))
    theirs = list(tud.DataLoader(TorchShards(7), batch_size=batch_size, drop_last=drop_last, num_workers=2))
    # worker 0 yields 0 2 4 6, worker 1 yields 1 3 5; batches alternate
    # between the workers until a worker's stream ends
    assert as_lists(ours) == as_lists(theirs)
    every = sorted(sum((b if isinstance(b, list) else [b] for b in as_lists(ours)), []))
    assert every == ([0, 1, 2, 3, 4, 5, 6] if not drop_last else [0, 1, 2, 3, 4, 6])


def test_iterable_dataset_not_split_is_yielded_by_every_worker():
    batches = as_lists(DataLoader(wd.Whole(3), batch_size=2, num_workers=2))
    assert batches == [[0, 1], [0, 1], [2], [2]]       # the two copies interleave
    assert sorted(sum(batches, [])) == [0, 0, 1, 1, 2, 2]


def test_iterable_dataset_len_warns_when_workers_yield_more_than_len():
    loader = DataLoader(wd.Shards(4), batch_size=None, num_workers=2)
    assert len(loader) == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sorted(int(b) for b in loader) == [0, 1, 2, 3]

    class Duplicated(wd.Whole):
        def __len__(self):
            return 3
    loader = DataLoader(Duplicated(3), batch_size=None, num_workers=2)
    len(loader)
    with pytest.warns(UserWarning, match="was reported to be 3"):
        assert len(list(loader)) == 6


def test_in_order_false_returns_every_batch():
    ds = wd.Slow(6, 0.0)
    loader = DataLoader(ds, batch_size=1, num_workers=2, in_order=False)
    assert sorted(int(b) for b in loader) == list(range(6))


# ------------------------------------------------------------------ seeding

def _random_draws(seed, **kwargs):
    loader = DataLoader(wd.Random(), batch_size=None, num_workers=2, generator=np.random.default_rng(seed),
                        **kwargs)
    return [dict(s) for s in loader]


def test_same_generator_seed_gives_the_same_random_draws_in_workers():
    a, b = _random_draws(3), _random_draws(3)
    assert a == b
    assert a != _random_draws(4)


def test_workers_draw_different_numbers_and_follow_torchs_seeding():
    draws = _random_draws(0)
    by_worker = {w: [d for d in draws if d["worker"] == w] for w in (0, 1)}
    assert [d["i"] for d in by_worker[0]] == [0, 2, 4, 6] and [d["i"] for d in by_worker[1]] == [1, 3, 5, 7]
    seeds = {w: by_worker[w][0]["seed"] for w in (0, 1)}
    assert seeds[1] == seeds[0] + 1                     # base_seed + worker_id
    for key in ("py", "np", "rg"):
        assert by_worker[0][0][key] != by_worker[1][0][key]
    # each generator starts from the seed torch would give it
    import random
    base = seeds[0]
    assert by_worker[1][0]["py"] == random.Random(base + 1).random()
    np_state = np.random.RandomState(torch.utils.data._utils.worker._generate_state(base, 1))
    assert by_worker[1][0]["np"] == np_state.rand()
    rg.manual_seed(base + 1)
    assert by_worker[1][0]["rg"] == float(rg.rand(1))


def test_numpy_worker_seed_is_torchs():
    generate = torch.utils.data._utils.worker._generate_state
    for base, wid in [(0, 0), (12345, 1), (2**63 - 5, 3), (2**40 + 7, 0)]:
        assert list(_worker._numpy_seed(base, wid)) == generate(base, wid)


def test_base_seed_comes_from_the_global_generator_and_shuffling_agrees_with_zero_workers():
    ds = wd.Table(8)
    rg.manual_seed(11)
    parallel = as_lists(DataLoader(ds, batch_size=3, shuffle=True, num_workers=2))
    rg.manual_seed(11)
    serial = as_lists(DataLoader(ds, batch_size=3, shuffle=True))
    assert parallel == serial


# ------------------------------------------------------ worker info and init

def test_worker_info_and_worker_init_fn():
    assert get_worker_info() is None
    loader = DataLoader(wd.WhoAmI(6), batch_size=None, num_workers=2, worker_init_fn=wd.tag_worker)
    samples = [tuple(s) for s in loader]
    assert [s[0] for s in samples] == list(range(6))
    assert [s[1] for s in samples] == [0, 1] * 3
    assert {s[3] for s in samples if s[1] == 0} == {"init0of2"} and {s[3] for s in samples if s[1] == 1} == {
        "init1of2"}
    assert len({s[2] for s in samples}) == 2 and os.getpid() not in {s[2] for s in samples}


def test_worker_info_is_frozen_like_torchs():
    info = _worker.WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    with pytest.raises(AttributeError):
        info.id = 3
    assert info.worker_method == "multiprocessing" and info.rng is None


# ------------------------------------------------- persistence and prefetch

def test_persistent_workers_live_across_epochs():
    loader = DataLoader(wd.WhoAmI(4), batch_size=2, num_workers=2, persistent_workers=True)
    first = iter(loader)
    epoch1 = as_lists(first)
    second = iter(loader)
    epoch2 = as_lists(second)
    assert second is first
    assert [b[0] for b in epoch1] == [b[0] for b in epoch2] == [[0, 1], [2, 3]]
    assert {p for b in epoch1 for p in b[2]} == {p for b in epoch2 for p in b[2]}     # the same processes
    # an epoch left half-way: the next one starts afresh
    it = iter(loader)
    next(it)
    assert [b[0] for b in as_lists(iter(loader))] == [[0, 1], [2, 3]]
    pids = {p for b in epoch1 for p in b[2]}
    del loader, first, second, it                  # the loader holds the workers until it goes
    for pid in pids:
        with pytest.raises(ProcessLookupError):    # stopped and reaped: no zombie left
            os.kill(pid, 0)
    assert not wd.blocks_of_this_process()


def test_persistent_workers_with_iterable_dataset():
    loader = DataLoader(wd.Shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert as_lists(loader) == as_lists(loader) == [[0, 2], [1, 3], [4]]


def _settles_at(counter, value, within=10.0):
    """Wait until the counter reaches `value` (a loaded machine starts workers
    slowly), then a little longer: it must stay there."""
    end = time.monotonic() + within
    while counter.value < value and time.monotonic() < end:
        time.sleep(0.02)
    time.sleep(0.3)
    return counter.value == value


@pytest.mark.parametrize("prefetch_factor", [1, 3])
def test_prefetch_factor_bounds_the_batches_loaded_ahead(prefetch_factor):
    counter = multiprocessing.get_context("fork").Value("i", 0)
    loader = DataLoader(wd.Counted(20, counter), batch_size=1, num_workers=2, prefetch_factor=prefetch_factor,
                        multiprocessing_context="fork")
    it = iter(loader)
    assert _settles_at(counter, 2 * prefetch_factor)       # what was asked for, and no more
    assert int(next(it)) == 0
    assert _settles_at(counter, 2 * prefetch_factor + 1)   # one more asked for each one taken
    assert [int(b) for b in it] == list(range(1, 20))


# ------------------------------------------------------------ start methods

@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_each_start_method(method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} here")
    loader = DataLoader(wd.WhoAmI(4), batch_size=2, num_workers=2, multiprocessing_context=method,
                        worker_init_fn=wd.tag_worker)
    assert loader.multiprocessing_context.get_start_method() == method
    batches = as_lists(loader)
    assert [b[0] for b in batches] == [[0, 1], [2, 3]] and [b[1] for b in batches] == [[0, 0], [1, 1]]
    assert batches[1][3] == ("init1of2", "init1of2")
    assert not wd.blocks_of_this_process()


@pytest.mark.skipif(sys.version_info >= (3, 13) or os.name != "posix",
                    reason="workers register blocks with the resource tracker below Python 3.13 only")
def test_a_fork_waits_for_another_thread_holding_the_resource_trackers_lock(monkeypatch):
    # A thread of the main process takes the tracker's lock just as the
    # workers are forked (after the loader made sure the tracker runs): they
    # must not inherit it held (they would hang on their first block); the
    # fork waits for the thread to let go instead.
    from multiprocessing import resource_tracker
    lock = resource_tracker._resource_tracker._lock
    held = threading.Event()
    threads = []

    def hold():
        with lock:
            held.set()
            time.sleep(0.5)

    ensure = _worker._ensure_tracker

    def ensure_then_hold():
        ensure()
        threads.append(threading.Thread(target=hold))
        threads[0].start()
        held.wait()
    monkeypatch.setattr(_worker, "_ensure_tracker", ensure_then_hold)
    loader = DataLoader(wd.Table(4), batch_size=2, num_workers=2, multiprocessing_context="fork", timeout=20)
    assert as_lists(loader) == as_lists(DataLoader(wd.Table(4), batch_size=2))
    assert threads and held.is_set()
    threads[0].join()


def test_a_context_object_is_accepted():
    context = multiprocessing.get_context("fork")
    loader = DataLoader(wd.Table(3), batch_size=2, num_workers=2, multiprocessing_context=context)
    assert loader.multiprocessing_context is context
    assert as_lists(loader) == as_lists(DataLoader(wd.Table(3), batch_size=2))


# ------------------------------------------------------------ shared memory

def test_a_packed_batch_is_a_small_message_and_its_block_goes_with_unpacking():
    batch = DataLoader(wd.Big(), batch_size=8).collate_fn([wd.Big()[i] for i in range(8)])
    writer = _worker._BlockWriter(_worker._new_prefix(), 0)
    message = writer.pack({"x": batch, "label": "big"})
    assert message.size >= batch.numel() * 8
    assert len(pickle.dumps(message)) < 1000        # the 6.4 MB travel in the block, not the queue
    assert os.path.exists(f"/dev/shm/{message.name}")
    out = _worker._unpack(pickle.loads(pickle.dumps(message)))
    assert not os.path.exists(f"/dev/shm/{message.name}")     # unlinked as soon as it is mapped
    assert out["label"] == "big" and out["x"].tolist() == batch.tolist()


def test_strides_and_grad_flags_are_kept():
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    leaf = rg.ones(3, requires_grad=True)
    message = _worker._BlockWriter(_worker._new_prefix(), 1).pack([f, leaf, leaf, f[:, ::2]])
    g, t1, t2, strided = _worker._unpack(message)
    assert g.flags.f_contiguous and g.strides == f.strides and np.array_equal(g, f)
    assert t1 is t2 and t1.requires_grad and t1.is_leaf
    assert np.array_equal(strided, f[:, ::2]) and strided.flags.c_contiguous


def test_batches_are_views_of_shared_memory_and_nothing_is_left_behind():
    loader = DataLoader(wd.Big(), batch_size=8, num_workers=2)
    batches = list(loader)
    assert len(batches) == 2 and float(batches[1][0, 0]) == 8.0
    base = batches[0].numpy()
    while isinstance(base, np.ndarray):
        base = base.base
    owner = base.obj if isinstance(base, memoryview) else base
    assert isinstance(owner, mmap.mmap)             # the tensor lies in the worker's block, uncopied
    assert not wd.blocks_of_this_process()
    it = iter(loader)                               # left half-way, then dropped
    next(it)
    del it
    assert not wd.blocks_of_this_process()


# ---------------------------------------------------------------- overlap

def test_workers_load_while_the_consumer_trains():
    delay, n = 0.2, 8
    loader = DataLoader(wd.Slow(n, delay), batch_size=1, num_workers=2)
    start = time.monotonic()
    for _ in loader:
        time.sleep(delay / 4)                           # "training" on the batch
    wall = time.monotonic() - start
    serial = n * delay + n * delay / 4                  # 2.0 s: load then train, one after the other
    # two workers load two samples at once, while the consumer trains: about
    # 0.9 s. A loaded machine slows process start, not sleeping.
    assert wall < 0.75 * serial, wall


# -------------------------------------------------------- argument checks

@pytest.mark.parametrize("kwargs,error", [
    (dict(num_workers=2, multiprocessing_context="nonsense"), ValueError),
    (dict(num_workers=2, multiprocessing_context=42), TypeError),
    (dict(num_workers=0, multiprocessing_context="spawn"), ValueError),
    (dict(num_workers=2, prefetch_factor=-1), ValueError),
    (dict(num_workers=0, prefetch_factor=2), ValueError),
    (dict(num_workers=0, persistent_workers=True), ValueError),
    (dict(num_workers=2, timeout=-1), ValueError),
])
def test_worker_options_are_checked_as_torch(kwargs, error):
    with pytest.raises(error) as theirs:
        tud.DataLoader(list(range(4)), **kwargs)
    with pytest.raises(error) as ours:
        DataLoader(list(range(4)), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_default_worker_attributes_match_torch():
    ours, theirs = DataLoader([1, 2], num_workers=2), tud.DataLoader([1, 2], num_workers=2)
    for attr in ("prefetch_factor", "persistent_workers", "timeout", "in_order", "multiprocessing_context",
                 "worker_init_fn", "pin_memory_device"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    ours.multiprocessing_context = "spawn"            # a property, checked and converted as torch's
    assert ours.multiprocessing_context.get_start_method() == "spawn"


def test_pin_memory_and_pin_memory_device_warn_and_change_nothing():
    loader = DataLoader(list(range(3)), batch_size=2, num_workers=2, pin_memory=True, pin_memory_device="cuda")
    with pytest.warns(UserWarning) as record:
        batches = as_lists(loader)
    assert batches == [[0, 1], [2]]
    text = " ".join(str(w.message) for w in record)
    assert "pin_memory_device is deprecated" in text and "'pin_memory' argument is set as true" in text


def test_too_many_workers_warn_as_torch():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with pytest.warns(UserWarning, match=f"This DataLoader will create {cores + 1} worker processes"):
        DataLoader([1], num_workers=cores + 1)
