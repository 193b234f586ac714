"""Tensor.copy_ against torch: values, broadcasting, dtype casts, gradients
(src gets the gradient, the overwritten values none) and misuse errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd as rg  # noqa: E402


def test_copy_broadcasts_and_casts():
    a = rg.zeros(2, 3)
    a.copy_(rg.tensor(np.array([1, 2, 3], dtype=np.int64)))
    np.testing.assert_array_equal(np.asarray(a), [[1, 2, 3], [1, 2, 3]])
    assert a.dtype == np.float64 or a.dtype == np.float32
    b = rg.zeros(2)
    b.copy_(np.array([4.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(b), [4.0, 5.0])
    with pytest.raises(RuntimeError):
        rg.zeros(2, 3).copy_(rg.ones(4))


def test_copy_gradients_match_torch():
    x0 = np.array([[0.5, -1.0, 2.0], [1.0, 3.0, -0.5]])
    s0 = np.array([1.5, 2.5, -3.0])

    def run(lib, mk):
        x = mk(x0, True)
        s = mk(s0, True)
        y = x * 2
        y[0].copy_(s * s)
        (y * y).sum().backward()
        return y, x.grad, s.grad

    y, gx, gs = run(rg, lambda a, r: rg.tensor(a, requires_grad=r))
    ty, tgx, tgs = run(torch, lambda a, r: torch.tensor(a, requires_grad=r))
    np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy())
    np.testing.assert_allclose(np.asarray(gx), tgx.numpy())
    np.testing.assert_allclose(np.asarray(gs), tgs.numpy())


def test_copy_into_tensor_that_requires_grad_keeps_it_in_the_graph():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.copy_(rg.tensor([np.inf, np.nan]))       # a constant, and nan/inf do not leak into x's grad
    assert y.requires_grad
    (y * 0 + 1).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 0.0])


def test_copy_into_leaf_that_requires_grad_raises():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.copy_(rg.ones(2))
    with rg.no_grad():
        x.copy_(rg.ones(2))
    np.testing.assert_array_equal(np.asarray(x.detach()), [1.0, 1.0])
