"""Memory: graphs are freed by reference counting alone (no cycles in normal
use), saved arrays are released as soon as their node has run, user-made
cycles are still collected by the GC, and million-node graphs build, run and
die without recursion."""
import gc
import weakref

import pytest

import retrograd as rg


@pytest.fixture
def no_gc():
    """Reference counting only: what is still alive at the end was held by a cycle."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def leaf(values=(1.0, 2.0)):
    return rg.tensor(list(values), requires_grad=True)


def arr(t):
    return t.detach().numpy()


def _graph():
    """A graph using every kind of saved variable (leaf, non-leaf input, own
    output, constant), retain_grad, a tensor hook and a node hook."""
    x = leaf()
    c = rg.tensor([3.0, 4.0])
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g)
    e = h.exp()
    t = (e * c).tanh().sigmoid().relu()
    e.grad_fn.register_hook(lambda gi, go: None)
    loss = (t * h / x).mean()
    nodes = [weakref.ref(n.grad_fn) for n in (h, e, t, loss)]
    arrays = [weakref.ref(arr(a)) for a in (h, e, t)]
    return x, loss, nodes, arrays


def test_deleting_the_output_frees_the_graph_without_gc(no_gc):
    x, loss, nodes, arrays = _graph()
    assert all(r() is not None for r in nodes + arrays)
    del loss
    assert [r() for r in nodes] == [None] * len(nodes)
    assert [r() for r in arrays] == [None] * len(arrays)
    assert x.grad_fn is None


def test_graph_is_freed_after_backward_without_gc(no_gc):
    x, loss, nodes, arrays = _graph()
    loss.backward()
    assert [r() for r in arrays] == [None] * len(arrays)   # released by backward
    del loss
    assert [r() for r in nodes] == [None] * len(nodes)
    acc = weakref.ref((x * 1).grad_fn.next_functions[0][0])
    assert acc() is None and x.grad is not None


def test_saved_arrays_released_as_soon_as_their_node_ran():
    x = leaf()
    h = x * 2
    e = h.exp()
    loss = (e * h).sum()
    saved = [weakref.ref(arr(h)), weakref.ref(arr(e))]
    mul = loss.grad_fn.next_functions[0][0]
    del h, e
    assert all(r() is not None for r in saved)
    loss.backward(retain_graph=True)
    assert all(r() is not None for r in saved)             # retain_graph keeps them
    loss.backward()
    assert all(r() is None for r in saved)
    assert loss.grad_fn is not None                         # the graph itself lives on
    for attr in ("_saved_self", "_saved_other"):           # as torch: freed means gone
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            getattr(mul, attr)


def test_intermediate_released_while_backward_still_runs():
    # ExpBackward0's saved output is gone by the time the leaf's hook runs.
    x = leaf()
    e = x.exp()
    ref = weakref.ref(arr(e))
    seen = []
    x.register_hook(lambda g: seen.append(ref() is None))
    loss = (e * 1.0).sum()
    del e
    loss.backward()
    assert seen == [True]


def test_non_leaf_grad_and_hooks_leave_no_cycle(no_gc):
    x = leaf()
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 1)
    (h.exp()).sum().backward()
    refs = [weakref.ref(h), weakref.ref(h.grad_fn), weakref.ref(h.grad)]
    del h
    assert [r() for r in refs] == [None, None, None]


def test_leaf_with_hooks_leaves_no_cycle(no_gc):
    x = leaf()
    x.register_hook(lambda g: g)
    x.register_post_accumulate_grad_hook(lambda t: None)
    (x * 2).sum().backward()
    refs = [weakref.ref(x), weakref.ref(x.grad)]
    del x
    assert [r() for r in refs] == [None, None]


def _holder(obj):
    # A closure over a cell that outlives the caller's `del`.
    box = [obj]
    return lambda *args: box[0] and None


@pytest.mark.parametrize("where", ["tensor_hook", "leaf_hook", "post_acc_hook", "node_hook",
                                   "node_prehook", "metadata", "saved"])
def test_user_cycles_are_collected_by_gc(no_gc, where):
    x = leaf()
    h = x * 2
    target = x if where in ("leaf_hook", "post_acc_hook") else h
    if where == "tensor_hook":
        h.register_hook(_holder(h))
    elif where == "leaf_hook":
        x.register_hook(_holder(x))
    elif where == "post_acc_hook":
        x.register_post_accumulate_grad_hook(_holder(x))
    elif where == "node_hook":
        h.grad_fn.register_hook(_holder(h))
    elif where == "node_prehook":
        h.grad_fn.register_prehook(_holder(h))
    elif where == "metadata":
        h.grad_fn.metadata["me"] = h
    elif where == "saved":
        y = h * h                       # saves h (a non-leaf) ...
        y.grad_fn.metadata["y"] = y     # ... and a cycle through y's node
        target = y
        del y
    ref = weakref.ref(target)
    arr_ref = weakref.ref(arr(target))
    del target, h, x
    assert ref() is not None            # the cycle keeps it alive without the GC ...
    gc.collect()
    assert ref() is None and arr_ref() is None    # ... and the GC can see into our types


@pytest.mark.slow
def test_million_node_chain(run_python):
    proc = run_python("""
        import sys, gc, weakref
        import retrograd as rg
        assert sys.getrecursionlimit() <= 1000, sys.getrecursionlimit()
        gc.disable()
        N = 1_000_000
        for step in ("mul", "add"):
            x = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
            y = x
            for _ in range(N):
                y = y * 1.0000001 if step == "mul" else y + 0
            first = weakref.ref(y.grad_fn)
            y.sum().backward()
            expected = 1.0000001 ** N if step == "mul" else 1.0
            assert abs(x.grad.tolist()[0] - expected) < 1e-6, (step, x.grad)
            del y
            assert first() is None
        # never run: every node still holds its saved tensors when the chain dies
        x = rg.tensor([0.5], requires_grad=True)
        y = x
        for i in range(N):
            y = y.tanh() if i % 2 else y * y
        first = weakref.ref(y.grad_fn)
        del y
        assert first() is None
        print("OK")
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("OK")
