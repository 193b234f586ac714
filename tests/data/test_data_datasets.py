"""Datasets and random_split against torch.utils.data."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.data import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                                  random_split)

torch = pytest.importorskip("torch")
import torch.utils.data as tud  # noqa: E402

pytestmark = pytest.mark.oracle


class Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_dataset_base_class():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError):
        iter(IterableDataset())


def test_tensor_dataset():
    x = rg.arange(12.0).reshape(4, 3)
    y = rg.tensor([0, 1, 2, 3])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    xi, yi = ds[2]
    assert xi.tolist() == [6.0, 7.0, 8.0] and yi.item() == 2
    assert ds.tensors[0] is x
    assert [t.tolist() for t in ds[1:3]] == [[[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], [1, 2]]


def test_tensor_dataset_size_mismatch_as_torch():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tud.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(rg.zeros(3), rg.zeros(4))


def test_tensor_dataset_bad_arguments():
    with pytest.raises(IndexError):
        TensorDataset()
    with pytest.raises(IndexError, match="0-d"):
        TensorDataset(rg.tensor(1.0))
    with pytest.raises(TypeError, match="rg.as_tensor"):
        TensorDataset(np.zeros(3))


def test_concat_dataset_matches_torch():
    parts = [[1, 2, 3], [4], [5, 6]]
    ours, theirs = ConcatDataset(parts), tud.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 6
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-6, 6)] == [theirs[i] for i in range(-6, 6)]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        theirs[-7]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ours[-7]
    with pytest.raises(IndexError):
        ours[6]


def test_concat_dataset_errors_as_torch():
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        tud.ConcatDataset([])
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Count(2)])


def test_add_operators():
    a, b = TensorDataset(rg.zeros(2)), TensorDataset(rg.ones(3))
    both = a + b
    assert isinstance(both, ConcatDataset) and len(both) == 5
    assert both[4][0].item() == 1.0
    chain = Count(2) + Count(3)
    assert isinstance(chain, ChainDataset)
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5


def test_chain_dataset_rejects_map_style():
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([[1, 2]]))


def test_subset():
    ds = TensorDataset(rg.tensor([10, 11, 12, 13, 14]))
    sub = Subset(ds, [4, 1, 1])
    assert len(sub) == 3
    assert [sub[i][0].item() for i in range(3)] == [14, 11, 11]
    assert [s[0].item() for s in sub.__getitems__([0, 2])] == [14, 11]
    # a list index is passed through as a list of the parent's indices, as torch
    assert Subset(list("abcde"), [3, 0])[0] == "d"


def count(n, fracs):
    return [len(s) for s in random_split(range(n), fracs, generator=np.random.default_rng(0))]


def torch_count(n, fracs):
    return [len(s) for s in tud.random_split(range(n), fracs, generator=torch.Generator().manual_seed(0))]


@pytest.mark.parametrize("n,lengths", [
    (10, [3, 7]), (10, [0.5, 0.5]), (11, [0.5, 0.5]), (10, [0.33, 0.33, 0.34]), (7, [0.1, 0.1, 0.8]),
    (100, [0.7, 0.2, 0.1]), (13, [0.25, 0.25, 0.25, 0.25]), (5, [1.0]), (3, [0.2, 0.2, 0.2, 0.2, 0.2]),
])
def test_random_split_sizes_match_torch(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert count(n, lengths) == torch_count(n, lengths)


def test_random_split_is_a_partition():
    parts = random_split(range(20), [0.5, 0.3, 0.2], generator=np.random.default_rng(3))
    everything = sorted(i for p in parts for i in p)
    assert everything == list(range(20))


def test_random_split_is_reproducible():
    a = random_split(range(30), [10, 20], generator=np.random.default_rng(5))
    b = random_split(range(30), [10, 20], generator=np.random.default_rng(5))
    assert [list(s) for s in a] == [list(s) for s in b]
    rg.manual_seed(1)
    c = random_split(range(30), [10, 20])
    rg.manual_seed(1)
    d = random_split(range(30), [10, 20])
    assert [list(s) for s in c] == [list(s) for s in d]
    assert list(c[0]) != sorted(c[0])    # actually shuffled (30 choose 10 sorted orders: never)


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.6], [11]])
def test_random_split_wrong_sums_as_torch(lengths):
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        tud.random_split(range(10), lengths)
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(10), lengths)


def test_random_split_fraction_out_of_range_as_torch():
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        tud.random_split(range(10), [1.5, -0.5])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])


def test_random_split_warns_about_empty_splits_as_torch():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        tud.random_split(range(10), [0.1, 0.0, 0.9])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0. This might result in an empty dataset."):
        parts = random_split(range(10), [0.1, 0.0, 0.9])
    assert [len(p) for p in parts] == [1, 0, 9]
