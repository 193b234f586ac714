"""default_collate / default_convert against torch's, structure by structure."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.data import default_collate, default_convert
from retrograd.utils.data._collate import collate, default_collate_fn_map

torch = pytest.importorskip("torch")
from torch.utils.data import default_collate as t_collate, default_convert as t_convert  # noqa: E402

pytestmark = pytest.mark.oracle

Point = collections.namedtuple("Point", ["x", "y"])


def to_torch(obj):
    """A sample with retrograd tensors made into the same sample with torch tensors."""
    if isinstance(obj, rg.Tensor):
        return torch.from_numpy(np.array(obj.numpy()))
    if isinstance(obj, dict):
        return type(obj)((k, to_torch(v)) for k, v in obj.items())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(to_torch(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_torch(v) for v in obj)
    return obj


def assert_same(ours, theirs):
    """Same structure, container types, values and dtypes."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, rg.Tensor), f"expected a tensor, got {type(ours).__name__}"
        assert tuple(ours.shape) == tuple(theirs.shape)
        expected = theirs.numpy()
        assert ours.dtype == expected.dtype, (ours.dtype, expected.dtype)
        np.testing.assert_array_equal(ours.numpy(), expected)
        return
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert ours == theirs


BATCHES = {
    "python ints": [0, 1, 2],
    "python floats": [0.5, 1.5],
    "python bools": [True, False, True],
    "numpy float32 scalars": [np.float32(1), np.float32(2.5)],
    "numpy int16 scalars": [np.int16(3), np.int16(-4)],
    "numpy bool scalars": [np.bool_(True), np.bool_(False)],
    "numpy arrays keep their dtype": [np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)],
    "numpy 2-d float32 arrays": [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)],
    "0-d numpy arrays": [np.array(1.5), np.array(2.5)],
    "tensors": [rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0])],
    "0-d tensors": [rg.tensor(1), rg.tensor(2)],
    "float32 tensors": [rg.ones(2, 2, dtype=rg.float32), rg.zeros(2, 2, dtype=rg.float32)],
    "strings": ["a", "bc"],
    "bytes": [b"a", b"b"],
    "tuples": [(1, 2.0), (3, 4.0)],
    "tuples with strings": [(1, "a"), (2, "b")],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "namedtuples of arrays": [Point(np.zeros(2), 1), Point(np.ones(2), 0)],
    "nested": [{"img": (rg.zeros(2), [np.int64(1), "x"]), "meta": {"id": 7}},
               {"img": (rg.ones(2), [np.int64(2), "y"]), "meta": {"id": 8}}],
    "ordered dicts": [collections.OrderedDict(b=1, a=2.0), collections.OrderedDict(b=3, a=4.0)],
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_collate_matches_torch(name):
    batch = BATCHES[name]
    assert_same(default_collate(batch), t_collate(to_torch(batch)))


SAMPLES = {
    "numpy array": np.array([1, 2]),
    "numpy float32 scalar": np.float32(1.5),
    "python int unchanged": 3,
    "python float unchanged": 2.5,
    "string unchanged": "abc",
    "string array unchanged": np.array(["a", "b"]),
    "object array unchanged": np.array([object(), None]),
    "tensor unchanged": rg.tensor([1.0]),
    "tuple becomes a list": (np.zeros(2), "label", 1),
    "list": [np.ones(2), np.int32(4)],
    "dict": {"x": np.arange(3.0), "y": 1},
    "namedtuple": Point(np.array(0), np.array(1.0)),
    "range": range(3),
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_default_convert_matches_torch(name):
    sample = SAMPLES[name]
    ours, theirs = default_convert(sample), t_convert(to_torch(sample))
    if name.startswith("object array"):
        assert ours is sample and theirs is sample
    else:
        assert_same(ours, theirs)


def test_default_convert_shares_memory_with_numpy():
    a = np.arange(4.0)
    t = default_convert(a)
    a[0] = 10.0
    assert t[0].item() == 10.0          # torch.as_tensor shares memory too


def test_collated_tensors_are_copies():
    a, b = rg.zeros(2), rg.ones(2)
    batch = default_collate([a, b])
    batch.zero_()
    assert b.tolist() == [1.0, 1.0]


def test_collate_keeps_the_graph():
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    batch = default_collate([w * 2, w * 3])
    batch.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 5.0])


@pytest.mark.parametrize("bad", [[None, None], [object(), object()], [{1, 2}, {3}]])
def test_unsupported_elements_raise_type_error_as_torch(bad):
    with pytest.raises(TypeError) as theirs:
        t_collate(bad)
    with pytest.raises(TypeError) as ours:
        default_collate(bad)
    assert str(ours.value) == str(theirs.value).replace("torch.", "")
    assert "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists" in str(ours.value)


def test_string_arrays_raise_type_error_as_torch():
    batch = [np.array(["a"]), np.array(["b"])]
    with pytest.raises(TypeError) as theirs:
        t_collate(batch)
    with pytest.raises(TypeError) as ours:
        default_collate(batch)
    assert str(ours.value) == str(theirs.value)


def test_sequences_of_unequal_length_raise_runtime_error():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        t_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])


@pytest.mark.parametrize("batch", [[rg.zeros(2), rg.zeros(3)], [np.zeros(2), np.zeros(3)]])
def test_mismatched_shapes_raise_runtime_error(batch):
    with pytest.raises(RuntimeError):
        t_collate(to_torch(batch))
    with pytest.raises(RuntimeError):
        default_collate(batch)


def test_custom_collate_fn_map():
    rules = {**default_collate_fn_map, float: lambda b, *, collate_fn_map: max(b)}
    assert collate([(1, 2.0), (3, 5.0)], collate_fn_map=rules)[1] == 5.0
    # a subclass finds its base's rule
    class MyInt(int):
        pass
    assert default_collate([MyInt(1), MyInt(2)]).tolist() == [1, 2]
