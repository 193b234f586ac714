"""The activations added for programs written for torch, against torch 2.13:
values, gradients (away from the kinks), module reprs and parameters."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

X = np.array([[-4.2, -2.5, -1.1, -0.3, 0.2], [0.7, 1.3, 2.2, 3.4, 6.5]])

CASES = [
    ("hardtanh", (), {}), ("hardtanh", (-2.0, 1.5), {}), ("relu6", (), {}), ("hardsigmoid", (), {}),
    ("hardswish", (), {}), ("mish", (), {}), ("selu", (), {}), ("celu", (), {"alpha": 0.7}),
    ("glu", (), {"dim": 0}), ("softmin", (), {"dim": 1}), ("softsign", (), {}), ("tanhshrink", (), {}),
    ("threshold", (0.5, -3.0), {}), ("softshrink", (), {"lambd": 0.8}), ("hardshrink", (), {"lambd": 0.8}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_functional_values_and_gradients_as_torch(name, args, kwargs):
    a, b = rg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ya, yb = getattr(F, name)(a, *args, **kwargs), getattr(TF, name)(b, *args, **kwargs)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12, atol=1e-15)
    seed = np.linspace(-1, 1, ya.numel()).reshape(ya.shape)
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    # (torch keeps some constants in float32: hardsigmoid's 1/6, celu's alpha)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=2e-7, atol=1e-15)


def test_prelu_per_channel_as_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    for n in (1, 3):
        mr, mt = rg.nn.PReLU(n, init=0.1), torch.nn.PReLU(n, init=0.1).double()
        a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = mr(a), mt(b)
        # (torch's init=0.1 is float32's 0.1, widened by .double())
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-7)
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_allclose(mr.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-7)
    with pytest.raises(RuntimeError):
        TF.prelu(torch.ones(2, 3), torch.ones(2))
    with pytest.raises(RuntimeError, match="Mismatch"):
        F.prelu(rg.ones(2, 3), rg.ones(2))


@pytest.mark.parametrize("make", [
    lambda nn: nn.ReLU6(), lambda nn: nn.Hardtanh(-2.0, 2.0), lambda nn: nn.Hardsigmoid(),
    lambda nn: nn.Hardswish(), lambda nn: nn.Mish(), lambda nn: nn.Softplus(beta=2.0), lambda nn: nn.ELU(0.5),
    lambda nn: nn.SELU(), lambda nn: nn.CELU(2.0), lambda nn: nn.GLU(0), lambda nn: nn.LogSigmoid(),
    lambda nn: nn.Softmin(dim=1), lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(),
    lambda nn: nn.Threshold(0.1, 20.0), lambda nn: nn.Softshrink(0.3), lambda nn: nn.Hardshrink(0.3),
])
def test_modules_as_torch(make):
    mr, mt = make(rg.nn), make(torch.nn)
    np.testing.assert_allclose(mr(rg.tensor(X)).numpy(), mt(torch.tensor(X)).numpy(), rtol=1e-12, atol=1e-15)
    assert repr(mr).split("(")[0] == repr(mt).split("(")[0]


def test_errors_as_torch():
    for lib, fn in ((torch, TF), (rg, F)):
        with pytest.raises(RuntimeError):
            fn.glu(lib.ones(3))
        with pytest.raises(ValueError):
            fn.hardtanh(lib.ones(2), 1.0, -1.0)
        with pytest.raises(RuntimeError):
            fn.softshrink(lib.ones(2), -1.0)


def test_functional_exports_every_added_activation():
    # nn.functional lists them literally (a form type checkers follow): the
    # list must stay _activations.__all__
    from retrograd.nn import _activations
    assert set(_activations.__all__) <= set(F.__all__)
    assert all(getattr(F, n) is getattr(_activations, n) for n in _activations.__all__)
