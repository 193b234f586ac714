"""Non-reentrant activation checkpointing, compared with torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.checkpoint import checkpoint as torch_checkpoint

import retrograd as rg
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential, CheckpointError

F = rg.nn.functional


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((5, 5)) * 0.5 for _ in range(3)], rng.standard_normal((4, 5))


def _block(lib, x, w1, w2):
    return lib.tanh(x @ w1).exp() @ w2 * x


def _run(lib, ckpt, use_grad=False):
    ws, xa = _params()
    x = (torch.tensor(xa, requires_grad=True) if lib is torch else rg.tensor(xa, requires_grad=True))
    w = [torch.tensor(a, requires_grad=True) if lib is torch else rg.tensor(a, requires_grad=True)
         for a in ws]
    calls = [0]

    def fn(x, w1, w2):
        calls[0] += 1
        return _block(lib, x, w1, w2)

    if ckpt:
        cp = torch_checkpoint if lib is torch else checkpoint
        h = cp(fn, x, w[0], w[1], use_reentrant=False)
    else:
        h = fn(x, w[0], w[1])
    loss = (h @ w[2]).sin().sum()
    if use_grad:
        grads = lib.autograd.grad(loss, [x] + w)
    else:
        loss.backward()
        grads = [x.grad] + [t.grad for t in w]
    return [np.asarray(g) for g in grads], calls[0], float(np.asarray(loss.detach()))


@pytest.mark.parametrize("use_grad", [False, True])
def test_gradients_equal_uncheckpointed_and_torch(use_grad):
    ref, n_plain, loss_ref = _run(rg, False, use_grad)
    got, n_ckpt, loss = _run(rg, True, use_grad)
    tgot, n_torch, loss_t = _run(torch, True, use_grad)
    assert n_plain == 1 and n_ckpt == 2 == n_torch
    assert loss == loss_ref
    for a, b, c in zip(got, ref, tgot):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)


def test_checkpoint_frees_saved_arrays_in_forward():
    x = rg.tensor(np.ones((64, 64)), requires_grad=True)
    out = checkpoint(lambda t: (t.exp() * t).sin().cos(), x, use_reentrant=False)
    rep = rg.autograd.graph.saved_tensors_report(out)
    assert rep.total_bytes == 0 and rep.rows == []
    plain = (x.exp() * x).sin().cos()
    assert rg.autograd.graph.saved_tensors_report(plain).total_bytes > 0


def test_dropout_replays_identically():
    rg.manual_seed(7)
    np.random.seed(3)
    xa = np.random.default_rng(1).standard_normal((50, 40))
    masks = []

    def fn(x):
        y = F.dropout(x, p=0.5, training=True)
        z = y * np.random.rand()              # NumPy's global state too
        masks.append(np.asarray(y.detach()) != 0)
        return (z * x).tanh()

    x = rg.tensor(xa, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    state_after_forward = rg.get_rng().bit_generator.state
    np_after_forward = np.random.get_state()[1].copy()
    out.sum().backward()
    assert len(masks) == 2
    np.testing.assert_array_equal(masks[0], masks[1])
    # the rerun leaves the caller's random streams where the forward left them
    assert rg.get_rng().bit_generator.state == state_after_forward
    np.testing.assert_array_equal(np.random.get_state()[1], np_after_forward)
    # gradient equals the one of the same computation without checkpoint
    x2 = rg.tensor(xa, requires_grad=True)
    rg.manual_seed(7)
    np.random.seed(3)
    masks.clear()
    fn(x2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_nested_checkpoints_match_torch():
    res = {}
    for lib, cp in ((rg, checkpoint), (torch, torch_checkpoint)):
        cnt = {"o": 0, "i": 0}

        def inner(x):
            cnt["i"] += 1
            return (x.sin() * x).exp()

        def outer(x):
            cnt["o"] += 1
            y = x.cos() * 2
            z = cp(inner, y, use_reentrant=False)
            return (z * y).tanh()

        xa = np.linspace(-1, 1, 4)
        x = torch.tensor(xa, requires_grad=True) if lib is torch else rg.tensor(xa, requires_grad=True)
        out = cp(outer, x, use_reentrant=False)
        assert cnt == {"o": 1, "i": 1}
        out.sum().backward()
        res[lib.__name__] = (dict(cnt), np.asarray(x.grad))
    assert res["retrograd"][0] == res["torch"][0]
    np.testing.assert_allclose(res["retrograd"][1], res["torch"][1], rtol=1e-10, atol=1e-15)


def test_retain_graph_second_backward_recomputes():
    calls = [0]

    def fn(x):
        calls[0] += 1
        return x.exp() * x

    x = rg.tensor([0.5, 1.0], requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1)
    assert calls[0] == 3


def test_kwargs_and_early_stop_off():
    from retrograd.utils.checkpoint import set_checkpoint_early_stop
    calls = []

    def fn(x, *, scale):
        calls.append(1)
        return (x * scale).exp().sum() * scale

    x = rg.tensor([0.1, 0.2], requires_grad=True)
    with set_checkpoint_early_stop(False):
        out = checkpoint(fn, x, scale=3.0, use_reentrant=False)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 9.0 * np.exp(3.0 * x.detach().numpy()))
    assert len(calls) == 2


def test_non_deterministic_shapes_raise_checkpoint_error():
    state = {"n": 3}

    def fn(x):
        state["n"] += 1
        return x[: state["n"]].exp().sum()

    x = rg.tensor(np.ones(10), requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        out.backward()
    assert issubclass(CheckpointError, RuntimeError)


def test_checkpoint_sequential_matches_plain_and_torch():
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal((6, 6)) * 0.4 for _ in range(6)]
    xa = rng.standard_normal((3, 6))
    out = {}
    for lib, seq in ((rg, checkpoint_sequential),
                     (torch, torch.utils.checkpoint.checkpoint_sequential), (rg, None)):
        wt = [(torch.tensor(w, requires_grad=True) if lib is torch else rg.tensor(w, requires_grad=True))
              for w in ws]
        fns = [(lambda w: (lambda h: lib.tanh(h @ w)))(w) for w in wt]
        x = torch.tensor(xa, requires_grad=True) if lib is torch else rg.tensor(xa, requires_grad=True)
        if seq is None:
            h = x
            for f in fns:
                h = f(h)
        else:
            h = seq(fns, 3, x, use_reentrant=False)
        h.sum().backward()
        out[(lib.__name__, seq is None)] = [np.asarray(x.grad)] + [np.asarray(w.grad) for w in wt]
    for a, b, c in zip(out[("retrograd", False)], out[("retrograd", True)], out[("torch", False)]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-10)


def test_checkpoint_inside_disable_saved_tensors_hooks_raises():
    x = rg.ones(2, requires_grad=True)
    with rg.autograd.graph.disable_saved_tensors_hooks("checkpoint is off here"):
        with pytest.raises(RuntimeError, match="checkpoint is off here"):
            checkpoint(lambda t: t.exp(), x, use_reentrant=False)


def test_bad_arguments():
    with pytest.raises(TypeError):
        checkpoint(3, rg.ones(2))
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(lambda t: t, rg.ones(2), determinism_check="bogus")
    with pytest.raises(ValueError, match="debug"):
        checkpoint(lambda t: t, rg.ones(2), debug=True)
    with pytest.raises(ValueError, match="context_fn"):
        checkpoint(lambda t: t, rg.ones(2), context_fn=lambda: None)


def test_rg_utils_checkpoint_namespace():
    assert rg.utils.checkpoint.checkpoint is checkpoint
    assert rg.utils.checkpoint.checkpoint_sequential is checkpoint_sequential


def test_reentrant_dispatch():
    try:
        import retrograd.utils._checkpoint_reentrant  # noqa: F401
    except ImportError:
        pytest.skip("the reentrant implementation (helper 'fn') is not in this build")
    x = rg.tensor([0.3, 0.7], requires_grad=True)
    checkpoint(lambda t: t.exp() * t, x, use_reentrant=True).sum().backward()
    xa = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xa) * (1 + xa))


def test_double_backward_through_checkpoint_matches_plain():
    res = []
    for ckpt in (False, True):
        x = rg.tensor([0.2, -0.4, 0.9], requires_grad=True)

        def fn(t):
            return (t.sin() * t * t).exp()

        y = (checkpoint(fn, x, use_reentrant=False) if ckpt else fn(x)).sum()
        (g,) = rg.autograd.grad(y, x, create_graph=True)
        (gg,) = rg.autograd.grad(g.sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_grad_inside_checkpointed_function():
    # a backward inside the function unpacks what its own forward saved
    def fn(t):
        y = (t * t).exp().sum()
        (g,) = rg.autograd.grad(y, t, create_graph=True)
        return (g * t).sum()

    xa = np.array([0.1, 0.5])
    x = rg.tensor(xa, requires_grad=True)
    checkpoint(fn, x, use_reentrant=False).backward()
    x2 = rg.tensor(xa, requires_grad=True)
    fn(x2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_checkpoint_on_a_virtual_device_worker(virtual_cpu_devices):
    # the recomputation runs on the device's worker thread, where hooks and
    # grad mode are that thread's own
    xa = np.array([0.3, -0.2, 0.8])
    calls = []

    def fn(t):
        calls.append(1)
        return (t.exp() * t).sin()

    grads = []
    for ckpt in (False, True):
        x = rg.tensor(xa, requires_grad=True, device="cpu:1")
        y = checkpoint(fn, x, use_reentrant=False) if ckpt else fn(x)
        y.sum().backward()
        grads.append(x.grad.numpy())
    assert len(calls) == 3
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
