"""Non-reentrant checkpoint in depth, as torch.utils.checkpoint: where the
recomputation stops, one recomputation per backward call whose tensors are
handed out once, and what an unpack outside a backward does."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.checkpoint import CheckpointError, checkpoint, set_checkpoint_early_stop
from _arrays import values  # noqa: E402


def _leaf(n=3):
    return rg.tensor(np.linspace(0.1, 0.9, n), requires_grad=True)


def _logged(log):
    def fn(x):
        log.append("start")
        a = x.sin()
        log.append("sin")
        b = a.exp()                 # the last op that saves anything (its result)
        log.append("exp")
        c = b * 2.0
        log.append("mul")
        return c + 1.0
    return fn


def test_early_stop_ends_the_rerun_at_the_last_saved_tensor():
    log = []
    out = checkpoint(_logged(log), _leaf(), use_reentrant=False)
    assert log == ["start", "sin", "exp", "mul"]
    log.clear()
    out.sum().backward()
    assert log == ["start", "sin"]          # stopped inside exp, when it saved its result


def test_without_early_stop_the_rerun_runs_to_the_end():
    log = []
    x = _leaf()
    with set_checkpoint_early_stop(False):
        out = checkpoint(_logged(log), x, use_reentrant=False)
    log.clear()
    out.sum().backward()
    assert log == ["start", "sin", "exp", "mul"]
    np.testing.assert_allclose(values(x.grad),
                               2.0 * np.exp(np.sin(values(x.detach()))) *
                               np.cos(values(x.detach())))


def test_early_stop_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    def run(lib, ckpt):
        log = []
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        out = ckpt(_logged(log), x, use_reentrant=False)
        log.clear()
        out.sum().backward()
        return log

    assert run(rg, checkpoint) == run(torch, torch_checkpoint)


class TwiceReader(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        try:
            ctx.saved_tensors
        except CheckpointError as exc:
            ctx.second_read = exc
        return g * 2.0


def test_a_recomputed_tensor_is_handed_out_once_per_backward():
    x = _leaf()
    out = checkpoint(lambda t: TwiceReader.apply(t.sin()), x, use_reentrant=False)
    node = out.grad_fn
    out.sum().backward()
    assert isinstance(node.second_read, CheckpointError)
    assert "already unpacked once" in str(node.second_read)
    np.testing.assert_allclose(values(x.grad), 2.0 * np.cos(values(x.detach())))


def test_every_unpack_outside_backward_recomputes_and_each_backward_recomputes_once():
    calls = []

    def fn(t):
        calls.append(1)
        return t.exp()

    x = _leaf()
    out = checkpoint(fn, x, use_reentrant=False)
    assert len(calls) == 1
    first = out.grad_fn._saved_result
    second = out.grad_fn._saved_result
    assert len(calls) == 3 and first is not second
    np.testing.assert_allclose(values(first), values(out))
    out.sum().backward(retain_graph=True)
    out.sum().backward(retain_graph=True)
    assert len(calls) == 5
    out.sum().backward()
    assert len(calls) == 6
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        out.grad_fn._saved_result
    np.testing.assert_allclose(values(x.grad), 3.0 * np.exp(values(x.detach())))


def test_recompute_counts_match_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    def counts(lib, ckpt):
        calls = []

        def fn(t):
            calls.append(1)
            return t.exp()

        out = ckpt(fn, lib.tensor([0.5, 1.5], requires_grad=True), use_reentrant=False)
        seen = [len(calls)]
        out.grad_fn._saved_result
        seen.append(len(calls))
        out.sum().backward(retain_graph=True)
        seen.append(len(calls))
        out.sum().backward()
        seen.append(len(calls))
        return seen

    assert counts(rg, checkpoint) == counts(torch, torch_checkpoint)


def test_recomputed_tensors_do_not_outlive_the_backward_that_used_them():
    import gc
    import weakref

    kept = []

    class Spy(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            kept.append(weakref.ref(t))
            return g

    x = _leaf()
    out = checkpoint(lambda t: Spy.apply(t.exp()), x, use_reentrant=False)
    out.sum().backward()
    gc.collect()
    assert kept and kept[0]() is None
