"""max_unpool1d/2d/3d, fractional_max_pool2d/3d and their layers against
torch 2.13: values, indices (the window placement from given samples, in
float64 and float32), gradients, unbatched input, gradcheck and errors."""
import re

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(2718)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _pooled(n, shape, kernel, stride, padding):
    x = torch.tensor(RNG.standard_normal(shape))
    pool = {1: TF.max_pool1d, 2: TF.max_pool2d, 3: TF.max_pool3d}[n]
    return pool(x, kernel, stride, padding, return_indices=True)


@pytest.mark.parametrize("n, shape, kernel, stride, padding, size", [
    (1, (2, 3, 9), 3, 2, 1, (9,)),            # overlapping windows: repeated indices
    (1, (3, 9), 2, None, 0, [9]),
    (2, (2, 3, 7, 8), 3, 2, 1, (7, 8)),
    (2, (3, 7, 8), 2, None, 0, (1, 3, 7, 8)),
    (2, (1, 2, 4, 4), 2, None, 0, None),
    (3, (2, 3, 5, 6, 7), 3, 2, 1, (5, 6, 7)),
    (3, (3, 5, 6, 7), (2, 3, 2), (2, 2, 1), (1, 1, 0), (5, 6, 7)),
])
def test_max_unpool_as_torch(n, shape, kernel, stride, padding, size):
    y, idx = _pooled(n, shape, kernel, stride, padding)
    ya, yt = rg.tensor(y.numpy(), requires_grad=True), y.clone().requires_grad_()
    fa, ft = getattr(F, f"max_unpool{n}d"), getattr(TF, f"max_unpool{n}d")
    oa = fa(ya, rg.tensor(idx.numpy()), kernel, stride, padding, size)
    ot = ft(yt, idx, kernel, stride, padding, size)
    assert tuple(oa.shape) == tuple(ot.shape)
    _close(oa.detach().numpy(), ot.detach().numpy())
    seed = RNG.standard_normal(tuple(ot.shape))
    oa.backward(rg.tensor(seed))
    ot.backward(torch.tensor(seed))
    _close(ya.grad.numpy(), yt.grad.numpy())


def test_max_unpool_repeated_index_keeps_the_last_value_and_feeds_every_gradient():
    vals = np.array([[[1.0, 2.0, 3.0]]])
    idx = np.array([[[1, 1, 0]]])
    ya, yt = rg.tensor(vals, requires_grad=True), torch.tensor(vals, requires_grad=True)
    oa = F.max_unpool1d(ya, rg.tensor(idx), 1, output_size=[3])
    ot = TF.max_unpool1d(yt, torch.tensor(idx), 1, output_size=[3])
    _close(oa.detach().numpy(), ot.detach().numpy())
    seed = np.array([[[10.0, 20.0, 30.0]]])
    oa.backward(rg.tensor(seed))
    ot.backward(torch.tensor(seed))
    _close(ya.grad.numpy(), yt.grad.numpy())
    np.testing.assert_array_equal(ya.grad.numpy(), [[[20.0, 20.0, 10.0]]])


def test_max_unpool_round_trip_layers_as_torch():
    x = RNG.standard_normal((2, 3, 6, 6, 6))
    pa, pt = rg.nn.MaxPool3d(2, return_indices=True), torch.nn.MaxPool3d(2, return_indices=True)
    ua, ut = rg.nn.MaxUnpool3d(2), torch.nn.MaxUnpool3d(2)
    assert repr(ua) == repr(ut)
    _close(ua(*pa(rg.tensor(x))).numpy(), ut(*pt(torch.tensor(x))).numpy())
    for n in (1, 2):
        la, lt = getattr(rg.nn, f"MaxUnpool{n}d")(3, 2, 1), getattr(torch.nn, f"MaxUnpool{n}d")(3, 2, 1)
        assert repr(la) == repr(lt)
        y, idx = _pooled(n, (2, 3) + (7,) * n, 3, 2, 1)
        _close(la(rg.tensor(y.numpy()), rg.tensor(idx.numpy()), output_size=(7,) * n).numpy(),
               lt(y, idx, output_size=(7,) * n).numpy())


def test_max_unpool_gradcheck():
    # (windows that do not overlap: a repeated index has torch's gradient, not the finite differences')
    y, idx = _pooled(2, (1, 2, 5, 5), 2, 2, 1)
    ya = rg.tensor(y.numpy(), requires_grad=True)
    ia = rg.tensor(idx.numpy())
    assert rg.autograd.gradcheck(lambda t: F.max_unpool2d(t, ia, 2, 2, 1, (5, 5)), (ya,))
    assert rg.autograd.gradgradcheck(lambda t: F.max_unpool2d(t, ia, 2, 2, 1, (5, 5)), (ya,))


def _unpool_errors():
    y, i = _pooled(2, (1, 2, 4, 4), 2, None, 0)
    y, i = rg.tensor(y.numpy()), rg.tensor(i.numpy())
    return [
        (lambda: F.max_unpool2d(y, i.int(), 2), RuntimeError, "should be type int64"),
        (lambda: F.max_unpool2d(y, i[..., :1], 2), RuntimeError, "Expected shape of indices to be same"),
        (lambda: F.max_unpool2d(y[0, 0], i[0, 0], 2), RuntimeError, "should be a 3d or 4d Tensor"),
        (lambda: F.max_unpool2d(y, i + 100, 2), RuntimeError, "Found an invalid max index: 1"),
        (lambda: F.max_unpool2d(y, i - 100, 2), RuntimeError, "(output volumes are of size 4x4)"),
        (lambda: F.max_unpool2d(y, i, 2, output_size=(6, 5)), ValueError, "dim 0 must be between 2 and 6"),
        (lambda: F.max_unpool2d(y, i, 2, output_size=(5,)), ValueError, "2 or 4 elements"),
        (lambda: F.max_unpool2d(y[:, :, :0], i[:, :, :0], 2), RuntimeError, "dimension 2 being empty"),
        (lambda: F.max_unpool1d(y, i, 2), RuntimeError, "should be a 3d or 4d Tensor"),
        (lambda: F.max_unpool3d(y[0], i[0], 2), RuntimeError, "should be a 4d or 5d Tensor"),
        (lambda: F.max_unpool3d(y[None], i[None], 2, stride=0), RuntimeError, "strides should be greater than zero"),
        (lambda: F.max_unpool3d(y[None], i[None] + 1000, 2), RuntimeError, "(output volumes are of size 4x4x4)"),
        (lambda: F.max_unpool2d(y.long(), i, 2), NotImplementedError, "max_unpool2d"),
    ]


@pytest.mark.parametrize("case", range(13))
def test_max_unpool_errors_as_torch(case):
    call, exc, msg = _unpool_errors()[case]
    with pytest.raises(exc, match=re.escape(msg)):
        call()


# --- fractional max pooling ------------------------------------------------------------

def _fractional_both(n, x, kernel, size=None, ratio=None, samples=True):
    N = x.shape[0] if x.ndim == n + 2 else 1
    u = RNG.random((N, x.shape[-n - 1], n)).astype(x.dtype)
    xa, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fa, ft = getattr(F, f"fractional_max_pool{n}d"), getattr(TF, f"fractional_max_pool{n}d")
    oa, ia = fa(xa, kernel, size, ratio, True, rg.tensor(u))
    ot, it = ft(xt, kernel, size, ratio, True, torch.tensor(u))
    np.testing.assert_array_equal(ia.numpy(), it.numpy())
    tol = 1e-10 if x.dtype == np.float64 else 1e-5
    _close(oa.detach().numpy(), ot.detach().numpy(), tol)
    seed = RNG.standard_normal(tuple(ot.shape)).astype(x.dtype)
    oa.backward(rg.tensor(seed))
    ot.backward(torch.tensor(seed))
    _close(xa.grad.numpy(), xt.grad.numpy(), tol)


@pytest.mark.parametrize("shape, kernel, size, ratio", [
    ((2, 3, 11, 13), 2, (5, 6), None), ((3, 11, 13), (3, 2), None, (0.5, 0.6)), ((1, 2, 6, 6), 3, 4, None),
    ((1, 1, 5, 5), 2, 1, None),
])
def test_fractional_max_pool2d_as_torch(shape, kernel, size, ratio):
    _fractional_both(2, RNG.standard_normal(shape), kernel, size, ratio)


@pytest.mark.parametrize("shape, kernel, size, ratio", [
    ((2, 3, 9, 10, 11), 2, (4, 5, 6), None), ((3, 9, 10, 11), (2, 3, 2), None, (0.5, 0.5, 0.6)),
    ((1, 2, 5, 6, 7), 2, 3, None),
])
def test_fractional_max_pool3d_as_torch(shape, kernel, size, ratio):
    _fractional_both(3, RNG.standard_normal(shape), kernel, size, ratio)


@pytest.mark.float32_default
def test_fractional_windows_float32_as_torch():
    # the window starts are truncated products in the samples' dtype
    for _ in range(5):
        _fractional_both(2, RNG.standard_normal((3, 4, 37, 41)).astype(np.float32), 3, (17, 19))
        _fractional_both(3, RNG.standard_normal((2, 2, 17, 19, 23)).astype(np.float32), 2, (7, 9, 10))


def test_fractional_ties_and_nan_as_torch():
    x = np.ones((1, 1, 6, 6))
    x[0, 0, 2, 3] = np.nan
    x[0, 0, 3, 3] = np.nan
    u = torch.full((1, 1, 2), 0.3, dtype=torch.float64)
    oa, ia = F.fractional_max_pool2d(rg.tensor(x), 3, 3, return_indices=True, _random_samples=rg.tensor(u.numpy()))
    ot, it = TF.fractional_max_pool2d(torch.tensor(x), 3, 3, return_indices=True, _random_samples=u)
    np.testing.assert_array_equal(ia.numpy(), it.numpy())
    np.testing.assert_array_equal(oa.numpy(), ot.numpy())


def test_fractional_without_samples_draws_them():
    rg.manual_seed(0)
    a = F.fractional_max_pool2d(rg.arange(64.0).reshape(1, 1, 8, 8), 2, output_size=4)
    rg.manual_seed(0)
    b = F.fractional_max_pool2d(rg.arange(64.0).reshape(1, 1, 8, 8), 2, output_size=4)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(F.fractional_max_pool3d(rg.randn(2, 8, 8, 8), 2, output_ratio=0.5).shape) == (2, 4, 4, 4)


def test_fractional_gradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 7, 6)), requires_grad=True)
    u = rg.tensor(RNG.random((1, 2, 2)))
    assert rg.autograd.gradcheck(lambda t: F.fractional_max_pool2d(t, 2, (3, 4), _random_samples=u), (x,))
    x3 = rg.tensor(RNG.standard_normal((2, 5, 6, 5)), requires_grad=True)
    u3 = rg.tensor(RNG.random((1, 2, 3)))
    assert rg.autograd.gradcheck(lambda t: F.fractional_max_pool3d(t, 2, 3, _random_samples=u3), (x3,))


def test_fractional_layers_as_torch():
    x = RNG.standard_normal((2, 3, 9, 10))
    u = RNG.random((2, 3, 2))
    ma = rg.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True, _random_samples=rg.tensor(u))
    mt = torch.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True, _random_samples=torch.tensor(u))
    assert repr(ma) == repr(mt)
    assert ma.kernel_size == mt.kernel_size and ma.output_ratio == mt.output_ratio
    (oa, ia), (ot, it) = ma(rg.tensor(x)), mt(torch.tensor(x))
    np.testing.assert_array_equal(ia.numpy(), it.numpy())
    _close(oa.numpy(), ot.numpy())
    x3, u3 = RNG.standard_normal((3, 7, 8, 9)), RNG.random((1, 3, 3))
    ma3 = rg.nn.FractionalMaxPool3d((2, 2, 3), output_size=(3, 4, 5), _random_samples=rg.tensor(u3))
    mt3 = torch.nn.FractionalMaxPool3d((2, 2, 3), output_size=(3, 4, 5), _random_samples=torch.tensor(u3))
    _close(ma3(rg.tensor(x3)).numpy(), mt3(torch.tensor(x3)).numpy())
    assert "_random_samples" in dict(ma3.named_buffers())


@pytest.mark.parametrize("make", [
    lambda nn: nn.FractionalMaxPool2d(2, output_ratio=1.5), lambda nn: nn.FractionalMaxPool2d(2),
    lambda nn: nn.FractionalMaxPool2d(2, 2, 0.5), lambda nn: nn.FractionalMaxPool3d(0, 2),
    lambda nn: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1.0)),
])
def test_fractional_layer_errors_as_torch(make):
    with pytest.raises(ValueError) as et:
        make(torch.nn)
    with pytest.raises(ValueError, match=re.escape(str(et.value))):
        make(rg.nn)


def _fractional_errors(lib, fn2, fn3):
    x = lib.tensor(RNG.standard_normal((1, 2, 4, 4)))
    x3 = lib.tensor(RNG.standard_normal((2, 3, 5, 6, 7)))
    r = lib.tensor(RNG.random((1, 2, 2)))
    r3 = lib.tensor(RNG.random((2, 3, 3)))
    return [
        lambda: fn2(x, 2, output_ratio=0.5),
        lambda: fn2(x, 2),
        lambda: fn2(x, 2, output_size=4, _random_samples=r),
        lambda: fn2(x, 2, output_size=3, _random_samples=lib.tensor(RNG.random((1, 2, 3)))),
        lambda: fn2(x, 2, output_size=3, _random_samples=lib.tensor(RNG.random((1, 3, 2)))),
        lambda: fn2(x, 2, output_size=3, _random_samples=lib.tensor(RNG.random((2, 2)))),
        lambda: fn2(x, 2, output_size=3, _random_samples=r.float()),
        lambda: fn2(x, 2, output_size=-1, _random_samples=r),
        lambda: fn2(x, (2, 2, 2), output_size=2, _random_samples=r),
        lambda: fn2(x[0, 0], 2, output_size=2, _random_samples=r),
        lambda: fn2(x[0], 2, output_size=2, _random_samples=lib.tensor(RNG.random((0, 2, 2)))),
        lambda: fn3(x3, 2, output_size=(4, 2, 2), _random_samples=r3),
        lambda: fn3(x3, 2, output_size=(3, 5, 2), _random_samples=r3),
        lambda: fn3(x3, 2, output_size=(2, 2), _random_samples=r3),
        lambda: fn3(x3, 2, output_size=2, _random_samples=lib.tensor(RNG.random((2, 3, 2)))),
        lambda: fn3(x3[0, 0], 2, output_size=2, _random_samples=r3),
    ]


@pytest.mark.parametrize("case", range(16))
def test_fractional_errors_as_torch(case):
    with pytest.raises(Exception) as et:
        _fractional_errors(torch, TF.fractional_max_pool2d, TF.fractional_max_pool3d)[case]()
    message = str(et.value).split("\n")[0]
    with pytest.raises(type(et.value), match=re.escape(message)):
        _fractional_errors(rg, F.fractional_max_pool2d, F.fractional_max_pool3d)[case]()
