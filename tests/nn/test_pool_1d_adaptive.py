"""1-d pooling, adaptive max pooling and power-average pooling (functions and
layers) against torch 2.13: values, indices, gradients, unbatched input,
reprs and errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)


def _both(x, fn_rg, fn_t, tol=1e-12):
    """Outputs and input gradients of both (a non-uniform seed); returns the outputs."""
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ra, rb = fn_rg(a), fn_t(b)
    ya, yb = (ra[0], rb[0]) if isinstance(rb, tuple) else (ra, rb)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=tol, atol=tol)
    seed = RNG.standard_normal(tuple(yb.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    return ra, rb


@pytest.mark.parametrize("args", [(3,), (3, 2, 1), (3, 2, 1, 2, True), (2, 3, 0, 1, True), ((4,), (1,), (2,))])
@pytest.mark.parametrize("shape", [(2, 3, 11), (3, 10)])
def test_max_pool1d_as_torch(args, shape):
    x = RNG.standard_normal(shape)
    ra, rb = _both(x, lambda t: F.max_pool1d(t, *args, return_indices=True),
                   lambda t: TF.max_pool1d(t, *args, return_indices=True))
    np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())
    assert ra[1].dtype == rg.int64
    _both(x, lambda t: F.max_pool1d(t, *args), lambda t: TF.max_pool1d(t, *args))
    out, idx = F.max_pool1d_with_indices(rg.tensor(x), *args)
    np.testing.assert_array_equal(idx.numpy(), rb[1].numpy())


def test_max_pool2d_with_indices_as_torch():
    x = RNG.standard_normal((2, 3, 7, 6))
    ra, rb = _both(x, lambda t: F.max_pool2d_with_indices(t, 3, 2, 1), lambda t: TF.max_pool2d_with_indices(t, 3, 2, 1))
    np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())


@pytest.mark.parametrize("args", [(3,), (3, 2, 1), (3, 2, 1, True, False), (2, 3, 0, True), (4, 1, 2, False, False)])
@pytest.mark.parametrize("shape", [(2, 3, 11), (3, 10)])
def test_avg_pool1d_as_torch(args, shape):
    _both(RNG.standard_normal(shape), lambda t: F.avg_pool1d(t, *args), lambda t: TF.avg_pool1d(t, *args))


@pytest.mark.parametrize("size", [1, 3, 4, 7, 9, (5,)])
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 7)])
def test_adaptive_avg_and_max_pool1d_as_torch(size, shape):
    x = RNG.standard_normal(shape)
    _both(x, lambda t: F.adaptive_avg_pool1d(t, size), lambda t: TF.adaptive_avg_pool1d(t, size))
    ra, rb = _both(x, lambda t: F.adaptive_max_pool1d(t, size, True), lambda t: TF.adaptive_max_pool1d(t, size, True))
    np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())
    _both(x, lambda t: F.adaptive_max_pool1d(t, size), lambda t: TF.adaptive_max_pool1d(t, size))


@pytest.mark.parametrize("size", [1, 3, (2, 5), (None, 4), (7, 9), (10, 4)])
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (3, 7, 9)])
def test_adaptive_max_pool2d_as_torch(size, shape):
    x = RNG.standard_normal(shape)
    ra, rb = _both(x, lambda t: F.adaptive_max_pool2d(t, size, return_indices=True),
                   lambda t: TF.adaptive_max_pool2d(t, size, return_indices=True))
    np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())
    ra, rb = _both(x, lambda t: F.adaptive_max_pool2d_with_indices(t, size),
                   lambda t: TF.adaptive_max_pool2d_with_indices(t, size))
    np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())


def test_adaptive_max_pool_ties_send_the_gradient_to_the_first_maximum():
    x = np.zeros((1, 1, 4, 4))
    _both(x, lambda t: F.adaptive_max_pool2d(t, 3), lambda t: TF.adaptive_max_pool2d(t, 3))
    _both(x[0], lambda t: F.adaptive_max_pool1d(t, 3), lambda t: TF.adaptive_max_pool1d(t, 3))


def test_adaptive_max_pool_float32_and_gradcheck():
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    _both(x, lambda t: F.adaptive_max_pool2d(t, (2, 4)), lambda t: TF.adaptive_max_pool2d(t, (2, 4)), tol=1e-6)
    a = rg.tensor(RNG.standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 3)), (a,))
    assert rg.autograd.gradgradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 3)), (a,))
    assert rg.autograd.gradcheck(lambda t: F.max_pool1d(t, 3, 2, 1), (rg.tensor(RNG.standard_normal((2, 7)),
                                                                                 requires_grad=True),))


@pytest.mark.parametrize("p", [1, 2, 3.0, float("inf"), -float("inf")])
def test_lp_pool_as_torch(p):
    x = np.abs(RNG.standard_normal((2, 3, 7, 8))) + 0.1
    _both(x, lambda t: F.lp_pool2d(t, p, (2, 3), 2, True), lambda t: TF.lp_pool2d(t, p, (2, 3), 2, True))
    _both(x[0], lambda t: F.lp_pool1d(t, p, 3), lambda t: TF.lp_pool1d(t, p, 3))
    _both(x[0, :, 0], lambda t: F.lp_pool1d(t, p, 2, 3), lambda t: TF.lp_pool1d(t, p, 2, 3))


def test_lp_pool_zero_window_has_zero_output_and_gradient():
    x = np.zeros((1, 1, 4))
    x[..., 2:] = [1.0, 2.0]
    _both(x, lambda t: F.lp_pool1d(t, 2, 2), lambda t: TF.lp_pool1d(t, 2, 2))


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.MaxPool1d(3), (2, 3, 10)), (lambda nn: nn.MaxPool1d(3, 2, 1, 2, True, True), (3, 10)),
    (lambda nn: nn.AvgPool1d(3), (2, 3, 10)), (lambda nn: nn.AvgPool1d(3, 2, 1, True, False), (3, 10)),
    (lambda nn: nn.AdaptiveAvgPool1d(4), (2, 3, 10)), (lambda nn: nn.AdaptiveMaxPool1d(4), (3, 10)),
    (lambda nn: nn.AdaptiveMaxPool1d(3, True), (2, 3, 10)), (lambda nn: nn.AdaptiveMaxPool2d((3, None)), (2, 3, 7, 5)),
    (lambda nn: nn.AdaptiveMaxPool2d(2, return_indices=True), (3, 7, 5)), (lambda nn: nn.LPPool1d(2, 3), (2, 3, 10)),
    (lambda nn: nn.LPPool2d(1.5, 3, 2, True), (2, 3, 7, 5)),
])
def test_modules_as_torch(make, shape):
    mr, mt = make(rg.nn), make(torch.nn)
    assert repr(mr) == repr(mt)
    x = np.abs(RNG.standard_normal(shape)) + 0.1
    ra, rb = _both(x, mr, mt)
    if isinstance(rb, tuple):
        np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())


@pytest.mark.parametrize("call, exc, match", [
    (lambda f, m: f.max_pool1d(m.ones(5), 2), RuntimeError,
     r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim batch size for input"),
    (lambda f, m: f.max_pool1d(m.ones(1, 2, 5), 2, padding=2), RuntimeError,
     "max_pool1d.. padding should be at most half of kernel size, but got padding=2 and kernel_size=2"),
    (lambda f, m: f.max_pool1d(m.ones(1, 2, 5), 6), RuntimeError, r"max_pool1d\(\) Invalid computed output size: 0"),
    (lambda f, m: f.max_pool1d(m.ones(1, 2, 5), 2, stride=0), RuntimeError,
     r"max_pool1d\(\) stride must be greater than zero, but got 0"),
    (lambda f, m: f.avg_pool1d(m.ones(5), 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self'"),
    (lambda f, m: f.avg_pool1d(m.ones(1, 2, 5), (2, 2)), RuntimeError,
     r"avg_pool1d\(\) argument 'kernel_size' should contain one int \(got 2\)"),
    (lambda f, m: f.adaptive_avg_pool1d(m.ones(1, 2, 5), (2, 2)), RuntimeError,
     r"adaptive_avg_pool1d\(\) argument 'output_size' should contain one int \(got 2\)"),
    (lambda f, m: f.adaptive_max_pool1d(m.ones(5), 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 1-dimensional tensor"),
    (lambda f, m: f.adaptive_max_pool2d(m.ones(5, 4), 2), RuntimeError,
     r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[5, 4\]"),
    (lambda f, m: f.adaptive_max_pool2d(m.ones(1, 2, 5, 4), (2, 2, 2)), RuntimeError, "output_size.size.. must be 2"),
    (lambda f, m: f.adaptive_max_pool2d(m.ones(1, 2, 0, 4), 2), RuntimeError,
     r"Expected input to have non-zero size for non-batch dimensions, but input has sizes \[1, 2, 0, 4\] with "
     "dimension 2 being empty"),
    (lambda f, m: f.adaptive_max_pool2d(m.ones(1, 2, 5, 4, dtype=m.int64), 2), NotImplementedError,
     '"adaptive_max_pool2d" not implemented for'),
])
def test_errors_as_torch(call, exc, match):
    with pytest.raises(exc, match=match):
        call(TF, torch)
    with pytest.raises(exc, match=match):
        call(F, rg)
