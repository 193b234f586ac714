"""Hooks as torch 2.13 runs them: post-accumulate-grad hooks working on
.grad in place, register_multi_grad_hook with inputs the outputs do not
reach, Node.register_hook's signature, and saved_tensors_hooks that a hook
enters (or leaves) during a backward."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.graph import register_multi_grad_hook, saved_tensors_hooks


def _leaf(n=2):
    return rg.tensor(np.ones(n), requires_grad=True)


# -- post-accumulate-grad hooks ------------------------------------------------

def test_post_accumulate_grad_hook_in_place_change_is_seen_by_later_hooks():
    a = _leaf()
    seen = []

    def scale(t):
        t.grad.mul_(10)

    a.register_post_accumulate_grad_hook(scale)
    a.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (a * 2).sum().backward()
    np.testing.assert_allclose(seen[0], [20.0, 20.0])
    np.testing.assert_allclose(a.grad.numpy(), [20.0, 20.0])
    # the next backward accumulates into the scaled .grad, then scales the sum
    (a * 2).sum().backward()
    np.testing.assert_allclose(seen[1], [220.0, 220.0])


def test_post_accumulate_grad_hook_assigning_grad_is_seen_by_later_hooks():
    b = _leaf()
    seen = []

    def triple(t):
        t.grad = t.grad * 3

    b.register_post_accumulate_grad_hook(triple)
    b.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (b * 2).sum().backward()
    np.testing.assert_allclose(seen[0], [6.0, 6.0])


def test_post_accumulate_grad_hook_in_place_never_reaches_the_callers_gradient():
    g0 = rg.ones(3)

    def bump(t):
        t.grad.add_(1)

    e = rg.tensor(np.ones(3), requires_grad=True)
    e.register_post_accumulate_grad_hook(bump)
    e.backward(g0)
    np.testing.assert_allclose(e.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(g0.numpy(), [1.0, 1.0, 1.0])
    # a retained non-leaf gradient is not the leaf's .grad either
    f = rg.tensor(np.ones(3), requires_grad=True)
    m = f * 1
    m.retain_grad()
    f.register_post_accumulate_grad_hook(bump)
    (m * 1).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(f.grad.numpy(), [2.0, 2.0, 2.0])


def test_post_accumulate_grad_hook_zeroing_grad():
    c = _leaf()

    def zero(t):
        t.grad.zero_()

    c.register_post_accumulate_grad_hook(zero)
    for _ in range(2):
        (c * 2).sum().backward()
        np.testing.assert_allclose(c.grad.numpy(), [0.0, 0.0])


# -- register_multi_grad_hook -------------------------------------------------

def _recorder():
    calls = []
    return calls, lambda gs: calls.append([None if g is None else g.numpy().tolist() for g in gs])


def test_multi_grad_hook_all_fires_when_inputs_name_an_unreachable_tensor():
    a, b = _leaf(), _leaf()
    calls, fn = _recorder()
    register_multi_grad_hook([a, b], fn)
    (a * 2).sum().backward(inputs=[a, b])
    assert calls == [[[2.0, 2.0], None]]
    assert b.grad is None


def test_multi_grad_hook_all_with_and_without_inputs():
    a, b, c = _leaf(), _leaf(), _leaf()
    calls, fn = _recorder()
    register_multi_grad_hook([a, b], fn)
    (a * 2).sum().backward()                       # b not in the graph
    assert calls == [[[2.0, 2.0], None]]
    calls.clear()
    (a * 2 + c).sum().backward(inputs=[c])         # a not computed: no call
    assert calls == []
    (a * 2 + b).sum().backward(inputs=[a])         # b in the graph but not asked for
    assert calls == [[[2.0, 2.0], None]]


def test_multi_grad_hook_all_on_non_leaves_with_unreachable_input():
    a, b = _leaf(), _leaf()
    x, y = a * 1, b * 1
    calls, fn = _recorder()
    register_multi_grad_hook([x, y], fn)
    (x * 2).sum().backward(inputs=[x, y], retain_graph=True)
    assert calls == [[[2.0, 2.0], None]]
    g = rg.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert g[1] is None and len(calls) == 2


# -- Node.register_hook / register_prehook -------------------------------------

@pytest.mark.parametrize("method", ["register_hook", "register_prehook"])
def test_node_hook_registration_signature(method):
    x = _leaf()
    node = (x * x).grad_fn
    with pytest.raises(TypeError):
        getattr(node, method)(fn=lambda *a: None)          # positional only, as torch
    with pytest.raises(TypeError):
        getattr(node, method)()
    with pytest.raises(TypeError):
        getattr(node, method)(lambda *a: None, lambda *a: None)

    class CallableObject:
        def __call__(self, *args):
            return None

    h = getattr(node, method)(CallableObject())
    h.remove()


def test_node_hook_on_accumulate_grad_and_custom_function():
    class Double(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = _leaf()
    y = Double.apply(x)
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append("post"))
    y.grad_fn.register_prehook(lambda go: seen.append("pre"))
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: seen.append("acc"))
    y.sum().backward()
    assert seen == ["pre", "post", "acc"]


# -- saved_tensors_hooks entered during a backward -------------------------------

def test_saved_tensors_hooks_entered_in_a_hook_end_with_the_backward():
    packed = []
    ctx = saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t)
    a = _leaf()
    y = a * 2

    def enter(g):
        ctx.__enter__()
    y.register_hook(enter)
    y.sum().backward()
    a * a                                             # saves a: no hook may see it
    assert packed == []


def test_saved_tensors_hooks_left_in_a_hook_stay_for_the_caller():
    packed = []
    ctx = saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t)
    a = _leaf()
    with ctx:
        y = a * 2

        def leave(g):
            ctx.__exit__(None, None, None)
        y.register_hook(leave)
        y.sum().backward()
        packed.clear()
        a * a
        assert len(packed) == 2                      # still active after the backward
    packed.clear()
    a * a
    assert packed == []


def test_device_worker_nodes_use_the_callers_saved_tensors_hooks(virtual_cpu_devices):
    # A create_graph backward records new nodes; those run on the device's
    # worker must save through the caller's hooks as those on the caller's
    # thread do (torch hands the graph task's thread-local state to workers).
    def count_packs(device):
        packed = []
        x = rg.tensor(np.array([1.0, 2.0]), requires_grad=True)
        xd = x.to(device) if device != "cpu" else x
        y = (xd * xd * xd).sum()
        with saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
            n_forward = len(packed)
            (g,) = rg.autograd.grad(y, x, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])
        return len(packed) - n_forward

    on_cpu = count_packs("cpu")
    assert on_cpu > 0
    assert count_packs("cpu:1") == on_cpu


def test_saved_tensors_hooks_entered_on_a_device_worker_do_not_stay(virtual_cpu_devices):
    packed = []
    ctx = saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t)
    x = rg.tensor(np.ones(2), requires_grad=True)
    y = x.to("cpu:1") * 2

    def enter(g):
        ctx.__enter__()
    y.register_hook(enter)
    y.sum().backward()
    # the worker's next node saves nothing through the hook entered there
    z = x.to("cpu:1")
    w = (z * z).sum()
    packed.clear()
    with rg.enable_grad():
        (gz,) = rg.autograd.grad(w, z, create_graph=True)
    assert packed == []
