"""Node: names, next_functions, sequence and topological numbers, metadata,
input metadata, release of saved variables; AccumulateGrad and GraphRoot."""
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.graph import Node


def leaf(values=(1.0, 2.0)):
    return rg.tensor(list(values), requires_grad=True)


def name(node):
    return None if node is None else node.name().replace("torch::autograd::", "")


def structure(node, depth=6):
    """A node's graph as nested tuples of (name, input_nr, children)."""
    if node is None or depth == 0:
        return None
    return tuple((name(n), nr, structure(n, depth - 1)) for n, nr in node.next_functions)


# -- next_functions ------------------------------------------------------------------

def test_next_functions_with_leaves_and_constants():
    a, b = leaf(), leaf([3.0, 4.0])
    c = rg.tensor([5.0, 6.0])
    y = a * b + c
    assert isinstance(y.grad_fn, Node)
    assert structure(y.grad_fn) == (
        ("MulBackward0", 0, (("AccumulateGrad", 0, ()), ("AccumulateGrad", 0, ()))),
        (None, 0, None))
    assert (c * a).grad_fn.next_functions[0] == (None, 0)


def test_accumulate_grad_is_shared_by_every_use_of_a_leaf():
    a = leaf()
    y = a.exp() * a
    acc_from_exp = y.grad_fn.next_functions[0][0].next_functions[0][0]
    acc_direct = y.grad_fn.next_functions[1][0]
    assert acc_from_exp is acc_direct
    assert acc_direct.variable is a
    assert acc_direct.next_functions == ()
    assert acc_direct.name() == "AccumulateGrad"


def test_accumulate_grad_is_rebuilt_after_being_freed():
    a = leaf()
    acc = (a * 1).grad_fn.next_functions[0][0]
    assert (a * 2).grad_fn.next_functions[0][0] is acc     # alive: reused
    del acc
    acc2 = (a * 2).grad_fn.next_functions[0][0]
    assert acc2.variable is a


def test_edges_are_tuples_of_node_and_input_nr():
    a = leaf()
    y = a * 2
    (fn, nr), const = y.grad_fn.next_functions
    assert isinstance(fn, rg.AccumulateGrad) and nr == 0
    assert const == (None, 0)           # the scalar 2: no edge, as in torch


def _graphs(lib, tensor):
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0, 4.0], requires_grad=True)
    c = tensor([5.0, 6.0])
    h = a * b + c
    return [
        (h * c).sum(),
        (a.exp() * a).sum(),
        ((a - b) / (b * 2.0)).mean(),
        (c * a).tanh().sigmoid() + b.sin(),
        (h.exp() + h * h).relu().sum(),
    ]


@pytest.mark.oracle
def test_next_functions_match_torch():
    torch = pytest.importorskip("torch")
    ours = [structure(t.grad_fn) for t in _graphs(rg, rg.tensor)]
    theirs = [structure(t.grad_fn) for t in
              _graphs(torch, lambda d, **k: torch.tensor(d, dtype=torch.float64, **k))]
    assert ours == theirs


# -- names, metadata, input metadata ------------------------------------------------

def test_names():
    a = leaf()
    assert [t.grad_fn.name() for t in (a * 2, a + 1, a - 1, a / 2, -a, a.exp(), a.sum(),
                                       a.mean(), a.clone())] == [
        "MulBackward0", "AddBackward0", "SubBackward0", "DivBackward0", "NegBackward0",
        "ExpBackward0", "SumBackward0", "MeanBackward0", "CloneBackward0"]
    assert repr(a.exp().grad_fn).startswith("<ExpBackward0 object at 0x")


def test_metadata_is_a_persistent_dict():
    n = (leaf() * 2).grad_fn
    assert n.metadata == {}
    n.metadata["tag"] = 1
    assert n.metadata is n.metadata and n.metadata == {"tag": 1}


def test_input_metadata():
    x = rg.ones(2, 3, dtype=np.float32, requires_grad=True)
    y = x * 2
    meta, = y.grad_fn.input_metadata
    assert meta.shape == (2, 3) and meta.dtype == np.float32 and str(meta.device) == "cpu"
    s = y.sum()
    assert s.grad_fn.input_metadata[0].shape == ()
    acc = y.grad_fn.next_functions[0][0]
    assert acc.input_metadata[0].shape == (2, 3)


# -- sequence_nr, topological_nr ----------------------------------------------------

def test_sequence_nr_increases_in_creation_order():
    a = leaf()
    nodes = []
    y = a
    for _ in range(5):
        y = y * 2
        nodes.append(y.grad_fn)
    z = a.exp()
    nodes.append(z.grad_fn)
    seq = [n._sequence_nr() for n in nodes]
    assert seq == sorted(seq) and len(set(seq)) == len(seq)


def test_sequence_nr_is_thread_local():
    a = leaf()
    for _ in range(50):
        a * 1
    main_seq = (a * 1).grad_fn._sequence_nr()
    out = []

    def work():
        out.append([(a * 1).grad_fn._sequence_nr() for _ in range(3)])
    t = threading.Thread(target=work)
    t.start()
    t.join()
    first, second, third = out[0]
    assert first < second < third
    assert third < main_seq          # the new thread's counter starts afresh
    assert (a * 1).grad_fn._sequence_nr() == main_seq + 1     # unaffected by the thread


def test_topological_nr():
    a, b = leaf(), leaf()
    t1 = a * 2
    t2 = t1 * b
    t3 = t2 + t1
    acc = t1.grad_fn.next_functions[0][0]
    assert acc._topological_nr() == 0
    for node in (t1.grad_fn, t2.grad_fn, t3.grad_fn):
        for child, _ in node.next_functions:
            if child is not None:
                assert node._topological_nr() > child._topological_nr()
    assert (t1.grad_fn._topological_nr(), t2.grad_fn._topological_nr(),
            t3.grad_fn._topological_nr()) == (1, 2, 3)
    # a node whose inputs are all constants or leaves is at level 1
    assert (rg.tensor([1.0]) * a).grad_fn._topological_nr() == 1


# -- saved variables are released after backward -------------------------------------

def test_saved_variables_freed_after_backward_unless_retained():
    a, b = leaf(), leaf([3.0, 4.0])
    y = a * b
    n = y.grad_fn
    assert n._saved_self.tolist() == [1.0, 2.0] and n._saved_other.tolist() == [3.0, 4.0]
    y.sum().backward(retain_graph=True)
    assert n._saved_self is not None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="already been freed"):   # as torch
        n._saved_self
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_release_saved_variables():
    a = leaf()
    y = a.exp()
    y.grad_fn.release_saved_variables()
    with pytest.raises(RuntimeError, match="ExpBackward0 already freed"):
        y.sum().backward()


# -- calling a node directly ---------------------------------------------------------

def test_calling_a_node_applies_its_backward():
    a, b = leaf(), leaf([3.0, 4.0])
    y = a * b
    ga, gb = y.grad_fn(rg.tensor([1.0, 10.0]))
    assert ga.tolist() == [3.0, 40.0] and gb.tolist() == [1.0, 20.0]


def test_error_node_raises_its_message():
    e = rg.Error("this op has no backward")
    with pytest.raises(RuntimeError, match="no backward"):
        e(rg.tensor([1.0]))


def test_error_node_takes_edges_in_every_form_and_refuses_others():
    # Error's edges come from Python: an Edge, a (node, input_nr) pair as in
    # next_functions, or None. Anything else is a TypeError, never a crash
    # (an unchecked cast here once segfaulted on a plain pair).
    x = rg.tensor([1., 2.], requires_grad=True)
    y = x * 3
    for edge in (rg.Edge(y.grad_fn, 0), (y.grad_fn, 0)):
        node = rg.DelayedError("reached", (edge, None))
        assert node.next_functions == ((y.grad_fn, 0), (None, 0))
        with pytest.raises(RuntimeError, match="reached"):
            node(rg.ones(2))
    for bad in ((y.grad_fn,), ("MulBackward0", 0), (y.grad_fn, 0, 1), 3, (y.grad_fn, "0")):
        with pytest.raises(TypeError, match=r"next_edges\[0\]"):
            rg.Error("m", (bad,))
