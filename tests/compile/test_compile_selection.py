"""Ops that select by value compile: the backward of max/min over a dim,
sort, topk and max_pool2d reads positions that the program computes from
each call's input (ops on the saved indices tensor, or an op that finds the
pooling windows' maxima), never positions baked in at trace time. Each
test draws new inputs for every call, so that the selected positions move,
and compares values and gradients with eager's; one also takes a second
derivative through the compiled node."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
import retrograd.nn.functional as F

RNG = np.random.default_rng(21)


def _same_as_eager(check, fn, shape, calls=4):
    cf = rg.compile(fn, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a graph break warns: fail on it
        for _ in range(calls):
            check(cf, fn, RNG.standard_normal(shape), atol=1e-15)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    return cf


@pytest.mark.parametrize("keepdim", [False, True])
def test_max_and_min_over_a_dim(keepdim, assert_matches_eager):
    def f(x):
        return (x.max(1, keepdim=keepdim).values * 2.0).sum() - x.min(0, keepdim=keepdim).values.sum()
    _same_as_eager(assert_matches_eager, f, (5, 6))


def test_sort_and_topk(assert_matches_eager):
    def f(x):
        s = x.sort(1, descending=True).values
        t = x.topk(2, dim=0).values
        return (s * rg.arange(6.0)).sum() + (t ** 2).sum()
    _same_as_eager(assert_matches_eager, f, (4, 6))


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1}])
def test_max_pool2d(kw, assert_matches_eager):
    weight = rg.tensor(RNG.standard_normal((3, 2, 3, 3)), requires_grad=True)

    def f(x):
        h = F.conv2d(x, weight, padding=1).relu()
        return (F.max_pool2d(h, **kw) ** 2).sum()
    _same_as_eager(assert_matches_eager, f, (2, 2, 6, 6))


def test_a_small_cnn_classifier_step_compiles_with_new_labels_each_call():
    conv = rg.tensor(RNG.standard_normal((4, 1, 3, 3)) * 0.3, requires_grad=True)
    lin = rg.tensor(RNG.standard_normal((4 * 3 * 3, 5)) * 0.1, requires_grad=True)

    def loss(x, y):
        h = F.max_pool2d(F.conv2d(x, conv, padding=1).relu(), 2)
        return F.cross_entropy(h.reshape(x.shape[0], -1) @ lin, y)
    cf = rg.compile(loss, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            x = rg.tensor(RNG.standard_normal((8, 1, 6, 6)))
            y = rg.tensor(RNG.integers(0, 5, 8))
            conv.grad = lin.grad = None
            got = cf(x, y)
            got.backward()
            g = (conv.grad.numpy().copy(), lin.grad.numpy().copy())
            conv.grad = lin.grad = None
            want = loss(x, y)
            want.backward()
            np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
            np.testing.assert_allclose(g[0], conv.grad.numpy(), rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(g[1], lin.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}


def test_second_derivative_through_max_pool2d_and_max_over_a_dim():
    @rg.compile(backend="numpy")
    def f(x):
        return (F.max_pool2d(x, 2) ** 3).sum() + (x.max(2).values ** 2).sum()
    for _ in range(2):
        a = RNG.standard_normal((1, 2, 4, 4))
        x, y = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        (gx,) = rg.autograd.grad(f(x), (x,), create_graph=True)
        (gy,) = rg.autograd.grad((F.max_pool2d(y, 2) ** 3).sum() + (y.max(2).values ** 2).sum(), (y,),
                                 create_graph=True)
        (hx,) = rg.autograd.grad(gx.sum(), (x,))
        (hy,) = rg.autograd.grad(gy.sum(), (y,))
        np.testing.assert_allclose(gx.detach().numpy(), gy.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(hx.numpy(), hy.numpy(), rtol=1e-12)
