"""nn.Fold and nn.Unfold against torch 2.13: repr, values and gradients
(batched and unbatched, every option), the convolution identity and errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(1123)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _run(ma, mt, x):
    assert repr(ma) == repr(mt)
    xa, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yt = ma(xa), mt(xt)
    assert tuple(ya.shape) == tuple(yt.shape)
    _close(ya.detach().numpy(), yt.detach().numpy())
    seed = RNG.standard_normal(tuple(yt.shape))
    ya.backward(rg.tensor(seed))
    yt.backward(torch.tensor(seed))
    _close(xa.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("kw", [dict(kernel_size=2),
                                dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
                                dict(kernel_size=3, padding=(0, 1), stride=2)])
@pytest.mark.parametrize("shape", [(2, 3, 6, 7), (3, 6, 7)])
def test_unfold_as_torch(kw, shape):
    _run(rg.nn.Unfold(**kw), torch.nn.Unfold(**kw), RNG.standard_normal(shape))


@pytest.mark.parametrize("size, kw", [((4, 5), dict(kernel_size=2)),
                                      ((6, 7), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
                                      (5, dict(kernel_size=3, padding=(0, 1), stride=2))])
@pytest.mark.parametrize("batched", [True, False])
def test_fold_as_torch(size, kw, batched):
    mt = torch.nn.Fold(size, **kw)
    # as many columns as the blocks that fit output_size
    blocks = torch.nn.Unfold(**kw)(torch.zeros((1, 2) + ((size, size) if isinstance(size, int) else size))).shape
    shape = ((3,) if batched else ()) + tuple(blocks[1:])
    _run(rg.nn.Fold(size, **kw), mt, RNG.standard_normal(shape))


def test_fold_of_unfold_counts_overlaps():
    x = rg.ones(1, 2, 4, 4)
    y = rg.nn.Fold(4, 2)(rg.nn.Unfold(2)(x))
    yt = torch.nn.Fold(4, 2)(torch.nn.Unfold(2)(torch.ones(1, 2, 4, 4)))
    _close(y.numpy(), yt.numpy())
    assert float(y[0, 0, 1, 1]) == 4.0 and float(y[0, 0, 0, 0]) == 1.0


def test_unfold_matmul_is_a_convolution():
    x, w = RNG.standard_normal((2, 3, 6, 7)), RNG.standard_normal((4, 3, 2, 3))
    cols = rg.nn.Unfold((2, 3), padding=1)(rg.tensor(x))
    y = (rg.tensor(w).reshape(4, -1) @ cols).reshape(2, 4, 7, 7)
    _close(y.numpy(), torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy())


def test_gradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 4, 5)), requires_grad=True)
    assert rg.autograd.gradcheck(rg.nn.Unfold(2, padding=1, stride=2), (x,))
    c = rg.tensor(RNG.standard_normal((1, 8, 12)), requires_grad=True)
    assert rg.autograd.gradcheck(rg.nn.Fold((4, 5), 2), (c,))


def test_errors_as_torch():
    for shape, exc in (((2, 3), IndexError), ((1, 2, 3, 4, 5), RuntimeError)):
        with pytest.raises(exc):
            torch.nn.Unfold(2)(torch.zeros(shape))
        with pytest.raises(exc, match="3-D \\(unbatched\\) or 4-D"):
            rg.nn.Unfold(2)(rg.zeros(shape))
    with pytest.raises(RuntimeError):
        torch.nn.Fold(4, 2)(torch.zeros(1, 5, 9))
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        rg.nn.Fold(4, 2)(rg.zeros(1, 5, 9))
    with pytest.raises(RuntimeError):
        torch.nn.Fold(4, 2)(torch.zeros(1, 4, 8))
    with pytest.raises(RuntimeError, match="match the calculated number of sliding blocks"):
        rg.nn.Fold(4, 2)(rg.zeros(1, 4, 8))
