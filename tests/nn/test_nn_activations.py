"""rg.nn.functional's activations (relu, gelu, silu, softplus, sigmoid, tanh)
against torch.nn.functional: values, gradients, keyword arguments, inplace."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

X = np.array([[-3.0, -0.5, 0.0], [0.25, 1.5, 30.0]])

CASES = [
    ("relu", {}),
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 5.0}),
    ("sigmoid", {}),
    ("tanh", {}),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_activation_matches_torch(name, kwargs):
    x = rg.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    y = getattr(F, name)(x, **kwargs)
    yt = getattr(TF, name)(xt, **kwargs)
    np.testing.assert_allclose(np.asarray(y.detach()), yt.detach().numpy(), rtol=1e-12, atol=1e-15)
    g = np.arange(1.0, 7.0).reshape(2, 3)
    y.backward(rg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["relu", "silu"])
def test_inplace_activation_on_a_non_leaf_matches_torch(name):
    x = rg.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    h, ht = x * 2, xt * 2
    y = getattr(F, name)(h, inplace=True)
    yt = getattr(TF, name)(ht, inplace=True)
    assert y is h and h._version == 1
    np.testing.assert_allclose(np.asarray(y.detach()), yt.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-12)


def test_inplace_relu_on_a_leaf_that_requires_grad_raises_like_torch():
    with pytest.raises(RuntimeError):
        TF.relu(torch.tensor(X, requires_grad=True), inplace=True)
    with pytest.raises(RuntimeError, match="leaf"):
        F.relu(rg.tensor(X, requires_grad=True), inplace=True)


def test_relu_underscore_and_plain_arrays():
    x = rg.tensor(X.copy())
    assert F.relu_(x) is x and float(np.asarray(x).min()) == 0.0
    np.testing.assert_array_equal(np.asarray(F.relu(X)), np.maximum(X, 0))
