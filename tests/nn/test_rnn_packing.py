"""rg.nn.utils.rnn (PackedSequence and the packing/padding functions) against
torch 2.13: values, lengths, permutations, gradients through packing and
unpacking, and the error cases."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.nn.utils import rnn as R

torch = pytest.importorskip("torch")
T = torch.nn.utils.rnn
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(2)


def _close(a, b, tol=1e-15):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _same_packed(pt, pr):
    assert isinstance(pr, R.PackedSequence)
    _close(pt.data, pr.data)
    assert pr.batch_sizes.dtype == rg.int64 and pr.batch_sizes.tolist() == pt.batch_sizes.tolist()
    for a, b in ((pt.sorted_indices, pr.sorted_indices), (pt.unsorted_indices, pr.unsorted_indices)):
        assert (a is None and b is None) or a.tolist() == b.tolist()


def _seeded_backward(yt, yr):
    seed = RNG.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(seed))
    yr.backward(rg.tensor(seed))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([5, 3, 3, 1], True), ([2, 5, 1, 4], False),
                                                     ([3, 3, 3, 3], False)])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_padded_sequence_as_torch(batch_first, lengths, enforce_sorted, as_tensor):
    x = RNG.standard_normal((4, 5, 2, 3) if batch_first else (5, 4, 2, 3))
    xt, xr = torch.tensor(x, requires_grad=True), rg.tensor(x, requires_grad=True)
    lt = torch.tensor(lengths) if as_tensor else lengths
    lr = rg.tensor(lengths) if as_tensor else lengths
    pt = T.pack_padded_sequence(xt, lt, batch_first, enforce_sorted)
    pr = R.pack_padded_sequence(xr, lr, batch_first, enforce_sorted)
    _same_packed(pt, pr)
    _seeded_backward(pt.data, pr.data)
    _close(xt.grad, xr.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("total_length", [None, 8])
def test_pad_packed_sequence_round_trip_as_torch(batch_first, total_length):
    lengths = [2, 6, 3]
    x = RNG.standard_normal((3, 6, 2) if batch_first else (6, 3, 2))
    pt = T.pack_padded_sequence(torch.tensor(x), lengths, batch_first, enforce_sorted=False)
    pr = R.pack_padded_sequence(rg.tensor(x), lengths, batch_first, enforce_sorted=False)
    dt, dr = pt.data.clone().requires_grad_(), pr.data.clone().requires_grad_()
    yt, lt = T.pad_packed_sequence(T.PackedSequence(dt, pt.batch_sizes, pt.sorted_indices, pt.unsorted_indices),
                                   batch_first, padding_value=-2.5, total_length=total_length)
    yr, lr = R.pad_packed_sequence(R.PackedSequence(dr, pr.batch_sizes, pr.sorted_indices, pr.unsorted_indices),
                                   batch_first, padding_value=-2.5, total_length=total_length)
    assert yr.shape == tuple(yt.shape)
    _close(yt, yr)
    assert lr.dtype == rg.int64 and lr.tolist() == lt.tolist() == lengths
    _seeded_backward(yt, yr)
    _close(dt.grad, dr.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (2, 3)])
def test_pad_sequence_as_torch(batch_first, padding_side, trailing):
    arrays = [RNG.standard_normal((n,) + trailing) for n in (3, 0, 5, 1)]
    st = [torch.tensor(a, requires_grad=True) for a in arrays]
    sr = [rg.tensor(a, requires_grad=True) for a in arrays]
    yt = T.pad_sequence(st, batch_first, 7.0, padding_side)
    yr = R.pad_sequence(sr, batch_first, 7.0, padding_side)
    assert yr.shape == tuple(yt.shape)
    _close(yt, yr)
    _seeded_backward(yt, yr)
    for a, b in zip(st, sr):
        _close(a.grad, b.grad)


def test_pad_sequence_of_a_tensor_and_of_a_generator_as_torch():
    x = RNG.standard_normal((3, 2))
    _close(T.pad_sequence(torch.tensor(x)), R.pad_sequence(rg.tensor(x)))
    arrays = [RNG.standard_normal(n) for n in (2, 4)]
    _close(T.pad_sequence(torch.tensor(a) for a in arrays), R.pad_sequence(rg.tensor(a) for a in arrays))
    # a trailing dim of size 1 broadcasts into the first sequence's, as torch's copy does
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((1, 1))
    _close(T.pad_sequence([torch.tensor(a), torch.tensor(b)]), R.pad_sequence([rg.tensor(a), rg.tensor(b)]))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_unpack_sequence_as_torch(enforce_sorted):
    sizes = (4, 4, 2, 1) if enforce_sorted else (1, 4, 2, 4)
    arrays = [RNG.standard_normal((n, 3)) for n in sizes]
    st = [torch.tensor(a, requires_grad=True) for a in arrays]
    sr = [rg.tensor(a, requires_grad=True) for a in arrays]
    pt, pr = T.pack_sequence(st, enforce_sorted), R.pack_sequence(sr, enforce_sorted)
    _same_packed(pt, pr)
    ut, ur = T.unpack_sequence(pt), R.unpack_sequence(pr)
    assert len(ur) == len(ut)
    for a, b, arr in zip(ut, ur, arrays):
        _close(a, b)
        np.testing.assert_array_equal(b.detach().numpy(), arr)
    loss_t = sum((u * (i + 1)).sin().sum() for i, u in enumerate(ut))
    loss_r = sum((u * (i + 1)).sin().sum() for i, u in enumerate(ur))
    loss_t.backward()
    loss_r.backward()
    for a, b in zip(st, sr):
        _close(a.grad, b.grad)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_as_torch(batch_first):
    x = RNG.standard_normal((3, 4, 2) if batch_first else (4, 3, 2))
    lengths = [4, 1, 3]
    ut = T.unpad_sequence(torch.tensor(x), torch.tensor(lengths), batch_first)
    padded = rg.tensor(x, requires_grad=True)
    ur = R.unpad_sequence(padded, rg.tensor(lengths), batch_first)
    for a, b in zip(ut, ur):
        _close(a, b)
    sum(u.sum() for u in ur).backward()
    mask = np.arange(4)[None, :] < np.array(lengths)[:, None]
    np.testing.assert_array_equal(padded.grad.numpy()[..., 0], mask if batch_first else mask.T)
    assert padded.shape == x.shape               # (torch's transposes its argument in place here)


def test_packed_sequence_object():
    p = R.pack_sequence([rg.tensor([1.0, 2.0, 3.0]), rg.tensor([4.0])], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert data is p.data and batch_sizes is p.batch_sizes and len(p) == 4
    assert p.batch_sizes.tolist() == [2, 1, 1] and not p.is_cuda and not p.is_pinned()
    assert repr(p).startswith("PackedSequence(data=tensor([1., 4., 2., 3.]), batch_sizes=tensor([2, 1, 1])")
    assert p.to(rg.float64) is p and p.cpu() is p and p.double() is p
    q = p.float()
    assert q.data.dtype == rg.float32 and q.batch_sizes is p.batch_sizes
    assert q.sorted_indices.tolist() == p.sorted_indices.tolist()
    assert p.long().data.dtype == rg.int64 and p.int().data.dtype == rg.int32
    assert p.half().data.dtype == rg.float16 and p.byte().data.dtype == rg.uint8
    assert p.short().data.dtype == rg.int16 and p.char().data.dtype == rg.int8
    r = R.PackedSequence((p.data, p.batch_sizes), sorted_indices=p.sorted_indices)
    assert r.unsorted_indices.tolist() == p.unsorted_indices.tolist()
    assert R.invert_permutation(None) is None
    perm = [3, 0, 2, 1]
    assert R.invert_permutation(rg.tensor(perm)).tolist() == T.invert_permutation(torch.tensor(perm)).tolist()


def test_errors_as_torch():
    x = np.ones((5, 3, 2))
    cases = [
        (RuntimeError, "Length of all samples has to be greater than 0",
         lambda m, lib: m.pack_padded_sequence(lib.tensor(x), [5, 3, 0])),
        (RuntimeError, "`lengths` array must be sorted in decreasing order",
         lambda m, lib: m.pack_padded_sequence(lib.tensor(x), [3, 5, 2])),
        (RuntimeError, "Expected `len\\(lengths\\)` to be equal to batch_size, but got 2 \\(batch_size=3\\)",
         lambda m, lib: m.pack_padded_sequence(lib.tensor(x), [5, 3])),
        (RuntimeError, "'lengths' argument should be a 1D CPU int64 tensor, but got 2D",
         lambda m, lib: m.pack_padded_sequence(lib.tensor(x), lib.tensor([[5, 3, 2]]))),
        (RuntimeError, "received an empty list of sequences", lambda m, lib: m.pad_sequence([])),
        (RuntimeError, "Expected padding_side to be one of left or right, but got up.",
         lambda m, lib: m.pad_sequence([lib.ones(2)], padding_side="up")),
        (RuntimeError, "pad_sequence: Expected iterable for input sequences, but got arg of type: <class 'int'>",
         lambda m, lib: m.pad_sequence(3)),
        (RuntimeError, "must match|do not fit", lambda m, lib: m.pad_sequence([lib.ones(2, 3), lib.ones(2, 4)])),
        (ValueError, "Expected total_length to be at least the length of the longest sequence in input, but got "
                     "total_length=4 and max sequence length being 5",
         lambda m, lib: m.pad_packed_sequence(m.pack_padded_sequence(lib.tensor(x), [5, 3, 2]), total_length=4)),
    ]
    for cls, match, call in cases:
        for m, lib in ((T, torch), (R, rg)):
            with pytest.raises(cls, match=match):
                call(m, lib)
    # (torch reads past the input here; retrograd says what is wrong)
    with pytest.raises(RuntimeError, match="does not fit"):
        R.pack_padded_sequence(rg.tensor(x), [6, 3, 2])
