"""conv3d and Conv3d against torch 2.13: values and gradients over strides,
paddings (numbers, 'same', 'valid', the padding modes), dilations and
groups, unbatched input, double backward and the errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("k, st, pd, dl, g", [
    ((1, 1, 1), 1, 0, 1, 1), ((3, 2, 3), 1, 0, 1, 2), ((2, 2, 2), 2, 1, 1, 1),
    ((3, 2, 3), (2, 1, 3), (1, 0, 2), (1, 2, 1), 2), ((3, 3, 2), 1, "same", (2, 1, 2), 1), ((2, 3, 3), 1, "valid", 1, 1),
])
def test_conv3d_values_and_gradients_as_torch(k, st, pd, dl, g):
    x, w = RNG.standard_normal((2, 4, 5, 6, 7)), RNG.standard_normal((6, 4 // g) + k)
    bias = RNG.standard_normal(6)
    a = [rg.tensor(v, requires_grad=True) for v in (x, w, bias)]
    b = [torch.tensor(v, requires_grad=True) for v in (x, w, bias)]
    ya, yb = F.conv3d(*a, st, pd, dl, g), TF.conv3d(*b, st, pd, dl, g)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = RNG.standard_normal(tuple(yb.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    for p, q in zip(a, b):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_unbatched_without_bias_as_torch():
    x, w = RNG.standard_normal((2, 4, 4, 4)), RNG.standard_normal((3, 2, 2, 2, 2))
    ya, yb = F.conv3d(rg.tensor(x), rg.tensor(w), padding=1), TF.conv3d(torch.tensor(x), torch.tensor(w), padding=1)
    assert tuple(ya.shape) == tuple(yb.shape) == (3, 5, 5, 5)
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-10, atol=1e-12)


def test_gradcheck_and_gradgradcheck():
    x = rg.tensor(RNG.standard_normal((1, 2, 3, 3, 4)), requires_grad=True)
    w = rg.tensor(RNG.standard_normal((2, 1, 2, 2, 2)), requires_grad=True)
    b = rg.tensor(RNG.standard_normal(2), requires_grad=True)

    def fn(x, w, b):
        return F.conv3d(x, w, b, (2, 1, 2), 1, (1, 2, 1), 2)
    assert rg.autograd.gradcheck(fn, (x, w, b))
    assert rg.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("kwargs", [dict(stride=2, padding=1), dict(padding="same", padding_mode="reflect"),
                                    dict(padding=(1, 0, 2), padding_mode="circular", groups=2),
                                    dict(padding=1, padding_mode="replicate", bias=False, dilation=(1, 2, 1))])
def test_module_as_torch(kwargs):
    mr, mt = rg.nn.Conv3d(4, 6, (3, 2, 3), **kwargs, dtype=rg.float64), torch.nn.Conv3d(4, 6, (3, 2, 3), **kwargs)
    mt = mt.double()
    assert repr(mr) == repr(mt)
    assert tuple(mr.weight.shape) == tuple(mt.weight.shape)
    bound = 1 / np.sqrt(mt.weight.shape[1] * 18)
    assert np.abs(mr.weight.detach().numpy()).max() <= bound
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(mr.weight.detach().numpy()))
        if mt.bias is not None:
            mt.bias.copy_(torch.tensor(mr.bias.detach().numpy()))
    x = RNG.standard_normal((2, 4, 5, 6, 5))
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = mr(a), mt(b)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mr.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.float32_default
def test_module_float32():
    m = rg.nn.Conv3d(2, 3, 2)
    y = m(rg.randn(1, 2, 3, 3, 3))
    assert m.weight.dtype == rg.float32 and y.dtype == rg.float32 and tuple(y.shape) == (1, 3, 2, 2, 2)


@pytest.mark.parametrize("call, match", [
    (lambda f, m: f.conv3d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3, 3)),
     r"weight of size \[4, 2, 3, 3, 3\], expected input\[1, 1, 4, 5, 5\] to have 2 channels, but got 1"),
    (lambda f, m: f.conv3d(m.ones(1, 4, 5, 5, 5), m.ones(4, 2, 3, 3, 3)), "to have 2 channels, but got 4"),
    (lambda f, m: f.conv3d(m.ones(1, 4, 2, 5, 5), m.ones(4, 4, 3, 3, 3)),
     r"Calculated padded input size per channel: \(2 x 5 x 5\). Kernel size: \(3 x 3 x 3\). Kernel size can't"),
    (lambda f, m: f.conv3d(m.ones(1, 4, 5, 5, 5), m.ones(4, 4, 3, 3, 3), stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda f, m: f.conv3d(m.ones(1, 4, 5, 5, 5), m.ones(4, 4, 3, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda f, m: f.conv3d(m.ones(1, 4, 5, 5, 5), m.ones(4, 4, 3, 3, 3), stride=(1, 1)),
     "expected stride to be a single integer value or a list of 3 values"),
    (lambda f, m: f.conv3d(m.ones(4, 5, 5), m.ones(4, 4, 3, 3, 3)),
     r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d"),
])
def test_errors_as_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(TF, torch)
    with pytest.raises(RuntimeError, match=match):
        call(F, rg)
