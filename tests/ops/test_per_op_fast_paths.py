"""The fast paths behind the per-op overhead benchmark (benchmarks/per_op.py)
give the same results as PyTorch: backward() of many outputs with matching
gradients (checked at C level), in-place accumulation of many gradients into
one input, and the cheaper kernels and backward formulas of sigmoid, silu,
softplus, maximum/minimum and the zero-derivative ops."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")


def _pair(x, dtype=np.float64):
    a = values(x, dtype=dtype)
    return rg.tensor(a.copy(), requires_grad=True), torch.tensor(a.copy(), requires_grad=True)


def _close(r, t, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(values(r), t.detach().numpy(), rtol=rtol, atol=atol)


# -- backward(outputs, grads): many outputs, C-level argument checks --------

def test_many_outputs_shared_gradient_matches_torch_and_keeps_gradient_intact():
    x, xt = _pair(np.linspace(-1, 1, 16))
    g0 = np.ones(16)
    grads = [rg.tensor(g0)] * 50                    # one gradient array for every output
    outs = [rg.exp(x) * (i + 1) for i in range(50)]
    rg.autograd.backward(outs, grads)
    outs_t = [torch.exp(xt) * (i + 1) for i in range(50)]
    torch.autograd.backward(outs_t, [torch.ones(16, dtype=torch.float64)] * 50)
    _close(x.grad, xt.grad)
    np.testing.assert_array_equal(g0, np.ones(16))  # in-place accumulation never wrote into it
    np.testing.assert_array_equal(values(grads[0]), np.ones(16))


def test_many_outputs_grad_matches_torch():
    x, xt = _pair(np.linspace(0.5, 2, 8))
    outs = [rg.add(x, float(i)) * x for i in range(5)]
    gs = [rg.tensor(np.full(8, i + 1.0)) for i in range(5)]
    (gx,) = rg.autograd.grad(outs, [x], gs)
    outs_t = [torch.add(xt, float(i)) * xt for i in range(5)]
    gs_t = [torch.full((8,), i + 1.0, dtype=torch.float64) for i in range(5)]
    (gxt,) = torch.autograd.grad(outs_t, [xt], gs_t)
    _close(gx, gxt)
    assert x.grad is None


def test_single_tensor_gradient_and_tuple_forms():
    x, xt = _pair([1.0, 2.0, 3.0])
    y = x * 3
    rg.autograd.backward(y, rg.tensor(np.array([1.0, 0.5, 2.0])))
    rg.autograd.backward((x * 2,), (rg.tensor(np.ones(3)),))
    (xt * 3).backward(torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64))
    (xt * 2).backward(torch.ones(3, dtype=torch.float64))
    _close(x.grad, xt.grad)


def test_gradient_with_other_dtype_is_converted_as_before():
    # float32 gradient for a float64 output: not the fast path; cast as in torch
    x, xt = _pair([1.0, 2.0])
    rg.autograd.backward([x * 2], [rg.tensor(np.array([1.0, 3.0], dtype=np.float32))])
    (xt * 2).backward(torch.tensor([1.0, 3.0], dtype=torch.float32).double())
    _close(x.grad, xt.grad)
    assert x.grad.dtype == np.float64


def test_wrong_shape_gradient_still_raises():
    x, _ = _pair([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        rg.autograd.backward([x * 2, x * 3], [rg.tensor(np.ones(3)), rg.tensor(np.ones(2))])


def test_non_tensor_gradient_still_raises():
    x, _ = _pair([1.0, 2.0])
    with pytest.raises(TypeError, match="gradients can be either Tensors or None"):
        rg.autograd.backward([x * 2], [np.ones(2)])


def test_output_without_graph_still_raises():
    x, _ = _pair([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        rg.autograd.backward([x * 2, rg.tensor(np.ones(2))], [rg.tensor(np.ones(2))] * 2)


def test_create_graph_through_fast_path_keeps_gradient_tensors():
    x, xt = _pair([0.5, 1.5])
    outs = [x * x, x * x * x]
    gs = [rg.tensor(np.ones(2)), rg.tensor(np.ones(2))]
    (gx,) = rg.autograd.grad(outs, [x], gs, create_graph=True)
    (gxx,) = rg.autograd.grad([gx], [x], [rg.tensor(np.ones(2))])
    outs_t = [xt * xt, xt * xt * xt]
    (gxt,) = torch.autograd.grad(outs_t, [xt], [torch.ones(2, dtype=torch.float64)] * 2, create_graph=True)
    (gxxt,) = torch.autograd.grad([gxt], [xt], [torch.ones(2, dtype=torch.float64)])
    _close(gx, gxt)
    _close(gxx, gxxt)


# -- sigmoid / silu / softplus -------------------------------------------------

EXTREME = [-800.0, -50.0, -20.5, -1.0, -1e-3, 0.0, 1e-3, 1.0, 19.5, 20.5, 50.0, 800.0]


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_sigmoid_forward_backward_matches_torch(dtype, rtol):
    x, xt = _pair(EXTREME, dtype)
    y = rg.sigmoid(x)
    yt = torch.sigmoid(xt)
    assert y.dtype == dtype
    _close(y, yt, rtol=rtol, atol=1e-300)
    y.sum().backward()
    yt.sum().backward()
    _close(x.grad, xt.grad, rtol=rtol, atol=1e-300)


@pytest.mark.float32_default        # (integers compute in the default dtype)
def test_sigmoid_zero_dim_and_integer():
    x, xt = _pair(-3.0)
    y = rg.sigmoid(x)
    assert y.shape == ()
    y.backward()
    torch.sigmoid(xt).backward()
    _close(y, torch.sigmoid(xt))
    _close(x.grad, xt.grad)
    yi = rg.sigmoid(rg.tensor(np.array([-2, 0, 3])))
    np.testing.assert_allclose(values(yi), 1 / (1 + np.exp(-np.array([-2.0, 0.0, 3.0]))), rtol=1e-6)
    assert yi.dtype == np.float32                       # torch: integers compute in float32


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_silu_matches_torch(dtype, rtol):
    x, xt = _pair(EXTREME[1:-1], dtype)
    y = rg.silu(x)
    yt = torch.nn.functional.silu(xt)
    _close(y, yt, rtol=rtol, atol=1e-30)
    g = np.linspace(0.5, 1.5, len(EXTREME) - 2).astype(dtype)
    y.backward(rg.tensor(g))
    yt.backward(torch.from_numpy(g))
    _close(x.grad, xt.grad, rtol=rtol, atol=1e-30)


def test_silu_double_backward_matches_torch():
    x, xt = _pair([-2.0, -0.3, 0.0, 0.7, 3.0])
    (g,) = rg.autograd.grad([rg.silu(x).sum()], [x], create_graph=True)
    g.sum().backward()
    (gt,) = torch.autograd.grad([torch.nn.functional.silu(xt).sum()], [xt], create_graph=True)
    gt.sum().backward()
    _close(g, gt)
    _close(x.grad, xt.grad)


@pytest.mark.parametrize("beta,threshold", [(1, 20), (2.0, 20), (0.5, 3.0), (1, 1.0)])
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_softplus_matches_torch(beta, threshold, dtype, rtol):
    x, xt = _pair(EXTREME[1:-1] + [5.0, 9.9, 10.1], dtype)
    y = rg.softplus(x, beta=beta, threshold=threshold)
    yt = torch.nn.functional.softplus(xt, beta=beta, threshold=threshold)
    assert y.dtype == dtype
    _close(y, yt, rtol=rtol, atol=1e-30)
    g = np.linspace(0.5, 1.5, x.shape[0]).astype(dtype)
    y.backward(rg.tensor(g))
    yt.backward(torch.from_numpy(g))
    _close(x.grad, xt.grad, rtol=rtol, atol=1e-30)


def test_softplus_double_backward_matches_torch():
    x, xt = _pair([-3.0, -0.5, 0.0, 0.5, 2.0])
    (g,) = rg.autograd.grad([rg.softplus(x, beta=2.0).sum()], [x], create_graph=True)
    g.sum().backward()
    (gt,) = torch.autograd.grad([torch.nn.functional.softplus(xt, beta=2.0).sum()], [xt], create_graph=True)
    gt.sum().backward()
    _close(g, gt)
    _close(x.grad, xt.grad)


def test_softplus_integer_input_refused_as_torch():
    with pytest.raises(NotImplementedError):
        torch.nn.functional.softplus(torch.tensor([-3, 0, 2, 30]))
    with pytest.raises(NotImplementedError, match="softplus"):
        rg.softplus(rg.tensor(np.array([-3, 0, 2, 30])))


# -- maximum / minimum ties, zero-derivative ops ------------------------------

@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("a,b", [
    ([1.0, 2.0, 3.0, 2.0], [2.0, 2.0, 1.0, 5.0]),          # ties split the gradient
    (2.0, 2.0),                                             # 0-d tie
    ([[1.0, 2.0, 3.0]], [[2.0], [1.0]]),                    # broadcast, with ties
    ([np.nan, 1.0, np.nan, 2.0], [1.0, np.nan, np.nan, 2.0]),  # a NaN passes the gradient to both
])
def test_maximum_minimum_ties_match_torch(name, a, b):
    x, xt = _pair(a)
    y, yt = _pair(b)
    out = getattr(rg, name)(x, y)
    out_t = getattr(torch, name)(xt, yt)
    g = np.arange(1.0, 1.0 + out_t.numel()).reshape(out_t.shape)
    out.backward(rg.tensor(g))
    out_t.backward(torch.from_numpy(g))
    _close(x.grad, xt.grad)
    _close(y.grad, yt.grad)
    # the create_graph formula agrees
    x2, y2 = rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True)
    gx, gy = rg.autograd.grad(getattr(rg, name)(x2, y2), (x2, y2), rg.tensor(g), create_graph=True)
    _close(gx, xt.grad)
    _close(gy, yt.grad)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sign"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zero_derivative_ops_give_zero_gradients_of_the_input_dtype(name, dtype):
    x, xt = _pair([[-1.5, 0.2], [2.5, 3.7]], dtype)
    getattr(rg, name)(x).backward(rg.tensor(np.ones((2, 2), dtype=dtype)))
    getattr(torch, name)(xt).backward(torch.ones(2, 2, dtype=xt.dtype))
    _close(x.grad, xt.grad)
    assert x.grad.dtype == dtype and x.grad.shape == (2, 2)
    y, _ = _pair(0.5, dtype)
    getattr(rg, name)(y).backward()
    assert float(values(y.grad)) == 0.0 and y.grad.shape == ()


def test_pow_backward_zero_exponent_matches_torch():
    x, xt = _pair([0.0, 0.0, 2.0, 3.0, 0.5])
    p, pt = _pair([0.0, 2.0, 0.0, -1.0, 1.5])
    out = rg.pow(x, p)
    out_t = torch.pow(xt, pt)
    with np.errstate(divide="ignore", invalid="ignore"):   # 0 ** -1 inside the masked-out branch
        out.backward(rg.tensor(np.ones(5)))
    out_t.backward(torch.ones(5, dtype=torch.float64))
    _close(x.grad, xt.grad)
    np.testing.assert_allclose(values(p.grad), pt.grad.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_with_other_without_grad(name):
    x, xt = _pair([1.0, 2.0, 3.0])
    other = np.array([2.0, 2.0, 2.0])
    out = getattr(rg, name)(x, rg.tensor(other))
    out_t = getattr(torch, name)(xt, torch.from_numpy(other))
    out.backward(rg.tensor(np.array([1.0, 2.0, 4.0])))
    out_t.backward(torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64))
    _close(x.grad, xt.grad)
