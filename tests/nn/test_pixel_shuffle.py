"""pixel_shuffle, pixel_unshuffle (functions and layers), fold and unfold
against torch 2.13: values, gradients, extra leading dims, errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(5)


def _both(x, fn_rg, fn_t):
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = fn_rg(a), fn_t(b)
    assert tuple(ya.shape) == tuple(yb.shape)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12, atol=1e-12)
    seed = RNG.standard_normal(tuple(yb.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, r", [((2, 8, 3, 4), 2), ((9, 2, 2), 3), ((2, 3, 8, 4, 6), 2), ((1, 5, 2, 3), 1)])
def test_pixel_shuffle_as_torch(shape, r):
    _both(RNG.standard_normal(shape), lambda t: F.pixel_shuffle(t, r), lambda t: TF.pixel_shuffle(t, r))


@pytest.mark.parametrize("shape, r", [((2, 2, 6, 4), 2), ((1, 9, 6), 3), ((2, 3, 2, 4, 6), 2)])
def test_pixel_unshuffle_as_torch_and_inverts_shuffle(shape, r):
    x = RNG.standard_normal(shape)
    _both(x, lambda t: F.pixel_unshuffle(t, r), lambda t: TF.pixel_unshuffle(t, r))
    back = F.pixel_shuffle(F.pixel_unshuffle(rg.tensor(x), r), r)
    np.testing.assert_array_equal(back.numpy(), x)


def test_modules_as_torch():
    for mr, mt, shape in [(rg.nn.PixelShuffle(2), torch.nn.PixelShuffle(2), (2, 8, 3, 3)),
                          (rg.nn.PixelUnshuffle(3), torch.nn.PixelUnshuffle(3), (2, 1, 6, 9))]:
        assert repr(mr) == repr(mt)
        _both(RNG.standard_normal(shape), mr, mt)


@pytest.mark.parametrize("call, match", [
    (lambda f, m: f.pixel_shuffle(m.ones(1, 3, 5, 4), 2),
     r"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but "
     r"input.size\(-3\)=3 is not divisible by 4"),
    (lambda f, m: f.pixel_shuffle(m.ones(3, 4), 2), "pixel_shuffle expects input to have at least 3 dimensions"),
    (lambda f, m: f.pixel_unshuffle(m.ones(1, 4, 5, 4), 2),
     r"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size\(-2\)=5"),
    (lambda f, m: f.pixel_unshuffle(m.ones(1, 4, 4, 5), 2), "pixel_unshuffle expects width to be divisible"),
    (lambda f, m: f.pixel_shuffle(m.ones(1, 4, 4, 4), 0), "pixel_shuffle expects a positive upscale_factor, but got 0"),
    (lambda f, m: f.pixel_unshuffle(m.ones(1, 4, 4, 4), -1), "expects a positive downscale_factor"),
])
def test_shuffle_errors_as_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(TF, torch)
    with pytest.raises(RuntimeError, match=match):
        call(F, rg)


@pytest.mark.parametrize("shape, args", [
    ((2, 3, 7, 9), ((2, 3),)), ((2, 3, 7, 9), ((2, 3), (2, 1), 1, (1, 2))), ((3, 6, 6), (3, 1, 1, 2)),
])
def test_unfold_as_torch(shape, args):
    _both(RNG.standard_normal(shape), lambda t: F.unfold(t, *args), lambda t: TF.unfold(t, *args))


@pytest.mark.parametrize("shape, size, args", [
    ((2, 12, 16), (6, 7), ((2, 2), 1, 1, (2, 2))), ((1, 4, 4), (3, 3), (2,)), ((12, 9), (5, 5), ((2, 3), (2, 1), 0, 1)),
])
def test_fold_as_torch_and_adjoint_of_unfold(shape, size, args):
    x = RNG.standard_normal(shape)
    _both(x, lambda t: F.fold(t, size, *args), lambda t: TF.fold(t, size, *args))
    # <fold(c), y> == <c, unfold(y)>
    y = RNG.standard_normal(tuple(F.fold(rg.tensor(x), size, *args).shape))
    lhs = float((F.fold(rg.tensor(x), size, *args) * rg.tensor(y)).sum())
    rhs = float((rg.tensor(x) * F.unfold(rg.tensor(y), *args)).sum())
    assert abs(lhs - rhs) < 1e-9


def test_fold_unfold_gradgradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 4, 4)), requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda t: F.fold(F.unfold(t, 2, padding=1), (4, 4), 2, padding=1), (x,))


@pytest.mark.parametrize("call, match", [
    (lambda f, m: f.unfold(m.ones(1, 2, 3, 3), 4), r"calculated shape of the array of sliding blocks as \(0, 0\)"),
    (lambda f, m: f.fold(m.ones(1, 7, 4), (3, 3), 2),
     r"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size\(1\)=7"),
    (lambda f, m: f.fold(m.ones(1, 8, 5), (3, 3), 2),
     r"expected size of input's dimension 2 to match the calculated number of sliding blocks 2 \* 2 = 4"),
    (lambda f, m: f.fold(m.ones(2, 1, 8, 4), (3, 3), 2), r"Expected 2D or 3D \(batch mode\) tensor for input"),
])
def test_fold_errors_as_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(TF, torch)
    with pytest.raises(RuntimeError, match=match):
        call(F, rg)
