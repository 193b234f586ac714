"""max_pool2d's backward where the windows tile the input (stride == kernel,
no padding: the C loop of _nn_loops.pyx) against PyTorch: ties (windows of
zeros after a relu) give the gradient to the first maximum in scan order,
NaN maxima to the first NaN, everything else exactly 0; and the shapes the
loop does not take still agree."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")


def _grads(x0, g0, **kw):
    x = rg.tensor(x0, requires_grad=True)
    y = rg.nn.functional.max_pool2d(x, **kw)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0.astype(x0.dtype)))
    xt = torch.tensor(x0, requires_grad=True)
    yt = torch.nn.functional.max_pool2d(xt, **kw)
    (tx,) = torch.autograd.grad(yt, [xt], torch.tensor(g0.astype(x0.dtype)))
    np.testing.assert_array_equal(values(y), yt.detach().numpy())
    return values(gx), tx.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [2, 3, (2, 3)])
def test_tiled_windows_with_ties_match_torch(dtype, k):
    rng = np.random.default_rng(0)
    kh, kw = (k, k) if isinstance(k, int) else k
    x0 = np.maximum(np.round(rng.standard_normal((3, 4, 4 * kh, 5 * kw)), 1), 0).astype(dtype)
    g0 = rng.standard_normal((3, 4, 4, 5))
    gx, tx = _grads(x0, g0, kernel_size=k)
    assert gx.dtype == dtype
    np.testing.assert_array_equal(gx, tx)


def test_tiled_nan_maximum_follows_the_general_path():
    # A NaN maximum: the gradient goes to the first NaN in scan order, as on
    # the general (strided-view) path, which a non-contiguous copy of the
    # same input takes. (torch's CPU kernel gives it to the last NaN; the
    # loop keeps retrograd's rule rather than change it on one path only.)
    x0 = np.zeros((1, 1, 4, 4))
    x0[0, 0, 0, 1] = np.nan
    x0[0, 0, 1, 0] = np.nan
    x0[0, 0, 2, 2] = 5.0
    x0[0, 0, 3, 3] = 5.0
    g0 = np.arange(1.0, 5.0).reshape(1, 1, 2, 2)
    x = rg.tensor(x0, requires_grad=True)
    (gx,) = rg.autograd.grad(rg.nn.functional.max_pool2d(x, 2), [x], rg.tensor(g0))
    wide = rg.tensor(np.repeat(x0, 2, axis=3), requires_grad=True)
    (gw,) = rg.autograd.grad(rg.nn.functional.max_pool2d(wide[:, :, :, ::2], 2), [wide], rg.tensor(g0))
    np.testing.assert_array_equal(values(gx), values(gw)[:, :, :, ::2])
    assert gx[0, 0, 0, 1].item() == 1.0 and gx[0, 0, 1, 0].item() == 0.0 and gx[0, 0, 2, 2].item() == 4.0


def test_tiled_non_finite_gradient_reaches_only_the_maximum():
    x0 = np.arange(16.0).reshape(1, 1, 4, 4)
    g0 = np.array([np.inf, np.nan, -np.inf, 1.0]).reshape(1, 1, 2, 2)
    gx, tx = _grads(x0, g0, kernel_size=2)
    np.testing.assert_array_equal(gx, tx)
    assert np.count_nonzero(gx == 0) == 12


def test_tiled_unbatched_input():
    rng = np.random.default_rng(1)
    x0 = np.maximum(rng.standard_normal((2, 6, 6)), 0)
    gx, tx = _grads(x0, rng.standard_normal((2, 3, 3)), kernel_size=2)
    np.testing.assert_array_equal(gx, tx)


@pytest.mark.parametrize("kw", [dict(kernel_size=2, padding=1), dict(kernel_size=2, ceil_mode=True),
                                dict(kernel_size=3, stride=2)])
def test_windows_that_do_not_tile_still_match_torch(kw):
    rng = np.random.default_rng(2)
    x0 = np.maximum(np.round(rng.standard_normal((2, 3, 7, 7)), 1), 0)
    out = torch.nn.functional.max_pool2d(torch.tensor(x0), **kw)
    gx, tx = _grads(x0, rng.standard_normal(tuple(out.shape)), **kw)
    np.testing.assert_array_equal(gx, tx)


def test_tiled_view_input_and_broadcast_gradient():
    # a non-contiguous input and an expanded gradient take the ufunc path
    rng = np.random.default_rng(3)
    base = np.maximum(rng.standard_normal((2, 3, 8, 16)), 0)
    x = rg.tensor(base, requires_grad=True)
    y = rg.nn.functional.max_pool2d(x[:, :, :, ::2], 2)
    y.sum().backward()
    xt = torch.tensor(base, requires_grad=True)
    torch.nn.functional.max_pool2d(xt[:, :, :, ::2], 2).sum().backward()
    np.testing.assert_array_equal(values(x.grad), xt.grad.numpy())
