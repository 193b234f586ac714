"""Tensor's conveniences that training programs touch, against torch 2.13:
view_as/expand_as, new_*, sizes and strides, addcmul/addcdiv, masked_fill_,
the in-place draws."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.float32_default


def _both(fn):
    return fn(rg), fn(torch)


def _same(a, b):
    assert str(a.dtype).replace("torch.", "") == str(b.dtype).replace("torch.", "")
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda L: L.arange(6).view_as(L.zeros(3, 2)),
    lambda L: L.tensor([[1.0], [2.0]]).expand_as(L.zeros(2, 4)),
    lambda L: L.tensor([1, 2], dtype=L.int32).new_zeros(2, 3),
    lambda L: L.tensor([1.0], dtype=L.float64).new_ones((2,)),
    lambda L: L.tensor([1.0]).new_full((3,), 2.5),
    lambda L: L.tensor([1, 2]).new_tensor([1.7, 2.2]),
    lambda L: L.tensor([1.0, 2.0]).addcmul(L.tensor([2.0, 3.0]), L.tensor([4.0, 5.0]), value=0.5),
    lambda L: L.tensor([1.0, 2.0]).addcdiv(L.tensor([2.0, 3.0]), L.tensor([4.0, 5.0]), value=2),
    lambda L: L.addcmul(L.ones(2, 1), L.ones(3), L.full((3,), 2.0)),
    lambda L: L.zeros(4).masked_fill_(L.tensor([True, False, True, False]), 3.0),
])
def test_values_and_dtypes_as_torch(fn):
    _same(*_both(fn))


def test_sizes_strides_and_offsets_as_torch():
    for make in (lambda L: L.zeros(2, 3, 4), lambda L: L.zeros(2, 3, 4).transpose(0, 2),
                 lambda L: L.arange(10)[3:], lambda L: L.zeros(5, 6)[1:, 2:]):
        r, t = make(rg), make(torch)
        assert r.stride() == t.stride() and r.stride(0) == t.stride(0)
        assert r.storage_offset() == t.storage_offset()
        assert (r.element_size(), r.nelement(), r.ndimension(), r.itemsize, r.nbytes) == \
               (t.element_size(), t.nelement(), t.ndimension(), t.itemsize, t.nbytes)
    assert rg.zeros(1).get_device() == torch.zeros(1).get_device() == -1
    assert not rg.zeros(1).is_xpu and not rg.zeros(1).is_mps and not rg.zeros(1).is_pinned()
    x = rg.arange(4)
    assert x[1:].data_ptr() - x.data_ptr() == x.element_size()


def test_inplace_composites_keep_the_graph_as_torch():
    grads = {}
    for L in (rg, torch):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = L.tensor([4.0, 5.0, 6.0], requires_grad=True)
        y = a * 1
        y.addcmul_(b, b, value=0.5)
        y.masked_fill_(L.tensor([False, True, False]), 0.0)
        y.sum().backward()
        grads[L.__name__] = (np.asarray(a.grad), np.asarray(b.grad))
    for u, v in zip(grads["retrograd"], grads["torch"]):
        np.testing.assert_allclose(u, v)


def test_inplace_draws():
    rg.manual_seed(0)
    x = rg.empty(100000)
    m = x.normal_(2.0, 0.5).numpy()
    assert abs(m.mean() - 2.0) < 0.01 and abs(m.std() - 0.5) < 0.01
    u = x.uniform_(-1.0, 3.0).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.02
    assert set(np.unique(x.bernoulli_(0.25).numpy())) == {0.0, 1.0}
    e = x.exponential_(2.0).numpy()
    assert (e >= 0).all() and abs(e.mean() - 0.5) < 0.01
    assert x.dtype == np.float32


@pytest.mark.parametrize("call, cls", [
    (lambda L: L.zeros(2, requires_grad=True).normal_(), RuntimeError),
    (lambda L: L.zeros(2, dtype=L.int64).normal_(), NotImplementedError),
    (lambda L: L.zeros(2).normal_(0.0, -1.0), RuntimeError),
    (lambda L: L.zeros(2).uniform_(2.0, 1.0), RuntimeError),
])
def test_inplace_draw_errors_as_torch(call, cls):
    with pytest.raises(cls):
        call(torch)
    with pytest.raises(cls):
        call(rg)


def test_inplace_draws_run_under_no_grad_on_leaves():
    w = rg.zeros(3, requires_grad=True)
    with rg.no_grad():
        w.uniform_(1.0, 1.0)
    np.testing.assert_array_equal(w.detach().numpy(), [1.0, 1.0, 1.0])
    assert w.requires_grad and w.is_leaf
