"""An exception raised in a node's apply or in any hook, on the calling
thread or on a device worker, reaches the caller as the original exception
type with the node's name in its message; the engine stays usable."""
import threading

import numpy as np
import pytest

import retrograd as rg
import retrograd.engine as engine


class HookError(Exception):
    pass


def leaf(data):
    return rg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


def _raise(exc):
    raise exc


def _where(device, kind):
    """Build a graph on ``device`` whose backward fails at ``kind``; returns
    (root, expected exception type, node name expected in the message, thread label)."""
    x = leaf([1.0, 2.0, 3.0])
    xd = x.to(device) if device != "cpu" else x
    y = xd * xd                                     # MulBackward0 on `device`
    if kind == "tensor_hook":
        y.register_hook(lambda g: _raise(HookError("tensor hook failed")))
        return y.sum(), HookError, "MulBackward0"
    if kind == "node_prehook":
        y.grad_fn.register_prehook(lambda g: _raise(HookError("prehook failed")))
        return y.sum(), HookError, "MulBackward0"
    if kind == "node_posthook":
        y.grad_fn.register_hook(lambda gi, go: _raise(HookError("posthook failed")))
        return y.sum(), HookError, "MulBackward0"
    if kind == "apply":
        # A saved tensor modified in place: SinBackward0's apply raises.
        z = y.sin()
        with rg.no_grad():
            y.add_(1.0)
        return z.sum(), RuntimeError, "SinBackward0"
    if kind == "apply_hook_returns_bad_type":
        y.register_hook(lambda g: "not a tensor")
        return y.sum(), TypeError, "MulBackward0"
    if kind == "post_accumulate_hook":
        x.register_post_accumulate_grad_hook(lambda t: _raise(HookError("post-accumulate failed")))
        return y.sum(), HookError, "AccumulateGrad"
    if kind == "leaf_hook":
        x.register_hook(lambda g: _raise(HookError("leaf hook failed")))
        return y.sum(), HookError, "AccumulateGrad"
    if kind == "no_args":
        y.register_hook(lambda g: _raise(HookError()))
        return y.sum(), HookError, "MulBackward0"
    if kind == "keyerror":
        y.register_hook(lambda g: {}["missing"])
        return y.sum(), KeyError, "MulBackward0"
    raise AssertionError(kind)


def _message_and_notes(exc):
    # The exception keeps its own message (as torch); the engine names the
    # node in a note.
    return "\n".join([str(exc)] + list(getattr(exc, "__notes__", [])))


KINDS = ["tensor_hook", "node_prehook", "node_posthook", "apply", "apply_hook_returns_bad_type",
         "post_accumulate_hook", "leaf_hook", "no_args", "keyerror"]


def _check_usable(device):
    x = leaf([1.0, 2.0])
    xd = x.to(device) if device != "cpu" else x
    seen = []
    y = xd * xd
    y.register_hook(lambda g: seen.append(threading.get_ident()))
    y.to("cpu").sum().backward() if device != "cpu" else y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    return seen


@pytest.mark.parametrize("device", ["cpu", "cpu:1"])
@pytest.mark.parametrize("kind", KINDS)
def test_error_reaches_caller_with_node_name(virtual_cpu_devices, device, kind):
    root, exc_type, node_name = _where(device, kind)
    with pytest.raises(exc_type) as info:
        root.backward()
    assert type(info.value) is exc_type
    assert node_name in _message_and_notes(info.value)
    seen = _check_usable(device)
    if device == "cpu:1":
        assert seen == [engine.device_threads()[1].ident]      # same worker, still alive


@pytest.mark.parametrize("device", ["cpu", "cpu:1"])
def test_error_in_grad_reaches_caller(virtual_cpu_devices, device):
    x = leaf([1.0, 2.0])
    xd = x.to(device) if device != "cpu" else x
    y = xd.sin()
    y.register_hook(lambda g: _raise(HookError("from grad()")))
    with pytest.raises(HookError, match="from grad") as info:
        rg.autograd.grad(y.sum(), x)
    assert info.value.args == ("from grad()",)              # untouched, as torch
    assert "SinBackward0" in _message_and_notes(info.value)
    (g,) = rg.autograd.grad((xd * 2.0).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])


def test_original_message_is_kept():
    x = leaf([1.0])
    y = x * 2.0
    y.register_hook(lambda g: _raise(HookError("the original message")))
    with pytest.raises(HookError) as info:
        y.sum().backward()
    assert str(info.value).startswith("the original message")


def test_exception_with_several_args_keeps_them_and_gets_a_note():
    x = leaf([1.0])
    y = x * 2.0
    y.register_hook(lambda g: _raise(OSError(2, "No such file")))
    with pytest.raises(OSError) as info:
        y.sum().backward()
    assert info.value.errno == 2 and info.value.strerror == "No such file"
    assert any("MulBackward0" in n for n in info.value.__notes__)


def test_base_exception_is_propagated():
    x = leaf([1.0])
    y = x * 2.0
    y.register_hook(lambda g: _raise(KeyboardInterrupt("stop")))
    with pytest.raises(KeyboardInterrupt):
        y.sum().backward()
    (x * 3.0).sum().backward()
    assert x.grad.tolist() == [3.0]


def test_error_on_worker_while_caller_runs_other_nodes(virtual_cpu_devices):
    # One branch fails on cpu:1 while the CPU branch is still running: the
    # caller must get the error and not wait forever.
    for _ in range(20):
        x = leaf(np.ones(1000))
        bad = x.to("cpu:1") * 2.0
        bad.register_hook(lambda g: _raise(HookError("worker branch failed")))
        good = x
        for _ in range(50):
            good = good * 1.0
        out = bad.to("cpu").sum() + good.sum()
        with pytest.raises(HookError, match="worker branch failed"):
            out.backward()
    _check_usable("cpu:1")
    _check_usable("cpu")


def test_failed_backward_does_not_leave_half_accumulated_grads_in_later_runs(virtual_cpu_devices):
    x = leaf([1.0, 2.0])
    y = x.to("cpu:1") * 2.0
    y.register_hook(lambda g: _raise(HookError("no")))
    with pytest.raises(HookError):
        y.to("cpu").sum().backward()
    assert x.grad is None
    x2 = leaf([1.0, 2.0])
    (x2 * 5.0).sum().backward()
    assert x2.grad.tolist() == [5.0, 5.0]


def test_hook_changing_gradient_shape_raises():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.register_hook(lambda g: rg.ones(3))
    with pytest.raises(RuntimeError, match="shape"):
        y.sum().backward()



def test_failed_backward_releases_the_graph():
    # When q's branch fails, the task for p's branch is still queued: it must
    # not keep p's node (and what it saved) alive after backward returns.
    import gc
    import weakref
    x = leaf(np.ones(10))
    p = x.sin()                     # created first: lower sequence_nr, runs last
    q = x * 3.0
    q.register_hook(lambda g: _raise(HookError("q failed")))
    out = (p + q).sum()
    node_ref = weakref.ref(p.grad_fn)
    with pytest.raises(HookError):
        out.backward()
    del out, p, q
    gc.collect()
    assert node_ref() is None
