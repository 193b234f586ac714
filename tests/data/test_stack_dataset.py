"""StackDataset: tuple and dict samples, batch fetches, the DataLoader, and torch's errors.
Also: retrograd.utils.data offers every public name of torch.utils.data but the deprecated datapipes."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.utils.data as rud
from retrograd.utils.data import DataLoader, StackDataset, Subset, TensorDataset

torch = pytest.importorskip("torch")
import torch.utils.data as tud  # noqa: E402

pytestmark = pytest.mark.oracle

X = np.arange(12.0).reshape(6, 2)
Y = np.array([0, 1, 1, 0, 2, 2])
WORDS = ["a", "b", "c", "d", "e", "f"]


def _plain(sample):
    """A sample of either library as nested Python lists / dicts / tuples."""
    if isinstance(sample, dict):
        return {k: _plain(v) for k, v in sample.items()}
    if isinstance(sample, (tuple, list)):
        return type(sample)(_plain(v) for v in sample)
    if hasattr(sample, "numpy"):
        return sample.numpy().tolist()
    return sample


class Batched:
    """A list-backed dataset with its own __getitems__, counting the batch fetches."""

    def __init__(self, items, short=False):
        self.items, self.short, self.calls = items, short, 0

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __getitems__(self, indices):
        self.calls += 1
        got = [("batched", self.items[i]) for i in indices]
        return got[:-1] if self.short else got


def test_tuple_samples_match_torch():
    ours = StackDataset(TensorDataset(rg.tensor(X)), rg.tensor(Y), WORDS)
    theirs = tud.StackDataset(tud.TensorDataset(torch.tensor(X)), torch.tensor(Y), WORDS)
    assert len(ours) == len(theirs) == 6
    assert isinstance(ours.datasets, tuple) and len(ours.datasets) == 3
    for i in (0, 3, 5, -1):
        assert _plain(ours[i]) == _plain(theirs[i])
    assert isinstance(ours[2], tuple)


def test_dict_samples_match_torch():
    ours = StackDataset(x=TensorDataset(rg.tensor(X)), y=rg.tensor(Y), w=WORDS)
    theirs = tud.StackDataset(x=tud.TensorDataset(torch.tensor(X)), y=torch.tensor(Y), w=WORDS)
    assert isinstance(ours.datasets, dict) and list(ours.datasets) == ["x", "y", "w"]
    for i in range(6):
        got, want = _plain(ours[i]), _plain(theirs[i])
        assert got == want and list(got) == ["x", "y", "w"]


@pytest.mark.parametrize("named", [False, True])
def test_getitems_batches_where_a_dataset_can(named):
    idx = [4, 0, 2]
    ours_b, theirs_b = Batched(WORDS), Batched(WORDS)
    if named:
        ours, theirs = StackDataset(p=ours_b, q=WORDS), tud.StackDataset(p=theirs_b, q=WORDS)
    else:
        ours, theirs = StackDataset(ours_b, WORDS), tud.StackDataset(theirs_b, WORDS)
    got, want = ours.__getitems__(idx), theirs.__getitems__(idx)
    assert got == want
    assert ours_b.calls == theirs_b.calls == 1       # one batch fetch, not one per index
    expected = [(("batched", WORDS[i]), WORDS[i]) for i in idx]
    assert got == ([{"p": a, "q": b} for a, b in expected] if named else expected)
    assert ours.__getitems__([]) == theirs.__getitems__([]) == []


def test_getitems_through_a_subset_and_a_data_loader_match_torch():
    ours = StackDataset(Subset(TensorDataset(rg.tensor(X)), [5, 4, 3, 2, 1, 0]), rg.tensor(Y))
    theirs = tud.StackDataset(tud.Subset(tud.TensorDataset(torch.tensor(X)), [5, 4, 3, 2, 1, 0]), torch.tensor(Y))
    assert _plain(ours.__getitems__([1, 3])) == _plain(theirs.__getitems__([1, 3]))
    got = [_plain(b) for b in DataLoader(ours, batch_size=4)]
    want = [_plain(b) for b in tud.DataLoader(theirs, batch_size=4)]
    assert got == want and len(got) == 2


def test_data_loader_collates_dict_samples_as_torch():
    ours = StackDataset(x=rg.tensor(X), y=rg.tensor(Y))
    theirs = tud.StackDataset(x=torch.tensor(X), y=torch.tensor(Y))
    got = list(DataLoader(ours, batch_size=4))
    want = list(tud.DataLoader(theirs, batch_size=4))
    assert [_plain(b) for b in got] == [_plain(b) for b in want]
    assert got[0]["x"].shape == (4, 2) and got[1]["y"].dtype == rg.int64


def test_nested_getitems_of_the_wrong_size_is_a_value_error():
    for make in (lambda m, b: m.StackDataset(b, WORDS), lambda m, b: m.StackDataset(a=b)):
        for module in (rud, tud):
            ds = make(module, Batched(WORDS, short=True))
            with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 3, got 2"):
                ds.__getitems__([0, 1, 2])


def test_construction_errors_as_torch():
    for args, kwargs, msg in [((), {}, "At least one dataset should be passed"),
                              ((WORDS,), {"b": WORDS}, "but both types are given"),
                              ((WORDS, WORDS[:5]), {}, "Size mismatch between datasets"),
                              ((), {"a": WORDS, "b": WORDS[:2]}, "Size mismatch between datasets")]:
        with pytest.raises(ValueError, match=msg):
            StackDataset(*args, **kwargs)
        with pytest.raises(ValueError, match=msg):
            tud.StackDataset(*args, **kwargs)
    with pytest.raises(ValueError, match=r"\[6, 5\]"):        # ours also says what the lengths are
        StackDataset(WORDS, WORDS[:5])


def test_index_errors_come_from_the_datasets():
    ds = StackDataset(TensorDataset(rg.tensor(X)), WORDS)
    with pytest.raises(IndexError):
        ds[6]


def test_every_public_name_of_torch_utils_data_but_the_datapipes():
    # datapipes are deprecated in torch and out of retrograd's scope
    datapipes = {"DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation",
                 "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
                 "runtime_validation", "runtime_validation_disabled", "datapipes", "graph", "graph_settings"}
    public = {n for n in set(tud.__all__) | set(dir(tud)) if not n.startswith("_")}
    missing = sorted(public - datapipes - set(dir(rud)))
    assert missing == []
    assert sorted(set(tud.__all__) - datapipes - {"_DatasetKind"}) == sorted(rud.__all__)
    for module in ("dataset", "sampler", "distributed", "dataloader"):
        theirs = getattr(tud, module).__all__
        assert sorted(theirs) == sorted(getattr(rud, module).__all__)
