"""In-place ops on views of tensors in the graph, and tracked __setitem__
(PyTorch's CopySlices): values and gradients match torch."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def both(a):
    return (rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


def check(fn, *arrays):
    rgs = [rg.tensor(a, requires_grad=True) for a in arrays]
    ths = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_r, out_t = fn(rg, *rgs), fn(torch, *ths)
    np.testing.assert_allclose(np.asarray(out_r.detach()), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(0).standard_normal(out_t.shape)
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    for r, t in zip(rgs, ths):
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


A = np.arange(12.0).reshape(3, 4) / 7 + 0.5
B = np.linspace(1.0, 2.0, 4)


def test_mul_on_row_view_updates_base_history():
    def f(lib, x, w):
        y = x * 2
        y[1].mul_(w)
        return (y * y).sum(dim=0)
    check(f, A, B)


def test_add_on_column_slice_view():
    def f(lib, x, w):
        y = x.sin()
        v = y[:, 1:3]
        v += w[:2]
        return y.exp()
    check(f, A, B)


def test_inplace_on_transposed_view_and_use_of_view_afterwards():
    def f(lib, x, w):
        y = x * 1.5
        v = y.transpose(0, 1)[1:3]
        v.mul_(w[:3])
        return v.sum() * 2 + (y ** 2).sum()
    check(f, A, B)


def test_sibling_view_sees_the_modification():
    def f(lib, x, w):
        y = x + 0
        a = y[0]             # made before the in-place op on b
        b = y[:, 0]
        b.mul_(3.0)
        return (a * w).sum() + y.sum()
    check(f, A, B)


def test_view_of_base_without_grad_joins_graph():
    def f(lib, x, w):
        buf = lib.zeros(3, 4, dtype=lib.float64) if lib is torch else rg.zeros(3, 4)
        buf[1:, :2] += x[:2, :2]
        return (buf * buf).sum(dim=1) + w[:3]
    check(f, A, B)


def test_setitem_basic_and_advanced_indices():
    def f(lib, x, w):
        y = x * 1.0
        y[0, 1:] = w[:3]
        idx = lib.tensor([2, 0]) if lib is torch else rg.tensor(np.array([2, 0]))
        y[idx, 0] = w[2:] * 5
        return (y ** 2).sum()
    check(f, A, B)


def test_setitem_scalar_and_mask():
    def f(lib, x, w):
        y = x * w
        y[y > 2] = 0.0
        y[1] = 1.5
        return y.exp().sum()
    check(f, A, B)


def test_saved_view_modified_in_place_raises():
    x = rg.tensor(A, requires_grad=True)
    y = x * 2
    v = y[0]
    z = v.sin()
    v.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_on_view_of_leaf_still_raises():
    x = rg.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf"):
        x[0].mul_(2)


def test_version_and_grad_fn_after_view_inplace():
    x = rg.tensor(A, requires_grad=True)
    y = x * 2
    v = y[0]
    v0 = y._version
    v.add_(1.0)
    assert y._version == v._version == v0 + 1
    assert y.grad_fn.name() == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    np.testing.assert_allclose(y.numpy(force=True)[0], A[0] * 2 + 1)


def test_setitem_without_graph_is_plain():
    t = rg.zeros(3)
    t[1] = 5.0
    assert t.tolist() == [0.0, 5.0, 0.0] and t.grad_fn is None and t._version == 1


def test_double_backward_through_view_inplace_and_setitem():
    def grads(lib, x, w):
        y = x * x
        y[0].mul_(w)
        y[:, 1] = w[:3] * x[:, 2]
        (gx, gw) = (lib.autograd.grad(y.sum() ** 2, (x, w), create_graph=True))
        return (gx * gx).sum() + (gw ** 3).sum()
    check(grads, A, B)
