"""Tensor hooks, post-accumulate-grad hooks, retain_grad and node hooks, and
the order in which they fire (core's Note [Hook order]), checked against torch."""
import numpy as np
import pytest

import retrograd as rg


def L(t):
    return None if t is None else t.tolist()


def leaf(values=(1.0, 2.0)):
    return rg.tensor(list(values), requires_grad=True)


# -- tensor hooks -------------------------------------------------------------------

def test_hook_on_a_non_leaf_sees_the_summed_gradient_once():
    log = []
    x = leaf()
    h = x * 2
    h.register_hook(lambda g: log.append(L(g)))
    (h * h).sum().backward()            # h reaches MulBackward0 twice
    assert log == [[4.0, 8.0]]
    assert isinstance(log, list)


def test_hook_receives_a_tensor_without_grad():
    seen = []
    x = leaf()
    h = x * 2
    h.register_hook(lambda g: seen.append(g))
    x.register_hook(lambda g: seen.append(g))
    h.sum().backward()
    assert all(isinstance(g, rg.Tensor) and not g.requires_grad for g in seen)
    assert [g.shape for g in seen] == [(2,), (2,)]


def test_hook_return_value_replaces_the_gradient():
    x = leaf()
    h = x * 2
    h.register_hook(lambda g: g * 10)
    h.register_hook(lambda g: g + 1)   # sees the first hook's result
    h.sum().backward()
    assert L(x.grad) == [22.0, 22.0]

    y = leaf()
    y.register_hook(lambda g: g * 3)
    (y * 2).sum().backward()
    assert L(y.grad) == [6.0, 6.0]


def test_hook_returning_none_keeps_the_gradient():
    x = leaf()
    h = x * 3
    h.register_hook(lambda g: None)
    h.sum().backward()
    assert L(x.grad) == [3.0, 3.0]


def test_hook_handle_remove():
    log = []
    x = leaf()
    h = x * 2
    handle = h.register_hook(lambda g: log.append("h") or g * 100)
    lhandle = x.register_hook(lambda g: log.append("x") or g * 100)
    loss = (h * 1).sum()
    loss.backward(retain_graph=True)
    assert log == ["h", "x"] and L(x.grad) == [20000.0, 20000.0]
    handle.remove()
    lhandle.remove()
    handle.remove()                     # removing twice is harmless
    x.grad = None
    loss.backward()
    assert log == ["h", "x"] and L(x.grad) == [2.0, 2.0]


def test_handle_as_context_manager():
    log = []
    x = leaf()
    with x.register_hook(lambda g: log.append(1)):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert log == [1]


def test_hook_that_changes_the_shape_is_an_error():
    x = leaf()
    h = x * 2
    h.register_hook(lambda g: rg.ones(3))
    with pytest.raises(RuntimeError, match="shape"):
        h.sum().backward()


def test_register_hook_errors():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        rg.tensor([1.0]).register_hook(lambda g: g)
    with pytest.raises(TypeError):
        leaf().register_hook(42)


# -- post-accumulate-grad hooks -------------------------------------------------------

def test_post_accumulate_grad_hook_runs_after_accumulation_with_the_tensor():
    log = []
    x = leaf()
    handle = x.register_post_accumulate_grad_hook(lambda t: log.append((t is x, L(t.grad))))
    loss = (x * 3).sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    assert log == [(True, [3.0, 3.0]), (True, [6.0, 6.0])]
    handle.remove()
    loss.backward()
    assert len(log) == 2 and L(x.grad) == [9.0, 9.0]


def test_post_accumulate_grad_hook_can_step_like_an_optimizer():
    x = leaf([1.0, 2.0])

    def step(t):
        with rg.no_grad():
            t.sub_(t.grad * 0.5)
        t.grad = None
    x.register_post_accumulate_grad_hook(step)
    (x * x).sum().backward()
    assert L(x) == [0.0, 0.0] and x.grad is None


def test_post_accumulate_grad_hook_errors():
    with pytest.raises(RuntimeError, match="non-leaf"):
        (leaf() * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        rg.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None)


# -- retain_grad ----------------------------------------------------------------------

def test_retain_grad_accumulates_across_backwards():
    x = leaf()
    h = x * 2
    h.retain_grad()
    loss = (h * h).sum()
    loss.backward(retain_graph=True)
    assert L(h.grad) == [4.0, 8.0]
    loss.backward()
    assert L(h.grad) == [8.0, 16.0]


def test_retained_grad_is_a_copy():
    x = leaf()
    h = x * 2
    h.retain_grad()
    h.backward(rg.tensor([1.0, 1.0]))
    assert not np.shares_memory(h.grad.numpy(), x.grad.numpy())


def test_retain_grad_follows_an_inplace_change():
    x = leaf()
    h = x * 2
    h.retain_grad()
    h.mul_(3)
    (h * h).sum().backward()
    assert L(h.grad) == [12.0, 24.0]     # d/dh of the new h
    assert L(x.grad) == [72.0, 144.0]


# -- node hooks -----------------------------------------------------------------------

def test_node_hooks_order_replacement_and_remove():
    log = []
    x = leaf()
    h = x * 2
    n = h.grad_fn
    h1 = n.register_prehook(lambda go: log.append("pre1"))
    n.register_prehook(lambda go: log.append("pre2"))
    n.register_hook(lambda gi, go: log.append("post1"))
    h4 = n.register_hook(lambda gi, go: log.append("post2"))
    h.sum().backward(retain_graph=True)
    h1.remove()
    h4.remove()
    log.append("|")
    h.sum().backward()
    assert log == ["pre1", "pre2", "post1", "post2", "|", "pre2", "post1"]


def test_node_hooks_replace_gradients():
    x = leaf()
    h = x * 2
    h.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    h.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))
    h.sum().backward()
    assert L(x.grad) == [21.0, 21.0]


def test_node_post_hook_sees_grad_inputs_and_grad_outputs():
    seen = []
    x = leaf()
    c = rg.tensor([3.0, 4.0])
    y = x * c
    y.grad_fn.register_hook(lambda gi, go: seen.append(([L(g) for g in gi], [L(g) for g in go])))
    y.sum().backward()
    assert seen == [([[3.0, 4.0], None], [[1.0, 1.0]])]


def test_node_hook_errors():
    n = (leaf() * 2).grad_fn
    with pytest.raises(TypeError):
        n.register_hook(1)
    with pytest.raises(TypeError):
        n.register_prehook(None)


# -- order (torch oracle) ----------------------------------------------------------

def _hook_order_log(lib, tensor):
    """Every kind of hook on one non-leaf and one leaf; returns the event log."""
    log = []
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * 3
    y.retain_grad()

    def th1(g):
        log.append(("tensor_hook1", L(g)))
        return g * 10
    y.register_hook(th1)
    y.grad_fn.register_prehook(lambda go: log.append(("node_pre", [L(g) for g in go])))
    y.grad_fn.register_hook(
        lambda gi, go: log.append(("node_post", [L(g) for g in gi], [L(g) for g in go])))
    y.register_hook(lambda g: log.append(("tensor_hook2", L(g))))

    acc = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: log.append(("leaf_hook", L(g))) or g + 1)
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post_acc", L(t.grad))))
    acc.register_prehook(lambda go: log.append(("acc_pre", [L(g) for g in go])))
    acc.register_hook(lambda gi, go: log.append(("acc_post", [L(g) for g in gi], [L(g) for g in go])))
    z.sum().backward()
    log.append(("y.grad", L(y.grad)))
    log.append(("x.grad", L(x.grad)))
    return log


def test_hook_order_is_the_documented_one():
    log = _hook_order_log(rg, rg.tensor)
    assert [e[0] for e in log] == [
        "tensor_hook1", "tensor_hook2", "node_pre", "node_post",
        "leaf_hook", "acc_pre", "post_acc", "acc_post", "y.grad", "x.grad"]
    # retain_grad sees the gradient after every tensor hook, before node pre-hooks
    assert ("y.grad", [30.0, 30.0]) in log


@pytest.mark.oracle
def test_hook_order_matches_torch():
    torch = pytest.importorskip("torch")
    ours = _hook_order_log(rg, rg.tensor)
    theirs = _hook_order_log(torch, lambda d, **k: torch.tensor(d, dtype=torch.float64, **k))
    assert ours == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("retain_first", [True, False])
def test_retained_grad_sees_tensor_hook_results_as_torch(retain_first):
    torch = pytest.importorskip("torch")

    def run(tensor):
        x = tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: g * 10)
        if not retain_first:
            y.retain_grad()
        y.register_hook(lambda g: g + 1)
        (y * 3).sum().backward()
        return L(y.grad), L(x.grad)

    ours = run(rg.tensor)
    assert ours == run(lambda d, **k: torch.tensor(d, dtype=torch.float64, **k))
    assert ours == ([31.0, 31.0], [62.0, 62.0])


@pytest.mark.oracle
def test_hooks_registered_before_an_inplace_change_as_torch():
    torch = pytest.importorskip("torch")

    def run(tensor):
        log = []
        x = tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.register_hook(lambda g: log.append(("before", L(g))))
        h.retain_grad()
        h.mul_(3)
        h.register_hook(lambda g: log.append(("after", L(g))))
        (h * h).sum().backward()
        return log, L(h.grad), L(x.grad)

    assert run(rg.tensor) == run(lambda d, **k: torch.tensor(d, dtype=torch.float64, **k))
