"""DataLoader against torch.utils.data.DataLoader: batches, lengths, errors, seeding."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.data import (BatchSampler, DataLoader, IterableDataset, SequentialSampler, Subset,
                                  TensorDataset, default_collate, get_worker_info, random_split)

torch = pytest.importorskip("torch")
import torch.utils.data as tud  # noqa: E402

pytestmark = pytest.mark.oracle


class Count(IterableDataset):
    def __init__(self, n, with_len=True):
        self.n, self.with_len = n, with_len

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_len:
            raise TypeError("no len")
        return self.n


class TCount(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def as_np(batch):
    """A batch (tensor, or list/tuple/dict of them) as nested NumPy arrays and containers."""
    if isinstance(batch, (rg.Tensor, torch.Tensor)):
        return np.asarray(batch.detach().numpy() if isinstance(batch, torch.Tensor) else batch.numpy())
    if isinstance(batch, dict):
        return {k: as_np(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(as_np(b) for b in batch)
    return batch


def assert_same(a, b):
    """Equal nested containers of arrays: same types, keys, dtypes, shapes and values."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(b, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(b, dict):
        assert list(a) == list(b)
        for k in b:
            assert_same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b


def assert_batches_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same(as_np(a), as_np(b))


@pytest.fixture
def xy():
    x = np.arange(7 * 3, dtype=np.float32).reshape(7, 3)
    y = np.array([0, 1, 2, 0, 1, 2, 0])
    return x, y


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 10])
@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_batches_and_len_match_torch(xy, batch_size, drop_last):
    x, y = xy
    ours = DataLoader(TensorDataset(rg.as_tensor(x), rg.as_tensor(y)), batch_size=batch_size, drop_last=drop_last)
    theirs = tud.DataLoader(tud.TensorDataset(torch.as_tensor(x), torch.as_tensor(y)), batch_size=batch_size,
                            drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert len(list(ours)) == len(ours)
    assert_batches_equal(list(ours), list(theirs))


def test_batch_size_none_matches_torch(xy):
    x, y = xy
    ours = list(DataLoader(TensorDataset(rg.as_tensor(x), rg.as_tensor(y)), batch_size=None))
    theirs = list(tud.DataLoader(tud.TensorDataset(torch.as_tensor(x), torch.as_tensor(y)), batch_size=None))
    assert len(ours) == len(theirs) == 7
    assert_batches_equal(ours, theirs)     # each a list (default_convert turns the tuple into a list)


@pytest.mark.parametrize("data", [
    [1.0, 2.0, 3.0, 4.0, 5.0],
    [{"a": i, "b": np.full(2, i, np.float32)} for i in range(5)],
    [(i, float(i)) for i in range(5)],
    [np.arange(3) + i for i in range(5)],
])
def test_plain_sequences_match_torch(data):
    ours = list(DataLoader(data, batch_size=2))
    theirs = list(tud.DataLoader(data, batch_size=2))
    assert_batches_equal(ours, theirs)


def test_gathered_batches_equal_collated_samples(xy):
    # the TensorDataset fast path must give what default_collate of the samples gives
    x, y = xy
    ds = TensorDataset(rg.as_tensor(x), rg.as_tensor(y))
    fast = list(DataLoader(ds, batch_size=3, shuffle=True, generator=np.random.default_rng(4)))
    slow = list(DataLoader(ds, batch_size=3, shuffle=True, generator=np.random.default_rng(4),
                           collate_fn=lambda b: default_collate(b)))
    assert_batches_equal(fast, slow)
    for xb, yb in fast:
        assert isinstance(xb, rg.Tensor) and xb.dtype == np.float32 and yb.dtype == np.int64


def test_gathered_batches_are_copies(xy):
    x, y = xy
    tx = rg.as_tensor(x.copy())
    (xb,) = next(iter(DataLoader(TensorDataset(tx), batch_size=2)))
    xb.zero_()
    assert tx[0].tolist() == [0.0, 1.0, 2.0] and tx[1].tolist() == [3.0, 4.0, 5.0]


def test_gathered_batches_keep_the_graph():
    w = rg.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    (wb,) = next(iter(DataLoader(TensorDataset(w * 1), batch_size=3, sampler=[2, 2, 0])))
    wb.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0], [0.0], [2.0]])


def test_subset_of_tensor_dataset(xy):
    x, y = xy
    ds = TensorDataset(rg.as_tensor(x), rg.as_tensor(y))
    sub = Subset(ds, [6, 0, 3, 3])
    (xb, yb), = list(DataLoader(sub, batch_size=4))
    np.testing.assert_array_equal(xb.numpy(), x[[6, 0, 3, 3]])
    np.testing.assert_array_equal(yb.numpy(), y[[6, 0, 3, 3]])
    train, test = random_split(ds, [5, 2], generator=np.random.default_rng(0))
    got = np.concatenate([b[1].numpy() for b in DataLoader(train, batch_size=2)])
    np.testing.assert_array_equal(got, y[train.indices])


def test_subclass_overriding_getitem_is_honoured(xy):
    x, y = xy

    class Doubled(TensorDataset):
        def __getitem__(self, i):
            a, b = super().__getitem__(i)
            return a * 2, b

    xb, _ = next(iter(DataLoader(Doubled(rg.as_tensor(x), rg.as_tensor(y)), batch_size=2)))
    np.testing.assert_array_equal(xb.numpy(), x[:2] * 2)
    xb, _ = next(iter(DataLoader(Subset(Doubled(rg.as_tensor(x), rg.as_tensor(y)), [1, 2]), batch_size=2)))
    np.testing.assert_array_equal(xb.numpy(), x[1:3] * 2)


def test_custom_collate_fn_sees_the_samples(xy):
    x, y = xy
    seen = []
    loader = DataLoader(TensorDataset(rg.as_tensor(x), rg.as_tensor(y)), batch_size=4,
                        collate_fn=lambda samples: seen.append(samples) or len(samples))
    assert list(loader) == [4, 3]
    assert len(seen[0]) == 4 and isinstance(seen[0][0], tuple)


def test_shuffle_with_seeded_generator_is_reproducible(xy):
    x, y = xy
    ds = TensorDataset(rg.as_tensor(y))

    def epochs(seed):
        loader = DataLoader(ds, batch_size=3, shuffle=True, generator=np.random.default_rng(seed))
        return [[b[0].tolist() for b in loader] for _ in range(3)]

    a, b = epochs(0), epochs(0)
    assert a == b
    assert a[0] != a[1] or a[1] != a[2]            # each epoch a new order
    for epoch in a:
        assert sorted(sum(epoch, [])) == sorted(y.tolist())


def test_shuffle_without_generator_follows_manual_seed():
    ds = TensorDataset(rg.arange(50))
    loader = DataLoader(ds, batch_size=50, shuffle=True)
    rg.manual_seed(3)
    a = next(iter(loader))[0].tolist()
    rg.manual_seed(3)
    b = next(iter(loader))[0].tolist()
    assert a == b and a != list(range(50)) and sorted(a) == list(range(50))


def test_batch_sampler_and_sampler_arguments():
    data = list(range(10))
    ours = [b.tolist() for b in DataLoader(data, batch_sampler=[[3, 1], [0]])]
    assert ours == [[3, 1], [0]]
    ours = [b.tolist() for b in DataLoader(data, batch_size=2, sampler=[9, 8, 7])]
    assert ours == [[9, 8], [7]]
    loader = DataLoader(data, batch_sampler=BatchSampler(SequentialSampler(data), 4, True))
    assert len(loader) == 2 and loader.batch_size is None and loader.drop_last is False


@pytest.mark.parametrize("kwargs", [
    dict(shuffle=True, sampler=[0, 1]),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
    dict(multiprocessing_context="spawn"),
    dict(batch_size=0),
    dict(batch_size=-3),
    dict(batch_size=1.5),
    dict(drop_last=1),
])
def test_argument_conflicts_raise_value_error_as_torch(kwargs):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(list(range(10)), **kwargs)
    with pytest.raises(ValueError) as ours:
        DataLoader(list(range(10)), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[1]), dict(batch_sampler=[[1]])])
def test_iterable_dataset_refuses_samplers_as_torch(kwargs):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(TCount(5), **kwargs)
    with pytest.raises(ValueError) as ours:
        DataLoader(Count(5), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (5, False), (5, True), (6, True),
                                                  (None, False)])
def test_iterable_dataset_batches_and_len_match_torch(batch_size, drop_last):
    ours = DataLoader(Count(5), batch_size=batch_size, drop_last=drop_last, shuffle=False)
    theirs = tud.DataLoader(TCount(5), batch_size=batch_size, drop_last=drop_last, shuffle=False)
    assert len(ours) == len(theirs)
    o, t = list(ours), list(theirs)
    assert len(o) == len(t)
    for a, b in zip(o, t):
        if batch_size is None:
            assert a == b
        else:
            assert a.tolist() == b.tolist() and a.dtype == b.numpy().dtype


def test_iterable_dataset_without_len():
    loader = DataLoader(Count(3, with_len=False), batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2]]
    with pytest.raises(TypeError):
        len(loader)


def test_num_workers_loads_in_worker_processes():
    assert [b.tolist() for b in DataLoader(list(range(4)), batch_size=2, num_workers=2)] == [[0, 1], [2, 3]]
    assert get_worker_info() is None


def test_pin_memory_is_accepted_and_warns():
    loader = DataLoader([1, 2, 3], batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="pin_memory"):
        assert [b.tolist() for b in loader] == [[1, 2], [3]]


def test_attributes_are_frozen_after_init_as_torch():
    ours, theirs = DataLoader([1, 2]), tud.DataLoader([1, 2])
    for attr in ("batch_size", "sampler", "drop_last", "dataset"):
        with pytest.raises(ValueError) as t_info:
            setattr(theirs, attr, 3)
        with pytest.raises(ValueError) as o_info:
            setattr(ours, attr, 3)
        assert str(o_info.value) == str(t_info.value)
    ours.collate_fn = list        # others may be changed, as in torch
    assert list(ours) == [[1], [2]]


def test_iterator_has_len_and_loader_restarts():
    loader = DataLoader(list(range(5)), batch_size=2)
    it = iter(loader)
    assert len(it) == 3
    next(it)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]   # a fresh pass
    assert [b.tolist() for b in it] == [[2, 3], [4]]


def test_default_attributes_match_torch():
    ours, theirs = DataLoader([1, 2, 3]), tud.DataLoader([1, 2, 3])
    for attr in ("batch_size", "drop_last", "num_workers", "pin_memory", "timeout", "prefetch_factor",
                 "persistent_workers", "in_order"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert type(ours.sampler).__name__ == type(theirs.sampler).__name__ == "SequentialSampler"
    assert type(DataLoader([1], shuffle=True).sampler).__name__ == "RandomSampler"
