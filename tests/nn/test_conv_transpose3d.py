"""conv_transpose3d and ConvTranspose3d against torch 2.13: values and
gradients over strides, paddings, output paddings, dilations and groups,
unbatched input, output_size, gradcheck and the errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(41)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("xshape, k, kw", [
    ((2, 4, 3, 4, 5), (2, 3, 2), {}),
    ((2, 4, 3, 4, 5), (3, 2, 2), dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), groups=2,
                                      dilation=(1, 2, 1))),
    ((1, 4, 1, 1, 1), (4, 4, 4), dict(stride=2, padding=1)),               # a latent code
    ((1, 4, 2, 2, 2), (1, 1, 1), dict(stride=3, padding=1, output_padding=2)),
    ((2, 4, 3, 3, 3), (2, 2, 2), dict(stride=2, padding=2, dilation=2, output_padding=1)),
    ((1, 4, 3, 3, 2), (3, 1, 2), dict(padding=(2, 0, 0))),                 # depth taps cropped by the padding
    ((1, 4, 1, 2, 2), (1, 1, 1), dict(padding=(1, 0, 0), output_padding=(2, 0, 0), dilation=(3, 1, 1))),  # bias only
])
def test_values_and_gradients_as_torch(xshape, k, kw):
    g = kw.get("groups", 1)
    x, w, b = RNG.standard_normal(xshape), RNG.standard_normal((4, 6 // g) + k), RNG.standard_normal(6)
    a = [rg.tensor(v, requires_grad=True) for v in (x, w, b)]
    t = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
    ya, yt = F.conv_transpose3d(*a, **kw), TF.conv_transpose3d(*t, **kw)
    assert tuple(ya.shape) == tuple(yt.shape)
    _close(ya.detach().numpy(), yt.detach().numpy())
    seed = RNG.standard_normal(tuple(yt.shape))
    ya.backward(rg.tensor(seed))
    yt.backward(torch.tensor(seed))
    for p, q in zip(a, t):
        _close(p.grad.numpy(), q.grad.numpy())


def test_unbatched_without_bias_as_torch():
    x, w = RNG.standard_normal((3, 2, 3, 2)), RNG.standard_normal((3, 2, 2, 2, 3))
    ya = F.conv_transpose3d(rg.tensor(x), rg.tensor(w), stride=2)
    yt = TF.conv_transpose3d(torch.tensor(x), torch.tensor(w), stride=2)
    assert tuple(ya.shape) == tuple(yt.shape) == (2, 4, 6, 5)
    _close(ya.numpy(), yt.numpy())


def test_gradcheck_and_gradgradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 2, 2, 3)), requires_grad=True)
    w = rg.tensor(RNG.standard_normal((2, 1, 2, 2, 2)), requires_grad=True)
    b = rg.tensor(RNG.standard_normal(2), requires_grad=True)

    def fn(x, w, b):
        return F.conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 0), (1, 0, 1), 2, (1, 2, 1))
    assert rg.autograd.gradcheck(fn, (x, w, b))
    assert rg.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("kwargs", [dict(stride=2, padding=1), dict(stride=(2, 1, 1), padding=(0, 1, 2), groups=2),
                                    dict(bias=False, dilation=(2, 1, 1), output_padding=(1, 0, 0), stride=1)])
def test_module_as_torch(kwargs):
    mr = rg.nn.ConvTranspose3d(4, 6, (3, 2, 3), **kwargs, dtype=rg.float64)
    mt = torch.nn.ConvTranspose3d(4, 6, (3, 2, 3), **kwargs).double()
    assert repr(mr) == repr(mt)
    assert tuple(mr.weight.shape) == tuple(mt.weight.shape)
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(mr.weight.detach().numpy()))
        if mt.bias is not None:
            mt.bias.copy_(torch.tensor(mr.bias.detach().numpy()))
    x = RNG.standard_normal((2, 4, 3, 3, 4))
    xa, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yt = mr(xa), mt(xt)
    _close(ya.detach().numpy(), yt.detach().numpy())
    ya.sum().backward()
    yt.sum().backward()
    _close(xa.grad.numpy(), xt.grad.numpy())
    _close(mr.weight.grad.numpy(), mt.weight.grad.numpy())


@pytest.mark.float32_default
def test_module_defaults_float32_init_range():
    m = rg.nn.ConvTranspose3d(4, 6, 3, groups=2)
    assert m.weight.dtype == rg.float32 and tuple(m.weight.shape) == (4, 3, 3, 3, 3)
    bound = 1 / np.sqrt(3 * 27)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound


def test_output_size_picks_output_padding():
    mr = rg.nn.ConvTranspose3d(2, 2, 3, stride=2, padding=1, dtype=rg.float64)
    mt = torch.nn.ConvTranspose3d(2, 2, 3, stride=2, padding=1).double()
    x = RNG.standard_normal((1, 2, 3, 3, 3))
    for size in ((5, 6, 5), (1, 2, 6, 6, 6)):
        assert tuple(mr(rg.tensor(x), output_size=size).shape) == tuple(mt(torch.tensor(x), output_size=size).shape)
    with pytest.raises(ValueError, match="valid sizes range"):
        mr(rg.tensor(x), output_size=(8, 8, 8))


def test_errors_as_torch():
    x = rg.randn(1, 2, 4, 5, 6)
    with pytest.raises(RuntimeError, match="5D \\(batched\\) input to conv_transpose3d"):
        F.conv_transpose3d(rg.randn(2, 3, 4), rg.randn(3, 2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="to have 3 channels, but got 2 channels"):
        F.conv_transpose3d(x, rg.randn(3, 2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose3d(x, rg.randn(2, 2, 2, 2, 2), output_padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.conv_transpose3d(x, rg.randn(2, 2, 2, 2, 2), padding=3)
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        rg.nn.ConvTranspose3d(2, 2, 2, padding_mode="reflect")
