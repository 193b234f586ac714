"""sort, argsort, topk, unbind, any/all, isnan/isinf/isfinite and t: the
edge cases the registry's random samples do not reach (NaN order, ties and
stability, descending, empty tensors, dims, errors), against torch."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

NAN = float("nan")


def _same(rg_t, torch_t):
    np.testing.assert_array_equal(values(rg_t), torch_t.detach().numpy())
    assert tuple(rg_t.shape) == tuple(torch_t.shape)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("data", [
    [3., NAN, 1., 2., NAN, -1., float("inf"), -float("inf")],
    [1., 1., 0., 1., 0., 2., 2.],                     # ties: stable order
    [0., -0., 0., -0.],
])
def test_sort_nan_ties_and_order_as_torch(data, descending):
    x = np.array(data)
    r = rg.sort(rg.tensor(x), descending=descending, stable=True)
    t = torch.sort(torch.tensor(x), descending=descending, stable=True)
    _same(r.values, t.values)
    _same(r.indices, t.indices)
    # stable=False: torch's CPU sort gives the same order
    _same(rg.sort(rg.tensor(x), descending=descending).indices,
          torch.sort(torch.tensor(x), descending=descending).indices)
    _same(rg.argsort(rg.tensor(x), descending=descending, stable=True),
          torch.argsort(torch.tensor(x), descending=descending, stable=True))


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_sort_dims_ints_and_bools(dim):
    x = np.random.default_rng(0).integers(-2, 3, size=(3, 4, 5))
    for arr in (x, x > 0, x.astype(np.float32)):
        r = rg.tensor(arr).sort(dim, True, stable=True)
        t = torch.tensor(arr).sort(dim=dim, descending=True, stable=True)
        _same(r.values, t.values)
        _same(r.indices, t.indices)
        assert r.values.dtype == arr.dtype and r.indices.dtype == np.int64


def test_sort_named_tuple_and_gradient():
    x = rg.tensor([[3., 1., 2.], [0., 5., 4.]], requires_grad=True)
    out = rg.sort(x, dim=1, descending=True)
    assert type(out).__name__ == "sort" and out._fields == ("values", "indices")
    assert type(out).__module__ == "retrograd.return_types"
    assert out.values.grad_fn.name() == "SortBackward0"
    assert not out.indices.requires_grad
    w = rg.tensor([[1., 2., 3.], [4., 5., 6.]])
    (out.values * w).sum().backward()
    tx = torch.tensor([[3., 1., 2.], [0., 5., 4.]], requires_grad=True)
    (torch.sort(tx, dim=1, descending=True).values * torch.tensor(w.numpy())).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_sort_empty_and_zero_d():
    for shape, dim in [((0,), 0), ((0, 3), 0), ((2, 0), 1), ((2, 0), 0)]:
        r = rg.sort(rg.zeros(*shape), dim=dim)
        t = torch.sort(torch.zeros(*shape), dim=dim)
        _same(r.values, t.values)
        _same(r.indices, t.indices)
    r = rg.sort(rg.tensor(2.5))
    assert r.values.item() == 2.5 and r.indices.item() == 0 and r.indices.shape == ()


def test_sort_errors_as_torch():
    with pytest.raises(IndexError, match="Dimension out of range"):
        rg.sort(rg.zeros(3), dim=2)
    with pytest.raises(IndexError):
        torch.sort(torch.zeros(3), dim=2)
    with pytest.raises(TypeError, match="complex"):
        rg.sort(rg.tensor([1 + 1j, 2 + 0j]))
    with pytest.raises(TypeError, match="descending"):
        rg.sort(rg.zeros(3), 0, "yes")


@pytest.mark.parametrize("largest", [True, False])
def test_topk_nan_and_ties(largest):
    x = np.array([1., NAN, 5., 5., -2., NAN, 0.])
    for k in (0, 1, 3, 7):
        r = rg.topk(rg.tensor(x), k, largest=largest)
        t = torch.topk(torch.tensor(x), k, largest=largest)
        _same(r.values, t.values)
        # among ties any index is valid (torch leaves it unspecified): the
        # indices must point at the values, and be distinct
        idx = values(r.indices)
        np.testing.assert_array_equal(x[idx], values(r.values))
        assert len(set(idx.tolist())) == k
    # ties go to the lower index here
    assert rg.topk(rg.tensor([2., 1., 2., 2.]), 2).indices.tolist() == [0, 2]


def test_topk_dims_gradient_and_method():
    rng = np.random.default_rng(1)
    a = rng.permutation(24).reshape(2, 3, 4).astype(np.float64)
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    r = x.topk(2, dim=1, largest=False)
    t = tx.topk(2, dim=1, largest=False)
    _same(r.values, t.values)
    _same(r.indices, t.indices)
    w = rng.standard_normal(r.values.shape)
    (r.values * rg.tensor(w)).sum().backward()
    (t.values * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert r.values.grad_fn.name() == "TopkBackward0"


def test_topk_errors_as_torch():
    with pytest.raises(RuntimeError, match="k out of range"):
        rg.topk(rg.zeros(3), 4)
    with pytest.raises(RuntimeError, match="k out of range"):
        torch.topk(torch.zeros(3), 4)
    with pytest.raises(RuntimeError, match="k out of range"):
        rg.topk(rg.zeros(3), -1)
    with pytest.raises(TypeError, match="'k' must be int"):
        rg.topk(rg.zeros(3), 1.5)
    with pytest.raises(IndexError):
        rg.topk(rg.zeros(3), 1, dim=1)
    _same(rg.topk(rg.zeros(2, 0), 0).values, torch.topk(torch.zeros(2, 0), 0).values)


def test_unbind_views_and_gradient():
    a = np.arange(24.).reshape(2, 3, 4)
    for dim in (0, 1, -1):
        pieces = rg.unbind(rg.tensor(a), dim)
        tpieces = torch.unbind(torch.tensor(a), dim)
        assert len(pieces) == len(tpieces)
        for p, tp in zip(pieces, tpieces):
            _same(p, tp)
    base = rg.tensor(a)
    assert all(p._base is base for p in base.unbind(1))
    x = rg.tensor(a, requires_grad=True)
    p0, p1 = x.unbind(0)
    (p0 * 2 + p1 * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], np.full((3, 4), 2.))
    np.testing.assert_array_equal(x.grad.numpy()[1], np.full((3, 4), 3.))
    # one op with several views: none may be modified in place (torch)
    y = rg.tensor(a, requires_grad=True).clone()
    q = y.unbind(0)[0]
    with pytest.raises(RuntimeError):
        q.mul_(2)
    assert rg.unbind(rg.zeros(0, 3), 0) == ()
    with pytest.raises(IndexError):
        rg.unbind(rg.tensor(1.))
    with pytest.raises(IndexError):
        rg.unbind(rg.zeros(3), 1)


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all_as_torch(name):
    a = np.array([[0., 1., 0.], [0., 0., 0.]])
    cases = [((), {}), ((1,), {}), ((0, True), {}), ((), {"dim": (0, 1)}), ((), {"dim": -1, "keepdim": True})]
    for arr in (a, a.astype(np.uint8), a > 0, np.zeros((0, 3)), np.zeros((2, 0))):
        for args, kw in cases:
            r = getattr(rg, name)(rg.tensor(arr), *args, **kw)
            t = getattr(torch, name)(torch.tensor(arr), *args, **kw)
            _same(r, t)
            assert r.dtype == (np.uint8 if arr.dtype == np.uint8 else np.bool_)
    assert getattr(rg.tensor([1., NAN]), name)().item() is True      # NaN is true
    assert not getattr(rg, name)(rg.tensor([1.], requires_grad=True)).requires_grad


def test_isnan_isinf_isfinite():
    a = np.array([1., NAN, float("inf"), -float("inf"), 0.])
    x = rg.tensor(a, requires_grad=True)
    for name in ("isnan", "isinf", "isfinite"):
        r = getattr(x, name)()
        _same(r, getattr(torch, name)(torch.tensor(a)))
        assert r.dtype == np.bool_ and not r.requires_grad
        _same(getattr(rg, name)(rg.tensor([1, 2])), getattr(torch, name)(torch.tensor([1, 2])))


def test_t_rules():
    a = np.arange(6.).reshape(2, 3)
    x = rg.tensor(a)
    assert x.t()._base is x and x.t().shape == (3, 2)
    _same(rg.t(rg.tensor(a)), torch.t(torch.tensor(a)))
    assert rg.t(rg.zeros(3)).shape == (3,) and rg.t(rg.tensor(1.)).shape == ()
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        rg.zeros(2, 3, 4).t()
    y = rg.tensor(a, requires_grad=True)
    assert y.t().grad_fn.name() == "TBackward0"
    (y.t() * rg.tensor(np.arange(6.).reshape(3, 2))).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.arange(6.).reshape(3, 2).T)
