"""Samplers: orders, lengths, seeding, and torch's argument errors."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.data import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                                  WeightedRandomSampler)

torch = pytest.importorskip("torch")
import torch.utils.data as tud  # noqa: E402

pytestmark = pytest.mark.oracle


def test_sampler_base():
    with pytest.raises(NotImplementedError):
        iter(Sampler())


def test_sequential_sampler():
    s = SequentialSampler(range(5))
    assert list(s) == list(tud.SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert len(s) == 5


def test_random_sampler_is_a_permutation_each_pass():
    s = RandomSampler(range(50), generator=np.random.default_rng(0))
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second           # a new order every pass
    assert len(s) == 50


def test_random_sampler_seeded_generators_reproduce():
    a = RandomSampler(range(20), generator=np.random.default_rng(7))
    b = RandomSampler(range(20), generator=np.random.default_rng(7))
    assert [list(a) for _ in range(3)] == [list(b) for _ in range(3)]


def test_random_sampler_uses_the_global_generator():
    s = RandomSampler(range(20))
    rg.manual_seed(11)
    a = list(s)
    rg.manual_seed(11)
    assert list(s) == a
    expected = np.random.default_rng(11).permutation(20).tolist()
    assert a == expected


@pytest.mark.parametrize("n,num_samples", [(5, 12), (5, 3), (4, 8)])
def test_random_sampler_num_samples_without_replacement(n, num_samples):
    s = RandomSampler(range(n), num_samples=num_samples, generator=np.random.default_rng(0))
    out = list(s)
    assert len(out) == len(s) == num_samples == len(list(tud.RandomSampler(range(n), num_samples=num_samples)))
    # whole permutations first, then part of one: no index repeats within a block of n
    for start in range(0, num_samples, n):
        block = out[start:start + n]
        assert len(set(block)) == len(block)


def test_random_sampler_with_replacement():
    s = RandomSampler(range(3), replacement=True, num_samples=300, generator=np.random.default_rng(0))
    out = list(s)
    assert len(out) == 300 and set(out) == {0, 1, 2}


@pytest.mark.parametrize("kwargs,exc", [
    (dict(replacement=1), TypeError), (dict(num_samples=0), ValueError), (dict(num_samples=-2), ValueError),
    (dict(num_samples=2.0), ValueError), (dict(num_samples=None, replacement="yes"), TypeError),
])
def test_random_sampler_argument_errors_as_torch(kwargs, exc):
    with pytest.raises(exc) as theirs:
        tud.RandomSampler(range(3), **kwargs)
    with pytest.raises(exc) as ours:
        RandomSampler(range(3), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_subset_random_sampler():
    s = SubsetRandomSampler([3, 9, 4], generator=np.random.default_rng(1))
    assert sorted(s) == [3, 4, 9] and len(s) == 3


def test_weighted_random_sampler():
    s = WeightedRandomSampler([0.0, 3.0, 1.0], 4000, generator=np.random.default_rng(0))
    counts = np.bincount(list(s), minlength=3)
    assert counts[0] == 0 and 2700 < counts[1] < 3300
    no_repeat = WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=np.random.default_rng(0))
    assert sorted(no_repeat) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="without replacement"):
        list(WeightedRandomSampler([1.0, 0.0], 2, replacement=False))
    with pytest.raises(RuntimeError, match="non-negative"):
        list(WeightedRandomSampler([1.0, -1.0], 2))


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([[1.0, 2.0]], 2), ([1.0], 1, 1)])
def test_weighted_random_sampler_argument_errors_as_torch(args):
    with pytest.raises(ValueError) as theirs:
        tud.WeightedRandomSampler(*args)
    with pytest.raises(ValueError) as ours:
        WeightedRandomSampler(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (2, 5, False),
                                       (2, 5, True)])
def test_batch_sampler_matches_torch(n, bs, drop):
    ours, theirs = BatchSampler(range(n), bs, drop), tud.BatchSampler(range(n), bs, drop)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


@pytest.mark.parametrize("bs,drop", [(0, False), (-1, False), (2.0, False), (True, False), (2, 1), (2, None)])
def test_batch_sampler_argument_errors_as_torch(bs, drop):
    with pytest.raises(ValueError) as theirs:
        tud.BatchSampler(range(4), bs, drop)
    with pytest.raises(ValueError) as ours:
        BatchSampler(range(4), bs, drop)
    assert str(ours.value) == str(theirs.value)


def test_random_sampler_with_replacement_draws_lazily():
    # torch draws in chunks: an enormous num_samples allocates nothing up front
    import itertools
    sampler = RandomSampler(range(7), replacement=True, num_samples=10 ** 10,
                            generator=np.random.default_rng(0))
    assert len(sampler) == 10 ** 10
    first = list(itertools.islice(iter(sampler), 100))
    assert len(first) == 100 and all(0 <= i < 7 for i in first)
    assert len(set(first)) == 7
