"""The graph API (rg.autograd.graph and the engine's callbacks), against torch where torch has it: queue_callback
(final callbacks, also under reentrant backward), GradientEdge and
get_gradient_edge (with autograd.grad), register_multi_grad_hook, removable
handles of every hook kind, PyTorch's hook order, and that hooks closing over
their own tensor leak nothing."""
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.autograd import graph as rg_graph
from torch.autograd import graph as t_graph

LIBS = [rg, torch]
IDS = ["retrograd", "torch"]


def _queue(lib):
    if lib is torch:
        return torch.autograd.Variable._execution_engine.queue_callback
    return rg.autograd.graph.queue_callback


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


# -- queue_callback -----------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_queue_callback_outside_backward_raises(lib):
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        _queue(lib)(lambda: None)


def _callback_sequence(lib):
    seq = []
    queue = _queue(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    z = y.exp()

    def cb(name):
        def run():
            seq.append(f"callback {name} (x.grad set: {x.grad is not None})")
            if name == "first":
                queue(cb("queued by a callback"))
        return run

    def z_hook(g):
        seq.append("hook z")
        queue(cb("first"))
        queue(cb("second"))

    def y_hook(g):
        seq.append("hook y")
        queue(cb("third"))

    z.register_hook(z_hook)
    y.register_hook(y_hook)
    x.register_hook(lambda g: seq.append("hook x"))
    z.sum().backward()
    seq.append("backward returned")
    return seq


def test_queue_callback_order_matches_torch():
    r, t = _callback_sequence(rg), _callback_sequence(torch)
    assert r == t
    assert r[-2] == "callback queued by a callback (x.grad set: True)"


def _reentrant_sequence(lib):
    seq = []
    queue = _queue(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.0).exp()

    def outer_hook(g):
        queue(lambda: seq.append("outer callback"))
        w = lib.tensor([3.0], requires_grad=True)

        def inner_hook(g2):
            queue(lambda: seq.append("inner callback"))
            seq.append("inner hook")

        with lib.enable_grad():             # (hooks run with grad mode off)
            v = w * 5.0
            v.register_hook(inner_hook)
            seq.append("nested backward starts")
            lib.autograd.grad(v.sum(), w)
        seq.append("nested backward returned")
        queue(lambda: seq.append("outer callback 2"))

    y.register_hook(outer_hook)
    y.sum().backward()
    seq.append("outer backward returned")
    return seq


def test_queue_callback_under_reentrant_backward_matches_torch():
    r = _reentrant_sequence(rg)
    assert r == _reentrant_sequence(torch)
    assert r == ["nested backward starts", "inner hook", "inner callback", "nested backward returned",
                 "outer callback", "outer callback 2", "outer backward returned"]


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_queue_callback_exception_propagates(lib):
    class Boom(Exception):
        pass

    def boom():
        raise Boom("from a final callback")

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: _queue(lib)(boom))
    with pytest.raises(Boom, match="from a final callback"):
        y.sum().backward()


def test_queue_callback_runs_on_calling_thread(virtual_cpu_devices):
    # The hook runs on cpu:1's worker; the callback on the thread that called backward.
    where = {}
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("cpu:1") * 2.0

    def hook(g):
        where["hook"] = threading.get_ident()
        rg_graph.queue_callback(lambda: where.__setitem__("callback", threading.get_ident()))

    y.register_hook(hook)
    y.sum().backward()
    assert where["callback"] == threading.get_ident()
    assert where["hook"] != threading.get_ident()


def test_queue_callback_rejects_non_callable():
    x = rg.tensor([1.0], requires_grad=True)
    errors = []

    def hook(g):
        try:
            rg_graph.queue_callback(42)
        except TypeError as exc:
            errors.append(str(exc))

    y = x * 2.0
    y.register_hook(hook)
    y.sum().backward()
    assert errors and "callable" in errors[0]


# -- GradientEdge and get_gradient_edge ----------------------------------------

@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_get_gradient_edge(lib):
    g = rg_graph if lib is rg else t_graph
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    e = g.get_gradient_edge(x)
    assert isinstance(e, tuple) and isinstance(e, g.GradientEdge)
    assert "AccumulateGrad" in e.node.name() and e.output_nr == 0
    assert g.get_gradient_edge(x).node is e.node          # the same accumulator while alive
    ey = g.get_gradient_edge(y)
    assert ey.node is y.grad_fn and ey.output_nr == 0
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
        g.get_gradient_edge(lib.tensor([1.0]))


def test_gradient_edge_of_a_split_part_matches_torch():
    def run(lib, g):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        parts = lib.split(x, 1, 0)
        e = g.get_gradient_edge(parts[1])
        assert e.node is parts[1].grad_fn
        loss = (parts[0] * 2.0).sum() + (parts[1] * parts[1]).sum()
        return _np(lib.autograd.grad(loss, e)[0])

    np.testing.assert_allclose(run(rg, rg_graph), run(torch, t_graph))


def _edge_grads(lib):
    g = rg_graph if lib is rg else t_graph
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    z = x * 3.0
    loss = z.sum() + (h * h).sum()
    out = []
    out += lib.autograd.grad(loss, [g.get_gradient_edge(h), g.get_gradient_edge(x)], retain_graph=True)
    out += lib.autograd.grad([g.get_gradient_edge(h)], [x], grad_outputs=[lib.ones(2, dtype=torch.float64 if lib is torch else np.float64)],
                             retain_graph=True)
    y = (x * x).sum()
    out += lib.autograd.grad(g.get_gradient_edge(y), x, retain_graph=True)   # implicit ones
    out += lib.autograd.grad(loss, g.get_gradient_edge(x))
    lib.autograd.backward(y, inputs=[g.get_gradient_edge(x)])
    out.append(x.grad)
    return [_np(t) for t in out]


def test_grad_with_gradient_edges_matches_torch():
    r, t = _edge_grads(rg), _edge_grads(torch)
    assert len(r) == len(t) == 6
    for a, b in zip(r, t):
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_gradient_edge_output_needs_scalar_for_implicit_grad(lib):
    g = rg_graph if lib is rg else t_graph
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    z = x * 3.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        lib.autograd.grad(g.get_gradient_edge(z), x)


def test_gradient_edge_output_grad_shape_checked():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    z = x * 3.0
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        rg.autograd.grad(rg_graph.get_gradient_edge(z), x, grad_outputs=rg.ones(3))


# -- register_multi_grad_hook -------------------------------------------------

def _multi_all(lib):
    g = rg_graph if lib is rg else t_graph
    a = lib.tensor(np.ones((2, 3)), requires_grad=True)
    b = lib.tensor(np.full((2, 3), 2.0), requires_grad=True)
    c = a * b
    d = a * b
    calls = []
    handle = g.register_multi_grad_hook((a, b, c, d), lambda grads: calls.append(
        [None if x is None else float(_np(x).sum()) for x in grads]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    (c.sum() + 2 * d.sum()).backward(retain_graph=True)
    handle.remove()
    handle.remove()                                      # idempotent
    c.sum().backward(retain_graph=True)
    return calls


def test_multi_grad_hook_all_matches_torch():
    r = _multi_all(rg)
    assert r == _multi_all(torch)
    assert [[x is not None for x in call] for call in r] == [
        [True, True, True, False], [True, False, True, False], [True, True, True, True]]


def _multi_any(lib):
    g = rg_graph if lib is rg else t_graph
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c = a * 2.0
    calls = []
    handle = g.register_multi_grad_hook((a, b, c), lambda grad: calls.append(_np(grad).tolist()), mode="any")
    (c * b).sum().backward(retain_graph=True)
    (a * 5.0).sum().backward()
    handle.remove()
    (b * 5.0).sum().backward()
    return calls


def test_multi_grad_hook_any_matches_torch():
    r = _multi_any(rg)
    assert r == _multi_any(torch)
    assert len(r) == 2


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_multi_grad_hook_bad_mode(lib):
    g = rg_graph if lib is rg else t_graph
    a = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        g.register_multi_grad_hook([a], print, mode="some")


def test_multi_grad_hook_state_reset_after_failed_backward():
    # A backward that fails before every gradient arrived must not leave
    # half a call behind for the next one.
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    b = rg.tensor([3.0, 4.0], requires_grad=True)
    calls = []
    rg_graph.register_multi_grad_hook((a, b), lambda grads: calls.append([g is not None for g in grads]))
    fail = {"on": True}

    def maybe_fail(g):
        if fail["on"]:
            raise ValueError("stop")

    y = a * b
    bb = b * 1.0
    bb.register_hook(maybe_fail)
    with pytest.raises(ValueError):
        (a.sum() + bb.sum()).backward(retain_graph=True)
    assert calls == []
    fail["on"] = False
    (a.sum() + bb.sum() + y.sum()).backward()
    assert calls == [[True, True]]


def test_multi_grad_hook_on_device_workers(virtual_cpu_devices):
    # Gradients computed on two worker threads at once: fn runs exactly once
    # per backward with both.
    for _ in range(20):
        a = rg.tensor(np.ones(1000), requires_grad=True)
        b = rg.tensor(np.ones(1000), requires_grad=True)
        a1, b2 = a.to("cpu:1"), b.to("cpu:2")
        calls = []
        rg_graph.register_multi_grad_hook((a1, b2), lambda grads: calls.append(len([g for g in grads if g is not None])))
        ((a1 * 2.0).sum().to("cpu") + (b2 * 3.0).sum().to("cpu")).backward()
        assert calls == [2]


# -- removable handles ----------------------------------------------------------

def test_every_hook_handle_removes_idempotently():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    fired = []
    handles = [
        x.register_hook(lambda g: fired.append("leaf tensor hook")),
        y.register_hook(lambda g: fired.append("non-leaf tensor hook")),
        x.register_post_accumulate_grad_hook(lambda t: fired.append("post accumulate")),
        y.grad_fn.register_hook(lambda gi, go: fired.append("node hook")),
        y.grad_fn.register_prehook(lambda go: fired.append("node prehook")),
        rg_graph.register_multi_grad_hook([x, y], lambda gs: fired.append("multi all")),
        rg_graph.register_multi_grad_hook([x, y], lambda g: fired.append("multi any"), mode="any"),
    ]
    y.sum().backward(retain_graph=True)
    assert sorted(fired) == sorted(["leaf tensor hook", "non-leaf tensor hook", "post accumulate",
                                    "node hook", "node prehook", "multi all", "multi any"])
    for h in handles:
        h.remove()
        h.remove()
    fired.clear()
    y.sum().backward()
    assert fired == []


def test_handles_work_as_context_managers():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    fired = []
    with x.register_hook(lambda g: fired.append(1)):
        (x * 2.0).sum().backward()
    (x * 2.0).sum().backward()
    assert fired == [1]


# -- hook order (PyTorch's documented order) ------------------------------------

def _hook_order(lib):
    g = rg_graph if lib is rg else t_graph
    seq = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    z = (y * y).sum()
    # Registered in scrambled order on purpose: the order of kinds is fixed.
    y.grad_fn.register_hook(lambda gi, go: seq.append("node post-hook y"))
    y.grad_fn.register_prehook(lambda go: seq.append(f"node pre-hook y (y.grad retained: {y.grad is not None})"))
    y.register_hook(lambda gr: seq.append(f"tensor pre-hook y (y.grad retained: {y.grad is not None})"))
    acc = g.get_gradient_edge(x).node
    acc.register_hook(lambda gi, go: seq.append(f"node post-hook x-acc (x.grad set: {x.grad is not None})"))
    x.register_post_accumulate_grad_hook(lambda t: seq.append("post-accumulate x"))
    acc.register_prehook(lambda go: seq.append(f"node pre-hook x-acc (x.grad set: {x.grad is not None})"))
    x.register_hook(lambda gr: seq.append("tensor pre-hook x"))
    z.backward()
    return seq


def test_hook_order_matches_torch():
    r = _hook_order(rg)
    assert r == _hook_order(torch)
    assert r == [
        "tensor pre-hook y (y.grad retained: False)",
        "node pre-hook y (y.grad retained: True)",
        "node post-hook y",
        "tensor pre-hook x",
        "node pre-hook x-acc (x.grad set: False)",
        "post-accumulate x",
        "node post-hook x-acc (x.grad set: True)",
    ]


# -- nothing leaks ---------------------------------------------------------------

def _freed(make):
    ref = make()
    gc.collect()
    return ref() is None


def test_hooks_closing_over_their_tensor_are_freed():
    def leaf_hook():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: x * 1.0)
        return weakref.ref(x)

    def nonleaf_hook():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        y.register_hook(lambda g: y * 1.0)
        return weakref.ref(y)

    def post_acc():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: x)
        return weakref.ref(x)

    def node_hooks():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        y.grad_fn.register_hook(lambda gi, go: y)
        y.grad_fn.register_prehook(lambda go: y)
        return weakref.ref(y)

    def multi():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        rg_graph.register_multi_grad_hook([x, y], lambda gs: (x, y))
        rg_graph.register_multi_grad_hook([x, y], lambda g: (x, y), mode="any")
        (y.sum()).backward(retain_graph=True)
        return weakref.ref(x)

    def after_backward_with_callback():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        y.register_hook(lambda g: rg_graph.queue_callback(lambda: (x, y)))
        y.sum().backward()
        return weakref.ref(y)

    for make in (leaf_hook, nonleaf_hook, post_acc, node_hooks, multi, after_backward_with_callback):
        assert _freed(make), make.__name__
