"""Stride-1 conv2d without groups on images of >= 64 pixels, NumPy float32 or
float64 operands of one dtype and a column matrix of depth channels * kernel
size <= 576: the per-image column-matrix kernels with C loops
(_nn_loops.pyx): im2col and GEMM forward, GEMM and col2im input gradient,
im2col and GEMM weight gradient. Forward and both gradients against torch
for padding that reaches past the kernel, asymmetric padding, dilation,
kernels as large as the padded input, the depth limit on both sides,
non-contiguous operands, one image, no image and unbatched input, and the
neighbours that must not take the path (stride, groups, < 64 pixels). The
bias op _conv2d_bias (a bias of the input's dtype added in the kernel)
against the conv plus a separate add; a bias of another dtype; a bias of
the wrong size."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = rg.nn.functional

RNG = np.random.default_rng(11)


def _r(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _check(x, w, b, kw, rtol=1e-9, atol=1e-10, scaled=False):
    # scaled: atol is relative to each compared array's largest magnitude. A
    # float32 weight gradient sums thousands of products of size ~1, so an
    # entry that cancels to ~0.4 out of terms of ~100 carries an absolute
    # rounding error of ~1e-4 whichever BLAS computes it (torch's included).
    rt = [rg.tensor(a, requires_grad=True) for a in (x, w, b)]
    tt = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # torch: 'same' with even kernels
        ro = F.conv2d(*rt, **kw)
        to = TF.conv2d(*tt, **kw)
    assert tuple(ro.shape) == tuple(to.shape)
    assert ro.dtype == x.dtype
    def close(actual, desired):
        tol = atol * max(1.0, float(np.abs(desired).max(initial=0))) if scaled else atol
        np.testing.assert_allclose(actual, desired, rtol=rtol, atol=tol)

    close(np.asarray(ro.detach()), to.detach().numpy())
    v = _r(*to.shape, dtype=x.dtype)
    rg_g = rg.autograd.grad(ro, rt, rg.tensor(v))
    t_g = torch.autograd.grad(to, tt, torch.tensor(v))
    for a, b_ in zip(rg_g, t_g):
        assert a.dtype == x.dtype
        close(np.asarray(a), b_.numpy())


# (in_channels, out_channels, kernel, (H, W), kwargs)
CASES = [
    (3, 16, (3, 3), (12, 12), dict(padding=1)),              # conv2d_step's first layer
    (16, 32, (3, 3), (12, 12), dict(padding=1)),             # and its second
    (4, 5, (3, 3), (9, 11), dict(padding=3)),                # whole rows and columns of padding
    (3, 4, (2, 3), (8, 9), dict(padding=(0, 3), dilation=(1, 4))),   # a tap reading 1 column
    (2, 3, (7, 7), (8, 8), dict()),                          # 2x2 output
    (5, 4, (8, 8), (8, 8), dict()),                          # 1x1 output, kernel = input
    (6, 6, (2, 4), (8, 10), dict(padding="same")),           # asymmetric padding
    (4, 3, (4, 3), (9, 8), dict(padding="same", dilation=(2, 1))),
    (7, 5, (5, 1), (10, 7), dict(padding=(2, 0), dilation=2)),
    (20, 9, (1, 1), (8, 8), dict()),
    (3, 2, (3, 3), (1, 70), dict(padding=(1, 1))),           # one row: a conv1d's shape
    (64, 3, (3, 3), (8, 8), dict(padding=1)),                # depth 576: the largest taken
    (65, 3, (3, 3), (8, 8), dict(padding=1)),                # 585: a GEMM per tap instead
    (2, 70, (3, 3), (8, 8), dict(padding=1)),                # input gradient's GEMM depth 70
    # neighbours that take other kernels
    (6, 4, (3, 3), (9, 9), dict(padding=1, stride=2)),
    (6, 4, (3, 3), (9, 9), dict(padding=1, groups=2)),
    (3, 4, (3, 3), (7, 7), dict(padding=1)),                 # 49 pixels: one batch im2col
]


@pytest.mark.parametrize("cin,cout,ksize,hw,kw", CASES, ids=str)
def test_conv2d_cols_matches_torch(cin, cout, ksize, hw, kw):
    g = kw.get("groups", 1)
    _check(_r(3, cin, *hw), _r(cout, cin // g, *ksize), _r(cout), kw)


@pytest.mark.parametrize("cin,cout", [(3, 16), (16, 32)])
def test_conv2d_cols_float32_matches_torch(cin, cout):
    x = _r(4, cin, 32, 32, dtype=np.float32)
    w = (_r(cout, cin, 3, 3) / np.sqrt(cin * 9)).astype(np.float32)
    _check(x, w, _r(cout, dtype=np.float32), dict(padding=1), rtol=1e-4, atol=2e-5, scaled=True)


def test_conv2d_cols_non_contiguous_operands():
    # a transposed input, a weight sliced out of a larger one and a strided
    # output gradient: the kernels copy what they need
    xb, wb = _r(2, 5, 11, 9), _r(6, 5, 3, 6)
    v = _r(2, 6, 11, 9, 2)[..., 0]
    rx, rw = rg.tensor(xb, requires_grad=True), rg.tensor(wb, requires_grad=True)
    tx, tw = torch.tensor(xb, requires_grad=True), torch.tensor(wb, requires_grad=True)
    outs = []
    for mod, F_, a, b in ((rg, F, rx, rw), (torch, TF, tx, tw)):
        y = F_.conv2d(a.transpose(2, 3), b[:, :, :, ::2], padding=1)
        outs.append([np.asarray(y.detach())]
                    + [np.asarray(t) for t in mod.autograd.grad(y, [a, b], mod.tensor(v.transpose(0, 1, 3, 2)))])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_conv2d_cols_one_image_unbatched_and_empty_batch():
    w, b = _r(4, 3, 3, 3), _r(4)
    _check(_r(1, 3, 10, 10), w, b, dict(padding=1))
    # unbatched (C, H, W)
    x = _r(3, 10, 10)
    ro = F.conv2d(rg.tensor(x), rg.tensor(w), rg.tensor(b), padding=1)
    to = TF.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), padding=1)
    np.testing.assert_allclose(np.asarray(ro), to.numpy(), rtol=1e-9, atol=1e-10)
    # no image: an empty output, a zero weight gradient
    rx, rw = rg.tensor(_r(0, 3, 10, 10), requires_grad=True), rg.tensor(w, requires_grad=True)
    y = F.conv2d(rx, rw, padding=1)
    assert tuple(y.shape) == (0, 4, 10, 10)
    gx, gw = rg.autograd.grad(y.sum(), [rx, rw])
    assert tuple(gx.shape) == (0, 3, 10, 10)
    np.testing.assert_array_equal(np.asarray(gw), np.zeros_like(w))


def test_conv2d_cols_float32_double_backward_matches_torch():
    x, w = _r(2, 4, 9, 8, dtype=np.float32), _r(6, 4, 3, 3, dtype=np.float32)
    res = []
    for mod, F_ in ((rg, F), (torch, TF)):
        a, b = mod.tensor(x, requires_grad=True), mod.tensor(w, requires_grad=True)
        out = F_.conv2d(a, b, padding=1)
        g = mod.autograd.grad((out * out).sum(), [a, b], create_graph=True)
        s = (g[0] * g[0]).sum() + (g[1] * g[1] * g[1]).sum()
        res.append([np.asarray(t.detach()) for t in mod.autograd.grad(s, [a, b])])
    for a, b in zip(*res):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3 * np.abs(b).max())


@pytest.mark.parametrize("hw", [(10, 10), (5, 5)], ids=["cols", "batch_im2col"])
def test_conv2d_bias_op_matches_add(hw):
    # a bias of the input's dtype goes into the conv op (_conv2d_bias): the
    # same values as the conv plus a broadcast add, and the bias gradient is
    # the output gradient's sum over images and pixels
    for dt in (np.float32, np.float64):
        x, w, b = _r(3, 4, *hw, dtype=dt), _r(5, 4, 3, 3, dtype=dt), _r(5, dtype=dt)
        rt = [rg.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = F.conv2d(*rt, padding=1)
        ref = rg._conv2d(rg.tensor(x), rg.tensor(w), (1, 1), (1, 1, 1, 1), (1, 1), 1)
        np.testing.assert_array_equal(np.asarray(y.detach()), np.asarray(ref) + b.reshape(-1, 1, 1))
        v = _r(*y.shape, dtype=dt)
        gb = rg.autograd.grad(y, rt[2], rg.tensor(v))[0]
        assert gb.dtype == dt
        np.testing.assert_allclose(np.asarray(gb), v.sum((0, 2, 3)), rtol=1e-5)


def test_conv2d_bias_other_dtype_is_promoted():
    # a float64 bias on float32 input and weight: a broadcast add as before
    # (NumPy promotion), its gradient float64
    x, w, b = _r(2, 3, 9, 9, dtype=np.float32), _r(4, 3, 3, 3, dtype=np.float32), _r(4)
    rb = rg.tensor(b, requires_grad=True)
    y = F.conv2d(rg.tensor(x), rg.tensor(w), rb, padding=1)
    conv = np.asarray(F.conv2d(rg.tensor(x), rg.tensor(w), padding=1))
    assert y.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(y.detach()), conv + b.reshape(-1, 1, 1))
    y.sum().backward()
    assert rb.grad.dtype == np.float64
    np.testing.assert_allclose(np.asarray(rb.grad), np.full(4, 2 * 81.0))


def test_conv2d_bias_of_wrong_size_raises():
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 4 elements"):
        F.conv2d(rg.zeros(1, 3, 9, 9), rg.zeros(4, 3, 3, 3), rg.zeros(3))
