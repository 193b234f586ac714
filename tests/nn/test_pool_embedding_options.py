"""Pooling and embedding options of nn.functional against torch: max_pool2d(return_indices)
and ceil_mode, avg_pool2d(ceil_mode) with count_include_pad /
divisor_override, and embedding's max_norm and scale_grad_by_freq."""
import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import retrograd as rg
import retrograd.nn.functional as F

RNG = np.random.default_rng(11)


def _vjp_match(rfn, tfn, a, rtol=1e-10):
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = rfn(x), tfn(tx)
    assert y.shape == tuple(ty.shape)
    np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy(), rtol=rtol, atol=1e-12)
    v = RNG.standard_normal(tuple(ty.shape))
    g, = rg.autograd.grad(y, x, rg.tensor(v))
    tg, = torch.autograd.grad(ty, tx, torch.tensor(v))
    np.testing.assert_allclose(np.asarray(g), tg.numpy(), rtol=rtol, atol=1e-12)


# every small geometry where ceil_mode changes (or does not change) the output
_CEIL_CASES = [(H, W, k, s, p) for H, W in ((5, 6), (7, 4), (4, 4)) for k, s, p in
               itertools.product((2, 3), (1, 2, 3), (0, 1)) if p <= k // 2 and k <= H + 2 * p]


@pytest.mark.parametrize("H,W,k,s,p", _CEIL_CASES)
def test_max_pool2d_ceil_mode_matches_torch(H, W, k, s, p):
    a = RNG.standard_normal((2, 2, H, W))
    _vjp_match(lambda x: F.max_pool2d(x, k, s, p, ceil_mode=True),
               lambda x: TF.max_pool2d(x, k, s, p, ceil_mode=True), a)
    _vjp_match(lambda x: F.max_pool2d(x, k, s, p, dilation=2, ceil_mode=True),
               lambda x: TF.max_pool2d(x, k, s, p, dilation=2, ceil_mode=True), a) \
        if H + 2 * p >= 2 * k - 1 and W + 2 * p >= 2 * k - 1 else None


@pytest.mark.parametrize("H,W,k,s,p", _CEIL_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_ceil_mode_matches_torch(H, W, k, s, p, count_include_pad):
    a = RNG.standard_normal((2, 2, H, W))
    _vjp_match(lambda x: F.avg_pool2d(x, k, s, p, True, count_include_pad),
               lambda x: TF.avg_pool2d(x, k, s, p, True, count_include_pad), a)
    _vjp_match(lambda x: F.avg_pool2d(x, k, s, p, True, count_include_pad, divisor_override=3),
               lambda x: TF.avg_pool2d(x, k, s, p, True, count_include_pad, divisor_override=3), a)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)),
                                dict(kernel_size=2, ceil_mode=True), dict(kernel_size=3, stride=2,
                                                                          padding=1, ceil_mode=True)],
                         ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 7, 6), (3, 5, 5)])
def test_max_pool2d_return_indices_matches_torch(kw, shape):
    a = RNG.standard_normal(shape)
    a[..., 0, :2] = 5.0                        # a tie: the first index wins, as torch's
    out, idx = F.max_pool2d(rg.tensor(a), return_indices=True, **kw)
    tout, tidx = TF.max_pool2d(torch.tensor(a), return_indices=True, **kw)
    np.testing.assert_array_equal(np.asarray(out), tout.numpy())
    assert idx.dtype == np.int64 and not idx.requires_grad
    np.testing.assert_array_equal(np.asarray(idx), tidx.numpy())
    # the values are the input gathered at the indices
    flat = a.reshape(a.shape[:-2] + (-1,))
    np.testing.assert_array_equal(np.take_along_axis(flat, np.asarray(idx).reshape(idx.shape[:-2] + (-1,)),
                                                     -1).reshape(idx.shape), np.asarray(out))


def test_max_pool2d_return_indices_keeps_the_graph():
    a = RNG.standard_normal((1, 2, 5, 5))
    x = rg.tensor(a, requires_grad=True)
    out, idx = F.max_pool2d(x, 2, ceil_mode=True, return_indices=True)
    out.sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    TF.max_pool2d(tx, 2, ceil_mode=True).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), tx.grad.numpy())


def test_pool_ceil_mode_second_order_matches_torch():
    a = RNG.standard_normal((1, 2, 5, 7))
    for rf, tf in ((lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                    lambda x: TF.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
                   (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
                    lambda x: TF.max_pool2d(x, 3, 2, 1, ceil_mode=True))):
        x = rg.tensor(a, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        g, = rg.autograd.grad((rf(x) ** 2).sum(), x, create_graph=True)
        tg, = torch.autograd.grad((tf(tx) ** 2).sum(), tx, create_graph=True)
        np.testing.assert_allclose(np.asarray(g.detach()), tg.detach().numpy(), rtol=1e-12)
        gg, = rg.autograd.grad((g * g).sum(), x)
        tgg, = torch.autograd.grad((tg * tg).sum(), tx)
        np.testing.assert_allclose(np.asarray(gg), tgg.numpy(), rtol=1e-12)


# --- embedding -------------------------------------------------------------------------

_IDX = np.array([[0, 2, 2, 5], [5, 5, 1, 2]])


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_scale_grad_by_freq_matches_torch(padding_idx):
    w = RNG.standard_normal((7, 3))
    _vjp_match(lambda t: F.embedding(rg.tensor(_IDX), t, padding_idx, scale_grad_by_freq=True),
               lambda t: TF.embedding(torch.tensor(_IDX), t, padding_idx, scale_grad_by_freq=True), w)


@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (0.5, 1.0), (1.2, 3.0), (0.7, float("inf"))])
def test_embedding_max_norm_renormalizes_in_place_like_torch(max_norm, norm_type):
    w = RNG.standard_normal((7, 3)) * 2
    rw = rg.tensor(w.copy(), requires_grad=True)
    tw = torch.tensor(w.copy(), requires_grad=True)
    v0 = rw._version
    out = F.embedding(rg.tensor(_IDX), rw, max_norm=max_norm, norm_type=norm_type)
    tout = TF.embedding(torch.tensor(_IDX), tw, max_norm=max_norm, norm_type=norm_type)
    # the referenced rows of weight itself were scaled, the others untouched
    np.testing.assert_allclose(np.asarray(rw.detach()), tw.detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(rw.detach())[[3, 4, 6]], w[[3, 4, 6]])
    assert rw._version > v0
    np.testing.assert_allclose(np.asarray(out.detach()), tout.detach().numpy(), rtol=1e-12)
    v = RNG.standard_normal(tout.shape)
    g, = rg.autograd.grad(out, rw, rg.tensor(v))
    tg, = torch.autograd.grad(tout, tw, torch.tensor(v))
    np.testing.assert_allclose(np.asarray(g), tg.numpy(), rtol=1e-12)


def test_embedding_max_norm_with_scale_grad_and_padding():
    w = RNG.standard_normal((7, 3)) * 2
    _vjp_match(lambda t: F.embedding(rg.tensor(_IDX), t * 1.0, 1, 1.5, 2.0, True),
               lambda t: TF.embedding(torch.tensor(_IDX), t * 1.0, 1, 1.5, 2.0, True), w)


def test_embedding_errors():
    w = rg.ones((4, 2), requires_grad=True)
    with pytest.raises(ValueError, match="sparse=False"):
        F.embedding(rg.tensor([0, 1]), w, sparse=True)
    with pytest.raises(IndexError, match="out of range"):
        F.embedding(rg.tensor([0, 4]), w, max_norm=1.0)
