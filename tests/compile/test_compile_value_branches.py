"""Backward formulas that branch on the values (prod's and cumprod's
division form, which fails on a zero; det's, which depends on whether the
matrix is singular) must not be compiled as one branch: a program traced on
inputs without zeros once gave NaN gradients for an input with a zero."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.compile.exc import Unsupported

# traced on the first (no zeros), then run on the others
_VECTORS = [[1.5, 2.0, -3.0, 0.5], [2.0, -1.0, 4.0, 3.0], [0.0, 2.0, 3.0, -1.0],
            [2.0, 0.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0]]


def _check(f, inputs, create_graph=False):
    cf = rg.compile(f, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # the key compiles
        for a in inputs:
            x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
            (g,) = rg.autograd.grad(cf(x), [x], create_graph=create_graph)
            (ge,) = rg.autograd.grad(f(xe), [xe], create_graph=create_graph)
            np.testing.assert_allclose(g.detach().numpy(), ge.detach().numpy(), rtol=1e-12)
            if create_graph:
                (gg,) = rg.autograd.grad(g.sum(), [x])
                (gge,) = rg.autograd.grad(ge.sum(), [xe])
                np.testing.assert_allclose(gg.numpy(), gge.numpy(), rtol=1e-12, atol=1e-12)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}


@pytest.mark.parametrize("create_graph", [False, True])
def test_prod_gradients_with_zeros_after_a_trace_without(create_graph):
    _check(lambda x: x.prod(), _VECTORS, create_graph)


def test_prod_over_a_dim_with_zeros():
    mats = [np.array(v).reshape(2, 2) for v in _VECTORS]
    _check(lambda x: (x.prod(1) * rg.tensor([1.0, -2.0])).sum(), mats)


@pytest.mark.parametrize("create_graph", [False, True])
def test_cumprod_gradients_with_zeros_after_a_trace_without(create_graph):
    _check(lambda x: (x.cumprod(0) * rg.tensor([1.0, -1.0, 2.0, 0.5])).sum(), _VECTORS,
           create_graph)


def test_det_backward_runs_eagerly_and_right_on_singular_matrices():
    def f(x):
        return rg.linalg.det(x)
    cf = rg.compile(f, backend="numpy")
    with pytest.warns(RuntimeWarning, match="linalg.det's backward"):
        cf(rg.tensor(np.eye(2) * 2.0, requires_grad=True))
    for a in ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]):
        x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        cf(x).backward()
        f(xe).backward()
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-12)
    assert cf.cache_info() == {"compiled": 0, "eager": 1}
    with pytest.raises(Unsupported, match="linalg.det's backward"):
        rg.compile(f, fullgraph=True)(rg.tensor(np.eye(2), requires_grad=True))


def test_a_boolean_mask_tensor_breaks_the_graph_and_stays_right():
    # x[x > 0] has as many elements as x has positive values: no program of
    # fixed shapes replays it (the first version crashed in the check)
    def f(x):
        return (x[x > 0] ** 2).sum() + x[x > 0].mean()
    cf = rg.compile(f, backend="numpy")
    with pytest.warns(RuntimeWarning, match="boolean mask"):
        cf(rg.tensor([1.0, -2.0, 3.0], requires_grad=True))
    for a in ([1.0, 2.0, 3.0], [-1.0, -2.0, 3.0], [0.5, -1.0, -1.5]):
        x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        cf(x).backward()
        f(xe).backward()
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-12)
    with pytest.raises(Unsupported, match="boolean mask"):
        rg.compile(f, fullgraph=True)(rg.tensor([1.0, -2.0, 3.0]))


def test_a_boolean_numpy_mask_argument_compiles():
    # (the guard key holds it by value: its count of True is fixed)
    def f(x, m):
        return (x[m] ** 2).sum()
    cf = rg.compile(f, backend="numpy")
    m = np.array([True, False, True])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a in ([1.0, -2.0, 3.0], [4.0, 5.0, -6.0]):
            assert cf(rg.tensor(a), m).item() == f(rg.tensor(a), m).item()
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
