"""Behaviours from torch's test/autograd/test_node_lifecycle.py, translated.

Graph nodes, the hooks registered on them and the tensors they save must be released as soon as
nothing refers to them any more: by reference counting alone where no cycle exists, and by the cycle
collector where a hook closes one. torch's "C++ nodes" are retrograd's built-in ops here, its
"Python nodes" custom ``autograd.Function``s.

All 47 tests of the torch file are translated; none is excluded. torch reads the leaf's C++ use count
(``Tensor._use_count()``, a torch internal) in its leaf, shared-grad_fn and chain tests; here the same
property (the graph, and only the graph, keeps the leaf alive) is observed through a weak reference to
the leaf. The 22 tests of ``TestNodeLifecycle`` are one parametrized test here
(``test_node_hooks_and_marker_freed``), one case per torch test; the others keep a test each.
"""
import gc
import weakref

import pytest

import retrograd as rg


class Identity(rg.autograd.Function):
    """Copies its input; saves nothing."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g


class Double(rg.autograd.Function):
    """Doubles its input and saves that input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        ctx.saved_tensors
        return g * 2


class Exp(rg.autograd.Function):
    """exp, saving its own result."""

    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


class Halves(rg.autograd.Function):
    """Two outputs (first two elements, the rest) that share one node."""

    @staticmethod
    def forward(ctx, x):
        return x[:2].clone(), x[2:].clone()

    @staticmethod
    def backward(ctx, g_head, g_tail):
        return rg.cat([g_head, g_tail])


class Token:
    """A plain object whose lifetime a weak reference can follow."""


@pytest.fixture(autouse=True)
def _no_automatic_collection():
    """Only refcounting frees objects unless a test calls gc.collect() itself."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _holding(*objs):
    """A hook (any arguments, returns None) whose closure keeps ``objs`` alive."""
    return lambda *args: objs and None


def _doubled(kind, leaf):
    return leaf * 2 if kind == "builtin" else Double.apply(leaf)


# --- nodes with hooks (torch's TestNodeLifecycle) -------------------------------------------

# (node kind, hook, backward, whether the hook makes a cycle that only the collector breaks)
_NODE_CASES = [
    ("builtin", None, None, False),
    ("builtin", None, "once", False),
    ("builtin", None, "retain", False),
    ("custom", None, None, False),
    ("custom", None, "once", False),
    ("custom", None, "retain", False),
    ("builtin", "tensor", None, False),
    ("builtin", "tensor", "once", False),
    ("custom", "tensor", None, False),
    ("custom", "tensor", "once", False),
    ("builtin", "tensor+node", None, True),
    ("builtin", "tensor+node", "once", True),
    ("custom", "tensor+node", None, True),
    ("custom", "tensor+node", "once", True),
    ("builtin", "node", None, False),
    ("builtin", "node", "once", False),
    ("custom", "node", None, False),
    ("custom", "node", "once", False),
    ("builtin", "node+node", None, True),
    ("builtin", "node+node", "once", True),
    ("custom", "node+node", None, True),
    ("custom", "node+node", "once", True),
]


def _build_with_hook(kind, hook, backward):
    leaf = rg.randn(4, requires_grad=True)
    out = _doubled(kind, leaf)
    token = Token()
    node = out.grad_fn

    if hook == "tensor":
        out.register_hook(_holding(token))
    elif hook == "tensor+node":
        out.register_hook(_holding(node, token))
    elif hook == "node":
        out.grad_fn.register_hook(_holding(token))
    elif hook == "node+node":
        out.grad_fn.register_hook(_holding(node, token))

    if backward == "once":
        out.sum().backward()
    elif backward == "retain":
        out.sum().backward(retain_graph=True)
    return leaf, out, token, node


@pytest.mark.parametrize("kind,hook,backward,needs_gc", _NODE_CASES)
def test_node_hooks_and_marker_freed(kind, hook, backward, needs_gc):
    """What a hook captures dies with the graph: at once without a cycle, at the next collection with one."""
    leaf, out, token, node = _build_with_hook(kind, hook, backward)
    token_ref = weakref.ref(token)
    del leaf, out, token, node
    if needs_gc:
        gc.collect()
    assert token_ref() is None


# --- leaves and AccumulateGrad ---------------------------------------------------------------

def test_graph_holds_leaf_until_freed():
    leaf = rg.randn(2, requires_grad=True)
    leaf_ref = weakref.ref(leaf)
    out = leaf * 2
    del leaf
    assert leaf_ref() is not None, "the graph should keep its leaf alive"
    del out
    assert leaf_ref() is None


def test_post_accumulate_grad_hook_released_with_leaf():
    token = Token()
    token_ref = weakref.ref(token)
    leaf = rg.randn(2, requires_grad=True)
    leaf.register_post_accumulate_grad_hook(_holding(token))
    (leaf * 2).sum().backward()
    del leaf, token
    gc.collect()
    assert token_ref() is None


def test_graph_releases_leaf_after_backward():
    leaf = rg.randn(2, requires_grad=True)
    leaf_ref = weakref.ref(leaf)
    out = leaf * 2
    out.sum().backward()
    del leaf
    assert leaf_ref() is not None
    del out
    assert leaf_ref() is None


def test_retained_graph_holds_leaf_until_freed():
    leaf = rg.randn(2, requires_grad=True)
    leaf_ref = weakref.ref(leaf)
    total = (leaf * 2).sum()
    total.backward(retain_graph=True)
    del leaf
    assert leaf_ref() is not None
    del total
    assert leaf_ref() is None


# --- one node behind several outputs ---------------------------------------------------------

def test_builtin_split_outputs_each_keep_graph():
    leaf = rg.randn(4, requires_grad=True)
    leaf_ref = weakref.ref(leaf)
    head, tail = (leaf * 2).split(2)
    del leaf
    del head
    assert leaf_ref() is not None, "the second output still needs the graph"
    del tail
    assert leaf_ref() is None


def test_custom_multi_output_node_lives_while_any_output_does():
    head, tail = Halves.apply(rg.randn(4, requires_grad=True))
    node_ref = weakref.ref(head.grad_fn)
    del head
    assert node_ref() is not None
    del tail
    assert node_ref() is None


def test_builtin_split_backward_through_one_then_free():
    leaf = rg.randn(4, requires_grad=True)
    leaf_ref = weakref.ref(leaf)
    head, tail = (leaf * 2).split(2)
    head.sum().backward(retain_graph=True)
    del leaf
    assert leaf_ref() is not None
    del head, tail
    assert leaf_ref() is None


def test_custom_multi_output_backward_through_one_then_free():
    head, tail = Halves.apply(rg.randn(4, requires_grad=True))
    node_ref = weakref.ref(head.grad_fn)
    head.sum().backward(retain_graph=True)
    del head, tail
    assert node_ref() is None


def _shared_node_cycle(make_pair):
    token = Token()
    token_ref = weakref.ref(token)
    leaf = rg.randn(4, requires_grad=True)
    first, second = make_pair(leaf)
    first.grad_fn.register_hook(_holding(first.grad_fn, token))
    del leaf, first, second, token
    gc.collect()
    return token_ref


def test_builtin_shared_node_hook_cycle_collected():
    assert _shared_node_cycle(lambda t: (t * 2).split(2))() is None


def test_custom_shared_node_hook_cycle_collected():
    assert _shared_node_cycle(Halves.apply)() is None


# --- chains ----------------------------------------------------------------------------------

def test_builtin_chain_releases_leaf():
    leaf = rg.randn(2, requires_grad=True)
    leaf_ref = weakref.ref(leaf)
    first = leaf * 2
    second = first + 1
    third = second * 3
    del leaf
    assert leaf_ref() is not None
    del first, second, third
    assert leaf_ref() is None


def test_custom_chain_nodes_freed():
    leaf = rg.randn(2, requires_grad=True)
    first = Double.apply(leaf)
    second = Identity.apply(first)
    refs = [weakref.ref(first.grad_fn), weakref.ref(second.grad_fn)]
    del first, second
    assert [r() for r in refs] == [None, None]


def test_mixed_chain_custom_node_freed():
    leaf = rg.randn(2, requires_grad=True)
    first = leaf * 2
    middle = Identity.apply(first)
    last = middle + 1
    node_ref = weakref.ref(middle.grad_fn)
    del first, middle
    assert node_ref() is not None, "the last op's node still refers to it"
    del last
    assert node_ref() is None


def test_long_builtin_chain_freed_without_recursion_error():
    x = rg.randn(2, requires_grad=True)
    leaf_ref = weakref.ref(x)
    for _ in range(2000):
        x = x + rg.randn(2)
    assert leaf_ref() is not None
    del x
    assert leaf_ref() is None


def test_long_custom_chain_freed_without_recursion_error():
    x = rg.randn(2, requires_grad=True)
    leaf_ref = weakref.ref(x)
    for _ in range(2000):
        x = Identity.apply(x)
    assert leaf_ref() is not None
    del x
    assert leaf_ref() is None


# --- saved tensors ---------------------------------------------------------------------------

def _squared(kind, t):
    return t ** 2 if kind == "builtin" else Double.apply(t)


@pytest.mark.parametrize("kind", ["builtin", "custom"])
def test_saved_input_lives_as_long_as_graph(kind):
    base = rg.randn(2, requires_grad=True) + 1
    base_ref = weakref.ref(base)
    out = _squared(kind, base)
    del base
    assert base_ref() is not None, "the node saved it"
    del out
    assert base_ref() is None


@pytest.mark.parametrize("kind", ["builtin", "custom"])
def test_saved_input_released_by_backward(kind):
    base = rg.randn(2, requires_grad=True) + 1
    base_ref = weakref.ref(base)
    total = _squared(kind, base).sum()
    del base
    assert base_ref() is not None
    total.backward()
    assert base_ref() is None, "backward without retain_graph frees what the graph saved"


@pytest.mark.parametrize("kind", ["builtin", "custom"])
def test_saved_input_kept_by_retain_graph(kind):
    base = rg.randn(2, requires_grad=True) + 1
    base_ref = weakref.ref(base)
    total = _squared(kind, base).sum()
    del base
    total.backward(retain_graph=True)
    assert base_ref() is not None
    del total
    assert base_ref() is None


def _exp(kind, t):
    return t.exp() if kind == "builtin" else Exp.apply(t)


@pytest.mark.parametrize("kind", ["builtin", "custom"])
def test_saved_output_does_not_keep_itself_alive(kind):
    out = _exp(kind, rg.randn(2, requires_grad=True))
    out_ref = weakref.ref(out)
    del out
    assert out_ref() is None, "a node saving its own output must not make an uncollected cycle"


@pytest.mark.parametrize("kind", ["builtin", "custom"])
def test_saved_output_freed_after_backward(kind):
    out = _exp(kind, rg.randn(2, requires_grad=True))
    out_ref = weakref.ref(out)
    out.sum().backward()
    del out
    assert out_ref() is None
