"""rg.nn.grad (torch.nn.grad): the input and weight gradients of conv1d/2d/3d
against torch 2.13, over strides, padding, dilation, groups and input sizes a
strided convolution cannot tell apart; their own gradients; and the shape errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(41)
CONVS = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}
SPATIAL = {1: (7,), 2: (6, 5), 3: (5, 4, 5)}
KERNEL = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}

OPTIONS = [dict(), dict(stride=2), dict(padding=1, dilation=2), dict(stride=2, padding=1, groups=2)]


def _setup(n, opts, extra=0):
    groups = opts.get("groups", 1)
    x = RNG.standard_normal((2, 4) + tuple(s + extra for s in SPATIAL[n]))
    w = RNG.standard_normal((6, 4 // groups) + KERNEL[n])
    y = CONVS[n](torch.tensor(x), torch.tensor(w), **opts)
    g = RNG.standard_normal(tuple(y.shape))
    return x, w, g


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("opts", OPTIONS)
@pytest.mark.parametrize("extra", [0, 1])
def test_input_gradient_matches_torch(n, opts, extra):
    x, w, g = _setup(n, opts, extra)
    ours = getattr(rg.nn.grad, f"conv{n}d_input")(x.shape, rg.tensor(w), rg.tensor(g), **opts)
    theirs = getattr(torch.nn.grad, f"conv{n}d_input")(x.shape, torch.tensor(w), torch.tensor(g), **opts)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("opts", OPTIONS)
def test_weight_gradient_matches_torch(n, opts):
    x, w, g = _setup(n, opts, 1)
    ours = getattr(rg.nn.grad, f"conv{n}d_weight")(rg.tensor(x), w.shape, rg.tensor(g), **opts)
    # torch's CPU convolution_backward refuses float64 weight gradients for some options: its autograd
    # gradient of the convolution is the same quantity
    tw = torch.tensor(w, requires_grad=True)
    (theirs,) = torch.autograd.grad(CONVS[n](torch.tensor(x), tw, **opts), tw, torch.tensor(g))
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    assert not ours.requires_grad


def test_weight_gradient_matches_torch_nn_grad_float32():
    x, w, g = (a.astype(np.float32) for a in _setup(2, dict(stride=2, groups=2)))
    ours = rg.nn.grad.conv2d_weight(rg.tensor(x), w.shape, rg.tensor(g), stride=2, groups=2)
    theirs = torch.nn.grad.conv2d_weight(torch.tensor(x), w.shape, torch.tensor(g), stride=2, groups=2)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_results_are_differentiable(n):
    opts = dict(stride=2, padding=1)
    x, w, g = _setup(n, opts)
    rw, rgo = rg.tensor(w, requires_grad=True), rg.tensor(g, requires_grad=True)
    tw, tgo = torch.tensor(w, requires_grad=True), torch.tensor(g, requires_grad=True)
    ours = getattr(rg.nn.grad, f"conv{n}d_input")(x.shape, rw, rgo, **opts)
    theirs = getattr(torch.nn.grad, f"conv{n}d_input")(x.shape, tw, tgo, **opts)
    seed = RNG.standard_normal(x.shape)
    (ours * rg.tensor(seed)).sum().backward()
    (theirs * torch.tensor(seed)).sum().backward()
    np.testing.assert_allclose(rw.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rgo.grad.numpy(), tgo.grad.numpy(), rtol=1e-10, atol=1e-12)
    rx = rg.tensor(x, requires_grad=True)
    rgo.grad = None
    wgrad = getattr(rg.nn.grad, f"conv{n}d_weight")(rx, w.shape, rgo, **opts)
    assert wgrad.requires_grad
    wgrad.sum().backward()
    assert rx.grad.shape == x.shape and rgo.grad.shape == g.shape


def test_gradcheck():
    w = rg.randn(3, 2, 2, 2, requires_grad=True)
    g = rg.randn(1, 3, 2, 2, requires_grad=True)
    x = rg.randn(1, 2, 4, 4, requires_grad=True)
    assert rg.autograd.gradcheck(lambda w, g: rg.nn.grad.conv2d_input((1, 2, 4, 4), w, g, stride=2), (w, g))
    assert rg.autograd.gradcheck(lambda x, g: rg.nn.grad.conv2d_weight(x, (3, 2, 2, 2), g, stride=2), (x, g))


def test_no_graph_under_no_grad():
    w = rg.randn(3, 2, 2, requires_grad=True)
    with rg.no_grad():
        out = rg.nn.grad.conv1d_input((1, 2, 5), w, rg.randn(1, 3, 4))
    assert not out.requires_grad


def test_errors():
    w, g = rg.randn(6, 2, 3, 3), rg.randn(2, 6, 2, 2)
    cases = [
        (lambda: rg.nn.grad.conv2d_input((4, 5, 5), w, g[0]), "Expected 4-dimensional input"),
        (lambda: rg.nn.grad.conv2d_input((2, 4, 5, 5), w, g), "to have 2 channels, but got 4"),
        (lambda: rg.nn.grad.conv2d_input((2, 4, 5, 5), w, g, groups=2), "grad_output has size"),
        (lambda: rg.nn.grad.conv2d_input((2, 4, 9, 9), w, g, stride=2, groups=2), "grad_output has size"),
        (lambda: rg.nn.grad.conv2d_weight(rg.randn(2, 4, 5, 5), (6, 4, 3, 3), g, stride=2, groups=2),
         "to have 8 channels"),
        (lambda: rg.nn.grad.conv2d_weight(rg.randn(2, 4, 5, 5), (6, 2, 3, 3), g, stride=0, groups=2),
         "non-positive stride"),
        (lambda: rg.nn.grad.conv2d_weight(rg.randn(2, 4, 5, 5), (6, 2, 3, 3), g, stride=(1, 2, 3), groups=2),
         "expected stride to be a single integer value or a list of 2"),
        (lambda: rg.nn.grad.conv1d_weight(rg.randn(2, 4, 5, 5), (6, 4, 3), rg.randn(2, 6, 3)),
         "Expected 3-dimensional input"),
        (lambda: rg.nn.grad.conv3d_input((1, 2, 3, 3, 3), rg.randn(4, 3, 1, 1, 1), rg.randn(1, 4, 3, 3, 3)),
         "to have 3 channels, but got 2"),
    ]
    for call, match in cases:
        with pytest.raises(RuntimeError, match=match):
            call()
    # torch refuses the same inconsistent shapes
    with pytest.raises(RuntimeError):
        torch.nn.grad.conv2d_input((2, 4, 9, 9), torch.randn(6, 2, 3, 3), torch.randn(2, 6, 2, 2), stride=2,
                                   groups=2)
