"""scatter_reduce / index_reduce (every reduce, include_self, ties and zeros),
mode, unfold, fill_diagonal_, nonzero_static, as_subclass, hash_tensor,
hardshrink / prelu as core functions and methods, and float_power_'s
gradient: values and gradients against torch (float64), errors."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import gradcheck

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

R = np.random.default_rng(3)
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach().numpy(), dtype=float), b.detach().numpy().astype(float),
                               rtol=tol, atol=tol)


def _pair(arr):
    return rg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_torch_with_ties_and_zeros(reduce, include_self):
    # small integers: many equal maxima and several zeros meet at one place
    s, src = R.integers(-2, 3, (4, 3)).astype(float), R.integers(-2, 3, (6, 3)).astype(float)
    idx = R.integers(0, 4, (6, 3))
    S, TS = _pair(s)
    B, TB = _pair(src)
    out = S.scatter_reduce(0, rg.tensor(idx), B, reduce, include_self=include_self)
    out_t = TS.scatter_reduce(0, torch.tensor(idx), TB, reduce, include_self=include_self)
    _close(out, out_t)
    g = R.standard_normal(s.shape)
    out.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    _close(S.grad, TS.grad)
    _close(B.grad, TB.grad)
    _close(rg.scatter_reduce(S, 1, rg.tensor(idx[:4] % 3), B[:4], reduce, include_self=include_self),
           torch.scatter_reduce(TS, 1, torch.tensor(idx[:4] % 3), TB[:4], reduce, include_self=include_self))


def test_scatter_reduce_amax_counts_self_ties_as_torch():
    # include_self=False, yet self's equal value shares the gradient (torch's rule)
    S, TS = _pair(np.array([5.0, 1.0, 2.0]))
    B, TB = _pair(np.array([5.0, 3.0, 0.5]))
    out = S.scatter_reduce(0, rg.tensor([0, 1, 1]), B, "amax", include_self=False)
    out_t = TS.scatter_reduce(0, torch.tensor([0, 1, 1]), TB, "amax", include_self=False)
    out.sum().backward()
    out_t.sum().backward()
    _close(out, out_t)
    _close(B.grad, TB.grad)
    _close(S.grad, TS.grad)
    assert B.grad.tolist() == [0.5, 1.0, 0.0]


def test_scatter_reduce_integer_mean_index_smaller_than_src_and_inplace():
    s, src, idx = torch.tensor([4, 7, -7]), torch.tensor([1, 2, 4, 5, 1]), torch.tensor([0, 0, 1, 1, 2])
    for inc in (True, False):
        r = rg.tensor(s.numpy()).scatter_reduce(0, rg.tensor(idx.numpy()), rg.tensor(src.numpy()), "mean",
                                                include_self=inc)
        assert r.tolist() == s.scatter_reduce(0, idx, src, "mean", include_self=inc).tolist()
    x, xt = rg.zeros(3, 3), torch.zeros(3, 3, dtype=torch.float64)
    i = np.array([[0, 1], [2, 2]])
    v = R.standard_normal((2, 3))
    _close(x.scatter_reduce(1, rg.tensor(i), rg.tensor(v), "sum"),
           xt.scatter_reduce(1, torch.tensor(i), torch.tensor(v), "sum"))
    w = rg.tensor(R.standard_normal(3), requires_grad=True)
    y = w * 1
    assert y.scatter_reduce_(0, rg.tensor([0, 0]), rg.tensor([9.0, -1.0]), "amax") is y
    y.sum().backward()
    assert w.grad.tolist() == [0.0, 1.0, 1.0] and y[0].item() == 9.0


def test_scatter_reduce_errors():
    x = rg.zeros(3)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got foo"):
        x.scatter_reduce(0, rg.tensor([0]), rg.ones(1), "foo")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, rg.tensor([0]), rg.tensor([1]), "sum")
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.scatter_reduce(0, rg.tensor([0.0]), rg.ones(1), "sum")
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x.scatter_reduce(0, rg.tensor([0, 5]), rg.ones(2), "sum")
    with pytest.raises(TypeError):
        rg.scatter_reduce(x, 0, rg.tensor([0]), rg.ones(1))


@pytest.mark.parametrize("reduce", REDUCES[1:])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(reduce, include_self):
    s, src = R.integers(-2, 3, (3, 4)).astype(float), R.integers(-2, 3, (3, 5)).astype(float)
    idx = np.array([0, 3, 3, 1, 3])
    S, TS = _pair(s)
    B, TB = _pair(src)
    out = rg.index_reduce(S, 1, rg.tensor(idx), B, reduce, include_self=include_self)
    out_t = torch.index_reduce(TS, 1, torch.tensor(idx), TB, reduce, include_self=include_self)
    _close(out, out_t)
    g = R.standard_normal(s.shape)
    out.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    _close(S.grad, TS.grad)
    _close(B.grad, TB.grad)
    y, yt = rg.tensor(s), torch.tensor(s)
    y.index_reduce_(1, rg.tensor(idx), rg.tensor(src), reduce, include_self=include_self)
    yt.index_reduce_(1, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self)
    _close(y, yt)


def test_index_reduce_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"):
        rg.ones(3).index_reduce(0, rg.tensor([0]), rg.ones(1), "sum")
    with pytest.raises(IndexError, match="Number of indices"):
        rg.ones(3).index_reduce(0, rg.tensor([0, 1]), rg.ones(3), "prod")
    X = rg.tensor(R.standard_normal((3, 2)), requires_grad=True)
    Y = rg.tensor(R.standard_normal((4, 2)), requires_grad=True)
    for reduce in ("prod", "mean", "amax"):
        assert gradcheck(lambda a, b: a.index_reduce(0, rg.tensor([0, 2, 2, 0]), b, reduce), (X, Y))


def test_mode_matches_torch():
    x = np.array([1.0, 3.0, 3.0, 1.0, 2.0, 1.0, 3.0])
    X, T = _pair(x)
    r, t = rg.mode(X), torch.mode(T)
    assert type(r).__name__ == "mode" and r.values.item() == t.values.item() and r.indices.item() == t.indices.item()
    r.values.backward()
    t.values.backward()
    _close(X.grad, T.grad)
    m = R.integers(0, 3, (3, 4, 12))            # up to 16 along dim: torch's index is the last occurrence
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            r, t = rg.mode(rg.tensor(m), dim, keepdim), torch.mode(torch.tensor(m), dim, keepdim)
            assert r.values.tolist() == t.values.tolist() and r.indices.tolist() == t.indices.tolist()
    assert rg.tensor(5.0).mode().indices.item() == 0 and tuple(rg.mode(rg.zeros(2, 0), 0).values.shape) == (0,)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        rg.mode(rg.zeros(0))


def test_unfold_values_and_overlapping_gradient():
    x = R.standard_normal((2, 7, 3))
    X, T = _pair(x)
    for dim, size, step in ((1, 3, 2), (1, 2, 1), (0, 1, 1), (2, 3, 5)):
        X.grad, T.grad = None, None
        u, ut = X.unfold(dim, size, step), T.unfold(dim, size, step)
        assert tuple(u.shape) == tuple(ut.shape)
        _close(u, ut)
        g = R.standard_normal(tuple(ut.shape))
        u.backward(rg.tensor(g))
        ut.backward(torch.tensor(g))
        _close(X.grad, T.grad)
    assert rg.tensor(5.0).unfold(0, 1, 1).tolist() == [[5.0]]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 10 but size is 11"):
        rg.arange(10.0).unfold(0, 11, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        rg.arange(10.0).unfold(0, 3, 0)


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((7, 3), False), ((8, 3), True), ((3, 7), True),
                                         ((3, 3, 3), False)])
def test_fill_diagonal_(shape, wrap):
    x, t = rg.zeros(*shape), torch.zeros(*shape, dtype=torch.float64)
    assert x.fill_diagonal_(5.0, wrap=wrap) is x
    _close(x, t.fill_diagonal_(5.0, wrap=wrap))
    w = rg.ones(*shape, requires_grad=True)
    y = w * 2
    y.fill_diagonal_(0.0, wrap=wrap)
    y.sum().backward()
    _close(w.grad, (t == 0).double() * 2)


def test_fill_diagonal_errors():
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        rg.zeros(3, 4, 3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        rg.zeros(3).fill_diagonal_(1)


def test_nonzero_static_method():
    x = np.array([[0, 1], [1, 1]])
    assert (rg.tensor(x).nonzero_static(size=5, fill_value=7).tolist()
            == torch.tensor(x).nonzero_static(size=5, fill_value=7).tolist())
    assert rg.tensor(x).nonzero_static(size=1).tolist() == [[0, 1]]
    assert tuple(rg.tensor(3).nonzero_static(size=2).shape) == (2, 0)
    with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
        rg.tensor([1]).nonzero_static(size=-1)


def test_as_subclass_keeps_data_and_graph():
    class Tagged(rg.Tensor):
        pass

    leaf = rg.ones(2, requires_grad=True)
    t = leaf * 2
    u = t.as_subclass(Tagged)
    assert type(u) is Tagged and u.grad_fn.name() == "AliasBackward0"
    (u * 3).sum().backward()
    assert leaf.grad.tolist() == [6.0, 6.0]
    plain = rg.zeros(2)
    v = plain.as_subclass(Tagged)
    v.add_(1.0)
    assert plain.tolist() == [1.0, 1.0] and not v.requires_grad
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        plain.as_subclass(int)


def test_hash_tensor_matches_torch():
    a = np.array([[1.5, -2.0], [3.0, 0.0]])
    assert rg.hash_tensor(rg.tensor(a)).item() == torch.hash_tensor(torch.tensor(a)).item()
    assert rg.tensor(a).hash_tensor(1).tolist() == torch.tensor(a).hash_tensor(1).tolist()
    r = rg.hash_tensor(rg.tensor(a), (0, 1), keepdim=True)
    assert tuple(r.shape) == (1, 1) and str(r.dtype) == "uint64"
    for arr in (np.array([1, 2, 3], dtype=np.int8), np.array([True, False]), np.array([-1], dtype=np.int32),
                np.array([1.5], dtype=np.float32)):
        assert rg.hash_tensor(rg.tensor(arr)).item() == torch.hash_tensor(torch.tensor(arr)).item()
    assert tuple(rg.hash_tensor(rg.zeros(2, 0), 0).shape) == (0,)
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode: 1"):
        rg.hash_tensor(rg.ones(2), mode=1)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        rg.hash_tensor(rg.zeros(0))
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        rg.hash_tensor(rg.zeros(2, 0), 1)


def test_hardshrink_prelu_are_core_functions_and_methods():
    import retrograd.core as core
    import retrograd.nn.functional as F
    assert F.hardshrink is core.hardshrink is rg.hardshrink and F.prelu is core.prelu is rg.prelu
    x = R.standard_normal((2, 3, 4))
    X, T = _pair(x)
    W, TW = _pair(np.array([0.1, 0.2, 0.3]))
    out = X.hardshrink(0.3) + X.prelu(W)
    out_t = T.hardshrink(0.3) + T.prelu(TW)
    _close(out, out_t)
    out.sum().backward()
    out_t.sum().backward()
    _close(X.grad, T.grad)
    _close(W.grad, TW.grad)


def test_float_power_inplace_gradient_matches_torch():
    X, T = _pair(np.array([2.0, 3.0]))
    y, yt = X * 1, T * 1
    y.float_power_(3)
    yt.float_power_(3)
    y.sum().backward()
    yt.sum().backward()
    _close(y, yt)
    _close(X.grad, T.grad)
