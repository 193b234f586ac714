"""The 3-d pools against torch 2.13: max_pool3d (with indices), avg_pool3d,
adaptive_avg_pool3d, adaptive_max_pool3d (with indices), lp_pool3d and their
layers: values, indices, gradients, unbatched input, gradcheck and errors."""
import math
import re

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(3141)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _both(fn_rg, fn_torch, x, **kw):
    """Run both on copies of x; compare outputs (and indices) and the input gradients."""
    xa, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yt = fn_rg(xa, **kw), fn_torch(xt, **kw)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(ya[1].numpy(), yt[1].numpy())
        assert ya[1].dtype == rg.int64
        ya, yt = ya[0], yt[0]
    assert tuple(ya.shape) == tuple(yt.shape)
    _close(ya.detach().numpy(), yt.detach().numpy())
    seed = RNG.standard_normal(tuple(yt.shape))
    ya.backward(rg.tensor(seed))
    yt.backward(torch.tensor(seed))
    _close(xa.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("shape, kw", [
    ((2, 3, 5, 6, 7), dict(kernel_size=2)),
    ((2, 3, 5, 6, 7), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1), ceil_mode=True)),
    ((3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(2, 2, 3), padding=1, dilation=(2, 1, 3), ceil_mode=True)),
    ((1, 2, 4, 4, 4), dict(kernel_size=2, stride=1, padding=1, dilation=2)),   # padding up to half the dilated kernel
    ((1, 2, 3, 3, 3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
])
@pytest.mark.parametrize("indices", [False, True])
def test_max_pool3d_as_torch(shape, kw, indices):
    _both(F.max_pool3d, TF.max_pool3d, RNG.standard_normal(shape), return_indices=indices, **kw)


def test_max_pool3d_ties_go_to_the_first():
    x = np.zeros((1, 1, 2, 2, 2))
    x[0, 0, 1, 0, 1] = x[0, 0, 0, 1, 0] = 1.0
    _both(F.max_pool3d, TF.max_pool3d, x, kernel_size=2, return_indices=True)
    _both(F.max_pool3d_with_indices, TF.max_pool3d_with_indices, np.ones((1, 1, 3, 3, 3)), kernel_size=2, stride=1)


@pytest.mark.parametrize("kw", [dict(), dict(ceil_mode=True, count_include_pad=False), dict(divisor_override=4)])
def test_integer_input_as_torch(kw):
    x = RNG.integers(-50, 50, (1, 2, 5, 4, 6))
    ya, yt = F.max_pool3d(rg.tensor(x), 3, 2, 1), TF.max_pool3d(torch.tensor(x), 3, 2, 1)
    assert ya.dtype == rg.int64
    np.testing.assert_array_equal(ya.numpy(), yt.numpy())
    # torch's integer average truncates the quotient
    ya, yt = F.avg_pool3d(rg.tensor(x), 3, 2, 1, **kw), TF.avg_pool3d(torch.tensor(x), 3, 2, 1, **kw)
    assert ya.dtype == rg.int64
    np.testing.assert_array_equal(ya.numpy(), yt.numpy())


@pytest.mark.parametrize("shape, kw", [
    ((2, 3, 5, 6, 7), dict(kernel_size=2)),
    ((2, 3, 5, 6, 7), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1, ceil_mode=True)),
    ((2, 3, 5, 6, 7), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1, ceil_mode=True,
                           count_include_pad=False)),
    ((3, 5, 6, 7), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1), divisor_override=5)),
    ((1, 1, 4, 4, 4), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False,
                           divisor_override=2)),
])
def test_avg_pool3d_as_torch(shape, kw):
    _both(F.avg_pool3d, TF.avg_pool3d, RNG.standard_normal(shape), **kw)


@pytest.mark.parametrize("shape, size", [((2, 3, 5, 6, 7), (3, 4, 5)), ((3, 5, 6, 7), (2, None, 3)),
                                         ((1, 2, 4, 6, 8), 2), ((1, 1, 3, 3, 3), (5, 4, 3))])
def test_adaptive_avg_pool3d_as_torch(shape, size):
    _both(F.adaptive_avg_pool3d, TF.adaptive_avg_pool3d, RNG.standard_normal(shape), output_size=size)


@pytest.mark.parametrize("shape, size", [((2, 3, 5, 6, 7), (3, 4, 5)), ((3, 5, 6, 7), (2, None, 3)),
                                         ((1, 2, 4, 6, 8), 2), ((1, 1, 3, 3, 3), (5, 4, 3))])
@pytest.mark.parametrize("indices", [False, True])
def test_adaptive_max_pool3d_as_torch(shape, size, indices):
    _both(F.adaptive_max_pool3d, TF.adaptive_max_pool3d, RNG.standard_normal(shape), output_size=size,
          return_indices=indices)


def test_adaptive_pools_to_zero_size_as_torch():
    x = RNG.standard_normal((1, 2, 3, 4, 5))
    for fa, ft in ((F.adaptive_avg_pool3d, TF.adaptive_avg_pool3d), (F.adaptive_max_pool3d, TF.adaptive_max_pool3d)):
        assert tuple(fa(rg.tensor(x), 0).shape) == tuple(ft(torch.tensor(x), 0).shape) == (1, 2, 0, 0, 0)


@pytest.mark.parametrize("p, kw", [(2, dict(kernel_size=2)), (3, dict(kernel_size=(2, 3, 2), stride=(1, 2, 2),
                                                                        ceil_mode=True)),
                                   (1.5, dict(kernel_size=(1, 2, 2))), (math.inf, dict(kernel_size=2, stride=1))])
def test_lp_pool3d_as_torch(p, kw):
    x = np.abs(RNG.standard_normal((2, 3, 4, 5, 6))) + 0.1
    _both(F.lp_pool3d, TF.lp_pool3d, x, norm_type=p, **kw)
    _both(F.lp_pool3d, TF.lp_pool3d, x[0], norm_type=p, **kw)


def test_gradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 4, 4, 5)), requires_grad=True)
    checks = [lambda t: F.max_pool3d(t, (2, 2, 3), (1, 2, 1), 1, ceil_mode=True),
              lambda t: F.avg_pool3d(t, (3, 2, 2), (2, 1, 2), 1, ceil_mode=True, count_include_pad=False),
              lambda t: F.adaptive_avg_pool3d(t, (3, 3, 2)),
              lambda t: F.adaptive_max_pool3d(t, (2, 3, 2)),
              lambda t: F.lp_pool3d(t.abs() + 0.5, 2, 2, 1)]
    for fn in checks:
        assert rg.autograd.gradcheck(fn, (x,))
    for fn in checks[1:3]:
        assert rg.autograd.gradgradcheck(fn, (x,))


def _copy_compare(ma, mt, x):
    assert repr(ma) == repr(mt)
    _both(ma, mt, x)


def test_layers_as_torch():
    x = RNG.standard_normal((2, 3, 6, 5, 7))
    _copy_compare(rg.nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2), padding=1, ceil_mode=True),
                  torch.nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2), padding=1, ceil_mode=True), x)
    _copy_compare(rg.nn.MaxPool3d(2, return_indices=True), torch.nn.MaxPool3d(2, return_indices=True), x)
    _copy_compare(rg.nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False),
                  torch.nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False), x)
    _copy_compare(rg.nn.AdaptiveAvgPool3d((2, None, 3)), torch.nn.AdaptiveAvgPool3d((2, None, 3)), x)
    _copy_compare(rg.nn.AdaptiveMaxPool3d(3, return_indices=True), torch.nn.AdaptiveMaxPool3d(3, return_indices=True),
                  x[0])
    _copy_compare(rg.nn.LPPool3d(2, (2, 1, 2)), torch.nn.LPPool3d(2, (2, 1, 2)), np.abs(x) + 0.1)


@pytest.mark.float32_default
def test_float32_as_torch():
    x = RNG.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    for fa, ft in ((F.max_pool3d, TF.max_pool3d), (F.avg_pool3d, TF.avg_pool3d)):
        ya, yt = fa(rg.tensor(x), 3, 2, 1), ft(torch.tensor(x), 3, 2, 1)
        assert ya.dtype == rg.float32
        np.testing.assert_allclose(ya.numpy(), yt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: F.max_pool3d(rg.randn(2, 3, 4), 2), RuntimeError, "non-empty 4D or 5D"),
    (lambda: F.max_pool3d(rg.randn(1, 2, 4, 5, 6), 2, padding=2), RuntimeError, "at most half of effective kernel"),
    (lambda: F.max_pool3d(rg.randn(1, 2, 4, 5, 6), 2, dilation=0), RuntimeError, "dilation should be greater"),
    (lambda: F.max_pool3d(rg.randn(1, 2, 4, 5, 6), 2, padding=-1), RuntimeError, "pad must be non-negative"),
    (lambda: F.max_pool3d(rg.randn(1, 2, 4, 5, 6), 5), RuntimeError, "Output size is too small"),
    (lambda: F.max_pool3d(rg.randn(1, 2, 4, 5, 6), (2, 2)), RuntimeError, "a tuple of three ints"),
    (lambda: F.max_pool3d(rg.randn(1, 2, 4, 5, 6), 2.0), TypeError, "kernel_size"),
    (lambda: F.avg_pool3d(rg.randn(2, 3, 4), 2), RuntimeError, "non-empty 4D or 5D"),
    (lambda: F.avg_pool3d(rg.randn(1, 2, 4, 5, 6), 0), RuntimeError, "greater than zero"),
    (lambda: F.avg_pool3d(rg.randn(1, 2, 4, 5, 6), 2, stride=0), RuntimeError, "greater than zero"),
    (lambda: F.avg_pool3d(rg.randn(1, 2, 4, 5, 6), 5), RuntimeError, "smaller than kernel size"),
    (lambda: F.avg_pool3d(rg.randn(1, 2, 4, 5, 6), 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
    (lambda: F.adaptive_avg_pool3d(rg.randn(2, 3, 4), 2), RuntimeError, "Expected 4D or 5D tensor"),
    (lambda: F.adaptive_avg_pool3d(rg.randn(1, 2, 4, 5, 6), (2, 2)), RuntimeError, "output_size must be 3"),
    (lambda: F.adaptive_avg_pool3d(rg.randn(1, 2, 4, 5, 6), -1), RuntimeError, "greater than or equal to 0"),
    (lambda: F.adaptive_avg_pool3d(rg.zeros(1, 2, 0, 3, 3), 2), RuntimeError, "dimension 2 being empty"),
    (lambda: F.adaptive_avg_pool3d(rg.ones(1, 2, 3, 3, 3, dtype=rg.int64), 2), NotImplementedError, "int64"),
    (lambda: F.adaptive_max_pool3d(rg.randn(2, 3, 4), 2), RuntimeError, "Expected 4D or 5D tensor"),
    (lambda: F.adaptive_max_pool3d(rg.randn(1, 2, 4, 5, 6), (2, 2)), RuntimeError, "output_size.size() must be 3"),
    (lambda: F.adaptive_max_pool3d(rg.ones(1, 2, 3, 3, 3, dtype=rg.int64), 2), NotImplementedError, "int64"),
    (lambda: F.max_pool3d(rg.ones(1, 1, 2, 2, 2, dtype=rg.bool), 2), NotImplementedError, "bool"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()
