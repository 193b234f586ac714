"""The compiled call's node: core's array-function node in the common case,
the custom-Function path where autograd's observers must see into it
(saved-tensor hooks, a recording profile); the same name, gradients and
errors either way."""
import gc
import weakref

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile  # noqa: F401
from retrograd.autograd.graph import saved_tensors_hooks


def _fn(x, w):
    return (x * w).tanh().sum()


def _x(seed=0):
    return rg.tensor(np.random.default_rng(seed).uniform(-1, 1, 5), requires_grad=True)


def _assert_eager_grads(x, w):
    x2, w2 = _x(), _x(1)
    _fn(x2, w2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-12)


def _compiled():
    f = rg.compile(_fn, fullgraph=True)
    f(_x(), _x(1))
    return f


def test_common_call_records_an_array_function_node():
    f = _compiled()
    x, w = _x(), _x(1)
    out = f(x, w)
    # (the fast node: no ctx object, no SavedVariables)
    assert type(out.grad_fn).__name__ == "ArrayFunctionNode"
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert [fn.name() for fn, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    out.backward()
    _assert_eager_grads(x, w)


def test_saved_tensor_hooks_see_the_inputs_through_the_function_path():
    f = _compiled()
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t

    x, w = _x(), _x(1)
    with saved_tensors_hooks(pack, lambda t: t):
        out = f(x, w)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert type(out.grad_fn).__name__ != "ArrayFunctionNode"
    assert packed == [(5,), (5,)]          # the node's inputs, packed
    out.backward()
    _assert_eager_grads(x, w)


def test_an_input_modified_in_place_after_the_call_raises_at_backward():
    f = _compiled()
    x = _x()
    w = rg.tensor(np.linspace(0.1, 0.5, 5))
    out = f(x, w)
    w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*CompiledFunctionBackward"):
        out.backward()


def test_second_backward_raises_and_retain_graph_allows_it():
    f = _compiled()
    x, w = _x(), _x(1)
    out = f(x, w)
    out.backward(retain_graph=True)
    x.grad = w.grad = None
    out.backward()                            # the node kept what it saved
    _assert_eager_grads(x, w)
    out = f(x, w)
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def test_an_input_detached_in_place_after_the_call_raises_at_backward():
    f = _compiled()
    x0 = _x()
    x = x0 * 1.0                           # a non-leaf input
    out = f(x, _x(1))
    x.detach_()
    with pytest.raises(RuntimeError, match="detached in-place"):
        out.backward()


def test_node_and_its_state_are_freed_with_the_output():
    f = _compiled()
    x, w = _x(), _x(1)
    out = f(x, w)
    node = weakref.ref(out.grad_fn)
    gc.disable()
    try:
        del out
        assert node() is None              # no reference cycle through the node
    finally:
        gc.enable()


def test_grad_mode_off_makes_no_node():
    f = _compiled()
    with rg.no_grad():
        out = f(_x(), _x(1))
    assert out.grad_fn is None and not out.requires_grad


def test_saved_tensors_report_counts_what_the_compiled_node_keeps():
    from retrograd.autograd.graph import saved_tensors_report

    def fn(x):
        return (x * 2.0).tanh().sum()      # tanh's backward reads its result

    f = rg.compile(fn, fullgraph=True)
    f(_x())
    out = f(_x())
    rows = [r for r in saved_tensors_report(out).rows if r.node == "CompiledFunctionBackward"]
    names = [r.name for r in rows]
    assert names[0] == "inputs[0]" and any(n.startswith("saved[") for n in names)
    # (a saved value may be the row of a replayed chunk's block: (1, 5))
    assert all(int(np.prod(r.shape)) == 5 for r in rows)
    out.backward()
    # (released: nothing kept)
    assert out.grad_fn._saved_arrays() == []
