"""AccumulateGrad: how gradients land in a leaf's .grad.

It accumulates across backward calls, adopts a gradient array produced inside
backward when nothing else can see it (no copy), and copies otherwise: a
later in-place accumulation must never write into an array someone kept.
"""
import weakref

import numpy as np
import pytest

import retrograd as rg


def leaf(values=(1.0, 2.0)):
    return rg.tensor(list(values), requires_grad=True)


def test_accumulates_across_backward_calls():
    x = leaf()
    loss = (x * 3).sum()
    loss.backward(retain_graph=True)
    g = x.grad
    loss.backward(retain_graph=True)
    assert x.grad.tolist() == [6.0, 6.0]
    assert x.grad is g and x.grad._version == 1      # in place, as torch
    (x * x).sum().backward()
    assert x.grad.tolist() == [8.0, 10.0]


def test_accumulates_into_a_user_assigned_grad():
    x = leaf()
    g0 = rg.tensor([10.0, 10.0])
    x.grad = g0
    (x * 2).sum().backward()
    assert x.grad is g0 and g0.tolist() == [12.0, 12.0]


def test_accumulates_into_a_readonly_grad_by_replacing_it():
    x = leaf()
    x.grad = rg.from_numpy(np.broadcast_to(np.array(1.0), (2,)))
    (x * 2).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert x.grad.numpy().flags.writeable


def test_grad_sum_of_several_paths():
    x = leaf()
    (x * 2 + x * 3 + x).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_adopts_an_array_made_in_backward():
    x = leaf()
    y = x * 2.0
    made = []
    # Observe MulBackward0's output array without keeping it alive.
    y.grad_fn.register_hook(lambda gi, go: made.append(weakref.ref(gi[0].numpy())))
    y.sum().backward()
    assert made[0]() is x.grad.numpy()         # no copy
    assert x.grad.numpy().flags.owndata and x.grad.numpy().base is None


def test_adopts_the_array_a_leaf_hook_returns():
    x = leaf()
    made = []

    def hook(g):
        out = g * 3
        made.append(weakref.ref(out.numpy()))
        return out
    x.register_hook(hook)
    (x * 1.0).sum().backward()
    assert made[0]() is x.grad.numpy()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("kind", ["view", "readonly"])
def test_copies_a_gradient_it_cannot_own(kind):
    # a view of another array's memory, or a read-only array, is copied even
    # when nothing else refers to it (a later accumulation writes into .grad)
    x = leaf((1.0, 2.0, 3.0))
    made = []

    def hook(g):
        a = np.arange(6.0)[::2] if kind == "view" else np.arange(3.0)
        if kind == "readonly":
            a.flags.writeable = False
        made.append(weakref.ref(a))
        return rg.from_numpy(a)
    x.register_hook(hook)
    (x * 1.0).sum().backward()
    g = x.grad.numpy()
    assert made[0]() is not g and g.flags.owndata and g.flags.writeable
    assert g.tolist() == ([0.0, 2.0, 4.0] if kind == "view" else [0.0, 1.0, 2.0])
    (x * 1.0).sum().backward()               # (the hook's array again, added in place)
    assert x.grad.numpy() is g
    assert x.grad.tolist() == ([0.0, 4.0, 8.0] if kind == "view" else [0.0, 2.0, 4.0])


@pytest.mark.parametrize("through", ["leaf", "add"])
def test_never_adopts_a_user_gradient(through):
    x = leaf()
    user = rg.tensor([1.0, 1.0])
    user_array = user.numpy()
    if through == "leaf":
        x.backward(user)
    else:
        (x + 0).backward(user)          # AddBackward0 passes the array through
    assert x.grad.numpy() is not user_array
    x.grad.add_(5)
    assert user.tolist() == [1.0, 1.0] and user_array.tolist() == [1.0, 1.0]
    (x + 0).backward(user)
    assert user.tolist() == [1.0, 1.0]


def test_never_adopts_an_array_a_hook_kept():
    kept = []
    x = leaf()
    x.register_hook(lambda g: kept.append(g.numpy()))
    loss = (x * 2.0).sum()
    loss.backward(retain_graph=True)
    assert kept[0] is not x.grad.numpy()
    loss.backward()
    assert kept[0].tolist() == [2.0, 2.0]       # not modified by the 2nd accumulation
    assert x.grad.tolist() == [4.0, 4.0]


def test_two_leaves_sharing_one_incoming_array_get_separate_grads():
    a, b = leaf(), leaf()
    ((a + b) * 3).sum().backward()
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.add_(1)
    assert b.grad.tolist() == [3.0, 3.0]


def test_grad_has_the_leaf_dtype_and_shape():
    x = rg.ones(2, 1, dtype=np.float32, requires_grad=True)
    (x * rg.ones(3, dtype=np.float64)).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.shape == (2, 1)
    assert x.grad.tolist() == [[3.0], [3.0]]


def test_leaf_that_stopped_requiring_grad_gets_nothing():
    x = leaf()
    loss = (x * 2).sum()
    x.requires_grad_(False)
    loss.backward()
    assert x.grad is None


def test_create_graph_grad_as_torch():
    x = leaf()
    (x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    assert x.grad.tolist() == [2.0, 4.0]
    g = x.grad
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_accumulate_grad_node_call():
    x = leaf()
    acc = (x * 1).grad_fn.next_functions[0][0]
    user = rg.tensor([1.0, 2.0])
    assert acc(user) == ()
    assert x.grad.tolist() == [1.0, 2.0] and x.grad.numpy() is not user.numpy()
