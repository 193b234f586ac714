"""Stride-1 conv2d/conv1d on images large enough (>= 64 pixels) and with
enough channels to take the shifted-GEMM kernels (_nn_loops.pyx):
forward, both gradients and double backward against torch, in their four
modes (without groups and with a depth channels * kernel size of at most
576, a column matrix per image; otherwise a GEMM per tap for >= 16 channels
per group, width taps gathered below that, all taps gathered when channels
* kernel width < 16), with groups, dilation and asymmetric ('same', even
kernel) padding."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = rg.nn.functional

RNG = np.random.default_rng(7)


def _r(*shape):
    return RNG.standard_normal(shape)


def _check(x, w, b, kw, rtol=1e-9, atol=1e-10):
    rt = [rg.tensor(a, requires_grad=True) for a in (x, w, b)]
    tt = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # torch: 'same' with even kernels
        ro = F.conv2d(*rt, **kw)
        to = TF.conv2d(*tt, **kw)
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=rtol, atol=atol)
    v = _r(*to.shape)
    rg_g = rg.autograd.grad(ro, rt, rg.tensor(v))
    t_g = torch.autograd.grad(to, tt, torch.tensor(v))
    for a, b_ in zip(rg_g, t_g):
        np.testing.assert_allclose(np.asarray(a), b_.numpy(), rtol=rtol, atol=atol)


# (in_channels, out_channels, kernel, kwargs); the forward's mode follows
# in_channels / groups, the input gradient's out_channels / groups
CASES = [
    (3, 16, (3, 3), dict(padding=1)),
    (2, 6, (3, 3), dict(padding=1, groups=2)),
    (16, 8, (3, 3), dict(padding=1)),
    (8, 16, (3, 3), dict(padding=1)),
    (6, 20, (3, 3), dict()),
    (32, 16, (3, 3), dict(padding=2, dilation=2, groups=2)),
    (12, 18, (3, 3), dict(padding=(2, 0), dilation=(2, 1), groups=3)),
    (16, 4, (2, 4), dict(padding="same")),
    (9, 6, (4, 3), dict(padding="same", dilation=(1, 2))),
    (20, 20, (1, 1), dict()),
    (4, 8, (5, 5), dict(padding=2)),
    # deeper than 576 without groups: a GEMM per tap (forward depth 72*9,
    # input gradient 80*9; forward 24*25 = 600, its input gradient 3*25 a
    # column matrix per image)
    (72, 80, (3, 3), dict(padding=1)),
    (24, 3, (5, 5), dict(padding=(1, 2), dilation=(2, 1))),
]


@pytest.mark.parametrize("cin,cout,ksize,kw", CASES, ids=str)
def test_conv2d_stride1_matches_torch(cin, cout, ksize, kw):
    g = kw.get("groups", 1)
    _check(_r(2, cin, 9, 11), _r(cout, cin // g, *ksize), _r(cout), kw)


def test_conv2d_stride1_single_image_and_float32():
    x = _r(1, 16, 12, 10).astype(np.float32)
    w = _r(8, 16, 3, 3).astype(np.float32)
    _check(x, w, _r(8).astype(np.float32), dict(padding=1), rtol=1e-4, atol=1e-4)
    rx = rg.tensor(x, requires_grad=True)
    rw = rg.tensor(w, requires_grad=True)
    out = F.conv2d(rx, rw, padding=1)
    assert out.dtype == np.float32
    out.sum().backward()
    assert rx.grad.dtype == np.float32 and rw.grad.dtype == np.float32


def test_conv1d_long_signal_matches_torch():
    x, w, b = _r(3, 16, 80), _r(8, 16, 5), _r(8)
    rt = [rg.tensor(a, requires_grad=True) for a in (x, w, b)]
    tt = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ro, to = F.conv1d(*rt, padding=2), TF.conv1d(*tt, padding=2)
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=1e-9, atol=1e-10)
    for a, b_ in zip(rg.autograd.grad(ro.sum(), rt), torch.autograd.grad(to.sum(), tt)):
        np.testing.assert_allclose(np.asarray(a), b_.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_stride1_double_backward_matches_torch(groups):
    # the two gradient ops are themselves differentiated (through the
    # shifted kernels: their backwards are the other two conv ops)
    x, w = _r(2, 16, 9, 8), _r(16, 16 // groups, 3, 3)
    rx, rw = rg.tensor(x, requires_grad=True), rg.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    res = []
    for mod, F_, a, b in ((rg, F, rx, rw), (torch, TF, tx, tw)):
        out = F_.conv2d(a, b, padding=1, groups=groups)
        g = mod.autograd.grad((out * out).sum(), [a, b], create_graph=True)
        s = (g[0] * g[0]).sum() + (g[1] * g[1] * g[1]).sum()
        res.append([np.asarray(t.detach()) for t in mod.autograd.grad(s, [a, b])])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-8)


def test_conv2d_stride1_kernel_larger_than_input_raises():
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(rg.zeros(1, 16, 8, 8), rg.zeros(4, 16, 11, 3))
