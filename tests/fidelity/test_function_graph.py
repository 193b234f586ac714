"""Custom Functions and the graph as torch 2.13 shows them: identity of saved
tensors, the virtual Node base class, the nodes a create_graph gradient is
made of, tensor reprs, and what a Function's view outputs and mark_dirty
allow."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.function import once_differentiable
from retrograd.autograd.graph import Node
from _arrays import values  # noqa: E402


def _leaf(*shape, seed=0):
    return rg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def describe(fn):
    """The graph behind a node, by class names: Name(child, child, ...)."""
    if fn is None:
        return "None"
    return type(fn).__name__ + "(" + ", ".join(describe(n) for n, _ in fn.next_functions) + ")"


# -- saved tensors are the objects that were saved --------------------------

class SaveAll(rg.autograd.Function):
    @staticmethod
    def forward(ctx, leaf, nonleaf, plain):
        scratch = plain * 3.0           # made inside forward, no graph
        out = leaf * nonleaf + scratch
        ctx.scratch = scratch
        ctx.save_for_backward(leaf, nonleaf, plain, scratch, out)
        return out

    @staticmethod
    def backward(ctx, g):
        leaf, nonleaf, plain, scratch, out = ctx.saved_tensors
        return g * nonleaf, g * leaf, None


def test_saved_inputs_and_intermediates_come_back_as_the_same_objects():
    leaf = _leaf(3)
    nonleaf = _leaf(3, seed=1) * 2.0
    plain = rg.tensor(np.ones(3))
    out = SaveAll.apply(leaf, nonleaf, plain)
    got = out.grad_fn.saved_tensors
    assert got[0] is leaf
    assert got[1] is nonleaf
    assert got[2] is plain
    assert got[3] is out.grad_fn.scratch
    # an output is rebuilt (keeping it would be a reference cycle), as torch
    assert got[4] is not out
    np.testing.assert_array_equal(values(got[4]), values(out))
    assert got[4].grad_fn is out.grad_fn


def test_saved_identity_matches_torch():
    torch = pytest.importorskip("torch")

    def identities(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        nonleaf = lib.tensor([3.0, 4.0], requires_grad=True) * 2.0
        plain = lib.tensor([5.0, 6.0])
        fn = SaveAll if lib is rg else _torch_save_all(torch)
        out = fn.apply(leaf, nonleaf, plain)
        got = out.grad_fn.saved_tensors
        return (got[0] is leaf, got[1] is nonleaf, got[2] is plain,
                got[3] is out.grad_fn.scratch, got[4] is out)

    assert identities(rg) == identities(torch)


def _torch_save_all(torch):
    class TorchSaveAll(torch.autograd.Function):
        forward = SaveAll.forward
        backward = SaveAll.backward
    return TorchSaveAll


def test_saved_tensors_are_rebuilt_under_saved_tensor_hooks():
    leaf = _leaf(3)
    nonleaf = _leaf(3, seed=1) * 2.0
    with rg.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        out = SaveAll.apply(leaf, nonleaf, rg.tensor(np.ones(3)))
    got = out.grad_fn.saved_tensors
    assert got[1] is not nonleaf and got[1].grad_fn is nonleaf.grad_fn
    out.sum().backward()
    np.testing.assert_allclose(values(leaf.grad), values(nonleaf.detach()))


# -- Node is a virtual base class --------------------------------------------

def test_every_node_is_an_instance_of_graph_node_without_it_in_the_mro():
    x = _leaf(3)
    y = x.exp()
    assert isinstance(y.grad_fn, Node)
    assert issubclass(type(y.grad_fn), Node)
    assert Node not in type(y.grad_fn).__mro__
    acc = y.grad_fn.next_functions[0][0]
    assert isinstance(acc, Node) and issubclass(type(acc), Node)
    assert not isinstance(type(acc), Node)          # a class is not a node
    assert issubclass(Node, Node) and not isinstance(Node, Node)
    assert not isinstance(None, Node) and not isinstance(1, Node)
    assert issubclass(rg.autograd.function.BackwardCFunction, Node)


def test_a_custom_function_ctx_is_a_node_in_forward_and_backward():
    seen = []

    class Probe(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            seen.append(isinstance(ctx, Node))
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            seen.append(isinstance(ctx, Node))
            return g

    out = Probe.apply(_leaf(2))
    assert isinstance(out.grad_fn, Node) and Node not in type(out.grad_fn).__mro__
    out.sum().backward()
    assert seen == [True, True]


# -- the graph of a create_graph gradient ------------------------------------

class Affine(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a, scale, b):
        ctx.scale = scale
        ctx.save_for_backward(a, b)
        return a + scale * b + a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g + g * b, None, g * ctx.scale + g * a


class AffineOnce(Affine):
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g + g * b, None, g * ctx.scale + g * a


def _grads_with_graph(fn):
    a, b = _leaf(4, 4), _leaf(4, 4, seed=1)
    go = rg.tensor(1.0, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # backward(create_graph=True) with leaves warns
        fn.apply(a, 2.0, b).sum().backward(go, create_graph=True)
    return a, b


def test_create_graph_gradient_nodes_are_torchs():
    a, b = _grads_with_graph(Affine)
    assert describe(a.grad.grad_fn) == (
        "CopyBackwards(None, AddBackward0(ExpandBackward0(AccumulateGrad()), "
        "MulBackward0(ExpandBackward0(AccumulateGrad()), AccumulateGrad())))")
    assert describe(b.grad.grad_fn) == (
        "CopyBackwards(None, AddBackward0(MulBackward0(ExpandBackward0(AccumulateGrad()), None), "
        "MulBackward0(ExpandBackward0(AccumulateGrad()), AccumulateGrad())))")
    np.testing.assert_allclose(values(a.grad), values(b.detach()) + 1.0)


def test_once_differentiable_gradient_sits_behind_an_error_node():
    a, b = _grads_with_graph(AffineOnce)
    expected = "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
    assert describe(a.grad.grad_fn) == expected
    assert describe(b.grad.grad_fn) == expected
    with pytest.raises(RuntimeError, match="trying to differentiate twice"):
        a.grad.sum().backward()


def test_create_graph_descriptions_match_torch():
    torch = pytest.importorskip("torch")

    def desc(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x).sum().backward(create_graph=True)
        return describe(x.grad.grad_fn)

    assert desc(rg) == desc(torch)


def test_accumulated_create_graph_gradient_is_differentiable():
    x = _leaf(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x ** 3).sum().backward(create_graph=True)
    (g2,) = rg.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(values(g2), 6.0 * values(x.detach()))


# -- repr ------------------------------------------------------------------------

def test_repr_names_the_grad_fn_class():
    x = _leaf(2)
    assert repr(x * 2.0).endswith("grad_fn=<MulBackward0>)")
    assert repr(Affine.apply(x, 1.0, x)).endswith("grad_fn=<AffineBackward>)")
    assert repr(x).endswith("requires_grad=True)")


def test_repr_of_a_view_whose_grad_fn_cannot_be_read_says_invalid():
    base = _leaf(4).clone()
    with rg.no_grad():
        view = base[:2]
        base.zero_()
    assert repr(view).endswith("grad_fn=<Invalid>)")
    with pytest.raises(RuntimeError):
        view.grad_fn


@pytest.mark.requires("retrograd-forward-ad")
def test_repr_and_str_of_a_dual_tensor_show_the_tangent():
    import retrograd.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        d = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))
        for text in (repr(d), str(d)):
            assert "tangent=tensor([3., 4.])" in text
        assert "tangent=tensor([6., 8.])" in repr(d * 2.0)
    assert "tangent" not in repr(d)            # the level is gone


# -- views returned by a Function, mark_dirty ----------------------------------

class Head(rg.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t[:2]

    @staticmethod
    def backward(ctx, g):
        out = rg.tensor(np.zeros(3))
        out[:2] = g
        return out


class Same(rg.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize("fn,modify", [
    (Head, lambda y: y.mul_(2.0)),
    (Same, lambda y: y.add_(1.0)),
    (Head, lambda y: y[:1].mul_(2.0)),          # a view of the view: the same rule
])
def test_inplace_on_a_view_returned_by_a_function_raises(fn, modify):
    y = fn.apply(_leaf(3).clone())
    with pytest.raises(RuntimeError, match=r"^Output 0 of \w+ is a view and is being modified "
                                           r"inplace\. This view was created inside a custom Function"):
        modify(y)


def test_mark_dirty_of_a_tensor_that_is_not_an_input_warns_as_torch():
    class DirtyNew(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            out = t * 2.0
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    x = _leaf(3)
    with pytest.warns(UserWarning, match="mark_dirty\\(\\) received a tensor that was not an input"):
        y = DirtyNew.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(values(x.grad), 2.0)


def test_mark_dirty_of_a_tensor_that_is_not_returned_raises():
    class DirtyHidden(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(2.0)
            ctx.mark_dirty(t)
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not "
                                           "returned as output"):
        DirtyHidden.apply(_leaf(3).clone())


def test_generated_nodes_return_saved_inputs_as_the_objects_saved():
    torch = pytest.importorskip("torch")

    def identities(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        nonleaf = leaf * 3.0
        plain = lib.tensor([5.0, 6.0])
        by_plain = nonleaf * plain          # only `plain` is needed (for self's gradient)
        by_leaf = nonleaf * leaf            # both are needed
        e = nonleaf.exp()
        return (by_plain.grad_fn._saved_other is plain, by_plain.grad_fn._saved_self is None,
                by_leaf.grad_fn._saved_self is nonleaf, by_leaf.grad_fn._saved_other is leaf,
                e.grad_fn._saved_result is e)

    assert identities(rg) == identities(torch) == (True, True, True, True, False)
