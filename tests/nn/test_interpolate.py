"""interpolate (every mode, size or scale_factor, align_corners,
recompute_scale_factor), the deprecated upsample functions and the Upsample
layers against torch 2.13: values (float64 and float32), gradients,
double backward, reprs, warnings and errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)

SIZES = [dict(size=(5, 13)), dict(size=(14, 18)), dict(size=7), dict(scale_factor=1.7), dict(scale_factor=(0.5, 2.3)),
         dict(scale_factor=2), dict(scale_factor=1.3, recompute_scale_factor=True), dict(scale_factor=(0.35, 3))]
MODES_2D = [("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True), ("bicubic", False),
            ("bicubic", True), ("area", None)]


def _both(x, kw, tol=1e-10):
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = F.interpolate(a, **kw), TF.interpolate(b, **kw)
    assert tuple(ya.shape) == tuple(yb.shape) and ya.dtype == a.dtype
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=tol, atol=tol)
    seed = RNG.standard_normal(tuple(yb.shape)).astype(x.dtype)
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("mode, align", MODES_2D)
@pytest.mark.parametrize("kw", SIZES, ids=[str(s) for s in SIZES])
def test_2d_modes_as_torch(mode, align, kw):
    _both(RNG.standard_normal((2, 3, 7, 9)), dict(kw, mode=mode, align_corners=align))


@pytest.mark.parametrize("mode, align", MODES_2D)
@pytest.mark.parametrize("kw", [dict(scale_factor=1.3), dict(size=(5, 13)), dict(scale_factor=0.7)])
def test_float32_as_torch(mode, align, kw):
    # the source positions are computed in float32, as torch's kernels
    _both(RNG.standard_normal((2, 3, 7, 9)).astype(np.float32), dict(kw, mode=mode, align_corners=align), tol=2e-5)


@pytest.mark.parametrize("mode, align", [("nearest", None), ("nearest-exact", None), ("linear", False),
                                         ("linear", True), ("area", None)])
@pytest.mark.parametrize("kw", [dict(size=4), dict(size=23), dict(scale_factor=1.6), dict(scale_factor=0.45)])
def test_1d_modes_as_torch(mode, align, kw):
    _both(RNG.standard_normal((2, 3, 11)), dict(kw, mode=mode, align_corners=align))


@pytest.mark.parametrize("mode, align", [("nearest", None), ("nearest-exact", None), ("trilinear", False),
                                         ("trilinear", True), ("area", None)])
@pytest.mark.parametrize("kw", [dict(size=(4, 5, 3)), dict(scale_factor=(1.5, 0.6, 2))])
def test_3d_modes_as_torch(mode, align, kw):
    _both(RNG.standard_normal((1, 2, 3, 4, 5)), dict(kw, mode=mode, align_corners=align))


def test_nearest_keeps_uint8_and_index_exactness_over_many_sizes():
    x = RNG.integers(0, 255, (1, 2, 13, 17)).astype(np.uint8)
    for n in range(1, 40, 3):
        for mode in ("nearest", "nearest-exact"):
            ya = F.interpolate(rg.tensor(x), size=(n, 40 - n), mode=mode)
            assert ya.dtype == rg.uint8
            np.testing.assert_array_equal(ya.numpy(), TF.interpolate(torch.tensor(x), size=(n, 40 - n), mode=mode))


def test_gradcheck_and_gradgradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 3, 4)), requires_grad=True)
    for kw in (dict(scale_factor=1.5, mode="bilinear"), dict(size=(5, 3), mode="bicubic", align_corners=True),
               dict(size=(2, 7), mode="nearest"), dict(size=(2, 3), mode="area")):
        assert rg.autograd.gradcheck(lambda t, kw=kw: F.interpolate(t, **kw), (x,))
        assert rg.autograd.gradgradcheck(lambda t, kw=kw: F.interpolate(t, **kw), (x,))


def test_same_size_is_a_new_tensor_with_the_values():
    x = rg.tensor(RNG.standard_normal((1, 1, 3, 3)), requires_grad=True)
    y = F.interpolate(x, size=(3, 3))
    assert y is not x
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())


def test_deprecated_functions_warn_and_resize_as_torch():
    x = RNG.standard_normal((1, 2, 3, 4))
    for name, kw in [("upsample", dict(scale_factor=2, mode="bilinear")), ("upsample_nearest", dict(size=(5, 6))),
                     ("upsample_bilinear", dict(scale_factor=2))]:
        with pytest.warns(UserWarning, match=f"nn.functional.{name}` is deprecated"):
            ya = getattr(F, name)(rg.tensor(x), **kw)
        with pytest.warns(UserWarning):
            yb = getattr(TF, name)(torch.tensor(x), **kw)
        np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"), lambda nn: nn.Upsample(size=(5, 7)),
    lambda nn: nn.Upsample(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=1.5, recompute_scale_factor=True, mode="nearest-exact"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=3), lambda nn: nn.UpsamplingBilinear2d(size=(6, 4)),
])
def test_modules_as_torch(make):
    mr, mt = make(rg.nn), make(torch.nn)
    assert repr(mr) == repr(mt)
    assert mr.scale_factor == mt.scale_factor and mr.align_corners == mt.align_corners
    x = RNG.standard_normal((2, 3, 4, 5))
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = mr(a), mt(b)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-10, atol=1e-12)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call, exc, match", [
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=0), RuntimeError,
     r"Input and output sizes should be greater than 0, but got input \(W: 3\) and output \(W: 0\)"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3, 3), size=(0, 2), mode="bilinear"), RuntimeError,
     r"but got input \(H: 3, W: 3\) output \(H: 0, W: 2\)"),
    (lambda f, m: f.interpolate(m.ones(1, 0, 3), size=4), RuntimeError, "Non-empty 3D data tensor expected"),
    (lambda f, m: f.interpolate(m.ones(2, 3), size=4), NotImplementedError,
     r"Only 3D, 4D and 5D input Tensors supported \(got 2D\)"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=4, mode="bogus"), NotImplementedError, r"\(got bogus\)"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=4, mode="bilinear"), NotImplementedError,
     "Got 3D input, but bilinear mode needs 4D input"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3, 3), size=4, mode="linear"), NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=(4, 4)), ValueError,
     "Input and output must have the same number of spatial dimensions"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), scale_factor=(2, 2)), ValueError,
     "Input and scale_factor must have the same number of spatial dimensions"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=(4.0,)), TypeError, "expected size to be one of int"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=4, scale_factor=2), ValueError,
     "only one of size or scale_factor should be defined"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3)), ValueError, "either size or scale_factor should be defined"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=4, recompute_scale_factor=True), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=4, align_corners=True), ValueError,
     "align_corners option can only be set with the interpolating modes"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3), size=4, mode="linear", antialias=True), ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes"),
    (lambda f, m: f.interpolate(m.ones(1, 2, 3, 3, dtype=m.int64), size=4, mode="bilinear"), NotImplementedError,
     "not implemented for"),
])
def test_errors_as_torch(call, exc, match):
    with pytest.raises(exc, match=match):
        call(TF, torch)
    with pytest.raises(exc, match=match):
        call(F, rg)


def test_antialias_is_refused_with_a_way_out():
    with pytest.raises(NotImplementedError, match="antialias=True is not supported"):
        F.interpolate(rg.ones(1, 1, 8, 8), size=(3, 3), mode="bilinear", antialias=True)
