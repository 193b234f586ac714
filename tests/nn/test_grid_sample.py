"""affine_grid and grid_sample against torch 2.13: every mode, padding mode
and align_corners, 4-D and 5-D, values and the gradients of input, grid and
theta, float32, gradcheck, warnings and errors."""
import re
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(1729)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _sample_both(xshape, gshape, mode, padding_mode, align_corners, dtype=np.float64, spread=2.5, tol=1e-10):
    x = RNG.standard_normal(xshape).astype(dtype)
    g = ((RNG.random(gshape) * 2 - 1) * spread).astype(dtype)          # well outside [-1, 1] too
    xa, ga = rg.tensor(x, requires_grad=True), rg.tensor(g, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    ya = F.grid_sample(xa, ga, mode, padding_mode, align_corners)
    yt = TF.grid_sample(xt, gt, mode, padding_mode, align_corners)
    assert tuple(ya.shape) == tuple(yt.shape) and ya.dtype == xa.dtype
    _close(ya.detach().numpy(), yt.detach().numpy(), tol)
    seed = RNG.standard_normal(tuple(yt.shape)).astype(dtype)
    ya.backward(rg.tensor(seed))
    yt.backward(torch.tensor(seed))
    _close(xa.grad.numpy(), xt.grad.numpy(), tol)
    _close(ga.grad.numpy(), gt.grad.numpy(), tol)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_4d_as_torch(mode, padding_mode, align_corners):
    _sample_both((2, 3, 5, 6), (2, 4, 7, 2), mode, padding_mode, align_corners)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_5d_as_torch(mode, padding_mode, align_corners):
    _sample_both((2, 3, 4, 5, 6), (2, 3, 4, 5, 3), mode, padding_mode, align_corners)


def test_grid_sample_single_pixel_and_far_reflections_as_torch():
    _sample_both((1, 2, 1, 4), (1, 3, 3, 2), "bilinear", "reflection", True, spread=6.0)
    _sample_both((1, 2, 3, 1), (1, 3, 3, 2), "bicubic", "reflection", False, spread=6.0)
    _sample_both((1, 1, 2, 2), (1, 5, 5, 2), "bilinear", "border", False, spread=1.0)


@pytest.mark.float32_default
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_float32_as_torch(mode):
    _sample_both((2, 3, 5, 6), (2, 4, 7, 2), mode, "reflection", False, np.float32, 3.5, tol=1e-4)


def test_grid_sample_known_values():
    x = rg.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    grid = rg.tensor([[[[0.0, 0.0], [-1.0, -1.0], [1.0, 1.0], [0.5, -1.0]]]])
    np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=True).numpy(), [[[[1.5, 0.0, 3.0, 0.75]]]])
    np.testing.assert_allclose(F.grid_sample(x, grid, "nearest", align_corners=True).numpy(),
                               [[[[0.0, 0.0, 3.0, 1.0]]]])     # 0.5 rounds to even


def test_grid_sample_gradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 3, 4)), requires_grad=True)
    g = rg.tensor(RNG.random((1, 2, 3, 2)) * 2.4 - 1.2, requires_grad=True)
    for mode, pad in (("bilinear", "zeros"), ("bilinear", "reflection"), ("bicubic", "border")):
        assert rg.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, mode, pad, False), (x, g))
    x5 = rg.tensor(RNG.standard_normal((1, 2, 2, 3, 3)), requires_grad=True)
    g5 = rg.tensor(RNG.random((1, 2, 2, 2, 3)) * 2 - 1, requires_grad=True)
    assert rg.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, "bilinear", "border", True), (x5, g5))


def test_grid_sample_nearest_grid_gradient_is_zero():
    g = rg.tensor(RNG.random((1, 2, 2, 2)) * 2 - 1, requires_grad=True)
    F.grid_sample(rg.randn(1, 1, 3, 3), g, "nearest", align_corners=False).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.zeros((1, 2, 2, 2)))


def test_grid_sample_warns_without_align_corners():
    x, g = rg.randn(1, 1, 2, 2), rg.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(x, g, align_corners=False)


def _grid_errors(lib, f):
    x = lib.tensor(RNG.standard_normal((2, 3, 4, 5)))
    g = lib.tensor(RNG.random((2, 6, 7, 2)))
    return [
        lambda: f.grid_sample(x, g.float(), align_corners=False),
        lambda: f.grid_sample(x, g[:1], align_corners=False),
        lambda: f.grid_sample(x, lib.tensor(RNG.random((2, 6, 7, 3))), align_corners=False),
        lambda: f.grid_sample(x[:, :, :0], g, align_corners=False),
        lambda: f.grid_sample(x[0], g[0], align_corners=False),
        lambda: f.grid_sample(x[None], lib.tensor(RNG.random((1, 2, 3, 4, 5, 3))), align_corners=False),
        lambda: f.grid_sample(x[:, :, None], lib.tensor(RNG.random((2, 2, 3, 4, 3))), mode="bicubic",
                              align_corners=False),
        lambda: f.grid_sample(x, g, mode="foo"),
        lambda: f.grid_sample(x, g, padding_mode="foo"),
        lambda: f.grid_sample(x.long(), g.long(), align_corners=False),
        lambda: f.grid_sample(x, lib.tensor(RNG.random((2, 3, 4, 5, 2))), align_corners=False),
        lambda: f.grid_sample(x[0], lib.tensor(RNG.random((3, 2, 1))), align_corners=False),
        lambda: f.grid_sample(x[:, :, None], lib.tensor(RNG.random((2, 3, 4, 3))), align_corners=False),
    ]


@pytest.mark.parametrize("case", range(13))
def test_grid_sample_errors_as_torch(case):
    with pytest.raises(Exception) as et:
        _grid_errors(torch, TF)[case]()
    with pytest.raises(type(et.value)) as ea:
        _grid_errors(rg, F)[case]()
    # the same first words; dtype names differ between the libraries
    assert str(ea.value).split(",")[0].split(" but ")[0] == str(et.value).split(",")[0].split(" but ")[0] \
        or case in (0, 9)


def test_grid_sample_empty_batch_and_channels_as_torch():
    g = RNG.random((2, 3, 4, 2))
    y = F.grid_sample(rg.zeros(2, 0, 4, 5), rg.tensor(g), align_corners=False)
    assert tuple(y.shape) == (2, 0, 3, 4)
    assert tuple(F.grid_sample(rg.zeros(0, 3, 4, 5), rg.zeros(0, 3, 4, 2), align_corners=False).shape) == (0, 3, 3, 4)


# --- affine_grid -----------------------------------------------------------------------

@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 5), (2, 3, 6, 1), (2, 3, 4, 5, 6), (2, 1, 1, 3, 2)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_as_torch(size, align_corners):
    theta = RNG.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4))
    ta, tt = rg.tensor(theta, requires_grad=True), torch.tensor(theta, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ga, gt = F.affine_grid(ta, size, align_corners), TF.affine_grid(tt, size, align_corners)
    assert tuple(ga.shape) == tuple(gt.shape)
    _close(ga.detach().numpy(), gt.detach().numpy())
    seed = RNG.standard_normal(tuple(gt.shape))
    ga.backward(rg.tensor(seed))
    gt.backward(torch.tensor(seed))
    _close(ta.grad.numpy(), tt.grad.numpy())


def test_spatial_transformer_as_torch():
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.05]]])
    x = RNG.standard_normal((1, 3, 6, 7))
    ta, tt = rg.tensor(theta, requires_grad=True), torch.tensor(theta, requires_grad=True)
    ya = F.grid_sample(rg.tensor(x), F.affine_grid(ta, (1, 3, 5, 5), False), align_corners=False)
    yt = TF.grid_sample(torch.tensor(x), TF.affine_grid(tt, (1, 3, 5, 5), False), align_corners=False)
    _close(ya.detach().numpy(), yt.detach().numpy())
    ya.square().sum().backward()
    yt.square().sum().backward()
    _close(ta.grad.numpy(), tt.grad.numpy())
    assert rg.autograd.gradcheck(lambda t: F.affine_grid(t, (1, 1, 3, 2), True), (ta,))


def test_affine_grid_identity_float32_default():
    g = F.affine_grid(rg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=rg.float32), (1, 1, 1, 3), False)
    assert g.dtype == rg.float32
    np.testing.assert_allclose(g.numpy()[0, 0], [[-2 / 3, 0], [0, 0], [2 / 3, 0]], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("theta_shape, size, exc, msg", [
    ((2, 2, 3), (2, 3, 4, 5, 6), ValueError, "Expected a batch of 3D affine matrices of shape Nx3x4"),
    ((2, 3, 4), (2, 3, 4, 5), ValueError, "Expected a batch of 2D affine matrices of shape Nx2x3"),
    ((2, 2, 3), (2, 3, 4), NotImplementedError, "affine_grid only supports 4D and 5D sizes"),
    ((2, 2, 3), (2, 3, 0, 5), ValueError, "Expected non-zero, positive output size"),
    ((2, 2, 3), (3, 3, 4, 5), RuntimeError, "Expected size for first two dimensions of batch2 tensor"),
])
def test_affine_grid_errors(theta_shape, size, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        TF.affine_grid(torch.zeros(theta_shape), size, align_corners=False)
    with pytest.raises(exc, match=re.escape(msg)):
        F.affine_grid(rg.zeros(theta_shape), size, align_corners=False)
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(rg.zeros((2, 2, 3), dtype=rg.int64), (2, 3, 4, 5), align_corners=False)
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(rg.zeros(2, 2, 3), (2, 3, 1, 5), align_corners=True)
