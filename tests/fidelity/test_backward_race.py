"""Several threads calling backward() without retain_graph on one graph at
once: exactly one succeeds, every other gets torch's "Trying to backward
through the graph a second time", and the leaf's gradient is that one
backward's (never doubled). Claiming a node, running it and freeing its
saved tensors is one step (see the engine's Note [Consuming a node])."""
import sys
import threading

import numpy as np
import pytest

import retrograd as rg

N_GRAPHS = 1000
N_THREADS = 8


def _race(make_graph, n_graphs=N_GRAPHS, n_threads=N_THREADS):
    """Build n_graphs graphs one after another; on each, n_threads threads
    call y.backward() together. Returns the graphs where the outcome was
    wrong: (index, successes, x.grad, other errors)."""
    bad = []
    barrier = threading.Barrier(n_threads + 1)
    box = {}
    results = [None] * n_threads

    def worker(k):
        for _ in range(n_graphs):
            barrier.wait()
            y = box["y"]
            try:
                y.backward()
                results[k] = "ok"
            except RuntimeError as e:
                results[k] = "second" if "backward through the graph a second time" in str(e) else e
            barrier.wait()

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(n_threads)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)          # switch threads as often as possible
    try:
        for t in threads:
            t.start()
        for i in range(n_graphs):
            x, y, expected = make_graph()
            box["y"] = y
            barrier.wait()               # go
            barrier.wait()               # all done
            ok = results.count("ok")
            others = [r for r in results if r not in ("ok", "second")]
            grad = None if x.grad is None else np.asarray(x.grad.detach().numpy())
            if ok != 1 or others or grad is None or not np.allclose(grad, expected):
                bad.append((i, ok, grad, others))
    finally:
        sys.setswitchinterval(old)
        for t in threads:
            t.join(timeout=10)
    return bad


def _cpu_graph():
    x = rg.tensor(np.linspace(0.5, 1.5, 2048), requires_grad=True)
    y = (x * x).sin().sum()
    return x, y, 2 * x.detach().numpy() * np.cos(x.detach().numpy() ** 2)


def test_concurrent_backward_exactly_one_succeeds_cpu():
    bad = _race(_cpu_graph)
    assert bad == [], f"{len(bad)} of {N_GRAPHS} graphs went wrong, first: {bad[:3]}"


def test_concurrent_backward_exactly_one_succeeds_virtual_device(virtual_cpu_devices):
    def graph():
        x = rg.tensor(np.linspace(0.5, 1.5, 2048), requires_grad=True)
        xd = x.to("cpu:1")
        y = (xd * xd).sin().sum()
        return x, y, 2 * x.detach().numpy() * np.cos(x.detach().numpy() ** 2)
    bad = _race(graph)
    assert bad == [], f"{len(bad)} of {N_GRAPHS} graphs went wrong, first: {bad[:3]}"


def test_concurrent_backward_through_custom_function():
    class Square(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    def graph():
        x = rg.tensor(np.linspace(0.5, 1.5, 16), requires_grad=True)
        return x, Square.apply(x).sum(), 2 * x.detach().numpy()
    bad = _race(graph, n_graphs=200)
    assert bad == [], bad[:3]


def test_graph_without_saved_tensors_may_run_twice_as_in_torch():
    # Nothing is freed: torch lets every backward through (the claim only
    # serialises the runs of a node).
    x = rg.tensor(np.ones(4), requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.ones(4))


def test_sequential_second_backward_still_raises():
    x = rg.tensor(np.ones(4), requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_reentrant_backward_inside_a_consumed_node_does_not_deadlock():
    # A node's backward that runs a backward of its own (on the same thread)
    # must not wait for its own claim.
    class Outer(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            with rg.enable_grad():
                b = a.detach().requires_grad_()
                (gb,) = rg.autograd.grad((b * b).sum(), b)
            return g * 3 + gb * 0

    x = rg.tensor(np.ones(3), requires_grad=True)
    Outer.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])
