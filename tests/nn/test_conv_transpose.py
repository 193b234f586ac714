"""conv_transpose1d/2d and ConvTranspose1d/2d against torch 2.13: values and
every gradient over a grid of stride, padding, output_padding, dilation and
groups (each of the three computation paths: 1x1 input, stride 1, strided),
unbatched input, double backward, the modules and the errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(41)


def _run_both(fn_rg, fn_t, arrays):
    """Forward and backward (a fixed non-uniform seed) on both; outputs and the grads."""
    a = [rg.tensor(v, requires_grad=True) for v in arrays]
    b = [torch.tensor(v, requires_grad=True) for v in arrays]
    ya, yb = fn_rg(*a), fn_t(*b)
    seed = RNG.standard_normal(tuple(yb.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    return ya, yb, a, b


def _assert_same(ya, yb, a, b, tol=1e-10):
    assert tuple(ya.shape) == tuple(yb.shape)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=tol, atol=tol)
    for p, q in zip(a, b):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol)


GRID_2D = [  # (input hw, kernel, stride, padding, output_padding, dilation, groups)
    ((5, 6), (3, 2), 1, 0, 0, 1, 1),
    ((5, 6), (3, 3), 1, 2, 0, 1, 2),
    ((5, 6), (3, 2), 1, (1, 0), (1, 1), 2, 1),          # output_padding < dilation at stride 1
    ((4, 4), (4, 4), 2, 1, 0, 1, 1),                    # the DCGAN layer
    ((4, 5), (3, 3), 2, 1, 1, 1, 2),
    ((3, 4), (3, 2), (3, 2), (2, 0), (1, 1), (1, 2), 2),
    ((3, 3), (2, 3), 3, 0, 2, 1, 1),                    # kernel shorter than the stride
    ((5, 4), (3, 3), 2, 3, 0, 1, 1),                    # padding larger than dilation * (k - 1)
    ((3, 3), (2, 2), 2, 0, 2, 3, 1),                    # output_padding >= stride, < dilation
    ((1, 1), (4, 4), 1, 0, 0, 1, 1),                    # a latent code
    ((1, 1), (3, 2), 2, (1, 0), 1, (2, 1), 2),
]


@pytest.mark.parametrize("hw, k, st, pd, op, dl, g", GRID_2D)
def test_conv_transpose2d_values_and_gradients_as_torch(hw, k, st, pd, op, dl, g):
    cin, cpg = 4, 3
    x = RNG.standard_normal((2, cin) + hw)
    w = RNG.standard_normal((cin, cpg) + k)
    b = RNG.standard_normal(cpg * g)
    res = _run_both(lambda x, w, b: F.conv_transpose2d(x, w, b, st, pd, op, g, dl),
                    lambda x, w, b: TF.conv_transpose2d(x, w, b, st, pd, op, g, dl), [x, w, b])
    _assert_same(*res)


@pytest.mark.parametrize("L, k, st, pd, op, dl, g", [
    (7, 3, 1, 0, 0, 1, 1), (7, 3, 2, 1, 1, 1, 2), (5, 4, 3, 2, 2, 2, 1), (1, 3, 2, 0, 0, 1, 2),
])
def test_conv_transpose1d_values_and_gradients_as_torch(L, k, st, pd, op, dl, g):
    x, w, b = RNG.standard_normal((3, 4, L)), RNG.standard_normal((4, 2, k)), RNG.standard_normal(2 * g)
    res = _run_both(lambda x, w, b: F.conv_transpose1d(x, w, b, st, pd, op, g, dl),
                    lambda x, w, b: TF.conv_transpose1d(x, w, b, st, pd, op, g, dl), [x, w, b])
    _assert_same(*res)


def test_unbatched_and_no_bias_as_torch():
    x, w = RNG.standard_normal((4, 3, 5)), RNG.standard_normal((4, 2, 3, 3))
    _assert_same(*_run_both(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
                            lambda x, w: TF.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), [x, w]))
    x1, w1 = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 2, 3))
    _assert_same(*_run_both(lambda x, w: F.conv_transpose1d(x, w, stride=2),
                            lambda x, w: TF.conv_transpose1d(x, w, stride=2), [x1, w1]))


def test_float32_stays_float32_and_matches_torch():
    x = RNG.standard_normal((2, 8, 4, 4)).astype(np.float32)
    w = (RNG.standard_normal((8, 4, 4, 4)) * 0.1).astype(np.float32)
    res = _run_both(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
                    lambda x, w: TF.conv_transpose2d(x, w, stride=2, padding=1), [x, w])
    assert res[0].dtype == rg.float32 and res[2][1].grad.dtype == rg.float32
    _assert_same(*res, tol=1e-5)


@pytest.mark.parametrize("hw, st, pd, op, dl", [((1, 1), 2, 1, 1, 1), ((3, 2), 1, 1, 0, 2), ((2, 3), 2, 1, 1, 1)])
def test_gradcheck_and_gradgradcheck(hw, st, pd, op, dl):
    x = rg.tensor(RNG.standard_normal((1, 2) + hw), requires_grad=True)
    w = rg.tensor(RNG.standard_normal((2, 2, 3, 2)), requires_grad=True)
    b = rg.tensor(RNG.standard_normal(4), requires_grad=True)

    def fn(x, w, b):
        return F.conv_transpose2d(x, w, b, st, pd, op, 2, dl)
    assert rg.autograd.gradcheck(fn, (x, w, b))
    assert rg.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("cls, args, kwargs, x_shape", [
    ("ConvTranspose2d", (6, 4, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 6, 4, 5)),
    ("ConvTranspose2d", (3, 5, (2, 3)), dict(dilation=2, bias=False), (3, 4, 4)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=3, padding=1, groups=2), (2, 4, 5)),
])
def test_modules_as_torch(cls, args, kwargs, x_shape):
    mr = getattr(rg.nn, cls)(*args, **kwargs, dtype=rg.float64)
    mt = getattr(torch.nn, cls)(*args, **kwargs).double()
    assert repr(mr) == repr(mt)
    assert tuple(mr.weight.shape) == tuple(mt.weight.shape)
    assert mr.transposed and mr.output_padding == mt.output_padding
    # torch's default init: U(-k, k), k = 1 / sqrt(out_channels / groups * prod(kernel))
    bound = 1 / np.sqrt(mt.weight.shape[1] * np.prod(mt.kernel_size))
    assert np.abs(mr.weight.detach().numpy()).max() <= bound
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(mr.weight.detach().numpy()))
        if mt.bias is not None:
            mt.bias.copy_(torch.tensor(mr.bias.detach().numpy()))
    x = RNG.standard_normal(x_shape)
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = mr(a), mt(b)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mr.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.float32_default
def test_module_parameters_in_the_default_dtype():
    m = rg.nn.ConvTranspose2d(2, 3, 4)
    assert m.weight.dtype == rg.float32 and m.bias.dtype == rg.float32
    assert tuple(m.weight.shape) == (2, 3, 4, 4)


def test_output_size_picks_output_padding_as_torch():
    mr, mt = rg.nn.ConvTranspose2d(2, 2, 3, stride=3, padding=1), torch.nn.ConvTranspose2d(2, 2, 3, stride=3, padding=1)
    x = np.ones((1, 2, 4, 4))
    for size in [(10, 11), (1, 2, 12, 10), [12, 12]]:
        assert tuple(mr(rg.tensor(x), output_size=size).shape) == tuple(mt(torch.tensor(x).float(), size).shape)
    assert tuple(mr(rg.ones(2, 4, 4), output_size=(2, 11, 12)).shape) == (2, 11, 12)
    for bad in [(13, 10), (9, 10)]:
        with pytest.raises(ValueError, match="valid sizes range from"):
            mt(torch.ones(1, 2, 4, 4), bad)
        with pytest.raises(ValueError, match=r"valid sizes range from \[10, 10\] to \[12, 12\]"):
            mr(rg.ones(1, 2, 4, 4), output_size=bad)
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        mr(rg.ones(1, 2, 4, 4), output_size=(10, 10, 10))


def test_module_argument_errors_as_torch():
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        rg.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        rg.nn.ConvTranspose1d(3, 2, 3, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        rg.nn.ConvTranspose2d(2, 2, 3, groups=0)


@pytest.mark.parametrize("call, match", [
    (lambda f, m: f.conv_transpose2d(m.ones(1, 3, 5, 5), m.ones(4, 2, 3, 3)),
     r"weight of size \[4, 2, 3, 3\], expected input\[1, 3, 5, 5\] to have 4 channels, but got 3"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3), groups=3),
     "expected weight to be divisible by 3 at dimension 0"),
    (lambda f, m: f.conv_transpose2d(m.ones(4, 5), m.ones(4, 2, 3, 3)),
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv_transpose2d, but got input of size: \[4, 5\]"),
    (lambda f, m: f.conv_transpose1d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3)),
     r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv_transpose1d"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 1, 1), m.ones(4, 2, 3, 3), padding=3),
     r"Calculated output size per channel: \(-3 x -3\). Output size is too small"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3), dilation=0),
     "dilation should be greater than zero"),
    (lambda f, m: f.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 2, 3, 3), bias=m.ones(3)),
     "expected bias to be 1-dimensional with 2 elements, but got bias of size"),
])
def test_functional_errors_as_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(TF, torch)
    with pytest.raises(RuntimeError, match=match):
        call(F, rg)
