"""Behaviours from the second fidelity round, each side by side with torch
2.13 (the oracle) where torch is installed."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if "use_reentrant" in str(w.message)]


@pytest.mark.parametrize("lib", ["rg", "torch"])
def test_checkpoint_without_use_reentrant_warns(lib):
    if lib == "rg":
        model, x = rg.nn.Sequential(rg.nn.Linear(2, 2), rg.nn.ReLU()), rg.randn(3, 2, requires_grad=True)
        seq, one = checkpoint_sequential, checkpoint
    else:
        from torch.utils.checkpoint import checkpoint as one, checkpoint_sequential as seq
        model, x = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()), torch.randn(3, 2, requires_grad=True)
    assert len(_warned(lambda: seq(model, 1, x))) == 1
    assert len(_warned(lambda: one(model, x))) == 1
    assert _warned(lambda: seq(model, 1, x, use_reentrant=False)) == []
    assert _warned(lambda: one(model, x, use_reentrant=False)) == []


@pytest.mark.parametrize("slope,refused", [(-0.1, True), (0.0, False), (0.2, False)])
def test_inplace_leaky_relu_with_a_negative_slope_refuses_at_backward(slope, refused):
    for lib, fn in ((rg, F.leaky_relu_), (torch, torch.nn.functional.leaky_relu_)):
        x = lib.tensor(np.array([-1.0, 2.0]), requires_grad=True)
        y = x.clone()
        fn(y, slope)                     # the forward runs in both
        if refused:
            with pytest.raises(RuntimeError, match="negative slope"):
                y.sum().backward()
        else:
            y.sum().backward()
            np.testing.assert_allclose(np.asarray(x.grad), [slope, 1.0])


def test_inplace_leaky_relu_of_a_tensor_without_grad_is_fine():
    y = rg.tensor([-1.0, 2.0])
    F.leaky_relu_(y, -0.5)
    assert y.tolist() == [0.5, 2.0]


def test_detach_function_form():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    d = rg.detach(x)
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5.0                              # shares the data, as torch.detach
    assert x.tolist() == [5.0, 2.0]
    with pytest.raises(TypeError, match="must be Tensor"):
        rg.detach([1.0])


@pytest.mark.parametrize("index", [
    [[0, 1], [1, 0]],                        # a list of lists: a tuple of index lists
    [[0, 1], slice(None)],
    [0, [1, 2]],
    [slice(1, None), None],
    [0, 1],                                  # plain integers: one index array
    [[0, 1]],
])
def test_list_indices_read_and_write_as_torch(index):
    data = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # torch's deprecation of non-tuple sequences
        want = torch.tensor(data)[index]
        got = rg.tensor(data)[index]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        x, tx = rg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        y, ty = x * 1.0, tx * 1.0
        y[index] = 0.0
        ty[index] = 0.0
        (y * y).sum().backward()
        (ty * ty).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("case", [
    lambda L, t: L.select(t, 1, -1),
    lambda L, t: t.select(0, 2),
    lambda L, t: L.unflatten(t, 1, (2, 2)),
    lambda L, t: t.unflatten(0, (-1, 1)),
])
def test_select_and_unflatten_as_torch(case):
    data = np.arange(12.0).reshape(3, 4)
    x, tx = rg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, ty = case(rg, x), case(torch, tx)
    assert tuple(y.shape) == tuple(ty.shape) and y._is_view() and ty._is_view()
    w = np.random.default_rng(0).standard_normal(tuple(ty.shape))
    (y * rg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("bad", [
    lambda L, t: L.select(t, 0, 3),
    lambda L, t: L.select(t, 2, 0),
    lambda L, t: L.unflatten(t, 1, (3, 2)),
    lambda L, t: L.unflatten(t, 1, ()),
])
def test_select_and_unflatten_errors_as_torch(bad):
    data = np.zeros((3, 4))
    with pytest.raises(Exception) as want:
        bad(torch, torch.tensor(data))
    with pytest.raises(type(want.value)):
        bad(rg, rg.tensor(data))


def test_singular_det_gradient_is_the_adjugate():
    # torch 2.13 gives 0 for a singular matrix of rank n-1; the true gradient
    # is the adjugate's transpose (finite differences agree), which retrograd gives
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    x = rg.tensor(a, requires_grad=True)
    rg.linalg.det(x).backward()
    fd = np.zeros_like(a)
    for i in range(3):
        for j in range(3):
            d = np.zeros_like(a)
            d[i, j] = 1e-6
            fd[i, j] = (np.linalg.det(a + d) - np.linalg.det(a - d)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), fd, atol=1e-6)


@pytest.mark.parametrize("order", ["first", "last", "both"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_skips_legacy_empty_1d_tensors_as_torch(order, dim):
    a = np.arange(6.0).reshape(2, 3)
    for lib in (rg, torch):
        x = lib.tensor(a, requires_grad=True)
        e = lib.tensor(np.zeros(0), requires_grad=True)
        parts = {"first": [e, x], "last": [x, e], "both": [e, x, e]}[order]
        y = lib.cat(parts, dim)
        w = lib.tensor(np.arange(float(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        if lib is rg:
            got = (tuple(y.shape), x.grad.numpy().copy(), tuple(e.grad.shape))
        else:
            want = (tuple(y.shape), x.grad.numpy().copy(), tuple(e.grad.shape))
    assert got[0] == want[0] and got[2] == want[2]
    np.testing.assert_array_equal(got[1], want[1])


def test_cat_of_legacy_empty_keeps_its_dtype_in_the_promotion():
    got = rg.cat([rg.zeros(0, dtype=rg.float64), rg.ones(2, 3, dtype=rg.float32)])
    want = torch.cat([torch.zeros(0, dtype=torch.float64), torch.ones(2, 3)])
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")
