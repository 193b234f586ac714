"""Reading the hooks back from Python: torch's Tensor._backward_hooks and
_post_accumulate_grad_hooks (compared with torch), and the Node's private
read-only _pre_hooks / _hooks / _tensor_pre_hooks / _retains_grad_hooks."""
from collections import OrderedDict

import pytest

import retrograd as rg


def _hooks_program(lib, f, g):
    """(label, value) of each read of the two Tensor attributes, in order;
    handles' ids are replaced by the order they were made in."""
    reads = []
    ids = {}

    def read(label, d):
        reads.append((label, None if d is None else
                      (type(d).__name__, [(ids[k], fn) for k, fn in d.items()])))

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    read("leaf before", x._backward_hooks)
    read("leaf acc before", x._post_accumulate_grad_hooks)
    h1 = x.register_hook(f)
    ids[h1.id] = 1
    h2 = x.register_hook(g)
    ids[h2.id] = 2
    read("leaf after two", x._backward_hooks)
    h1.remove()
    read("leaf after removing the first", x._backward_hooks)
    h2.remove()
    read("leaf after removing both", x._backward_hooks)
    h3 = x.register_post_accumulate_grad_hook(f)
    ids[h3.id] = 3
    read("leaf acc after", x._post_accumulate_grad_hooks)
    h3.remove()
    read("leaf acc removed", x._post_accumulate_grad_hooks)

    y = x * 2
    read("non-leaf before", y._backward_hooks)
    y.retain_grad()
    read("non-leaf after retain_grad", y._backward_hooks)
    h4 = y.register_hook(g)
    ids[h4.id] = 4
    read("non-leaf after", y._backward_hooks)
    read("non-leaf acc", y._post_accumulate_grad_hooks)
    a, b, _ = lib.linalg.svd(lib.tensor([[2.0, 1.0], [0.0, 1.0]], requires_grad=True),
                             full_matrices=False)            # outputs 0 and 1 of one node
    h5 = b.register_hook(f)
    ids[h5.id] = 5
    read("other output before", a._backward_hooks)
    read("hooked output", b._backward_hooks)
    read("plain tensor", lib.ones(2)._backward_hooks)
    return reads


@pytest.mark.oracle
def test_tensor_hook_dicts_like_torch():
    torch = pytest.importorskip("torch")

    def f(grad):
        return None

    def g(grad):
        return None

    assert _hooks_program(rg, f, g) == _hooks_program(torch, f, g)


def test_tensor_hook_dicts_are_snapshots():
    x = rg.tensor([1.0], requires_grad=True)
    h = x.register_hook(lambda g: None)
    d = x._backward_hooks
    assert isinstance(d, OrderedDict) and list(d) == [h.id]
    d.clear()                                   # changes nothing in core
    assert list(x._backward_hooks) == [h.id]
    with pytest.raises(AttributeError):
        x._backward_hooks = None


def test_node_hook_accessors():
    x = rg.tensor([[2.0, 1.0], [0.0, 1.0]], requires_grad=True)
    a, b, _ = rg.linalg.svd(x, full_matrices=False)           # outputs 0 and 1 of one node
    node = b.grad_fn
    assert a.grad_fn is node
    assert node._pre_hooks() == node._hooks() == node._tensor_pre_hooks() == node._retains_grad_hooks() == ()

    def pre(go):
        return None

    def post(gi, go):
        return None

    def on_b(g):
        return None

    def on_a(g):
        return None

    hp = node.register_prehook(pre)
    node.register_hook(post)
    hb = b.register_hook(on_b)
    a.register_hook(on_a)
    b.retain_grad()
    assert node._pre_hooks() == (pre,)
    assert node._hooks() == (post,)
    assert node._tensor_pre_hooks() == ((1, on_b), (0, on_a))      # registration order
    ((nr, hook),) = node._retains_grad_hooks()
    assert nr == 1 and callable(hook)
    hp.remove()
    hb.remove()
    assert node._pre_hooks() == ()
    assert node._tensor_pre_hooks() == ((0, on_a),)
    # what they read is what runs: the retained gradient arrives through that hook
    (2 * b.sum()).backward()
    assert b.grad.tolist() == [2.0, 2.0]


def test_accumulate_grad_lists_its_leafs_hooks():
    x = rg.tensor([1.0], requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc._tensor_pre_hooks() == ()

    def on_x(g):
        return None

    x.register_hook(on_x)
    assert acc._tensor_pre_hooks() == ((0, on_x),)
