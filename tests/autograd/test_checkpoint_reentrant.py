"""Reentrant checkpointing (checkpoint(fn, *args, use_reentrant=True)):
gradients as without checkpointing and as torch's, fn run exactly twice,
random state replayed for the recompute and restored afterwards."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.utils._checkpoint_reentrant import _checkpoint_reentrant

torch = pytest.importorskip("torch")
import torch.utils.checkpoint  # noqa: E402,F811 (the submodule, on the name importorskip bound)

W = np.array([[0.5, -0.25, 1.0], [0.75, 0.1, -0.5]])
X = np.array([[1.0, 2.0], [-0.5, 0.25], [3.0, -1.0], [0.2, 0.4]])


def block(x, w, scale):
    h = (x @ w).tanh()
    return (h * h).sigmoid() * scale


def grads_rg(use_checkpoint):
    x = rg.tensor(X, requires_grad=True)
    w = rg.tensor(W, requires_grad=True)
    y = _checkpoint_reentrant(block, x, w, 2.0) if use_checkpoint else block(x, w, 2.0)
    (y * y).sum().backward()
    return y.detach().numpy(), x.grad.numpy(), w.grad.numpy()


def test_gradients_match_plain_and_torch():
    plain = grads_rg(False)
    ck = grads_rg(True)
    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor(W, requires_grad=True)
    y = torch.utils.checkpoint.checkpoint(block, x, w, 2.0, use_reentrant=True)
    (y * y).sum().backward()
    for a, b, c in zip(plain, ck, (y.detach().numpy(), x.grad.numpy(), w.grad.numpy())):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(b, c, rtol=1e-12)


def test_function_runs_exactly_twice_and_keeps_no_intermediate_graph():
    calls = []

    def fn(x, w):
        calls.append(rg.is_grad_enabled())
        return (x @ w).exp()

    x = rg.tensor(X, requires_grad=True)
    w = rg.tensor(W, requires_grad=True)
    y = _checkpoint_reentrant(fn, x, w)
    assert calls == [False]                       # forward: no graph recorded inside
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    y.sum().backward()
    assert calls == [False, True]                 # recompute under enable_grad
    np.testing.assert_allclose(w.grad.numpy(), X.T @ np.exp(X @ W))


def test_weights_captured_by_the_function_get_gradients():
    w = rg.tensor(W, requires_grad=True)
    x = rg.tensor(X, requires_grad=True)
    y = _checkpoint_reentrant(lambda a: (a @ w).sin(), x)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), X.T @ np.cos(X @ W))
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X @ W) @ W.T)


def _noisy(x):
    # draws from both random sources the recompute must replay
    keep = rg.nn.functional.dropout(x, p=0.5, training=True)
    return keep * float(np.random.rand()) + rg.rand(*x.shape) * x


def test_random_state_is_replayed_and_restored():
    rg.manual_seed(0)
    np.random.seed(1)
    x = rg.tensor(X, requires_grad=True)
    y = _checkpoint_reentrant(_noisy, x)
    state = (rg.get_rng().bit_generator.state, np.random.get_state())
    y.sum().backward()
    # the gradient is the one of the forward's random draws ...
    rg.manual_seed(0)
    np.random.seed(1)
    x2 = rg.tensor(X, requires_grad=True)
    y2 = _noisy(x2)
    y2.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), y2.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())
    # ... and the caller's random state after backward is the one before it
    rg.get_rng().bit_generator.state = state[0]
    np.random.set_state(state[1])
    expected = (rg.rand(3).numpy(), np.random.rand(3))
    rg.manual_seed(0)
    np.random.seed(1)
    x3 = rg.tensor(X, requires_grad=True)
    y3 = _checkpoint_reentrant(_noisy, x3)
    y3.sum().backward()
    np.testing.assert_allclose(rg.rand(3).numpy(), expected[0])
    np.testing.assert_allclose(np.random.rand(3), expected[1])


def test_without_preserving_rng_state_the_recompute_draws_afresh():
    def fn(x):
        return x * rg.rand(*x.shape)

    rg.manual_seed(0)
    x = rg.tensor(X, requires_grad=True)
    y = _checkpoint_reentrant(fn, x, preserve_rng_state=False)
    y.sum().backward()
    assert not np.allclose(x.grad.numpy(), y.detach().numpy() / X)
    rg.manual_seed(0)
    x = rg.tensor(X, requires_grad=True)
    y = _checkpoint_reentrant(fn, x, preserve_rng_state=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy() / X)


def test_several_outputs_and_non_tensor_arguments():
    def fn(x, k, w):
        return x * k, (x @ w), "tag"

    results = {}
    for name, lib, ck in (("rg", rg, _checkpoint_reentrant),
                          ("torch", torch,
                           lambda f, *a: torch.utils.checkpoint.checkpoint(f, *a, use_reentrant=True))):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        a, b, tag = ck(fn, x, 3.0, w)
        assert tag == "tag"
        (a.sum() + (b * b).sum()).backward()
        results[name] = (x.grad.numpy(), w.grad.numpy())
    for u, v in zip(results["rg"], results["torch"]):
        np.testing.assert_allclose(u, v, rtol=1e-12)


def test_errors_and_warnings():
    x = rg.tensor(X, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        _checkpoint_reentrant(lambda a: a * 2, x, foo=1)
    with pytest.raises(TypeError, match="expects a callable"):
        _checkpoint_reentrant(3, x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = _checkpoint_reentrant(lambda a: a * 2, rg.tensor(X))
    assert not y.requires_grad


def test_modified_input_is_detected():
    x = rg.tensor(X, requires_grad=True)
    h = x * 1
    y = _checkpoint_reentrant(lambda a: a.exp(), h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_reentrant_checkpoint_refuses_grad_and_backward_inputs_like_torch():
    import torch
    from torch.utils.checkpoint import checkpoint as tcheckpoint
    from retrograd.utils.checkpoint import checkpoint

    def body(lib):
        return lambda x: lib.tanh(x) * 2

    for lib, ck in ((rg, checkpoint), (torch, tcheckpoint)):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        out = ck(body(lib), x, use_reentrant=True).sum()
        with pytest.raises(RuntimeError, match="incompatible with .grad"):
            lib.autograd.grad(out, x, retain_graph=True)
        with pytest.raises(RuntimeError, match="incompatible with .grad"):
            out.backward(inputs=[x], retain_graph=True)
        out.backward()                      # a plain backward still works
        assert x.grad is not None
